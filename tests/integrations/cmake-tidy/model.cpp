#include "shapes.h"

torch::Tensor transposed_copy() {
  auto x = torch::randn({kRows, 128});
  auto y = x.t().contiguous();
  return y;
}
