// Finding what a compile needs when the user gives no flags: LibTorch's
// include directories and Clang's resource directory.
//
// LibTorch is looked for where users install it: Debian's libtorch-dev,
// $Torch_DIR / $CMAKE_PREFIX_PATH (a LibTorch zip or a CMake install), and
// the LibTorch inside an installed PyTorch.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tma {

struct LibTorchHeaders {
  std::vector<std::string> IncludeDirs;
  std::string Where; // how it was found, for messages
  std::string Version; // TORCH_VERSION from torch/version.h; "" if unread
};

/// nullopt when no LibTorch headers were found anywhere.
std::optional<LibTorchHeaders> findLibTorchHeaders();

/// Clang's resource directory (builtin headers such as stddef.h).
std::string clangResourceDir();

} // namespace tma
