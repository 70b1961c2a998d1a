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

// topk: values and int64 indices with dim's size k, contiguous, through
// every way C++ takes a tuple apart.
void topk_op() {
  auto x = torch::randn({4, 6});
  auto [v, i] = x.topk(3);
  auto r = torch::topk(x, 2, 0, false);
  auto rv = std::get<0>(r);
  auto ri = std::get<1>(r);
  torch::Tensor tv, ti;
  std::tie(tv, ti) = x.t().topk(1, 1);
  auto d = std::get<0>(torch::randn({5}, torch::kFloat64).topk(5));
}

void topk_throws_k_out_of_range() {
  auto x = torch::randn({4, 6});
  auto bad = x.topk(7);
}

// sort: self's sizes; self's strides when self is dense, else dense strides
// in self's dim order.
void sort_op() {
  auto x = torch::randn({4, 6});
  auto [v, i] = x.sort();
  auto t = std::get<0>(x.t().sort(0, true));
  auto strided = torch::randn({4, 6}).slice(1, 0, 6, 2);
  auto s = std::get<1>(strided.sort(0));
  auto ints = std::get<0>(torch::ones({3, 2}, torch::kInt32).sort(1));
}

// kthvalue: reduced values and int64 indices; on the CPU a contiguous clone
// of self and an int64 index tensor live inside the op.
void kthvalue_op() {
  auto x = torch::randn({4, 6});
  auto [v, i] = x.kthvalue(2);
  auto k = std::get<0>(torch::kthvalue(x.t(), 4, 1, true));
  auto d = std::get<1>(torch::randn({5}, torch::kFloat64).kthvalue(5, 0));
}

void kthvalue_throws_k_out_of_range() {
  auto x = torch::randn({4, 6});
  auto bad = x.kthvalue(7);
}

// norm(p, dim, keepdim[, dtype]): a reduction like sum's, fresh and
// contiguous; a complex self gives its real dtype; dtype= casts first.
void norm_op() {
  auto x = torch::randn({4, 6});
  auto rows = x.norm(2, /*dim=*/1);
  auto kept = torch::norm(x, 2, {1}, true);
  auto cols = x.t().norm(1, {1});
  auto all = x.norm();
  auto both = torch::norm(x, 2, std::vector<int64_t>{0, 1});
  auto wide = torch::norm(x, 2, {0}, false, torch::kFloat64);
  auto z = torch::randn({3, 5}, torch::kComplexFloat);
  auto mag = z.norm(2, {-1});
  auto d = torch::randn({2, 3, 4}, torch::kFloat64).norm(3, std::vector<int64_t>{0, 2}, true);
  auto ints = torch::norm(torch::ones({3, 4}, torch::kInt64), 2, {1}, false,
                          torch::kFloat32);
}

// norm of an integer tensor throws without dtype=.
void norm_throws_integer() {
  auto x = torch::ones({3, 4}, torch::kInt64);
  auto bad = x.norm(2, {1});
}

void norm_throws_dim() {
  auto x = torch::randn({4, 6});
  auto bad = x.norm(2, {2});
}

// mode(dim = -1, keepdim): values of self's dtype and int64 indices in the
// reduced shape, as max(dim) gives them.
void mode_op() {
  auto x = torch::randint(3, {4, 6});
  auto [v, i] = x.mode();
  auto k = std::get<0>(torch::mode(x.t(), 1, true));
  auto d = std::get<1>(torch::randn({5}, torch::kFloat64).mode(0));
}

// std_mean / var_mean: (std or var, mean) of self's dtype in the reduced
// shape; no dims reduces every dim.
void std_mean_op() {
  auto x = torch::randn({4, 6, 5});
  auto [s, m] = torch::std_mean(x, {1}, true, false);
  auto all = std::get<0>(torch::std_mean(x));
  auto kept = std::get<1>(torch::std_mean(x.transpose(0, 2), torch::IntArrayRef{0, 2}, false, true));
  auto d = std::get<0>(torch::std_mean(torch::randn({3, 2}, torch::kFloat64), {-1}, true));
}

void var_mean_op() {
  auto x = torch::randn({4, 6});
  torch::Tensor var, mean;
  std::tie(var, mean) = torch::var_mean(x, {0}, false);
  auto v = std::get<0>(torch::var_mean(x, {1}, true, true));
  auto m = std::get<1>(torch::var_mean(x, false));
}

void std_mean_throws_on_integers() {
  auto x = torch::ones({4, 6}, torch::kInt64);
  auto bad = std::get<0>(torch::std_mean(x, {1}, true));
}
