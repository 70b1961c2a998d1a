// What LibTorch's CUDA caching allocator holds (issue 37): the report's
// summary.cuda_allocator for functions with tensors on CUDA, checked by
// tests/frontend/CudaAllocatorTest.cpp and, on a GPU machine, by
// scripts/device-verify-cuda.sh (--verify=cuda).
#include <torch/torch.h>

// x: 1 KiB, a 1 KiB block of a 2 MiB small segment. ones(): a 12 MiB
// temporary in a 12 MiB segment of its own; y: 12 MiB, another segment.
// The temporary's block is freed with the statement and stays reserved:
// z takes it, no third 12 MiB segment. Peak allocated 1 KiB + 24 MiB,
// reserved 26 MiB (38 MiB without the reuse).
void reuse_after_free() {
  auto opts = torch::dtype(torch::kFloat32).device(torch::kCUDA);
  auto x = torch::zeros({256}, opts);
  auto y = torch::ones({3 * 1024 * 1024}, opts).mul(2);
  auto z = torch::ones({3 * 1024 * 1024}, opts);
}

// 11 MiB gets a segment of its own rounded up to 12 MiB, and the 1 MiB
// left is not split off, so the whole 12 MiB block counts as allocated;
// one float takes a 512 B block of a 2 MiB segment. Peak allocated
// 12 MiB + 512 B, reserved 14 MiB.
void own_segment() {
  auto opts = torch::dtype(torch::kFloat32).device(torch::kCUDA);
  auto a = torch::empty({11 * 1024 * 1024 / 4}, opts);
  auto b = torch::empty({1}, opts);
}

// The size is a formula over n: the allocator's rounding is not guessed.
void symbolic_size(int64_t n) {
  auto x = torch::zeros({n}, torch::device(torch::kCUDA));
}

// No tensor on CUDA: no cuda_allocator in its report.
void cpu_only() {
  auto x = torch::zeros({4});
}
