// The preamble cache: the LibTorch part of a parse (or, failing that, the
// whole #include block that opens a file) built once into a PCH on disk and
// reused across files and runs; a bounded, least-recently-used store like
// ccache's.
//
// Design (docs/speed.md has the numbers):
//
// 1. Two kinds of entry. A *shared LibTorch entry* (libtorch-<key>.pch) is
//    a PCH of the LibTorch include alone, put in front of every file whose
//    include block reaches LibTorch before anything that could change it
//    (driver/LibTorchPrefix.h says which, and which flags join the key).
//    One entry serves every such file of a project: a repository costs one
//    LibTorch parse, not one per file. Standard headers before LibTorch
//    that the LibTorch-alone parse absorbs (includes itself, in a way the
//    order cannot matter; its manifest lists them) leave a file on that
//    entry; other standard headers make an entry of LibTorch behind them. Any other file gets a *per-file
//    entry* (preamble-<key>.pch) of its own preamble, what clangd calls
//    one: the directives and comments before the first token of real code.
// 2. Both are built with clang::PrecompiledPreamble (clangd's and libclang's
//    machinery), header function bodies skipped: the analysis reads only
//    the main file's bodies, and the uncached path skips header bodies too,
//    so the AST the analysis sees is the same. The PCH is built in memory
//    and written through a temporary file and an atomic rename.
// 3. Use is spelled as cc1 flags behind -Xclang: -include-pch <pch>,
//    -fno-validate-pch (the manifest validates, below), and for a per-file
//    entry -preamble-bytes=<N>,<at line start> (the lexer starts the main
//    file after its preamble, so line numbers are the file's own). Clang
//    reads the PCH from the very bytes the cache validated (Use::PCHData,
//    served through the tool's file system), never from the path again.
// 4. The key hashes the compile command without the file name (relative
//    paths made absolute, so the working directory is not in it), the
//    file's language (its -x, else its extension, and clang's verdict: a
//    .cu and a .cpp with the same flags are two entries), Clang's full
//    version and this cache's format; a per-file entry adds the
//    preamble text and, when the preamble could depend on it (a quoted
//    include, __FILE__), the main file's directory or path.
// 5. Next to each PCH, a manifest (.deps) lists the PCH's size and
//    xxHash64, the include names its parse looked up, and every file it
//    read with size and mtime (ns). An entry is used only when all of them
//    still match; otherwise it is rebuilt in place. A file that changed
//    while the PCH was being built is not cached.
// 6. Hostile or damaged caches: every cache file is opened without
//    following links and without blocking, and read only if it is a
//    regular file of bounded size (a FIFO or a link to /dev/zero is
//    refused, never read); a path the cache did not create is never
//    overwritten or removed. An unwritable cache is still read, but nothing
//    is built for it: a run is never slower than --no-cache for it.
// 7. One builder per key: threads of one run wait on a per-key mutex;
//    separate runs coordinate through llvm::LockFileManager (clang's module
//    cache lock). Temporary files and owned locks are removed on SIGINT and
//    SIGTERM; what a SIGKILL leaves (a lock naming a dead process on this
//    host, an orphaned temporary file) is swept by the next run that
//    writes.
// 8. Bounded: after a run, entries are evicted least recently used first
//    (a hit refreshes the manifest's mtime) until the cache is under 90% of
//    its limit; entries this run used are kept. An entry larger than the
//    whole limit is used in memory and not stored. Eviction removes the
//    manifest before the PCH, so a concurrent reader sees a whole entry or
//    none. Evictions are recorded (preamble-evictions.log: stem, bytes,
//    time; the last 30 days); a run that has to rebuild a recorded entry
//    is thrashing, and says once which --cache-size would have kept every
//    entry in recent use.
// 9. Anything that goes wrong returns "no PCH" with a one-line note, and
//    the caller parses the file the ordinary way. A PCH that clang refuses
//    to load is discarded by the caller, which then reparses uncached.
#pragma once

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tma {

/// $XDG_CACHE_HOME/tensor-accountant, else ~/.cache/tensor-accountant;
/// empty when neither can be determined.
std::string defaultCacheDir();

/// The default size limit: room for a few shared LibTorch entries (about
/// 80 MB each with Debian's LibTorch 1.13) and some per-file ones.
constexpr uint64_t DefaultCacheBytes = uint64_t(512) << 20;

/// "500M", "2G", "64K", "1048576" (bytes; K, M, G, T are powers of 1024,
/// an optional trailing "B" or "iB" is accepted); 0 means no limit.
/// nullopt for anything else.
std::optional<uint64_t> parseCacheSize(llvm::StringRef Text);

/// The cache's own configuration file, as ccache keeps one: lines
/// `key = value`, `#` comments. Known key: max_size.
std::string cacheConfigPath(llvm::StringRef Dir);
/// max_size from Dir's configuration file; nullopt when unset. Sets Error
/// when the file exists but is not a readable configuration.
std::optional<uint64_t> configuredCacheSize(llvm::StringRef Dir,
                                            std::string &Error);

/// What a cache directory holds (--cache-stats).
struct CacheContents {
  unsigned SharedEntries = 0;   // libtorch-*.pch with their manifests
  unsigned FileEntries = 0;     // preamble-*.pch with their manifests
  uint64_t Bytes = 0;           // everything the cache owns there
  unsigned Leftovers = 0;       // temporary and lock files
  int64_t OldestUseSeconds = 0; // since the epoch; 0 when empty
  int64_t NewestUseSeconds = 0;
};
CacheContents inspectCache(llvm::StringRef Dir);

/// Removes every entry and leftover the cache owns in Dir (--cache-clear),
/// keeping its configuration file and anything it did not create. Returns
/// the number of files removed.
unsigned clearCache(llvm::StringRef Dir);

class PreambleCache {
public:
  /// Dir need not exist yet; it is created on first write. A relative Dir
  /// is taken from the current directory now. MaxBytes 0: no limit.
  explicit PreambleCache(std::string Dir,
                         uint64_t MaxBytes = DefaultCacheBytes);

  struct Use {
    /// Appended to the compile command (cc1 flags behind -Xclang).
    std::vector<std::string> ExtraArgs;
    std::string PCHPath;
    /// The PCH's bytes as validated: serve them at PCHPath so that clang
    /// never reads the path itself.
    std::shared_ptr<llvm::MemoryBuffer> PCHData;
    /// Built by this call rather than found in the cache.
    bool Built = false;
    /// A shared LibTorch entry rather than one of this file's own.
    bool Shared = false;
    /// For a shared entry of the LibTorch include alone: the standard
    /// headers (<vector>, ...) it absorbs, which a file may include before
    /// LibTorch and still use this entry.
    std::vector<std::string> Absorbs;
  };

  /// For the final compile command Args (argv[0] ... the file) of File,
  /// with FS set to the command's working directory: a PCH for the file,
  /// from the cache or built now. nullopt means "parse without one"; Note
  /// then says why when the reason is a failure worth telling (not for
  /// files without a preamble, or preambles that do not compile).
  std::optional<Use> prepare(const std::vector<std::string> &Args,
                             llvm::StringRef File,
                             llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS,
                             std::string &Note, llvm::StringRef ExtraKey = {});

  /// Removes an entry clang could not load, so that the next run rebuilds it.
  void discard(const std::string &PCHPath);

  /// Evicts least recently used entries until the cache is within its
  /// limit (to 90% of it), sparing the entries this object used. Safe
  /// while other processes use the cache.
  void trim();

  const std::string &dir() const { return Dir; }
  unsigned hits() const { return Hits; }
  unsigned builds() const { return Builds; }
  /// Entries this object built again after an eviction (trim(), by this
  /// run or an earlier one) had removed them: the cache is too small for
  /// what its users need.
  unsigned rebuiltAfterEviction() const { return RebuiltAfterEviction; }

  /// After trim(): when this run rebuilt what an eviction had removed, one
  /// line telling the size that would have kept every entry in recent use
  /// (the entries there now and those evicted lately); empty otherwise.
  std::string sizeHint();

private:
  struct EntryPlan;
  std::optional<Use> obtain(const EntryPlan &Plan, llvm::vfs::FileSystem &FS,
                            std::string &Note);
  std::shared_ptr<std::mutex> keyMutex(const std::string &Key);
  bool writable(std::string &Note);
  void sweepLeftovers();
  bool evictedEarlier(const std::string &Stem);
  void recordEvictions(
      const std::vector<std::pair<std::string, uint64_t>> &Evicted);

  std::string Dir;
  uint64_t MaxBytes;
  std::mutex Mu;
  std::map<std::string, std::shared_ptr<std::mutex>> KeyMutexes;
  std::set<std::string> UsedStems;
  std::optional<bool> Writable;
  std::string WritableNote;
  bool Swept = false;
  std::atomic<unsigned> Hits{0}, Builds{0}, RebuiltAfterEviction{0};
  /// The eviction record (stem -> bytes, when), read once.
  std::optional<std::map<std::string, std::pair<uint64_t, int64_t>>> Evictions;
};

} // namespace tma
