// torch-view-pins-storage: a view that outlives every other use of its base and pins more storage than it shows.
// Docs: docs/checks/torch-view-pins-storage.md
#pragma once

#include "checks/TorchCheck.h"

namespace tma {

class ViewPinsStorageCheck : public TorchCheck {
public:
  static constexpr const char *CheckName = "torch-view-pins-storage";
  static constexpr const char *CheckSummary =
      "a view that outlives its base and pins more storage than it shows";
  explicit ViewPinsStorageCheck(const OptionSource &Opts);
  void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const override;
  void storeOptions(OptionMap &Opts) const override;

private:
  const int64_t MinPinnedBytes;
};

} // namespace tma
