// torch-tensor-subscript: t[idx] with an index tensor that is not 0-dim throws at run time.
// Docs: docs/checks/torch-tensor-subscript.md
#pragma once

#include "checks/TorchCheck.h"

namespace tma {

class TensorSubscriptCheck : public TorchCheck {
public:
  static constexpr const char *CheckName = "torch-tensor-subscript";
  static constexpr const char *CheckSummary =
      "t[idx] with a non-0-dim index tensor throws at run time";
  explicit TensorSubscriptCheck(const OptionSource &Opts);
  void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const override;
  void storeOptions(OptionMap &Opts) const override;

private:
  // No options.
};

} // namespace tma
