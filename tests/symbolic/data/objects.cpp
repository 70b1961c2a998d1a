// Objects the differential test cannot check: why a user module's
// construction is not followed into its methods, and a recurrent layer
// whose parameters are not listed (test_objects.py reads the reasons).
#include <torch/torch.h>

struct SmallNetImpl : torch::nn::Module {
  SmallNetImpl();
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(SmallNet);

SmallNetImpl::SmallNetImpl() : fc(4, 3) { register_module("fc", fc); }

torch::Tensor SmallNetImpl::forward(torch::Tensor x) {
  auto y = fc->forward(x);
  return y;
}

// Rebound to a new object (then loaded from a file, in real code).
void reassigned_module() {
  SmallNet net = SmallNet();
  auto a = net->forward(torch::randn({2, 4}));
  net = SmallNet();
  auto b = net->forward(torch::randn({2, 4}));
}

// Handed to a function that may change its parameters.
void module_passed_on() {
  SmallNet net;
  torch::save(net, "/nonexistent/net.pt");
  auto c = net->forward(torch::randn({2, 4}));
}

// Constructed and only run: followed.
void module_only_run() {
  SmallNet net;
  auto d = net->forward(torch::randn({2, 4}));
}

// An LSTM whose depth is a parameter: forward is followed, its parameters
// (and an optimizer's state over them) are not.
void lstm_of_depth(int64_t layers) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(4, 6).num_layers(layers));
  torch::optim::Adam opt(lstm->parameters());
  auto seq = torch::randn({5, 2, 4});
  auto result = lstm->forward(seq);
  auto out = std::get<0>(result);
  auto c_n = std::get<1>(std::get<1>(result));
  out.sum().backward();
  opt.step();
}
