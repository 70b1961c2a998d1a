// torch-contiguous-copy: its positive and negative cases, run with only this check
// enabled (RUN-CHECKS) through both front ends, our CLI and clang-tidy-16
// --load (tests/checks/check_torch_tidy.py, ctest checks.*.torch-contiguous-copy).
// Expectations follow clang-tidy's check_clang_tidy.py: CHECK-MESSAGES for
// warnings, CHECK-NOTES for notes; a function with no CHECK lines must stay
// silent under this check. Other checks' cases live in their own files, so
// a new warning of one check cannot break another's negative case;
// precision.cpp runs every check at once on purpose.
// RUN-CHECKS: -*,torch-contiguous-copy
#include <torch/torch.h>

void contiguous_after_transpose() {
  auto x = torch::randn({64, 1024});
  auto y = x.transpose(0, 1).contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: contiguous() copies 256 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by transpose()
}

void contiguous_after_permute() {
  auto x = torch::zeros({8, 16, 32});
  auto p = x.permute({2, 0, 1});
  auto c = p.contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: contiguous() copies 16 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-3]]:14: note: contiguity is lost here by permute()
}

void clone_into_contiguous_format() {
  auto x = torch::randn({64, 64});
  auto c = x.t().clone(at::MemoryFormat::Contiguous);
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: clone() copies 16 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by t()
}

