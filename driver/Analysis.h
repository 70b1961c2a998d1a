// Running the analysis over files: compile commands in, traces out. The CLI
// and the tests share this path, so tests exercise exactly what users run.
#pragma once

#include "driver/PreambleCache.h"
#include "driver/FileFailure.h"
#include "frontend/Action.h"

#include "clang/Tooling/CompilationDatabase.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tma {

/// Compile commands for files given without a database: the user's flags
/// after `--` (or C++17 when there are none) plus the LibTorch headers this
/// machine has, unless the flags' include directories already reach
/// LibTorch (commandReachesLibTorch in driver/Toolchain.h). Sets Error and returns
/// null when LibTorch cannot be found.
std::unique_ptr<clang::tooling::CompilationDatabase>
makeFixedDatabase(const std::vector<std::string> &UserFlags, bool HaveUserFlags,
                  std::string &Error);

/// DB's commands with this machine's LibTorch headers added to each whose
/// include directories reach no LibTorch (the rule of makeFixedDatabase).
std::unique_ptr<clang::tooling::CompilationDatabase>
withDefaultLibTorch(std::unique_ptr<clang::tooling::CompilationDatabase> DB);

/// -p's database (through withDefaultLibTorch): <BuildPath>/compile_commands.json. Null with Error set to
/// one line saying what is wrong: there is none (how to make one), or it is
/// not a valid database (its parse error, not "not found").
std::unique_ptr<clang::tooling::CompilationDatabase>
loadBuildDatabase(const std::string &BuildPath, std::string &Error);

/// Empty when DB has a command for File; else the usage error saying it
/// has none (an empty database, "[]", has none for anything), which -p and
/// a discovered database both report rather than a failed compile.
std::string missingCommandProblem(const clang::tooling::CompilationDatabase &DB,
                                  const std::string &File,
                                  const std::string &DatabaseFile);

struct AnalysisRun {
  std::vector<FileAnalysis> Files;
  /// A file failed to parse or could not be run.
  bool Failed = false;
  /// Each file that was not analysed, in input order, with the reason.
  std::vector<FileFailure> Failures;
  /// Each file left out on purpose (Skipped set; none today, see
  /// driver/FileFailure.h). Not a failure: Failed stays false for them.
  std::vector<FileFailure> Skipped;
  /// Preamble cache entries found, and built by this run.
  unsigned CacheHits = 0;
  unsigned CacheBuilds = 0;
};

/// How analyzeFiles runs. The defaults are the plain path: one file after
/// another, no cache (what the tests use unless they test the cache).
struct RunOptions {
  /// Files analysed in parallel, one ClangTool per file per thread; 0 means
  /// one per core. Reports and diagnostics come back in input order.
  unsigned Jobs = 1;
  /// Use the preamble cache (driver/PreambleCache.h).
  bool UseCache = false;
  /// Where the cache lives; empty means defaultCacheDir().
  std::string CacheDir;
  /// The cache's size limit in bytes (0: none); least recently used
  /// entries are evicted after the run.
  uint64_t CacheMaxBytes = DefaultCacheBytes;
  /// Called after each file, in completion order, from the worker that
  /// finished it (never two at once): files done so far, total, the file.
  std::function<void(size_t Done, size_t Total, const std::string &File)>
      OnFileDone;
  /// Contents to analyse instead of what is on disk, by absolute path (the
  /// language server's unsaved documents). Read through the same file
  /// system as everything else, so the preamble cache sees them too.
  std::map<std::string, std::string> Overlays;
  /// Parse each file with its companion sources (driver/Companions.h), so
  /// calls into modules and helpers defined beside their headers are
  /// followed.
  bool FollowCompanions = true;
  /// --quiet: no notes about the cache or companions. (There is no "N
  /// warnings generated." to leave out: the parse runs with
  /// -Wno-everything; compiler errors and their count always show.)
  bool Quiet = false;
  /// --cuda-available: what torch::cuda::is_available() answers.
  std::optional<bool> CudaAvailable;
};

/// Parses and analyses each file; reports files as named in Files.
/// OnTranslationUnit is never called from two threads at once.
AnalysisRun analyzeFiles(const clang::tooling::CompilationDatabase &DB,
                         const std::vector<std::string> &Files,
                         TranslationUnitCallback OnTranslationUnit = {},
                         const RunOptions &Options = {});

} // namespace tma
