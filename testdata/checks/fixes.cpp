// Fix-its: tensor-accountant --fix and clang-tidy-16 -fix must apply the same
// edits (CHECK-FIXES lines, then a byte comparison of the two fixed files),
// and the fixed file must still compile. No fix-it inside a macro, none on a
// free-function call that has no receiver to rewrite.
#include <torch/torch.h>

// torch-reshape-copy: x.reshape(s) -> x.contiguous().view(s).
void fix_reshape() {
  auto x = torch::randn({4, 8, 16});
  auto q = x.permute({1, 0, 2}).reshape({8, 64});
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: reshape() copies 2 KiB because its input is not viewable as the new shape; use .contiguous().view() to make the copy explicit, or .view() where no copy is intended [torch-reshape-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: the input stopped being contiguous here, at permute()
  // CHECK-FIXES: {{^}}  auto q = x.permute({1, 0, 2}).contiguous().view({8, 64});{{$}}
}

// torch-redundant-copy: drop .clone() of a temporary.
void fix_redundant_clone() {
  auto x = torch::randn({256, 256});
  auto y = (x * 2).clone();
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: clone() copies 256 KiB of a fresh tensor from mul() that nothing else uses; the copy is redundant [torch-redundant-copy]
  // CHECK-NOTES: :[[@LINE-2]]:15: note: the tensor was freshly made here by mul()
  // CHECK-FIXES: {{^}}  auto y = (x * 2);{{$}}
}

// torch-randint-default-dtype: give the options a dtype.
void fix_randint() {
  auto ids = torch::randint(0, 10, {4, 8}, torch::device(torch::kCPU));
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: randint() with options but no dtype makes float32 tensors in C++, not int64 as in Python; give the options a dtype [torch-randint-default-dtype]
  // CHECK-FIXES: {{^}}  auto ids = torch::randint(0, 10, {4, 8}, at::TensorOptions(torch::device(torch::kCPU)).dtype(at::kLong));{{$}}
  auto perm = torch::randperm(16, torch::kCPU);
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: randperm() with options but no dtype makes float32 tensors in C++, not int64 as in Python; give the options a dtype [torch-randint-default-dtype]
  // CHECK-FIXES: {{^}}  auto perm = torch::randperm(16, at::TensorOptions(torch::kCPU).dtype(at::kLong));{{$}}
}

// torch-tensor-subscript: t[idx] -> t.index({idx}).
void fix_subscript() {
  auto emb = torch::randn({100, 8});
  auto ids = torch::randint(0, 100, {4}, torch::kLong);
  auto h = emb[ids];
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: operator[] with a 1-dim index tensor throws at run time (only 0-dim integral tensors are allowed); use .index({...}) to gather [torch-tensor-subscript]
  // CHECK-FIXES: {{^}}  auto h = emb.index({ids});{{$}}
}

// Two fix-its on one line, nested: both apply.
void fix_nested() {
  auto emb = torch::randn({100, 8});
  auto h = emb[torch::randint(0, 100, {4}, torch::device(torch::kCPU))];
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: operator[] with a 1-dim index tensor throws at run time (only 0-dim integral tensors are allowed); use .index({...}) to gather [torch-tensor-subscript]
  // CHECK-MESSAGES: :[[@LINE-2]]:16: warning: randint() with options but no dtype makes float32 tensors in C++, not int64 as in Python; give the options a dtype [torch-randint-default-dtype]
  // CHECK-FIXES: {{^}}  auto h = emb.index({torch::randint(0, 100, {4}, at::TensorOptions(torch::device(torch::kCPU)).dtype(at::kLong))});{{$}}
}

// No fix-it: the call is inside a macro.
#define CLONE_OF(t) (t).clone()
void no_fix_in_macro() {
  auto x = torch::randn({256, 256});
  auto y = CLONE_OF(x * 2);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: clone() copies 256 KiB of a fresh tensor from mul() that nothing else uses; the copy is redundant [torch-redundant-copy]
  // CHECK-NOTES: :[[@LINE-2]]:12: note: the tensor was freshly made here by mul()
  // CHECK-FIXES: {{^}}  auto y = CLONE_OF(x * 2);{{$}}
}

// No fix-it: free-function spellings, and flatten (its arguments are not
// view's).
void no_fix_free_functions() {
  auto x = torch::randn({4, 8, 16});
  auto q = torch::reshape(x.permute({1, 0, 2}), {8, 64});
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: reshape() copies 2 KiB because its input is not viewable as the new shape; use .contiguous().view() to make the copy explicit, or .view() where no copy is intended [torch-reshape-copy]
  // CHECK-NOTES: :[[@LINE-2]]:29: note: the input stopped being contiguous here, at permute()
  // CHECK-FIXES: {{^}}  auto q = torch::reshape(x.permute({1, 0, 2}), {8, 64});{{$}}
  auto y = torch::clone(x * 2);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: clone() copies 2 KiB of a fresh tensor from mul() that nothing else uses; the copy is redundant [torch-redundant-copy]
  // CHECK-NOTES: :[[@LINE-2]]:27: note: the tensor was freshly made here by mul()
  // CHECK-FIXES: {{^}}  auto y = torch::clone(x * 2);{{$}}
  auto f = x.transpose(0, 1).flatten();
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: flatten() copies 2 KiB because its input is not viewable as the new shape; use .contiguous().view() to make the copy explicit, or .view() where no copy is intended [torch-reshape-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: the input stopped being contiguous here, at transpose()
  // CHECK-FIXES: {{^}}  auto f = x.transpose(0, 1).flatten();{{$}}
}
