// torch-reshape-copy: reshape()/flatten() that silently copies because the input is not viewable as the new shape.
// Docs: docs/checks/torch-reshape-copy.md
#pragma once

#include "checks/TorchCheck.h"

namespace tma {

class ReshapeCopyCheck : public TorchCheck {
public:
  static constexpr const char *CheckName = "torch-reshape-copy";
  static constexpr const char *CheckSummary =
      "reshape()/flatten() that copies a non-viewable input";
  explicit ReshapeCopyCheck(const OptionSource &Opts);
  void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const override;
  void storeOptions(OptionMap &Opts) const override;

private:
  const int64_t MinBytes;
};

} // namespace tma
