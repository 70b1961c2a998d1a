// Loss functions: reduction None / Mean / Sum, class-index and
// class-probability targets, and their torch::nn::functional spellings
// with options objects.
#include <torch/torch.h>

namespace F = torch::nn::functional;

void cross_entropies() {
  auto x = torch::randn({4, 5});
  auto t = torch::randint(0, 5, {4});
  auto w = torch::rand({5});
  auto a = torch::cross_entropy_loss(x, t);
  auto b = torch::cross_entropy_loss(x, t, {}, at::Reduction::None);
  auto c = torch::cross_entropy_loss(x, t, {}, at::Reduction::Sum);
  auto d = F::cross_entropy(x, t);
  auto e = F::cross_entropy(x, t, F::CrossEntropyFuncOptions().reduction(torch::kNone));
  auto f = F::cross_entropy(
      x, t, F::CrossEntropyFuncOptions().reduction(torch::kSum).label_smoothing(0.1));
  auto g = F::cross_entropy(x, t, F::CrossEntropyFuncOptions().weight(w).reduction(torch::kNone));
  auto h = torch::cross_entropy_loss(x.to(torch::kDouble), t, {}, 0);
  auto t0 = t[0];
  auto i = F::cross_entropy(torch::randn({5}), t0);
}

void cross_entropy_spatial() {
  auto x = torch::randn({2, 5, 3, 4});
  auto t = torch::randint(0, 5, {2, 3, 4});
  auto a = F::cross_entropy(x, t, F::CrossEntropyFuncOptions().reduction(torch::kNone));
  auto b = F::cross_entropy(x, t);
  auto y = torch::randn({2, 5, 7});
  auto u = torch::randint(0, 5, {2, 7});
  auto c = F::cross_entropy(y, u, F::CrossEntropyFuncOptions().reduction(torch::kNone));
  auto z = torch::randn({2, 5, 2, 3, 2});
  auto v = torch::randint(0, 5, {2, 2, 3, 2});
  auto d = torch::cross_entropy_loss(z, v, {}, at::Reduction::None);
}

void cross_entropy_probabilities() {
  auto x = torch::randn({4, 5});
  auto p = torch::softmax(torch::randn({4, 5}), 1);
  auto a = F::cross_entropy(x, p);
  auto b = F::cross_entropy(x, p, F::CrossEntropyFuncOptions().reduction(torch::kNone));
  auto y = torch::randn({2, 5, 3});
  auto q = torch::softmax(torch::randn({2, 5, 3}), 1);
  auto c = torch::cross_entropy_loss(y, q, {}, at::Reduction::None);
  auto d = torch::cross_entropy_loss(y, q, {}, at::Reduction::Sum, -100, 0.2);
}

void cross_entropy_batch_mismatch() {
  auto x = torch::randn({4, 5});
  auto t = torch::randint(0, 5, {3});
  auto bad = F::cross_entropy(x, t);
}

void cross_entropy_integer_probabilities() {
  auto x = torch::randn({4, 5});
  auto t = torch::randint(0, 5, {4, 5});
  auto bad = F::cross_entropy(x, t);
}

void nll_losses() {
  auto x = torch::log_softmax(torch::randn({4, 5}), 1);
  auto t = torch::randint(0, 5, {4});
  auto a = torch::nll_loss(x, t);
  auto b = torch::nll_loss(x, t, {}, at::Reduction::None);
  auto c = F::nll_loss(x, t, F::NLLLossFuncOptions().reduction(torch::kSum));
  auto d = F::nll_loss(x, t, F::NLLLossFuncOptions().reduction(torch::kNone).ignore_index(2));
  auto y = torch::randn({2, 5, 3, 4});
  auto u = torch::randint(0, 5, {2, 3, 4});
  auto e = torch::nll_loss2d(y, u, {}, at::Reduction::None);
  auto f = torch::nll_loss_nd(torch::randn({2, 5, 6}), torch::randint(0, 5, {2, 6}), {}, 0);
  auto g = F::nll_loss(y, u);
}

