// torch-copy-then-slice: a copy whose result is only used through a narrower view: slicing first shrinks the copy.
// Docs: docs/checks/torch-copy-then-slice.md
#pragma once

#include "checks/TorchCheck.h"

namespace tma {

class CopyThenSliceCheck : public TorchCheck {
public:
  static constexpr const char *CheckName = "torch-copy-then-slice";
  static constexpr const char *CheckSummary =
      "a copy whose result is only used through a narrower slice";
  explicit CopyThenSliceCheck(const OptionSource &Opts);
  void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const override;
  void storeOptions(OptionMap &Opts) const override;

private:
  const int64_t MinSavedBytes;
};

} // namespace tma
