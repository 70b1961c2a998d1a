// Allocating ops: matrix products, gathers, cat/stack/repeat, elementwise
// operators with broadcasting and type promotion, and in-place ops.
#include <torch/torch.h>

namespace F = torch::nn::functional;

void matmul_ranks() {
  auto v = torch::randn({4});
  auto m = torch::randn({3, 4});
  auto w = torch::randn({4, 5});
  auto b3 = torch::randn({2, 3, 4});
  auto a = torch::matmul(v, v);
  auto b = torch::matmul(m, v);
  auto c = torch::matmul(v, w);
  auto d = torch::matmul(m, w);
  auto e = torch::matmul(b3, w);
  auto f = torch::matmul(b3, v);
  auto g = torch::matmul(m, torch::randn({2, 4, 5}));
  auto h = b3.matmul(torch::randn({2, 4, 6}));
  auto i = torch::matmul(torch::randn({2, 1, 3, 4}), torch::randn({5, 4, 2}));
}

void matmul_layouts() {
  auto x = torch::randn({2, 4, 4});
  auto w = torch::randn({4, 6});
  auto sliced = x.narrow(1, 0, 3);
  auto a = torch::matmul(sliced, w);
  auto t = torch::randn({2, 4, 3}).transpose(1, 2);
  auto b = torch::matmul(t, torch::randn({6, 4}).t());
  auto c = torch::matmul(t.transpose(1, 2), torch::randn({3, 2}));
}

void mm_bmm() {
  auto a = torch::randn({3, 4});
  auto b = torch::randn({4, 5});
  auto c = torch::mm(a, b);
  auto d = a.t().mm(a);
  auto x = torch::randn({2, 3, 4});
  auto y = torch::randn({2, 4, 5});
  auto e = torch::bmm(x, y);
  auto f = x.bmm(y.transpose(1, 2).transpose(1, 2));
}

void linear_ops() {
  auto x2 = torch::randn({3, 4});
  auto x3 = torch::randn({2, 3, 4});
  auto w = torch::randn({5, 4});
  auto bias = torch::randn({5});
  auto a = torch::linear(x2, w, bias);
  auto b = torch::linear(x3, w);
  auto c = F::linear(x3, w, bias);
  auto d = at::linear(x3.transpose(0, 1), w, bias);
  auto e = F::linear(torch::randn({4}), w);
}

void gathers() {
  auto x = torch::randn({5, 4});
  auto idx = torch::tensor({0, 2, 4});
  auto a = x.index_select(0, idx);
  auto b = torch::index_select(x.t(), 1, idx);
  auto emb = torch::randn({10, 3});
  auto ids = torch::randint(0, 10, {2, 4});
  auto c = torch::embedding(emb, ids);
  auto d = F::embedding(ids, emb);
  auto gi = torch::zeros({5, 2}, torch::kLong);
  auto e = x.gather(1, gi);
  auto f = torch::gather(x.t(), 0, torch::zeros({1, 5}, torch::kLong));
  auto g = x.index({idx});
}

void cat_stack_repeat() {
  auto a = torch::randn({2, 3});
  auto b = torch::randn({4, 3});
  auto c = torch::cat({a, b});
  auto d = torch::cat({a, a.t().t()}, 1);
  auto e = torch::cat({a, torch::zeros({2, 3}, torch::kFloat64)}, 0);
  auto f = torch::stack({a, a, a});
  auto g = torch::stack({a, a.t().contiguous().t()}, 2);
  auto n = torch::randn({2, 3, 4, 5}).contiguous(at::MemoryFormat::ChannelsLast);
  auto h = torch::cat({n, n}, 1);
  auto i = a.repeat({2, 1, 2});
  auto parts = b.chunk(2);
  auto j = torch::cat(parts, 1);
  auto k = torch::cat({a, torch::empty({0})});
}

void binary_ops() {
  auto x = torch::randn({2, 3});
  auto y = torch::randn({3});
  auto a = x + y;
  auto b = x * 2;
  auto c = 2 * x;
  auto d = x - y;
  auto e = x / y;
  auto f = 1.5 - x;
  auto g = x.add(y, 2);
  auto h = torch::mul(x, y.unsqueeze(0));
  auto i = x.sub(1);
  auto j = torch::div(x, 4);
}

