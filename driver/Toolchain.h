// Finding what a compile needs when the user gives no flags: LibTorch's
// include directories and Clang's resource directory.
//
// LibTorch is looked for where users install it: Debian's libtorch-dev,
// $Torch_DIR / $CMAKE_PREFIX_PATH (a LibTorch zip or a CMake install), and
// the LibTorch inside an installed PyTorch. torch/extension.h also needs
// Python's headers and pybind11: the Python include directory is found
// too, and a missing one is named with its package.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tma {

struct LibTorchHeaders {
  std::vector<std::string> IncludeDirs;
  /// What torch/extension.h needs besides: the Python headers (Python.h)
  /// of the Python the LibTorch belongs to, searched after the system's
  /// directories (-idirafter) so that none of its names shadows a system
  /// header; empty when none are installed. pybind11 comes with a PyTorch
  /// install, or in /usr/include with Debian's pybind11-dev.
  std::vector<std::string> ExtensionDirs;
  std::string Where; // how it was found, for messages
  std::string Version; // TORCH_VERSION from torch/version.h; "" if unread
};

/// nullopt when no LibTorch headers were found anywhere.
std::optional<LibTorchHeaders> findLibTorchHeaders();

/// A hint for a header the compile could not find, when it is one that
/// torch/extension.h needs: which package to install. Empty otherwise.
std::string missingHeaderHint(const std::string &Header);

/// Clang's resource directory (builtin headers such as stddef.h).
std::string clangResourceDir();

} // namespace tma
