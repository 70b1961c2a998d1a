// Positive and negative cases for every torch-* check, run with all torch-*
// checks at their default options through both front ends (our CLI and
// clang-tidy-16 --load). Expectations follow clang-tidy's check_clang_tidy.py:
// CHECK-MESSAGES for warnings, CHECK-NOTES for notes; a function with no
// CHECK lines must stay silent. See tests/checks/check_torch_tidy.py.
#include <torch/torch.h>

using namespace torch::indexing;

// ---- torch-contiguous-copy -------------------------------------------------

void contiguous_after_transpose() {
  auto x = torch::randn({64, 1024});
  auto y = x.transpose(0, 1).contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: contiguous() copies 256 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by transpose()
}

void contiguous_after_permute() {
  auto x = torch::zeros({8, 16, 32});
  auto p = x.permute({2, 0, 1});
  auto c = p.contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: contiguous() copies 16 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-3]]:14: note: contiguity is lost here by permute()
}

void clone_into_contiguous_format() {
  auto x = torch::randn({64, 64});
  auto c = x.t().clone(at::MemoryFormat::Contiguous);
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: clone() copies 16 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by t()
}

// Shapes unknown: fires on the pattern and says the size is unknown.
void contiguous_unknown_size(torch::Tensor x) {
  auto y = x.transpose(0, 1).contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: contiguous() copies a tensor of unknown size: its input comes from transpose() [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by transpose()
}

// Negative: contiguous() of a contiguous tensor returns self.
void contiguous_already_contiguous() {
  auto x = torch::randn({64, 64});
  auto y = x.contiguous();
  auto z = x.narrow(0, 0, 8).contiguous();
}

// Negative: a deliberate conversion to channels-last copies a contiguous
// input; nothing was lost.
void contiguous_channels_last() {
  auto x = torch::randn({8, 3, 32, 32});
  auto y = x.contiguous(at::MemoryFormat::ChannelsLast);
}

// Negative: clone() keeps the layout (Preserve), it does not make it
// contiguous; a parameter of unknown layout is not a pattern.
void clone_preserves_layout(torch::Tensor param) {
  auto x = torch::randn({64, 64});
  auto y = x.t().clone();
  auto z = param.contiguous();
}

// ---- torch-reshape-copy ----------------------------------------------------

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

// ---- torch-dtype-widening --------------------------------------------------

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

// ---- torch-copy-then-slice -------------------------------------------------

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

// ---- torch-redundant-copy --------------------------------------------------

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

// ---- torch-view-pins-storage -----------------------------------------------

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

// ---- torch-inplace-on-copy -------------------------------------------------

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

// ---- torch-randint-default-dtype -------------------------------------------

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

// ---- torch-tensor-subscript ------------------------------------------------

void subscript_with_index_tensor() {
  auto emb = torch::randn({100, 8});
  auto ids = torch::randint(0, 100, {4}, torch::kLong);
  auto h = emb[ids];
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: operator[] with a 1-dim index tensor throws at run time (only 0-dim integral tensors are allowed); use .index({...}) to gather [torch-tensor-subscript]
}

void subscript_unknown_rank(torch::Tensor emb, torch::Tensor ids) {
  auto h = emb[ids];
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: operator[] with an index tensor of unknown rank throws at run time unless it is 0-dim; use .index({...}) to gather [torch-tensor-subscript]
}

// Negative: integer subscripts and 0-dim index tensors select.
void subscript_scalar() {
  auto emb = torch::randn({100, 8});
  auto ids = torch::randint(0, 100, {4}, torch::kLong);
  auto a = emb[3];
  auto b = emb[ids[0]];
}

// ---- torch-memory-budget ---------------------------------------------------

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

// ---- NOLINT works the same in both front ends -------------------------------

void nolint_cases() {
  auto x = torch::randn({64, 64});
  auto a = x.t().contiguous(); // NOLINT(torch-contiguous-copy)
  // NOLINTNEXTLINE(torch-*)
  auto b = x.t().contiguous();
  auto c = x.t().contiguous(); // NOLINT
  auto d = x.t().contiguous(); // NOLINT(torch-reshape-copy)
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: contiguous() copies 16 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by t()
  // NOLINTBEGIN(torch-contiguous-copy)
  auto e = x.t().contiguous();
  auto f = x.t().contiguous();
  // NOLINTEND(torch-contiguous-copy)
}

// ---- Lambdas are functions of their own in both front ends ------------------

void with_lambda() {
  auto make = [] {
    auto a = torch::randn({8, 8});
    return a.t().contiguous();
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: contiguous() copies 256 B because its input is not contiguous [torch-contiguous-copy]
    // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by t()
  };
}
