// Memory-format work the way vision extensions write it: NCHW <-> NHWC round
// trips, channel shuffles, pixel shuffles and im2col, with every size read
// from the input.
//
// Input shapes for the differential test: testdata/symbolic/inputs.json.
#include <torch/torch.h>

torch::Tensor nhwc_round_trip(const torch::Tensor& input) {
  TORCH_CHECK(input.dim() == 4, "expected NCHW");
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  auto nhwc = input.permute({0, 2, 3, 1});
  auto packed = nhwc.contiguous();
  auto rows = packed.view({N * H * W, C});
  auto normed = rows - rows.mean(1, true);
  auto back = normed.view({N, H, W, C}).permute({0, 3, 1, 2});
  auto nchw = back.contiguous();
  auto cl = input.contiguous(at::MemoryFormat::ChannelsLast);
  auto pooled = cl.mean({2, 3});
  return nchw + pooled.view({N, C, 1, 1});
}

// ShuffleNet's channel shuffle.
torch::Tensor channel_shuffle(const torch::Tensor& x, int64_t groups) {
  auto sizes = x.sizes();
  const int64_t batch = sizes[0], channels = sizes[1], height = sizes[2], width = sizes[3];
  TORCH_CHECK(channels % groups == 0, "channels must be divisible by groups");
  const int64_t per_group = channels / groups;
  auto grouped = x.view({batch, groups, per_group, height, width});
  auto swapped = grouped.transpose(1, 2);
  auto packed = swapped.contiguous();
  auto out = packed.view({batch, channels, height, width});
  auto flat = out.flatten(2);
  auto energy = flat.pow(2).sum(-1);
  return out;
}

// Depth-to-space by hand, and back.
torch::Tensor pixel_shuffle_manual(const torch::Tensor& x, int64_t r) {
  const auto N = x.size(0);
  const auto C = x.size(1) / (r * r);
  const auto H = x.size(2);
  const auto W = x.size(3);
  TORCH_CHECK(x.size(1) == C * r * r, "channels must be a multiple of r * r");
  auto split = x.reshape({N, C, r, r, H, W});
  auto moved = split.permute({0, 1, 4, 2, 5, 3});
  auto out = moved.reshape({N, C, H * r, W * r});
  auto unshuffled = out.view({N, C, H, r, W, r}).permute({0, 1, 3, 5, 2, 4}).reshape({N, C * r * r, H, W});
  auto diff = (unshuffled - x).abs();
  auto worst = diff.max();
  return out;
}

// A 3x3 convolution (stride 1, no padding) as unfold + matmul.
torch::Tensor conv_as_matmul(const torch::Tensor& input, const torch::Tensor& weight) {
  TORCH_CHECK(weight.size(1) == input.size(1), "channel mismatch");
  const auto N = input.size(0);
  const auto K = weight.size(0);
  const auto OH = input.size(2) - 2;
  const auto OW = input.size(3) - 2;
  auto patches = input.unfold(2, 3, 1).unfold(3, 3, 1);
  auto cols = patches.permute({0, 2, 3, 1, 4, 5}).reshape({N * OH * OW, -1});
  auto wmat = weight.view({K, -1});
  auto outmat = cols.mm(wmat.t());
  auto out = outmat.view({N, OH, OW, K}).permute({0, 3, 1, 2});
  auto dense = out.contiguous();
  return dense;
}

// Group normalisation without at::group_norm.
torch::Tensor group_norm_manual(const torch::Tensor& x, int64_t groups,
                                const torch::Tensor& gamma, const torch::Tensor& beta) {
  const int64_t N = x.size(0);
  const int64_t C = x.size(1);
  TORCH_CHECK(C % groups == 0, "C must be divisible by groups");
  auto g = x.view({N, groups, -1});
  auto mean = g.mean(-1, true);
  auto centered = g - mean;
  auto var = centered.pow(2).mean(-1, true);
  auto normed = centered * torch::rsqrt(var + 1e-5);
  auto y = normed.view_as(x);
  auto affine = y * gamma.view({1, C, 1, 1}) + beta.view({1, C, 1, 1});
  return affine;
}

// Evidence on some paths only: the permute runs when `transpose_input` is
// set, so x's rank (2) is stated as an assumption (`x.dim() == 2`), not
// proved: a caller that never sets it may pass any rank.
torch::Tensor maybe_transposed_copy(const torch::Tensor& x, bool transpose_input) {
  torch::Tensor y = x;
  if (transpose_input) {
    y = x.permute({1, 0});
  }
  auto packed = y.contiguous();
  auto doubled = x.clone() * 2;
  return packed.sum() + doubled;
}

// A parameter of unknown rank reassigned from a view of its own sizes
// (`z = z.view({z.size(0), z.size(1), 1, 1})`): while z still holds the
// caller's tensor, z.size(1) is the caller's; the view's result is z from
// then on.
torch::Tensor reassigned_to_image(torch::Tensor z) {
  z = z.view({z.size(0), z.size(1), 1, 1});
  auto doubled = z * 2;
  return doubled;
}

// contiguous() of a parameter of unknown rank returns it (it is stated
// contiguous, whatever its rank), so the flattening view of it is answered.
torch::Tensor flattened_distance(torch::Tensor x1, torch::Tensor x2) {
  x1 = x1.contiguous().view({x1.size(0), x1.size(1) * x1.size(2) * x1.size(3)});
  x2 = x2.contiguous().view({x2.size(0), x2.size(1) * x2.size(2) * x2.size(3)});
  torch::Tensor out = torch::sqrt(torch::sum(torch::pow(x1 - x2, 2.0), 1, true));
  return out;
}

// Reassigned inside a loop, or changed in place: x.size(0) after that is
// another tensor's, so nothing is said of the caller's sizes through it
// (x stays unknown; n is a run-time value of its own, the symbol n).
// Not in inputs.json (x is unknown on purpose); the snapshot keeps them so.
torch::Tensor reassigned_in_loop(torch::Tensor x, int64_t steps) {
  for (int64_t i = 0; i < steps; ++i) {
    x = x.view({x.size(0), -1}).narrow(1, 0, 1);
  }
  auto n = x.size(0);
  auto y = torch::zeros({n, 2});
  return y;
}

torch::Tensor unsqueezed_in_place(torch::Tensor x) {
  x.unsqueeze_(0);
  auto y = x.view({x.size(0), x.size(1), -1});
  return y;
}
