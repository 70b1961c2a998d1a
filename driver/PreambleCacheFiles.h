// Internal to the preamble cache (driver/PreambleCache*.cpp): the files of a
// cache directory, read and written so that a directory shared with other
// runs, or planted by someone else, can cost a cache miss but never a hang,
// a torn read or a file the cache did not make (PreambleCache.h, design
// points 6 and 7).
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace tma::preamble {

/// Bounds on what the cache reads: a manifest lists ~5,000 headers
/// (~350 KB); a LibTorch PCH is ~80 MB.
constexpr uint64_t MaxManifestBytes = uint64_t(64) << 20;
constexpr uint64_t MaxPCHBytes = uint64_t(4) << 30;
constexpr uint64_t MaxSmallFileBytes = uint64_t(1) << 20;
/// The eviction record: which entries trim() removed, so that a run that
/// needs one again can say the cache is too small. Old lines go.
constexpr const char *EvictionLogName = "preamble-evictions.log";

/// Reads a cache file only if it is a regular file (no link followed, no
/// FIFO or device opened in a way that blocks) of at most MaxBytes.
std::unique_ptr<llvm::MemoryBuffer> readCacheFile(const std::string &Path,
                                                  uint64_t MaxBytes);

/// True when nothing is at Path or a regular file is: the only things the
/// cache may replace or remove.
bool regularOrAbsent(const std::string &Path);

/// LockFileManager's lock is a symbolic link to a unique file holding
/// "<host> <pid>". Safe to hand to it when absent, or when it (through the
/// link) is a small regular file: LockFileManager reads it whole.
bool lockIsSafe(const std::string &Path);

/// The owner a lock names, read through its link without blocking.
std::optional<std::pair<std::string, long>> lockOwner(const std::string &Path);

void removeIfRegular(const std::string &Path);

/// Writes Data to Path through a unique temporary file and a rename, so a
/// concurrent reader sees the old file or the new one, never a torn one.
/// The temporary file names this process, so that a later run can tell an
/// orphan (its writer killed) from a write in progress.
std::error_code writeAtomically(const std::string &Path, llvm::StringRef Data);

std::string hostName();

bool processAlive(long Pid);

/// The files of one cache directory the cache owns, by kind.
struct OwnedFile {
  std::string Path;
  std::string Stem; // "libtorch-<key>" / "preamble-<key>"; empty: leftover
  bool IsManifest = false;
  bool IsLeftover = false;
  bool IsRecord = false; // the eviction record
  uint64_t Size = 0;
  int64_t MTimeSeconds = 0;
};

std::vector<OwnedFile> listOwned(llvm::StringRef Dir);

} // namespace tma::preamble
