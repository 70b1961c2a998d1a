#include "cli/Options.h"
#include "cli/TidyFlags.h"
#include "driver/Version.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace tma::cli {

namespace {
cl::OptionCategory Category("tensor-accountant options");
} // namespace


// After the options in --help, and the rest of the man page (built from
// --help by scripts/manpage-from-help.py: keep the section headings).
cl::extrahelp MoreHelp(R"(
USAGE FORMS:
  tensor-accountant [options] <file>... [-- <compiler flags>]
  tensor-accountant -p <build dir> [options] <file>...
  tensor-accountant --lsp [options] [-- <compiler flags>]

  Compile commands come from the flags after --, else from -p's
  compile_commands.json, else from the first compile_commands.json (or
  compile_flags.txt) found in the file's directory or one above it, or in
  a build/ subdirectory of one of those (as clang-tidy and clangd find
  it), else the file is compiled as C++17. The LibTorch
  headers found in $Torch_DIR, $CMAKE_PREFIX_PATH, /usr/include (Debian's
  libtorch-dev) or an installed PyTorch are added to each command whose own
  include directories (and $CPATH, $CPLUS_INCLUDE_PATH) hold no
  torch/torch.h; --version says which.

EXIT STATUS:
  0  no file failed and no finding matched --fail-on
  1  a file did not compile, a finding matched --fail-on (warning: any
     finding; error: those of --warnings-as-errors checks), the check
     globs enable no check or name one that does not exist (clang-tidy's
     "no checks enabled"), --list-checks lists none, --fix could
     not write a file (it changed on disk while it was analysed, or it
     cannot be written), or --verify measured a value that differs from
     the prediction
  2  a usage error (an unknown option, a missing file, no compile
     database, no LibTorch headers), or the --verify program could not
     be built or run
  3  nothing above, but files were skipped; each is named on stderr (no
     file is skipped today: CUDA sources are analysed)

ENVIRONMENT:
  Torch_DIR, CMAKE_PREFIX_PATH  where to look for LibTorch
  CPATH, CPLUS_INCLUDE_PATH     include directories; one holding
                                torch/torch.h keeps the default LibTorch out
  XDG_CACHE_HOME                the preamble cache is under it (else ~/.cache)
  CXX                           the compiler --verify builds with (else g++)
  CUDA_PATH, CUDA_HOME          the CUDA Toolkit for .cu files (else
                                /usr/local/cuda*; none: the tool's own CUDA
                                declarations)

SEE ALSO:
  clang-tidy(1); README.md and docs/ in <prefix>/share/doc/tensor-accountant
  (/usr for the Debian package) or in the source tree: a page per check, the
  report schema, verification, and the pre-commit, CI and editor guides.
)");

cl::list<std::string> Files(cl::Positional, cl::desc("<file>..."),
                            cl::cat(Category));
cl::opt<std::string> BuildPath("p", cl::desc("Build directory containing "
                                             "compile_commands.json"),
                               cl::value_desc("build dir"), cl::cat(Category));
cl::opt<Format> OutputFormat(
    "format", cl::desc("Output format"),
    cl::values(clEnumValN(Format::Table, "table",
                          "the seed's table per function, then the "
                          "checks' warnings (default)"),
               clEnumValN(Format::JSON, "json",
                          "the JSON report (docs/report-schema.md)"),
               clEnumValN(Format::Diagnostics, "diagnostics",
                          "only the checks' warnings, as clang-tidy prints "
                          "them"),
               clEnumValN(Format::Sarif, "sarif",
                          "SARIF 2.1.0 for code scanning"),
               clEnumValN(Format::Github, "github",
                          "GitHub Actions workflow commands (annotations)"),
               clEnumValN(Format::Markdown, "markdown",
                          "a pull-request comment: worst copies, counts"),
               clEnumValN(Format::Html, "html",
                          "one self-contained HTML page: a live-storage "
                          "timeline per function (docs/html-report.md)")),
    cl::init(Format::Table), cl::cat(Category));
cl::opt<std::string> HtmlOut(
    "html-out",
    cl::desc("Also write the HTML report to this file (replaces only a "
             "report this tool wrote); '-': standard output, instead of "
             "the table"),
    cl::value_desc("file"), cl::cat(Category));
cl::opt<std::string> HtmlURL(
    "html-url",
    cl::desc("Where CI publishes the HTML report: --format=markdown links "
             "to it"),
    cl::value_desc("url"), cl::cat(Category));
// Integrations (docs/integrations/): the language server, pre-commit and CI.
cl::opt<bool> Lsp("lsp",
                  cl::desc("Run as a language server on stdin/stdout "
                           "(docs/integrations/editors.md)"),
                  cl::cat(Category));
