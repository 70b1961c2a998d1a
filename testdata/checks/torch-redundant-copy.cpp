// torch-redundant-copy: its positive and negative cases, run with only this check
// enabled (RUN-CHECKS) through both front ends, our CLI and clang-tidy-16
// --load (tests/checks/check_torch_tidy.py, ctest checks.*.torch-redundant-copy).
// Expectations follow clang-tidy's check_clang_tidy.py: CHECK-MESSAGES for
// warnings, CHECK-NOTES for notes; a function with no CHECK lines must stay
// silent under this check. Other checks' cases live in their own files, so
// a new warning of one check cannot break another's negative case;
// precision.cpp runs every check at once on purpose.
// RUN-CHECKS: -*,torch-redundant-copy
#include <torch/torch.h>

void clone_of_temporary() {
  auto x = torch::randn({256, 256});
  auto y = (x * 2).clone();
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: clone() copies 256 KiB of a fresh tensor from mul() that nothing else uses; the copy is redundant [torch-redundant-copy]
  // CHECK-NOTES: :[[@LINE-2]]:15: note: the tensor was freshly made here by mul()
}

void clone_of_unused_fresh_tensor() {
  auto a = torch::randn({128});
  auto b = a.clone();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: clone() copies 512 B of a fresh tensor from randn() that nothing else uses; the copy is redundant [torch-redundant-copy]
  // CHECK-NOTES: :[[@LINE-3]]:12: note: the tensor was freshly made here by randn()
}

// detach() between the copies shows the same elements under another handle:
// it does not make the second copy needed.
void clone_through_detach() {
  auto x = torch::randn({64, 32});
  auto y = x.t().contiguous().detach().clone();
  // CHECK-MESSAGES: :[[@LINE-1]]:40: warning: clone() copies 8 KiB of a fresh tensor from contiguous() that nothing else uses; the copy is redundant [torch-redundant-copy]
  // CHECK-NOTES: :[[@LINE-2]]:18: note: the tensor was freshly made here by contiguous()
}

// Negative: a named detached handle may be why the copy is there.
void clone_of_named_detach() {
  auto x = torch::randn({64, 32});
  auto d = (x * 2).detach();
  auto y = d.clone();
  d.add_(1);
}

// Negative: the source is used again, is not fresh, or the clone changes
// the layout.
void clones_that_are_needed(torch::Tensor param) {
  auto a = torch::randn({128});
  auto b = a.clone();
  a.add_(1);
  auto c = param.clone();
  auto d = torch::randn({8, 8}).t().clone();
  auto e = torch::randn({2, 3, 4, 4}).clone(at::MemoryFormat::ChannelsLast);
}

// Negative: the source is used by calls the analysis does not model; the
// trace cannot prove that nothing uses it afterwards.
void consume(const torch::Tensor &t);
void clones_of_sources_used_elsewhere(std::vector<torch::Tensor> &out) {
  auto a = torch::randn({128});
  auto b = a.clone();
  consume(a);
  auto c = torch::randn({128});
  auto d = c.clone();
  out.push_back(c);
}
