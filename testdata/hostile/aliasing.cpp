// Hostile corpus, part 3: references, pointers, handles and moves.
//
// A torch::Tensor is a handle: `auto b = a;` shares the TensorImpl, a
// reference or a pointer names the same handle, and assigning through it
// rebinds the variable it names (issue 10 item 4: `torch::Tensor &f = a;
// f = torch::zeros({7}); auto g = a;` once gave g the old shape).
#include <torch/torch.h>


void alias_reference_assign() {
  auto a = torch::ones({4});
  torch::Tensor &f = a;
  f = torch::zeros({7});
  auto g = a;
  auto h = a.clone();
}

void alias_reference_inplace() {
  auto a = torch::ones({1024});
  torch::Tensor &f = a;
  f.mul_(2);
  auto g = a.view({32, 32});
}

void alias_const_reference_to_temporary() {
  const torch::Tensor &r = torch::ones({1024, 1024});
  auto v = r.t();
}

void alias_reference_to_reference() {
  auto a = torch::ones({4});
  torch::Tensor &f = a;
  torch::Tensor &g = f;
  g = torch::zeros({1024});
  auto h = a.clone();
}

void alias_pointer_assign() {
  auto a = torch::ones({4});
  torch::Tensor *p = &a;
  *p = torch::zeros({1024, 1024});
  auto g = a.clone();
}

void alias_pointer_method() {
  auto a = torch::ones({1024});
  torch::Tensor *p = &a;
  p->add_(1);
  auto b = p->view({32, 32});
}

void alias_pointer_retargeted() {
  auto a = torch::ones({4});
  auto b = torch::ones({8});
  torch::Tensor *p = &a;
  p = &b;
  *p = torch::zeros({1024});
  auto ca = a.clone();
  auto cb = b.clone();
}

void alias_handle_copy_shares() {
  auto a = torch::ones({1024});
  auto b = a;
  b.add_(1);
  auto c = a.view({32, 32});
}

void alias_handle_copy_then_rebind() {
  auto a = torch::ones({1024});
  auto b = a;
  a = torch::zeros({16});
  auto c = b.clone();
  auto d = a.clone();
}

void alias_move() {
  auto a = torch::ones({1024, 1024});
  auto b = std::move(a);
  auto c = b.t();
}

void alias_swap() {
  auto a = torch::ones({4});
  auto b = torch::ones({1024});
  std::swap(a, b);
  auto c = a.clone();
}

void alias_vector_element_reference() {
  std::vector<torch::Tensor> v;
  v.push_back(torch::ones({4}));
  torch::Tensor &e = v[0];
  e = torch::zeros({1024});
  auto c = v[0].clone();
}

void alias_ternary_reference() {
  auto a = torch::ones({4});
  auto b = torch::ones({8});
  bool first = true;
  torch::Tensor &r = first ? a : b;
  r = torch::zeros({1024});
  auto c = a.clone();
}

void alias_self_assign() {
  auto a = torch::ones({1024});
  a = a;
  auto b = a.view({32, 32});
}

void alias_assign_view_of_self() {
  auto a = torch::ones({32, 32});
  a = a.t();
  auto b = a.contiguous();
}

void alias_set_storage() {
  auto a = torch::ones({4});
  auto b = torch::zeros({1024});
  a.set_(b);
  auto c = a.clone();
}

void alias_detach_shares() {
  auto a = torch::ones({1024});
  auto b = a.detach();
  auto c = b.view({32, 32});
}

struct Wrapper {
  torch::Tensor value;
  torch::Tensor &ref() { return value; }
};

void alias_member_through_reference() {
  Wrapper w{torch::ones({4})};
  w.ref() = torch::zeros({1024});
  auto c = w.value.clone();
}

// A name reassigned in a branch to a view of its own tensor still holds
// that storage after the branch, whichever way it went: what is allocated
// later adds to it. (The condition is true at run time, unknown to the
// analysis.)
void branch_view_keeps_storage() {
  auto x = torch::randn({1024, 1024});
  if (std::getenv("TMA_HOSTILE_UNSET") == nullptr)
    x = x.t();
  auto y = torch::zeros({1024});
}

// Reassigned in a branch to another tensor: after it, the name holds one
// of two storages, so what is live is unknown.
void branch_may_hold_either() {
  auto x = torch::randn({1024, 1024});
  auto y = torch::randn({256});
  if (std::getenv("TMA_HOSTILE_UNSET") == nullptr)
    x = y;
  auto z = torch::zeros({1024});
}

// In-place geometry changes go through the handle: `auto y = x;` is the same
// tensor, so x.unsqueeze_(1) reshapes y too; a view of x is another
// tensor and keeps its own sizes.
void alias_handle_sees_unsqueeze_() {
  auto x = torch::randn({2, 3});
  auto y = x;
  auto w = x.narrow(1, 0, 2);
  x.unsqueeze_(1);
  auto a = y.clone();
  auto b = w.clone();
  y.transpose_(0, 2);
  auto c = x.contiguous();
}

