// cuSOLVER's status as ATen/cuda's headers name it (see
// cuda_runtime_api.h here).
#pragma once
#include "cuda_runtime_api.h"
typedef enum {
  CUSOLVER_STATUS_SUCCESS = 0,
  CUSOLVER_STATUS_INVALID_VALUE = 3,
  CUSOLVER_STATUS_EXECUTION_FAILED = 6
} cusolverStatus_t;
