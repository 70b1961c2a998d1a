// tensor-accountant: the command line, shaped like clang-tidy's.
//
//   tensor-accountant [options] <file>... [-- <compiler flags>]
//   tensor-accountant -p <build dir> [options] <file>...
//
// Compile commands come from, in order: flags after `--`, a compilation
// database (-p), or, for a newcomer pointing the tool at a file, C++17 plus
// the LibTorch headers found on this machine.
#include "driver/Analysis.h"
#include "driver/Report.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

using namespace llvm;
using namespace clang::tooling;

namespace {

cl::OptionCategory Category("tensor-accountant options");

cl::list<std::string> Files(cl::Positional, cl::desc("<file>..."),
                            cl::cat(Category));
cl::opt<std::string> BuildPath("p", cl::desc("Build directory containing "
                                             "compile_commands.json"),
                               cl::value_desc("build dir"), cl::cat(Category));
enum class Format { Table, JSON };
cl::opt<Format> OutputFormat(
    "format", cl::desc("Output format"),
    cl::values(clEnumValN(Format::Table, "table",
                          "the seed's table per function (default)"),
               clEnumValN(Format::JSON, "json",
                          "the JSON report (docs/report-schema.md)")),
    cl::init(Format::Table), cl::cat(Category));

int fail(const Twine &Message) {
  errs() << "tensor-accountant: error: " << Message << "\n";
  return 2;
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
  cl::HideUnrelatedOptions(Category);
  cl::SetVersionPrinter([](raw_ostream &OS) {
    OS << "tensor-accountant 0.1 (Clang 16)\n";
  });
  if (!cl::ParseCommandLineOptions(
          static_cast<int>(ToolArgs.size()), ToolArgs.data(),
          "Tensor Memory Accountant: shapes, dtypes, storage bytes, views and "
          "copies of every LibTorch tensor in a C++ function.\n",
          &errs()))
    return 2;
  if (Files.empty())
    return fail("no input files; usage: tensor-accountant [options] <file>... "
                "[-- <compiler flags>]");
  for (const std::string &F : Files) {
    if (!sys::fs::exists(F))
      return fail("no such file: '" + F + "'");
    if (sys::fs::is_directory(F))
      return fail("'" + F + "' is a directory, not a source file");
  }

  std::unique_ptr<CompilationDatabase> DB;
  if (!BuildPath.empty()) {
    if (SawDashDash)
      return fail("give either -p <build dir> or flags after --, not both");
    std::string Error;
    DB = CompilationDatabase::loadFromDirectory(BuildPath, Error);
    if (!DB)
      return fail("no compile_commands.json in '" + BuildPath +
                  "' (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON): " +
                  Error);
  } else {
    std::string Error;
    DB = tma::makeFixedDatabase(CompilerFlags, SawDashDash, Error);
    if (!DB)
      return fail(Error);
  }

  tma::AnalysisRun Run = tma::analyzeFiles(*DB, Files);
  std::vector<tma::FunctionTrace> Traces;
  for (const tma::FileAnalysis &FA : Run.Files) {
    if (FA.CompileErrors) {
      errs() << "tensor-accountant: error: '" << FA.File
             << "' did not compile; fix the errors above\n";
      continue;
    }
    Traces.insert(Traces.end(), FA.Traces.begin(), FA.Traces.end());
  }
  if (OutputFormat == Format::JSON)
    outs() << formatv("{0:2}", tma::toJSON(Traces, {})) << "\n";
  else
    tma::printTable(outs(), Traces);
  return Run.Failed ? 1 : 0;
}