void nll_loss_spatial_mismatch() {
  auto x = torch::randn({2, 5, 3, 4});
  auto t = torch::randint(0, 5, {2, 3, 5});
  auto bad = F::nll_loss(x, t, F::NLLLossFuncOptions().reduction(torch::kNone));
}

void nll_loss_multi_target() {
  auto x = torch::randn({4, 5});
  auto bad = torch::nll_loss(x, torch::randint(0, 5, {4, 2}));
}

void regressions() {
  auto x = torch::randn({4, 3});
  auto y = torch::randn({4, 3});
  auto a = torch::mse_loss(x, y);
  auto b = torch::mse_loss(x, y, at::Reduction::None);
  auto c = torch::mse_loss(x, y, at::Reduction::Sum);
  auto d = F::mse_loss(x, y, F::MSELossFuncOptions(torch::kNone));
  auto e = F::mse_loss(x, torch::randn({4, 1}), F::MSELossFuncOptions().reduction(torch::kNone));
  auto f = torch::l1_loss(x, y);
  auto g = F::l1_loss(x, y, F::L1LossFuncOptions(torch::kNone));
  auto h = torch::smooth_l1_loss(x, y, at::Reduction::None, 0.5);
  auto i = F::smooth_l1_loss(x, y);
  auto k = torch::huber_loss(x, y, at::Reduction::None, 2.0);
  auto l = F::huber_loss(x, y, F::HuberLossFuncOptions().delta(0.5).reduction(torch::kSum));
  auto t = x.t();
  auto m = torch::mse_loss(t, y.t(), at::Reduction::None);
  auto n = F::l1_loss(t, torch::randn({3, 4}), F::L1LossFuncOptions(torch::kNone));
  auto o = torch::mse_loss(x.to(torch::kDouble), y.to(torch::kDouble), at::Reduction::None);
  auto p = torch::mse_loss(x, y.to(torch::kDouble));
  auto q = torch::huber_loss(t, y.t(), at::Reduction::None);
}

void mse_loss_no_broadcast() {
  auto bad = F::mse_loss(torch::randn({4, 3}), torch::randn({4, 2}));
}

void smooth_l1_negative_beta() {
  auto x = torch::randn({4, 3});
  auto bad = torch::smooth_l1_loss(x, x, at::Reduction::Mean, -1.0);
}

void binary_cross_entropies() {
  auto p = torch::rand({4, 3});
  auto y = torch::rand({4, 3});
  auto w = torch::rand({3});
  auto a = torch::binary_cross_entropy(p, y);
  auto b = torch::binary_cross_entropy(p, y, w, at::Reduction::None);
  auto c = F::binary_cross_entropy(p, y, F::BinaryCrossEntropyFuncOptions().reduction(torch::kNone));
  auto d = F::binary_cross_entropy(
      p, y, F::BinaryCrossEntropyFuncOptions().weight(w).reduction(torch::kSum));
  auto x = torch::randn({4, 3});
  auto e = torch::binary_cross_entropy_with_logits(x, y);
  auto f = torch::binary_cross_entropy_with_logits(x, y, {}, w, at::Reduction::None);
  auto g = F::binary_cross_entropy_with_logits(
      x, y, F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(w).reduction(torch::kNone));
  auto h = F::binary_cross_entropy_with_logits(
      x.t(), y.t(), F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kNone));
  auto i = torch::binary_cross_entropy(p.t(), y.t(), {}, at::Reduction::None);
}

void binary_cross_entropy_size_mismatch() {
  auto bad = F::binary_cross_entropy(torch::rand({4, 3}), torch::rand({4, 1}));
}

void kl_divergences() {
  auto x = torch::log_softmax(torch::randn({4, 5}), 1);
  auto p = torch::softmax(torch::randn({4, 5}), 1);
  auto a = torch::kl_div(x, p);
  auto b = torch::kl_div(x, p, at::Reduction::None);
  auto c = F::kl_div(x, p, F::KLDivFuncOptions(torch::kBatchMean));
  auto d = F::kl_div(x, p.log(), F::KLDivFuncOptions().reduction(torch::kNone).log_target(true));
  auto e = torch::kl_div(x, torch::rand({5}), at::Reduction::None);
}
