// torch-inplace-on-copy: its positive and negative cases, run with only this check
// enabled (RUN-CHECKS) through both front ends, our CLI and clang-tidy-16
// --load (tests/checks/check_torch_tidy.py, ctest checks.*.torch-inplace-on-copy).
// Expectations follow clang-tidy's check_clang_tidy.py: CHECK-MESSAGES for
// warnings, CHECK-NOTES for notes; a function with no CHECK lines must stay
// silent under this check. Other checks' cases live in their own files, so
// a new warning of one check cannot break another's negative case;
// precision.cpp runs every check at once on purpose.
// RUN-CHECKS: -*,torch-inplace-on-copy
#include <torch/torch.h>

using namespace torch::indexing;

void zero_gathered_rows() {
  auto x = torch::randn({100, 16});
  auto idx = torch::randint(0, 100, {10}, torch::kLong);
  x.index({idx}).zero_();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: in-place zero_() modifies a temporary copy made by index(); 'x' is unchanged [torch-inplace-on-copy]
  // CHECK-NOTES: :[[@LINE-2]]:5: note: index() returns a new tensor, not a view; to write into the source use index_put_() or index_fill_()
  x.index_select(0, idx).fill_(0);
  // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: in-place fill_() modifies a temporary copy made by index_select(); 'x' is unchanged [torch-inplace-on-copy]
  // CHECK-NOTES: :[[@LINE-2]]:5: note: index_select() returns a new tensor, not a view; to write into the source use index_put_() or index_fill_()
}

// Negative: writes through a view reach x; a named copy is the author's own.
void inplace_through_views() {
  auto x = torch::randn({100, 16});
  auto idx = torch::randint(0, 100, {10}, torch::kLong);
  x.index({Slice(0, 10)}).zero_();
  x.narrow(0, 0, 4).mul_(2);
  auto g = x.index({idx});
  g.zero_();
  (x * 2).add_(1);
}
