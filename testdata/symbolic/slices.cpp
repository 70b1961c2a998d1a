// Slices whose bounds are sizes (`Slice(0, x.size(2))`), a parameter whose
// rank a check states before the parameter is assigned again, and the
// padding and upsampling ops of generative models over sizes known only
// at run time.
//
// Input shapes for the differential test: testdata/symbolic/inputs.json.
#include <torch/torch.h>

namespace F = torch::nn::functional;
using torch::indexing::None;
using torch::indexing::Slice;

// Rows [0, n) of a buffer one row longer, through slice() and index().
torch::Tensor rows_of_a_longer_buffer(const torch::Tensor &x) {
  TORCH_CHECK(x.dim() == 2);
  auto buffer = torch::zeros({x.size(0) + 1, x.size(1)});
  auto head = buffer.slice(0, 0, x.size(0));
  auto tail = buffer.index({Slice(1, None)});
  auto last_cols = x.index({Slice(), Slice(x.size(1) - 2, None)});
  return head + tail;
}

// PixelSNAIL's causal shift: pad one row on top, drop the last.
torch::Tensor shift_down(torch::Tensor horiz) {
  TORCH_CHECK(horiz.dim() == 4);
  horiz = F::pad(horiz, F::PadFuncOptions({0, 0, 1, 0}))
              .index({Slice(), Slice(), Slice(0, horiz.size(2)), Slice()});
  return horiz;
}

// Nearest upsampling by a whole factor, then bilinear back to the input's
// size.
torch::Tensor up_and_back(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 4);
  auto up = F::interpolate(x, F::InterpolateFuncOptions()
                                  .scale_factor(std::vector<double>{2, 2})
                                  .mode(torch::kNearest));
  auto back = F::interpolate(up, F::InterpolateFuncOptions()
                                     .size(std::vector<int64_t>{x.size(2), x.size(3)})
                                     .mode(torch::kBilinear)
                                     .align_corners(false));
  return back;
}
