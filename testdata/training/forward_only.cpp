// Forwards run with gradients on and no backward: the loss (or an
// activation) is returned or dropped. Here autograd's saved tensors outlive
// their C++ names: what a graph node saved is freed only when the last
// handle to the graph (the loss, a returned tensor) goes away.
//
// Measured by ctest training_differential_cpu (tests/differential).
#include <torch/torch.h>

// The task's example: at the last line w, x, sigmoid's saved output, s
// and b are alive (512 KiB + 4 B), though no name holds sigmoid's output.
void saved_sigmoid_forward() {
  auto w = torch::randn({256, 256}, torch::requires_grad());
  auto x = torch::randn({64, 256});
  auto s = torch::mm(x, w).sigmoid().sum();
  auto b = torch::randn({128, 256});
}

// relu's output is saved; the loss is returned, so the graph (and the
// saved output) lives until the caller drops it.
torch::Tensor relu_forward_return_loss() {
  auto w = torch::randn({128, 128}, torch::requires_grad());
  auto x = torch::randn({32, 128});
  auto loss = torch::relu(torch::mm(x, w)).mean();
  auto extra = torch::randn({64, 128});
  return loss;
}

// A reassigned name: the first h is released by C++, but tanh saved it.
void tanh_chain_reassigned() {
  auto w = torch::randn({64, 64}, torch::requires_grad());
  auto h = torch::randn({32, 64});
  h = torch::tanh(torch::mm(h, w));
  h = torch::tanh(torch::mm(h, w));
  auto loss = h.sum();
  auto tail = torch::randn({32, 64});
}

// gelu saves its input: the unnamed pre-activation stays alive.
torch::Tensor gelu_forward_return_activation() {
  auto w = torch::randn({64, 96}, torch::requires_grad());
  auto x = torch::randn({16, 64});
  auto y = torch::gelu(torch::mm(x, w));
  auto after = torch::randn({16, 96});
  return y;
}

// The loss is computed and dropped at once: the graph dies with it, so
// nothing saved outlives the statement.
void loss_dropped_at_once() {
  auto w = torch::randn({64, 64}, torch::requires_grad());
  auto x = torch::randn({16, 64});
  torch::sigmoid(torch::mm(x, w)).sum();
  auto after = torch::randn({64, 64});
}

// mse_loss with gradients on, no backward: the Mean-reduced loss keeps the
// unreduced buffer, and MseLossBackward0 saves the prediction.
void mse_forward_no_backward() {
  auto w = torch::randn({40, 8}, torch::requires_grad());
  auto x = torch::randn({50, 40});
  auto y = torch::randn({50, 8});
  auto loss = torch::mse_loss(torch::sigmoid(torch::mm(x, w)), y);
  auto after = torch::randn({50, 40});
}

// Dropout in training mode multiplies by a float mask; MulBackward0 keeps
// the mask (the input needs a gradient, the mask does not), not the input.
void dropout_forward_kept() {
  auto w = torch::randn({32, 48}, torch::requires_grad());
  auto x = torch::randn({64, 32});
  auto h = torch::dropout(torch::mm(x, w), 0.5, true);
  auto after = torch::randn({64, 96});
}

// pow saves its input: the unnamed mm output outlives the statement.
void pow_forward_dropped_loss() {
  auto w = torch::randn({48, 48}, torch::requires_grad());
  auto x = torch::randn({16, 48});
  auto loss = torch::mm(x, w).pow(2).sum();
  auto after = torch::randn({48, 48});
}

// cross_entropy: log_softmax's output is saved (LogSoftmaxBackward0 and
// NllLossBackward0) and nll keeps a 4-byte total_weight.
void cross_entropy_forward_kept() {
  auto w = torch::randn({40, 10}, torch::requires_grad());
  auto x = torch::randn({30, 40});
  auto target = torch::randint(0, 10, {30});
  auto logits = torch::mm(x, w);
  auto loss = torch::cross_entropy_loss(logits, target);
  auto after = torch::randn({30, 40});
}

