// Functions with parameters for --verify (tests/verify/test_verify_params.py):
// the tool makes their inputs from what the analysis knows and calls each
// with a few draws. The last ones cannot be called, each for its own reason.
#include <torch/torch.h>

// The draws must make x.size(2) a multiple of n_heads.
torch::Tensor split_heads(const torch::Tensor &x, int64_t n_heads) {
  TORCH_CHECK(x.dim() == 3, "x must be (B, T, C)");
  TORCH_CHECK(x.size(2) % n_heads == 0);
  const auto B = x.size(0);
  const auto T = x.size(1);
  const auto C = x.size(2);
  auto q = x.view({B, T, n_heads, C / n_heads}).transpose(1, 2);
  auto qc = q.contiguous();
  auto scores = at::zeros({B, n_heads, T, T}, x.options());
  return qc;
}

// Two tensors tied by a check, one with a dtype the code states.
torch::Tensor project(const torch::Tensor &x, const torch::Tensor &w) {
  TORCH_CHECK(x.dim() == 2);
  TORCH_CHECK(w.dim() == 2);
  TORCH_CHECK(w.size(1) == x.size(1));
  TORCH_CHECK(x.scalar_type() == at::kFloat);
  TORCH_CHECK(w.scalar_type() == at::kFloat);
  auto y = torch::matmul(x, w.t());
  auto s = y.sum(0);
  return s;
}

// An integer parameter used as a size; a view of a parameter.
torch::Tensor make_buffer(const torch::Tensor &like, int64_t n) {
  TORCH_CHECK(like.dim() == 1);
  auto buf = at::zeros({n, like.size(0)}, like.options());
  auto flat = buf.reshape({-1});
  auto head = like.narrow(0, 0, 1);
  return flat;
}

// The test binds reps with --assume: every draw has reps=3.
torch::Tensor tile_rows(const torch::Tensor &x, int64_t reps) {
  TORCH_CHECK(x.dim() == 2);
  auto t = x.repeat({reps, 1});
  auto tc = t.t().contiguous();
  return tc;
}

// The test gives v.size(0) a value this check refuses: not run.
torch::Tensor halve(const torch::Tensor &v) {
  TORCH_CHECK(v.dim() == 1);
  TORCH_CHECK(v.size(0) % 2 == 0);
  auto h = v.view({2, v.size(0) / 2});
  return h;
}

// Run on meta; on the CPU its totals would be compared, but its peak is
// unknown (y is reassigned under a condition on the input): not run there.
torch::Tensor grow(const torch::Tensor &x) {
  TORCH_CHECK(x.dim() == 1);
  auto y = x.clone();
  if (x.size(0) > 4)
    y = torch::cat({y, x});
  return y;
}

// Not run: a double is no input --verify makes.
torch::Tensor scale(const torch::Tensor &x, double s) {
  TORCH_CHECK(x.dim() == 1);
  auto y = x * s;
  return y;
}

// Not run: nothing states x's rank.
torch::Tensor unranked(const torch::Tensor &x) {
  auto y = x.clone();
  return y;
}

// Not run: a method.
struct Box {
  torch::Tensor run(const torch::Tensor &x) {
    TORCH_CHECK(x.dim() == 1);
    auto y = x + 1;
    return y;
  }
};

// Still called as before: no parameters.
void literal() {
  auto a = torch::ones({4, 8});
  auto b = a.t();
}
