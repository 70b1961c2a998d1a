// Ops no hand rule models (model/ops/OpTable.def has none of them): their
// view-or-copy answer, base and keeps-alive come from the ATen schema in
// the headers being parsed (frontend/AtenOps.h); shapes stay unknown.
// Small CPU shapes, so the differential tests can run them.
#include <torch/torch.h>

// `Tensor(a) -> Tensor(a)`: a view of the input, whatever its shape.
void schema_views() {
  auto x = torch::randn({3, 4});
  auto a = x.adjoint();
  auto b = x.mH();
  auto c = x.conj();
  auto d = torch::real(x);
  auto e = x.positive();
  auto f = torch::broadcast_to(x, {2, 3, 4});
  auto g = x.matrix_H();
  auto h = torch::randn({2, 3}, torch::kComplexFloat).conj();
}

// Annotated otherwise than they behave: the registry keeps them unknown.
void schema_not_trusted() {
  auto x = torch::randn({3, 4});
  auto a = torch::atleast_1d(x); // x itself
  auto b = x.ravel();            // a view here, a copy of a transposed x
}

// `Tensor(a -> *) -> Tensor(a)[]`: the pieces are views of the input.
void schema_list_views() {
  auto x = torch::randn({6, 4});
  auto parts = x.tensor_split(3);
  auto p = parts[0];
  auto halves = torch::hsplit(x, 2);
  auto h = halves[0];
  auto v = torch::vsplit(x, {1, 4})[0];
}

// Unannotated returns: new storage.
void schema_copies() {
  auto x = torch::randn({3, 4});
  auto a = x.flip({0});
  auto b = torch::fliplr(x);
  auto c = x.roll(1, 0);
  auto d = x.cumprod(1);
  auto e = torch::kron(x, x);
  auto f = torch::rot90(x, 1, {0, 1});
  auto g = x.exp2();
  auto h = torch::nan_to_num(x);
}

// out= forms: the out tensor is written (unknown afterwards) and returned.
void schema_out_forms() {
  auto x = torch::randn({3, 4});
  auto y = torch::randn({4, 5});
  auto out = torch::empty({3, 5});
  auto r = at::mm_out(out, x, y);
  auto s = torch::empty({3, 4});
  auto q = at::add_out(s, x, x);
  auto t = torch::empty({3, 4});
  auto u = at::cumsum_out(t, x, 1);
}

// In-place forms the table lacks: self is written and returned.
void schema_in_place() {
  auto x = torch::randn({3, 4});
  auto a = x.cumsum_(1);
  auto b = x.exp2_();
  auto c = torch::randn({2, 3});
  auto d = c.fmod_(2.0);
}
