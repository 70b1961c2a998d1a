// torch-randint-default-dtype: torch::randint (or randperm) with options but no dtype makes float32 in C++, not int64.
// Docs: docs/checks/torch-randint-default-dtype.md
#pragma once

#include "checks/TorchCheck.h"

namespace tma {

class RandintDefaultDtypeCheck : public TorchCheck {
public:
  static constexpr const char *CheckName = "torch-randint-default-dtype";
  static constexpr const char *CheckSummary =
      "torch::randint/randperm with options but no dtype is float32 in C++";
  explicit RandintDefaultDtypeCheck(const OptionSource &Opts);
  void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const override;
  void storeOptions(OptionMap &Opts) const override;

private:
  // No options.
};

} // namespace tma
