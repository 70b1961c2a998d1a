#include "model/CudaMemory.h"

#include "model/CudaAllocator.h"

#include <map>

namespace tma {

namespace {

bool onCuda(const std::optional<Device> &D) {
  return D && D->Kind == DeviceKind::CUDA;
}

bool hasCudaTensor(const FunctionTrace &T) {
  for (const ValueInfo &V : T.Values)
    if (onCuda(V.Value.Dev))
      return true;
  for (const StorageInfo &S : T.Storages)
    if (onCuda(S.Dev))
      return true;
  return false;
}

/// "x's storage (line 12)", or "the storage 'add' makes (line 12)" for a
/// temporary.
std::string describeStorage(const FunctionTrace &T, const StorageInfo &S) {
  std::string Line;
  std::string Op;
  if (S.Producer != NoOp) {
    const OpEvent &E = T.Ops.at(S.Producer);
    Line = " (line " + std::to_string(E.Where.Line) + ")";
    Op = E.Name;
  }
  if (!S.FirstName.empty())
    return S.FirstName + "'s storage" + Line;
  return "the storage '" + Op + "' makes" + Line;
}

/// Why the storages this function allocates cannot be replayed, or "".
std::string whyStoragesUnknown(const FunctionTrace &T) {
  std::optional<int> CudaIndex;
  for (const StorageInfo &S : T.Storages) {
    if (S.External)
      continue;
    if (!S.Dev)
      return "the device of " + describeStorage(T, S) + " is unknown";
    if (!onCuda(S.Dev))
      continue;
    if (!S.Bytes || !S.Bytes->isConstant())
      return "the size of " + describeStorage(T, S) +
             (S.Bytes ? " is a formula (" + S.Bytes->toCpp() +
                            "), and the allocator rounds each block, so only "
                            "constant sizes are replayed"
                      : " is unknown");
    if (CudaIndex && *CudaIndex != S.Dev->Index)
      return "its tensors are on more than one CUDA device";
    CudaIndex = S.Dev->Index;
  }
  return "";
}

bool mayRunOnCuda(const FunctionTrace &T, const OpEvent &E) {
  if (E.Result != NoValue && !T.value(E.Result).Dev)
    return true;
  if (E.Result != NoValue && onCuda(T.value(E.Result).Dev))
    return true;
  for (ValueId In : E.Inputs)
    if (In != NoValue && (!T.value(In).Dev || onCuda(T.value(In).Dev)))
      return true;
  return false;
}

/// Why an op's allocations inside itself make the replay inexact, or "".
std::string whyTransientsUnknown(const FunctionTrace &T) {
  for (const OpEvent &E : T.Ops) {
    bool None = E.TransientBytes && E.TransientBytes->constant() == 0;
    if (None || !mayRunOnCuda(T, E))
      continue;
    return "'" + E.Name + "' (line " + std::to_string(E.Where.Line) +
           ") allocates inside itself, and the order of those blocks against "
           "its result's is not modelled";
  }
  return "";
}

/// Replays the ledger's events for CUDA storages; "" when it could.
std::string replay(const FunctionTrace &T, CudaCachingAllocatorModel &A) {
  std::map<StorageId, CudaCachingAllocatorModel::AllocationId> Blocks;
  for (const StorageEvent &E : T.StorageEvents) {
    const StorageInfo &S = T.Storages.at(E.Storage);
    if (S.External || !onCuda(S.Dev))
      continue;
    if (E.What == StorageEvent::Released) {
      auto It = Blocks.find(E.Storage);
      if (It != Blocks.end()) {
        A.free(It->second);
        Blocks.erase(It);
      }
      continue;
    }
    if (Blocks.count(E.Storage))
      return describeStorage(T, S) + " is held again after its release";
    Blocks[E.Storage] = A.allocate(*S.Bytes->constant());
  }
  return "";
}

CudaAllocatorSummary unknownSummary(std::string Why) {
  CudaAllocatorSummary Out;
  Out.UnknownReason = std::move(Why);
  return Out;
}

} // namespace

std::optional<CudaAllocatorSummary>
predictCudaAllocator(const FunctionTrace &T) {
  if (!hasCudaTensor(T))
    return std::nullopt;
  if (!T.Summary.PeakLiveBytes)
    return unknownSummary(
        "the function's peak is unknown: " +
        (T.Summary.UnknownTotalsReason.empty() ? std::string("no reason given")
                                                : T.Summary.UnknownTotalsReason));
  if (std::string Why = whyStoragesUnknown(T); !Why.empty())
    return unknownSummary(Why);
  if (std::string Why = whyTransientsUnknown(T); !Why.empty())
    return unknownSummary(Why);
  CudaCachingAllocatorModel A;
  if (std::string Why = replay(T, A); !Why.empty())
    return unknownSummary(Why);
  CudaAllocatorSummary Out;
  Out.PeakAllocatedBytes = A.peakAllocatedBytes();
  Out.PeakReservedBytes = A.peakReservedBytes();
  return Out;
}

void summarizeCudaAllocator(FunctionTrace &T) {
  T.Summary.CudaAllocator = predictCudaAllocator(T);
}

} // namespace tma
