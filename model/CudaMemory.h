// What LibTorch's CUDA caching allocator would hold for a function
// (issue 37): the ledger's storage events replayed through
// CudaCachingAllocatorModel (model/CudaAllocator.h).
//
// 1. Only a function with a tensor on CUDA gets a summary; others keep
//    their reports as they were.
// 2. A number is given only when the replay is exact: the totals are known,
//    every storage the function allocates has a known device, every CUDA
//    storage a constant byte count, and no op on CUDA allocates inside
//    itself (a transient buffer whose order against the result's block is
//    not modelled). Otherwise both figures are unknown, with the first
//    reason met; a symbolic size is never rounded by guess.
// 3. The replay starts from an empty cache, as after emptyCache() with
//    nothing else on the device; the function's own allocations only
//    (a parameter's storage was allocated by its caller).
#pragma once

#include "model/Trace.h"

namespace tma {

/// The function's CUDA allocator summary, or nullopt when it has no tensor
/// on CUDA.
std::optional<CudaAllocatorSummary>
predictCudaAllocator(const FunctionTrace &T);

/// Sets T.Summary.CudaAllocator from predictCudaAllocator.
void summarizeCudaAllocator(FunctionTrace &T);

} // namespace tma
