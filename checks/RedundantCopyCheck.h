// torch-redundant-copy: a copy of a value that is already a fresh copy no one else uses.
// Docs: docs/checks/torch-redundant-copy.md
#pragma once

#include "checks/TorchCheck.h"

namespace tma {

class RedundantCopyCheck : public TorchCheck {
public:
  static constexpr const char *CheckName = "torch-redundant-copy";
  static constexpr const char *CheckSummary =
      "a copy of a fresh tensor nothing else uses";
  explicit RedundantCopyCheck(const OptionSource &Opts);
  void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const override;
  void storeOptions(OptionMap &Opts) const override;

private:
  const int64_t MinBytes;
};

} // namespace tma
