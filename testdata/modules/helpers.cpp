// Model code factored into helpers, the way forward functions and C++
// extensions are written: the shapes of what a helper returns come from
// the arguments at each call site (issue 13). Every size comes from the
// inputs; the helpers are called with the caller's tensors and integers.
//
// Input shapes for the differential test: testdata/modules/inputs.json.
#include <torch/torch.h>

#include <tuple>
#include <utility>

// (B, T, C) -> (B, H, T, C / H): a view of its argument.
static torch::Tensor split_heads(const torch::Tensor& x, int64_t n_head) {
  const auto B = x.size(0);
  const auto T = x.size(1);
  const auto C = x.size(2);
  return x.view({B, T, n_head, C / n_head}).transpose(1, 2);
}

// (B, H, T, D) -> (B, T, H * D): a copy, since the transpose is not
// contiguous.
static torch::Tensor merge_heads(const torch::Tensor& x) {
  const auto B = x.size(0);
  const auto H = x.size(1);
  const auto T = x.size(2);
  const auto D = x.size(3);
  return x.transpose(1, 2).contiguous().view({B, T, H * D});
}

// Zero mean, unit variance over the last dimension: a new tensor, with
// temporaries freed inside.
static torch::Tensor standardize(const torch::Tensor& x) {
  auto mean = x.mean(-1, true);
  auto centered = x - mean;
  auto var = (centered * centered).mean(-1, true);
  return centered / torch::sqrt(var + 1e-5);
}

// The first half of the rows of a new tensor: a view that keeps the
// whole product alive.
static torch::Tensor doubled_first_half(const torch::Tensor& x) {
  auto y = x * 2;
  return y.narrow(0, 0, x.size(0) / 2);
}

// Layout helpers: views that reorder the dimensions.
static torch::Tensor to_nhwc(const torch::Tensor& x) { return x.permute({0, 2, 3, 1}); }
static torch::Tensor to_nchw(const torch::Tensor& x) { return x.permute({0, 3, 1, 2}); }

static void scale_in_place(torch::Tensor& x, double s) { x.mul_(s); }

// Rebinds the caller's tensor through a pointer: the caller's x is no
// longer what it was, and the analysis must not say it is.
static void reshape_through(torch::Tensor* p) { *p = p->view({2, 8}); }

static torch::Tensor halve_rows(const torch::Tensor& x, int64_t times) {
  if (times == 0)
    return x;
  return halve_rows(x.narrow(0, 0, x.size(0) / 2), times - 1);
}

torch::Tensor attention_with_helpers(const torch::Tensor& x, const torch::Tensor& w,
                                     int64_t n_head) {
  TORCH_CHECK(x.dim() == 3, "x must be (B, T, C)");
  TORCH_CHECK(w.dim() == 2 && w.size(0) == x.size(2) && w.size(1) == x.size(2),
              "w must be (C, C)");
  TORCH_CHECK(x.size(2) % n_head == 0, "C must be divisible by n_head");
  auto q = split_heads(x, n_head);
  auto proj = torch::matmul(x, w);
  auto k = split_heads(proj, n_head);
  auto scores = torch::matmul(q, k.transpose(-2, -1));
  auto probs = torch::softmax(scores, -1);
  auto ctx = torch::matmul(probs, q);
  auto merged = merge_heads(ctx);
  return merged;
}

torch::Tensor normalized_block(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2, "x must be (N, C)");
  auto h = standardize(x);
  auto g = standardize(h.t());
  auto top = doubled_first_half(h);
  auto out = top + 1;
  return out;
}

torch::Tensor helpers_with_literals() {
  auto x = torch::randn({4, 16, 64});
  auto heads = split_heads(x, 8);
  auto back = merge_heads(heads);
  auto n = standardize(back);
  auto half = doubled_first_half(n);
  scale_in_place(half, 0.5);
  auto again = split_heads(half, 4);
  return again;
}

torch::Tensor recursive_helper(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2, "x must be a matrix");
  auto small = halve_rows(x, 2);
  auto doubled = small * 2;
  return doubled;
}

torch::Tensor channels_round_trip(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4, "x must be NCHW");
  auto nhwc = to_nhwc(x);
  auto dense = nhwc.contiguous();
  auto back = to_nchw(dense);
  auto flat = back.reshape({x.size(0), -1});
  auto scaled = standardize(flat);
  return scaled;
}

torch::Tensor pointer_helper() {
  auto x = torch::randn({16});
  reshape_through(&x);
  auto y = x.t();
  return y;
}

// Helpers returning a pair or a tuple of tensors (a VAE's encode, an
// RNN step): each element is followed, a view of an argument stays one.
// (They name no tensor: the harness records named tensors wherever they
// run.)
std::pair<torch::Tensor, torch::Tensor> split_stats(const torch::Tensor &x) {
  return {x.mean(-1, true), x - x.mean(-1, true)};
}

std::tuple<torch::Tensor, torch::Tensor> step_state(const torch::Tensor &h,
                                                    const torch::Tensor &c) {
  return std::make_tuple((c * 0.5 + h.tanh()).sigmoid(), c.narrow(1, 0, 2));
}

torch::Tensor helpers_returning_pairs() {
  auto x = torch::randn({4, 6});
  auto stats = split_stats(x);
  auto mu = stats.first;
  auto spread = stats.second;
  torch::Tensor h = torch::zeros({4, 3}), c = torch::ones({4, 3});
  torch::Tensor h2, c2;
  std::tie(h2, c2) = step_state(h, c);
  auto both = std::get<0>(step_state(h, c));
  return mu + spread.sum(-1, true) + both.sum();
}

// Integers a helper computes from its argument's sizes (PyTorch's
// tutorial's num_flat_features): the helper is read, not run.
int num_flat_features(torch::Tensor x) {
  auto sz = x.sizes().slice(1);
  int num_features = 1;
  for (auto s : sz) {
    num_features *= s;
  }
  return num_features;
}

int64_t channels_times(const torch::Tensor& x, int64_t factor) {
  int64_t n = x.size(1);
  n *= factor;
  return n;
}

torch::Tensor flattened_by_helpers() {
  auto x = torch::randn({2, 3, 4, 5});
  auto flat = x.view({-1, num_flat_features(x)});
  auto wide = x.reshape({2, channels_times(x, 20)});
  auto t = x.transpose(1, 2);
  auto copied = t.reshape({-1, num_flat_features(t)});
  return copied;
}

// The same helper on a parameter: its sizes are symbols.
torch::Tensor flatten_features(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4, "x must be NCHW");
  auto flat = x.view({x.size(0), num_flat_features(x)});
  auto scores = flat.sum(1);
  return scores;
}
