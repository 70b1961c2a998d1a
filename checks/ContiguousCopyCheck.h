// torch-contiguous-copy: contiguous() that copies a non-contiguous tensor, with a note at the op that broke contiguity.
// Docs: docs/checks/torch-contiguous-copy.md
#pragma once

#include "checks/TorchCheck.h"

namespace tma {

class ContiguousCopyCheck : public TorchCheck {
public:
  static constexpr const char *CheckName = "torch-contiguous-copy";
  static constexpr const char *CheckSummary =
      "contiguous() that copies a non-contiguous tensor";
  explicit ContiguousCopyCheck(const OptionSource &Opts);
  void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const override;
  void storeOptions(OptionMap &Opts) const override;

private:
  const int64_t MinBytes;
  /// Also report copies whose result a later use needs contiguous (a
  /// view(), a kernel launcher): off by default, as those copies are the
  /// price of that use, not waste.
  const bool ReportRequired;
};

} // namespace tma