// Shapes unknown: fires on the pattern and says the size is unknown.
void contiguous_unknown_size(torch::Tensor x) {
  auto y = x.transpose(0, 1).contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: contiguous() copies a tensor of unknown size: its input comes from transpose() [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by transpose()
}

// Negative: the copy is the price of a use that needs contiguous memory.
// view() raises on the transposed strides (the attention block's
// `y.transpose(1, 2).contiguous().view(...)`), and a call the analysis does
// not follow (a kernel launcher) may read the memory as a flat array.
void contiguous_before_view() {
  auto y = torch::randn({2, 4, 8, 16});
  auto z = y.transpose(1, 2).contiguous().view({2, 8, 64});
  auto c = y.permute({0, 2, 1, 3}).contiguous();
  auto d = c.view_as(z);
}

torch::Tensor attention_merge_heads(torch::Tensor y, int64_t B, int64_t T,
                                    int64_t C) {
  return y.transpose(1, 2).contiguous().view({B, T, C});
}

void launch_kernel(const torch::Tensor &in, torch::Tensor &out);

void contiguous_for_a_kernel() {
  auto x = torch::randn({32, 64});
  auto out = torch::empty({64, 32});
  auto in = x.t().contiguous();
  launch_kernel(in, out);
}

// A raw pointer hands the memory to code that reads it as a flat array.
void scale_rows(float *rows, int64_t n);
void contiguous_for_a_raw_pointer() {
  auto x = torch::randn({32, 64});
  auto in = x.t().contiguous();
  scale_rows(in.data_ptr<float>(), in.numel());
  auto other = x.t().contiguous();
  float *p = other.data_ptr<float>();
  scale_rows(p, 64);
}

// Still reported: every use of the copy accepts strided input.
void contiguous_before_strided_ops() {
  auto y = torch::randn({2, 4, 8, 16});
  auto u = y.transpose(1, 2).contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: contiguous() copies 4 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by transpose()
  auto r = u.exp() + u.sum();
}

// Negative: a matmul or a linear that would copy the non-contiguous input
// itself. matmul folds a 3-D (or higher) left operand against a matrix with
// reshape({-1, k}), and flattens a batched operand with reshape({b, n, m});
// for these inputs neither reshape can be a view, so without contiguous()
// the op would make the same copy (a torch::nn::Linear with a bias takes
// the fused addmm path only for a contiguous input). ReportRequired shows
// them (options.cpp).
void contiguous_before_folding_linear() {
  torch::nn::Linear fc(64, 32);
  auto x = torch::randn({16, 8, 64}); // (T, B, C)
  auto y = fc->forward(x.transpose(0, 1).contiguous());
  auto w = torch::randn({64, 32});
  auto z = torch::matmul(x.transpose(0, 1).contiguous(), w);
}

void contiguous_before_batched_matmul() {
  auto q = torch::randn({2, 16, 4, 8}); // (B, T, H, D)
  auto k = torch::randn({2, 4, 8, 16});
  auto att = q.transpose(1, 2).contiguous().matmul(k);
}

// Still reported: a 2-D input to a Linear goes to addmm, which takes the
// transposed strides as they are.
void contiguous_before_linear_2d() {
  torch::nn::Linear fc(64, 32);
  auto x = torch::randn({64, 128});
  auto y = fc->forward(x.t().contiguous());
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: contiguous() copies 32 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:26: note: contiguity is lost here by t()
}

// Still reported: LibTorch 1.13's matmul does not fold a 3-D operand whose
// last two dims are transposed and whose first is outermost
// (transpose(1, 2) of a contiguous tensor); it hands it to bmm uncopied.
void contiguous_before_bmm_linear() {
  torch::nn::Linear fc(64, 32);
  auto x = torch::randn({4, 64, 16}); // (N, C, L)
  auto y = fc->forward(x.transpose(1, 2).contiguous());
  // CHECK-MESSAGES: :[[@LINE-1]]:42: warning: contiguous() copies 16 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:26: note: contiguity is lost here by transpose()
}

// Over the caller's sizes the copy rests on the assumption that no size is
// 1 (docs/symbolic.md); the message names the size at which, were it 1,
// the input would be contiguous and contiguous() would copy nothing.
void contiguous_unless_a_size_is_one(torch::Tensor q) {
  auto flat = q.view({q.size(0), q.size(1), -1}).transpose(1, 2).contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:66: warning: contiguous() copies q.element_size()·q.numel() B because its input is not contiguous (unless q.size(1) == 1) [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:50: note: contiguity is lost here by transpose()
  auto r = flat.exp();
}

// Negative: contiguous() of a contiguous tensor returns self.
void contiguous_already_contiguous() {
  auto x = torch::randn({64, 64});
  auto y = x.contiguous();
  auto z = x.narrow(0, 0, 8).contiguous();
}

// Negative: a deliberate conversion to channels-last copies a contiguous
// input; nothing was lost.
void contiguous_channels_last() {
  auto x = torch::randn({8, 3, 32, 32});
  auto y = x.contiguous(at::MemoryFormat::ChannelsLast);
}

// Negative: clone() keeps the layout (Preserve), it does not make it
// contiguous; a parameter of unknown layout is not a pattern.
void clone_preserves_layout(torch::Tensor param) {
  auto x = torch::randn({64, 64});
  auto y = x.t().clone();
  auto z = param.contiguous();
}

// ---- NOLINT works the same in both front ends ----------------------------------

void nolint_cases() {
  auto x = torch::randn({64, 64});
  auto a = x.t().contiguous(); // NOLINT(torch-contiguous-copy)
  // NOLINTNEXTLINE(torch-*)
  auto b = x.t().contiguous();
  auto c = x.t().contiguous(); // NOLINT
  auto d = x.t().contiguous(); // NOLINT(torch-reshape-copy)
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: contiguous() copies 16 KiB because its input is not contiguous [torch-contiguous-copy]
  // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by t()
  // NOLINTBEGIN(torch-contiguous-copy)
  auto e = x.t().contiguous();
  auto f = x.t().contiguous();
  // NOLINTEND(torch-contiguous-copy)
}

// ---- Lambdas are functions of their own in both front ends ---------------------

void with_lambda() {
  auto make = [] {
    auto a = torch::randn({8, 8});
    return a.t().contiguous();
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: contiguous() copies 256 B because its input is not contiguous [torch-contiguous-copy]
    // CHECK-NOTES: :[[@LINE-2]]:14: note: contiguity is lost here by t()
  };
}

// ---- Ops are the table's, not their spellings ----------------------------------

// Negative: the user's own functions spelled like LibTorch ops are not those
// ops. Their calls are not analysed, and neither is taken for a transpose or
// a contiguous() (the check once matched op names as strings and fired on
// both).
torch::Tensor transpose(const torch::Tensor &x);
torch::Tensor contiguous(const torch::Tensor &x);

void own_transpose_then_contiguous(torch::Tensor x) {
  auto y = transpose(x).contiguous();
}

void own_contiguous_of_a_view(torch::Tensor x) {
  auto y = contiguous(x.t());
}
