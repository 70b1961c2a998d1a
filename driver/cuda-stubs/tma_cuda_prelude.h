// Force-included before every CUDA source the tool analyses (-include), as
// nvcc force-includes cuda_runtime.h: host code may use __global__, dim3
// and the runtime API without including anything. The tool parses CUDA
// with clang's front end in host-only mode and -nocudainc, so clang's own
// __clang_cuda_runtime_wrapper.h is not read and the attributes it would
// define are defined here. Kernel and device function bodies are skipped by
// the analysis, so nothing a body alone uses needs declaring.
#pragma once
// A library header like the rest: the analysis skips its bodies, and calls
// into it are not the user's code.
#pragma GCC system_header
// clang's cuda_wrappers/new (always on the CUDA include path) calls malloc.
#include <stdlib.h>
#include <cuda_runtime.h>
