// torch-memory-budget: a function whose peak live tensor storage exceeds MaxPeakBytes.
// Docs: docs/checks/torch-memory-budget.md
#pragma once

#include "checks/TorchCheck.h"

namespace tma {

class MemoryBudgetCheck : public TorchCheck {
public:
  static constexpr const char *CheckName = "torch-memory-budget";
  static constexpr const char *CheckSummary =
      "peak live tensor storage over MaxPeakBytes";
  explicit MemoryBudgetCheck(const OptionSource &Opts);
  void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const override;
  void storeOptions(OptionMap &Opts) const override;

private:
  const int64_t MaxPeakBytes;
  const int64_t MaxNotes;
};

} // namespace tma
