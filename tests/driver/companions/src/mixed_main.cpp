// Two companions: conv_net.cpp compiles with this file, broken.cpp does not.
#include <torch/torch.h>

#include "broken.h"
#include "conv_net.h"

void classify_batch() {
  torch::NoGradGuard no_grad;
  ConvNet model(4);
  auto images = torch::randn({8, 1, 28, 28});
  auto logits = model->forward(images);
}
