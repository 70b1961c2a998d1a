// Training code written with functional ops (issue 36): tensors made with
// torch::requires_grad(), a forward, then loss.backward(). What autograd
// saves for backward stays alive from the op until backward releases it;
// the leaves' .grad buffers are allocated by the first backward.
//
// Measured by ctest training_differential_cpu (tests/differential): the
// tool's peak and allocated bytes against a counting CPU allocator.
#include <torch/torch.h>

// mm saves both operands (views of named leaves: no bytes); sum's backward
// expands a scalar.
void mm_sum_backward() {
  auto w = torch::randn({64, 32}, torch::requires_grad());
  auto x = torch::randn({16, 64});
  auto loss = torch::mm(x, w).sum();
  loss.backward();
}

// relu saves its output, which no name holds: it stays alive until
// backward releases ReluBackward0.
void relu_mlp_backward() {
  auto w1 = torch::randn({128, 64}, torch::requires_grad());
  auto w2 = torch::randn({64, 10}, torch::requires_grad());
  auto x = torch::randn({32, 128});
  auto h = torch::relu(torch::mm(x, w1));
  auto out = torch::mm(h, w2);
  auto loss = out.pow(2).mean();
  loss.backward();
}

// sigmoid and tanh save their outputs; the outputs are named here.
void sigmoid_tanh_backward() {
  auto w = torch::randn({96, 48}, torch::requires_grad());
  auto x = torch::randn({24, 96});
  auto pre = torch::matmul(x, w);
  auto a = torch::sigmoid(pre);
  auto b = torch::tanh(pre);
  auto loss = (a * b).sum();
  loss.backward();
}

// gelu saves its input (the pre-activation), not its output.
void gelu_backward() {
  auto w = torch::randn({64, 64}, torch::requires_grad());
  auto bias = torch::zeros({64}, torch::requires_grad());
  auto x = torch::randn({16, 64});
  auto y = torch::gelu(torch::matmul(x, w) + bias);
  auto loss = y.mean();
  loss.backward();
}

// softmax saves its output; log_softmax too.
void softmax_log_softmax_backward() {
  auto w = torch::randn({32, 20}, torch::requires_grad());
  auto x = torch::randn({40, 32});
  auto logits = torch::mm(x, w);
  auto p = torch::softmax(logits, 1);
  auto lp = torch::log_softmax(logits, 1);
  auto loss = -(p * lp).sum();
  loss.backward();
}

// dropout in training mode: a float mask saved by the MulBackward0 it runs.
void dropout_backward() {
  auto w = torch::randn({50, 40}, torch::requires_grad());
  auto x = torch::randn({20, 50});
  auto h = torch::dropout(torch::relu(torch::mm(x, w)), 0.5, true);
  auto loss = h.sum();
  loss.backward();
}

// Elementwise mul and add between two leaves, pow and mean.
void elementwise_pow_backward() {
  auto a = torch::randn({64, 64}, torch::requires_grad());
  auto b = torch::randn({64, 64}, torch::requires_grad());
  auto c = a * b + a;
  auto loss = c.pow(2).mean();
  loss.backward();
}

// backward() twice through one graph with retain_graph: the second
// backward accumulates into .grad in place and then frees the graph.
void retain_graph_twice() {
  auto w = torch::randn({32, 32}, torch::requires_grad());
  auto x = torch::randn({8, 32});
  auto loss = torch::tanh(torch::mm(x, w)).sum();
  loss.backward({}, true);
  loss.backward();
}

// The example of the task: sigmoid's output is saved by SigmoidBackward0
// and kept alive through s's graph while b is made; backward then frees it.
void saved_sigmoid_then_backward() {
  auto w = torch::randn({256, 256}, torch::requires_grad());
  auto x = torch::randn({64, 256});
  auto s = torch::mm(x, w).sigmoid().sum();
  auto b = torch::randn({128, 256});
  s.backward();
}

// A leaf's first gradient, expanded by sum(), is copied into its .grad;
// mean()'s dense gradient is adopted.
void sum_of_a_leaf_copies_its_gradient() {
  auto w = torch::randn({64, 32}, torch::requires_grad());
  auto loss = w.sum();
  loss.backward();
}

void mean_of_a_leaf_adopts_its_gradient() {
  auto w = torch::randn({64, 32}, torch::requires_grad());
  auto loss = w.mean();
  loss.backward();
}

// Both operands of mm require grad: each product copies the expanded
// gradient it reads.
void mm_both_operands_backward() {
  auto a = torch::randn({16, 64}, torch::requires_grad());
  auto w = torch::randn({64, 32}, torch::requires_grad());
  auto loss = torch::mm(a, w).sum();
  loss.backward();
}

// relu's saved output, unnamed, is released when ReluBackward0 runs.
void relu_of_a_leaf_backward() {
  auto a = torch::randn({16, 64}, torch::requires_grad());
  auto loss = torch::relu(a).sum();
  loss.backward();
}

// a's two gradients (through the product and the difference) are added
// out of place before its AccumulateGrad runs.
void sub_mul_accumulates_a_leaf() {
  auto a = torch::randn({16, 64}, torch::requires_grad());
  auto b = torch::randn({16, 64}, torch::requires_grad());
  auto loss = ((a - b) * a).sum();
  loss.backward();
}

void pow_three_backward() {
  auto a = torch::randn({16, 64}, torch::requires_grad());
  auto loss = a.pow(3).sum();
  loss.backward();
}

// x * x: one node, both gradients to the same leaf.
void square_by_mul_backward() {
  auto x = torch::randn({32, 48}, torch::requires_grad());
  auto loss = (x * x).mean();
  loss.backward();
}

// A broadcast bias gets its gradient summed to its shape.
void broadcast_bias_backward() {
  auto w = torch::randn({40, 24}, torch::requires_grad());
  auto b = torch::randn({24}, torch::requires_grad());
  auto x = torch::randn({30, 40});
  auto loss = torch::tanh(torch::mm(x, w) + b).sum();
  loss.backward();
}

// 0-dim leaves, as a first autograd example writes them: add hands the
// seed itself to b (shared, so b's .grad is a copy) and to the product.
void scalar_leaves_backward() {
  torch::Tensor x = torch::tensor(1.0, torch::requires_grad());
  torch::Tensor w = torch::tensor(2.0, torch::requires_grad());
  torch::Tensor b = torch::tensor(3.0, torch::requires_grad());
  auto y = w * x + b;
  y.backward();
}
