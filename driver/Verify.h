// --verify, --emit-harness and --compare-measured: the bridge from the
// analysis (FunctionTraces) to verify/ (harness, build, run, compare).
//
// The tool never runs user code on its own: these paths run only when the
// user asks, in a temporary directory, with limits per function. Only
// functions whose analysis saw tensor work are called; a function with
// parameters is called once per draw of inputs made from what the analysis
// knows (driver/VerifyInputs.h), and its predictions are the report's
// expressions evaluated under that draw; functions the harness cannot call
// (methods, templates, parameters no input can be made for) are listed as
// not verifiable, with the reason; on cpu and cuda, functions whose predicted peak is over
// --verify-max-bytes (or unknown) are skipped rather than allocated, and the
// same limit is enforced at run time on every run on the CPU, whatever the
// prediction said. The compiler and the harness die with the tool (verify/
// Process.h); an interrupted run removes its temporary directory.
// --emit-harness writes only into an empty or new directory; with --force it
// replaces the files an earlier --emit-harness wrote there and nothing else.
#pragma once

#include "driver/VerifyInputs.h"
#include "frontend/Action.h"
#include "verify/Harness.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tma {

struct VerifyOptions {
  verify::Mode Mode = verify::Mode::Meta;
  std::string EmitDir;      // --emit-harness: write the program, do not run
  bool Force = false;       // --force: --emit-harness may replace its own files
  std::string MeasuredFile; // --compare-measured: compare with this output
  unsigned TimeoutSeconds = 60; // per function
  int64_t MaxBytes = int64_t(1) << 30;
  bool JSON = false;        // --format=json: the verdicts as one JSON document
  DrawOptions Draws;        // inputs of functions with parameters
  /// The JSON report of the predicted functions: report/Report.h's toJSON,
  /// handed in by the front end because report/ builds on driver/, not the
  /// other way round. The bridge compares LibTorch with what users read.
  std::function<llvm::json::Value(const std::vector<FunctionTrace> &)>
      PredictionReport;
};

/// --emit-harness's writing rule. Files maps names to contents. Into a new
/// or empty directory every file is created (never opened over an existing
/// one); into a non-empty one only with Force, and then only files an
/// earlier --emit-harness wrote (IsOurs says so from the contents) are
/// replaced, each atomically. Returns "" or the reason nothing was written.
std::string writeEmittedFiles(
    const std::string &Dir,
    const std::vector<std::pair<std::string, std::string>> &Files, bool Force,
    const std::function<bool(const std::string &Name, llvm::StringRef Contents)> &IsOurs);

/// Runs the whole verification and prints the side-by-side report.
/// Returns the exit status: 0 all verified values match, 1 a mismatch,
/// 2 the harness could not be built or run.
int runVerification(const std::vector<FileAnalysis> &Files,
                    const VerifyOptions &Opts, llvm::raw_ostream &OS,
                    llvm::raw_ostream &Err);

} // namespace tma
