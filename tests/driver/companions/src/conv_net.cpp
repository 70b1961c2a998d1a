#include "conv_net.h"

ConvNetImpl::ConvNetImpl(int64_t num_classes)
    : fc(register_module("fc", torch::nn::Linear(8 * 14 * 14, num_classes))) {
  register_module("features", features);
}

torch::Tensor ConvNetImpl::forward(torch::Tensor x) {
  x = features->forward(x);
  x = x.view({x.size(0), -1});
  return fc->forward(x);
}

torch::Tensor standardize(const torch::Tensor &images) {
  return (images - images.mean()) / 255.0;
}
