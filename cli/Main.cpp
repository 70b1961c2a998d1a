// tensor-accountant: the command line, shaped like clang-tidy's.
//
//   tensor-accountant [options] <file>... [-- <compiler flags>]
//   tensor-accountant -p <build dir> [options] [<file>...]
//     (no files: every entry of compile_commands.json; --files-from,
//     --shard i/n choose among them)
//
// Compile commands come from, in order: flags after `--`, a compilation
// database (-p), the compilation database found above the file
// (driver/DatabaseDiscovery.h), or, for a newcomer pointing the tool at a
// file, C++17 plus the LibTorch headers found on this machine.
#include "checks/Registry.h"
#include "cli/ChangedLines.h"
#include "cli/Options.h"
#include "cli/FileSelection.h"
#include "cli/TidyFlags.h"
#include "driver/Analysis.h"
#include "driver/Assume.h"
#include "driver/CheckRunner.h"
#include "driver/DatabaseDiscovery.h"
#include "driver/PreambleCache.h"
#include "driver/SourceFiles.h"
#include "driver/Verify.h"
#include "driver/Version.h"
#include "lsp/LspServer.h"
#include "report/Formats.h"
#include "report/HtmlReport.h"
#include "report/Report.h"

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CommonOptionsParser.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

using namespace llvm;
using namespace clang::tooling;
using namespace tma::cli;

namespace {

/// The exit status of a run that skipped files (none are since CUDA
/// sources are analysed: driver/FileFailure.h) and had no other reason to
/// fail: neither "all analysed" (0) nor "a file failed" (1).
constexpr int SkippedStatus = 3;

/// One closing line for a run that skipped files, so that a scan of a whole
/// repository never looks complete when it was not (each file's own line
/// came earlier, among the compiler's output).
void printSkipSummary(raw_ostream &OS, const tma::AnalysisRun &Run,
                      size_t Inputs) {
  if (Run.Skipped.empty())
    return;
  OS << "tensor-accountant: skipped " << Run.Skipped.size() << " of " << Inputs
     << " file" << (Inputs == 1 ? "" : "s")
     << " (exit status " << SkippedStatus << " unless something failed):";
  size_t Shown = 0;
  for (const tma::FileFailure &F : Run.Skipped) {
    if (Shown++ == 5) {
      OS << " and " << Run.Skipped.size() - 5 << " more";
      break;
    }
    OS << " " << F.File;
  }
  OS << "\n";
}

int fail(const Twine &Message) {
  errs() << "tensor-accountant: error: " << Message << "\n";
  return 2;
}

void printCacheStats(raw_ostream &OS, const std::string &Dir, uint64_t MaxBytes,
                     const tma::AnalysisRun *Run) {
  tma::CacheContents C = tma::inspectCache(Dir);
  auto MiB = [](uint64_t B) { return format("%.1f MiB", B / 1048576.0); };
  OS << "preamble cache: " << Dir << "\n";
  OS << "  shared LibTorch entries: " << C.SharedEntries << "\n";
  OS << "  per-file preamble entries: " << C.FileEntries << "\n";
  OS << "  size: " << MiB(C.Bytes) << " of ";
  if (MaxBytes)
    OS << MiB(MaxBytes);
  else
    OS << "no";
  OS << " limit\n";
  if (C.Leftovers)
    OS << "  temporary or lock files: " << C.Leftovers << "\n";
  if (Run)
    OS << "  this run: " << Run->CacheHits << " hit"
       << (Run->CacheHits == 1 ? "" : "s") << ", " << Run->CacheBuilds
       << " built\n";
}

} // namespace

