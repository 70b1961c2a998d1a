// torch-dtype-widening: a cast that widens a floating dtype (float16/bfloat16 to float32, float32 to float64).
// Docs: docs/checks/torch-dtype-widening.md
#pragma once

#include "checks/TorchCheck.h"

namespace tma {

class DtypeWideningCheck : public TorchCheck {
public:
  static constexpr const char *CheckName = "torch-dtype-widening";
  static constexpr const char *CheckSummary =
      "a cast that widens a floating dtype";
  explicit DtypeWideningCheck(const OptionSource &Opts);
  void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const override;
  void storeOptions(OptionMap &Opts) const override;

private:
  const int64_t MinBytes;
};

} // namespace tma
