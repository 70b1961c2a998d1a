// Reductions and softmax: fresh contiguous outputs in 1.13, sum of
// integers in int64, keepdim and dim lists.
#include <torch/torch.h>

void sums() {
  auto x = torch::randn({2, 3, 4});
  auto a = x.sum();
  auto b = x.sum(1);
  auto c = x.sum(at::IntArrayRef{0, 2});
  auto d = x.sum(1, true);
  auto e = x.sum(at::IntArrayRef{-1, 0}, true);
  auto f = torch::sum(x.transpose(0, 2), 0);
  auto ints = torch::ones({2, 3}, torch::kInt32);
  auto g = ints.sum();
  auto h = ints.sum(0);
  auto i = torch::ones({3}, torch::kBool).sum();
  auto j = x.sum(torch::kFloat64);
  auto k = x.sum(at::IntArrayRef{1}, false, torch::kFloat16);
}

void means_and_prods() {
  auto x = torch::randn({2, 3, 4});
  auto a = x.mean();
  auto b = x.mean(at::IntArrayRef{1, 2});
  auto c = x.mean(0, true);
  auto d = x.prod();
  auto e = x.prod(1);
  auto f = torch::ones({4}, torch::kInt8).prod();
}

void max_min_arg() {
  auto x = torch::randn({2, 3, 4});
  auto a = x.max();
  auto b = x.min();
  auto c = x.amax(1);
  auto d = x.amax({0, 2}, true);
  auto e = x.amin(-1);
  auto f = x.argmax();
  auto g = x.argmax(1);
  auto h = x.argmax(2, true);
  auto i = x.permute({2, 0, 1}).argmin(0);
  auto ints = torch::ones({3, 2}, torch::kInt32);
  auto j = ints.max();
  auto k = ints.amax(0);
}

void softmaxes() {
  auto x = torch::randn({2, 3, 4});
  auto a = x.softmax(1);
  auto b = torch::softmax(x.transpose(0, 2), -1);
  auto c = torch::log_softmax(x, 2);
  auto d = x.softmax(0, torch::kFloat64);
  auto e = torch::log_softmax(x.to(torch::kHalf), 1, torch::kFloat32);
}

void reduction_throws() {
  auto ints = torch::ones({3}, torch::kInt64);
  auto bad = ints.mean();
}

void reduction_max_dim_get() {
  auto x = torch::randn({2, 3});
  auto values = std::get<0>(x.max(1));
}
