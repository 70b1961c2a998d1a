// CUDA host code as a PyTorch extension writes it (issue 35, item 7): the
// launchers are analysed like any C++, the kernels' bodies are device code
// and are not. A launch hands the kernel its tensors' memory: each may be
// read and written, by bytes the analysis does not know. Checked by
// tests/driver/test_cuda.py and the snapshots (testdata/snapshots/).
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda.h>
#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void scale_kernel(const scalar_t *__restrict__ x,
                             scalar_t *__restrict__ out, scalar_t factor,
                             int64_t n) {
  const int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] * factor;
}

__global__ void add_bias_kernel(float *y, const float *bias, int rows,
                                int cols) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols)
    y[i] += bias[i % cols];
}

__device__ float square(float v) { return v * v; }

// The launcher of an elementwise kernel: out is x's shape and dtype.
torch::Tensor scale_cuda(torch::Tensor x, double factor) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  const at::cuda::OptionalCUDAGuard device_guard(device_of(x));
  auto out = torch::zeros_like(x);
  const int64_t n = x.numel();
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  auto stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "scale_cuda", [&] {
    scale_kernel<scalar_t><<<blocks, threads, 0, stream>>>(
        x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(),
        static_cast<scalar_t>(factor), n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

// Shapes the launcher knows: a [64, 128] float32 output and its bias.
torch::Tensor add_bias_fixed() {
  auto opts = torch::dtype(torch::kFloat32).device(torch::kCUDA);
  auto y = torch::zeros({64, 128}, opts);
  auto bias = torch::ones({128}, opts);
  const int rows = 64, cols = 128;
  add_bias_kernel<<<(rows * cols + 255) / 256, 256>>>(
      y.data_ptr<float>(), bias.data_ptr<float>(), rows, cols);
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, cudaGetErrorString(err));
  return y;
}

// A host launcher with a scratch buffer and a copy back to the host.
torch::Tensor staged_copy(torch::Tensor src) {
  auto host = torch::empty({32, 32}, torch::kFloat32);
  auto dev = torch::empty({32, 32}, torch::dtype(torch::kFloat32).device(torch::kCUDA));
  cudaMemcpy(host.data_ptr<float>(), dev.data_ptr<float>(),
             host.numel() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaDeviceSynchronize();
  return host;
}

// A macro that pastes its body once per element type, as AT_DISPATCH does:
// copies that answer alike are listed once, copies that differ each
// (scratch is 256 B for float and 512 B for double).
#define FOR_FLOAT_AND_DOUBLE(...)                                              \
  [&] {                                                                        \
    {                                                                          \
      using scalar_t = float;                                                  \
      __VA_ARGS__();                                                           \
    }                                                                          \
    {                                                                          \
      using scalar_t = double;                                                 \
      __VA_ARGS__();                                                           \
    }                                                                          \
  }()

void per_type_scratch() {
  FOR_FLOAT_AND_DOUBLE([&] {
    auto scratch = torch::empty(
        {16 * static_cast<int64_t>(sizeof(scalar_t))}, torch::kFloat32);
  });
  FOR_FLOAT_AND_DOUBLE([&] { auto same = torch::empty({8}, torch::kInt64); });
}
