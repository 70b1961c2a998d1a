// The CUDA execution-space and memory-space keywords as clang's CUDA front
// end spells them (clang's __clang_cuda_runtime_wrapper.h does the same
// from CUDA's host_defines.h, which these stubs stand in for).
#pragma once
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __align__(n) __attribute__((aligned(n)))
#define __device_builtin__
#define __builtin_align__(a) __align__(a)
#define CUDARTAPI
