// torch-reshape-copy: its positive and negative cases, run with only this check
// enabled (RUN-CHECKS) through both front ends, our CLI and clang-tidy-16
// --load (tests/checks/check_torch_tidy.py, ctest checks.*.torch-reshape-copy).
// Expectations follow clang-tidy's check_clang_tidy.py: CHECK-MESSAGES for
// warnings, CHECK-NOTES for notes; a function with no CHECK lines must stay
// silent under this check. Other checks' cases live in their own files, so
// a new warning of one check cannot break another's negative case;
// precision.cpp runs every check at once on purpose.
// RUN-CHECKS: -*,torch-reshape-copy
#include <torch/torch.h>

void reshape_of_permute() {
  auto x = torch::randn({4, 8, 16});
  auto p = x.permute({1, 0, 2});
  auto q = p.reshape({8, 64});
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: reshape() copies 2 KiB because its input is not viewable as the new shape; use .contiguous().view() to make the copy explicit, or .view() where no copy is intended [torch-reshape-copy]
  // CHECK-NOTES: :[[@LINE-3]]:14: note: the input stopped being contiguous here, at permute()
}

void flatten_of_transpose() {
  auto x = torch::randn({32, 32});
  auto f = x.t().flatten();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: flatten() copies 4 KiB because its input is not viewable as the new shape; use .contiguous().view() to make the copy explicit, or .view() where no copy is intended [torch-reshape-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: the input stopped being contiguous here, at t()
}

void reshape_unknown_size(torch::Tensor x) {
  auto y = x.transpose(0, 1).reshape({-1});
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: reshape() of the result of transpose() copies a tensor of unknown size unless the permuted dimensions have size 1; use .contiguous().view() to make the copy explicit, or .view() where no copy is intended [torch-reshape-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: the input stopped being contiguous here, at transpose()
}

// Negative: reshape and flatten of contiguous (or viewable) inputs are views.
void reshape_viewable(torch::Tensor param) {
  auto x = torch::randn({4, 8, 16});
  auto a = x.reshape({32, 16});
  auto b = x.flatten();
  auto c = x.transpose(1, 2).reshape({4, 16, 8});
  auto d = param.reshape({-1});
}

// Negative: the user's own function spelled like reshape is not reshape()
// (the check once matched op names as strings and fired here).
torch::Tensor reshape(const torch::Tensor &x);

void own_reshape_of_a_view(torch::Tensor x) {
  auto y = reshape(x.t());
}
