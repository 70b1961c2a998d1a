// The language server's analyses: which compile command a document gets,
// the analysis thread (one document at a time, after edits pause) and the
// diagnostics it publishes.
#include "lsp/LspPositions.h"
#include "lsp/Server.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace tma::lsp {

void Server::publish(const std::string &URI, std::optional<int64_t> Version,
             json::Array Diagnostics) {
  json::Object P{{"uri", URI}, {"diagnostics", std::move(Diagnostics)}};
  if (Version)
    P["version"] = *Version;
  send(json::Object{{"jsonrpc", "2.0"},
                    {"method", "textDocument/publishDiagnostics"},
                    {"params", std::move(P)}});
}

json::Object Server::fileProblem(const std::string &Message, int Severity) {
  return json::Object{
      {"range", json::Object{{"start", json::Object{{"line", 0}, {"character", 0}}},
                             {"end", json::Object{{"line", 0}, {"character", 0}}}}},
      {"severity", Severity},
      {"source", "tensor-accountant"},
      {"message", Message}};
}

const clang::tooling::CompilationDatabase *
Server::databaseFor(const std::string &Path, std::string &Error, std::string &Source) {
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

void Server::schedule(const std::string &URI, std::chrono::milliseconds After) {
  Scheduled[URI] = std::chrono::steady_clock::now() + After;
  WorkCV.notify_all();
}

void Server::analysisLoop() {
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

Outcome Server::analyse(const Snapshot &S) {
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

} // namespace tma::lsp
