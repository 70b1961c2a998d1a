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
  /// Left out on purpose, not failed: reported as skipped, and the exit
  /// status is 3, not 1. Nothing is left out since CUDA sources are
  /// analysed (issue 35, item 7); every format keeps the place.
  bool Skipped = false;
};

} // namespace tma
