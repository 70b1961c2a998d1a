// torch-inplace-on-copy: an in-place op on a temporary copy (a gather's result) that leaves the source unchanged.
// Docs: docs/checks/torch-inplace-on-copy.md
#pragma once

#include "checks/TorchCheck.h"

namespace tma {

class InplaceOnCopyCheck : public TorchCheck {
public:
  static constexpr const char *CheckName = "torch-inplace-on-copy";
  static constexpr const char *CheckSummary =
      "an in-place op on a temporary copy that leaves the source unchanged";
  explicit InplaceOnCopyCheck(const OptionSource &Opts);
  void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const override;
  void storeOptions(OptionMap &Opts) const override;

private:
  // No options.
};

} // namespace tma
