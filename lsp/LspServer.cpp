// The language server (design in LspServer.h).
#include "lsp/LspServer.h"
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

namespace {

// JSON-RPC error codes.
constexpr int ParseError = -32700;
constexpr int InvalidRequest = -32600;
constexpr int MethodNotFound = -32601;
constexpr int InvalidParams = -32602;
constexpr int ServerNotInitialized = -32002;

// ---- positions: LSP counts UTF-16 code units from 0; we count bytes -------

std::vector<size_t> lineStarts(llvm::StringRef Text) {
  std::vector<size_t> Starts = {0};
  for (size_t I = 0; I < Text.size(); ++I)
    if (Text[I] == '\n')
      Starts.push_back(I + 1);
  return Starts;
}

unsigned utf16Units(llvm::StringRef Bytes) {
  unsigned N = 0;
  for (unsigned char C : Bytes) {
    if ((C & 0xC0) == 0x80)
      continue; // continuation byte
    N += C >= 0xF0 ? 2 : 1;
  }
  return N;
}

json::Object lspPosition(llvm::StringRef Text, const std::vector<size_t> &Starts,
                         size_t Offset) {
  Offset = std::min(Offset, Text.size());
  size_t Line = std::upper_bound(Starts.begin(), Starts.end(), Offset) -
                Starts.begin() - 1;
  return json::Object{
      {"line", static_cast<int64_t>(Line)},
      {"character", utf16Units(Text.slice(Starts[Line], Offset))}};
}

/// Byte offset of a 1-based line and byte column.
size_t offsetOf(llvm::StringRef Text, const std::vector<size_t> &Starts,
                unsigned Line, unsigned Column) {
  if (Line == 0 || Line > Starts.size())
    return Text.size();
  return std::min(Text.size(), Starts[Line - 1] + (Column ? Column - 1 : 0));
}

/// Byte offset of an LSP position (clamped to its line).
size_t offsetOfLsp(llvm::StringRef Text, const std::vector<size_t> &Starts,
                   int64_t Line, int64_t Character) {
  if (Line < 0)
    return 0;
  if (static_cast<size_t>(Line) >= Starts.size())
    return Text.size();
  size_t I = Starts[Line];
  int64_t Units = 0;
  while (I < Text.size() && Text[I] != '\n' && Units < Character) {
    unsigned char C = Text[I];
    size_t Len = C < 0x80 ? 1 : C < 0xE0 ? 2 : C < 0xF0 ? 3 : 4;
    Units += Len == 4 ? 2 : 1;
    I = std::min(Text.size(), I + Len);
  }
  return I;
}

json::Object lspRange(llvm::StringRef Text, const std::vector<size_t> &Starts,
                      const SourceSpan &S) {
  size_t Begin = offsetOf(Text, Starts, S.Line, S.Column);
  size_t End = Begin;
  if (S.EndLine > S.Line || (S.EndLine == S.Line && S.EndColumn > S.Column))
    End = offsetOf(Text, Starts, S.EndLine, S.EndColumn);
  return json::Object{{"start", lspPosition(Text, Starts, Begin)},
                      {"end", lspPosition(Text, Starts, End)}};
}

// ---- URIs ----------------------------------------------------------------

std::optional<std::string> uriToPath(llvm::StringRef URI) {
  if (!URI.consume_front("file://"))
    return std::nullopt;
  URI.consume_front("localhost");
  // file://host/path is not a local file; file:///path is.
  if (!URI.startswith("/"))
    return std::nullopt;
  std::string Path;
  for (size_t I = 0; I < URI.size(); ++I) {
    if (URI[I] == '%' && I + 2 < URI.size() && llvm::isHexDigit(URI[I + 1]) &&
        llvm::isHexDigit(URI[I + 2])) {
      Path += static_cast<char>(llvm::hexFromNibbles(URI[I + 1], URI[I + 2]));
      I += 2;
    } else {
      Path += URI[I];
    }
  }
  return Path;
}

// ---- the server ------------------------------------------------------------

struct AnalysisResult {
  std::string Text; // what was analysed
  std::vector<FunctionTrace> Traces;
  std::vector<Diagnostic> Diagnostics;
};

/// What the analysis thread takes from a document: its state when the
/// analysis began.
struct Snapshot {
  std::string URI;
  std::string LanguageId;
  std::string Text;
  int64_t Version = 0;
  /// Changes with every new text (server-wide, so a document closed and
  /// opened again never repeats one): an analysis of an older generation
  /// is stale and never published.
  uint64_t Generation = 0;
};

/// An open document: its current state and its last published analysis.
struct Document : Snapshot {
  std::optional<AnalysisResult> Last;
};

/// What an analysis gives: the diagnostics to publish and, when the file
/// was analysed, the result hover and code actions use.
struct Outcome {
  json::Array Diagnostics;
  std::optional<AnalysisResult> Last;
};

/// How long after the last didChange a document is analysed: typing does
/// not start an analysis per keystroke, a pause does.
constexpr std::chrono::milliseconds ChangeDebounce(500);

/// Thrown by parameter readers; becomes -32602.
struct BadParams {
  std::string Message;
};

class Server {
public:
  Server(const LspOptions &Options, llvm::raw_ostream &Out,
         llvm::raw_ostream &Err)
      : Options(Options), Out(Out), Err(Err) {}