cl::opt<std::string> ChangedLinesOnly(
    "changed-lines-only",
    cl::desc("Report only diagnostics on lines changed by a unified diff "
             "(a file, or '-' for stdin), by 'git diff <revision>', or, "
             "for 'staged', by 'git diff --cached'"),
    cl::value_desc("revision|staged|diff file|-"), cl::cat(Category));
cl::opt<FailOn> FailOnOption(
    "fail-on", cl::desc("Which findings make the exit status 1"),
    cl::values(clEnumValN(FailOn::Error, "error",
                          "errors only: warnings of --warnings-as-errors "
                          "checks (default)"),
               clEnumValN(FailOn::Warning, "warning", "any finding"),
               clEnumValN(FailOn::None, "none",
                          "no finding (files that fail to analyse still do)")),
    cl::init(FailOn::Error), cl::cat(Category));
cl::opt<std::string> ChecksOption(
    "checks",
    cl::desc("Check globs, as clang-tidy's -checks (added to the "
             ".clang-tidy Checks), e.g. '-*,torch-reshape-copy'"),
    cl::cat(Category));
cl::opt<std::string> ConfigOption(
    "config",
    cl::desc("A .clang-tidy configuration as YAML text; replaces the "
             "nearest .clang-tidy file"),
    cl::cat(Category));
cl::list<std::string> AssumeOption(
    "assume",
    cl::desc("Give a symbol a value, so every formula also has a number: "
             "SYM=VALUE, SYM as the report writes it (a parameter "
             "n_heads, a size x.size(1), the table's name B); repeatable; "
             "after the config's tensor-accountant.Assume "
             "(docs/symbolic.md)"),
    cl::value_desc("SYM=VALUE"), cl::cat(Category));
cl::opt<bool> ListChecks("list-checks",
                         cl::desc("List the enabled checks and exit"),
                         cl::cat(Category));
cl::opt<VerifyMode> VerifyOption(
    "verify",
    cl::desc("Compile the analysed functions against real LibTorch, run "
             "them, and compare every prediction (the program runs in a "
             "temporary directory with a time limit)"),
    cl::ValueOptional,
    cl::values(clEnumValN(VerifyMode::Meta, "", "on the meta device (default)"),
               clEnumValN(VerifyMode::Meta, "meta",
                          "meta device: exact shapes and sharing, no memory"),
               clEnumValN(VerifyMode::CPU, "cpu",
                          "CPU with a counting allocator: real allocations"),
               clEnumValN(VerifyMode::CUDA, "cuda",
                          "CUDA caching allocator statistics")),
    cl::init(VerifyMode::None), cl::cat(Category));
cl::opt<std::string> EmitHarness(
    "emit-harness",
    cl::desc("With --verify: write the verification program, a "
             "CMakeLists.txt and the predictions into this directory "
             "instead of running it"),
    cl::value_desc("dir"), cl::cat(Category));
cl::opt<std::string> CompareMeasured(
    "compare-measured",
    cl::desc("Compare the predictions with a verification program's output "
             "(from --emit-harness, run elsewhere)"),
    cl::value_desc("file"), cl::cat(Category));
cl::opt<bool> Force("force",
                    cl::desc("With --emit-harness: write into a non-empty "
                             "directory, replacing only the files an earlier "
                             "--emit-harness wrote there"),
                    cl::cat(Category));
cl::opt<unsigned> VerifyTimeout("verify-timeout",
                                cl::desc("Seconds each verified function may "
                                         "run before it is killed (default 60)"),
                                cl::init(60), cl::cat(Category));
cl::opt<std::string> VerifyMaxBytes(
    "verify-max-bytes",
    cl::desc("On cpu and cuda, skip functions whose predicted peak is over "
             "this many bytes, and stop any run on the CPU that would hold "
             "more: a positive count, or with K, M, G (default 1073741824)"),
    cl::init("1073741824"), cl::cat(Category));
cl::opt<bool> Fix("fix", cl::desc("Apply the checks' fix-its to the files"),
                  cl::cat(Category));
// clang-tidy's own options, with clang-tidy's meaning, so that a
// clang-tidy command line runs unchanged (cli/TidyFlags.h).
cl::opt<std::string> ExportFixes(
    "export-fixes",
    cl::desc("Write the fix-its --fix would apply to this file as "
             "clang-tidy's YAML, for clang-apply-replacements"),
    cl::value_desc("file"), cl::cat(Category));
cl::list<std::string> ExtraArg(
    "extra-arg",
    cl::desc("Append this argument to each compile command (repeatable)"),
    cl::value_desc("arg"), cl::cat(Category));
cl::list<std::string> ExtraArgBefore(
    "extra-arg-before",
    cl::desc("Put this argument first in each compile command, after the "
             "compiler (repeatable)"),
    cl::value_desc("arg"), cl::cat(Category));
