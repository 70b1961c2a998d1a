// Its companion (clash.cpp) defines a static scale() too: the two do not
// compile as one unit, so this file is analysed alone.
#include <torch/torch.h>

#include "clash.h"

static int64_t scale() { return 3; }

int64_t tripled(int64_t n) { return n * scale(); }

void use_doubled() {
  auto x = torch::randn({4, 3});
  auto y = doubled(x);
}
