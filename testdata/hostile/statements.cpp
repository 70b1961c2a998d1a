// Hostile corpus, part 1: every statement form of C++17 around tensor code.
//
// Each function either is evaluated exactly or leaves its totals unknown
// with the reason; a form the analysis skips must never print 0 B. Every
// parameterless function was run on real LibTorch (measured-cpu.json): its
// shapes, storage bytes, allocations and peak judge the report.
// Sizes are 1024 x 1024 float32 (4 MiB) so a skipped allocation is obvious.
#include <torch/torch.h>


// ---- selection statements ---------------------------------------------------

void stmt_try_block() {
  try {
    auto x = torch::ones({1024, 1024});
    auto y = x.t();
  } catch (const std::exception &) {
  }
}

void stmt_try_catch_allocates() {
  auto keep = torch::zeros({256});
  try {
    auto x = torch::ones({1024, 1024});
    throw std::runtime_error("boom");
  } catch (const std::runtime_error &) {
    auto fallback = torch::zeros({1024});
  }
  auto after = keep.clone();
}

void stmt_function_try_block() try {
  auto x = torch::ones({1024, 1024});
} catch (...) {
}

void stmt_switch_body() {
  int mode = 1;
  switch (mode) {
  case 0:
    break;
  case 1: {
    auto x = torch::ones({1024, 1024});
    break;
  }
  default:
    break;
  }
}

void stmt_switch_fallthrough() {
  auto acc = torch::zeros({1024});
  switch (2) {
  case 2:
    acc = acc + 1;
    [[fallthrough]];
  case 3:
    acc = acc * 2;
    break;
  }
  auto after = acc.clone();
}

void stmt_switch_with_init() {
  switch (auto n = torch::ones({1024, 1024}).size(0); n) {
  case 1024: {
    auto x = torch::zeros({n});
    break;
  }
  default:
    break;
  }
}

void stmt_if_with_init() {
  if (auto x = torch::ones({1024, 1024}); x.dim() == 2) {
    auto y = x.t();
  }
}

void stmt_if_constexpr() {
  if constexpr (sizeof(float) == 4) {
    auto x = torch::ones({1024, 1024});
  } else {
    auto x = torch::ones({8});
  }
}

void stmt_if_else_chain() {
  auto x = torch::randn({1024});
  int k = 3;
  if (k == 1) {
    x = x.view({32, 32});
  } else if (k == 2) {
    x = x.view({16, 64});
  } else {
    x = x.view({64, 16});
  }
  auto y = x.contiguous();
}

// ---- labels and jumps -------------------------------------------------------

void stmt_labelled() {
  int tries = 0;
start:
  auto x = torch::ones({1024, 1024});
  if (++tries < 1)
    goto start;
}

void stmt_goto_forward() {
  auto x = torch::ones({1024});
  goto done;
done:
  auto y = x * 2;
}

void stmt_loop_break_continue() {
  auto x = torch::randn({64});
  for (int i = 0; i < 4; ++i) {
    if (i == 1)
      continue;
    if (i == 3)
      break;
    auto row = x.narrow(0, i, 1);
  }
}

// ---- iteration statements ---------------------------------------------------

void stmt_while_loop() {
  int i = 0;
  while (i < 2) {
    auto x = torch::ones({1024, 1024});
    ++i;
  }
}

void stmt_do_while() {
  int i = 0;
  do {
    auto x = torch::ones({1024, 1024});
  } while (++i < 2);
}

void stmt_range_for_over_list() {
  std::vector<torch::Tensor> parts = torch::ones({1024, 1024}).chunk(4);
  for (const auto &p : parts) {
    auto s = p.sum();
  }
}

void stmt_for_without_body_braces() {
  auto x = torch::zeros({1024});
  for (int i = 0; i < 3; ++i)
    x.add_(1);
  auto y = x.clone();
}

// ---- declaration forms ------------------------------------------------------

void stmt_structured_binding_max() {
  auto x = torch::randn({1024, 1024});
  auto [m, i] = torch::max(x, 1);
}

void stmt_std_tie() {
  auto x = torch::randn({1024, 1024});
  torch::Tensor m, i;
  std::tie(m, i) = torch::max(x, 1);
}

void stmt_std_get() {
  auto x = torch::randn({1024, 1024});
  auto r = torch::max(x, 1);
  auto values = std::get<0>(r);
}

struct Holder {
  torch::Tensor t;
};

void stmt_aggregate_init() {
  Holder h{torch::randn({1024, 1024})};
}

void stmt_new_tensor() {
  auto *p = new torch::Tensor(torch::randn({1024, 1024}));
  delete p;
}

void stmt_void_cast() { (void)torch::zeros({1024, 1024}); }

void stmt_static_cast_void() { static_cast<void>(torch::ones({1024, 1024})); }

