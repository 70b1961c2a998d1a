// The preamble cache: the #include block that opens a file, parsed once into
// a PCH on disk and reused across runs and across files that share it.
//
// Design (docs/speed.md has the numbers):
//
// 1. The preamble is what clangd calls one: the directives and comments
//    before the first token of real code (clang::ComputePreambleBounds).
//    For a LibTorch file that is `#include <torch/torch.h>`, i.e. 95% of the
//    parse.
// 2. It is built with clang::PrecompiledPreamble (the machinery of clangd
//    and libclang), function bodies skipped: the analysis reads only the
//    main file's bodies, and the uncached path skips header bodies too, so
//    the AST the analysis sees is the same. The PCH is built in memory and
//    written to the cache directory through a temporary file and an atomic
//    rename, so readers never see half a file.
// 3. Use is what PrecompiledPreamble::AddImplicitPreamble does, spelled as
//    cc1 flags so it passes through ClangTool: -include-pch <pch>,
//    -preamble-bytes=<N>,<at line start> (the lexer starts the main file
//    after its preamble, so line numbers and offsets are the file's own) and
//    -fno-validate-pch (clang would otherwise insist that the main file is
//    the one the preamble was built from; we validate ourselves, below).
// 4. The key (the file name) hashes the preamble text, the final compile
//    command without the file name, the working directory, Clang's full
//    version and this cache's format. The main file's directory (or path)
//    joins the key only when the preamble could depend on it (a quoted
//    include, __FILE__), so files with the same include block share one PCH.
// 5. Next to each PCH, a manifest lists the PCH's size and xxHash64 and
//    every file the preamble read with its size and mtime (ns). An entry is
//    used only when all of them still match; otherwise it is rebuilt in
//    place. A file that changed while the preamble was being built is not
//    cached at all.
// 6. One builder per key: threads of one run wait on a per-key mutex;
//    separate runs coordinate through llvm::LockFileManager (the lock clang
//    uses for its module cache): the first takes <pch>.lock, the others wait
//    for it, then reuse its PCH or, if it failed or timed out, build their
//    own (the atomic rename makes a second writer harmless).
// 7. Anything that goes wrong returns "no PCH" with a one-line note, and the
//    caller parses the file the ordinary way. A PCH that clang refuses to
//    load is discarded by the caller, which then reparses uncached.
#pragma once

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tma {

/// $XDG_CACHE_HOME/tensor-accountant, else ~/.cache/tensor-accountant;
/// empty when neither can be determined.
std::string defaultCacheDir();

class PreambleCache {
public:
  /// Dir need not exist yet; it is created on first write.
  explicit PreambleCache(std::string Dir);

  struct Use {
    /// Appended to the compile command (cc1 flags behind -Xclang).
    std::vector<std::string> ExtraArgs;
    std::string PCHPath;
    /// Built by this call rather than found in the cache.
    bool Built = false;
  };

  /// For the final compile command Args (argv[0] ... the file) of File,
  /// with FS set to the command's working directory: a PCH for the file's
  /// preamble, from the cache or built now. nullopt means "parse without
  /// one"; Note then says why when the reason is a failure worth telling
  /// (not for files without a preamble, or preambles that do not compile).
  std::optional<Use> prepare(const std::vector<std::string> &Args,
                             llvm::StringRef File,
                             llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS,
                             std::string &Note, llvm::StringRef ExtraKey = {});

  /// Removes an entry clang could not load, so that the next run rebuilds it.
  void discard(const std::string &PCHPath);

  const std::string &dir() const { return Dir; }

private:
  std::shared_ptr<std::mutex> keyMutex(const std::string &Key);

  std::string Dir;
  std::mutex Mu;
  std::map<std::string, std::shared_ptr<std::mutex>> KeyMutexes;
};

} // namespace tma
