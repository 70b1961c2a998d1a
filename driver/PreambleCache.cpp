#include "driver/PreambleCache.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Basic/Version.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/PrecompiledPreamble.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Serialization/PCHContainerOperations.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LockFileManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA1.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace clang;
namespace fs = llvm::sys::fs;

namespace tma {
namespace {

/// Bump when the manifest format or the way PCHs are built changes.
constexpr const char *FormatTag = "tma-preamble-cache 1";
/// How long a run waits for another run building the same preamble before
/// building its own (a cold torch/torch.h preamble takes 5-20 s).
constexpr unsigned LockWaitSeconds = 300;

struct InputFile {
  std::string Path;
  uint64_t Size = 0;
  int64_t MTimeNs = 0;
};

struct Manifest {
  uint64_t PCHSize = 0;
  uint64_t PCHHash = 0;
  std::vector<InputFile> Inputs;
};

std::optional<InputFile> statFile(llvm::vfs::FileSystem &FS,
                                  llvm::StringRef Path) {
  auto S = FS.status(Path);
  if (!S)
    return std::nullopt;
  InputFile F;
  F.Path = Path.str();
  F.Size = S->getSize();
  F.MTimeNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  S->getLastModificationTime().time_since_epoch())
                  .count();
  return F;
}

std::string render(const Manifest &M) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  OS << FormatTag << "\n";
  OS << "pch " << M.PCHSize << " " << llvm::utohexstr(M.PCHHash) << "\n";
  for (const InputFile &F : M.Inputs)
    OS << F.Size << " " << F.MTimeNs << " " << F.Path << "\n";
  return Text;
}

std::optional<Manifest> parseManifest(llvm::StringRef Text) {
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Text.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  if (Lines.size() < 2 || Lines[0] != FormatTag)
    return std::nullopt;
  Manifest M;
  llvm::SmallVector<llvm::StringRef, 3> Parts;
  Lines[1].split(Parts, ' ');
  if (Parts.size() != 3 || Parts[0] != "pch" ||
      Parts[1].getAsInteger(10, M.PCHSize) ||
      Parts[2].getAsInteger(16, M.PCHHash))
    return std::nullopt;
  for (size_t I = 2; I < Lines.size(); ++I) {
    auto [SizeText, Rest] = Lines[I].split(' ');
    auto [TimeText, Path] = Rest.split(' ');
    InputFile F;
    if (SizeText.getAsInteger(10, F.Size) ||
        TimeText.getAsInteger(10, F.MTimeNs) || Path.empty())
      return std::nullopt;
    F.Path = Path.str();
    M.Inputs.push_back(std::move(F));
  }
  return M;
}

/// Writes Data to Path through a unique temporary file and a rename, so a
/// concurrent reader sees the old file or the new one, never a torn one.
std::error_code writeAtomically(llvm::StringRef Path, llvm::StringRef Data) {
  llvm::SmallString<256> Tmp;
  int FD;
  if (std::error_code EC =
          fs::createUniqueFile(Path + ".tmp-%%%%%%%%", FD, Tmp))
    return EC;
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Data;
    OS.close();
    if (OS.has_error()) {
      std::error_code EC = OS.error();
      OS.clear_error();
      fs::remove(Tmp);
      return EC;
    }
  }
  if (std::error_code EC = fs::rename(Tmp, Path)) {
    fs::remove(Tmp);
    return EC;
  }
  return {};
}

/// Valid when the manifest parses, the PCH is the one it describes, and
/// every input file is unchanged.
bool isValid(const std::string &PCH, const std::string &Deps,
             llvm::vfs::FileSystem &FS) {
  auto DepsBuf = llvm::MemoryBuffer::getFile(Deps);
  if (!DepsBuf)
    return false;
  auto M = parseManifest((*DepsBuf)->getBuffer());
  if (!M)
    return false;
  for (const InputFile &F : M->Inputs) {
    auto Now = statFile(FS, F.Path);
    if (!Now || Now->Size != F.Size || Now->MTimeNs != F.MTimeNs)
      return false;
  }
  auto PCHBuf = llvm::MemoryBuffer::getFile(PCH, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!PCHBuf || (*PCHBuf)->getBufferSize() != M->PCHSize)
    return false;
  return llvm::xxHash64((*PCHBuf)->getBuffer()) == M->PCHHash;
}

