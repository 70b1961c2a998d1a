// Control flow and functions that are not `void f()`: scopes, loops,
// branches, methods, lambdas and tensor parameters.
#include <torch/torch.h>

// A nested scope releases its storage at its end: the peak is the larger
// of the two blocks, not their sum.
void nested_scopes() {
  auto keep = torch::zeros({256});
  {
    auto inner = torch::zeros({1024});
    auto view = inner.narrow(0, 0, 10);
  }
  {
    auto other = torch::zeros({512});
  }
  auto after = torch::ones({128});
}

// A loop that allocates each iteration: per-iteration shapes are known,
// the totals are not.
void loop_allocates() {
  auto acc = torch::zeros({4});
  for (int i = 0; i < 3; ++i) {
    auto step = torch::ones({4});
    acc = acc + step;
  }
  auto after = acc.clone();
}

// A loop that only views: totals stay known.
void loop_views() {
  auto x = torch::randn({4, 4});
  for (int i = 0; i < 4; ++i) {
    auto row = x.select(0, i);
  }
  auto after = x.t();
}

void branch_assigns() {
  auto x = torch::randn({2, 3});
  bool flip = true;
  if (flip) {
    x = x.t();
  }
  auto y = x.contiguous();
}

void temporaries_peak() {
  auto x = torch::randn({1000});
  auto y = (x + 1).sum();
}

void unknown_call_by_reference(torch::Tensor &t);
void passes_by_reference() {
  auto x = torch::randn({8});
  unknown_call_by_reference(x);
  auto y = x.view({2, 4});
}

void unmodelled_in_place() {
  auto x = torch::randn({8});
  x.resize_({2, 2});
  auto y = x.contiguous();
}

struct Net {
  torch::Tensor w = torch::randn({4, 4});
  torch::Tensor forward(torch::Tensor input) {
    auto h = torch::matmul(input, w);
    auto local = torch::randn({3, 4});
    auto out = torch::matmul(local, w.t());
    return out;
  }
};

void with_lambda() {
  auto x = torch::randn({3, 4});
  auto f = [&](int64_t n) {
    auto inner = torch::zeros({n, 2});
    auto fixed = torch::ones({2, 2});
    auto captured = x.t();
    return fixed;
  };
  auto r = f(2);
}

torch::Tensor takes_params(const torch::Tensor &a, int64_t n) {
  auto b = a.t();
  auto c = torch::zeros({n});
  auto d = torch::zeros({3, 3});
  auto e = d.matmul(d);
  return e;
}

// Followed into from its caller: it rebinds the caller's tensor, which the
// caller then no longer knows (the new value is not carried back yet).
void unknown_call_by_reference(torch::Tensor &t) { t = t.view({4, 2}); }

// Symbolic integers the analysis must not turn into sizes (issue 12): a
// divisor that is 0 whatever n is, and a parameter the code changes.
torch::Tensor symbolic_hostile(const torch::Tensor &x, int64_t n, int64_t m) {
  TORCH_CHECK(x.dim() == 2);
  auto zero_div = torch::zeros({x.size(0) / (n - n)});
  m += 1;
  auto changed = torch::zeros({m});
  auto kept = torch::zeros({x.size(1) / n});
  return kept;
}

// Each arm of a branch starts from the state before the branch: the else
// arm does not see the then arm's assignment, in-place reshape or
// push_back. (The condition is false at run time, unknown to the analysis.)
void branch_else_starts_before_then() {
  auto x = torch::randn({3, 4});
  auto u = torch::randn({2, 5});
  std::vector<torch::Tensor> v;
  v.push_back(torch::randn({6}));
  if (std::getenv("TMA_HOSTILE_UNSET") != nullptr) {
    x = torch::zeros({5});
    u.unsqueeze_(0);
    v.push_back(torch::zeros({2}));
  } else {
    auto a = x.t();
    auto b = u.clone();
    auto c = v.back().clone();
  }
}

// A case entered by its label does not see the cases above it.
void switch_case_starts_before_others() {
  auto x = torch::randn({3, 4});
  switch (std::getenv("TMA_HOSTILE_UNSET") != nullptr ? 1 : 2) {
  case 1:
    x.t_();
    break;
  case 2: {
    auto a = x.clone();
    break;
  }
  default:
    break;
  }
}

// A loop that reshapes in place: after it the shape depends on how many
// times it ran.
void loop_reshapes_in_place() {
  auto x = torch::randn({3});
  for (int i = 0; i < std::atoi("2"); ++i)
    x.unsqueeze_(0);
  auto a = x.clone();
}

