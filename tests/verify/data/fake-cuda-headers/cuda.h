// Stands in for the CUDA driver header (see cuda_runtime_api.h here).
#pragma once
#include "cuda_runtime_api.h"
