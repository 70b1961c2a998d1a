// The shared LibTorch parse: which files may use it, and under which key.
//
// Design (docs/speed.md has the numbers):
//
// 1. Every file of a LibTorch project spends ~95% of its parse in the same
//    place: `#include <torch/torch.h>`. Its own preamble (the include block)
//    differs from file to file ("model.h", <iomanip>, ...), so a cache keyed
//    on the whole preamble parses LibTorch once per file. Instead, the
//    preamble cache builds one PCH of the LibTorch include alone per
//    (compiler, flags that matter, headers) and puts it in front of each
//    file with -include-pch; the file's own `#include <torch/torch.h>` then
//    finds the header already included (LibTorch's headers are
//    `#pragma once`) and the rest of the file parses as usual.
// 2. That parses the same program only when nothing the file does before
//    its LibTorch include could change what LibTorch's headers mean or be
//    changed by them. findLibTorchPrefix reads the file's directives in
//    order, following quoted includes into project headers, and accepts only
//    comments, `#pragma once`, a header's include guard, and standard
//    library headers (`<vector>`: no extension, no directory), which join
//    the shared prefix in the same order. (The preamble cache then drops
//    those the LibTorch-alone parse absorbs: LibTorch includes them itself
//    and the order cannot matter; driver/PreambleInputs.cpp says when.)
//    Anything else before LibTorch (a #define, a conditional, a
//    third-party header, code) means the file keeps its own preamble PCH,
//    as before.
// 3. "Flags that matter": include directories are most of what differs
//    between a project's compile commands (each target adds its own
//    include/), and a directory matters to the LibTorch parse only if it
//    holds one of the names that parse looked up (the first component of
//    every #include and __has_include it ran: "torch", "c10", "vector",
//    ...). The PCH records those names; a directory holding none of them
//    cannot change where any of those lookups lands, so it is left out of
//    the key (and checked again on every use). Every other flag is part of
//    the key, with relative paths made absolute, so the working directory
//    is not.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <optional>
#include <string>
#include <vector>

namespace tma {

/// An include directory from a compile command, made absolute.
struct IncludeDir {
  std::string Flag; // -I, -iquote, -isystem or -idirafter
  std::string Path;
  bool operator==(const IncludeDir &O) const {
    return Flag == O.Flag && Path == O.Path;
  }
};

/// A compile command split for keying the cache.
struct KeyedCommand {
  /// Every argument but the main file and the include directories, paths
  /// made absolute where the flag is known to take one.
  std::vector<std::string> Flags;
  std::vector<IncludeDir> Dirs;
  /// An argument that may be a relative path the splitter does not know:
  /// the working directory must then join the key.
  bool NeedsWorkingDirectory = false;
  /// -include, -imacros or -include-pch: something is parsed before the
  /// main file, so a LibTorch PCH cannot go in front of it.
  bool ForcedInclude = false;
  /// Macros defined on the command line (-DNAME or -DNAME=...): a project
  /// header's include guard that one of them defines would skip the header.
  std::vector<std::string> DefinedMacros;
  /// The main file's language as the command selects it: the last -x (or
  /// --language) before the file, else the file's extension ("cu" and
  /// "cpp" compile one preamble into different PCHs: CUDA's builtins).
  std::string Language;
};

/// Splits Args (argv[0] ... ) of the file MainFile, relative paths resolved
/// against WorkingDirectory.
KeyedCommand splitCommand(llvm::ArrayRef<std::string> Args,
                          llvm::StringRef MainFile,
                          llvm::StringRef WorkingDirectory);

/// The directives the shared PCH is built from, e.g.
/// "#include <vector>\n#include <torch/torch.h>\n", when MainText (the
/// file at the absolute path MainPath) may take it; nullopt and a reason in
/// WhyNot otherwise.
std::optional<std::string> findLibTorchPrefix(llvm::StringRef MainText,
                                              llvm::StringRef MainPath,
                                              const KeyedCommand &Command,
                                              llvm::vfs::FileSystem &FS,
                                              std::string *WhyNot = nullptr);

/// Whether Dir holds an entry named by any of Names (first components of
/// include names), i.e. could change where one of those includes resolves.
bool directoryMayShadow(llvm::StringRef Dir, llvm::ArrayRef<std::string> Names,
                        llvm::vfs::FileSystem &FS);

/// <vector>, <cstdint>: the C++ standard library's header names have no
/// extension and no directory. They may be included in any order
/// ([using.headers]), so they may precede LibTorch in the shared prefix.
bool isStandardHeaderName(llvm::StringRef Name);

/// The first path component of an include name ("c10/util/Half.h" ->
/// "c10"); empty for absolute names, which no search directory affects.
std::string includeNameRoot(llvm::StringRef IncludeName);

} // namespace tma
