// torch-randint-default-dtype: its positive and negative cases, run with only this check
// enabled (RUN-CHECKS) through both front ends, our CLI and clang-tidy-16
// --load (tests/checks/check_torch_tidy.py, ctest checks.*.torch-randint-default-dtype).
// Expectations follow clang-tidy's check_clang_tidy.py: CHECK-MESSAGES for
// warnings, CHECK-NOTES for notes; a function with no CHECK lines must stay
// silent under this check. Other checks' cases live in their own files, so
// a new warning of one check cannot break another's negative case;
// precision.cpp runs every check at once on purpose.
// RUN-CHECKS: -*,torch-randint-default-dtype
#include <torch/torch.h>

void randint_without_dtype() {
  auto ids = torch::randint(0, 10, {4, 8}, torch::device(torch::kCPU));
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: randint() with options but no dtype makes float32 tensors in C++, not int64 as in Python; give the options a dtype [torch-randint-default-dtype]
  auto perm = torch::randperm(16, torch::device(torch::kCPU));
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: randperm() with options but no dtype makes float32 tensors in C++, not int64 as in Python; give the options a dtype [torch-randint-default-dtype]
}

// Negative: a dtype is given, or there are no options (the default is kLong).
void randint_with_dtype() {
  auto a = torch::randint(0, 10, {4, 8}, torch::dtype(torch::kLong));
  auto b = torch::randint(10, {4, 8});
  auto c = torch::randint(0, 10, {4}, torch::TensorOptions().dtype(torch::kInt));
  auto d = torch::randperm(16);
}
