// Precision corpus for the torch-* checks: code as users write it, in the
// shapes that fooled the checks before (issue 10 items 2-5, 17, 18). Every
// function is one case; a function with no CHECK lines must stay silent.
// More than half are silent on purpose: a check that cries wolf is turned
// off. Run through both front ends (tests/checks/CMakeLists.txt).
//
// torch-view-pins-storage is judged with C++ lifetimes: a view is reported
// only when it keeps storage alive longer than the program otherwise would:
// it is returned while its base is a local, it outlives its base's scope,
// or its base is reassigned while it lives.
#include <torch/torch.h>

#define CONTIG(t) (t).contiguous()

namespace cfg {
const auto kHalf = torch::TensorOptions().dtype(torch::kHalf);
const auto kCpuOnly = torch::TensorOptions().device(torch::kCPU);
const auto kLongIds = torch::TensorOptions().dtype(torch::kLong);
} // namespace cfg

struct IdConfig {
  static inline const torch::TensorOptions options =
      torch::TensorOptions().dtype(torch::kInt32);
};

// ---- torch-view-pins-storage: reported -------------------------------------

torch::Tensor pins_returned_named_view() {
  auto big = torch::randn({1024, 1024});
  auto row = big.select(0, 3);
  // CHECK-MESSAGES: :[[@LINE-1]]:8: warning: 'row' keeps all 4 MiB of 'big' alive for 4 KiB of view and returns it; clone() it to release 4.00 MiB (4190208 B) [torch-view-pins-storage]
  // CHECK-NOTES: :[[@LINE-3]]:14: note: 'big' was allocated here (4 MiB)
  return row;
}

torch::Tensor pins_returned_unnamed_index() {
  auto big = torch::randn({1024, 1024});
  return big.index({0});
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: the returned view keeps all 4 MiB of 'big' alive for 4 KiB of view; clone() it to release 4.00 MiB (4190208 B) [torch-view-pins-storage]
  // CHECK-NOTES: :[[@LINE-3]]:14: note: 'big' was allocated here (4 MiB)
}

torch::Tensor pins_returned_unnamed_narrow() {
  auto big = torch::zeros({512, 1024});
  return big.narrow(0, 0, 8);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: the returned view keeps all 2 MiB of 'big' alive for 32 KiB of view; clone() it to release 1.97 MiB (2064384 B) [torch-view-pins-storage]
  // CHECK-NOTES: :[[@LINE-3]]:14: note: 'big' was allocated here (2 MiB)
}

void pins_outlives_base_scope() {
  torch::Tensor head;
  {
    auto big = torch::randn({1024, 1024});
    head = big.narrow(0, 0, 8);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'head' keeps all 4 MiB of 'big' alive for 32 KiB of view after 'big' goes out of scope; clone() it to release 3.97 MiB (4161536 B) [torch-view-pins-storage]
    // CHECK-NOTES: :[[@LINE-3]]:16: note: 'big' was allocated here (4 MiB)
  }
  auto twice = head * 2;
}

void pins_base_reassigned() {
  auto big = torch::randn({1024, 1024});
  auto head = big.narrow(0, 0, 8);
  // CHECK-MESSAGES: :[[@LINE-1]]:8: warning: 'head' keeps all 4 MiB of 'big' alive for 32 KiB of view after 'big' is reassigned; clone() it to release 3.97 MiB (4161536 B) [torch-view-pins-storage]
  // CHECK-NOTES: :[[@LINE-3]]:14: note: 'big' was allocated here (4 MiB)
  big = torch::zeros({16});
  auto twice = head * 2;
}

// ---- torch-view-pins-storage: silent ---------------------------------------

// The base is a named local alive to the end of the scope: cloning the
// view would release nothing.
void view_of_base_alive_to_scope_end() {
  auto big = torch::randn({1024, 1024});
  auto head = big.narrow(0, 0, 8);
  auto total = big.sum();
  auto twice = head * 2;
}

void narrowed_then_contiguous() {
  auto big = torch::randn({1024, 1024});
  auto rows = big.narrow(0, 0, 8).contiguous();
  auto twice = rows * 2;
}

void slice_of_a_cast() {
  auto x = torch::randn({1024, 1024});
  auto h = x.to(torch::kHalf);
  auto whole = h.sum();
  auto head = h.narrow(0, 0, 8);
  auto twice = head * 2;
}

void narrow_of_a_computed_tensor() {
  auto a = torch::randn({1024, 1024});
  auto c = a * 3;
  auto head = c.narrow(0, 0, 8);
  auto twice = head * 2;
}

void slice_of_a_tensor_reduced_later() {
  auto big = torch::randn({1024, 1024});
  auto head = big.narrow(0, 0, 8);
  auto twice = head * 2;
  auto total = big.sum();
}

