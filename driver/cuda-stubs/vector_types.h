// CUDA's vector types as host code uses them: dim3 for launch
// configurations, and the small structs threadIdx and friends are made of.
#pragma once
#include "host_defines.h"
struct uint3 { unsigned int x, y, z; };
struct int2 { int x, y; };
struct int4 { int x, y, z, w; };
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct double2 { double x, y; };
struct dim3 {
  unsigned int x, y, z;
  constexpr __host__ __device__ dim3(unsigned int vx = 1, unsigned int vy = 1,
                                     unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr __host__ __device__ dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
