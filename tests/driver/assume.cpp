// The fixture of test_assume.py (--assume SYM=VALUE): sizes from the
// caller, dtypes fixed by checks so that byte counts are plain formulas.
#include <torch/torch.h>

torch::Tensor split_heads(const torch::Tensor &x, int64_t n_heads) {
  TORCH_CHECK(x.dim() == 3, "x must be (B, T, C)");
  TORCH_CHECK(x.scalar_type() == torch::kHalf);
  TORCH_CHECK(x.size(2) % n_heads == 0);
  const auto B = x.size(0);
  const auto T = x.size(1);
  const auto C = x.size(2);
  auto heads = x.view({B, T, n_heads, C / n_heads});
  auto qc = x.transpose(1, 2).contiguous();
  return qc;
}

torch::Tensor transpose_copy(const torch::Tensor &a) {
  TORCH_CHECK(a.dim() == 2);
  TORCH_CHECK(a.scalar_type() == torch::kFloat);
  // On the CPU a transposed copy this large goes through a block buffer.
  TORCH_CHECK(a.device().is_cpu());
  auto y = a.t().contiguous();
  return y;
}

// A checked size of 1 (issue 32): the only legal value for x.size(1) is 1,
// so --assume x.size(1)=1 must give numbers, never "breaks x.size(1) >= 2".
torch::Tensor single_channel(const torch::Tensor &x) {
  TORCH_CHECK(x.dim() == 4 && x.size(1) == 1, "x must be (N, 1, H, W)");
  TORCH_CHECK(x.scalar_type() == torch::kFloat);
  auto flat = x.squeeze(1);
  auto doubled = flat * 2;
  return doubled;
}
