// Calls into code the analysis cannot see (declared here, defined in another
// translation unit or a library): what they may write is unknown after
// them. tests/hostile/check_declared_only.py runs the tool on this file and
// requires every name an `EXPECT-UNKNOWN:` line lists to be unknown, with a
// reason that names the call; nothing here can be linked, so LibTorch never
// runs it (the hostile corpus' harness could not build it).
#include <torch/torch.h>

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
