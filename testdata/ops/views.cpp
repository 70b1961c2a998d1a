// View ops: every named tensor here shares its input's storage (or is the
// input itself). Small CPU shapes, so the differential test can run them.
#include <torch/torch.h>

using namespace torch::indexing;

void narrow_slice() {
  auto x = torch::randn({4, 6});
  auto a = x.narrow(1, 2, 3);
  auto b = x.narrow(0, -2, 2);
  auto c = x.slice(1, 1, 5, 2);
  auto d = x.slice(0, -3);
  auto e = x.slice(1, 0, 100, 4);
  auto f = x.select(1, 3);
  auto g = x.select(0, -1);
}

void unsqueeze_squeeze() {
  auto x = torch::randn({2, 1, 3, 1});
  auto a = x.squeeze();
  auto b = x.squeeze(1);
  auto c = x.squeeze(0);
  auto d = x.unsqueeze(0);
  auto e = x.unsqueeze(-1);
  auto y = torch::randn({2, 4, 3}).transpose(1, 2);
  auto f = y.unsqueeze(1);
  auto s = torch::randn({});
  auto g = s.unsqueeze(0);
}

void expand_ops() {
  auto x = torch::randn({3, 1});
  auto a = x.expand({2, 3, 4});
  auto b = x.expand({-1, 5});
  auto c = x.expand({1, 3, 1});
  auto y = torch::randn({2, 3, 4});
  auto d = x.unsqueeze(0).expand_as(y.narrow(2, 0, 1));
  auto s = torch::randn({});
  auto e = s.expand({2, 2});
}

void as_strided_diag_unfold() {
  auto x = torch::randn({4, 5});
  auto a = x.as_strided({2, 2}, {1, 2}, 3);
  auto b = x.as_strided({3}, {5});
  auto c = x.diagonal();
  auto d = x.diagonal(1);
  auto e = x.diagonal(-2);
  auto y = torch::randn({2, 3, 3});
  auto f = y.diagonal(0, 1, 2);
  auto g = x.unfold(1, 2, 1);
  auto h = x.unfold(0, 2, 2);
}

void transposes() {
  auto x = torch::randn({2, 3, 4});
  auto a = x.movedim(0, 2);
  auto b = x.movedim({0, 1}, {2, 0});
  auto c = x.mT();
  auto d = x.swapaxes(0, 2);
  auto e = x.permute({2, 0, 1});
  auto f = torch::transpose(x, 0, 1);
}

void flatten_ops() {
  auto x = torch::randn({2, 3, 4});
  auto a = x.flatten();
  auto b = x.flatten(1);
  auto c = x.flatten(1, 1);
  auto t = x.transpose(0, 1);
  auto d = t.flatten();
  auto e = t.flatten(1);
  auto s = torch::randn({});
  auto f = s.flatten();
  auto g = x.unflatten(2, {2, 2});
  auto h = t.unflatten(0, {3, 1});
}

void view_dtype() {
  auto x = torch::randn({2, 3, 4});
  auto a = x.view(torch::kInt32);
  auto b = x.view(torch::kUInt8);
  auto c = x.view(torch::kFloat16);
  auto d = x.view(torch::kFloat64);
  auto e = x.narrow(2, 1, 2).view(torch::kInt16);
}

void chunk_split_unbind() {
  auto x = torch::randn({6, 4});
  auto parts = x.chunk(3);
  auto p0 = parts[0];
  auto p2 = parts[2];
  auto q = x.chunk(4, 1)[1];
  auto halves = x.split(4);
  auto h1 = halves[1];
  auto sized = x.split_with_sizes({1, 2, 1}, 1);
  auto s2 = sized.at(2);
  auto rows = x.unbind(0);
  auto r5 = rows[5];
  auto y = torch::randn({4, 2});
  auto few = y.chunk(3);
  auto last = few.back();
  auto t0 = torch::randn({6}).chunk(2)[0];
}

void index_views() {
  auto x = torch::randn({2, 3, 4});
  auto a = x.index({Ellipsis});
  auto b = x.index({Ellipsis, 1});
  auto c = x.index({Slice(), Slice(1, None, 2)});
  auto d = x.index({None, Ellipsis, Slice(None, 2)});
  auto e = x.index({Slice()});
  auto f = x.index({1, Ellipsis, 2});
  auto g = x[1][2];
  auto h = x.alias();
}

void reshape_views() {
  auto x = torch::randn({2, 3, 4});
  auto a = x.reshape({6, 4});
  auto t = x.transpose(1, 2);
  auto b = t.reshape({2, 12});
  auto c = t.reshape({2, 2, 2, 3});
  auto d = x.unsqueeze(0).expand({2, 2, 3, 4}).reshape({2, 24});
  auto e = x.view({-1});
  auto f = x.view_as(a);
}

// Each of these throws in LibTorch; the tool must say so.
void view_throws() {
  auto x = torch::randn({2, 3, 4});
  auto t = x.transpose(1, 2);
  auto bad = t.view({8, 3});
}

void narrow_throws() {
  auto x = torch::randn({4, 6});
  auto bad = x.narrow(1, 4, 3);
}

void expand_throws() {
  auto x = torch::randn({3, 2});
  auto bad = x.expand({3, 4});
}

void view_dtype_throws() {
  auto x = torch::randn({2, 3, 4}).transpose(1, 2);
  auto bad = x.view(torch::kFloat64);
}

// detach (the op table's worked example, docs/architecture.md): a new
// tensor on the same storage with the same geometry.
void detach_shares() {
  auto x = torch::randn({4, 6});
  auto y = x.t().detach();
  auto z = torch::detach(y);
  auto w = z.contiguous();
}

// unsqueeze_, squeeze_, transpose_, t_: self itself takes the new
// geometry (no element moves); a view changed in place stays a view.
void inplace_restride() {
  auto a = torch::randn({2, 3}).unsqueeze_(1);
  auto b = torch::randn({2, 1, 3, 1}).squeeze_();
  auto c = torch::randn({2, 1, 3}).squeeze_(1);
  auto d = torch::randn({2, 3, 4}).transpose_(0, 2);
  auto e = torch::randn({2, 3}).t_();
  auto f = torch::randn({2, 3, 4}).swapaxes_(1, 2);
  auto y = torch::randn({4, 6});
  auto x = y.narrow(1, 1, 3);
  x.unsqueeze_(-1);
  auto g = x.squeeze(0);
  x.transpose_(0, 2);
  auto h = x.clone();
}

// requires_grad_: self itself, its flag set; a view stays a view.
void requires_grad_returns_self() {
  auto x = torch::randn({3, 4}).requires_grad_();
  auto y = torch::randn({2, 5}).t().requires_grad_(false);
  auto z = x.detach().requires_grad_(true);
}

// copy_ of a transposed matrix into a contiguous one on the CPU goes
// through a 60 x 60 block buffer (120 x 120 for uint8) once it has 60 * 60
// elements or more (Copy.cpp, copy_same_type_transpose_).
void transposed_copies_use_a_block_buffer() {
  auto a = torch::randn({64, 80});
  auto b = a.t().contiguous();
  auto c = torch::randint(0, 255, {100, 40}, torch::kByte).t().contiguous();
  auto d = torch::randn({50, 50}).t().contiguous();
  auto e = a.t().clone();
  auto f = a.t().reshape({-1});
  auto g = torch::randn({70, 60}, torch::kDouble).t().contiguous();
}