// A loop whose carried tensor grows each iteration: no fixpoint, so what
// it holds after the loop is unknown; one that keeps its shape is known.
void loop_grows() {
  auto acc = torch::zeros({1, 3});
  for (int i = 0; i < 3; ++i) {
    auto row = torch::ones({1, 3});
    acc = torch::cat({acc, row});
  }
  auto after = acc.clone();
  auto h = torch::randn({2, 3});
  for (int i = 0; i < 2; ++i) {
    auto step = h.relu();
    h = h + step;
  }
  auto kept = h.t();
}

// Moving a tensor leaves the name it came from undefined (the TensorImpl
// goes to the new handle): by move construction, direct initialisation or
// move assignment alike.
void moved_from_handles() {
  auto x = torch::randn({3});
  auto y = std::move(x);
  auto z = x;
  auto a = torch::randn({2, 2});
  torch::Tensor b(std::move(a));
  auto c = a;
  auto d = torch::randn({4});
  torch::Tensor e;
  e = std::move(d);
  auto f = d;
}

// A counted loop that appends one tensor per iteration leaves that many in
// the list: the same tensor each time (a name from before the loop), a
// new one of the same layout, or a view of a storage from before it.
void lists_built_in_loops() {
  auto x = torch::randn({5, 2});
  std::vector<torch::Tensor> powers;
  for (int64_t i = 0; i < 4; ++i)
    powers.push_back(x.pow(i + 1));
  auto features = torch::cat(powers, 1);
  auto last = powers[3];
  std::vector<torch::Tensor> same;
  same.push_back(x);
  for (int i = 1; i <= 3; i++)
    same.push_back(x);
  auto stacked = torch::stack(same);
  std::vector<torch::Tensor> views;
  for (int i = 0; i != 2; i += 1) {
    std::vector<torch::Tensor> parts;
    parts.push_back(x.t());
    views.emplace_back(parts[0]);
  }
  auto both = torch::cat(views, 0);
  auto second = views[1];
  std::vector<torch::Tensor> none;
  for (int i = 0; i < 0; ++i)
    none.push_back(x.exp());
  none.push_back(x);
  auto one = torch::stack(none);
}

// Loops whose appends the analysis cannot count: each list after them is
// unknown, never a wrong count.
void lists_loops_cannot_count(int64_t n) {
  auto x = torch::randn({3, 2});
  std::vector<torch::Tensor> skipped;
  for (int i = 0; i < 4; ++i) {
    if (i == 1)
      continue;
    skipped.push_back(x * i);
  }
  auto a = torch::cat(skipped);
  std::vector<torch::Tensor> stepped;
  for (int i = 0; i < 6; ++i) {
    stepped.push_back(x + 1);
    i += 1;
  }
  auto b = torch::cat(stepped);
  std::vector<torch::Tensor> some;
  for (int i = 0; i < 4; ++i)
    if (i % 2)
      some.push_back(x);
  auto c = torch::cat(some);
  std::vector<torch::Tensor> doubling;
  doubling.push_back(x);
  for (int i = 0; i < 3; ++i)
    doubling.push_back(torch::cat({doubling.back(), doubling.back()}));
  auto d = doubling.back();
  std::vector<torch::Tensor> nested;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      nested.push_back(x.sum(0));
  auto e = torch::stack(nested);
  std::vector<torch::Tensor> counted_by_n;
  for (int64_t i = 0; i < n; ++i)
    counted_by_n.push_back(x);
  auto f = torch::cat(counted_by_n);
  int64_t bound = 3;
  std::vector<torch::Tensor> moving_bound;
  for (int64_t i = 0; i < bound; ++i) {
    moving_bound.push_back(x);
    bound = 2;
  }
  auto g = torch::cat(moving_bound);
}

// A list keeps what was appended to it in an inner block alive as long as
// the list lives: the peak at `big` counts t's 400 B.
void list_outlives_block() {
  std::vector<torch::Tensor> kept;
  {
    auto t = torch::randn({100});
    kept.push_back(t);
  }
  auto big = torch::randn({200});
}

// A goto into a loop's body runs it, even when the loop counts zero
// trips: what follows the jump is not followed (unknown, never the value
// before it).
void goto_into_loop_body() {
  auto x = torch::randn({2});
  int i = 0;
  goto inside;
  for (i = 0; i < 0; ++i) {
  inside:
    x = torch::randn({5});
  }
  auto y = x.clone();
}
