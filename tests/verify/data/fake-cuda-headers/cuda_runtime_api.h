// Declarations only, standing in for the CUDA runtime's header so that
// verify/tma_probe.h's CUDA statistics (TMA_PROBE_HAS_CUDA) can be compiled
// with -fsyntax-only against a CPU-only LibTorch (tests/verify,
// ProbeRuntimeHeader.CudaStatisticsCompile). Never linked, never run: just
// the names c10/cuda's headers use, with the CUDA runtime's types.
#pragma once
#include <cstddef>
typedef enum cudaError { cudaSuccess = 0, cudaErrorNotReady = 600 } cudaError_t;
typedef struct CUstream_st *cudaStream_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyDeviceToHost = 2 };
enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2
};
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0 };
extern "C" {
cudaError_t cudaGetLastError(void);
const char *cudaGetErrorString(cudaError_t);
cudaError_t cudaStreamQuery(cudaStream_t);
cudaError_t cudaStreamSynchronize(cudaStream_t);
cudaError_t cudaMemcpyAsync(void *, const void *, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus *);
cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode *);
cudaError_t cudaStreamGetPriority(cudaStream_t, int *);
cudaError_t cudaDeviceGetStreamPriorityRange(int *, int *);
cudaError_t cudaGetDevice(int *);
cudaError_t cudaSetDevice(int);
cudaError_t cudaMalloc(void **, size_t);
cudaError_t cudaFree(void *);
}
