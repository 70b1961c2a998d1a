// Internal to the --verify bridge (driver/Verify*.cpp) and its tests:
// planning a run, which functions of a file the harness calls and with which
// inputs, and what each call is predicted to do (the rules are in Verify.h).
#pragma once

#include "driver/Verify.h"
#include "model/Trace.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tma {

/// A function --verify does not call, and why.
struct SkippedFunction {
  std::string File, Function, Reason;
};

/// A function the harness calls: without arguments (no Draws), or once per
/// draw of inputs.
struct PlannedFunction {
  const FunctionTrace *T = nullptr;
  std::vector<InputDraw> Draws;
};

/// The harness input for one analysed file: probes after every binding
/// statement that can take one, device expressions to redirect, and the
/// functions to call. Skipped lists functions left out, with the reason;
/// Planned (when given) receives the functions called, in order.
verify::HarnessFile harnessFileFor(const FileAnalysis &FA, const std::string &Text,
                                   const VerifyOptions &Opts,
                                   std::vector<SkippedFunction> &Skipped,
                                   std::vector<PlannedFunction> *Planned = nullptr);

/// The predicted report of one function (toJSON's object) under a draw of
/// inputs: every size, stride, offset and byte count that is a C++
/// expression becomes its value (null, with the reason in unknown_reason,
/// when it has none), a `p.scalar_type()` dtype becomes the input's, and
/// the object gets "draw" and "inputs".
void instantiatePrediction(llvm::json::Object &F, const InputDraw &D, int DrawIndex);

/// Whether the analysis saw tensor work in T (an op, a tensor bound, or
/// something it could not derive): only such functions are called.
bool hasTensorWork(const FunctionTrace &T);

/// Why no probe follows a binding statement, or "" when one does.
std::string noProbeReason(const Statement &S, size_t TextSize);

} // namespace tma
