// The one list of checks. The CLI and the clang-tidy module both build their
// checks from here, so a check added once runs identically in both.
#pragma once

#include "checks/TorchCheck.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tma {

struct CheckInfo {
  std::string Name;        // "torch-contiguous-copy"
  std::string Summary;     // one line, for --list-checks and SARIF rules
  std::function<std::unique_ptr<TorchCheck>(const OptionSource &)> Create;
};

const std::vector<CheckInfo> &checkRegistry();

/// clang-tidy's check globs: "torch-*,-torch-memory-budget". Later entries
/// win; a leading '-' disables.
bool checkEnabled(const std::string &Globs, const std::string &Name);

} // namespace tma
