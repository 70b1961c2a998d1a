// The preamble cache's core: the key of an entry (prepare) and one entry's
// lookup, build and store (obtain). The manifest and what a build read are
// in PreambleInputs, the cache's files in PreambleCacheFiles, eviction and
// the cache's settings in PreambleCacheUpkeep.cpp (design: PreambleCache.h).
#include "driver/PreambleCache.h"
#include "driver/LibTorchPrefix.h"
#include "driver/PreambleCacheFiles.h"
#include "driver/PreambleInputs.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/Version.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/PrecompiledPreamble.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Serialization/PCHContainerOperations.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LockFileManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA1.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/xxhash.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace clang;
namespace fs = llvm::sys::fs;

namespace tma {

using namespace preamble;

namespace {

constexpr const char *NamesTag = "tma-libtorch-names 1";
/// How long a run waits for another run building the same entry before
/// building its own (a cold torch/torch.h parse takes 5-20 s).
constexpr unsigned LockWaitSeconds = 300;

std::string hex(llvm::ArrayRef<uint8_t> Bytes) {
  return llvm::toHex(Bytes, /*LowerCase=*/true);
}

} // namespace

struct PreambleCache::EntryPlan {
  /// The entry's file stem, given the include names its LibTorch parse
  /// looked up (null when not known yet).
  std::function<std::string(const std::vector<std::string> *Names)> Stem;
  /// Whether an entry whose parse looked up Names serves this file.
  std::function<bool(const std::vector<std::string> &Names)> Serves;
  /// Where the names seen by earlier builds under this key are kept (a
  /// hint for Stem; Serves decides); empty for per-file entries.
  std::string NamesHint;
  /// Builders of entries with the same LockStem wait for each other
  /// (default: the entry's stem). Shared entries lock on the key without
  /// include directories: builds under it nearly always make one entry.
  std::string LockStem;
  std::shared_ptr<CompilerInvocation> Inv;
  llvm::MemoryBuffer *Source = nullptr;
  PreambleBounds Bounds{0, false};
  /// The name the PCH's main file gets (never the real file: loading the
  /// PCH installs the preamble as that file's contents).
  std::string StandIn;
  /// Flags for using the entry, without -include-pch <path>.
  std::vector<std::string> UseArgs;
  bool Shared = false;
  /// The LibTorch include alone: record the standard headers it absorbs.
  bool FindAbsorbed = false;
};

PreambleCache::PreambleCache(std::string Dir, uint64_t MaxBytes)
    : MaxBytes(MaxBytes) {
  if (!Dir.empty()) {
    llvm::SmallString<256> Abs(Dir);
    fs::make_absolute(Abs);
    llvm::sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
    this->Dir = std::string(Abs);
  }
}

std::shared_ptr<std::mutex> PreambleCache::keyMutex(const std::string &Key) {
  std::lock_guard<std::mutex> L(Mu);
  auto &M = KeyMutexes[Key];
  if (!M)
    M = std::make_shared<std::mutex>();
  return M;
}

void PreambleCache::discard(const std::string &PCHPath) {
  llvm::StringRef Base = llvm::StringRef(PCHPath).drop_back(4); // ".pch"
  removeIfRegular((Base + ".deps").str());
  removeIfRegular(PCHPath);
}

bool PreambleCache::writable(std::string &Note) {
  std::lock_guard<std::mutex> L(Mu);
  if (!Writable) {
    Writable = false;
    if (std::error_code EC = fs::create_directories(Dir)) {
      WritableNote = "cannot create cache directory '" + Dir +
                     "': " + EC.message() + "; parsing without the cache";
    } else {
      // Root may write where the permission bits say no; only trying tells.
      llvm::SmallString<256> Probe;
      int FD;
      llvm::SmallString<256> Model(Dir);
      llvm::sys::path::append(Model, "libtorch-probe.tmp-%%%%%%%%");
      if (std::error_code EC = fs::createUniqueFile(Model, FD, Probe)) {
        WritableNote = "cache directory '" + Dir + "' is not writable (" +
                       EC.message() + "); parsing without the cache";
      } else {
        ::close(FD);
        fs::remove(Probe);
        Writable = true;
      }
    }
  }
  if (!*Writable)
    Note = WritableNote;
  return *Writable;
}

std::optional<PreambleCache::Use>
PreambleCache::obtain(const EntryPlan &Plan, llvm::vfs::FileSystem &FS,
                      std::string &Note) {
  auto PathsFor = [&](const std::string &Stem) {
    llvm::SmallString<256> Base(Dir);
    llvm::sys::path::append(Base, Stem);
    return std::make_pair((Base + ".pch").str(), (Base + ".deps").str());
  };
  auto UseOf = [&](const std::string &PCHPath,
                   std::shared_ptr<llvm::MemoryBuffer> Data, bool Built,
                   std::vector<std::string> Absorbs) {
    Use U;
    U.Absorbs = std::move(Absorbs);
    U.PCHPath = PCHPath;
    U.PCHData = std::move(Data);
    U.Built = Built;
    U.Shared = Plan.Shared;
    U.ExtraArgs = {"-Xclang", "-include-pch", "-Xclang", PCHPath};
    U.ExtraArgs.insert(U.ExtraArgs.end(), Plan.UseArgs.begin(),
                       Plan.UseArgs.end());
    return U;
  };
  auto ReadNames = [&]() -> std::optional<std::vector<std::string>> {
    if (Plan.NamesHint.empty())
      return std::nullopt;
    auto Buf = readCacheFile(Plan.NamesHint, MaxManifestBytes);
    if (!Buf)
      return std::nullopt;
    llvm::SmallVector<llvm::StringRef, 0> Lines;
    Buf->getBuffer().split(Lines, '\n', -1, /*KeepEmpty=*/false);
    if (Lines.empty() || Lines[0] != NamesTag)
      return std::nullopt;
    std::vector<std::string> Names;
    for (size_t I = 1; I < Lines.size(); ++I)
      Names.push_back(Lines[I].str());
    return Names;
  };
  // A valid entry: manifest parses, inputs unchanged, it serves this file,
  // and the PCH is the one the manifest describes.
  auto Lookup = [&](const std::string &Stem) -> std::optional<Use> {
    auto [PCHPath, DepsPath] = PathsFor(Stem);
    auto DepsBuf = readCacheFile(DepsPath, MaxManifestBytes);
    if (!DepsBuf)
      return std::nullopt;
    auto M = parseManifest(DepsBuf->getBuffer());
    if (!M)
      return std::nullopt;
    for (const InputFile &F : M->Inputs) {
      auto Now = statFile(FS, F.Path);
      if (!Now || Now->Size != F.Size || Now->MTimeNs != F.MTimeNs)
        return std::nullopt;
    }
    if (Plan.Serves && !Plan.Serves(M->Names))
      return std::nullopt;
    std::shared_ptr<llvm::MemoryBuffer> PCH =
        readCacheFile(PCHPath, MaxPCHBytes);
    if (!PCH || PCH->getBufferSize() != M->PCHSize ||
        llvm::xxHash64(PCH->getBuffer()) != M->PCHHash)
      return std::nullopt;
    // A hit: the manifest's mtime is the entry's last use, for eviction.
    ::utimensat(AT_FDCWD, DepsPath.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
    ++Hits;
    {
      std::lock_guard<std::mutex> L(Mu);
      UsedStems.insert(Stem);
    }
    return UseOf(PCHPath, std::move(PCH), /*Built=*/false, M->Absorbs);
  };
  auto CurrentStem = [&]() {
    auto Names = ReadNames();
    return Plan.Stem(Names ? &*Names : nullptr);
  };

  if (auto Hit = Lookup(CurrentStem()))
    return Hit;
  std::string LockStem = Plan.LockStem.empty() ? CurrentStem() : Plan.LockStem;

  // One builder per key within this run.
  std::shared_ptr<std::mutex> KeyMu = keyMutex(LockStem);
  std::lock_guard<std::mutex> KeyLock(*KeyMu);
  if (auto Hit = Lookup(CurrentStem()))
    return Hit;
  if (!writable(Note))
    return std::nullopt; // building only to throw it away is slower
  sweepLeftovers();

  auto [LockPCH, LockDeps] = PathsFor(LockStem);
  std::string LockFile = LockPCH + ".lock";
  if (!regularOrAbsent(LockPCH) || !regularOrAbsent(LockDeps) ||
      !lockIsSafe(LockFile)) {
    Note = "'" + LockPCH +
           "' or its manifest or lock is not a regular "
           "file; parsing without the cache";
    return std::nullopt;
  }

  // One builder per key across runs: the first takes the lock, the others
  // wait for it and reuse its PCH.
  // Registered before the lock exists: on SIGINT or SIGTERM the link must
  // go before LockFileManager's unique file, or it is left dangling.
  llvm::sys::RemoveFileOnSignal(LockFile);
  std::optional<llvm::LockFileManager> Lock;
  Lock.emplace(LockPCH);
  bool OwnLock = false;
  if (Lock->getState() != llvm::LockFileManager::LFS_Owned)
    llvm::sys::DontRemoveFileOnSignal(LockFile);
  if (Lock->getState() == llvm::LockFileManager::LFS_Shared) {
    Lock->waitForUnlock(LockWaitSeconds);
    if (auto Hit = Lookup(CurrentStem()))
      return Hit;
    Lock.reset(); // the other builder failed: build our own, unlocked
  } else if (Lock->getState() == llvm::LockFileManager::LFS_Owned) {
    OwnLock = true;
    if (auto Hit = Lookup(CurrentStem())) { // finished just before we locked
      llvm::sys::DontRemoveFileOnSignal(LockFile);
      return Hit;
    }
  }
  struct ReleaseSignal {
    bool Own;
    std::string Path;
    ~ReleaseSignal() {
      if (Own)
        llvm::sys::DontRemoveFileOnSignal(Path);
    }
  } Release{OwnLock, LockFile};

  // Build, header function bodies skipped.
  auto PInv = std::make_shared<CompilerInvocation>(*Plan.Inv);
  PInv->getFrontendOpts().SkipFunctionBodies = true;
  {
    FrontendInputFile &In = PInv->getFrontendOpts().Inputs[0];
    In = FrontendInputFile(Plan.StandIn, In.getKind(), In.isSystem());
  }
  IntrusiveRefCntPtr<DiagnosticsEngine> BuildDiags =
      CompilerInstance::createDiagnostics(new DiagnosticOptions,
                                          new IgnoringDiagConsumer,
                                          /*ShouldOwnClient=*/true);
  RecordInputs Inputs(Plan.FindAbsorbed);
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> BuildFS(&FS);
  auto Preamble = PrecompiledPreamble::Build(
      *PInv, Plan.Source, Plan.Bounds, *BuildDiags, BuildFS,
      std::make_shared<PCHContainerOperations>(), /*StoreInMemory=*/true,
      Inputs);
  if (BuildDiags->hasErrorOccurred())
    return std::nullopt; // the uncached parse shows the errors
  if (!Preamble) {
    Note = "could not build the preamble: " + Preamble.getError().message();
    return std::nullopt;
  }

  // The PCH lives in an in-memory file system that AddImplicitPreamble
  // overlays; read it back from there.
  CompilerInvocation Scratch(*Plan.Inv);
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> PCHFS = BuildFS;
  Preamble->AddImplicitPreamble(Scratch, PCHFS, Plan.Source);
  auto PCHBuf = PCHFS->getBufferForFile(
      Scratch.getPreprocessorOpts().ImplicitPCHInclude, -1,
      /*RequiresNullTerminator=*/false);
  if (!PCHBuf) {
    Note = "could not read back the preamble PCH";
    return std::nullopt;
  }
  std::shared_ptr<llvm::MemoryBuffer> Data =
      llvm::MemoryBuffer::getMemBufferCopy((*PCHBuf)->getBuffer());
  ++Builds;

  Manifest M;
  M.PCHSize = Data->getBufferSize();
  M.PCHHash = llvm::xxHash64(Data->getBuffer());
  M.Names.assign(Inputs.Names.begin(), Inputs.Names.end());
  M.Absorbs = Inputs.Absorbed;
  bool Stable = true;
  for (const RecordInputs::SeenFile &S : Inputs.Seen) {
    auto Now = statFile(FS, S.Path);
    // Changed while we parsed it (or unnameable): do not cache this one.
    if (!Now || Now->Size != S.Size ||
        Now->MTimeNs / 1000000000 != S.MTimeSeconds ||
        llvm::StringRef(S.Path).contains('\n')) {
      Stable = false;
      break;
    }
    M.Inputs.push_back(*Now);
  }
  // Stored under the key its own names give (for a shared entry, only the
  // include directories that could matter to it).
  std::string Stem = Plan.Stem(&M.Names);
  auto [PCHPath, DepsPath] = PathsFor(Stem);
  if (evictedEarlier(Stem))
    ++RebuiltAfterEviction;
  {
    std::lock_guard<std::mutex> L(Mu);
    UsedStems.insert(Stem);
  }
  // Usable by this run from memory either way; stored only when it is
  // stable and fits the cache.
  if (!Stable || (MaxBytes && M.PCHSize > MaxBytes)) {
    if (Stable)
      Note = "the PCH (" + std::to_string(M.PCHSize >> 20) +
             " MiB) is larger than the cache's limit; not stored";
    return UseOf(PCHPath, std::move(Data), /*Built=*/true, M.Absorbs);
  }

  // PCH first, then the manifest that vouches for it: a reader that finds
  // a manifest also finds the PCH it describes (or a mismatch and rebuilds).
  std::error_code EC = writeAtomically(PCHPath, Data->getBuffer());
  if (!EC)
    EC = writeAtomically(DepsPath, render(M));
  if (EC)
    Note = "cannot write to the cache in '" + Dir + "': " + EC.message();
  if (!EC && !Plan.NamesHint.empty()) {
    std::set<std::string> All(M.Names.begin(), M.Names.end());
    if (auto Old = ReadNames())
      All.insert(Old->begin(), Old->end());
    std::string Text = std::string(NamesTag) + "\n";
    for (const std::string &N : All)
      Text += N + "\n";
    writeAtomically(Plan.NamesHint, Text); // only a hint: failure is fine
  }
  return UseOf(PCHPath, std::move(Data), /*Built=*/true, M.Absorbs);
}

std::optional<PreambleCache::Use>
PreambleCache::prepare(const std::vector<std::string> &Args,
                       llvm::StringRef File,
                       llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS,
                       std::string &Note, llvm::StringRef ExtraKey) {
  if (Dir.empty()) {
    Note = "no cache directory ($XDG_CACHE_HOME and $HOME unset); use "
           "--cache-dir";
    return std::nullopt;
  }
  auto MainBuf = FS->getBufferForFile(File);
  if (!MainBuf)
    return std::nullopt; // the parse reports the missing file

  IntrusiveRefCntPtr<DiagnosticsEngine> ArgDiags =
      CompilerInstance::createDiagnostics(new DiagnosticOptions,
                                          new IgnoringDiagConsumer,
                                          /*ShouldOwnClient=*/true);
  std::vector<const char *> CArgs;
  for (const std::string &A : Args)
    CArgs.push_back(A.c_str());
  CreateInvocationOptions CIOpts;
  CIOpts.Diags = ArgDiags;
  CIOpts.VFS = FS;
  std::shared_ptr<CompilerInvocation> Inv = createInvocation(CArgs, CIOpts);
  if (!Inv || Inv->getFrontendOpts().Inputs.size() != 1)
    return std::nullopt; // the parse reports bad flags

  llvm::SmallString<256> AbsFile(File);
  FS->makeAbsolute(AbsFile);
  std::string CWD;
  if (auto W = FS->getCurrentWorkingDirectory())
    CWD = *W;
  KeyedCommand Command = splitCommand(Args, File, CWD);

  // What every key starts from: everything that can change what a PCH
  // means, except the headers' contents, which the manifest checks.
  auto CommonKey = [&](llvm::SHA1 &Hasher, llvm::StringRef Kind,
                       bool WithDirs) {
    auto Feed = [&Hasher](llvm::StringRef S) {
      Hasher.update(S);
      Hasher.update(llvm::StringRef("\0", 1));
    };
    Feed(FormatTag);
    Feed(getClangFullVersion());
    Feed("skip-library-function-bodies");
    Feed(Kind);
    // The language: the flags hold a -x but not the file name, whose
    // extension selects it otherwise (a .cu and a .cpp with the same flags
    // are CUDA and C++); and clang's own verdict, whatever selected it.
    Feed(Command.Language);
    Feed("input kind " +
         std::to_string(static_cast<int>(
             Inv->getFrontendOpts().Inputs[0].getKind().getLanguage())) +
         (Inv->getFrontendOpts().Inputs[0].getKind().isHeader() ? " header"
                                                                 : ""));
    for (const std::string &A : Command.Flags)
      Feed(A);
    if (WithDirs)
      for (const IncludeDir &D : Command.Dirs) {
        Feed(D.Flag);
        Feed(D.Path);
      }
    if (Command.NeedsWorkingDirectory)
      Feed(CWD);
  };

  // A shared entry ignores ExtraKey (the language server's unsaved files):
  // an unsaved project header cannot change it, and an unsaved LibTorch
  // header fails the manifest's check and rebuilds it.
  std::string WhyNotShared;
  auto ObtainShared = [&](const std::string &PrefixText,
                          bool FindAbsorbed) -> std::optional<Use> {
    llvm::SHA1 Hasher;
    CommonKey(Hasher, "libtorch", /*WithDirs=*/false);
    Hasher.update(PrefixText);
    std::string BaseKey = hex(Hasher.final()).substr(0, 32);
    auto Source = llvm::MemoryBuffer::getMemBufferCopy(PrefixText);
    EntryPlan Plan;
    Plan.Shared = true;
    auto Dirs = Command.Dirs;
    auto Relevant = [Dirs, FS](const std::vector<std::string> *Names) {
      std::vector<IncludeDir> Kept;
      for (const IncludeDir &D : Dirs)
        if (!Names || directoryMayShadow(D.Path, *Names, *FS))
          Kept.push_back(D);
      return Kept;
    };
    Plan.Stem = [BaseKey, Relevant](const std::vector<std::string> *Names) {
      llvm::SHA1 H;
      H.update(BaseKey);
      for (const IncludeDir &D : Relevant(Names)) {
        H.update(llvm::StringRef("\0", 1));
        H.update(D.Flag);
        H.update(llvm::StringRef("\0", 1));
        H.update(D.Path);
      }
      return "libtorch-" + hex(H.final()).substr(0, 32);
    };
    // The directories left out of the key must hold none of the names the
    // entry's parse looked up (the hint that chose them may be stale).
    Plan.Serves = [Dirs, FS, Relevant](const std::vector<std::string> &Names) {
      std::vector<IncludeDir> Kept = Relevant(&Names);
      for (const IncludeDir &D : Dirs)
        if (!llvm::is_contained(Kept, D) &&
            directoryMayShadow(D.Path, Names, *FS))
          return false;
      return true;
    };
    llvm::SmallString<256> Hint(Dir);
    llvm::sys::path::append(Hint, "libtorch-" + BaseKey + ".names");
    Plan.NamesHint = std::string(Hint);
    Plan.LockStem = "libtorch-" + BaseKey;
    Plan.Inv = Inv;
    Plan.Source = Source.get();
    Plan.Bounds =
        PreambleBounds(PrefixText.size(), /*PreambleEndsAtStartOfLine=*/true);
    llvm::SmallString<256> StandIn(Dir);
    llvm::sys::path::append(StandIn, "libtorch-" + BaseKey + ".cpp");
    Plan.StandIn = std::string(StandIn);
    Plan.UseArgs = {"-Xclang", "-fno-validate-pch"};
    Plan.FindAbsorbed = FindAbsorbed;
    return obtain(Plan, *FS, Note);
  };
  if (auto Prefix = findLibTorchPrefix((*MainBuf)->getBuffer(), AbsFile,
                                       Command, *FS, &WhyNotShared)) {
    // "#include <a>\n#include <b>\n#include <torch/torch.h>\n": standard
    // headers, then the LibTorch include.
    llvm::SmallVector<llvm::StringRef, 8> Lines;
    llvm::StringRef(*Prefix).split(Lines, '\n', -1, /*KeepEmpty=*/false);
    std::string LibTorchLine = Lines.back().str() + "\n";
    if (Lines.size() == 1)
      return ObtainShared(LibTorchLine, /*FindAbsorbed=*/true);
    // Standard headers that LibTorch includes itself (the LibTorch-alone
    // entry lists those it absorbs) change nothing before it: the file
    // shares the LibTorch-alone entry. Any others stay in front of LibTorch
    // in an entry of their own, in the file's order.
    std::optional<Use> Alone =
        ObtainShared(LibTorchLine, /*FindAbsorbed=*/true);
    if (!Alone)
      return Alone;
    std::string Rest;
    for (size_t I = 0; I + 1 < Lines.size(); ++I) {
      llvm::StringRef Header =
          Lines[I].drop_front(Lines[I].find('<') + 1).take_until(
              [](char C) { return C == '>'; });
      if (!llvm::is_contained(Alone->Absorbs, Header.str()))
        Rest += Lines[I].str() + "\n";
    }
    if (Rest.empty())
      return Alone;
    // Only a probe for this file: its hit is the entry it uses.
    if (!Alone->Built)
      --Hits;
    return ObtainShared(Rest + LibTorchLine, /*FindAbsorbed=*/false);
  }

  // This file's own preamble.
  PreambleBounds Bounds = ComputePreambleBounds(
      *Inv->getLangOpts(), (*MainBuf)->getMemBufferRef(), /*MaxLines=*/0);
  if (Bounds.Size == 0)
    return std::nullopt;
  llvm::StringRef PreambleText =
      (*MainBuf)->getBuffer().take_front(Bounds.Size);
  llvm::SHA1 Hasher;
  CommonKey(Hasher, "preamble", /*WithDirs=*/true);
  auto Feed = [&Hasher](llvm::StringRef S) {
    Hasher.update(S);
    Hasher.update(llvm::StringRef("\0", 1));
  };
  if (PreambleText.contains("__FILE__") ||
      PreambleText.contains("__BASE_FILE__"))
    Feed(AbsFile);
  else if (PreambleText.contains('"'))
    Feed(llvm::sys::path::parent_path(AbsFile));
  Feed(PreambleText);
  Feed(Bounds.PreambleEndsAtStartOfLine ? "bol" : "mid");
  Feed(ExtraKey);
  std::string Key = hex(Hasher.final()).substr(0, 32);

  EntryPlan Plan;
  Plan.Stem = [Key](const std::vector<std::string> *) {
    return "preamble-" + Key;
  };
  Plan.Inv = Inv;
  Plan.Source = MainBuf->get();
  Plan.Bounds = Bounds;
  // Built under the main file's own name, the main file would read back as
  // its preamble alone; so build it under a name of its own, in the main
  // file's directory (quoted includes search there).
  llvm::SmallString<256> StandIn(llvm::sys::path::parent_path(AbsFile));
  llvm::sys::path::append(StandIn, "__tensor_accountant_preamble__.cpp");
  Plan.StandIn = std::string(StandIn);
  Plan.UseArgs = {"-Xclang",
                  "-preamble-bytes=" + std::to_string(Bounds.Size) + "," +
                      (Bounds.PreambleEndsAtStartOfLine ? "1" : "0"),
                  "-Xclang", "-fno-validate-pch"};
  return obtain(Plan, *FS, Note);
}

} // namespace tma