  ~Server() {
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

  /// -p, as on the command line: relative to the working directory. A
  /// relative one with no database there is looked for again under the
  /// workspace root at initialize (an editor started in a subdirectory);
  /// one found nowhere is logged and each file's own database is used, as
  /// without -p. Only a database that is there but not valid stops the
  /// server (status 2), since its files' flags are unknown.
  bool start() {
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

  /// One message body. Returns false when the server should stop.
  bool handle(llvm::StringRef Body) {
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

  int exitCode() const { return ShutdownRequested ? 0 : 1; }

  void logMessage(int Type, const std::string &Text) {
    send(json::Object{{"jsonrpc", "2.0"},
                      {"method", "window/logMessage"},
                      {"params", json::Object{{"type", Type}, {"message", Text}}}});
  }

private:
  // -- framing --
  void send(json::Value Message) {
    std::string Body;
    llvm::raw_string_ostream OS(Body);
    OS << Message;
    OS.flush();
    // The reader's thread and the analysis thread both write.
    std::lock_guard<std::mutex> L(OutMutex);
    Out << "Content-Length: " << Body.size() << "\r\n\r\n" << Body;
    Out.flush();
  }
  void showMessage(int Type, const std::string &Text) {
    send(json::Object{{"jsonrpc", "2.0"},
                      {"method", "window/showMessage"},
                      {"params", json::Object{{"type", Type}, {"message", Text}}}});
  }

  /// Loads -p's database from Dir. A missing one is a warning (each file's
  /// own database is used instead); one that is not valid is an error:
  /// at start the server stops, later every document says so.
  bool loadBuildPath(const std::string &Dir, bool AtStart) {
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

  /// The workspace root initialize names (rootUri, else rootPath), or "".
  static std::string workspaceRoot(const json::Value &Params) {
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
  void reply(const json::Value &Id, json::Value Result) {
    send(json::Object{{"jsonrpc", "2.0"}, {"id", Id}, {"result", std::move(Result)}});
  }
  void replyError(const json::Value &Id, int Code, const std::string &Message) {
    send(json::Object{
        {"jsonrpc", "2.0"},
        {"id", Id},
        {"error", json::Object{{"code", Code}, {"message", Message}}}});
  }

  // -- parameter readers --
  static const json::Object &object(const json::Value &V, llvm::StringRef What) {
    const json::Object *O = V.getAsObject();
    if (!O)
      throw BadParams{std::string(What) + " must be an object"};
    return *O;
  }
  static std::string string(const json::Object &O, llvm::StringRef Key) {
    auto S = O.getString(Key);
    if (!S)
      throw BadParams{"'" + Key.str() + "' must be a string"};
    return S->str();
  }
  static int64_t integer(const json::Object &O, llvm::StringRef Key) {
    auto I = O.getInteger(Key);
    if (!I)
      throw BadParams{"'" + Key.str() + "' must be an integer"};
    return *I;
  }
  static const json::Object &member(const json::Object &O, llvm::StringRef Key) {
    const json::Object *M = O.getObject(Key);
    if (!M)
      throw BadParams{"'" + Key.str() + "' must be an object"};
    return *M;
  }
  std::string documentURI(const json::Object &Params) {
    return string(member(Params, "textDocument"), "uri");
  }

  // -- requests --
  void request(llvm::StringRef Method, const json::Value &Params,
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

  // -- notifications; false means exit --
  bool notification(llvm::StringRef Method, const json::Value &Params) {
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

  // -- analysis --
  void publish(const std::string &URI, std::optional<int64_t> Version,
               json::Array Diagnostics) {
    json::Object P{{"uri", URI}, {"diagnostics", std::move(Diagnostics)}};
    if (Version)
      P["version"] = *Version;
    send(json::Object{{"jsonrpc", "2.0"},
                      {"method", "textDocument/publishDiagnostics"},
                      {"params", std::move(P)}});
  }

  /// A diagnostic about the whole file, at its start: an error (1), or
  /// information (3) for a file left out on purpose.
  json::Object fileProblem(const std::string &Message, int Severity = 1) {
    return json::Object{
        {"range", json::Object{{"start", json::Object{{"line", 0}, {"character", 0}}},
                               {"end", json::Object{{"line", 0}, {"character", 0}}}}},
        {"severity", Severity},
        {"source", "tensor-accountant"},
        {"message", Message}};
  }

  /// The compile database for Path: the flags after --, -p's, the one
  /// found above the file (driver/DatabaseDiscovery.h), or the default
  /// LibTorch flags. Null with Error set when the database that applies is
  /// not valid or has no command for the file: never the default instead.
  /// Source says where the command comes from. Used by the analysis
  /// thread only.
  const clang::tooling::CompilationDatabase *
  databaseFor(const std::string &Path, std::string &Error, std::string &Source) {
    if (!Options.HaveCompilerFlags) {
      if (!BuildDBError.empty()) {
        Error = BuildDBError + " (-p " + Options.BuildPath + ")";
        return nullptr;
      }
      if (BuildDB && !BuildDB->getCompileCommands(Path).empty()) {
        Source = BuildDBFile;
        return BuildDB.get();
      }
      if (!BuildDB) {
        DatabaseLookup L = Discovery.find(Path);
        if (!L.Error.empty()) {
          Error = L.Error + " (the compile database found above the file)";
          return nullptr;
        }
        if (L.DB && L.DB->getCompileCommands(Path).empty()) {
          Error = "no compile command for this file in '" + L.DatabaseFile +
                  "'" +
                  (L.DB->getAllFiles().empty() ? " (it lists no files)" : "");
          return nullptr;
        }
        if (L.DB) {
          Source = L.DatabaseFile;
          return L.DB;
        }
      }
    }
    if (!FixedDB) {
      FixedDB = makeFixedDatabase(Options.CompilerFlags,
                                  Options.HaveCompilerFlags, FixedDBError);
    }
    Error = FixedDBError;
    Source = Options.HaveCompilerFlags ? "the flags after --"
                                       : "the default flags (no compile "
                                         "database above the file)";
    return FixedDB.get();
  }

  /// Queues URI's analysis After from now, replacing one queued already:
  /// a change during the pause moves it on.
  void schedule(const std::string &URI, std::chrono::milliseconds After) {
    Scheduled[URI] = std::chrono::steady_clock::now() + After;
    WorkCV.notify_all();
  }

  /// The analysis thread: one document at a time, the one due first. The
  /// reader goes on meanwhile (hover, code actions and new edits are
  /// answered from the last result). A result is published only while its
  /// document still has the text that was analysed: one that a newer
  /// edit overtook is dropped (that edit's analysis is queued), so
  /// diagnostics never go back to an older version.
  void analysisLoop() {
    std::unique_lock<std::mutex> L(M);
    while (!Stopping) {
      if (Scheduled.empty()) {
        WorkCV.wait(L);
        continue;
      }
      auto Next = std::min_element(
          Scheduled.begin(), Scheduled.end(),
          [](const auto &A, const auto &B) { return A.second < B.second; });
      if (Next->second > std::chrono::steady_clock::now()) {
        WorkCV.wait_until(L, Next->second);
        continue;
      }
      std::string URI = Next->first;
      Scheduled.erase(Next);
      auto It = Documents.find(URI);
      if (It == Documents.end())
        continue;
      const Document &D = It->second;
      Snapshot S = D; // the state, not the last result
      L.unlock();
      Outcome O = analyse(S);
      L.lock();
      if (Stopping)
        break;
      It = Documents.find(URI);
      if (It == Documents.end() || It->second.Generation != S.Generation) {
        logMessage(4, "tensor-accountant: dropped the analysis of version " +
                          std::to_string(S.Version) + " of " + URI +
                          ": the document changed meanwhile");
        continue;
      }
      It->second.Last = std::move(O.Last);
      publish(URI, S.Version, std::move(O.Diagnostics));
    }
  }

  /// Analyses one snapshot. Touches no document: runs unlocked.
  Outcome analyse(const Snapshot &S) {
    Outcome O;
    std::optional<std::string> Path = uriToPath(S.URI);
    if (!Path) {
      logMessage(2, "tensor-accountant: not analysing " + S.URI +
                        ": only file:// documents have a compile command");
      return O;
    }
    bool CxxLanguage = S.LanguageId == "c" || S.LanguageId == "cpp" ||
                       S.LanguageId == "cuda" || S.LanguageId == "cuda-cpp" ||
                       S.LanguageId == "objective-cpp";
    if (!CxxLanguage && !isCxxSourceName(*Path)) {
      logMessage(3, "tensor-accountant: not analysing " + *Path +
                        ": not a C or C++ file (languageId '" + S.LanguageId +
                        "')");
      return O;
    }
    std::string Error, Source;
    const clang::tooling::CompilationDatabase *DB =
        databaseFor(*Path, Error, Source);
    if (!DB) {
      logMessage(1, "tensor-accountant: " + *Path + ": " + Error);
      O.Diagnostics.push_back(fileProblem("tensor-accountant: " + Error));
      return O;
    }
    std::string ConfigError;
    CheckConfig Config;
    if (Options.ConfigFor)
      Config = Options.ConfigFor(*Path, ConfigError);
    if (!ConfigError.empty()) {
      O.Diagnostics.push_back(fileProblem("tensor-accountant: " + ConfigError));
      return O;
    }

    logMessage(4, "tensor-accountant: analysing version " +
                      std::to_string(S.Version) + " of " + *Path +
                      " with compile commands from " + Source);
    RunOptions Run = Options.Run;
    Run.Jobs = 1;
    Run.Overlays = {{*Path, S.Text}};
    auto Start = std::chrono::steady_clock::now();
    AnalysisRun R = analyzeFiles(*DB, {*Path}, {}, Run);
    double Seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - Start)
                         .count();
    if (!R.Skipped.empty()) {
      // A CUDA source: one informational line, not a compile error.
      logMessage(3, "tensor-accountant: " + *Path + ": " + R.Skipped.front().Reason);
      O.Diagnostics.push_back(fileProblem(
          "tensor-accountant: " + R.Skipped.front().Reason, /*Severity=*/3));
      return O;
    }
    const FileAnalysis *FA = nullptr;
    for (const FileAnalysis &F : R.Files)
      if (!F.CompileErrors)
        FA = &F;
    // R.Failed also covers a compile command the compiler driver refused
    // (an unknown flag), which may still leave a parse behind.
    if (!FA || R.Failed) {
      std::string Message =
          "tensor-accountant: the file did not compile with its compile "
          "command, so it was not analysed (the compiler's errors are in the "
          "server's log)";
      logMessage(1, Message + ": " + *Path + " (compile commands from " +
                        Source + ")");
      O.Diagnostics.push_back(fileProblem(Message));
      return O;
    }
    AnalysisResult A;
    A.Text = S.Text;
    A.Traces = FA->Traces;
    A.Diagnostics = runChecks(A.Traces, Config, S.Text);
    logMessage(4, "tensor-accountant: analysed version " +
                      std::to_string(S.Version) + " of " + *Path + " in " +
                      llvm::formatv("{0:f1}", Seconds).str() + " s: " +
                      std::to_string(A.Diagnostics.size()) + " finding(s)");
    std::vector<size_t> Starts = lineStarts(A.Text);
    for (const Diagnostic &Diag : A.Diagnostics)
      O.Diagnostics.push_back(lspDiagnostic(Diag, A.Text, Starts));
    O.Last = std::move(A);
    return O;
  }

  /// Starts: lineStarts(Text), computed once per document, not per finding.
  json::Object lspDiagnostic(const Diagnostic &D, llvm::StringRef Text,
                             const std::vector<size_t> &Starts) {
    FormatOptions Severity;
    Severity.ErrorChecks = Options.ErrorChecks;
    bool Error = severityOf(D.Check, Severity) == "error";
    json::Object O{{"range", lspRange(Text, Starts, D.Where)},
                   {"severity", Error ? 1 : 2},
                   {"code", D.Check},
                   {"source", "tensor-accountant"},
                   {"message", renderMessage(D.Format, D.Args)}};
    if (!D.Notes.empty()) {
      json::Array Related;
      for (const DiagnosticNote &N : D.Notes) {
        // Notes in the same document are positioned with its text; others
        // (none today: traces are per file) get their line only.
        bool Same = N.Where.File.empty() || N.Where.File == D.Where.File;
        json::Object Range =
            Same ? lspRange(Text, Starts, N.Where)
                 : json::Object{
                       {"start", json::Object{{"line", N.Where.Line - 1},
                                              {"character", 0}}},
                       {"end", json::Object{{"line", N.Where.Line - 1},
                                            {"character", 0}}}};
        std::string File = N.Where.File.empty() ? D.Where.File : N.Where.File;
        Related.push_back(json::Object{
            {"location", json::Object{{"uri", fileURI(absolute(File))},
                                      {"range", std::move(Range)}}},
            {"message", renderMessage(N.Format, N.Args)}});
      }
      O["relatedInformation"] = std::move(Related);
    }
    if (D.Bytes)
      O["data"] = json::Object{{"bytes", *D.Bytes}};
    return O;
  }

  static std::string absolute(const std::string &File) {
    llvm::SmallString<256> P(File);
    llvm::sys::fs::make_absolute(P);
    return std::string(P);
  }

  // -- hover --
  json::Value hover(const json::Object &Params) {
    std::string URI = documentURI(Params);
    const json::Object &Pos = member(Params, "position");
    int64_t Line = integer(Pos, "line"), Character = integer(Pos, "character");
    auto It = Documents.find(URI);
    if (It == Documents.end() || !It->second.Last)
      return nullptr;
    const Document &D = It->second;
    llvm::StringRef Text = D.Text;
    std::vector<size_t> Starts = lineStarts(Text);
    size_t Offset = offsetOfLsp(Text, Starts, Line, Character);
    auto IsIdent = [](char C) { return llvm::isAlnum(C) || C == '_'; };
    size_t B = Offset, E = Offset;
    while (B > 0 && IsIdent(Text[B - 1]))
      --B;
    while (E < Text.size() && IsIdent(Text[E]))
      ++E;
    if (B == E)
      return nullptr;
    std::string Name = Text.slice(B, E).str();
    unsigned Line1 = static_cast<unsigned>(Line) + 1;
    // The binding of Name in the function around the cursor that is in
    // effect there: the last one at or above the cursor's line.
    const FunctionTrace *Fn = nullptr;
    for (const FunctionTrace &T : D.Last->Traces)
      if (T.Where.Line <= Line1 && Line1 <= std::max(T.Where.EndLine, T.Where.Line))
        Fn = &T;
    if (!Fn)
      return nullptr;
    std::vector<RowFacts> Rows = rowFacts(*Fn);
    const RowFacts *Best = nullptr;
    for (const RowFacts &R : Rows) {
      if (R.B->Name != Name)
        continue;
      if (R.B->Where.Line <= Line1 || !Best)
        Best = &R;
    }
    if (!Best)
      return nullptr;
    std::vector<std::string> Cells = tableCells(*Best, Fn->Env.get());
    auto Cell = [](const std::string &S) { return markdownCell(S); };
    std::string MD = "**" + Cell(Cells[0]) + "** in `" + Fn->Name +
                     "` (line " + std::to_string(Best->B->Where.Line) + ")\n\n" +
                     "| name | shape | dtype | storage bytes | view or copy | "
                     "keeps alive |\n|---|---|---|---|---|---|\n|";
    for (const std::string &C : Cells)
      MD += " " + Cell(C) + " |";
    MD += "\n";
    if (!Best->Note.empty())
      MD += "\n" + Best->Note + "\n";
    if (D.Text != D.Last->Text)
      MD += "\n_(from the analysis of an earlier version; the current one "
            "is analysed once the edits pause)_\n";
    return json::Object{
        {"contents", json::Object{{"kind", "markdown"}, {"value", MD}}},
        {"range", json::Object{{"start", lspPosition(Text, Starts, B)},
                               {"end", lspPosition(Text, Starts, E)}}}};
  }

  // -- code actions --
  json::Value codeActions(const json::Object &Params) {
    std::string URI = documentURI(Params);
    const json::Object &Range = member(Params, "range");
    int64_t First = integer(member(Range, "start"), "line");
    int64_t Last = integer(member(Range, "end"), "line");
    json::Array Actions;
    auto It = Documents.find(URI);
    // Fix-its are byte offsets into the analysed text: stale after an edit.
    if (It == Documents.end() || !It->second.Last ||
        It->second.Last->Text != It->second.Text)
      return Actions;
    const AnalysisResult &A = *It->second.Last;
    llvm::StringRef Text = A.Text;
    std::vector<size_t> Starts = lineStarts(Text);
    for (const Diagnostic &D : A.Diagnostics) {
      if (D.Fixes.empty())
        continue;
      int64_t L0 = static_cast<int64_t>(D.Where.Line) - 1;
      int64_t L1 = static_cast<int64_t>(std::max(D.Where.EndLine, D.Where.Line)) - 1;
      if (L1 < First || L0 > Last)
        continue;
      json::Array Edits;
      bool Ok = true;
      for (const FixIt &F : D.Fixes) {
        if (F.Where.BeginOffset == ~size_t(0) || F.Where.EndOffset == ~size_t(0) ||
            F.Where.BeginOffset > F.Where.EndOffset ||
            F.Where.EndOffset > Text.size() || F.Where.InMacro) {
          Ok = false;
          break;
        }
        Edits.push_back(json::Object{
            {"range",
             json::Object{{"start", lspPosition(Text, Starts, F.Where.BeginOffset)},
                          {"end", lspPosition(Text, Starts, F.Where.EndOffset)}}},
            {"newText", F.Replacement}});
      }
      if (!Ok)
        continue;
      json::Object Changes;
      Changes[URI] = std::move(Edits);
      std::string Title = "Apply fix-it: " + renderMessage(D.Format, D.Args);
      Actions.push_back(json::Object{
          {"title", Title + " [" + D.Check + "]"},
          {"kind", "quickfix"},
          {"isPreferred", true},
          {"diagnostics", json::Array{lspDiagnostic(D, Text, Starts)}},
          {"edit", json::Object{{"changes", std::move(Changes)}}}});
    }
    return Actions;
  }

  const LspOptions &Options;
  llvm::raw_ostream &Out;
  llvm::raw_ostream &Err;
  /// Writes to Out, from either thread.
  std::mutex OutMutex;

  // Guarded by M: the reader's state, shared with the analysis thread.
  std::mutex M;
  bool Initialized = false;
  bool ShutdownRequested = false;
  std::map<std::string, Document> Documents;
  uint64_t Generations = 0;
  /// Documents waiting for an analysis, with when it is due.
  std::map<std::string, std::chrono::steady_clock::time_point> Scheduled;
  std::condition_variable WorkCV;
  bool Stopping = false;
  llvm::thread Worker;

  // -p: set before any document can be analysed (start, or the first
  // initialize), read-only afterwards.
  bool BuildPathPending = false;
  std::unique_ptr<clang::tooling::CompilationDatabase> BuildDB;
  std::string BuildDBFile;
  std::string BuildDBError;
  std::string BuildPathWarning;

  // The analysis thread's own.
  DatabaseDiscovery Discovery{/*Refresh=*/true};
  std::unique_ptr<clang::tooling::CompilationDatabase> FixedDB;
  std::string FixedDBError;
};

/// Splits the input stream into message bodies. A header block is lines
/// "Name: value" up to an empty line; it needs exactly one usable
/// Content-Length. A block that is not one (no length, a length that is
/// no number, negative, or over the limit, a line that is no header, a
/// header line without its blank line) is reported and skipped, and the
/// reader resynchronises on the next "Content-Length:" in the stream,
/// wherever it starts: a body sent without a usable header ends where the
/// next message's header begins, on the same line, since bodies need not
/// end in a newline. Reading is by bytes, with bounded memory: nothing
/// skipped is kept.
class MessageReader {
public:
  explicit MessageReader(std::istream &In) : In(*In.rdbuf()) {}

  struct Result {
    enum Kind { Message, BadBlock, End } What;
    std::string Body;  // Message: the body
    std::string Error; // BadBlock: what was wrong; End: why, or empty
  };

  Result next() {
    if (Resynchronise) {
      Resynchronise = false;
      uint64_t Skipped = 0;
      if (!skipToContentLength(Skipped))
        return {Result::End, "",
                Skipped ? "no message after " + std::to_string(Skipped) +
                              " skipped bytes"
                        : ""};
      PendingHeader = "Content-Length:";
    }
    std::optional<uint64_t> Length;
    std::string BadLength;
    bool SawHeader = false;
    while (true) {
      std::string Line;
      if (PendingHeader) {
        Line = std::move(*PendingHeader);
        PendingHeader.reset();
      }
      bool Complete = readLine(Line);
      if (!Complete && Line.empty())
        return {Result::End, "", ""};
      if (!Line.empty() && Line.back() == '\r')
        Line.pop_back();
      if (Line.size() > MaxHeaderLine)
        return bad("a header line over " + std::to_string(MaxHeaderLine) +
                   " bytes");
      if (!Complete)
        return {Result::End, "",
                "the input ended inside a header block: '" + shown(Line) + "'"};
      if (Line.empty()) {
        if (!SawHeader)
          continue; // a stray blank line between messages
        break;
      }
      SawHeader = true;
      llvm::StringRef Name, Value;
      std::tie(Name, Value) = llvm::StringRef(Line).split(':');
      Name = Name.rtrim(" \t");
      if (!llvm::StringRef(Line).contains(':') || !isHeaderName(Name))
        return badAt(Line, std::string(Length ? "a header block"
                                              : "a header block without "
                                                "Content-Length") +
                               " with a line that is no \"Name: value\" "
                               "header: '" +
                               shown(Line) + "'");
      if (!Name.equals_insensitive("Content-Length"))
        continue; // Content-Type, or a header we need not understand
      llvm::StringRef Digits = Value.trim(" \t");
      uint64_t N = 0;
      bool Number = !Digits.empty() && Digits.size() <= 19 &&
                    llvm::all_of(Digits, llvm::isDigit) &&
                    !Digits.getAsInteger(10, N);
      if (!Number)
        return badAt(Line, "bad Content-Length '" + shown(Digits) + "'");
      if (Length && *Length != N)
        return badAt(Line, "two different Content-Length headers");
      Length = N;
    }
    if (!Length)
      return bad("a header block without Content-Length");
    if (*Length > MaxBody)
      return bad("a message of " + std::to_string(*Length) +
                 " bytes is over the 256 MiB limit");
    std::string Body(*Length, '\0');
    std::streamsize Got =
        In.sgetn(Body.data(), static_cast<std::streamsize>(*Length));
    if (static_cast<uint64_t>(Got) != *Length)
      return {Result::End, "",
              "the input ended inside a message body (" + std::to_string(Got) +
                  " of " + std::to_string(*Length) + " bytes)"};
    return {Result::Message, std::move(Body), ""};
  }

private:
  static constexpr size_t MaxHeaderLine = 4096;
  static constexpr uint64_t MaxBody = uint64_t(256) << 20;

  /// RFC 7230's token characters: a JSON body run into a header line
  /// ('{"jsonrpc":...') is no header name.
  static bool isHeaderName(llvm::StringRef Name) {
    return !Name.empty() && llvm::all_of(Name, [](char C) {
      return llvm::isAlnum(C) || llvm::StringRef("!#$%&'*+-.^_`|~").contains(C);
    });
  }

  /// Text for a log line: at most 60 bytes, control bytes escaped.
  static std::string shown(llvm::StringRef Text) {
    std::string Out;
    for (unsigned char C : Text.take_front(60)) {
      if (C < 0x20 || C == 0x7f)
        Out += "\\x" + llvm::utohexstr(C, /*LowerCase=*/true, /*Width=*/2);
      else
        Out += static_cast<char>(C);
    }
    if (Text.size() > 60)
      Out += "...";
    return Out;
  }

  Result bad(std::string Error) {
    Resynchronise = true;
    return {Result::BadBlock, "", std::move(Error)};
  }
  /// A bad block whose offending line may itself hold the next message's
  /// header after its first byte (a body without a blank line before it,
  /// or one run into the next header): resume there.
  Result badAt(llvm::StringRef Line, std::string Error) {
    size_t At = Line.drop_front().find_insensitive("content-length:");
    if (At == llvm::StringRef::npos)
      return bad(std::move(Error));
    PendingHeader = Line.drop_front(At + 1).str();
    // The rest of the line was read already; the header goes on from it.
    PendingComplete = true;
    return {Result::BadBlock, "", std::move(Error)};
  }

  /// Appends bytes up to and without '\n' to Line (at most a little over
  /// MaxHeaderLine; the rest of a longer line is left for resynchronising).
  /// False when the stream ended before a '\n'.
  bool readLine(std::string &Line) {
    if (PendingComplete) {
      PendingComplete = false;
      return true;
    }
    while (Line.size() <= MaxHeaderLine) {
      int C = In.sbumpc();
      if (C == std::char_traits<char>::eof())
        return false;
      if (C == '\n')
        return true;
      Line += static_cast<char>(C);
    }
    return true; // too long: the caller reports it
  }

  /// Reads up to and through the next "Content-Length:" (any case).
  /// Skipped counts the bytes dropped. False at the end of the stream.
  bool skipToContentLength(uint64_t &Skipped) {
    static const char Pattern[] = "content-length:";
    const size_t N = sizeof(Pattern) - 1;
    size_t Matched = 0;
    // 'c' occurs in the pattern only at its start, so on a mismatch the
    // match can only restart at the current byte.
    while (Matched < N) {
      int C = In.sbumpc();
      if (C == std::char_traits<char>::eof())
        return false;
      char Lower = llvm::toLower(static_cast<char>(C));
      if (Lower == Pattern[Matched]) {
        ++Matched;
      } else {
        Skipped += Matched + 1;
        Matched = Lower == Pattern[0] ? 1 : 0;
        Skipped -= Matched;
      }
    }
    return true;
  }

  std::streambuf &In;
  bool Resynchronise = false;
  /// The start of a header line already read (after resynchronising, or
  /// found inside a bad line), which the next block begins with.
  std::optional<std::string> PendingHeader;
  /// PendingHeader is a whole line (its '\n' was consumed already).
  bool PendingComplete = false;
};

} // namespace

int runLspServer(const LspOptions &Options, std::istream &In,
                 llvm::raw_ostream &Out, llvm::raw_ostream &Err) {
  Server S(Options, Out, Err);
  if (!S.start())
    return 2;
  MessageReader Reader(In);
  while (true) {
    MessageReader::Result R = Reader.next();
    if (R.What == MessageReader::Result::End) {
      if (!R.Error.empty())
        Err << "tensor-accountant: lsp: " << R.Error << "\n";
      break;
    }
    if (R.What == MessageReader::Result::BadBlock) {
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