// Every tensor autograd saves is also named to the end: no saved bytes
// beyond the names (mm saves x, relu its named output).
void saved_tensors_all_named() {
  auto w = torch::randn({64, 32}, torch::requires_grad());
  auto x = torch::randn({16, 64});
  auto pre = torch::mm(x, w);
  auto act = torch::relu(pre);
  auto loss = act.sum();
  auto after = torch::randn({16, 64});
}

// Gradients switched on after construction with requires_grad_(): the
// same saves as requires_grad() in the constructor.
void requires_grad_in_place_forward() {
  auto w = torch::randn({64, 64});
  w.requires_grad_();
  auto x = torch::randn({32, 64});
  auto loss = torch::sigmoid(torch::mm(x, w)).mean();
  auto after = torch::randn({64, 64});
}

// detach() cuts the graph: the saved relu output dies with the statement,
// only the detached tensor (sharing its storage) remains.
void detach_forward() {
  auto w = torch::randn({64, 64}, torch::requires_grad());
  auto x = torch::randn({32, 64});
  auto feature = torch::relu(torch::mm(x, w)).detach();
  auto after = torch::randn({64, 64});
}

// Every tensor mm, sigmoid and sum save (x, w, h, a) is named to the end:
// what autograd keeps adds nothing to the C++ lifetimes.
void saved_by_names_to_the_end() {
  auto w = torch::randn({128, 128}, torch::requires_grad());
  auto x = torch::randn({32, 128});
  auto h = torch::mm(x, w);
  auto a = h.sigmoid();
  auto s = a.sum();
  auto after = torch::randn({64, 128});
}

// clone (through contiguous), view, sum, mean and add save no tensor: the
// temporary copy dies with its statement as without gradients.
void nodes_that_save_nothing() {
  auto w = torch::randn({16, 32}, torch::TensorOptions().requires_grad(true));
  auto s = w.t().contiguous().view({-1}).sum() + w.mean();
  auto after = torch::randn({32, 32});
}

// InferenceMode turns gradients off for the rest of its scope.
void inference_mode_forward() {
  auto w = torch::randn({64, 64}, torch::requires_grad());
  c10::InferenceMode guard;
  auto s = w.sigmoid().sum();
  auto after = torch::randn({64, 64});
}

// requires_grad(false) records nothing.
void requires_grad_false_forward() {
  auto w = torch::randn({64, 64}, torch::requires_grad(false));
  auto s = w.sigmoid().sum();
  auto after = torch::randn({64, 64});
}

// The leaf is a temporary: sigmoid's node reaches it through
// AccumulateGrad, which keeps it alive as long as s's graph.
void temporary_leaf_forward() {
  auto s = torch::randn({64, 64}, torch::requires_grad()).sigmoid().sum();
  auto after = torch::randn({64, 64});
}

// mm saves the temporary input x because w requires grad (and not w,
// since x does not): kept with loss's graph.
void mm_saves_a_temporary_input() {
  auto w = torch::randn({32, 32}, torch::requires_grad());
  auto loss = torch::mm(torch::randn({16, 32}), w).sum();
  auto after = torch::randn({32, 32});
}

// Each iteration's tanh output is saved by its node and kept by h's
// graph: one saved tensor per iteration.
void recurrent_loop_forward() {
  auto w = torch::randn({32, 32}, torch::requires_grad());
  auto h = torch::randn({8, 32});
  for (int i = 0; i < 4; ++i)
    h = torch::tanh(torch::mm(h, w));
  auto loss = h.sum();
}

// A constant mask: MulBackward0 keeps the mask (w's side needs it) and not
// mm's result (the mask needs no gradient), so the unnamed mask outlives
// its statement.
void mul_keeps_the_constant_side() {
  auto w = torch::randn({48, 32}, torch::requires_grad());
  auto x = torch::randn({16, 48});
  auto loss = (torch::mm(x, w) * torch::rand({16, 32})).sum();
  auto after = torch::randn({16, 48});
}

