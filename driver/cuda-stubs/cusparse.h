// cuSPARSE's handle and status as ATen/cuda's headers name them (see
// cuda_runtime_api.h here).
#pragma once
#include "cuda_runtime_api.h"
typedef struct cusparseContext *cusparseHandle_t;
typedef enum { CUSPARSE_STATUS_SUCCESS = 0 } cusparseStatus_t;
extern "C" const char *cusparseGetErrorString(cusparseStatus_t);
