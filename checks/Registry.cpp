#include "checks/Registry.h"

#include "checks/ContiguousCopyCheck.h"
#include "checks/CopyThenSliceCheck.h"
#include "checks/DtypeWideningCheck.h"
#include "checks/InplaceOnCopyCheck.h"
#include "checks/MemoryBudgetCheck.h"
#include "checks/RandintDefaultDtypeCheck.h"
#include "checks/RedundantCopyCheck.h"
#include "checks/ReshapeCopyCheck.h"
#include "checks/TensorSubscriptCheck.h"
#include "checks/ViewPinsStorageCheck.h"

namespace tma {

template <typename C>
static std::unique_ptr<TorchCheck> make(const OptionSource &Opts) {
  return std::make_unique<C>(Opts);
}

const std::vector<CheckInfo> &checkRegistry() {
  static const std::vector<CheckInfo> Registry = {
      {"torch-contiguous-copy",
       "contiguous() that copies a non-contiguous tensor", make<ContiguousCopyCheck>},
      {"torch-copy-then-slice",
       "a copy whose result is only used through a narrower slice",
       make<CopyThenSliceCheck>},
      {"torch-dtype-widening", "a cast that widens a floating dtype",
       make<DtypeWideningCheck>},
      {"torch-inplace-on-copy",
       "an in-place op on a temporary copy that leaves the source unchanged",
       make<InplaceOnCopyCheck>},
      {"torch-memory-budget", "peak live tensor storage over MaxPeakBytes",
       make<MemoryBudgetCheck>},
      {"torch-randint-default-dtype",
       "torch::randint/randperm with options but no dtype is float32 in C++",
       make<RandintDefaultDtypeCheck>},
      {"torch-redundant-copy", "a copy of a fresh tensor nothing else uses",
       make<RedundantCopyCheck>},
      {"torch-reshape-copy",
       "reshape()/flatten() that copies a non-viewable input", make<ReshapeCopyCheck>},
      {"torch-tensor-subscript",
       "t[idx] with a non-0-dim index tensor throws at run time",
       make<TensorSubscriptCheck>},
      {"torch-view-pins-storage",
       "a view that outlives its base and pins more storage than it shows",
       make<ViewPinsStorageCheck>},
  };
  return Registry;
}

} // namespace tma
