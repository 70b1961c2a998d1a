// Loops over blocks and layers, tiling, masking and a projection with
// literal weights: forward code whose shapes survive (or do not survive)
// a loop.
//
// Input shapes for the differential test: testdata/symbolic/inputs.json.
#include <torch/torch.h>

#include <algorithm>

// Rows in blocks of `block`; the last block may be shorter.
torch::Tensor blockwise_softmax(const torch::Tensor& x, int64_t block) {
  TORCH_CHECK(x.dim() == 2 && block > 0, "x (N, D), block > 0");
  const int64_t N = x.size(0);
  auto out = torch::empty_like(x);
  for (int64_t start = 0; start < N; start += block) {
    const int64_t len = std::min(block, N - start);
    auto rows = x.narrow(0, start, len);
    auto probs = torch::softmax(rows, 1);
    auto dest = out.narrow(0, start, len);
    dest.copy_(probs);
  }
  auto total = out.sum();
  return out;
}

// A stack of residual MLP blocks: h keeps its shape through the loop.
torch::Tensor residual_stack(const torch::Tensor& x, const torch::Tensor& w1,
                             const torch::Tensor& w2, int64_t n_layers) {
  auto h = x.clone();
  for (int64_t i = 0; i < n_layers; ++i) {
    auto up = torch::matmul(h, w1.t());
    auto act = torch::gelu(up);
    auto down = torch::matmul(act, w2.t());
    h = h + down;
  }
  auto norm = h.pow(2).mean(-1, true);
  auto out = h * torch::rsqrt(norm + 1e-6);
  return out;
}

// Cuts a (C, H, W) image into tile x tile patches, batched.
torch::Tensor tile_and_stack(const torch::Tensor& image, int64_t tile) {
  TORCH_CHECK(image.size(1) % tile == 0 && image.size(2) % tile == 0,
              "H and W must be multiples of tile");
  const auto C = image.size(0);
  const auto nh = image.size(1) / tile;
  const auto nw = image.size(2) / tile;
  auto tiles = image.view({C, nh, tile, nw, tile});
  auto ordered = tiles.permute({1, 3, 0, 2, 4});
  auto batch = ordered.reshape({nh * nw, C, tile, tile});
  auto means = batch.mean({1, 2, 3});
  auto flat = batch.flatten(1);
  auto gathered = torch::stack({batch[0], batch[nh * nw - 1]});
  return gathered;
}

// Mean over the valid positions of each sequence (lengths in [1, T]).
torch::Tensor masked_mean_pool(const torch::Tensor& hidden, const torch::Tensor& lengths) {
  const auto B = hidden.size(0);
  const auto T = hidden.size(1);
  auto positions = torch::arange(T, lengths.options()).unsqueeze(0);
  auto valid = positions.lt(lengths.unsqueeze(1));
  auto weights = valid.to(hidden.scalar_type()).unsqueeze(-1);
  auto summed = (hidden * weights).sum(1);
  auto denom = weights.sum(1).clamp_min(1.0);
  auto pooled = summed / denom;
  auto expanded = pooled.unsqueeze(1).expand({B, T, hidden.size(2)});
  return expanded;
}

// A projection whose weights are literals: only the batch is symbolic.
torch::Tensor project_features(const torch::Tensor& feats) {
  TORCH_CHECK(feats.dim() == 2 && feats.size(1) == 64, "feats must be (N, 64)");
  auto w = torch::randn({128, 64});
  auto b = torch::zeros({128});
  auto hidden = torch::linear(feats, w, b);
  auto act = torch::relu(hidden);
  auto w2 = torch::randn({16, 128}, torch::kFloat);
  auto out = act.matmul(w2.t());
  auto top = out.slice(1, 0, 8);
  auto packed = top.contiguous();
  return packed;
}

// Losses of tensors whose rank the code does not fix: a mean or a sum is
// 0-d whatever the operands' shapes; an unreduced loss is not answered.
torch::Tensor losses_of_any_rank(const torch::Tensor& pred, const torch::Tensor& target,
                                 const torch::Tensor& labels) {
  auto mse = torch::mse_loss(pred, target);
  auto l1 = torch::nn::functional::l1_loss(pred, target);
  torch::nn::SmoothL1Loss smooth;
  auto smoothed = smooth(pred, target);
  auto xent = torch::nn::functional::cross_entropy(pred, labels);
  auto total = mse + l1 + smoothed + xent;
  return total;
}

// Ranks that bounds fix: `feats.size(1)` alone runs on a 3-d feats too, and
// an expand to 3 sizes alone takes fewer dims; together they allow exactly
// 2. A helper's bounds (tiled_rows: its rows have 2 dims) are its caller's
// argument's, and through broadcasting ops they bound the tensors the
// argument is computed from.
torch::Tensor tiled_rows(const torch::Tensor& rows, int64_t copies) {
  return rows.unsqueeze(0).expand({copies, rows.size(0), rows.size(1)});
}

torch::Tensor rows_normalized_and_tiled(const torch::Tensor& feats,
                                        const torch::Tensor& bias, int64_t copies) {
  TORCH_CHECK(bias.dim() == 1, "bias must be a vector");
  auto shifted = feats + bias;
  auto norms = shifted.pow(2).sum(-1, true).sqrt();
  auto normalized = shifted / norms;
  auto tiled = tiled_rows(normalized, copies);
  auto flat = tiled.reshape({copies * feats.size(0), feats.size(1)});
  return flat;
}

// Dropout whose training flag is the caller's (`is_training()` in a
// module): the shape is answered either way; the storage is a new tensor
// when training and the input itself otherwise, so it is not.
torch::Tensor dropout_by_flag(const torch::Tensor& x, bool training) {
  TORCH_CHECK(x.dim() == 2, "x (N, C)");
  auto h = torch::relu(x);
  auto dropped = torch::dropout(h, 0.5, training);
  auto scaled = dropped * 2;
  return scaled;
}
