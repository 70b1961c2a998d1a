// torch::nn models trained one step: forward, a loss, backward. The layers'
// parameters are allocated in the function (their constructors), their
// .grad buffers by the backward; what each layer saves for backward is
// freed during it.
//
// Measured by ctest training_differential_cpu (tests/differential).
#include <torch/torch.h>

// A user module, registered as a holder with TORCH_MODULE.
struct TinyNetImpl : torch::nn::Module {
  TinyNetImpl(int64_t in, int64_t hidden, int64_t out)
      : fc1(register_module("fc1", torch::nn::Linear(in, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, out))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    return fc2->forward(x);
  }
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};
TORCH_MODULE(TinyNet);

void linear_mse_backward() {
  torch::nn::Linear fc(64, 16);
  auto x = torch::randn({32, 64});
  auto y = torch::randn({32, 16});
  auto loss = torch::mse_loss(fc->forward(x), y);
  loss.backward();
}

void sequential_cross_entropy_backward() {
  torch::nn::Sequential net(torch::nn::Linear(48, 32), torch::nn::ReLU(),
                            torch::nn::Linear(32, 10));
  auto x = torch::randn({16, 48});
  auto target = torch::randint(0, 10, {16});
  auto logits = net->forward(x);
  auto loss = torch::nn::functional::cross_entropy(logits, target);
  loss.backward();
}

void user_module_backward() {
  TinyNet net(32, 64, 4);
  auto x = torch::randn({8, 32});
  auto y = torch::randn({8, 4});
  auto out = net->forward(x);
  auto loss = torch::mse_loss(out, y);
  loss.backward();
}

void conv_batchnorm_backward() {
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 8, 3).padding(1));
  torch::nn::BatchNorm2d bn(8);
  auto img = torch::randn({2, 3, 12, 12});
  auto f = torch::relu(bn->forward(conv->forward(img)));
  auto loss = f.mean();
  loss.backward();
}

void layernorm_backward() {
  torch::nn::Linear fc(32, 32);
  torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({32}));
  auto x = torch::randn({24, 32});
  auto h = norm->forward(fc->forward(x));
  auto loss = h.pow(2).sum();
  loss.backward();
}

void embedding_backward() {
  torch::nn::Embedding emb(100, 16);
  torch::nn::Linear head(16, 1);
  auto tokens = torch::randint(0, 100, {4, 12});
  auto e = emb->forward(tokens);
  auto out = head->forward(e.mean(1));
  auto loss = out.sum();
  loss.backward();
}

void lstm_backward() {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(8, 16).batch_first(true));
  auto x = torch::randn({2, 5, 8});
  auto result = lstm->forward(x);
  auto out = std::get<0>(result);
  auto loss = out.pow(2).mean();
  loss.backward();
}

// Linear's AddmmBackward0: the weight's gradient after a copy of the
// expanded gradient, the bias's summed to its shape.
void linear_sum_backward() {
  torch::nn::Linear fc(64, 16);
  auto x = torch::randn({32, 64});
  auto loss = fc->forward(x).sum();
  loss.backward();
}

void linear_without_bias_mean_backward() {
  torch::nn::Linear fc(torch::nn::LinearOptions(64, 16).bias(false));
  auto x = torch::randn({32, 64});
  auto loss = fc->forward(x).mean();
  loss.backward();
}

// Two layers: the second computes its input's gradient too; tanh's and
// pow's saved tensors go as their nodes run.
void two_linear_tanh_backward() {
  torch::nn::Linear fc1(24, 32);
  torch::nn::Linear fc2(32, 6);
  auto x = torch::randn({10, 24});
  auto loss = fc2->forward(torch::tanh(fc1->forward(x))).pow(2).mean();
  loss.backward();
}

// The same layers in a Sequential, with an mse loss against a target.
void sequential_mse_backward() {
  torch::nn::Sequential net(torch::nn::Linear(20, 40), torch::nn::ReLU(),
                            torch::nn::Linear(40, 4));
  auto x = torch::randn({16, 20});
  auto y = torch::randn({16, 4});
  auto loss = torch::mse_loss(net->forward(x), y);
  loss.backward();
}
