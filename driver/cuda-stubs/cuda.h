// Stands in for the CUDA driver API header (see cuda_runtime_api.h here).
#pragma once
#include "cuda_runtime_api.h"
#define CUDA_VERSION 11070
typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef struct CUstream_st *CUstream;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
extern "C" CUresult cuGetErrorString(CUresult, const char **);