void stmt_conditional_initializer() {
  bool wide = true;
  auto x = wide ? torch::zeros({1024, 1024}) : torch::zeros({16});
}

void stmt_conditional_constant() {
  auto x = true ? torch::zeros({1024, 1024}) : torch::zeros({16});
}

void stmt_comma_expression() {
  auto x = torch::zeros({1024});
  auto y = (x.add_(1), x.mul(2));
}

void stmt_static_local() {
  static auto cached = torch::ones({1024, 1024});
  auto v = cached.t();
}

void stmt_typedef_and_using() {
  using T = torch::Tensor;
  typedef torch::Tensor U;
  T a = torch::ones({1024});
  U b = a.view({32, 32});
}

void stmt_nested_blocks() {
  auto outer = torch::ones({1024});
  {
    {
      auto deep = torch::ones({1024, 1024});
    }
    auto mid = torch::ones({1024});
  }
  auto after = outer.clone();
}

void stmt_empty_and_null() {
  ;
  auto x = torch::ones({1024});
  ;
  {}
  auto y = x.view({32, 32});
}

void stmt_vector_of_tensors() {
  std::vector<torch::Tensor> v;
  v.push_back(torch::ones({1024, 1024}));
  v.emplace_back(torch::zeros({1024}));
}

void stmt_pair_of_tensors() {
  std::pair<torch::Tensor, torch::Tensor> p{torch::ones({1024}),
                                            torch::zeros({1024, 1024})};
}

void stmt_tuple_return_ignored() { torch::max(torch::randn({1024, 1024}), 1); }

void stmt_discarded_value() { torch::ones({1024, 1024}); }

void stmt_assignment_chain() {
  torch::Tensor a, b;
  a = b = torch::ones({1024, 1024});
  auto c = a.t();
}

void stmt_compound_assignment() {
  auto x = torch::ones({1024});
  x += 1;
  x *= torch::ones({1024});
  auto y = x.view({32, 32});
}

// The body comes from another file; every line the report gives is this
// file's (issue 10 item 22).
void stmt_body_from_an_include() {
  int64_t n_from_the_caller = 7;
#include "included_body.inc"
}

// ---- loops iterated to a fixpoint ------------------------------------------

// Carried tensors that keep their shape: known inside and after the loop.
void stmt_loop_fixpoint() {
  auto w = torch::randn({8, 8});
  auto h = torch::randn({2, 8});
  for (int i = 0; i < 3; ++i) {
    auto up = torch::matmul(h, w);
    h = h + up.tanh();
  }
  auto sq = torch::randn({4, 4});
  for (int i = 0; i < 2; ++i)
    sq = sq.t().contiguous(); // same shape and strides, a new tensor
  auto v = sq.t();
  int n = 0;
  while (n < 3) {
    v = v.t().t(); // a view of the same storage, as before
    ++n;
  }
  auto last = v.contiguous();
}

// Carried tensors whose shape or layout changes: unknown after the loop,
// and the names inside that read them unknown too.
void stmt_loop_no_fixpoint() {
  auto sq = torch::randn({4, 4});
  for (int i = 0; i < 3; ++i)
    sq = sq.t(); // a square's transpose: same shape, other strides
  auto c = sq.contiguous();
  auto grow = torch::zeros({1, 2});
  for (int i = 0; i < 2; ++i) {
    auto seen = grow.sum(0);
    grow = torch::cat({grow, torch::ones({1, 2})});
  }
  auto g = grow.clone();
  auto alias = torch::randn({3});
  auto other = alias;
  for (int i = 0; i < 2; ++i)
    other.unsqueeze_(0);
  auto a = alias.clone();
}

// Integer helpers: read when their bodies are integer arithmetic over
// sizes; a branch, a tensor op or a value the integer type cannot hold
// leaves the size not derived.
int int_helper_rows(const torch::Tensor& x) {
  int64_t rows = x.size(0);
  rows += 0;
  return rows;
}
int int_helper_branch(const torch::Tensor& x) {
  if (x.dim() > 2)
    return 3;
  return 2;
}
int int_helper_side_effect(torch::Tensor x) {
  x.add_(1);
  return 2;
}
int int_helper_narrow(const torch::Tensor& x) {
  int16_t n = 1;
  for (auto s : x.sizes())
    n *= s; // 300 * 300 does not fit: converted modulo 2^16
  return n;
}
void stmt_integer_helpers() {
  auto x = torch::zeros({2, 3});
  auto rows = x.view({int_helper_rows(x), -1});
  auto a = x.view({int_helper_branch(x), -1});
  auto b = x.view({int_helper_side_effect(x), -1});
  auto h = torch::empty({300, 300, 0});
  auto c = h.view({int_helper_narrow(h), 0});
}