void promotion() {
  auto ints = torch::arange(6).to(torch::kInt32).view({2, 3});
  auto a = ints + 1.5;
  auto b = ints / 2;
  auto c = ints * 2;
  auto d = ints + torch::ones({3}, torch::kFloat64);
  auto zd = torch::scalar_tensor(2.0, torch::kFloat64);
  auto e = ints + zd;
  auto f = torch::randn({2, 3}) + zd;
  auto h = torch::ones({3}, torch::kFloat16) * 2.5;
  auto bools = torch::ones({3}, torch::kBool);
  auto i = bools + 1;
  auto j = bools + bools;
  auto k = 2 - ints;
  auto l = torch::ones({2}, torch::kUInt8) + torch::ones({2}, torch::kInt8);
  auto m = torch::randn({3}).to(torch::kBFloat16) + torch::randn({3}).to(torch::kHalf);
}

void layouts() {
  auto x = torch::randn({2, 3, 4});
  auto t = x.transpose(1, 2);
  auto a = t + t;
  auto b = t + 1;
  auto c = t.exp();
  auto d = x.transpose(1, 2).contiguous() + t;
  auto e = t + x.transpose(1, 2).contiguous();
  auto f = t + torch::randn({4, 1});
  auto g = x.unsqueeze(0).expand({2, 2, 3, 4}) * 2;
  auto h = t.narrow(1, 0, 2) * 3;
}

void unary_and_compare() {
  auto x = torch::randn({2, 3});
  auto ints = torch::randint(0, 5, {2, 3});
  auto a = x.exp();
  auto b = torch::log(x);
  auto c = ints.sqrt();
  auto d = torch::tanh(x);
  auto e = ints.sigmoid();
  auto f = torch::relu(ints);
  auto g = torch::gelu(x);
  auto h = x.pow(2);
  auto i = ints.pow(2.5);
  auto j = -x;
  auto k = ints.abs();
  auto l = x > 0;
  auto m = x.lt(x.t().t());
  auto n = ints == 3;
  auto o = torch::maximum(x, torch::zeros({3}));
  auto p = torch::where(l, x, torch::zeros({2, 3}));
  auto q = x.max(torch::ones({1, 3}));
  auto r = 0 < x;
  auto s = torch::where(l, x, 0.5);
}

void in_place() {
  auto x = torch::randn({2, 3});
  auto y = torch::randn({3});
  auto a = x.add_(y);
  auto b = x.mul_(2);
  auto c = x.relu_();
  auto d = x.zero_();
  auto e = x.fill_(3);
  auto f = x.copy_(y);
  auto mask = x > 0;
  auto g = x.masked_fill_(mask, 0.5);
  auto h = x.clamp_(-1, 1);
  x += y;
  x *= 2;
  auto i = x.div_(2);
}

void compute_throws_mismatch() {
  auto a = torch::randn({2, 3});
  auto b = torch::randn({4, 5});
  auto bad = torch::mm(a, b);
}

void compute_throws_broadcast() {
  auto a = torch::randn({2, 3});
  auto bad = a + torch::randn({4});
}

void compute_throws_inplace_cast() {
  auto ints = torch::zeros({3}, torch::kInt64);
  auto bad = ints.div_(2);
}

void compute_throws_inplace_shape() {
  auto x = torch::randn({3});
  auto bad = x.add_(torch::randn({2, 3}));
}

void compute_throws_reverse_div() {
  auto ints = torch::zeros({3}, torch::kInt32);
  auto bad = 1 / ints;
}

void compute_throws_bool_sub() {
  auto m = torch::ones({3}, torch::kBool);
  auto bad = m - 1;
}

// atan2 and copysign compute in floating point: integral operands give the
// default float dtype; operands broadcast and promote.
void atan2_op() {
  auto x = torch::randn({2, 3});
  auto y = torch::atan2(x, x);
  auto i = torch::ones({4, 1, 3}, torch::kInt64);
  auto z = torch::atan2(i, i);
  auto d = torch::atan2(x, torch::randn({4, 1, 3}, torch::kFloat64));
  auto t = torch::atan2(x.t(), x.t());
}

void copysign_op() {
  auto x = torch::randn({2, 3});
  auto y = torch::copysign(x, torch::randn({3}));
  auto i = torch::ones({5}, torch::kInt32);
  auto s = torch::copysign(i, -1);
  auto h = x.copysign(torch::ones({2, 1}, torch::kFloat64));
}

