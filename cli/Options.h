// The command line's options (llvm::cl, one category), their --help text
// and reading them. Main.cpp acts on them; the options themselves are
// globals because llvm::cl registers each one with its parser when it is
// constructed.
#pragma once

#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace tma::cli {

// What to analyse, and how to report it.
extern llvm::cl::list<std::string> Files;
extern llvm::cl::opt<std::string> BuildPath;
enum class Format { Table, JSON, Diagnostics, Sarif, Github, Markdown, Html };
extern llvm::cl::opt<Format> OutputFormat;
extern llvm::cl::opt<std::string> HtmlOut;
extern llvm::cl::opt<std::string> HtmlURL;

// Integrations (docs/integrations/): the language server, pre-commit and CI.
extern llvm::cl::opt<bool> Lsp;
extern llvm::cl::opt<std::string> ChangedLinesOnly;
enum class FailOn { Error, Warning, None };
extern llvm::cl::opt<FailOn> FailOnOption;

// The checks and the symbols' values.
extern llvm::cl::opt<std::string> ChecksOption;
extern llvm::cl::opt<std::string> ConfigOption;
extern llvm::cl::list<std::string> AssumeOption;
extern llvm::cl::opt<bool> ListChecks;

// --verify and its relatives.
enum class VerifyMode { None, Meta, CPU, CUDA };
extern llvm::cl::opt<VerifyMode> VerifyOption;
extern llvm::cl::opt<std::string> EmitHarness;
extern llvm::cl::opt<std::string> CompareMeasured;
extern llvm::cl::opt<bool> Force;
extern llvm::cl::opt<unsigned> VerifyTimeout;
extern llvm::cl::opt<std::string> VerifyMaxBytes;

// clang-tidy's own options, with clang-tidy's meaning (cli/TidyFlags.h).
extern llvm::cl::opt<bool> Fix;
extern llvm::cl::opt<std::string> ExportFixes;
extern llvm::cl::list<std::string> ExtraArg;
extern llvm::cl::list<std::string> ExtraArgBefore;
extern llvm::cl::opt<std::string> HeaderFilter;
extern llvm::cl::opt<bool> Quiet;
extern llvm::cl::opt<bool> DumpConfig;
extern llvm::cl::opt<std::string> WarningsAsErrors;

// Running: parallel jobs, the file list, the preamble cache.
extern llvm::cl::opt<unsigned> Jobs;
extern llvm::cl::opt<std::string> CacheDir;
extern llvm::cl::opt<bool> Stats;
extern llvm::cl::opt<std::string> FilesFrom;
extern llvm::cl::opt<std::string> Shard;
extern llvm::cl::opt<std::string> CacheSize;
extern llvm::cl::opt<bool> CacheStats;
extern llvm::cl::opt<bool> CacheClear;
extern llvm::cl::opt<bool> NoCache;
extern llvm::cl::opt<std::string> CudaAvailable;
extern llvm::cl::opt<bool> NoCompanions;

/// Reads the tool's arguments (those before `--`, the program name first)
/// into the options above; --help and --version print and exit here. False
/// after a usage error, which it has printed: the exit status is then 2.
bool parseOptions(const std::vector<const char *> &ToolArgs);

} // namespace tma::cli
