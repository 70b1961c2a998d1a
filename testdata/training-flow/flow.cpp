// backward() and step() the analysis cannot count once: in a branch that
// may not run, in a loop that runs them per iteration. The totals must be
// unknown with the reason, never the count of one pass.
#include <torch/torch.h>

void backward_in_a_branch(bool train) {
  auto w = torch::randn({32, 16}, torch::requires_grad());
  auto x = torch::randn({8, 32});
  auto loss = torch::mm(x, w).sum();
  if (train)
    loss.backward();
}

// A count that is not a constant: the body is evaluated once for every
// iteration (a constant count is unrolled: testdata/training/loops.cpp).
void backward_in_a_loop_retaining_the_graph(int n) {
  auto w = torch::randn({32, 16}, torch::requires_grad());
  auto x = torch::randn({8, 32});
  auto loss = torch::tanh(torch::mm(x, w)).sum();
  for (int i = 0; i < n; ++i)
    loss.backward({}, true);
}

void step_in_a_branch(bool update) {
  torch::nn::Linear fc(32, 8);
  torch::optim::SGD opt(fc->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  auto x = torch::randn({16, 32});
  auto loss = fc->forward(x).pow(2).mean();
  loss.backward();
  if (update)
    opt.step();
}

// The second backward through a graph whose saved tensors the first
// released: LibTorch throws; the analysis does not claim a pass.
void second_backward_without_retain_graph() {
  auto w = torch::randn({32, 16}, torch::requires_grad());
  auto x = torch::randn({8, 32});
  auto loss = torch::tanh(torch::mm(x, w)).sum();
  loss.backward();
  loss.backward();
}

// The steps above without the hazard: followed.
void the_same_step_straight() {
  torch::nn::Linear fc(32, 8);
  torch::optim::SGD opt(fc->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  auto x = torch::randn({16, 32});
  auto loss = fc->forward(x).pow(2).mean();
  loss.backward();
  opt.step();
}

// A count past what "nothing freed" can sum: the peak is one iteration's,
// the total allocated is unknown with the reason, never a wrapped number.
void loop_too_long_to_sum() {
  for (int64_t i = 0; i < 4000000000000000000; ++i) {
    auto t = torch::randn({1024});
  }
}