torch::Tensor returned_view_of_parameter(const torch::Tensor &param) {
  return param.narrow(0, 0, 1);
}

torch::Tensor returned_view_of_static() {
  static auto table = torch::randn({1024, 1024});
  return table.narrow(0, 0, 8);
}

torch::Tensor returned_view_showing_everything() {
  auto big = torch::randn({64, 64});
  return big.t();
}

torch::Tensor returned_view_replaced_by_copy() {
  auto big = torch::randn({1024, 1024});
  auto v = big.narrow(0, 0, 8);
  v = v.clone();
  return v;
}

void view_and_base_die_together() {
  {
    auto big = torch::randn({1024, 1024});
    auto head = big.narrow(0, 0, 8);
    auto s = head.sum();
  }
  auto after = torch::zeros({16});
}

// ---- torch-contiguous-copy -------------------------------------------------

void contiguous_after_narrowing_columns() {
  auto x = torch::randn({64, 64});
  auto c = x.narrow(1, 0, 8).contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: contiguous() copies 2 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by narrow()
}

void contiguous_after_assignment_through_reference() {
  auto x = torch::randn({64, 64});
  torch::Tensor &r = x;
  r = r.t();
  auto c = x.contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: contiguous() copies 16 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-3]]:9: note: contiguity is lost here by t()
}

void contiguous_of_expand() {
  auto e = torch::randn({64, 1}).expand({64, 64});
  auto c = e.contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: contiguous() copies 16 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-3]]:34: note: contiguity is lost here by expand()
}

void contiguous_of_size_one_transpose() {
  auto x = torch::randn({1, 64});
  auto c = x.t().contiguous();
}

void contiguous_of_double_transpose() {
  auto x = torch::randn({64, 32});
  auto c = x.t().t().contiguous();
}

void contiguous_in_macro_of_contiguous() {
  auto x = torch::randn({64, 64});
  auto c = CONTIG(x);
}

void contiguous_of_identity_permute() {
  auto x = torch::randn({16, 64});
  auto c = x.permute({0, 1}).contiguous();
}

// ---- torch-reshape-copy ----------------------------------------------------

void reshape_of_expand() {
  auto e = torch::randn({64, 1}).expand({64, 64});
  auto f = e.reshape({-1});
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: reshape() copies 16 KiB because its input is not viewable as the new shape; use .contiguous().view() to make the copy explicit, or .view() where no copy is intended [torch-reshape-copy]
  // CHECK-NOTES: :[[@LINE-3]]:34: note: the input stopped being contiguous here, at expand()
}

void reshape_of_leading_rows() {
  auto x = torch::randn({64, 64});
  auto f = x.narrow(0, 0, 8).reshape({-1});
}

void reshape_of_size_one_transpose() {
  auto x = torch::randn({1, 8});
  auto f = x.t().reshape({8});
}

void reshape_of_view() {
  auto x = torch::randn({64});
  auto f = x.view({8, 8}).reshape({64});
}

// ---- torch-dtype-widening --------------------------------------------------

void widen_half_options_from_namespace_constant() {
  auto h = torch::zeros({1024}, cfg::kHalf);
  auto f = h.to(torch::kFloat);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: cast from float16 to float32 allocates 4 KiB and moves 6 KiB (reads 2 KiB, writes 4 KiB); every later read of the result moves 2x the bytes [torch-dtype-widening]
}

void widen_half_to_double() {
  auto h = torch::zeros({1024}, torch::TensorOptions(torch::kHalf));
  auto d = h.to(torch::kDouble);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: cast from float16 to float64 allocates 8 KiB and moves 10 KiB (reads 2 KiB, writes 8 KiB); every later read of the result moves 4x the bytes [torch-dtype-widening]
}

void cast_to_the_same_dtype_from_constant() {
  auto h = torch::zeros({1024}, cfg::kHalf);
  auto same = h.to(torch::kHalf);
}

template <typename T> void widen_in_uninstantiated_template(const T &x) {
  auto f = x.to(torch::kDouble);
}

// ---- torch-copy-then-slice -------------------------------------------------

void copy_used_whole_through_reference() {
  auto x = torch::randn({1024, 256});
  auto y = x.clone();
  const auto &r = y;
  auto head = y.narrow(0, 0, 16).sum();
  auto all = r.sum();
  auto m = x.mean();
}

void copy_used_whole_through_pointer() {
  auto x = torch::randn({1024, 256});
  auto y = x.clone();
  auto *p = &y;
  auto head = y.narrow(0, 0, 16).sum();
  auto all = p->sum();
  auto m = x.mean();
}

// ---- torch-redundant-copy --------------------------------------------------

