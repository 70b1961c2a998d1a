// torch-view-pins-storage: its positive and negative cases, run with only this check
// enabled (RUN-CHECKS) through both front ends, our CLI and clang-tidy-16
// --load (tests/checks/check_torch_tidy.py, ctest checks.*.torch-view-pins-storage).
// Expectations follow clang-tidy's check_clang_tidy.py: CHECK-MESSAGES for
// warnings, CHECK-NOTES for notes; a function with no CHECK lines must stay
// silent under this check. Other checks' cases live in their own files, so
// a new warning of one check cannot break another's negative case;
// precision.cpp runs every check at once on purpose.
// RUN-CHECKS: -*,torch-view-pins-storage
#include <torch/torch.h>

torch::Tensor return_one_row() {
  auto big = torch::randn({1024, 1024});
  auto row = big.select(0, 3);
  // CHECK-MESSAGES: :[[@LINE-1]]:8: warning: 'row' keeps all 4 MiB of 'big' alive for 4 KiB of view and returns it; clone() it to release 4.00 MiB (4190208 B) [torch-view-pins-storage]
  // CHECK-NOTES: :[[@LINE-3]]:14: note: 'big' was allocated here (4 MiB)
  return row;
}

void view_outlives_base() {
  torch::Tensor head;
  {
    auto big = torch::randn({1024, 1024});
    head = big.narrow(0, 0, 8);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'head' keeps all 4 MiB of 'big' alive for 32 KiB of view after 'big' goes out of scope; clone() it to release 3.97 MiB (4161536 B) [torch-view-pins-storage]
    // CHECK-NOTES: :[[@LINE-3]]:16: note: 'big' was allocated here (4 MiB)
    auto total = big.sum();
  }
  auto twice = head * 2;
}

// Negative: a compacted copy, a view used while its base is, a view that
// shows all of the storage, a view of a parameter.
torch::Tensor return_compacted_row() {
  auto big = torch::randn({1024, 1024});
  auto row = big.select(0, 3).clone();
  return row;
}

void view_used_with_base() {
  auto big = torch::randn({1024, 1024});
  auto head = big.narrow(0, 0, 8);
  auto s = head.sum() + big.sum();
}

torch::Tensor return_whole_view() {
  auto big = torch::randn({64, 64});
  auto v = big.t();
  return v;
}

torch::Tensor return_view_of_parameter(torch::Tensor param) {
  auto v = param.narrow(0, 0, 1);
  return v;
}
