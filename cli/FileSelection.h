// Which files a run analyses: those named on the command line, those listed
// in a file (--files-from: a CI job's changed files), or, with -p and
// neither, every entry of the compilation database, as run-clang-tidy
// does; then, for a CI matrix, one shard of them (--shard i/n).
//
// Shards are taken from the sorted, de-duplicated list, every n-th file
// from the i-th on: every machine that reads the same database computes
// the same split, so the shards are disjoint and together cover every
// entry exactly once, and neighbouring files (one directory, one preamble)
// spread over the shards evenly.
#pragma once

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tma {

/// "i/n" with 1 <= i <= n; nullopt for anything else.
std::optional<std::pair<unsigned, unsigned>> parseShard(llvm::StringRef Text);

/// Appends the paths listed in Path ("-": standard input), one a line;
/// blank lines and lines starting with '#' are skipped. False and Error
/// when it cannot be read.
bool readFileList(llvm::StringRef Path, std::vector<std::string> &Files,
                  std::string &Error);

/// Every file of the database, once (CMake lists a file built into two
/// libraries twice), sorted.
std::vector<std::string>
databaseFiles(const clang::tooling::CompilationDatabase &DB);

/// Files once each by what they are on disk, their device and inode: "f.cpp
/// ./f.cpp", a symbolic link to a file named as well, a hard link (`ln
/// f.cpp g.cpp`), or a database listing one file under two spellings are
/// one file, analysed, reported and --fix'ed once (fixing it twice wrote
/// `.contiguous().viewous().view(...)`, issue 10 item 7, issue 32 item 5).
/// The first name given stands for it; a name that does not exist is kept
/// as given.
std::vector<std::string> uniqueFiles(const std::vector<std::string> &Files);

/// Shard Index (1-based) of Count of Files, in sorted order.
std::vector<std::string> shardOf(std::vector<std::string> Files, unsigned Index,
                                 unsigned Count);

} // namespace tma
