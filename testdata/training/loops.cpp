// Counted training loops, unrolled for the totals (docs/modules.md,
// "Loops"): the first iteration allocates the .grad buffers and the
// optimizer's state, the later ones reuse them; past three iterations the
// third stands for the rest when it ends where the second did.
//
// Measured by ctest training_differential_cpu (tests/differential).
#include <torch/torch.h>

void sgd_momentum_five_steps() {
  torch::nn::Linear fc(40, 10);
  torch::optim::SGD opt(fc->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  auto x = torch::randn({32, 40});
  auto y = torch::randn({32, 10});
  for (int step = 0; step < 5; ++step) {
    opt.zero_grad();
    auto loss = torch::mse_loss(fc->forward(x), y);
    loss.backward();
    opt.step();
  }
}

void adam_sixty_steps() {
  torch::nn::Sequential net(torch::nn::Linear(16, 64), torch::nn::ReLU(),
                            torch::nn::Linear(64, 4));
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3));
  auto x = torch::randn({8, 16});
  auto target = torch::randint(0, 4, {8});
  for (size_t epoch = 0; epoch != 60; ++epoch) {
    auto logits = net->forward(x);
    auto loss = torch::nn::functional::cross_entropy(logits, target);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

// No zero_grad: each backward after the first adds into the .grad it made.
void gradients_accumulate_four_times() {
  torch::nn::Linear fc(24, 24);
  auto x = torch::randn({6, 24});
  for (int k = 0; k < 4; ++k) {
    auto loss = torch::tanh(fc->forward(x)).sum();
    loss.backward();
  }
}

// Epochs around steps: both loops are unrolled.
void epochs_of_steps() {
  torch::nn::Linear fc(12, 3);
  torch::optim::SGD opt(fc->parameters(), torch::optim::SGDOptions(0.1).momentum(0.5));
  auto x = torch::randn({10, 12});
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (int batch = 0; batch < 4; ++batch) {
      auto loss = fc->forward(x).pow(2).mean();
      opt.zero_grad();
      loss.backward();
      opt.step();
    }
  }
}

// A loop of one iteration and one of two: run exactly.
void one_and_two_iterations() {
  torch::nn::Linear fc(8, 8);
  torch::optim::Adam opt(fc->parameters());
  auto x = torch::randn({4, 8});
  for (int k = 0; k < 1; ++k) {
    auto loss = fc->forward(x).sum();
    loss.backward();
    opt.step();
  }
  for (int k = 0; k < 2; ++k) {
    opt.zero_grad();
    auto loss = torch::sigmoid(fc->forward(x)).mean();
    loss.backward();
    opt.step();
  }
}

// backward() three times through a graph it keeps: the first allocates
// the .grad, the others add into it.
void backward_three_times_retaining_the_graph() {
  auto w = torch::randn({32, 16}, torch::requires_grad());
  auto x = torch::randn({8, 32});
  auto loss = torch::tanh(torch::mm(x, w)).sum();
  for (int i = 0; i < 3; ++i)
    loss.backward({}, true);
}

// Evaluation in a loop: nothing saved, the same storage every iteration.
void eval_loop_no_grad() {
  torch::nn::Linear fc(32, 32);
  torch::NoGradGuard no_grad;
  auto x = torch::randn({16, 32});
  for (int k = 0; k < 7; ++k) {
    auto h = torch::relu(fc->forward(x));
    auto p = h.softmax(1);
  }
}

// Plain tensor work: a fresh tensor per iteration, freed at its end.
void forward_loop_without_gradients() {
  auto base = torch::randn({64, 64});
  for (int k = 0; k < 10; ++k) {
    auto t = base.t().contiguous();
    auto u = t * 2;
  }
}

// The classic leak: an outer tensor accumulates each iteration's result
// in place, so the graph of every iteration stays alive. The totals are
// not followed, never a number.
void loss_accumulated_with_graph() {
  torch::nn::Linear fc(16, 16);
  auto x = torch::randn({8, 16});
  auto total = torch::zeros({});
  for (int k = 0; k < 6; ++k) {
    auto h = torch::relu(fc->forward(x));
    total.add_(h.sum());
  }
  total.backward();
}