/// Records every file the preamble read, with size and mtime as clang saw
/// them.
class RecordInputs : public PreambleCallbacks {
public:
  void AfterExecute(CompilerInstance &CI) override {
    const SourceManager &SM = CI.getSourceManager();
    const FileEntry *Main = SM.getFileEntryForID(SM.getMainFileID());
    for (auto It = SM.fileinfo_begin(); It != SM.fileinfo_end(); ++It) {
      const FileEntry *FE = It->first;
      if (!FE || FE == Main)
        continue;
      Seen.push_back({FE->getName().str(), static_cast<uint64_t>(FE->getSize()),
                      static_cast<int64_t>(FE->getModificationTime())});
    }
  }
  struct SeenFile {
    std::string Path;
    uint64_t Size;
    int64_t MTimeSeconds;
  };
  std::vector<SeenFile> Seen;
};

std::string hex(llvm::ArrayRef<uint8_t> Bytes) {
  return llvm::toHex(Bytes, /*LowerCase=*/true);
}

} // namespace

std::string defaultCacheDir() {
  llvm::SmallString<256> Dir;
  if (!llvm::sys::path::cache_directory(Dir))
    return "";
  llvm::sys::path::append(Dir, "tensor-accountant");
  return std::string(Dir);
}

PreambleCache::PreambleCache(std::string Dir) : Dir(std::move(Dir)) {}

std::shared_ptr<std::mutex> PreambleCache::keyMutex(const std::string &Key) {
  std::lock_guard<std::mutex> L(Mu);
  auto &M = KeyMutexes[Key];
  if (!M)
    M = std::make_shared<std::mutex>();
  return M;
}