// div by a tensor that needs no gradient: DivBackward0 keeps the divisor
// (both gradients read it), not the dividend.
void div_keeps_the_divisor() {
  auto w = torch::randn({48, 32}, torch::requires_grad());
  auto x = torch::randn({16, 48});
  auto loss = (torch::mm(x, w) / torch::rand({16, 32}).add(1)).sum();
  auto after = torch::randn({16, 48});
}

// bmm with a temporary batch: BmmBackward0 keeps it for w's gradient.
void bmm_keeps_a_temporary_batch() {
  auto w = torch::randn({4, 16, 8}, torch::requires_grad());
  auto loss = torch::bmm(torch::randn({4, 12, 16}), w).sum();
  auto after = torch::randn({4, 12, 16});
}

// mean over a dim (MeanBackward1) saves its input; mean() of everything
// (MeanBackward0) saves nothing.
torch::Tensor mean_over_a_dim_keeps_its_input() {
  auto w = torch::randn({40, 24}, torch::requires_grad());
  auto x = torch::randn({20, 40});
  auto loss = torch::mm(x, w).mean(1).mean();
  auto after = torch::randn({20, 40});
  return loss;
}

// pow with a Scalar exponent (PowBackward0) keeps its input only.
void pow_scalar_keeps_its_input() {
  auto w = torch::randn({32, 16}, torch::requires_grad());
  auto x = torch::randn({8, 32});
  auto loss = torch::pow(torch::mm(x, w), 3).sum();
  auto after = torch::randn({8, 32});
}

// softmax is _softmax underneath (SoftmaxBackward0 keeps its result);
// log_softmax with a dtype casts first (the cast's node keeps nothing).
torch::Tensor softmax_results_are_kept() {
  auto w = torch::randn({32, 24}, torch::requires_grad());
  auto x = torch::randn({12, 32});
  auto p = torch::softmax(torch::mm(x, w), 1);
  auto loss = torch::log_softmax(p, 1, torch::kDouble).sum();
  auto after = torch::randn({12, 32});
  return loss;
}

// matmul of two matrices is mm: the temporary left matrix is kept for w's
// gradient.
void matmul_of_matrices_keeps_a_temporary() {
  auto w = torch::randn({40, 16}, torch::requires_grad());
  auto loss = torch::matmul(torch::randn({10, 40}), w).sum();
  auto after = torch::randn({10, 40});
}

// A Linear layer with gradients on: its parameters are autograd leaves;
// addmm(bias, x, weight.t()) keeps x (the weight needs a gradient) and not
// the weight's view (x needs none). The temporary input outlives its
// statement with the returned loss's graph.
torch::Tensor linear_keeps_its_temporary_input() {
  torch::nn::Linear fc(48, 24);
  auto y = torch::sigmoid(fc(torch::randn({16, 48})));
  auto after = torch::randn({16, 48});
  return y.sum();
}

// Without a bias, Linear is mm(x, weight.t()): the same tensors kept.
torch::Tensor linear_without_bias_keeps_its_input() {
  torch::nn::Linear fc(torch::nn::LinearOptions(40, 20).bias(false));
  auto loss = fc(torch::randn({12, 40})).relu().sum();
  auto after = torch::randn({12, 40});
  return loss;
}

// Two layers in a Sequential: the first keeps the temporary input, ReLU
// its result, the second layer that result again (no extra bytes).
torch::Tensor sequential_forward_keeps_activations() {
  torch::nn::Sequential net(torch::nn::Linear(32, 64), torch::nn::ReLU(),
                            torch::nn::Linear(64, 8));
  auto loss = net->forward(torch::randn({10, 32})).sum();
  auto after = torch::randn({10, 32});
  return loss;
}

// The graph is dropped at the end of the function: what the layers kept
// is freed with it, and every name holds its tensor to the end anyway.
void linear_forward_named_input() {
  torch::nn::Linear fc(24, 12);
  auto x = torch::randn({6, 24});
  auto h = torch::tanh(fc(x));
  auto loss = h.sum();
  auto after = torch::randn({6, 24});
}
