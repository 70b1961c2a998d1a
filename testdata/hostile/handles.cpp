// Hostile corpus, part 4: handles given away (issue 32 items 1-3).
//
// A torch::Tensor passed by value is a second handle to the same
// TensorImpl, as a `const torch::Tensor &` is: an in-place change of its
// geometry in the callee (`unsqueeze_`, `resize_`, `t_`) changes the
// caller's tensor. A function-`static` tensor is one storage, allocated on
// the first call only and never freed. An `out=` argument is resized and
// written by the op, and so is any tensor a call the analysis does not
// follow may write.
#include <torch/torch.h>

#include "handles_helpers.h"

#include <cstdlib>
#include <vector>

static void unsqueeze_by_value(torch::Tensor t) { t.unsqueeze_(0); }
static void resize_by_value(torch::Tensor t) { t.resize_({10}); }
static void unsqueeze_by_const_reference(const torch::Tensor &t) {
  t.unsqueeze_(0);
}
// Rebinding a by-value parameter changes only the callee's handle.
static void rebind_by_value(torch::Tensor t) { t = torch::zeros({7}); }

void by_value_handle_sees_unsqueeze_() {
  auto a = torch::ones({3, 4});
  auto alias = a;
  auto view = a.narrow(0, 0, 2);
  unsqueeze_by_value(a);
  auto b = a.clone();
  auto c = alias.clone();
  auto d = view.clone();
}

void by_value_handle_sees_resize_() {
  auto a = torch::ones({3, 4});
  resize_by_value(a);
  auto b = a.clone();
}

void by_const_reference_sees_unsqueeze_() {
  auto a = torch::ones({3, 4});
  unsqueeze_by_const_reference(a);
  auto b = a.clone();
}

void by_value_rebind_keeps_the_caller() {
  auto a = torch::ones({3, 4});
  rebind_by_value(a);
  auto b = a.clone();
}

void by_value_lambda_sees_t_() {
  auto a = torch::ones({3, 4});
  auto transpose_in_place = [](torch::Tensor t) { t.t_(); };
  transpose_in_place(a);
  auto b = a.contiguous();
}

void by_value_header_helper_sees_squeeze_() {
  auto a = torch::ones({3, 1, 4});
  header_squeeze_by_value(a);
  auto b = a.clone();
}

// Two calls return one storage: it was allocated on the first call ever,
// which may or may not be this one, and is never freed.
static torch::Tensor cached_zeros() {
  static auto t = torch::zeros({8});
  return t;
}

void static_tensor_returned_twice() {
  auto a = cached_zeros();
  auto b = cached_zeros();
  auto c = a + b;
}

// mm_out resizes its out argument (0 elements) to the product's shape.
void mm_out_resizes_its_out() {
  auto a = torch::ones({3, 4});
  auto b = torch::ones({4, 5});
  auto o = torch::empty({0});
  auto alias = o;
  torch::mm_out(o, a, b);
  auto c = o.clone();
  auto d = alias.clone();
}

void add_out_and_cat_out_resize_their_out() {
  auto a = torch::ones({2, 3});
  auto o = torch::empty({0});
  at::add_out(o, a, a);
  auto c = o.clone();
  auto p = torch::empty({1});
  torch::cat_out(p, {a, a}, 0);
  auto d = p.clone();
}

// std::move into a `Tensor &&` parameter hands over the caller's handle.
static void unsqueeze_rvalue(torch::Tensor &&t) { t.unsqueeze_(0); }

void moved_into_rvalue_reference() {
  auto a = torch::ones({3, 4});
  auto alias = a;
  unsqueeze_rvalue(std::move(a));
  auto c = alias.clone();
}

// A vector of tensors holds handles: a helper reshaping an element
// reshapes the caller's tensor, however the vector was built.
static void unsqueeze_first(std::vector<torch::Tensor> v) { v[0].unsqueeze_(0); }

void vector_of_handles_by_value() {
  auto a = torch::ones({3, 4});
  std::vector<torch::Tensor> v{a};
  unsqueeze_first(v);
  auto b = a.clone();
}

// A lambda's copy-capture is a handle too, and so is an init-capture.
void lambda_copy_capture_reshaped() {
  auto a = torch::ones({3, 4});
  auto f = [a]() { a.unsqueeze_(0); };
  f();
  auto b = a.clone();
}

void lambda_init_capture_resized() {
  auto a = torch::ones({3, 4});
  auto f = [t = a]() { t.resize_({7}); };
  f();
  auto b = a.clone();
}

// Two out arguments, and the out argument last (the _outf form).
void max_out_writes_both_outs() {
  auto a = torch::ones({3, 4});
  auto values = torch::empty({0});
  auto indices = torch::empty({0}, torch::kLong);
  torch::max_out(values, indices, a, 1);
  auto c = values.clone();
  auto d = indices.clone();
}

void mm_outf_writes_its_last_argument() {
  auto a = torch::ones({3, 4});
  auto b = torch::ones({4, 5});
  auto o = torch::empty({0});
  at::mm_outf(a, b, o);
  auto c = o.clone();
}
