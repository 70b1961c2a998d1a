// A layer's parameters read through its holder (issue 35, item 10):
// `auto w = fc->weight;`, `fc->weight.t()`, `torch::matmul(x, fc->bias)`
// are handles on (or views of) the parameters, with their shapes; they
// leave the layer as constructed. A possible write through the handle (an
// in-place op, an assignment, a call of the file's own code) does not.
//
// Input shapes and constructor arguments for the differential test:
// testdata/modules/inputs.json.
#include <torch/torch.h>

torch::Tensor read_linear_weight() {
  torch::nn::Linear fc(4, 3);
  auto w = fc->weight;
  auto wt = fc->weight.t();
  TORCH_CHECK(w.size(1) == 4, "a (out, in) weight");
  auto x = torch::randn({2, 4});
  auto y = fc->forward(x);
  auto z = torch::matmul(x, wt) + fc->bias;
  auto s = y + z;
  return s;
}

// A member's parameter read in the module's own method.
struct BiasedHeadImpl : torch::nn::Module {
  explicit BiasedHeadImpl(int64_t width) {
    fc = register_module("fc", torch::nn::Linear(width, 3));
  }
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Linear fc{nullptr};
};

torch::Tensor BiasedHeadImpl::forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "x must be (batch, features)");
  auto b = fc->bias;
  auto y = fc->forward(x);
  return y - b;
}

// Changed in place through the holder (a weight initialisation): the
// layer is not followed.
torch::Tensor reinitialised_weight() {
  torch::nn::Linear fc(4, 3);
  {
    torch::NoGradGuard no_grad;
    fc->weight.normal_(0.0, 0.02);
  }
  auto x = torch::randn({2, 4});
  auto y = fc->forward(x);
  return y;
}