// hypot and logaddexp keep the promoted dtype (floating types only).
void hypot_op() {
  auto x = torch::randn({2, 3});
  auto y = torch::hypot(x, x);
  auto d = torch::hypot(x, torch::randn({4, 2, 1}, torch::kFloat64));
  auto p = x.t().hypot(x.t());
}

void logaddexp_op() {
  auto x = torch::randn({2, 3});
  auto y = torch::logaddexp(x, x);
  auto b = torch::logaddexp(torch::randn({3}, torch::kFloat64), x);
}

// outer: a fresh (n, m) product of two 1-D tensors; anything else throws.
void outer_op() {
  auto a = torch::randn({4});
  auto b = torch::randn({3}, torch::kFloat64);
  auto o = torch::outer(a, b);
  auto s = a.outer(torch::arange(5));
  auto strided = torch::randn({8}).slice(0, 0, 8, 2);
  auto t = torch::outer(strided, a);
}

void outer_throws_on_2d() {
  auto m = torch::randn({2, 3});
  auto bad = torch::outer(m, torch::randn({3}));
}

// multinomial(num_samples, replacement): int64 indices, (num_samples) for a
// 1-D self and (rows, num_samples) for a 2-D one; the probabilities must
// be non-negative (rand, softmax), or LibTorch throws on the data.
void multinomial_op() {
  auto p = torch::rand({3, 5});
  auto draws = p.multinomial(4);
  auto again = torch::multinomial(p, 7, true);
  auto one = torch::softmax(torch::randn({6}), 0).multinomial(1);
  auto wide = p.t().to(torch::kFloat64).multinomial(2, true);
}

void multinomial_throws_too_many() {
  auto p = torch::rand({3, 5});
  auto bad = p.multinomial(6);
}

void multinomial_throws_rank() {
  auto p = torch::rand({2, 3, 5});
  auto bad = torch::multinomial(p, 2, true);
}

// A tensor's item() is a Scalar of its category (bool, integer, floating,
// complex): with a tensor operand, type promotion reads only that.
void item_scalars() {
  auto f = torch::randn({3, 2});
  auto i = torch::arange(6).view({3, 2});
  auto d = torch::randn({2}, torch::kDouble);
  auto h = torch::ones({2}, torch::kHalf);
  auto flag = torch::ones({1}, torch::kBool);
  auto c = torch::ones({1}, torch::kComplexFloat);
  auto a = f + d[0].item();
  auto b = i + d[1].item();
  auto e = i * i[0][0].item();
  auto g = h + f[0][0].item();
  auto k = f - i[1][1].item();
  auto m = i + flag[0].item();
  auto n = f * c[0].item();
  auto p = d.view({2, 1}).mm(d.view({1, 2})) + f[0][1].item();
}

// The operands torch-contiguous-copy asks matmul and linear about
// (matmulCopiesOperand): given without their contiguous(), a (T, B, C)
// tensor seen as (B, T, C) is folded with a copying reshape, by matmul and
// by linear with a bias (the fused addmm path takes only a contiguous 3-D
// input); a batched operand whose batch dims are not packed is flattened
// with a copying reshape; the transpose(1, 2) of a contiguous 3-D tensor
// goes to bmm as it is (LibTorch 1.13's should_fold). The allocated bytes
// differential_cpu measures tell the copies apart.
void matmul_strided_operands() {
  auto x = torch::randn({16, 8, 64});
  auto w = torch::randn({64, 32});
  auto bias = torch::randn({32});
  auto folded = torch::matmul(x.transpose(0, 1), w);
  auto linear_folded = torch::linear(x.transpose(0, 1), w.t(), bias);
  auto n = torch::randn({4, 64, 16});
  auto batched_as_is = torch::matmul(n.transpose(1, 2), w);
  auto linear_as_is = torch::linear(n.transpose(1, 2), w.t(), bias);
  auto q = torch::randn({2, 16, 4, 8});
  auto k = torch::randn({2, 4, 8, 16});
  auto flattened = q.transpose(1, 2).matmul(k);
}

// transpose(1, 2) with a size of 1 among the two dims keeps the tensor
// contiguous: contiguous() returns it (the "unless ... == 1" of
// torch-contiguous-copy's messages over the caller's sizes).
void contiguous_with_a_size_of_one() {
  auto q = torch::randn({4, 1, 16});
  auto t = q.transpose(1, 2);
  auto c = t.contiguous();
  auto r = torch::randn({4, 8, 16}).transpose(1, 2);
  auto d = r.contiguous();
}
