// The preamble cache's upkeep: where it lives and how big it may be
// (--cache-dir, --cache-size, tensor-accountant.conf), what --cache-stats and
// --clear-cache see, and what keeps it bounded and clean after runs: the
// orphans a killed run left, least-recently-used eviction and its record
// (PreambleCache.h, design points 7 and 8).
#include "driver/PreambleCache.h"
#include "driver/PreambleCacheFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = llvm::sys::fs;

namespace tma {

using namespace preamble;

std::string defaultCacheDir() {
  llvm::SmallString<256> Dir;
  if (!llvm::sys::path::cache_directory(Dir))
    return "";
  llvm::sys::path::append(Dir, "tensor-accountant");
  return std::string(Dir);
}

std::optional<uint64_t> parseCacheSize(llvm::StringRef Text) {
  Text = Text.trim();
  llvm::StringRef Digits = Text.take_while(llvm::isDigit);
  llvm::StringRef Unit = Text.drop_front(Digits.size()).trim();
  uint64_t N;
  if (Digits.empty() || Digits.getAsInteger(10, N))
    return std::nullopt;
  if (Unit.endswith_insensitive("ib"))
    Unit = Unit.drop_back(2);
  else if (Unit.size() == 2 && Unit.endswith_insensitive("b"))
    Unit = Unit.drop_back(1);
  unsigned Shift = 0;
  if (Unit.empty() || Unit.equals_insensitive("b"))
    Shift = 0;
  else if (Unit.equals_insensitive("k"))
    Shift = 10;
  else if (Unit.equals_insensitive("m"))
    Shift = 20;
  else if (Unit.equals_insensitive("g"))
    Shift = 30;
  else if (Unit.equals_insensitive("t"))
    Shift = 40;
  else
    return std::nullopt;
  if (Shift && N > (~uint64_t(0) >> Shift))
    return std::nullopt; // overflows
  return N << Shift;
}

std::string cacheConfigPath(llvm::StringRef Dir) {
  llvm::SmallString<256> P(Dir);
  llvm::sys::path::append(P, "tensor-accountant.conf");
  return std::string(P);
}

std::optional<uint64_t> configuredCacheSize(llvm::StringRef Dir,
                                            std::string &Error) {
  std::string Path = cacheConfigPath(Dir);
  if (!fs::exists(Path))
    return std::nullopt;
  auto Buf = readCacheFile(Path, MaxSmallFileBytes);
  if (!Buf) {
    Error = "'" + Path + "' is not a readable regular file of at most 1 MiB";
    return std::nullopt;
  }
  std::optional<uint64_t> Size;
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Buf->getBuffer().split(Lines, '\n');
  for (size_t I = 0; I < Lines.size(); ++I) {
    llvm::StringRef Line = Lines[I].split('#').first.trim();
    if (Line.empty())
      continue;
    auto [Key, Value] = Line.split('=');
    Key = Key.trim();
    Value = Value.trim();
    std::string Where = Path + ":" + std::to_string(I + 1) + ": ";
    if (!Line.contains('=')) {
      Error = Where + "expected 'key = value'";
      return std::nullopt;
    }
    if (Key != "max_size") {
      Error = Where + "unknown key '" + Key.str() + "' (known: max_size)";
      return std::nullopt;
    }
    Size = parseCacheSize(Value);
    if (!Size) {
      Error = Where + "max_size wants a size such as 500M or 2G, not '" +
              Value.str() + "'";
      return std::nullopt;
    }
  }
  return Size;
}

CacheContents inspectCache(llvm::StringRef Dir) {
  CacheContents C;
  std::set<std::string> Shared, PerFile;
  for (const OwnedFile &F : listOwned(Dir)) {
    C.Bytes += F.Size;
    if (F.IsLeftover) {
      ++C.Leftovers;
      continue;
    }
    if (F.IsRecord)
      continue;
    if (F.IsManifest) {
      if (!C.OldestUseSeconds || F.MTimeSeconds < C.OldestUseSeconds)
        C.OldestUseSeconds = F.MTimeSeconds;
      C.NewestUseSeconds = std::max(C.NewestUseSeconds, F.MTimeSeconds);
      continue;
    }
    (llvm::StringRef(F.Stem).startswith("libtorch-") ? Shared : PerFile)
        .insert(F.Stem);
  }
  C.SharedEntries = Shared.size();
  C.FileEntries = PerFile.size();
  return C;
}

unsigned clearCache(llvm::StringRef Dir) {
  unsigned Removed = 0;
  std::vector<OwnedFile> Files = listOwned(Dir);
  // Manifests first: a concurrent reader then finds no entry, never half.
  std::stable_partition(Files.begin(), Files.end(),
                        [](const OwnedFile &F) { return F.IsManifest; });
  for (const OwnedFile &F : Files)
    if (!fs::remove(F.Path, /*IgnoreNonExisting=*/false))
      ++Removed;
  return Removed;
}

void PreambleCache::sweepLeftovers() {
  {
    std::lock_guard<std::mutex> L(Mu);
    if (Swept)
      return;
    Swept = true;
  }
  std::string Host = hostName();
  int64_t Now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  for (const OwnedFile &F : listOwned(Dir)) {
    if (!F.IsLeftover)
      continue;
    llvm::StringRef Name = llvm::sys::path::filename(F.Path);
    int64_t Age = Now - F.MTimeSeconds;
    bool Orphan = false;
    if (Name.contains(".tmp-")) {
      // <entry>.tmp-<pid>-XXXXXXXX: its writer is gone, or it is old
      // enough that no write can still be going on.
      long Pid = 0;
      llvm::StringRef Rest = Name.split(".tmp-").second;
      bool HasPid = !Rest.split('-').first.getAsInteger(10, Pid);
      Orphan = Age > 3600 || (HasPid && !processAlive(Pid) && Age > 60);
    } else {
      // LockFileManager writes "<host> <pid>" into <entry>.lock-XXXXXXXX
      // and links <entry>.lock to it: a link whose file is gone, or that
      // names a dead process of this host, is an orphan.
      struct stat St;
      bool Dangling = ::stat(F.Path.c_str(), &St) != 0 && errno == ENOENT;
      auto Owner = lockOwner(F.Path);
      Orphan = Dangling ||
               (Owner && Owner->first == Host && !processAlive(Owner->second));
    }
    if (!Orphan)
      continue;
    struct stat St;
    if (::lstat(F.Path.c_str(), &St) == 0 &&
        (S_ISREG(St.st_mode) || S_ISLNK(St.st_mode)))
      ::unlink(F.Path.c_str());
  }
}

void PreambleCache::trim() {
  if (Dir.empty() || MaxBytes == 0 || !fs::is_directory(Dir))
    return;
  std::vector<OwnedFile> Files = listOwned(Dir);
  uint64_t Total = 0;
  struct Entry {
    int64_t LastUse = 0;
    std::vector<const OwnedFile *> Files;
    bool HasManifest = false;
  };
  std::map<std::string, Entry> Entries;
  for (const OwnedFile &F : Files) {
    Total += F.Size;
    if (F.IsLeftover || F.IsRecord)
      continue;
    Entry &E = Entries[F.Stem];
    E.Files.push_back(&F);
    if (F.IsManifest) {
      E.HasManifest = true;
      E.LastUse = F.MTimeSeconds;
    }
  }
  if (Total <= MaxBytes)
    return;
  std::vector<std::pair<std::string, Entry *>> Order;
  for (auto &[Stem, E] : Entries) {
    if (!E.HasManifest) // a PCH whose manifest is gone or not yet written
      E.LastUse = E.Files.front()->MTimeSeconds;
    Order.push_back({Stem, &E});
  }
  std::stable_sort(Order.begin(), Order.end(),
                   [](const auto &A, const auto &B) {
                     return A.second->LastUse < B.second->LastUse;
                   });
  uint64_t Goal = MaxBytes - MaxBytes / 10;
  std::set<std::string> Keep;
  {
    std::lock_guard<std::mutex> L(Mu);
    Keep = UsedStems;
  }
  std::vector<std::pair<std::string, uint64_t>> Evicted;
  for (auto &[Stem, E] : Order) {
    if (Total <= Goal)
      break;
    if (Keep.count(Stem))
      continue;
    // The manifest first: from then on no reader trusts the PCH.
    std::stable_partition(E->Files.begin(), E->Files.end(),
                          [](const OwnedFile *F) { return F->IsManifest; });
    uint64_t Bytes = 0;
    bool HadPCH = false;
    for (const OwnedFile *F : E->Files) {
      removeIfRegular(F->Path);
      Total -= std::min(Total, F->Size);
      Bytes += F->Size;
      HadPCH |= !F->IsManifest;
    }
    if (HadPCH)
      Evicted.push_back({Stem, Bytes});
  }
  if (!Evicted.empty())
    recordEvictions(Evicted);
}

namespace {

/// The eviction record's format, and how much of it is kept.
constexpr const char *EvictionLogTag = "tma-evictions 1";
constexpr int64_t EvictionMemorySeconds = 30 * 24 * 3600;
constexpr size_t EvictionLogMaxLines = 4096;

using EvictionMap = std::map<std::string, std::pair<uint64_t, int64_t>>;

int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The record's lines from the last EvictionMemorySeconds; a missing or
/// unreadable record is an empty one (it is only a hint).
EvictionMap readEvictions(const std::string &Path) {
  EvictionMap Out;
  auto Buf = readCacheFile(Path, MaxSmallFileBytes);
  if (!Buf)
    return Out;
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Buf->getBuffer().split(Lines, '\n', -1, /*KeepEmpty=*/false);
  if (Lines.empty() || Lines[0] != EvictionLogTag)
    return Out;
  int64_t Oldest = nowSeconds() - EvictionMemorySeconds;
  for (size_t I = 1; I < Lines.size(); ++I) {
    llvm::SmallVector<llvm::StringRef, 3> Parts;
    Lines[I].split(Parts, ' ');
    uint64_t Bytes;
    int64_t When;
    if (Parts.size() != 3 || Parts[1].getAsInteger(10, Bytes) ||
        Parts[2].getAsInteger(10, When) || When < Oldest)
      continue;
    Out[Parts[0].str()] = {Bytes, When};
  }
  return Out;
}

std::string humanBytes(uint64_t Bytes) {
  char Buf[64];
  if (Bytes >= (uint64_t(1) << 30))
    snprintf(Buf, sizeof Buf, "%.1f GiB", double(Bytes) / double(1 << 30));
  else if (Bytes >= (uint64_t(1) << 20))
    snprintf(Buf, sizeof Buf, "%llu MiB",
             (unsigned long long)((Bytes + (1 << 19)) >> 20));
  else
    snprintf(Buf, sizeof Buf, "%llu KiB",
             (unsigned long long)((Bytes + 1023) >> 10));
  return Buf;
}

/// The smallest --cache-size value in whole G (or M, or K for tiny caches)
/// of at least Bytes.
std::string sizeArgument(uint64_t Bytes) {
  auto Ceil = [&](unsigned Shift) {
    return std::to_string((Bytes + (uint64_t(1) << Shift) - 1) >> Shift);
  };
  if (Bytes > (uint64_t(1) << 30))
    return Ceil(30) + "G";
  if (Bytes > (uint64_t(1) << 20))
    return Ceil(20) + "M";
  return Ceil(10) + "K";
}
} // namespace

void PreambleCache::recordEvictions(
    const std::vector<std::pair<std::string, uint64_t>> &Evicted) {
  llvm::SmallString<256> Path(Dir);
  llvm::sys::path::append(Path, EvictionLogName);
  // Read, merge, rewrite atomically: a concurrent run's lines may be lost,
  // which costs only a hint.
  EvictionMap All = readEvictions(std::string(Path));
  int64_t Now = nowSeconds();
  for (const auto &[Stem, Bytes] : Evicted)
    All[Stem] = {Bytes, Now};
  std::vector<std::pair<int64_t, std::string>> Newest;
  for (const auto &[Stem, BW] : All)
    Newest.push_back({BW.second, Stem});
  std::sort(Newest.rbegin(), Newest.rend());
  if (Newest.size() > EvictionLogMaxLines)
    Newest.resize(EvictionLogMaxLines);
  std::string Text = std::string(EvictionLogTag) + "\n";
  for (const auto &[When, Stem] : Newest)
    Text += Stem + " " + std::to_string(All[Stem].first) + " " +
            std::to_string(When) + "\n";
  writeAtomically(std::string(Path), Text); // only a hint: failure is fine
}

bool PreambleCache::evictedEarlier(const std::string &Stem) {
  std::lock_guard<std::mutex> L(Mu);
  if (!Evictions) {
    llvm::SmallString<256> Path(Dir);
    llvm::sys::path::append(Path, EvictionLogName);
    Evictions = readEvictions(std::string(Path));
  }
  return Evictions->count(Stem) != 0;
}

std::string PreambleCache::sizeHint() {
  if (!RebuiltAfterEviction || MaxBytes == 0 || Dir.empty())
    return "";
  // Every entry in recent use: those in the cache now, and those evicted
  // lately that are not back.
  std::map<std::string, uint64_t> Bytes;
  std::set<std::string> WithPCH;
  for (const OwnedFile &F : listOwned(Dir)) {
    if (F.IsLeftover || F.IsRecord || F.Stem.empty())
      continue;
    Bytes[F.Stem] += F.Size;
    if (!F.IsManifest)
      WithPCH.insert(F.Stem);
  }
  uint64_t Need = 0;
  unsigned Entries = 0;
  for (const std::string &Stem : WithPCH) {
    Need += Bytes[Stem];
    ++Entries;
  }
  llvm::SmallString<256> Path(Dir);
  llvm::sys::path::append(Path, EvictionLogName);
  for (const auto &[Stem, BW] : readEvictions(std::string(Path)))
    if (!WithPCH.count(Stem)) {
      Need += BW.first;
      ++Entries;
    }
  if (Need <= MaxBytes)
    return ""; // the limit has been raised since, or the record is stale
  unsigned Rebuilt = RebuiltAfterEviction;
  return "tensor-accountant: the preamble cache (" + humanBytes(MaxBytes) +
         ") is too small for the " + std::to_string(Entries) +
         " include blocks in recent use (~" + humanBytes(Need) +
         "): this run rebuilt " + std::to_string(Rebuilt) +
         (Rebuilt == 1 ? " entry" : " entries") +
         " that an eviction had removed; --cache-size=" + sizeArgument(Need) +
         " (or max_size in " + cacheConfigPath(Dir) + ") would keep them\n";
}

} // namespace tma
