// torch-copy-then-slice: its positive and negative cases, run with only this check
// enabled (RUN-CHECKS) through both front ends, our CLI and clang-tidy-16
// --load (tests/checks/check_torch_tidy.py, ctest checks.*.torch-copy-then-slice).
// Expectations follow clang-tidy's check_clang_tidy.py: CHECK-MESSAGES for
// warnings, CHECK-NOTES for notes; a function with no CHECK lines must stay
// silent under this check. Other checks' cases live in their own files, so
// a new warning of one check cannot break another's negative case;
// precision.cpp runs every check at once on purpose.
// RUN-CHECKS: -*,torch-copy-then-slice
#include <torch/torch.h>

void clone_then_narrow() {
  auto x = torch::randn({1024, 256});
  auto y = x.clone();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: clone() copies all 1 MiB but only 16 KiB of the result is used through a slice; slicing first allocates 16 KiB instead of 1 MiB (saves 1008 KiB) [torch-copy-then-slice]
  // CHECK-NOTES: :[[@LINE+1]]:14: note: only this 16 KiB of the copy is used
  auto s = y.narrow(0, 0, 16).sum();
  auto m = x.mean();
}

// Negative: the whole copy is used, or the slices together cover it.
void copy_used_whole() {
  auto x = torch::randn({1024, 256});
  auto y = x.clone();
  auto head = y.narrow(0, 0, 16).sum();
  auto all = y.sum();
  auto z = x.clone();
  auto lo = z.narrow(0, 0, 512).sum();
  auto hi = z.narrow(0, 512, 512).sum();
}
