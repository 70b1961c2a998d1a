// How long a graph lives decides how long what its nodes hold lives: a
// graph nothing holds at the end of its statement goes there (a discarded
// loss, a loss only backward() reads, a value read by item()); one a
// container or a view keeps lives on. And LayerNorm's mean and rstd, made
// beside its output.
//
// Measured by ctest training_differential_cpu (tests/differential).
#include <torch/torch.h>

#include <vector>

// The temporary leaf and tanh's saved result go with the statement.
void discarded_temporary_leaf() {
  torch::randn({32, 32}, torch::requires_grad()).tanh().sum();
  auto after = torch::randn({32, 32});
}

// The vector keeps sigmoid's result, and with it its graph.
void graph_kept_in_vector() {
  auto w = torch::randn({32, 32}, torch::requires_grad());
  auto x = torch::randn({8, 32});
  std::vector<torch::Tensor> kept;
  kept.push_back(torch::sigmoid(torch::mm(x, w)));
  auto after = torch::randn({32, 32});
}

// backward() of a loss no name holds: w's .grad stays, the graph goes.
void backward_of_temporary_loss() {
  auto w = torch::randn({32, 16}, torch::requires_grad());
  auto x = torch::randn({8, 32});
  auto y = torch::randn({8, 16});
  torch::mse_loss(torch::sigmoid(torch::mm(x, w)), y).backward();
  auto after = torch::randn({32, 32});
}

// item() reads the sum; the graph goes with the statement.
void item_of_discarded_graph() {
  auto w = torch::randn({32, 32}, torch::requires_grad());
  auto x = torch::randn({8, 32});
  float v = torch::sigmoid(torch::mm(x, w)).sum().item<float>();
  auto after = torch::randn({32, 32});
}

// A row of sigmoid's result is named: the view holds its base.
void view_kept_of_graph() {
  auto w = torch::randn({32, 32}, torch::requires_grad());
  auto x = torch::randn({8, 32});
  auto row = torch::sigmoid(torch::mm(x, w)).select(0, 0);
  auto after = torch::randn({32, 32});
}

// The sum held by s holds its graph and the temporary leaf until s is
// assigned again.
void temporary_leaf_rebound() {
  auto s = torch::randn({16, 16}, torch::requires_grad()).sigmoid().sum();
  s = torch::zeros({4});
  auto after = torch::randn({32, 32});
}

// LayerNorm without gradients: mean and rstd (4 B per row each) live
// until layer_norm returns.
void layer_norm_no_grad() {
  torch::NoGradGuard no_grad;
  torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({64}));
  auto x = torch::randn({48, 64});
  auto h = norm->forward(x);
  auto after = torch::randn({8, 64});
}

// The functional op over a 3-D input: 6 * 10 rows.
void layer_norm_functional_3d() {
  auto x = torch::randn({6, 10, 32});
  auto h = torch::layer_norm(x, {32});
  auto after = torch::randn({4, 32});
}

// A transposed input is copied by expect_contiguous first, and the copy
// freed when layer_norm returns.
void layer_norm_of_transposed() {
  auto x = torch::randn({32, 24});
  auto h = torch::layer_norm(x.t(), {32});
}

// LayerNorm with gradients on, no backward: NativeLayerNormBackward0 keeps
// its input (Linear's unnamed output), mean and rstd.
void layer_norm_forward_kept() {
  torch::nn::Linear fc(32, 32);
  torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({32}));
  auto x = torch::randn({24, 32});
  auto h = norm->forward(fc->forward(x));
  auto after = torch::randn({24, 32});
}

// With gradients on: the copy still goes when layer_norm returns; the node
// keeps the transposed input (a view of mm's result, which m holds), mean
// and rstd.
void layer_norm_of_transposed_kept() {
  auto w = torch::randn({24, 32}, torch::requires_grad());
  auto x = torch::randn({32, 24});
  auto m = torch::mm(x, w);
  auto h = torch::layer_norm(m.t(), {32});
}