// A tensor in a vector is a handle too: resizing the name resizes the
// element.
void alias_vector_element_sees_squeeze_() {
  auto x = torch::randn({4, 1, 8});
  std::vector<torch::Tensor> v;
  v.push_back(x);
  x.squeeze_(1);
  auto a = v[0].clone();
}

// Pairs and structs of tensors changed member by member, through std::get
// or a reference: their elements are not followed after that (a whole
// reassignment is). A struct with a method is not read as one at all.
struct TensorPairStruct {
  torch::Tensor a;
  torch::Tensor b;
};
void reset_b_of(TensorPairStruct &p) { p.b = torch::zeros({1024}); }
TensorPairStruct make_pair_struct() { return {torch::ones({4}), torch::ones({2, 3})}; }

void tuple_member_assigned() {
  auto p = std::make_pair(torch::ones({4}), torch::ones({2}));
  p.second = torch::zeros({8, 8});
  auto c = p.second.clone();
  auto q = std::make_tuple(torch::ones({4}), torch::ones({2}));
  std::get<1>(q) = torch::zeros({8, 8});
  auto d = std::get<1>(q).clone();
}

void struct_member_changes() {
  TensorPairStruct s{torch::ones({4}), torch::ones({2})};
  s.b = torch::zeros({8, 8});
  auto c = s.b.clone();
  TensorPairStruct r{torch::ones({4}), torch::ones({2})};
  reset_b_of(r);
  auto d = r.b.clone();
  TensorPairStruct whole = make_pair_struct();
  auto e = whole.b.clone();
  whole = TensorPairStruct{torch::ones({5}), torch::ones({6})};
  auto f = whole.a.clone();
  auto [g, h] = make_pair_struct();
}

// A name that is one of two tensors of one shape, chosen at run time: its
// shape and dtype are known, which tensor it is is not. An in-place change
// of its geometry may change either one (a handle shares the TensorImpl),
// and a change to either may change it.
void choice_of_one_shape_sees_unsqueeze_() {
  auto a = torch::zeros({2, 3});
  auto b = torch::ones({2, 3});
  auto r = std::getenv("TMA_HOSTILE_UNSET") == nullptr ? a : b;
  auto r_copy = r.clone();
  r.unsqueeze_(0);
  auto a2 = a.clone();
  auto b2 = b.clone();
  auto c = torch::zeros({3, 4});
  auto d = torch::ones({3, 4});
  torch::Tensor s;
  if (std::getenv("TMA_HOSTILE_UNSET") == nullptr)
    s = c;
  else
    s = d;
  auto s_copy = s.contiguous();
  c.t_();
  auto s2 = s.clone();
  auto d2 = d.clone();
}

// A helper that returns its argument on one path and a copy on the other:
// the caller's result has the argument's shape, and may be the argument.
torch::Tensor argument_or_copy(const torch::Tensor &x) {
  if (std::getenv("TMA_HOSTILE_UNSET") == nullptr)
    return x;
  return x.clone();
}
void call_returns_argument_or_copy() {
  auto x = torch::zeros({4, 5});
  auto y = argument_or_copy(x);
  auto y2 = y * 2;
  y.unsqueeze_(0);
  auto x2 = x.clone();
}

// A name reassigned inside a loop holds, after it, the tensor from before
// the loop or one assigned in it: an in-place change of its geometry may
// be a change to any of them (here the loop runs once at run time, so b is
// reshaped).
void loop_choice_sees_unsqueeze_() {
  auto a = torch::zeros({2, 3});
  auto b = torch::ones({2, 3});
  auto r = a;
  int runs = std::getenv("TMA_HOSTILE_UNSET") == nullptr ? 1 : 0;
  for (int i = 0; i < runs; ++i)
    r = b;
  r.unsqueeze_(0);
  auto a2 = a.clone();
  auto b2 = b.clone();
}

// A recurrent layer whose forward is not followed (its input's dtype is
// chosen at run time) still returns distinct tensors: the output and the
// final states share no storage (h_n was once reported a view of out).
void unfollowed_recurrent_outputs_are_distinct() {
  torch::NoGradGuard no_grad;
  torch::nn::GRU gru(torch::nn::GRUOptions(5, 4).num_layers(2));
  auto seq = torch::randn({3, 2, 5}).to(
      std::getenv("TMA_HOSTILE_UNSET") == nullptr ? torch::kFloat : torch::kDouble);
  auto result = gru->forward(seq);
  auto out = std::get<0>(result);
  auto h_n = std::get<1>(result);
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(5, 3));
  auto state = lstm->forward(seq);
  auto lstm_out = std::get<0>(state);
  auto c_n = std::get<1>(std::get<1>(state));
}

