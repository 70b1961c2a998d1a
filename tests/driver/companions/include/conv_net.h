// A module declared in a header and defined in its companion source
// (src/conv_net.cpp), the layout of most LibTorch projects.
#pragma once

#include <torch/torch.h>

class ConvNetImpl : public torch::nn::Module {
public:
  explicit ConvNetImpl(int64_t num_classes = 10);
  torch::Tensor forward(torch::Tensor x);

private:
  torch::nn::Sequential features{
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 8, 3).padding(1)),
      torch::nn::ReLU(), torch::nn::MaxPool2d(2)};
  torch::nn::Linear fc;
};

TORCH_MODULE(ConvNet);

/// Defined in src/conv_net.cpp.
torch::Tensor standardize(const torch::Tensor &images);

/// Defined here: a project header's inline body.
inline torch::Tensor flatten_batch(const torch::Tensor &x) {
  return x.reshape({x.size(0), -1});
}
