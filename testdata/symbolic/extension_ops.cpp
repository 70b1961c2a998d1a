// Extension-style ops: outputs allocated with the input's options, index
// gathers, and dtype casts whose source dtype is only known from a check.
//
// Input shapes for the differential test: testdata/symbolic/inputs.json.
#include <torch/torch.h>

// ROI pooling in the style of torchvision's CPU kernels, with ATen doing the
// pooling: rois are (K, 5) rows of (batch index, x1, y1, x2, y2).
torch::Tensor roi_pool_forward(const torch::Tensor& input, const torch::Tensor& rois,
                               int64_t pooled_h, int64_t pooled_w) {
  TORCH_CHECK(input.dim() == 4, "input must be NCHW");
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5, "rois must be (K, 5)");
  const auto num_rois = rois.size(0);
  const auto channels = input.size(1);
  auto output = at::zeros({num_rois, channels, pooled_h, pooled_w}, input.options());
  auto argmax = at::zeros({num_rois, channels, pooled_h, pooled_w},
                          input.options().dtype(at::kLong));
  auto batch_idx = rois.select(1, 0).to(at::kLong);
  auto picked = input.index_select(0, batch_idx);
  auto pooled = at::adaptive_avg_pool2d(picked, {pooled_h, pooled_w});
  output.copy_(pooled);
  auto flat = output.view({num_rois, -1});
  return flat;
}

// An embedding lookup by hand, then through at::embedding.
torch::Tensor embedding_lookup(const torch::Tensor& table, const torch::Tensor& ids) {
  TORCH_CHECK(ids.scalar_type() == at::kLong, "ids must be int64");
  const auto B = ids.size(0);
  const auto L = ids.size(1);
  auto flat_ids = ids.reshape({-1});
  auto rows = table.index_select(0, flat_ids);
  auto emb = rows.view({B, L, table.size(1)});
  auto pooled = emb.sum(1);
  auto counts = torch::full({B, 1}, static_cast<double>(L), table.options());
  auto mean = pooled / counts;
  auto via_embedding = torch::embedding(table, ids);
  return mean;
}

// Negative log likelihood and accuracy with gather.
torch::Tensor gather_scores(const torch::Tensor& logits, const torch::Tensor& target) {
  TORCH_CHECK(logits.dim() == 2 && target.dim() == 1, "logits (N, C), target (N)");
  TORCH_CHECK(target.size(0) == logits.size(0), "one target per row");
  auto logp = torch::log_softmax(logits, 1);
  auto idx = target.unsqueeze(1);
  auto picked = logp.gather(1, idx);
  auto nll = picked.squeeze(1).neg();
  auto best = logits.argmax(1);
  auto correct = best.eq(target);
  auto acc = correct.to(torch::kFloat).mean();
  auto loss = nll.mean();
  return loss + acc;
}

// Half inputs, float accumulation: the widening casts cost the most.
torch::Tensor half_matmul_accumulate(const torch::Tensor& a, const torch::Tensor& b) {
  TORCH_CHECK(a.scalar_type() == torch::kHalf && b.scalar_type() == torch::kHalf,
              "a and b must be float16");
  TORCH_CHECK(a.size(1) == b.size(0), "inner dimensions must agree");
  auto a32 = a.to(torch::kFloat);
  auto b32 = b.to(torch::kFloat);
  auto prod = a32.mm(b32);
  auto back = prod.to(a.scalar_type());
  auto same = a.to(torch::kHalf);
  auto as_double = prod.to(torch::kDouble);
  auto also = a.to(b.options());
  return back;
}

// Outputs whose dtype follows the input's (float32 or float64 per call).
torch::Tensor scale_like(const torch::Tensor& x, const torch::Tensor& scale) {
  TORCH_CHECK(x.dim() == 2 && scale.dim() == 1 && scale.size(0) == x.size(1),
              "x (N, C), scale (C)");
  auto y = torch::empty_like(x);
  auto s = scale.to(x.scalar_type());
  auto acc = torch::zeros({x.size(0)}, x.options().dtype(torch::kDouble));
  auto ones = torch::ones(x.sizes(), x.options());
  auto prod = x * s;
  y.copy_(prod);
  auto rowsum = y.sum(1).to(torch::kDouble);
  acc.add_(rowsum);
  return y + ones;
}

// A convolution whose stride is an argument: the output's spatial sizes
// are (H + 2 - K) / stride + 1.
torch::Tensor strided_conv(const torch::Tensor& x, const torch::Tensor& w, int64_t stride) {
  TORCH_CHECK(x.dim() == 4 && w.dim() == 4, "NCHW input, OIHW weight");
  auto y = torch::conv2d(x, w, {}, stride, 1);
  auto act = torch::relu(y);
  auto flat = act.flatten(1);
  return flat;
}

// Sizes chosen by a bool parameter (`train ? kTrainSize : kTestSize`): the
// bool is the 0 or 1 C++ promotes it to, so either call is answered.
torch::Tensor sizes_by_mode(const torch::Tensor& x, bool train) {
  TORCH_CHECK(x.dim() == 2, "x must be (N, C)");
  const int64_t keep = train ? 3 : 1;
  auto head = x.narrow(0, 0, keep);
  auto buffer = torch::zeros({!train ? 4 : 8, x.size(1)}, x.options());
  auto total = head.sum(0) + buffer.sum(0);
  return total;
}

// Sizes read through locals nothing changes later (issue 35 item 6): a
// list built from sizes, a c10::ArrayRef of the input's sizes and its
// elements, a copy from sizes().vec(); the list that is changed after its
// declaration is not read as declared.
torch::Tensor sizes_through_locals(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 3, "x must be (B, T, C)");
  std::vector<int64_t> flat_shape = {x.size(0), -1};
  auto flat = x.reshape(flat_shape);
  auto sizes = x.sizes();
  auto scratch = torch::zeros(sizes, x.options());
  auto rows = torch::ones({sizes[0], sizes[2]}, x.options());
  auto copy = x.sizes().vec();
  auto merged = x.view({copy[0] * copy[1], copy[2]});
  std::vector<int64_t> changed = {x.size(0), x.size(1), x.size(2)};
  changed.push_back(1);
  auto widened = x.view(changed);
  return flat + rows.sum() + scratch.sum() + merged.sum() + widened.sum();
}
