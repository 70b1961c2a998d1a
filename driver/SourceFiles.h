// The user's source files: read once into memory this process owns, and
// rewritten by --fix only when they still hold the bytes that were analysed.
//
// 1. Never mapped. LLVM maps a file of 16 KiB or more; if someone
//    truncates or rewrites it while it is mapped (an editor saving, a
//    `git checkout`), touching the vanished pages kills the process with
//    SIGBUS. Every source clang reads comes through unmappedFileSystem,
//    and every source the driver reads through readSourceFile.
// 2. One version per run. The file being analysed is read once, before
//    clang starts; clang is given exactly those bytes (found by device and
//    inode, whatever path the compile command spells it by, or by its real
//    path once a new file was renamed over it), and the checks, NOLINT and
//    --fix work on the same bytes. Reading it again
//    after the analysis put fix-its made for one version into another.
// 3. Fixes go only where the analysis was. Before writing, the file is
//    read again and compared with the analysed bytes; a file that changed
//    is left alone and the caller says so. Bytes, not a hash: they are in
//    memory anyway, and equal bytes cannot collide.
// 4. Written so that a crash or a full disk never leaves half a file: a
//    temporary file beside it, with its mode (and group), renamed over it.
//    Where a rename would change what the file is, it is rewritten in
//    place instead: a file with several hard links (the rename would cut
//    the others off the new text), a file another user owns (the copy
//    would be ours), a directory we may not create files in. A symbolic
//    link is followed: the file it names is replaced, the link stays.
#pragma once

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem/UniqueID.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tma {

/// A file's bytes as read at one moment, and which file they came from:
/// its device and inode, and its path with every link resolved (an editor
/// that saves by renaming a new file over it gives the path a new inode).
struct SourceSnapshot {
  std::string Bytes;
  llvm::sys::fs::UniqueID ID;
  std::string RealPath;
};

/// Reads Path (following links) into owned memory: its bytes and its
/// device and inode, from one open file. nullopt with Error set when it
/// cannot be read.
std::optional<SourceSnapshot> readSourceFile(llvm::StringRef Path,
                                             std::string *Error = nullptr);

/// Base as clang should read it: every file's contents copied into memory,
/// never mapped; and each file of Pinned (by device and inode, or by its
/// real path) as the bytes given, whatever is on disk by now.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
unmappedFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Base,
                   std::vector<std::shared_ptr<const SourceSnapshot>> Pinned = {});

enum class FixWrite {
  Written,
  /// The file no longer holds the analysed bytes: nothing was written.
  ChangedSinceAnalysis,
  /// It could not be read back or written; Error says why. The file is as
  /// it was (or, when writing in place failed half-way and the old bytes
  /// could not be put back, Error says that too).
  Failed,
};

/// Replaces the contents of Path with Fixed if it still holds Analysed
/// (see 3 and 4 above).
FixWrite writeFixedSource(llvm::StringRef Path, llvm::StringRef Analysed,
                          llvm::StringRef Fixed, std::string &Error);

} // namespace tma
