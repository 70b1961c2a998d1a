// Stands in for the CUDA runtime header where no CUDA Toolkit is installed
// (see cuda_runtime_api.h here): the API, and the built-in variables of
// device code, declared as device variables (kernel bodies are not
// analysed, but a __host__ __device__ body may name them).
#pragma once
#include "cuda_runtime_api.h"
#include "cuda_fp16.h"
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;
