// Sizes only a run knows (issue 35 item 4): nonzero(), argwhere(),
// masked_select() and boolean-mask indexing find a number of elements that
// depends on the data. The report names each count as PyTorch names an
// unbacked size (u0, u1, ...), bounded by the elements it looks at, and
// answers everything after it as a formula over it.
//
// Input shapes for the differential test: testdata/symbolic/inputs.json.
#include <torch/torch.h>

// Where the positive scores are, and the scores themselves.
torch::Tensor positive_scores(const torch::Tensor& scores) {
  TORCH_CHECK(scores.dim() == 2, "scores (N, C)");
  auto mask = scores > 0;
  auto where = mask.nonzero();
  auto rows = where.select(1, 0);
  auto picked = scores.masked_select(mask);
  auto doubled = picked * 2;
  auto total = picked.sum();
  return doubled;
}

// Rows whose first entry is positive, kept whole.
torch::Tensor keep_rows(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 3, "x (N, T, C)");
  auto keep = x.select(2, 0).select(1, 0) > 0;
  auto kept = x.index({keep});
  auto flat = kept.reshape({-1, x.size(2)});
  auto coords = torch::argwhere(keep);
  return flat;
}

// A mask over an image's pixels, applied to every channel.
torch::Tensor masked_pixels(const torch::Tensor& img) {
  TORCH_CHECK(img.dim() == 3, "img (C, H, W)");
  auto bright = img.mean(0) > 0;
  auto pixels = img.index({torch::indexing::Slice(), bright});
  auto per_channel = pixels.sum(1);
  auto count = bright.sum();
  return per_channel;
}

// The count used as a size: one box per selected element.
torch::Tensor boxes_for_hits(const torch::Tensor& heat) {
  TORCH_CHECK(heat.dim() == 1, "heat (N)");
  auto hits = heat.gt(0.5).nonzero();
  auto n = hits.size(0);
  auto boxes = torch::zeros({n, 4});
  auto idx = hits.squeeze(1);
  auto scores = heat.index_select(0, idx);
  return boxes;
}

// The distinct labels of a grid, how often each occurs, and its runs.
torch::Tensor label_counts(const torch::Tensor& labels) {
  TORCH_CHECK(labels.dim() == 2, "labels (N, M)");
  TORCH_CHECK(labels.scalar_type() == at::kLong, "int64 labels");
  auto result = torch::_unique2(labels, /*sorted=*/true, /*return_inverse=*/false,
                                /*return_counts=*/true);
  auto values = std::get<0>(result);
  auto inverse = std::get<1>(result);
  auto counts = std::get<2>(result);
  auto runs = torch::unique_consecutive(labels, /*return_inverse=*/true,
                                        /*return_counts=*/true);
  auto run_values = std::get<0>(runs);
  auto run_inverse = std::get<1>(runs);
  auto run_counts = std::get<2>(runs);
  auto distinct = std::get<0>(torch::_unique(labels));
  auto unasked = std::get<1>(torch::_unique(labels));
  return counts;
}
