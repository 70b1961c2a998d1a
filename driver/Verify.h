// --verify, --emit-harness and --compare-measured: the bridge from the
// analysis (FunctionTraces) to verify/ (harness, build, run, compare).
//
// The tool never runs user code on its own: these paths run only when the
// user asks, in a temporary directory, with a time limit. Functions the
// harness cannot call (parameters, methods, templates) are listed as not
// verifiable; on cpu and cuda, functions whose predicted peak is over
// --verify-max-bytes (or unknown) are skipped rather than allocated.
#pragma once

#include "frontend/Action.h"
#include "verify/Harness.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tma {

struct VerifyOptions {
  verify::Mode Mode = verify::Mode::Meta;
  std::string EmitDir;      // --emit-harness: write the program, do not run
  std::string MeasuredFile; // --compare-measured: compare with this output
  unsigned TimeoutSeconds = 600;
  int64_t MaxBytes = int64_t(1) << 30;
};

/// The harness input for one analysed file: probes after every binding
/// statement that can take one, device expressions to redirect, and the
/// functions to call. Skipped lists functions left out, with the reason.
verify::HarnessFile harnessFileFor(const FileAnalysis &FA, const std::string &Text,
                                   const VerifyOptions &Opts,
                                   std::vector<std::string> &Skipped);

/// Runs the whole verification and prints the side-by-side report.
/// Returns the exit status: 0 all verified values match, 1 a mismatch,
/// 2 the harness could not be built or run.
int runVerification(const std::vector<FileAnalysis> &Files,
                    const VerifyOptions &Opts, llvm::raw_ostream &OS,
                    llvm::raw_ostream &Err);

} // namespace tma
