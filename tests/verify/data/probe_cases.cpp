// Cases for the harness itself, run by verify_libtorch_tests on meta and on
// CPU. Every device below is redirected by the harness; the shapes are small
// so that a CPU run is instant.
#include <torch/torch.h>
#include <iostream>

using namespace torch::indexing;

namespace cases {
// Views keep the storage and the offset; reshape of a transpose copies.
void views() {
  auto x = torch::zeros({2, 3, 4}, torch::device(torch::kCUDA));
  auto y = x.transpose(1, 2);
  auto s = x.index({Slice(), Slice(1, None)});
  auto v = s.view({2, 8});
  auto r = y.reshape({8, 3});
  auto u = y.unsqueeze(1);
  auto c = y.clone();
}
}  // namespace cases

// relu has no Meta kernel in LibTorch 1.13: the harness reruns it on CPU.
void relu_on_meta() {
  auto x = torch::randn({4, 8}, torch::device(torch::kCUDA));
  auto y = torch::relu(x);
  auto z = y.t();
}

// User output must not end up in the harness's JSON.
void prints_to_stdout() {
  auto t = torch::ones({2, 3}, torch::TensorOptions().device(torch::Device("cuda:0")));
  std::cout << "noise from user code {\"not\": \"json\"}" << std::endl;
}

// Bytes the CPU allocator hands out: 1024 + 0 + 1024 + 2048 (freed at the
// end of its scope) + 1024; peak live 4096.
void allocations() {
  auto a = torch::empty({256}, torch::device(torch::kCUDA));
  auto b = a.view({16, 16});
  auto c = b.t().contiguous();
  {
    auto tmp = torch::empty({512}, torch::device(torch::kCUDA));
  }
  auto d = torch::empty({128}, torch::dtype(torch::kFloat64).device(torch::kCUDA));
}

// Options and vectors are not probed; an element of a vector is; an
// undefined tensor is reported as such.
void not_a_tensor() {
  auto opts = torch::dtype(torch::kFloat16).device(torch::kCUDA);
  auto parts = torch::ones({4, 2}, opts).chunk(2);
  auto p0 = parts[1];
  torch::Tensor undefined;
}

// A throw after two bindings: both probes stay.
void throws_late() {
  auto ids = torch::randint(0, 10, {2, 3}, torch::device(torch::kCUDA));
  auto emb = torch::randn({10, 4}, torch::device(torch::kCUDA));
  auto hidden = emb[ids];
}

// A crash costs this function only.
void crashes() {
  auto before = torch::ones({2}, torch::device(torch::kCUDA));
  volatile int *Null = nullptr;
  *Null = 1;
}

// The CPU rerun of a meta failure is bounded: run with a 1 MB budget, the
// 4 MiB randn fails on CPU and the function reports the budget.
void fallback_too_big() {
  auto x = torch::randn({1024, 1024}, torch::device(torch::kCUDA));
  auto y = torch::relu(x);
}

// A probe in a loop fires every iteration; past 10000 the rest are counted.
void loops() {
  auto x = torch::zeros({4}, torch::device(torch::kCUDA));
  for (int I = 0; I < 10004; ++I) {
    auto t = x.view({2, 2});
  }
}

int main() {
  std::cout << "the user's own main is renamed" << std::endl;
  return 1;
}