cl::opt<std::string> HeaderFilter(
    "header-filter",
    cl::desc("Show findings in headers matching this regular expression "
             "(the analysed file's always; replaces the config's "
             "HeaderFilterRegex)"),
    cl::value_desc("regex"), cl::cat(Category));
cl::opt<bool> Quiet("quiet",
                    cl::desc("Leave out the summary lines (\"N warnings "
                             "treated as errors\", notes, progress)"),
                    cl::cat(Category));
cl::opt<bool> DumpConfig(
    "dump-config",
    cl::desc("Print the effective configuration as YAML (a .clang-tidy) "
             "and exit"),
    cl::cat(Category));
cl::opt<std::string> WarningsAsErrors(
    "warnings-as-errors",
    cl::desc("Check globs whose warnings make the exit status 1"),
    cl::cat(Category));
// cl::Prefix: make and ninja users type -j2; -j 2 and -j=2 work as well.
cl::opt<unsigned> Jobs("j",
                       cl::desc("Files to analyse in parallel (default: "
                                "one per core)"),
                       cl::Prefix, cl::value_desc("N"), cl::init(0),
                       cl::cat(Category));
cl::opt<std::string> CacheDir(
    "cache-dir", cl::desc("Where parsed preambles are kept (default: "
                          "$XDG_CACHE_HOME/tensor-accountant)"),
    cl::value_desc("dir"), cl::cat(Category));
cl::opt<bool> Stats("analysis-stats",
                    cl::desc("Print to stderr how many functions and "
                             "statements were analysed and how long it took"),
                    cl::cat(Category));
cl::opt<std::string> FilesFrom(
    "files-from",
    cl::desc("Also analyse the files listed in this file, one per line "
             "('-': standard input), e.g. a CI job's changed files"),
    cl::value_desc("file"), cl::cat(Category));
cl::opt<std::string> Shard(
    "shard",
    cl::desc("Analyse only shard i of n of the files (sorted; every n-th "
             "from the i-th), for a CI matrix: each file is in exactly one "
             "shard"),
    cl::value_desc("i/n"), cl::cat(Category));
cl::opt<std::string> CacheSize(
    "cache-size",
    cl::desc("Size limit of the preamble cache, e.g. 500M or 2G; least "
             "recently used entries are evicted past it (0: no limit; "
             "default: max_size in <cache dir>/tensor-accountant.conf, else "
             "512M)"),
    cl::value_desc("size"), cl::cat(Category));
cl::opt<bool> CacheStats(
    "cache-stats",
    cl::desc("Print what the preamble cache holds; with files, after the "
             "run and with its hits and builds, to stderr"),
    cl::cat(Category));
cl::opt<bool> CacheClear(
    "cache-clear",
    cl::desc("Remove every preamble cache entry first (without files: "
             "only that)"),
    cl::cat(Category));
cl::opt<bool> NoCache("no-cache",
                      cl::desc("Parse every file from scratch; neither read "
                               "nor write the preamble cache"),
                      cl::cat(Category));

cl::opt<std::string> CudaAvailable(
    "cuda-available",
    cl::desc("What torch::cuda::is_available() answers in the analysis: yes "
             "or no (default: not known, so a device chosen by it is not "
             "known); the report states the assumption"),
    cl::value_desc("yes|no"), cl::cat(Category));

cl::opt<bool> NoCompanions(
    "no-companions",
    cl::desc("Analyse each file alone, without the companion sources of the "
             "project headers it includes (neural_net.h -> neural_net.cpp), "
             "so calls into them are not followed"),
    cl::cat(Category));

bool parseOptions(const std::vector<const char *> &ToolArgs) {
  cl::HideUnrelatedOptions(Category);
  cl::SetVersionPrinter([](raw_ostream &OS) { tma::printVersion(OS); });
  // Every argument names an option before LLVM's parser sees them: it
  // would read an unknown --header-flter as the single-letter -h (help,
  // exit 0) and suggest any option however far it is.
  {
    std::vector<std::string> Visible;
    for (auto &KV : cl::getRegisteredOptions())
      if (KV.second->getOptionHiddenFlag() == cl::NotHidden)
        Visible.push_back(KV.getKey().str());
    std::string Unknown = tma::unknownOptionError(ToolArgs, Visible);
    if (!Unknown.empty()) {
      errs() << "tensor-accountant: error: " << Unknown << "\n";
      return false;
    }
  }
  if (!cl::ParseCommandLineOptions(
          static_cast<int>(ToolArgs.size()), ToolArgs.data(),
          "Tensor Memory Accountant: shapes, dtypes, storage bytes, views and "
          "copies of every LibTorch tensor in a C++ function.\n",
          &errs()))
    return false;
  return true;
}

} // namespace tma::cli
