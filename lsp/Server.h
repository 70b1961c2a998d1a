// Internal to lsp/: the language server's state, shared by its jobs:
// LspServer.cpp reads messages and dispatches them, LspAnalysis.cpp runs the
// analyses on their own thread and publishes diagnostics, LspFeatures.cpp
// answers hover and code actions from the last analysis.
#pragma once

#include "driver/DatabaseDiscovery.h"
#include "lsp/LspServer.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/thread.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tma::lsp {

namespace json = llvm::json;

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

class Server {
public:
  Server(const LspOptions &Options, llvm::raw_ostream &Out,
         llvm::raw_ostream &Err)
      : Options(Options), Out(Out), Err(Err) {}

  ~Server();

  /// -p, as on the command line: relative to the working directory. A
  /// relative one with no database there is looked for again under the
  /// workspace root at initialize (an editor started in a subdirectory);
  /// one found nowhere is logged and each file's own database is used, as
  /// without -p. Only a database that is there but not valid stops the
  /// server (status 2), since its files' flags are unknown.
  bool start();

  /// One message body. Returns false when the server should stop.
  bool handle(llvm::StringRef Body);

  int exitCode() const { return ShutdownRequested ? 0 : 1; }

  void logMessage(int Type, const std::string &Text);

private:
  // -- framing --
  void send(json::Value Message);
  void showMessage(int Type, const std::string &Text);

  /// Loads -p's database from Dir. A missing one is a warning (each file's
  /// own database is used instead); one that is not valid is an error:
  /// at start the server stops, later every document says so.
  bool loadBuildPath(const std::string &Dir, bool AtStart);

  /// The workspace root initialize names (rootUri, else rootPath), or "".
  static std::string workspaceRoot(const json::Value &Params);
  void reply(const json::Value &Id, json::Value Result);
  void replyError(const json::Value &Id, int Code, const std::string &Message);

  // -- parameter readers --
  static const json::Object &object(const json::Value &V, llvm::StringRef What);
  static std::string string(const json::Object &O, llvm::StringRef Key);
  static int64_t integer(const json::Object &O, llvm::StringRef Key);
  static const json::Object &member(const json::Object &O, llvm::StringRef Key);
  std::string documentURI(const json::Object &Params);

  // -- requests --
  void request(llvm::StringRef Method, const json::Value &Params,
               const json::Value &Id);

  // -- notifications; false means exit --
  bool notification(llvm::StringRef Method, const json::Value &Params);

  // -- analysis --
  void publish(const std::string &URI, std::optional<int64_t> Version,
               json::Array Diagnostics);

  /// A diagnostic about the whole file, at its start: an error (1), or
  /// information (3) for a file left out on purpose.
  json::Object fileProblem(const std::string &Message, int Severity = 1);

  /// The compile database for Path: the flags after --, -p's, the one
  /// found above the file (driver/DatabaseDiscovery.h), or the default
  /// LibTorch flags. Null with Error set when the database that applies is
  /// not valid or has no command for the file: never the default instead.
  /// Source says where the command comes from. Used by the analysis
  /// thread only.
  const clang::tooling::CompilationDatabase *
  databaseFor(const std::string &Path, std::string &Error, std::string &Source);

  /// Queues URI's analysis After from now, replacing one queued already:
  /// a change during the pause moves it on.
  void schedule(const std::string &URI, std::chrono::milliseconds After);

  /// The analysis thread: one document at a time, the one due first. The
  /// reader goes on meanwhile (hover, code actions and new edits are
  /// answered from the last result). A result is published only while its
  /// document still has the text that was analysed: one that a newer
  /// edit overtook is dropped (that edit's analysis is queued), so
  /// diagnostics never go back to an older version.
  void analysisLoop();

  /// Analyses one snapshot. Touches no document: runs unlocked.
  Outcome analyse(const Snapshot &S);

  /// Starts: lineStarts(Text), computed once per document, not per finding.
  json::Object lspDiagnostic(const Diagnostic &D, llvm::StringRef Text,
                             const std::vector<size_t> &Starts);

  static std::string absolute(const std::string &File);

  // -- hover --
  json::Value hover(const json::Object &Params);

  // -- code actions --
  json::Value codeActions(const json::Object &Params);

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

} // namespace tma::lsp
