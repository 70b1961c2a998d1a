#include <torch/torch.h>

#include "conv_net.h"

void classify() {
  torch::NoGradGuard no_grad;
  ConvNet model(10);
  auto images = torch::randn({16, 1, 28, 28});
  // Before standardize: a function the analysis cannot see (without its
  // companion) may reshape `images` in place through its reference.
  auto flat = flatten_batch(images);
  auto inputs = standardize(images);
  auto logits = model->forward(inputs);
  auto best = logits.argmax(1);
}
