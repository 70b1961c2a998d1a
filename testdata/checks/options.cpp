// Option tests: every check option set away from its default, and one check
// switched off by the Checks globs. The runner passes the TIDY-CONFIG line
// to both front ends twice: as --config, and as a .clang-tidy file next to a
// copy of this file (with nothing else on the command line).
//
// Thresholds of 1 MiB: the 256 KiB cases stay silent, the 4 MiB cases fire,
// sizes the analysis does not know fire (they cannot be compared).
// TIDY-CONFIG: {Checks: '-*,torch-*,-torch-tensor-subscript', CheckOptions: {torch-contiguous-copy.MinBytes: '1048576', torch-contiguous-copy.ReportRequired: 'true', torch-reshape-copy.MinBytes: '1048576', torch-dtype-widening.MinBytes: '1048576', torch-copy-then-slice.MinSavedBytes: '1048576', torch-redundant-copy.MinBytes: '1048576', torch-view-pins-storage.MinPinnedBytes: '1048576', torch-memory-budget.MaxPeakBytes: '67108864', torch-memory-budget.MaxNotes: '1'}}
#include <torch/torch.h>

// torch-contiguous-copy.MinBytes
void contiguous_small() {
  auto x = torch::randn({256, 256});
  auto y = x.t().contiguous();
}

void contiguous_large() {
  auto x = torch::randn({1024, 1024});
  auto y = x.t().contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: contiguous() copies 4 MiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by t()
}

// torch-contiguous-copy.ReportRequired: a copy a view() needs is reported
// too, with a note at the view.
void contiguous_required_by_view() {
  auto x = torch::randn({1024, 1024});
  auto y = x.t().contiguous().view({-1});
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: contiguous() copies 4 MiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by t()
  // CHECK-NOTES: :[[@LINE-3]]:31: note: view() needs contiguous memory here
}

// torch-contiguous-copy.ReportRequired: a copy the consumer would make
// anyway is reported too, with a note at it: a Linear folds a (B, T, C)
// view of a (T, B, C) tensor with a copying reshape.
void contiguous_copied_anyway_by_linear() {
  torch::nn::Linear fc(1024, 256);
  auto x = torch::randn({32, 64, 1024});
  auto y = fc->forward(x.transpose(0, 1).contiguous());
  // CHECK-MESSAGES: :[[@LINE-1]]:42: warning: contiguous() copies 8 MiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:26: note: contiguity is lost here by transpose()
  // CHECK-NOTES: :[[@LINE-3]]:16: note: linear() would copy the non-contiguous input itself here
}

// A copy whose size is a formula over the caller's sizes is not skipped by
// MinBytes: it may be above it.
void contiguous_unknown(torch::Tensor x) {
  auto y = x.t().contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: contiguous() copies x.element_size()·x.size(0)·x.size(1) B because its input is not contiguous (unless x.size(0) == 1 or x.size(1) == 1) [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by t()
}

// torch-reshape-copy.MinBytes
void reshape_small() {
  auto x = torch::randn({256, 256});
  auto y = x.t().reshape({-1});
}

void reshape_large() {
  auto x = torch::randn({1024, 1024});
  auto y = x.t().reshape({-1});
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: reshape() copies 4 MiB because its input is not viewable as the new shape; use .contiguous().view() to make the copy explicit, or .view() where no copy is intended [torch-reshape-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: the input stopped being contiguous here, at t()
}

// torch-dtype-widening.MinBytes
void widen_small() {
  auto h = torch::randn({256, 256}, torch::kHalf);
  auto f = h.to(torch::kFloat);
}

void widen_large() {
  auto h = torch::randn({1024, 1024}, torch::kHalf);
  auto f = h.to(torch::kFloat);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: cast from float16 to float32 allocates 4 MiB and moves 6 MiB (reads 2 MiB, writes 4 MiB); every later read of the result moves 2x the bytes [torch-dtype-widening]
}

// torch-copy-then-slice.MinSavedBytes
void slice_saves_little() {
  auto x = torch::randn({1024, 256});
  auto y = x.clone();
  auto s = y.narrow(0, 0, 16).sum();
  auto m = x.mean();
}

void slice_saves_much() {
  auto x = torch::randn({4096, 256});
  auto y = x.clone();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: clone() copies all 4 MiB but only 16 KiB of the result is used through a slice; slicing first allocates 16 KiB instead of 4 MiB (saves 3.98 MiB (4177920 B)) [torch-copy-then-slice]
  // CHECK-NOTES: :[[@LINE+1]]:14: note: only this 16 KiB of the copy is used
  auto s = y.narrow(0, 0, 16).sum();
  auto m = x.mean();
}

// torch-redundant-copy.MinBytes
void redundant_small() {
  auto x = torch::randn({256, 256});
  auto y = (x * 2).clone();
}

void redundant_large() {
  auto x = torch::randn({1024, 1024});
  auto y = (x * 2).clone();
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: clone() copies 4 MiB of a fresh tensor from mul() that nothing else uses; the copy is redundant [torch-redundant-copy]
  // CHECK-NOTES: :[[@LINE-2]]:15: note: the tensor was freshly made here by mul()
}

// torch-view-pins-storage.MinPinnedBytes
torch::Tensor pins_little() {
  auto big = torch::randn({256, 256});
  auto row = big.select(0, 3);
  return row;
}

torch::Tensor pins_much() {
  auto big = torch::randn({1024, 1024});
  auto row = big.select(0, 3);
  // CHECK-MESSAGES: :[[@LINE-1]]:8: warning: 'row' keeps all 4 MiB of 'big' alive for 4 KiB of view and returns it; clone() it to release 4.00 MiB (4190208 B) [torch-view-pins-storage]
  // CHECK-NOTES: :[[@LINE-3]]:14: note: 'big' was allocated here (4 MiB)
  return row;
}

// torch-memory-budget.MaxPeakBytes (64 MiB) and MaxNotes (1).
void budget_ok() {
  auto a = torch::empty({4, 1024, 1024});
  auto b = torch::empty({4, 1024, 1024});
}

void budget_exceeded() {
// CHECK-MESSAGES: :[[@LINE-1]]:1: warning: peak live tensor storage in 'budget_exceeded' is 80 MiB, over the budget of 64 MiB (MaxPeakBytes) [torch-memory-budget]
// CHECK-NOTES: :[[@LINE+1]]:12: note: 'a' holds 32 MiB at the peak
  auto a = torch::empty({8, 1024, 1024});
  auto b = torch::empty({8, 1024, 1024});
  auto c = torch::empty({4, 1024, 1024});
}

// Checks: '-torch-tensor-subscript' switches this one off.
void subscript_disabled() {
  auto emb = torch::randn({100, 8});
  auto ids = torch::randint(0, 100, {4}, torch::kLong);
  auto h = emb[ids];
}

// Checks without options are still on.
void randint_still_on() {
  auto ids = torch::randint(0, 10, {4}, torch::device(torch::kCPU));
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: randint() with options but no dtype makes float32 tensors in C++, not int64 as in Python; give the options a dtype [torch-randint-default-dtype]
}
