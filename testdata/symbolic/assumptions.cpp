// What the report assumes about sizes (issue 32, item 4): never against a
// fact the function checks, no stricter than a decision needs, and no
// rewriting of C++'s truncating division that would need one.
//
// Input shapes for the differential test: testdata/symbolic/inputs.json
// (sizes of 0 and 1 included where the code allows them).
#include <torch/torch.h>

// A checked single channel: x.size(1) == 1 is a fact, so no assumption
// may say x.size(1) >= 2 (--assume x.size(1)=1 is the only legal input).
torch::Tensor single_channel(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4 && x.size(1) == 1, "x must be (N, 1, H, W)");
  auto flat = x.squeeze(1);
  auto doubled = flat * 2;
  return doubled;
}

// The check comes after a copy whose layout depends on x.size(1): with
// x.size(1) == 1 the transpose is already contiguous and contiguous()
// returns it (a view of x, no copy).
torch::Tensor check_after_use(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 3, "x must be 3-d");
  auto t = x.transpose(0, 1).contiguous();
  TORCH_CHECK(x.size(1) == 1, "one row");
  auto y = t.view({-1});
  return y;
}

// A pooled length the way people write it: C++ truncates toward zero, so
// for x.size(0) == 2 the length is 1 and for 0 or 1 it is 0.
torch::Tensor truncated_length(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 1);
  auto k = (x.size(0) - 3) / 2 + 1;
  auto out = torch::zeros({k});
  return out;
}

// (x.size(0) - 1) / 2 truncates to 0 at x.size(0) == 0: the length is
// max(x.size(0) - 1, 0) / 2 + 1 exactly, or (x.size(0) + 1) / 2 on a
// non-empty x (stated).
torch::Tensor half_length(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 1);
  auto half = torch::ones({(x.size(0) - 1) / 2 + 1});
  return half;
}

// A size used only as a size: nothing about it needs assuming.
torch::Tensor zeros_of_length(int64_t n) {
  auto z = torch::zeros({n});
  return z;
}

// Sizes only a run knows: an integer read from a tensor's data (item) or
// from a container the analysis does not follow is a symbol named after
// its variable (as PyTorch names an unbacked size), so what is made from
// it has a formula over it.
torch::Tensor run_time_sizes(const torch::Tensor &lengths, const torch::Tensor &x) {
  TORCH_CHECK(x.dim() == 2);
  auto max_len = lengths.max().item<int64_t>();
  auto padded = torch::zeros({x.size(0), max_len, x.size(1)});
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < x.size(0); ++i) {
    if (i % 2 == 0) {
      kept.push_back(i);
    }
  }
  auto count = kept.size();
  auto rows = torch::empty({static_cast<int64_t>(count), x.size(1)}, x.options());
  auto joined = torch::cat({padded.flatten(0, 1), rows}, 0);
  return joined;
}

// Integers declared first and assigned once at the top level, C style
// (`long int N, H, W;` then `N = key.size(0);`): the assignment is their
// value from then on. One assigned in a branch or twice has none.
torch::Tensor declared_then_assigned(torch::Tensor query, torch::Tensor key, bool wide) {
  long int N, H, W, C;
  torch::Tensor query_flat, out, grid;
  N = key.size(0);
  H = key.size(2);
  W = key.size(3);
  query_flat = query.view({N, query.size(1), -1}).transpose(1, 2).contiguous();
  out = torch::zeros({N, H, W});
  if (wide) {
    C = 2 * W;
  } else {
    C = W;
  }
  grid = torch::ones({N, C});
  return out;
}
