// torch::nn layers a function builds with literal options and runs, the
// way training scripts and tests write them (issue 13). The layers'
// parameters are storages of the function; forward is the layer's op.
//
// Input shapes for the differential test: testdata/modules/inputs.json.
#include <torch/torch.h>

torch::Tensor mlp_layers() {
  torch::nn::Linear fc1(784, 256);
  torch::nn::Linear fc2(torch::nn::LinearOptions(256, 10).bias(false));
  auto x = torch::randn({32, 784});
  auto h = fc1->forward(x);
  auto a = torch::relu(h);
  auto logits = fc2(a);
  return logits;
}

// Inference with gradients off: autograd keeps nothing for a backward pass
// (with gradients on, as in mlp_layers, what each layer's node saves
// outlives its statement while the graph lives).
torch::Tensor inference_without_gradients() {
  torch::NoGradGuard no_grad;
  torch::nn::Linear fc(64, 32);
  auto x = torch::randn({8, 64});
  auto y = fc->forward(torch::relu(x));
  return y;
}

torch::Tensor conv_layers() {
  torch::nn::Conv2d conv1(torch::nn::Conv2dOptions(3, 16, 3).stride(2).padding(1));
  torch::nn::Conv2d conv2(torch::nn::Conv2dOptions(16, 32, 3).groups(2).bias(false));
  auto img = torch::randn({4, 3, 32, 32});
  auto f1 = conv1->forward(img);
  auto f2 = conv2(f1);
  auto flat = f2.flatten(1);
  return flat;
}

torch::Tensor layer_on_a_parameter(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == 64, "x must be (N, 64)");
  torch::nn::Linear proj(64, 128);
  auto y = proj->forward(x);
  auto z = y.view({x.size(0), 2, 64}).transpose(0, 1).contiguous();
  return z;
}

torch::Tensor layer_moved_to_double() {
  torch::nn::Linear fc(16, 8);
  fc->to(torch::kDouble);
  auto x = torch::randn({4, 16}, torch::kDouble);
  auto y = fc->forward(x);
  return y;
}

// Modules whose parameters are not followed still allocate them: the
// totals are unknown, never the tensors' bytes alone.
struct TinyNet : torch::nn::Module {
  TinyNet() : fc(784, 64) { register_module("fc", fc); }
  torch::nn::Linear fc;
};

torch::Tensor user_module_built_here() {
  TinyNet model;
  auto x = torch::randn({8, 784});
  return x;
}

torch::Tensor sequential_built_here() {
  torch::nn::Sequential seq(torch::nn::Linear(784, 64), torch::nn::ReLU());
  torch::nn::Linear empty{nullptr};
  auto x = torch::randn({8, 784});
  return x;
}
