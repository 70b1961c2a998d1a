// Attention written as free functions, the way C++ extensions and
// hand-written forward() bodies write it: every size comes from the inputs
// (x.size(i), int64_t parameters), options follow the inputs, and the facts
// the code relies on are TORCH_CHECKs. No shape here is a literal.
//
// Input shapes for the differential test: testdata/symbolic/inputs.json.
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

// GPT-style attention: one fused projection, heads split with view +
// transpose, merged back with transpose + contiguous + view.
torch::Tensor multi_head_attention(const torch::Tensor& x, const torch::Tensor& w_qkv,
                                   const torch::Tensor& w_out, int64_t n_head) {
  TORCH_CHECK(x.dim() == 3, "x must be (B, T, C)");
  const auto B = x.size(0);
  const auto T = x.size(1);
  const auto C = x.size(2);
  TORCH_CHECK(C % n_head == 0, "C must be divisible by n_head");
  const auto D = C / n_head;
  auto qkv = torch::matmul(x, w_qkv.t());
  auto parts = qkv.chunk(3, -1);
  auto q = parts[0].view({B, T, n_head, D}).transpose(1, 2);
  auto k = parts[1].view({B, T, n_head, D}).transpose(1, 2);
  auto v = parts[2].view({B, T, n_head, D}).transpose(1, 2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(D));
  auto probs = torch::softmax(scores, -1);
  auto ctx = torch::matmul(probs, v);
  auto merged = ctx.transpose(1, 2).contiguous().view({B, T, C});
  auto out = torch::matmul(merged, w_out.t());
  return out;
}

// Causal attention over already split heads (B, H, T, D).
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v) {
  TORCH_CHECK(q.dim() == 4, "q must be (B, H, T, D)");
  TORCH_CHECK(k.sizes() == q.sizes() && v.sizes() == q.sizes(), "q, k, v must match");
  const int64_t T = q.size(2);
  const int64_t D = q.size(3);
  auto mask = torch::ones({T, T}, q.options().dtype(torch::kBool)).triu(1);
  auto att = torch::matmul(q, k.transpose(2, 3)) * (1.0 / std::sqrt(static_cast<double>(D)));
  auto masked = att.masked_fill(mask, -std::numeric_limits<float>::infinity());
  auto weights = torch::softmax(masked, -1);
  auto y = torch::matmul(weights, v);
  auto y_bt = y.transpose(1, 2);
  auto y_flat = y_bt.reshape({q.size(0), T, -1});
  return y_flat;
}

// Rotary position embedding on (B, T, H, D) with tables (T, D / 2).
torch::Tensor apply_rotary(const torch::Tensor& x, const torch::Tensor& cos_t,
                           const torch::Tensor& sin_t) {
  TORCH_CHECK(x.dim() == 4 && x.size(3) % 2 == 0, "x must be (B, T, H, D), D even");
  const auto half = x.size(3) / 2;
  auto x1 = x.narrow(-1, 0, half);
  auto x2 = x.narrow(-1, half, half);
  auto c = cos_t.view({1, cos_t.size(0), 1, half});
  auto s = sin_t.view({1, sin_t.size(0), 1, half});
  auto r1 = x1 * c - x2 * s;
  auto r2 = x1 * s + x2 * c;
  auto out = torch::cat({r1, r2}, -1);
  return out;
}

// Head splitting and merging as pure layout work: which of these copy?
torch::Tensor split_merge_heads(const torch::Tensor& x, int64_t n_head) {
  const auto B = x.size(0), T = x.size(1), C = x.size(2);
  auto heads = x.view({B, T, n_head, C / n_head});
  auto bhtd = heads.permute({0, 2, 1, 3});
  auto packed = bhtd.contiguous();
  auto flat = packed.view({B * n_head, T, C / n_head});
  auto back = flat.view({B, n_head, T, C / n_head}).permute({0, 2, 1, 3});
  auto merged = back.reshape({B, T, C});
  auto same = heads.reshape({B, T, C});
  auto scaled = merged.mul(0.5);
  return scaled + same;
}

// One decoding step with a key/value cache (B, H, S, D) written in place.
std::vector<torch::Tensor> kv_cache_step(torch::Tensor k_cache, torch::Tensor v_cache,
                                         const torch::Tensor& k_new,
                                         const torch::Tensor& v_new, int64_t pos) {
  TORCH_CHECK(pos >= 0 && pos < k_cache.size(2), "pos out of range");
  auto k_slot = k_cache.narrow(2, pos, 1);
  k_slot.copy_(k_new);
  auto v_slot = v_cache.narrow(2, pos, 1);
  v_slot.copy_(v_new);
  auto k_valid = k_cache.narrow(2, 0, pos + 1);
  auto v_valid = v_cache.narrow(2, 0, pos + 1);
  auto scores = torch::matmul(k_new, k_valid.transpose(-2, -1));
  auto probs = scores.softmax(-1);
  auto ctx = torch::matmul(probs, v_valid);
  return {ctx, k_cache, v_cache};
}
