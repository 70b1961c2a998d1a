// CUDA's half type as host code and c10 name it (see cuda_runtime_api.h):
// storage and conversions only.
#pragma once
#include "host_defines.h"
struct __half_raw { unsigned short x; };
struct __half2_raw { unsigned short x, y; };
struct __half {
  unsigned short __x;
  __half() = default;
  __host__ __device__ __half(const __half_raw &r) : __x(r.x) {}
  __host__ __device__ __half(float f);
  __host__ __device__ operator float() const;
  __host__ __device__ operator __half_raw() const { return __half_raw{__x}; }
};
struct __half2 { __half x, y; };
typedef __half half;
typedef __half2 half2;
__host__ __device__ __half __float2half(float);
__host__ __device__ float __half2float(__half);
__device__ __half __ldg(const __half *);
