// torch-tensor-subscript: its positive and negative cases, run with only this check
// enabled (RUN-CHECKS) through both front ends, our CLI and clang-tidy-16
// --load (tests/checks/check_torch_tidy.py, ctest checks.*.torch-tensor-subscript).
// Expectations follow clang-tidy's check_clang_tidy.py: CHECK-MESSAGES for
// warnings, CHECK-NOTES for notes; a function with no CHECK lines must stay
// silent under this check. Other checks' cases live in their own files, so
// a new warning of one check cannot break another's negative case;
// precision.cpp runs every check at once on purpose.
// RUN-CHECKS: -*,torch-tensor-subscript
#include <torch/torch.h>

void subscript_with_index_tensor() {
  auto emb = torch::randn({100, 8});
  auto ids = torch::randint(0, 100, {4}, torch::kLong);
  auto h = emb[ids];
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: operator[] with a 1-dim index tensor throws at run time (only 0-dim integral tensors are allowed); use .index({...}) to gather [torch-tensor-subscript]
}

void subscript_unknown_rank(torch::Tensor emb, torch::Tensor ids) {
  auto h = emb[ids];
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: operator[] with an index tensor of unknown rank throws at run time unless it is 0-dim; use .index({...}) to gather [torch-tensor-subscript]
}

// Negative: integer subscripts and 0-dim index tensors select.
void subscript_scalar() {
  auto emb = torch::randn({100, 8});
  auto ids = torch::randint(0, 100, {4}, torch::kLong);
  auto a = emb[3];
  auto b = emb[ids[0]];
}
