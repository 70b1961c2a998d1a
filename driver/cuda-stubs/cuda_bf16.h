// CUDA's bfloat16 type as host code and c10 name it (see
// cuda_runtime_api.h): storage and conversions only.
#pragma once
#include "cuda_fp16.h"
struct __nv_bfloat16_raw { unsigned short x; };
struct __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  __host__ __device__ __nv_bfloat16(const __nv_bfloat16_raw &r) : __x(r.x) {}
  __host__ __device__ __nv_bfloat16(float f);
  __host__ __device__ operator float() const;
  __host__ __device__ operator __nv_bfloat16_raw() const {
    return __nv_bfloat16_raw{__x};
  }
};
struct __nv_bfloat162 { __nv_bfloat16 x, y; };
__host__ __device__ __nv_bfloat16 __float2bfloat16(float);
__host__ __device__ float __bfloat162float(__nv_bfloat16);
