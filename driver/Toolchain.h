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

/// The directories a compile command's own flags put on the #include path
/// (-I, -isystem, -iquote, -idirafter, -cxx-isystem, -isystem-after,
/// --include-directory[-after], joined or separate; nothing after "--"),
/// then $CPATH's and $CPLUS_INCLUDE_PATH's, each made absolute against
/// Directory, where the compiler runs.
std::vector<std::string> userIncludeDirs(const std::vector<std::string> &Args,
                                         const std::string &Directory);

/// Whether a command already reaches LibTorch through its own include
/// directories: one of them holds torch/torch.h, or holds ATen/ATen.h of a
/// LibTorch other than Default (then adding Default's torch/ would mix two
/// LibTorch versions). Default may be null: any ATen/ATen.h counts. Decided
/// by the files on disk, never by how a flag is spelled: `-I
/// src/pytorch-utils` names no LibTorch.
bool commandReachesLibTorch(const std::vector<std::string> &Args,
                            const std::string &Directory,
                            const LibTorchHeaders *Default);

/// Default's flags (-isystem for its include directories, -idirafter for
/// the extension ones), in the order a command appends them.
std::vector<std::string> libTorchFlags(const LibTorchHeaders &Default);

/// A hint for a header the compile could not find, when it is one that
/// torch/extension.h needs: which package to install. Empty otherwise.
std::string missingHeaderHint(const std::string &Header);

/// Clang's resource directory (builtin headers such as stddef.h).
std::string clangResourceDir();

} // namespace tma
