// A standard attention forward in a torch::nn module (issue 32, item 4).
// The only evidence of x's rank is the Linear it goes through, which takes
// any rank >= 1; the 2-d input Linear is documented for would make
// x.size(2) throw, so the report must not answer on it: it tries the next
// rank, under which every statement succeeds.
//
// Input shapes and constructor arguments for the differential test:
// testdata/modules/inputs.json.
#include <torch/torch.h>

#include <cmath>

struct SelfAttentionImpl : torch::nn::Module {
  explicit SelfAttentionImpl(int64_t d_model)
      : qkv_proj(d_model, 3 * d_model), out_proj(d_model, d_model) {
    register_module("qkv_proj", qkv_proj);
    register_module("out_proj", out_proj);
  }
  torch::Tensor forward(torch::Tensor x);

  static constexpr int64_t kHeads = 2;
  torch::nn::Linear qkv_proj, out_proj;
};
TORCH_MODULE(SelfAttention);

torch::Tensor SelfAttentionImpl::forward(torch::Tensor x) {
  auto B = x.size(0), T = x.size(1), D = x.size(2);
  const auto H = kHeads;
  auto qkv = qkv_proj->forward(x).view({B, T, 3, H, D / H});
  auto q = qkv.select(2, 0).transpose(1, 2);
  auto k = qkv.select(2, 1).transpose(1, 2);
  auto v = qkv.select(2, 2).transpose(1, 2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(D / H));
  auto att = torch::softmax(scores, -1);
  auto y = torch::matmul(att, v).transpose(1, 2).contiguous().view({B, T, D});
  auto out = out_proj->forward(y);
  return out;
}
