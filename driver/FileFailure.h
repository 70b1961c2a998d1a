// A file the run could not analyse (or left out on purpose), and why: what
// the analysis hands every output format beside the traces.
#pragma once

#include <string>

namespace tma {

/// A file the run could not analyse, and why. Every format reports them,
/// so that "no findings" never stands for a file nobody looked at (issue
/// 10, item 21: a failed file vanished from JSON and SARIF).
struct FileFailure {
  std::string File;   // as the user (or the compilation database) named it
  std::string Reason; // e.g. "it did not compile (the compiler's errors are on stderr)"
  /// Left out on purpose (a CUDA source, not analysed yet: issue 20), not
  /// failed: reported as skipped, and the exit status is 3, not 1.
  bool Skipped = false;
};

/// Why a CUDA source is skipped, and what to do (issue 32, item 10).
inline constexpr const char *CudaSkipReason =
    "skipped: CUDA sources are not analysed yet (issue 20); to analyse host "
    "code without kernels as C++ give -x c++ (after --, or in its compile "
    "command), else leave the file out";

} // namespace tma