void PreambleCache::discard(const std::string &PCHPath) {
  llvm::StringRef Base = llvm::StringRef(PCHPath).drop_back(4); // ".pch"
  fs::remove(Base + ".deps");
  fs::remove(PCHPath);
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

  PreambleBounds Bounds = ComputePreambleBounds(
      *Inv->getLangOpts(), (*MainBuf)->getMemBufferRef(), /*MaxLines=*/0);
  if (Bounds.Size == 0)
    return std::nullopt;
  llvm::StringRef PreambleText = (*MainBuf)->getBuffer().take_front(Bounds.Size);

  // The key. Everything that can change what the preamble means, except
  // the headers' contents, which the manifest checks.
  llvm::SmallString<256> AbsFile(File);
  FS->makeAbsolute(AbsFile);
  llvm::SHA1 Hasher;
  auto Feed = [&Hasher](llvm::StringRef S) {
    Hasher.update(S);
    Hasher.update(llvm::StringRef("\0", 1));
  };
  Feed(FormatTag);
  Feed(getClangFullVersion());
  Feed("skip-function-bodies");
  for (const std::string &A : Args)
    if (A != File && A != AbsFile.str())
      Feed(A);
  if (auto CWD = FS->getCurrentWorkingDirectory())
    Feed(*CWD);
  if (PreambleText.contains("__FILE__") || PreambleText.contains("__BASE_FILE__"))
    Feed(AbsFile);
  else if (PreambleText.contains('"'))
    Feed(llvm::sys::path::parent_path(AbsFile));
  Feed(PreambleText);
  Feed(Bounds.PreambleEndsAtStartOfLine ? "bol" : "mid");
  Feed(ExtraKey);
  std::string Key = hex(Hasher.final()).substr(0, 32);

  llvm::SmallString<256> Base(Dir);
  llvm::sys::path::append(Base, "preamble-" + Key);
  std::string PCHPath = (Base + ".pch").str();
  std::string DepsPath = (Base + ".deps").str();

  Use U;
  U.PCHPath = PCHPath;
  U.ExtraArgs = {"-Xclang", "-include-pch", "-Xclang", PCHPath,
                 "-Xclang",
                 "-preamble-bytes=" + std::to_string(Bounds.Size) + "," +
                     (Bounds.PreambleEndsAtStartOfLine ? "1" : "0"),
                 "-Xclang", "-fno-validate-pch"};

  // One builder per key within this run.
  std::shared_ptr<std::mutex> KeyMu = keyMutex(Key);
  std::lock_guard<std::mutex> KeyLock(*KeyMu);
  if (isValid(PCHPath, DepsPath, *FS))
    return U;

  if (std::error_code EC = fs::create_directories(Dir)) {
    Note = "cannot create cache directory '" + Dir + "': " + EC.message();
    return std::nullopt;
  }

  // One builder per key across runs: the first takes the lock, the others
  // wait for it and reuse its PCH.
  std::optional<llvm::LockFileManager> Lock;
  Lock.emplace(PCHPath);
  if (Lock->getState() == llvm::LockFileManager::LFS_Shared) {
    Lock->waitForUnlock(LockWaitSeconds);
    if (isValid(PCHPath, DepsPath, *FS))
      return U;
    Lock.reset(); // the other builder failed: build our own, unlocked
  } else if (Lock->getState() == llvm::LockFileManager::LFS_Owned) {
    if (isValid(PCHPath, DepsPath, *FS)) // finished just before we locked
      return U;
  }

  // Build, header function bodies skipped.
  auto PInv = std::make_shared<CompilerInvocation>(*Inv);
  PInv->getFrontendOpts().SkipFunctionBodies = true;
  // The PCH records the file it was built from, with the preamble as that
  // file's contents, and loading the PCH installs those contents for that
  // path. Built under the main file's own name, the main file would read
  // back as its preamble alone; so build it under a name of its own, in
  // the main file's directory (quoted includes search there).
  {
    FrontendInputFile &In = PInv->getFrontendOpts().Inputs[0];
    llvm::SmallString<256> Stand(llvm::sys::path::parent_path(AbsFile));
    llvm::sys::path::append(Stand, "__tensor_accountant_preamble__.cpp");
    In = FrontendInputFile(Stand, In.getKind(), In.isSystem());
  }
  IntrusiveRefCntPtr<DiagnosticsEngine> BuildDiags =
      CompilerInstance::createDiagnostics(new DiagnosticOptions,
                                          new IgnoringDiagConsumer,
                                          /*ShouldOwnClient=*/true);
  RecordInputs Inputs;
  auto Preamble = PrecompiledPreamble::Build(
      *PInv, MainBuf->get(), Bounds, *BuildDiags, FS,
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
  CompilerInvocation Scratch(*Inv);
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> PCHFS = FS;
  Preamble->AddImplicitPreamble(Scratch, PCHFS, MainBuf->get());
  auto PCHBuf = PCHFS->getBufferForFile(
      Scratch.getPreprocessorOpts().ImplicitPCHInclude, -1,
      /*RequiresNullTerminator=*/false);
  if (!PCHBuf) {
    Note = "could not read back the preamble PCH";
    return std::nullopt;
  }

  Manifest M;
  M.PCHSize = (*PCHBuf)->getBufferSize();
  M.PCHHash = llvm::xxHash64((*PCHBuf)->getBuffer());
  bool Stable = true;
  for (const RecordInputs::SeenFile &S : Inputs.Seen) {
    auto Now = statFile(*FS, S.Path);
    // Changed while we parsed it (or unnameable): do not cache this one.
    if (!Now || Now->Size != S.Size ||
        Now->MTimeNs / 1000000000 != S.MTimeSeconds ||
        llvm::StringRef(S.Path).contains('\n')) {
      Stable = false;
      break;
    }
    M.Inputs.push_back(*Now);
  }
  // Still usable by this run (it matches what was parsed); just not stored.
  if (!Stable) {
    std::error_code EC = writeAtomically(PCHPath, (*PCHBuf)->getBuffer());
    fs::remove(DepsPath);
    if (EC) {
      Note = "cannot write '" + PCHPath + "': " + EC.message();
      return std::nullopt;
    }
    U.Built = true;
    return U;
  }

  // PCH first, then the manifest that vouches for it: a reader that finds
  // a manifest also finds the PCH it describes (or a mismatch and rebuilds).
  std::error_code EC = writeAtomically(PCHPath, (*PCHBuf)->getBuffer());
  if (!EC)
    EC = writeAtomically(DepsPath, render(M));
  if (EC) {
    Note = "cannot write to the cache in '" + Dir + "': " + EC.message();
    return std::nullopt;
  }
  U.Built = true;
  return U;
}

} // namespace tma
