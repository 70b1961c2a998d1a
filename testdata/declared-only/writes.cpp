// Calls into code the analysis cannot see (declared here, defined in another
// translation unit or a library): what they may write is unknown after
// them. tests/hostile/check_declared_only.py runs the tool on this file and
// requires every name an `EXPECT-UNKNOWN:` line lists to be unknown, with a
// reason that names the call; nothing here can be linked, so LibTorch never
// runs it (the hostile corpus' harness could not build it).
#include <torch/torch.h>

#include <vector>

void grow_elsewhere(torch::Tensor t);
void rebuild_elsewhere(torch::Tensor &t);

// A by-value handle shares the TensorImpl: `t.unsqueeze_(0)` there changes
// `a` and every handle to it.
// EXPECT-UNKNOWN: b c
// EXPECT-KNOWN: v
void declared_only_may_reshape_by_value() {
  auto a = torch::ones({3, 4});
  auto alias = a;
  auto view = a.narrow(0, 0, 2);
  grow_elsewhere(a);
  auto b = a.clone();
  auto c = alias.clone();
  auto v = view.clone();
}

// A non-const reference may be rebound or changed in place.
// EXPECT-UNKNOWN: b c
void declared_only_may_rebuild_by_reference() {
  auto a = torch::ones({3, 4});
  auto alias = a;
  rebuild_elsewhere(a);
  auto b = a.clone();
  auto c = alias.clone();
}

void look_elsewhere(const torch::Tensor &t);
void gather_elsewhere(const std::vector<torch::Tensor> &v);

// Even a const reference may be reshaped in place: `unsqueeze_` is a
// const method of torch::Tensor.
// EXPECT-UNKNOWN: b
void declared_only_may_reshape_by_const_reference() {
  auto a = torch::ones({3, 4});
  look_elsewhere(a);
  auto b = a.clone();
}

// The tensors a container holds are handles the callee may reshape.
// EXPECT-UNKNOWN: b c
// EXPECT-KNOWN: d
void declared_only_may_reshape_what_a_vector_holds() {
  auto a = torch::ones({3, 4});
  auto other = torch::ones({2});
  std::vector<torch::Tensor> v;
  v.push_back(a);
  gather_elsewhere(v);
  gather_elsewhere({other});
  auto b = a.clone();
  auto c = other.clone();
  auto d = torch::ones({5}).clone();
}
