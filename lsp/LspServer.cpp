// The language server (design in LspServer.h).
#include "lsp/LspServer.h"
#include "lsp/LspPositions.h"
#include "lsp/MessageReader.h"
#include "lsp/Server.h"
#include "driver/DatabaseDiscovery.h"
#include "report/Formats.h"
#include "driver/JSONInput.h"
#include "report/Report.h"
#include "driver/Version.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/thread.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

namespace tma {

namespace json = llvm::json;

bool isCxxSourceName(llvm::StringRef Path) {
  std::string Ext = llvm::sys::path::extension(Path).lower();
  static const char *Known[] = {".c",   ".cc",  ".cpp", ".cxx", ".c++", ".cp",
                                ".cu",  ".cuh", ".h",   ".hh",  ".hpp", ".hxx",
                                ".h++", ".inl", ".ipp", ".tpp", ".mm",  ".ixx",
                                ".cppm"};
  for (const char *K : Known)
    if (Ext == K)
      return true;
  // C++ standard-library style headers have no extension; ".C" and ".H"
  // are C++ by convention (lower() folded them above).
  return false;
}

namespace lsp {

namespace {

// JSON-RPC error codes.
constexpr int ParseError = -32700;
constexpr int InvalidRequest = -32600;
constexpr int MethodNotFound = -32601;
constexpr int InvalidParams = -32602;
constexpr int ServerNotInitialized = -32002;

/// How long after the last didChange a document is analysed: typing does
/// not start an analysis per keystroke, a pause does.
constexpr std::chrono::milliseconds ChangeDebounce(500);

/// Thrown by parameter readers; becomes -32602.
struct BadParams {
  std::string Message;
};

} // namespace

Server::~Server() {
  {
    std::lock_guard<std::mutex> L(M);
    Stopping = true;
  }
  WorkCV.notify_all();
  // An analysis under way is finished (clang cannot be stopped halfway)
  // and its result dropped.
  if (Worker.joinable())
    Worker.join();
}

bool Server::start() {
  if (!Options.BuildPath.empty()) {
    llvm::SmallString<256> Dir(Options.BuildPath);
    llvm::sys::fs::make_absolute(Dir);
    if (databaseFileIn(Dir).empty() &&
        !llvm::sys::path::is_absolute(Options.BuildPath))
      BuildPathPending = true;
    else if (!loadBuildPath(std::string(Dir), /*AtStart=*/true))
      return false;
  }
  // Clang recurses deeply on template-heavy headers: the stack a main
  // thread has, as the CLI's workers get.
  Worker = llvm::thread(std::optional<unsigned>(16u << 20),
                        [this] { analysisLoop(); });
  return true;
}

bool Server::handle(llvm::StringRef Body) {
  std::lock_guard<std::mutex> L(M);
  auto Parsed = parseBoundedJSON(Body);
  if (!Parsed) {
    std::string Why = llvm::toString(Parsed.takeError());
    replyError(nullptr, ParseError, "parse error: " + Why);
    return true;
  }
  const json::Object *Msg = Parsed->getAsObject();
  if (!Msg) {
    replyError(nullptr, InvalidRequest,
               "invalid request: a message must be a JSON object");
    return true;
  }
  std::optional<json::Value> Id;
  if (const json::Value *I = Msg->get("id"))
    Id = *I;
  std::optional<llvm::StringRef> Method = Msg->getString("method");
  if (!Method) {
    if (Id && !Msg->get("result") && !Msg->get("error"))
      replyError(*Id, InvalidRequest, "invalid request: no method");
    // A response to a request of ours (we send none): ignore.
    return true;
  }
  json::Value Params = Msg->get("params") ? *Msg->get("params")
                                          : json::Value(nullptr);
  if (Id && Id->kind() != json::Value::String &&
      Id->kind() != json::Value::Number) {
    replyError(nullptr, InvalidRequest,
               "invalid request: id must be a number or a string");
    return true;
  }
  try {
    if (Id)
      request(*Method, Params, *Id);
    else
      return notification(*Method, Params);
  } catch (const BadParams &B) {
    if (Id)
      replyError(*Id, InvalidParams, "invalid params: " + B.Message);
    else
      logMessage(1, std::string(*Method) + ": invalid params: " + B.Message);
  }
  return true;
}

void Server::logMessage(int Type, const std::string &Text) {
  send(json::Object{{"jsonrpc", "2.0"},
                    {"method", "window/logMessage"},
                    {"params", json::Object{{"type", Type}, {"message", Text}}}});
}

void Server::send(json::Value Message) {
  std::string Body;
  llvm::raw_string_ostream OS(Body);
  OS << Message;
  OS.flush();
  // The reader's thread and the analysis thread both write.
  std::lock_guard<std::mutex> L(OutMutex);
  Out << "Content-Length: " << Body.size() << "\r\n\r\n" << Body;
  Out.flush();
}

void Server::showMessage(int Type, const std::string &Text) {
  send(json::Object{{"jsonrpc", "2.0"},
                    {"method", "window/showMessage"},
                    {"params", json::Object{{"type", Type}, {"message", Text}}}});
}

bool Server::loadBuildPath(const std::string &Dir, bool AtStart) {
  std::string Error;
  auto DB = loadBuildDatabase(Dir, Error);
  if (DB) {
    BuildDB = std::move(DB);
    BuildDBFile = databaseFileIn(Dir);
    return true;
  }
  if (databaseFileIn(Dir).empty()) {
    BuildPathWarning = "-p " + Options.BuildPath + ": " + Error +
                       "; using the compile database found above each file "
                       "instead, else the default flags";
    Err << "tensor-accountant: lsp: warning: " << BuildPathWarning << "\n";
    return true;
  }
  if (AtStart) {
    Err << "tensor-accountant: error: " << Error << "\n";
    return false;
  }
  BuildDBError = Error;
  Err << "tensor-accountant: lsp: error: " << Error << "\n";
  return true;
}

std::string Server::workspaceRoot(const json::Value &Params) {
  const json::Object *P = Params.getAsObject();
  if (!P)
    return "";
  if (auto URI = P->getString("rootUri"))
    if (auto Path = uriToPath(*URI))
      return *Path;
  if (auto Path = P->getString("rootPath"))
    return Path->str();
  return "";
}

void Server::reply(const json::Value &Id, json::Value Result) {
  send(json::Object{{"jsonrpc", "2.0"}, {"id", Id}, {"result", std::move(Result)}});
}

void Server::replyError(const json::Value &Id, int Code, const std::string &Message) {
  send(json::Object{
      {"jsonrpc", "2.0"},
      {"id", Id},
      {"error", json::Object{{"code", Code}, {"message", Message}}}});
}

const json::Object &Server::object(const json::Value &V, llvm::StringRef What) {
  const json::Object *O = V.getAsObject();
  if (!O)
    throw BadParams{std::string(What) + " must be an object"};
  return *O;
}

std::string Server::string(const json::Object &O, llvm::StringRef Key) {
  auto S = O.getString(Key);
  if (!S)
    throw BadParams{"'" + Key.str() + "' must be a string"};
  return S->str();
}

int64_t Server::integer(const json::Object &O, llvm::StringRef Key) {
  auto I = O.getInteger(Key);
  if (!I)
    throw BadParams{"'" + Key.str() + "' must be an integer"};
  return *I;
}

const json::Object &Server::member(const json::Object &O, llvm::StringRef Key) {
  const json::Object *M = O.getObject(Key);
  if (!M)
    throw BadParams{"'" + Key.str() + "' must be an object"};
  return *M;
}

std::string Server::documentURI(const json::Object &Params) {
  return string(member(Params, "textDocument"), "uri");
}

void Server::request(llvm::StringRef Method, const json::Value &Params,
             const json::Value &Id) {
  if (Method == "initialize") {
    bool First = !Initialized;
    Initialized = true;
    std::string Root = workspaceRoot(Params);
    if (First && BuildPathPending) {
      BuildPathPending = false;
      llvm::SmallString<256> Dir(Root);
      llvm::sys::path::append(Dir, Options.BuildPath);
      if (Root.empty() || databaseFileIn(Dir).empty()) {
        // Nowhere: said once, here, where the editor shows it.
        Dir = Options.BuildPath;
        llvm::sys::fs::make_absolute(Dir);
      }
      loadBuildPath(std::string(Dir), /*AtStart=*/false);
    }
    reply(Id, json::Object{
                  {"capabilities",
                   json::Object{
                       {"textDocumentSync",
                        json::Object{{"openClose", true},
                                     {"change", 1},
                                     {"save",
                                      json::Object{{"includeText", false}}}}},
                       {"hoverProvider", true},
                       {"codeActionProvider",
                        json::Object{{"codeActionKinds",
                                      json::Array{"quickfix"}}}}}},
                  {"serverInfo", json::Object{{"name", "tensor-accountant"},
                                              {"version", toolVersion()}}}});
    if (First && !BuildDBError.empty())
      showMessage(1, "tensor-accountant: " + BuildDBError);
    else if (First && !BuildPathWarning.empty())
      showMessage(2, "tensor-accountant: " + BuildPathWarning);
    return;
  }
  if (!Initialized) {
    replyError(Id, ServerNotInitialized, "the server is not initialized");
    return;
  }
  if (ShutdownRequested) {
    replyError(Id, InvalidRequest, "the server is shutting down");
    return;
  }
  if (Method == "shutdown") {
    ShutdownRequested = true;
    reply(Id, nullptr);
  } else if (Method == "textDocument/hover") {
    reply(Id, hover(object(Params, "params")));
  } else if (Method == "textDocument/codeAction") {
    reply(Id, codeActions(object(Params, "params")));
  } else {
    replyError(Id, MethodNotFound, "method not found: " + Method.str());
  }
}

bool Server::notification(llvm::StringRef Method, const json::Value &Params) {
  if (Method == "exit")
    return false;
  if (!Initialized || Method == "initialized" || Method.startswith("$/"))
    return true;
  if (Method == "textDocument/didOpen") {
    const json::Object &TD = member(object(Params, "params"), "textDocument");
    std::string URI = string(TD, "uri");
    std::string Text = string(TD, "text");
    Document &D = Documents[URI];
    D.URI = URI;
    D.Text = std::move(Text);
    D.LanguageId = TD.getString("languageId").value_or("").str();
    D.Version = TD.getInteger("version").value_or(0);
    D.Generation = ++Generations;
    D.Last.reset();
    schedule(URI, std::chrono::milliseconds(0));
  } else if (Method == "textDocument/didChange") {
    const json::Object &P = object(Params, "params");
    auto It = Documents.find(documentURI(P));
    if (It == Documents.end())
      throw BadParams{"didChange for a document that is not open"};
    const json::Array *Changes = P.getArray("contentChanges");
    if (!Changes)
      throw BadParams{"'contentChanges' must be an array"};
    // Applied to a copy: a change that is no change (bad params) leaves
    // the document as it was.
    std::string NewText = It->second.Text;
    for (const json::Value &C : *Changes) {
      const json::Object &Change = object(C, "a content change");
      std::string Text = string(Change, "text");
      if (const json::Object *R = Change.getObject("range")) {
        std::vector<size_t> Starts = lineStarts(NewText);
        const json::Object &S = member(*R, "start"), &E = member(*R, "end");
        size_t B = offsetOfLsp(NewText, Starts, integer(S, "line"),
                               integer(S, "character"));
        size_t End = offsetOfLsp(NewText, Starts, integer(E, "line"),
                                 integer(E, "character"));
        if (End < B)
          std::swap(B, End);
        NewText.replace(B, End - B, Text);
      } else {
        NewText = std::move(Text);
      }
    }
    Document &D = It->second;
    D.Text = std::move(NewText);
    D.Version = member(P, "textDocument").getInteger("version").value_or(D.Version);
    D.Generation = ++Generations;
    // Analysed once the edits pause; a newer change moves this on.
    schedule(D.URI, ChangeDebounce);
  } else if (Method == "textDocument/didSave") {
    const json::Object &P = object(Params, "params");
    auto It = Documents.find(documentURI(P));
    if (It == Documents.end())
      throw BadParams{"didSave for a document that is not open"};
    if (auto Text = P.getString("text")) {
      if (It->second.Text != *Text) {
        It->second.Text = Text->str();
        It->second.Generation = ++Generations;
      }
    }
    // Now, not after the pause: the files it includes may have changed
    // on disk too.
    schedule(It->first, std::chrono::milliseconds(0));
  } else if (Method == "textDocument/didClose") {
    const json::Object &P = object(Params, "params");
    std::string URI = documentURI(P);
    Scheduled.erase(URI);
    if (Documents.erase(URI))
      publish(URI, std::nullopt, json::Array{});
  }
  return true; // other notifications are ignored
}

} // namespace lsp

int runLspServer(const LspOptions &Options, std::istream &In,
                 llvm::raw_ostream &Out, llvm::raw_ostream &Err) {
  lsp::Server S(Options, Out, Err);
  if (!S.start())
    return 2;
  lsp::MessageReader Reader(In);
  while (true) {
    lsp::MessageReader::Result R = Reader.next();
    if (R.What == lsp::MessageReader::Result::End) {
      if (!R.Error.empty())
        Err << "tensor-accountant: lsp: " << R.Error << "\n";
      break;
    }
    if (R.What == lsp::MessageReader::Result::BadBlock) {
      // Skipped, logged, and the server reads on from the next
      // Content-Length: one bad block costs one message, never the rest.
      std::string Message = R.Error + "; skipped it, reading on from the next "
                                      "Content-Length header";
      Err << "tensor-accountant: lsp: " << Message << "\n";
      S.logMessage(1, "tensor-accountant: " + Message);
      continue;
    }
    if (!S.handle(R.Body))
      return S.exitCode();
  }
  return 1;
}

} // namespace tma

