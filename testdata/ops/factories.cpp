// Factories and the C++ dtype defaults (aten-rules.md section 5).
#include <torch/torch.h>

void arange_ops() {
  auto a = torch::arange(5);
  auto b = torch::arange(5.);
  auto c = torch::arange(1, 10, 3);
  auto d = torch::arange(0, 1, 0.25);
  auto e = torch::arange(2, 8);
  auto f = torch::arange(10, torch::kFloat16);
  auto g = torch::arange(0.5, 3.5);
}

void full_ops() {
  auto a = torch::full({2, 3}, 7);
  auto b = torch::full({2, 3}, 1.5);
  auto c = torch::full({2}, true);
  auto d = torch::full({2, 2}, 3, torch::kFloat64);
  auto e = torch::full({4}, 2.5f);
}

void other_factories() {
  auto a = torch::eye(3);
  auto b = torch::eye(2, 4);
  auto c = torch::linspace(0, 1, 5);
  auto d = torch::scalar_tensor(1);
  auto e = torch::randperm(6);
  auto f = torch::randint(10, {3});
  auto g = torch::randint(0, 10, {2, 2}, torch::kInt32);
  auto h = torch::randint(0, 10, {2, 2}, torch::device(torch::kCPU));
  auto i = torch::zeros({2, 3}, torch::kInt8);
  auto j = torch::ones({0, 4});
  auto k = torch::empty({3, 4}, torch::dtype(torch::kFloat16));
  auto l = torch::rand({5});
  auto m = torch::eye(3, torch::kInt64);
}

void tensor_literals() {
  auto a = torch::tensor({1, 2, 3});
  auto b = torch::tensor({1.0, 2.0});
  auto c = torch::tensor({1.5f, 2.5f});
  auto d = at::tensor({1, 2, 3});
  auto e = at::tensor({1.0, 2.0});
  auto f = torch::tensor({{1, 2}, {3, 4}, {5, 6}});
  auto g = torch::tensor({true, false});
  auto h = torch::tensor({1, 2}, torch::kFloat64);
  auto i = at::tensor({1.5f, 2.5f});
}

void factory_throws() {
  auto bad = torch::zeros({2, -1});
}

// Sizes from an integer parameter (a symbol, issue 12), one not derivable.
void factory_unknown(int64_t n) {
  auto a = torch::zeros({n, 3});
  auto b = torch::arange(n);
  auto c = torch::full({2}, static_cast<double>(n));
}

// new_empty / new_zeros / new_ones / new_full: self's dtype and device
// unless the options name them.
void new_factories() {
  auto x = torch::randn({2, 3}, torch::kFloat64);
  auto a = x.new_zeros({4, 5});
  auto b = x.new_ones({3}, torch::kInt32);
  auto c = x.new_empty({2, 2});
  auto d = x.new_full({1, 3}, 7);
  auto e = x.new_zeros({0, 2}, torch::TensorOptions().dtype(torch::kHalf));
}

// from_blob wraps the program's memory: sizes, dtype and strides from the
// arguments; two tensors over one pointer share it, which is not followed.
void from_blob_wraps() {
  float values[] = {1, 2, 3, 4, 5, 6};
  auto a = torch::from_blob(values, {2, 3});
  std::vector<int64_t> ids = {4, 5, 6, 7};
  auto b = torch::from_blob(ids.data(), {4}, torch::kInt64);
  auto c = torch::from_blob(ids.data(), {2, 2}, torch::TensorOptions().dtype(torch::kLong));
  int64_t n = 9;
  auto d = torch::from_blob(&n, 1, torch::kLong);
  auto owned = torch::from_blob(values, {3, 2}).clone();
}
