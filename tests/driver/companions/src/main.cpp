#include <torch/torch.h>

#include "conv_net.h"

void classify() {
  torch::NoGradGuard no_grad;
  ConvNet model(10);
  auto images = torch::randn({16, 1, 28, 28});
  auto inputs = standardize(images);
  auto logits = model->forward(inputs);
  auto flat = flatten_batch(images);
  auto best = logits.argmax(1);
}
