// cuSOLVER's dense handle as ATen/cuda's headers name it (see
// cuda_runtime_api.h here).
#pragma once
#include "cusolver_common.h"
typedef struct cusolverDnContext *cusolverDnHandle_t;
