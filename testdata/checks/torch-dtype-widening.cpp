// torch-dtype-widening: its positive and negative cases, run with only this check
// enabled (RUN-CHECKS) through both front ends, our CLI and clang-tidy-16
// --load (tests/checks/check_torch_tidy.py, ctest checks.*.torch-dtype-widening).
// Expectations follow clang-tidy's check_clang_tidy.py: CHECK-MESSAGES for
// warnings, CHECK-NOTES for notes; a function with no CHECK lines must stay
// silent under this check. Other checks' cases live in their own files, so
// a new warning of one check cannot break another's negative case;
// precision.cpp runs every check at once on purpose.
// RUN-CHECKS: -*,torch-dtype-widening
#include <torch/torch.h>

void widen_half_to_float() {
  auto h = torch::randn({1024, 1024}, torch::dtype(torch::kHalf));
  auto f = h.to(torch::kFloat);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: cast from float16 to float32 allocates 4 MiB and moves 6 MiB (reads 2 MiB, writes 4 MiB); every later read of the result moves 2x the bytes [torch-dtype-widening]
}

void widen_float_to_double() {
  auto x = torch::randn({256});
  auto d = x.to(torch::kDouble);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: cast from float32 to float64 allocates 2 KiB and moves 3 KiB (reads 1 KiB, writes 2 KiB); every later read of the result moves 2x the bytes [torch-dtype-widening]
}

void widen_bfloat16_to_float() {
  auto b = torch::ones({16, 16}, torch::kBFloat16);
  auto f = b.toType(torch::kFloat);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: cast from bfloat16 to float32 allocates 1 KiB and moves 1.50 KiB (1536 B) (reads 512 B, writes 1 KiB); every later read of the result moves 2x the bytes [torch-dtype-widening]
}

// Negative: narrowing, same dtype, integer to float, float to integer.
void casts_that_do_not_widen() {
  auto x = torch::randn({16});
  auto h = x.to(torch::kHalf);
  auto s = x.to(torch::kFloat);
  auto i = torch::zeros({16}, torch::kInt);
  auto f = i.to(torch::kFloat);
  auto l = x.to(torch::kLong);
}
