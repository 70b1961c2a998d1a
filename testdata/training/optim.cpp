// Training steps with optimizers: zero_grad, backward, step; a loop of two
// iterations; an eval step under NoGradGuard; detach(). The optimizer's
// state (momentum buffers, Adam's exp_avg and exp_avg_sq) is allocated by
// the first step().
//
// Measured by ctest training_differential_cpu (tests/differential).
#include <torch/torch.h>

void sgd_momentum_step() {
  torch::nn::Linear fc(32, 8);
  torch::optim::SGD opt(fc->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  auto x = torch::randn({16, 32});
  auto y = torch::randn({16, 8});
  opt.zero_grad();
  auto loss = torch::mse_loss(fc->forward(x), y);
  loss.backward();
  opt.step();
}

void adam_step() {
  torch::nn::Sequential net(torch::nn::Linear(24, 32), torch::nn::Tanh(),
                            torch::nn::Linear(32, 6));
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3));
  auto x = torch::randn({10, 24});
  auto target = torch::randint(0, 6, {10});
  opt.zero_grad();
  auto loss = torch::nn::functional::cross_entropy(net->forward(x), target);
  loss.backward();
  opt.step();
}

void two_iteration_loop() {
  torch::nn::Linear fc(20, 5);
  torch::optim::SGD opt(fc->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  auto x = torch::randn({12, 20});
  auto y = torch::randn({12, 5});
  for (int step = 0; step < 2; ++step) {
    opt.zero_grad();
    auto loss = torch::mse_loss(fc->forward(x), y);
    loss.backward();
    opt.step();
  }
}

// Two steps written out: the second step's backward accumulates into the
// existing .grad and Adam's state is already there.
void adam_two_steps_unrolled() {
  torch::nn::Linear fc(16, 16);
  torch::optim::Adam opt(fc->parameters());
  auto x = torch::randn({8, 16});
  opt.zero_grad();
  auto loss1 = fc->forward(x).pow(2).mean();
  loss1.backward();
  opt.step();
  opt.zero_grad();
  auto loss2 = fc->forward(x).pow(2).mean();
  loss2.backward();
  opt.step();
}

// Evaluation under NoGradGuard: nothing is saved for backward.
torch::Tensor eval_no_grad() {
  torch::nn::Linear fc1(64, 64);
  torch::nn::Linear fc2(64, 4);
  auto x = torch::randn({32, 64});
  torch::NoGradGuard no_grad;
  auto h = torch::relu(fc1->forward(x));
  auto out = fc2->forward(h);
  auto pred = out.argmax(1);
  return pred;
}

// A detached feature: the first layer's graph is cut, the second trains.
void detach_feature_then_train() {
  torch::nn::Linear encoder(32, 32);
  torch::nn::Linear head(32, 2);
  torch::optim::SGD opt(head->parameters(), torch::optim::SGDOptions(0.1).momentum(0.5));
  auto x = torch::randn({16, 32});
  auto feature = torch::relu(encoder->forward(x)).detach();
  auto loss = head->forward(feature).pow(2).mean();
  loss.backward();
  opt.step();
}

// A training step followed by an evaluation of the same model.
void train_then_eval() {
  torch::nn::Sequential net(torch::nn::Linear(16, 16), torch::nn::Sigmoid(),
                            torch::nn::Linear(16, 3));
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  auto x = torch::randn({8, 16});
  auto target = torch::randint(0, 3, {8});
  auto loss = torch::nn::functional::cross_entropy(net->forward(x), target);
  loss.backward();
  opt.step();
  torch::NoGradGuard no_grad;
  auto logits = net->forward(x);
}

// SGD with momentum, two steps written out: the first clones each
// gradient as its momentum buffer, the second scales the buffers in place.
void sgd_momentum_two_steps_unrolled() {
  torch::nn::Linear fc(32, 8);
  torch::optim::SGD opt(fc->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  auto x = torch::randn({16, 32});
  auto loss = fc->forward(x).pow(2).mean();
  loss.backward();
  opt.step();
  opt.zero_grad();
  auto loss2 = fc->forward(x).pow(2).mean();
  loss2.backward();
  opt.step();
}

// Plain SGD keeps no state.
void sgd_without_momentum_step() {
  torch::nn::Linear fc(32, 8);
  torch::optim::SGD opt(fc->parameters(), torch::optim::SGDOptions(0.1));
  auto x = torch::randn({16, 32});
  auto loss = fc->forward(x).pow(2).mean();
  loss.backward();
  opt.step();
}

// Adam over a Sequential: exp_avg and exp_avg_sq per parameter, and the
// two parameter-size temporaries of each parameter's update.
void adam_sequential_mse_step() {
  torch::nn::Sequential net(torch::nn::Linear(24, 48), torch::nn::Tanh(),
                            torch::nn::Linear(48, 6));
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3));
  auto x = torch::randn({10, 24});
  auto y = torch::randn({10, 6});
  opt.zero_grad();
  auto loss = torch::mse_loss(net->forward(x), y);
  loss.backward();
  opt.step();
}
