// The language server (design in LspServer.h).
#include "driver/LspServer.h"
#include "driver/Formats.h"
#include "driver/JSONInput.h"
#include "driver/Report.h"
#include "driver/Version.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <map>
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

struct Document {
  std::string URI;
  std::string Path;
  std::string LanguageId;
  std::string Text;
  int64_t Version = 0;
  std::optional<AnalysisResult> Last;
};

/// Thrown by parameter readers; becomes -32602.
struct BadParams {
  std::string Message;
};

class Server {
public:
  Server(const LspOptions &Options, llvm::raw_ostream &Out,
         llvm::raw_ostream &Err)
      : Options(Options), Out(Out), Err(Err) {}

  bool start() {
    if (!Options.BuildPath.empty()) {
      std::string Error;
      auto DB = loadBuildDatabase(Options.BuildPath, Error);
      if (!DB) {
        Err << "tensor-accountant: error: " << Error << "\n";
        return false;
      }
      BuildDB = clang::tooling::inferMissingCompileCommands(std::move(DB));
    }
    return true;
  }

  /// One message body. Returns false when the server should stop.
  bool handle(llvm::StringRef Body) {
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
    Out << "Content-Length: " << Body.size() << "\r\n\r\n" << Body;
    Out.flush();
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
      Initialized = true;
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
      Document &D = Documents[string(TD, "uri")];
      D.URI = string(TD, "uri");
      D.Text = string(TD, "text");
      D.LanguageId = TD.getString("languageId").value_or("").str();
      D.Version = TD.getInteger("version").value_or(0);
      D.Last.reset();
      analyse(D);
    } else if (Method == "textDocument/didChange") {
      const json::Object &P = object(Params, "params");
      auto It = Documents.find(documentURI(P));
      if (It == Documents.end())
        throw BadParams{"didChange for a document that is not open"};
      const json::Array *Changes = P.getArray("contentChanges");
      if (!Changes)
        throw BadParams{"'contentChanges' must be an array"};
      Document &D = It->second;
      for (const json::Value &C : *Changes) {
        const json::Object &Change = object(C, "a content change");
        std::string Text = string(Change, "text");
        if (const json::Object *R = Change.getObject("range")) {
          std::vector<size_t> Starts = lineStarts(D.Text);
          const json::Object &S = member(*R, "start"), &E = member(*R, "end");
          size_t B = offsetOfLsp(D.Text, Starts, integer(S, "line"),
                                 integer(S, "character"));
          size_t End = offsetOfLsp(D.Text, Starts, integer(E, "line"),
                                   integer(E, "character"));
          if (End < B)
            std::swap(B, End);
          D.Text.replace(B, End - B, Text);
        } else {
          D.Text = std::move(Text);
        }
      }
      D.Version = member(P, "textDocument").getInteger("version").value_or(D.Version);
    } else if (Method == "textDocument/didSave") {
      const json::Object &P = object(Params, "params");
      auto It = Documents.find(documentURI(P));
      if (It == Documents.end())
        throw BadParams{"didSave for a document that is not open"};
      if (auto Text = P.getString("text"))
        It->second.Text = Text->str();
      analyse(It->second);
    } else if (Method == "textDocument/didClose") {
      const json::Object &P = object(Params, "params");
      std::string URI = documentURI(P);
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

  /// The compile database for Path: -p, a compile_commands.json above the
  /// file, or the default LibTorch flags. Null with Error set on failure.
  const clang::tooling::CompilationDatabase *databaseFor(const std::string &Path,
                                                         std::string &Error) {
    if (!Options.HaveCompilerFlags) {
      if (BuildDB && !BuildDB->getCompileCommands(Path).empty())
        return BuildDB.get();
      if (!BuildDB) {
        llvm::StringRef Dir = llvm::sys::path::parent_path(Path);
        auto It = DetectedDBs.find(Dir.str());
        if (It == DetectedDBs.end()) {
          std::string Ignored;
          auto DB = clang::tooling::CompilationDatabase::autoDetectFromDirectory(
              Dir, Ignored);
          if (DB)
            DB = clang::tooling::inferMissingCompileCommands(
                withDefaultLibTorch(std::move(DB)));
          It = DetectedDBs.emplace(Dir.str(), std::move(DB)).first;
        }
        if (It->second && !It->second->getCompileCommands(Path).empty())
          return It->second.get();
      }
    }
    if (!FixedDB) {
      FixedDB = makeFixedDatabase(Options.CompilerFlags,
                                  Options.HaveCompilerFlags, FixedDBError);
    }
    Error = FixedDBError;
    return FixedDB.get();
  }

  void analyse(Document &D) {
    std::optional<std::string> Path = uriToPath(D.URI);
    if (!Path) {
      logMessage(2, "tensor-accountant: not analysing " + D.URI +
                        ": only file:// documents have a compile command");
      publish(D.URI, D.Version, json::Array{});
      return;
    }
    D.Path = *Path;
    bool CxxLanguage = D.LanguageId == "c" || D.LanguageId == "cpp" ||
                       D.LanguageId == "cuda" || D.LanguageId == "cuda-cpp" ||
                       D.LanguageId == "objective-cpp";
    if (!CxxLanguage && !isCxxSourceName(D.Path)) {
      logMessage(3, "tensor-accountant: not analysing " + D.Path +
                        ": not a C or C++ file (languageId '" + D.LanguageId +
                        "')");
      publish(D.URI, D.Version, json::Array{});
      return;
    }
    std::string Error;
    const clang::tooling::CompilationDatabase *DB = databaseFor(D.Path, Error);
    if (!DB) {
      publish(D.URI, D.Version,
              json::Array{fileProblem("tensor-accountant: " + Error)});
      return;
    }
    std::string ConfigError;
    CheckConfig Config;
    if (Options.ConfigFor)
      Config = Options.ConfigFor(D.Path, ConfigError);
    if (!ConfigError.empty()) {
      publish(D.URI, D.Version,
              json::Array{fileProblem("tensor-accountant: " + ConfigError)});
      return;
    }

    RunOptions Run = Options.Run;
    Run.Jobs = 1;
    Run.Overlays = {{D.Path, D.Text}};
    auto Start = std::chrono::steady_clock::now();
    AnalysisRun R = analyzeFiles(*DB, {D.Path}, {}, Run);
    double Seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - Start)
                         .count();
    if (!R.Skipped.empty()) {
      // A CUDA source: one informational line, not a compile error.
      D.Last.reset();
      logMessage(3, "tensor-accountant: " + D.Path + ": " + R.Skipped.front().Reason);
      publish(D.URI, D.Version,
              json::Array{fileProblem("tensor-accountant: " + R.Skipped.front().Reason,
                                      /*Severity=*/3)});
      return;
    }
    const FileAnalysis *FA = nullptr;
    for (const FileAnalysis &F : R.Files)
      if (!F.CompileErrors)
        FA = &F;
    // R.Failed also covers a compile command the compiler driver refused
    // (an unknown flag), which may still leave a parse behind.
    if (!FA || R.Failed) {
      D.Last.reset();
      std::string Message =
          "tensor-accountant: the file did not compile with its compile "
          "command, so it was not analysed (the compiler's errors are in the "
          "server's log)";
      logMessage(1, Message + ": " + D.Path);
      publish(D.URI, D.Version, json::Array{fileProblem(Message)});
      return;
    }
    AnalysisResult A;
    A.Text = D.Text;
    A.Traces = FA->Traces;
    A.Diagnostics = runChecks(A.Traces, Config, D.Text);
    logMessage(4, "tensor-accountant: analysed " + D.Path + " in " +
                      llvm::formatv("{0:f1}", Seconds).str() + " s: " +
                      std::to_string(A.Diagnostics.size()) + " finding(s)");
    json::Array Diags;
    std::vector<size_t> Starts = lineStarts(A.Text);
    for (const Diagnostic &Diag : A.Diagnostics)
      Diags.push_back(lspDiagnostic(Diag, A.Text, Starts));
    D.Last = std::move(A);
    publish(D.URI, D.Version, std::move(Diags));
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
      MD += "\n_(from the last analysis; save to refresh)_\n";
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
  bool Initialized = false;
  bool ShutdownRequested = false;
  std::map<std::string, Document> Documents;
  std::unique_ptr<clang::tooling::CompilationDatabase> BuildDB;
  std::map<std::string, std::unique_ptr<clang::tooling::CompilationDatabase>>
      DetectedDBs;
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