// to() whose copy is not decided may return its input itself: an in-place
// change of the result's geometry may be one of the input's (here the
// dtypes match at run time, so a is reshaped).
void undecided_to_may_be_its_input() {
  auto a = torch::zeros({2, 3}).to(
      std::getenv("TMA_HOSTILE_UNSET") == nullptr ? torch::kFloat : torch::kDouble);
  auto b = a.to(torch::kFloat);
  b.unsqueeze_(0);
  auto a2 = a.clone();
}

// dropout with a training flag chosen at run time returns its input itself
// when not training.
void undecided_dropout_may_be_its_input() {
  auto a = torch::ones({2, 3});
  bool training = std::getenv("TMA_HOSTILE_UNSET") != nullptr;
  auto b = torch::dropout(a, 0.5, training);
  b.unsqueeze_(0);
  auto a2 = a.clone();
}

// contiguous() of a tensor whose layout is chosen at run time returns it
// itself when it is already contiguous.
void undecided_contiguous_may_be_its_input() {
  auto base = torch::ones({3, 2});
  auto a = std::getenv("TMA_HOSTILE_UNSET") == nullptr ? base.t().t() : base.t();
  auto b = a.contiguous();
  b.unsqueeze_(0);
  auto a2 = a.clone();
}

// A Dropout module whose mode is set in a branch returns its input itself
// in eval mode (here it is in eval mode at run time).
void dropout_module_mode_in_branch_may_be_its_input() {
  torch::nn::Dropout drop(0.5);
  if (std::getenv("TMA_HOSTILE_UNSET") == nullptr) {
    drop->eval();
  }
  auto a = torch::ones({2, 3});
  auto b = drop->forward(a);
  b.unsqueeze_(0);
  auto a2 = a.clone();
}

// requires_grad_ returns its receiver itself.
void requires_grad_returns_its_receiver() {
  auto a = torch::ones({2, 3});
  auto b = a.requires_grad_(false);
  b.unsqueeze_(0);
  auto a2 = a.clone();
}

// A method the analysis does not model may return its receiver itself
// (to_dense of a strided tensor does).
void unmodelled_method_may_be_its_receiver() {
  auto a = torch::ones({2, 3});
  auto b = a.to_dense();
  b.unsqueeze_(0);
  auto a2 = a.clone();
}

// narrow with a start the analysis cannot derive is still a view of its
// input: it shares the input's storage, dtype and device.
void narrow_of_unknown_start_is_a_view() {
  auto a = torch::ones({6, 3});
  int64_t start = std::getenv("TMA_HOSTILE_UNSET") == nullptr ? 2 : 1;
  for (int i = 0; i < 2; ++i)
    start = start + i;
  auto b = a.narrow(0, start, 2);
  auto c = b.select(1, start - 2);
  auto d = a.view(torch::kInt32);
}

// What a std::function returns may be its argument itself.
void std_function_may_return_its_argument() {
  std::function<torch::Tensor(torch::Tensor)> f = [](torch::Tensor t) { return t; };
  auto a = torch::ones({2, 3});
  auto b = f(a);
  b.unsqueeze_(0);
  auto a2 = a.clone();
}

// So may an element of a tuple it returns.
void std_function_tuple_element_may_be_its_argument() {
  std::function<std::tuple<torch::Tensor, torch::Tensor>(torch::Tensor)> f =
      [](torch::Tensor t) { return std::make_tuple(t, t * 2); };
  auto a = torch::ones({2, 3});
  auto p = f(a);
  auto b = std::get<0>(p);
  b.unsqueeze_(0);
  auto a2 = a.clone();
}

// Lists of sizes changed after their declaration are not read as declared
// (issue 35 item 6): through a non-const reference, a lambda, a range-for
// reference, an element's reference, a pointer, std::swap.
static void set_first(std::vector<int64_t> &v) { v[0] = 3; }

void alias_size_list_by_reference() {
  auto x = torch::randn({2, 3});
  std::vector<int64_t> s = {6};
  set_first(s);
  s.push_back(2);
  auto a = x.view(s);
}

void alias_size_list_in_lambda() {
  auto x = torch::randn({2, 3});
  std::vector<int64_t> s = {6, 1};
  [&] { s[0] = 3; s[1] = 2; }();
  auto a = x.view(s);
}

void alias_size_list_element_reference() {
  auto x = torch::randn({2, 3});
  std::vector<int64_t> s = {6, 1};
  int64_t &first = s[0];
  first = 2;
  s[1] = 3;
  auto a = x.view(s);
}

void alias_size_list_swapped() {
  auto x = torch::randn({2, 3});
  std::vector<int64_t> s = {6};
  std::vector<int64_t> t = {3, 2};
  std::swap(s, t);
  auto a = x.view(s);
}

void alias_size_list_read_only() {
  auto x = torch::randn({2, 3});
  std::vector<int64_t> s = {3, 2};
  auto sz = x.sizes();
  auto a = x.view(s);
  auto b = torch::zeros(sz);
  auto c = torch::zeros({sz[1], static_cast<int64_t>(s.size())});
}
