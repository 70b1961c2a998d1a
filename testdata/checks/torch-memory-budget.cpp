// torch-memory-budget: its positive and negative cases, run with only this check
// enabled (RUN-CHECKS) through both front ends, our CLI and clang-tidy-16
// --load (tests/checks/check_torch_tidy.py, ctest checks.*.torch-memory-budget).
// Expectations follow clang-tidy's check_clang_tidy.py: CHECK-MESSAGES for
// warnings, CHECK-NOTES for notes; a function with no CHECK lines must stay
// silent under this check. Other checks' cases live in their own files, so
// a new warning of one check cannot break another's negative case;
// precision.cpp runs every check at once on purpose.
// RUN-CHECKS: -*,torch-memory-budget
#include <torch/torch.h>

void over_budget() {
// CHECK-MESSAGES: :[[@LINE-1]]:1: warning: peak live tensor storage in 'over_budget' is 12 GiB, over the budget of 8 GiB (MaxPeakBytes) [torch-memory-budget]
// CHECK-NOTES: :[[@LINE+3]]:12: note: 'a' holds 4 GiB at the peak
// CHECK-NOTES: :[[@LINE+3]]:12: note: 'b' holds 4 GiB at the peak
// CHECK-NOTES: :[[@LINE+3]]:14: note: 'c' holds 4 GiB at the peak
  auto a = torch::empty({1024, 1024, 1024});
  auto b = torch::empty({1024, 1024, 1024});
  auto c = a + b;
}

// Negative: 4 GiB + 4 GiB stays within the default 8 GiB.
void within_budget() {
  auto a = torch::empty({1024, 1024, 1024});
  auto b = a * 2;
}

// A lambda is a function of its own, named the same by both front ends
// (lambdaTraceName): "<enclosing>::lambda@L<line of its introducer>". The
// line is a pattern: clang-tidy reads the check files as one translation
// unit, where the lines are not this file's.
void lambda_over_budget() {
  auto inner = [] {
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: peak live tensor storage in 'lambda_over_budget::lambda@L{{[0-9]+}}' is 12 GiB, over the budget of 8 GiB (MaxPeakBytes) [torch-memory-budget]
  // CHECK-NOTES: :[[@LINE+3]]:14: note: 'a' holds 4 GiB at the peak
  // CHECK-NOTES: :[[@LINE+3]]:14: note: 'b' holds 4 GiB at the peak
  // CHECK-NOTES: :[[@LINE+3]]:16: note: 'c' holds 4 GiB at the peak
    auto a = torch::empty({1024, 1024, 1024});
    auto b = torch::empty({1024, 1024, 1024});
    auto c = a + b;
  };
}