void clone_of_parenthesised_temporary() {
  auto x = torch::randn({256});
  auto y = ((x + 1)).clone();
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: clone() copies 1 KiB of a fresh tensor from add() that nothing else uses; the copy is redundant [torch-redundant-copy]
  // CHECK-NOTES: :[[@LINE-2]]:16: note: the tensor was freshly made here by add()
}

void clone_source_used_through_pointer() {
  auto a = torch::randn({128});
  auto b = a.clone();
  torch::Tensor *p = &a;
  p->add_(1);
}

void clone_source_used_in_lambda() {
  auto a = torch::randn({128});
  auto b = a.clone();
  auto total = [&] { return a.sum(); };
  auto s = total();
}

torch::Tensor clone_source_returned() {
  auto a = torch::randn({128});
  auto b = a.clone();
  b.add_(1);
  return a;
}

// ---- torch-inplace-on-copy -------------------------------------------------

void inplace_on_contiguous_copy() {
  auto x = torch::randn({64, 64});
  x.t().contiguous().zero_();
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: in-place zero_() modifies a temporary copy made by contiguous(); the source is unchanged [torch-inplace-on-copy]
  // CHECK-NOTES: :[[@LINE-2]]:9: note: contiguous() returns a new tensor, not a view; to write into the source use index_put_() or index_fill_()
  // CHECK-MESSAGES: :[[@LINE-3]]:9: warning: contiguous() copies 16 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-4]]:5: note: contiguity is lost here by t()
}

void inplace_on_contiguous_of_contiguous() {
  auto x = torch::randn({64, 64});
  x.contiguous().zero_();
}

void inplace_on_reshape_view() {
  auto x = torch::randn({64, 64});
  x.reshape({-1}).zero_();
}

// ---- torch-randint-default-dtype -------------------------------------------

void randint_with_options_constant_without_dtype() {
  auto ids = torch::randint(0, 10, {4}, cfg::kCpuOnly);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: randint() with options but no dtype makes float32 tensors in C++, not int64 as in Python; give the options a dtype [torch-randint-default-dtype]
}

void randint_with_options_constant_with_dtype() {
  auto ids = torch::randint(0, 10, {4}, cfg::kLongIds);
}

void randint_with_member_options_with_dtype() {
  auto ids = torch::randint(0, 10, {4}, IdConfig::options);
}

// ---- torch-tensor-subscript ------------------------------------------------

void subscript_with_loop_index() {
  auto emb = torch::randn({100, 8});
  for (int64_t i = 0; i < 4; ++i) {
    auto row = emb[i];
  }
}

// ---- torch-memory-budget ---------------------------------------------------

void over_budget_inside_try() {
// CHECK-MESSAGES: :[[@LINE-1]]:1: warning: peak live tensor storage in 'over_budget_inside_try' is 12 GiB, over the budget of 8 GiB (MaxPeakBytes) [torch-memory-budget]
// CHECK-NOTES: :[[@LINE+4]]:14: note: 'a' holds 4 GiB at the peak
// CHECK-NOTES: :[[@LINE+4]]:14: note: 'b' holds 4 GiB at the peak
// CHECK-NOTES: :[[@LINE+4]]:16: note: 'c' holds 4 GiB at the peak
  try {
    auto a = torch::empty({1024, 1024, 1024});
    auto b = torch::empty({1024, 1024, 1024});
    auto c = a + b;
  } catch (const std::exception &) {
  }
}

// 2^32 x (2^30 + 1) float32 elements: the element count fits in int64, the
// bytes do not; wrapped, they read as 16 GiB. LibTorch throws.
void budget_of_overflowing_sizes() {
  auto x = torch::empty({1LL << 32, (1LL << 30) + 1});
}

void budget_of_huge_expanded_view() {
  auto a = torch::ones({1});
  auto b = a.expand({1LL << 40});
}

// ---- statement forms and options around positives ---------------------------

void copy_then_slice_in_switch() {
  switch (1) {
  case 1: {
    auto x = torch::randn({1024, 256});
    auto y = x.clone();
    // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: clone() copies all 1 MiB but only 16 KiB of the result is used through a slice; slicing first allocates 16 KiB instead of 1 MiB (saves 1008 KiB) [torch-copy-then-slice]
    // CHECK-NOTES: :[[@LINE+1]]:16: note: only this 16 KiB of the copy is used
    auto s = y.narrow(0, 0, 16).sum();
    auto m = x.mean();
    break;
  }
  default:
    break;
  }
}

void subscript_with_ids_from_options_constant() {
  auto emb = torch::randn({100, 8});
  auto ids = torch::randint(0, 100, {4}, cfg::kLongIds);
  auto h = emb[ids];
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: operator[] with a 1-dim index tensor throws at run time (only 0-dim integral tensors are allowed); use .index({...}) to gather [torch-tensor-subscript]
}
