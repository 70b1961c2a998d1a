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

/// A check's registry entry: its name and summary, declared once in its
/// class (C::CheckName, C::CheckSummary), and how to make it.
template <typename C> static CheckInfo entry() {
  return {C::CheckName, C::CheckSummary,
          [](const OptionSource &Opts) -> std::unique_ptr<TorchCheck> {
            return std::make_unique<C>(Opts);
          }};
}

const std::vector<CheckInfo> &checkRegistry() {
  // Sorted by name; scripts/add-check inserts new checks in order.
  static const std::vector<CheckInfo> Registry = {
      entry<ContiguousCopyCheck>(),
      entry<CopyThenSliceCheck>(),
      entry<DtypeWideningCheck>(),
      entry<InplaceOnCopyCheck>(),
      entry<MemoryBudgetCheck>(),
      entry<RandintDefaultDtypeCheck>(),
      entry<RedundantCopyCheck>(),
      entry<ReshapeCopyCheck>(),
      entry<TensorSubscriptCheck>(),
      entry<ViewPinsStorageCheck>(),
  };
  return Registry;
}

} // namespace tma