int main(int argc, const char **argv) {
  InitLLVM Init(argc, argv);
  // Split at `--` like clang-tidy: what follows is the compile command.
  std::vector<const char *> ToolArgs;
  std::vector<std::string> CompilerFlags;
  bool SawDashDash = false;
  for (int K = 0; K < argc; ++K) {
    if (!SawDashDash && StringRef(argv[K]) == "--") {
      SawDashDash = true;
      continue;
    }
    if (SawDashDash)
      CompilerFlags.push_back(argv[K]);
    else
      ToolArgs.push_back(argv[K]);
  }
  if (!tma::cli::parseOptions(ToolArgs))
    return 2;
  // Checked before any parsing: "-5" is a mistake, not a limit.
  std::optional<uint64_t> VerifyLimit = tma::parseCacheSize(VerifyMaxBytes);
  if (!VerifyLimit || *VerifyLimit == 0 ||
      *VerifyLimit > uint64_t(std::numeric_limits<int64_t>::max()))
    return fail("--verify-max-bytes wants a positive number of bytes, such as "
                "1073741824 or 1G, not '" +
                VerifyMaxBytes + "'");
  if (!HeaderFilter.empty()) {
    std::string Error;
    if (!Regex(HeaderFilter).isValid(Error))
      return fail("--header-filter: '" + HeaderFilter +
                  "' is not a regular expression: " + Error);
  }
  // Values for symbols (--assume), checked before any parsing too.
  std::vector<tma::AssumeBinding> CommandLineBindings;
  for (const std::string &A : AssumeOption) {
    std::string Error;
    auto Parsed = tma::parseAssumeList(A, Error);
    if (!Parsed)
      return fail("--assume " + Error);
    CommandLineBindings.insert(CommandLineBindings.end(), Parsed->begin(),
                               Parsed->end());
  }
  tma::CheckConfig CommandLineConfig;
  bool HaveCommandLineConfig = !ConfigOption.empty();
  if (HaveCommandLineConfig) {
    std::string Error;
    auto Parsed = tma::parseClangTidyConfig(ConfigOption, Error);
    if (!Parsed)
      return fail("--config: " + Error);
    CommandLineConfig = *Parsed;
    CommandLineConfig.Source = "--config";
    tma::CheckConfig Checked = CommandLineConfig;
    if (!ChecksOption.empty())
      Checked.Checks += "," + ChecksOption;
    std::string Invalid = tma::validateCheckOptions(Checked);
    if (Invalid.empty())
      tma::configBindings(CommandLineConfig, Invalid);
    if (!Invalid.empty())
      return fail(Invalid);
  }
  auto ConfigFor = [&](const std::string &File,
                       std::string &Error) -> tma::CheckConfig {
    tma::CheckConfig C =
        HaveCommandLineConfig ? CommandLineConfig : tma::findConfigFor(File, Error);
    if (!ChecksOption.empty())
      C.Checks += "," + ChecksOption;
    if (Error.empty())
      Error = tma::validateCheckOptions(C);
    if (Error.empty())
      tma::configBindings(C, Error);
    return C;
  };
  if (DumpConfig) {
    std::string Error;
    tma::CheckConfig C = ConfigFor(Files.empty() ? "." : Files.front(), Error);
    if (!Error.empty())
      return fail(Error);
    tma::dumpConfig(outs(), C, WarningsAsErrors,
                    HeaderFilter.getNumOccurrences() ? HeaderFilter
                                                     : C.HeaderFilterRegex);
    return 0;
  }
  // Check globs that enable nothing (a misspelt check) are an error, with
  // clang-tidy's exit status for "no checks enabled".
  auto SelectionProblem = [&](const std::string &File) {
    std::string Error;
    tma::CheckConfig C = ConfigFor(File, Error);
    return Error.empty() ? tma::checkSelectionProblem(C, ChecksOption)
                         : std::string();
  };
  if (ListChecks) {
    std::string Error;
    tma::CheckConfig C = ConfigFor(Files.empty() ? "." : Files.front(), Error);
    if (!Error.empty())
      return fail(Error);
    std::string Problem =
        SelectionProblem(Files.empty() ? "." : Files.front());
    if (!Problem.empty()) {
      errs() << "tensor-accountant: error: " << Problem << "\n";
      return 1;
    }
    // clang-tidy's layout, byte for byte.
    std::vector<std::string> Enabled;
    for (const tma::CheckInfo &Info : tma::checkRegistry())
      if (tma::checkEnabled(C.Checks, Info.Name))
        Enabled.push_back(Info.Name);
    if (Enabled.empty()) {
      errs() << "No checks enabled.\n";
      return 1;
    }
    outs() << "Enabled checks:";
    for (const std::string &Name : Enabled)
      outs() << "\n    " << Name;
    outs() << "\n\n";
    return 0;
  }
  std::string EffectiveCacheDir =
      CacheDir.empty() ? tma::defaultCacheDir() : std::string(CacheDir);
  uint64_t CacheMaxBytes = tma::DefaultCacheBytes;
  if (CacheSize.getNumOccurrences()) {
    auto Size = tma::parseCacheSize(CacheSize);
    if (!Size)
      return fail("--cache-size wants a size such as 500M or 2G (0: no "
                  "limit), not '" +
                  CacheSize + "'");
    CacheMaxBytes = *Size;
  } else if (!NoCache && !EffectiveCacheDir.empty()) {
    std::string Error;
    if (auto Size = tma::configuredCacheSize(EffectiveCacheDir, Error))
      CacheMaxBytes = *Size;
    else if (!Error.empty())
      return fail(Error);
  }
  if (CacheClear && !EffectiveCacheDir.empty()) {
    unsigned Removed = tma::clearCache(EffectiveCacheDir);
    errs() << "tensor-accountant: removed " << Removed << " cache file"
           << (Removed == 1 ? "" : "s") << " from " << EffectiveCacheDir
           << "\n";
  }
  if ((CacheStats || CacheClear) && Files.empty() && BuildPath.empty() &&
      FilesFrom.empty() && !Lsp) {
    if (EffectiveCacheDir.empty())
      return fail("no cache directory ($XDG_CACHE_HOME and $HOME unset); "
                  "use --cache-dir");
    if (CacheStats)
      printCacheStats(outs(), EffectiveCacheDir, CacheMaxBytes, nullptr);
    return 0;
  }
  // --html-out=- is the page on standard output: nothing else may print
  // there (two documents in one stream are neither).
  if (HtmlOut == "-") {
    const char *Other =
        Lsp ? "--lsp (its messages)"
        : VerifyOption != VerifyMode::None || !EmitHarness.empty() ||
                !CompareMeasured.empty()
            ? "--verify (its comparison)"
        : OutputFormat.getNumOccurrences() && OutputFormat != Format::Html
            ? "--format"
            : nullptr;
    if (Other)
      return fail(Twine("--html-out=- writes the page to standard output, "
                        "where ") +
                  Other +
                  " writes too; give --html-out a file name instead");
    OutputFormat = Format::Html;
  } else if (!HtmlOut.empty()) {
    // Before the analysis, which may take minutes: a name that will be
    // refused is refused now (and checked again when the page is written).
    std::string Error;
    if (!tma::htmlTargetReplaceable(HtmlOut, Error))
      return fail("--html-out: " + Error);
  }
  std::optional<bool> CudaAnswer;
  if (CudaAvailable.getNumOccurrences()) {
    std::string V = StringRef(CudaAvailable).lower();
    if (V == "yes" || V == "true" || V == "1")
      CudaAnswer = true;
    else if (V == "no" || V == "false" || V == "0")
      CudaAnswer = false;
    else
      return fail("--cuda-available takes yes or no, not '" + CudaAvailable + "'");
  }
  if (Lsp) {
    if (!Files.empty())
      return fail("--lsp takes no files: the editor sends them");
    tma::LspOptions L;
    L.BuildPath = BuildPath;
    L.CompilerFlags = CompilerFlags;
    L.HaveCompilerFlags = SawDashDash;
    L.ConfigFor = ConfigFor;
    L.ErrorChecks = WarningsAsErrors;
    L.Run.UseCache = !NoCache;
    L.Run.FollowCompanions = !NoCompanions;
    L.Run.CudaAvailable = CudaAnswer;
    L.Run.CacheDir = CacheDir;
    L.Run.CacheMaxBytes = CacheMaxBytes;
    return tma::runLspServer(L, std::cin, outs(), errs());
  }
  // What to analyse (cli/FileSelection.h).
  std::vector<std::string> Inputs(Files.begin(), Files.end());
  if (!FilesFrom.empty()) {
    std::string Error;
    if (!tma::readFileList(FilesFrom, Inputs, Error))
      return fail(Error);
  }
  std::optional<std::pair<unsigned, unsigned>> ShardOf;
  if (!Shard.empty() && !(ShardOf = tma::parseShard(Shard)))
    return fail("--shard wants i/n with 1 <= i <= n, e.g. 2/4, not '" + Shard +
                "'");
  bool WholeDatabase =
      Inputs.empty() && FilesFrom.empty() && !BuildPath.empty();
  if (Inputs.empty() && !WholeDatabase && FilesFrom.empty())
    return fail("no input files; usage: tensor-accountant [options] <file>... "
                "[-- <compiler flags>], or -p <build dir> for all its files");
  for (const std::string &F : Inputs) {
    if (!sys::fs::exists(F))
      return fail("no such file: '" + F + "'");
    if (sys::fs::is_directory(F))
      return fail("'" + F + "' is a directory, not a source file");
    if (!tma::isCxxSourceName(F) && BuildPath.empty() &&
        !llvm::is_contained(CompilerFlags, "-x"))
      return fail("'" + F + "' is not a C or C++ file (by its extension); "
                  "to analyse it anyway, give its language: -- -x c++ <flags>");
  }

  std::unique_ptr<CompilationDatabase> DB;
  if (!BuildPath.empty()) {
    if (SawDashDash)
      return fail("give either -p <build dir> or flags after --, not both");
    std::string Error;
    DB = tma::loadBuildDatabase(BuildPath, Error);
    if (!DB)
      return fail(Error);
    SmallString<256> DatabaseFile(BuildPath);
    sys::path::append(DatabaseFile, "compile_commands.json");
    for (const std::string &F : Inputs) {
      std::string Problem =
          tma::missingCommandProblem(*DB, F, std::string(DatabaseFile));
      if (!Problem.empty())
        return fail(Problem);
    }
  } else if (SawDashDash) {
    std::string Error;
    DB = tma::makeFixedDatabase(CompilerFlags, SawDashDash, Error);
    if (!DB)
      return fail(Error);
  } else {
    // Each file's compile_commands.json found above it, as clang-tidy and
    // clangd find it (driver/DatabaseDiscovery.h), else the default flags.
    std::string Error;
    std::map<std::string, std::vector<std::string>> UsedBy;
    DB = tma::discoverDatabases(Inputs, Error, &UsedBy);
    if (!DB)
      return fail(Error);
    if (Stats)
      for (const auto &KV : UsedBy)
        errs() << "tensor-accountant: compile commands for " << KV.second.size()
               << " file" << (KV.second.size() == 1 ? "" : "s") << " from "
               << (KV.first.empty() ? std::string("the default flags (C++17 and LibTorch; "
                                      "no compile database above them)")
                                    : "'" + KV.first + "'")
               << "\n";
  }

  if (WholeDatabase) {
    Inputs = tma::databaseFiles(*DB);
    if (Inputs.empty())
      return fail("the compilation database in '" + BuildPath +
                  "' lists no files");
  }
  Inputs = tma::uniqueFiles(Inputs);
  if (ShardOf)
    Inputs = tma::shardOf(Inputs, ShardOf->first, ShardOf->second);
  // Before the parse: a misspelt --checks fails in a moment, not after it.
  if (!Inputs.empty()) {
    std::string Problem = SelectionProblem(Inputs.front());
    if (!Problem.empty()) {
      errs() << "tensor-accountant: error: " << Problem << "\n";
      return 1;
    }
  }
  // --extra-arg-before and --extra-arg, on every command (flags after --
  // and -p's alike), where clang-tidy puts them: after the compiler, and
  // at the end.
  if (!ExtraArgBefore.empty() || !ExtraArg.empty()) {
    auto Adjusting =
        std::make_unique<ArgumentsAdjustingCompilations>(std::move(DB));
    Adjusting->appendArgumentsAdjuster(getInsertArgumentAdjuster(
        CommandLineArguments(ExtraArgBefore.begin(), ExtraArgBefore.end()),
        ArgumentInsertPosition::BEGIN));
    Adjusting->appendArgumentsAdjuster(getInsertArgumentAdjuster(
        CommandLineArguments(ExtraArg.begin(), ExtraArg.end()),
        ArgumentInsertPosition::END));
    DB = std::move(Adjusting);
  }

  std::optional<tma::ChangedLines> Changed;
  if (ChangedLinesOnly.getNumOccurrences()) {
    std::string Error;
    Changed = tma::ChangedLines::load(ChangedLinesOnly, Error);
    if (!Changed)
      return fail(Error);
  }

  tma::RunOptions RunOpts;
  RunOpts.CudaAvailable = CudaAnswer;
  RunOpts.Jobs = Jobs;
  RunOpts.Quiet = Quiet;
  RunOpts.UseCache = !NoCache;
  RunOpts.FollowCompanions = !NoCompanions;
  RunOpts.CacheDir = CacheDir;
  RunOpts.CacheMaxBytes = CacheMaxBytes;
  // A progress line, on a terminal only: logs and pipes get the report.
  if (Inputs.size() > 1 && !Quiet && sys::Process::StandardErrIsDisplayed())
    RunOpts.OnFileDone = [](size_t Done, size_t Total, const std::string &F) {
      errs() << "\r[" << Done << "/" << Total << "] " << F << "\x1b[K";
      if (Done == Total)
        errs() << "\r\x1b[K";
      errs().flush();
    };
  tma::AnalysisRun Run = tma::analyzeFiles(*DB, Inputs, {}, RunOpts);
  if (CacheStats && !NoCache)
    printCacheStats(errs(), EffectiveCacheDir, CacheMaxBytes, &Run);
  if (Stats) {
    size_t Functions = 0, Statements = 0;
    double Seconds = 0;
    for (const tma::FileAnalysis &FA : Run.Files) {
      Functions += FA.Traces.size();
      for (const tma::FunctionTrace &T : FA.Traces)
        Statements += T.Statements.size();
      Seconds += FA.AnalysisSeconds;
    }
    errs() << "tensor-accountant: analysed " << Functions << " functions, "
           << Statements << " statements in " << format("%.4f", Seconds)
           << " s of analysis (" << format("%.0f", Seconds > 0 ? Statements / Seconds : 0.0)
           << " statements/s), not counting parsing\n";
  }
  if (Force && EmitHarness.empty())
    return fail("--force works only with --emit-harness");
  if (VerifyOption != VerifyMode::None || !EmitHarness.empty() ||
      !CompareMeasured.empty()) {
    tma::VerifyOptions VO;
    VO.Mode = VerifyOption == VerifyMode::CPU    ? tma::verify::Mode::CPU
              : VerifyOption == VerifyMode::CUDA ? tma::verify::Mode::CUDA
                                                 : tma::verify::Mode::Meta;
    VO.EmitDir = EmitHarness;
    VO.Force = Force;
    VO.JSON = OutputFormat == Format::JSON;
    VO.MeasuredFile = CompareMeasured;
    VO.TimeoutSeconds = VerifyTimeout;
    VO.MaxBytes = static_cast<int64_t>(*VerifyLimit);
    for (const tma::FileAnalysis &FA : Run.Files)
      if (FA.CompileErrors)
        errs() << "tensor-accountant: error: '" << FA.File
               << "' did not compile; fix the errors above\n";
    // The user's values (the config's, then --assume) are the inputs of
    // the functions with parameters that they bind (docs/verify.md).
    for (tma::FileAnalysis &FA : Run.Files) {
      if (FA.CompileErrors)
        continue;
      std::string ConfigError;
      tma::CheckConfig Config = ConfigFor(FA.File, ConfigError);
      std::vector<tma::AssumeBinding> Bindings =
          ConfigError.empty() ? tma::configBindings(Config, ConfigError)
                                    .value_or(std::vector<tma::AssumeBinding>())
                              : std::vector<tma::AssumeBinding>();
      Bindings.insert(Bindings.end(), CommandLineBindings.begin(),
                      CommandLineBindings.end());
      tma::applyBindings(FA.Traces, Bindings);
    }
    VO.PredictionReport = [](const std::vector<tma::FunctionTrace> &Traces) {
      return tma::toJSON(Traces, {});
    };
    int RC = tma::runVerification(Run.Files, VO, outs(), errs());
    printSkipSummary(errs(), Run, Inputs.size());
    if (Run.Failed)
      return std::max(RC, 1);
    return RC == 0 && !Run.Skipped.empty() ? SkippedStatus : RC;
  }

  std::vector<tma::FunctionTrace> Traces;
  std::vector<tma::Diagnostic> Diagnostics;
  std::string DiagnosticText;
  raw_string_ostream DiagOS(DiagnosticText);
  bool ConfigFailed = false;
  bool FixFailed = false;
  std::vector<tma::FileFailure> Failures = Run.Failures;
  // Every format lists skipped files beside failed ones, marked skipped.
  Failures.insert(Failures.end(), Run.Skipped.begin(), Run.Skipped.end());
  std::set<std::string> FailedFiles;
  std::vector<tma::ExportedFile> Exported;
  // Each binding (where it came from, then its text) and how many functions
  // it bound a symbol in, over all files.
  std::map<std::string, size_t> BindingMatches;
  for (const tma::FileFailure &F : Run.Failures)
    FailedFiles.insert(F.File);
  for (tma::FileAnalysis &FA : Run.Files) {
    if (FA.CompileErrors) {
      errs() << "tensor-accountant: error: '" << FA.File
             << "' did not compile; fix the errors above\n";
      continue;
    }
    // A parse under a command the compiler refused (an unknown flag) is no
    // analysis of the file as it is built: reported as failed, not used.
    if (FailedFiles.count(FA.File))
      continue;
    // The bytes that were analysed, not the file again (it may have
    // changed since): the findings' offsets are into these.
    const std::string &Text = FA.Source;
    std::string ConfigError;
    tma::CheckConfig Config = ConfigFor(FA.File, ConfigError);
    if (ConfigError.empty())
      ConfigError = tma::checkSelectionProblem(Config, ChecksOption);
    if (!ConfigError.empty()) {
      errs() << "tensor-accountant: error: " << ConfigError << "\n";
      ConfigFailed = true;
      Failures.push_back({FA.File, "its checks' configuration is invalid: " +
                                       ConfigError});
      continue;
    }
    // The config's values, then the command line's (the last one wins).
    std::vector<tma::AssumeBinding> Bindings =
        tma::configBindings(Config, ConfigError).value_or(
            std::vector<tma::AssumeBinding>());
    std::vector<std::string> From(Bindings.size(), Config.Source);
    Bindings.insert(Bindings.end(), CommandLineBindings.begin(),
                    CommandLineBindings.end());
    From.resize(Bindings.size(), "--assume");
    std::vector<size_t> Matched = tma::applyBindings(FA.Traces, Bindings);
    for (size_t I = 0; I < Bindings.size(); ++I)
      BindingMatches[From[I] + "\n" + Bindings[I].Text] += Matched[I];
    tma::warnViolatedBindings(errs(), FA.Traces);
    tma::dropRepeatedExpansions(FA.Traces);
    Traces.insert(Traces.end(), FA.Traces.begin(), FA.Traces.end());
    std::vector<tma::Diagnostic> Found = tma::runChecks(FA.Traces, Config, Text);
    if (Changed)
      Found = Changed->filter(Found);
    tma::printDiagnostics(DiagOS, Found, Text, WarningsAsErrors);
    // The edits --fix applies are the ones --export-fixes exports.
    std::vector<bool> FixAccepted;
    unsigned Applied = 0;
    std::string Fixed;
    if (Fix || !ExportFixes.empty())
      Fixed = tma::applyFixes(Text, Found, Applied, &FixAccepted);
    if (!ExportFixes.empty()) {
      tma::ExportedFile E;
      SmallString<256> Abs(FA.File);
      sys::fs::make_absolute(Abs);
      E.Path = std::string(Abs);
      std::vector<CompileCommand> Commands = DB->getCompileCommands(Abs);
      SmallString<256> Here;
      sys::fs::current_path(Here);
      E.BuildDirectory =
          Commands.empty() ? std::string(Here) : Commands.front().Directory;
      E.Source = Text;
      E.Diagnostics = Found;
      E.FixesExported = FixAccepted;
      for (const tma::Diagnostic &D : Found)
        E.AsError.push_back(!WarningsAsErrors.empty() &&
                            tma::checkEnabled(WarningsAsErrors, D.Check));
      Exported.push_back(std::move(E));
    }
    if (Fix && !Found.empty()) {
      if (Applied > 0) {
        std::string Error;
        switch (tma::writeFixedSource(FA.File, Text, Fixed, Error)) {
        case tma::FixWrite::Written:
          errs() << "tensor-accountant: applied " << Applied << " fix-it edit"
                 << (Applied == 1 ? "" : "s") << " to " << FA.File << "\n";
          break;
        case tma::FixWrite::ChangedSinceAnalysis:
          errs() << "tensor-accountant: error: '" << FA.File
                 << "' changed on disk while it was analysed; its " << Applied
                 << " fix-it edit" << (Applied == 1 ? " was" : "s were")
                 << " not applied (run again on the new contents)\n";
          FixFailed = true;
          break;
        case tma::FixWrite::Failed:
          errs() << "tensor-accountant: error: " << Error << "; its "
                 << Applied << " fix-it edit"
                 << (Applied == 1 ? " was" : "s were") << " not applied\n";
          FixFailed = true;
          break;
        }
      }
    }
    Diagnostics.insert(Diagnostics.end(), Found.begin(), Found.end());
  }
  DiagOS.flush();
  // A value for a symbol no analysed function has is most likely a typo.
  for (const auto &KV : BindingMatches)
    if (KV.second == 0) {
      StringRef From, Text;
      std::tie(From, Text) = StringRef(KV.first).split('\n');
      errs() << "tensor-accountant: warning: " << From
             << (From == "--assume" ? " " : ": tensor-accountant.Assume: ")
             << Text << " names no symbol of any analysed function\n";
    }
  bool CompileErrorsShown = false;
  for (const tma::FileAnalysis &FA : Run.Files)
    CompileErrorsShown |= FA.CompileErrors;
  if (Run.Failed && !CompileErrorsShown)
    errs() << "tensor-accountant: error: the compile command failed (see the "
              "errors above)\n";
  if (!ExportFixes.empty()) {
    std::error_code EC;
    raw_fd_ostream OS(ExportFixes, EC, sys::fs::OF_TextWithCRLF);
    if (!EC) {
      tma::writeExportFixes(OS, Exported);
      OS.close();
      EC = OS.error();
    }
    if (EC)
      return fail("--export-fixes: cannot write '" + ExportFixes +
                  "': " + EC.message());
  }
  tma::FormatOptions FormatOpts;
  FormatOpts.ErrorChecks = WarningsAsErrors;
  FormatOpts.HtmlURL = HtmlURL;
  if (!HtmlOut.empty() && HtmlOut != "-") {
    std::string Html, Error;
    raw_string_ostream HtmlOS(Html);
    tma::printHtml(HtmlOS, Traces, Diagnostics, FormatOpts);
    HtmlOS.flush();
    if (!tma::writeHtmlFile(HtmlOut, Html, Error))
      return fail("--html-out: " + Error);
  }
  if (OutputFormat == Format::Html) {
    tma::printHtml(outs(), Traces, Diagnostics, FormatOpts);
  } else if (OutputFormat == Format::Sarif) {
    outs() << formatv("{0:2}", tma::toSarif(Diagnostics, FormatOpts, Failures))
           << "\n";
  } else if (OutputFormat == Format::Github) {
    tma::printGithub(outs(), Diagnostics, FormatOpts, Failures);
  } else if (OutputFormat == Format::Markdown) {
    tma::printMarkdown(outs(), Traces, Diagnostics, FormatOpts, Failures);
  } else if (OutputFormat == Format::JSON) {
    outs() << formatv("{0:2}", tma::toJSON(Traces, Diagnostics, Failures))
           << "\n";
  } else {
    if (OutputFormat == Format::Table) {
      tma::printTable(outs(), Traces);
      if (!DiagnosticText.empty())
        outs() << "\n";
    }
    outs() << DiagnosticText;
  }
  // Findings of --warnings-as-errors checks (printed as errors).
  size_t ErrorFindings = 0;
  if (!WarningsAsErrors.empty())
    for (const tma::Diagnostic &D : Diagnostics)
      ErrorFindings += tma::checkEnabled(WarningsAsErrors, D.Check);
  bool WarningIsError =
      FailOnOption != FailOn::None &&
      (ErrorFindings > 0 ||
       (FailOnOption == FailOn::Warning && !Diagnostics.empty()));
  // The findings first, then the summary, as clang-tidy prints them (the
  // findings are buffered on stdout, the summary is not).
  outs().flush();
  if (WarningIsError && !Quiet) {
    if (ErrorFindings > 0)
      errs() << ErrorFindings << " warning" << (ErrorFindings == 1 ? "" : "s")
             << " treated as error" << (ErrorFindings == 1 ? "" : "s")
             << "\n";
    if (FailOnOption == FailOn::Warning)
      errs() << "tensor-accountant: error: " << Diagnostics.size()
             << " finding" << (Diagnostics.size() == 1 ? "" : "s")
             << " and --fail-on=warning\n";
  }
  printSkipSummary(errs(), Run, Inputs.size());
  if (Run.Failed || ConfigFailed || FixFailed || WarningIsError)
    return 1;
  return Run.Skipped.empty() ? 0 : SkippedStatus;
}
