#include "driver/PreambleCache.h"
#include "driver/LibTorchPrefix.h"
#include "frontend/AstQueries.h"

#include "clang/Basic/CharInfo.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Basic/Version.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/PrecompiledPreamble.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/HeaderSearch.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Serialization/PCHContainerOperations.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LockFileManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA1.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

using namespace clang;
namespace fs = llvm::sys::fs;

namespace tma {
namespace {

/// Bump when the manifest format or the way PCHs are built changes.
constexpr const char *FormatTag = "tma-preamble-cache 4";
constexpr const char *NamesTag = "tma-libtorch-names 1";
/// How long a run waits for another run building the same entry before
/// building its own (a cold torch/torch.h parse takes 5-20 s).
constexpr unsigned LockWaitSeconds = 300;
/// Bounds on what the cache reads: a manifest lists ~5,000 headers
/// (~350 KB); a LibTorch PCH is ~80 MB.
constexpr uint64_t MaxManifestBytes = uint64_t(64) << 20;
constexpr uint64_t MaxPCHBytes = uint64_t(4) << 30;
constexpr uint64_t MaxSmallFileBytes = uint64_t(1) << 20;
/// The eviction record: which entries trim() removed, so that a run that
/// needs one again can say the cache is too small. Old lines go.
constexpr const char *EvictionLogName = "preamble-evictions.log";
constexpr const char *EvictionLogTag = "tma-evictions 1";
constexpr int64_t EvictionMemorySeconds = 30 * 24 * 3600;
constexpr size_t EvictionLogMaxLines = 4096;

struct InputFile {
  std::string Path;
  uint64_t Size = 0;
  int64_t MTimeNs = 0;
};

struct Manifest {
  uint64_t PCHSize = 0;
  uint64_t PCHHash = 0;
  /// First components of the include names the parse looked up.
  std::vector<std::string> Names;
  /// Standard headers (<vector>) the LibTorch parse includes itself, so
  /// that a file including them before LibTorch parses the same program
  /// with this entry (AbsorptionRecorder says when).
  std::vector<std::string> Absorbs;
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
  OS << "names";
  for (const std::string &N : M.Names)
    OS << " " << N;
  OS << "\n";
  OS << "absorbs";
  for (const std::string &N : M.Absorbs)
    OS << " " << N;
  OS << "\n";
  for (const InputFile &F : M.Inputs)
    OS << F.Size << " " << F.MTimeNs << " " << F.Path << "\n";
  return Text;
}

std::optional<Manifest> parseManifest(llvm::StringRef Text) {
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Text.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  if (Lines.size() < 4 || Lines[0] != FormatTag)
    return std::nullopt;
  Manifest M;
  llvm::SmallVector<llvm::StringRef, 3> Parts;
  Lines[1].split(Parts, ' ');
  if (Parts.size() != 3 || Parts[0] != "pch" ||
      Parts[1].getAsInteger(10, M.PCHSize) ||
      Parts[2].getAsInteger(16, M.PCHHash))
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef, 0> Names;
  Lines[2].split(Names, ' ', -1, /*KeepEmpty=*/false);
  if (Names.empty() || Names[0] != "names")
    return std::nullopt;
  for (size_t I = 1; I < Names.size(); ++I)
    M.Names.push_back(Names[I].str());
  llvm::SmallVector<llvm::StringRef, 0> Absorbs;
  Lines[3].split(Absorbs, ' ', -1, /*KeepEmpty=*/false);
  if (Absorbs.empty() || Absorbs[0] != "absorbs")
    return std::nullopt;
  for (size_t I = 1; I < Absorbs.size(); ++I)
    M.Absorbs.push_back(Absorbs[I].str());
  for (size_t I = 4; I < Lines.size(); ++I) {
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

/// Reads a cache file only if it is a regular file (no link followed, no
/// FIFO or device opened in a way that blocks) of at most MaxBytes.
std::unique_ptr<llvm::MemoryBuffer> readCacheFile(const std::string &Path,
                                                  uint64_t MaxBytes) {
  int FD = ::open(Path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0)
    return nullptr;
  struct stat St;
  if (::fstat(FD, &St) != 0 || !S_ISREG(St.st_mode) ||
      static_cast<uint64_t>(St.st_size) > MaxBytes) {
    ::close(FD);
    return nullptr;
  }
  auto Buf = llvm::MemoryBuffer::getOpenFile(fs::convertFDToNativeFile(FD),
                                             Path, St.st_size,
                                             /*RequiresNullTerminator=*/false);
  ::close(FD);
  return Buf ? std::move(*Buf) : nullptr;
}

/// True when nothing is at Path or a regular file is: the only things the
/// cache may replace or remove.
bool regularOrAbsent(const std::string &Path) {
  struct stat St;
  if (::lstat(Path.c_str(), &St) != 0)
    return errno == ENOENT;
  return S_ISREG(St.st_mode);
}

/// LockFileManager's lock is a symbolic link to a unique file holding
/// "<host> <pid>". Safe to hand to it when absent, or when it (through the
/// link) is a small regular file: LockFileManager reads it whole.
bool lockIsSafe(const std::string &Path) {
  struct stat St;
  if (::lstat(Path.c_str(), &St) != 0)
    return errno == ENOENT;
  if (!S_ISREG(St.st_mode) && !S_ISLNK(St.st_mode))
    return false;
  if (::stat(Path.c_str(), &St) != 0)
    return errno == ENOENT; // a dangling link: its owner is gone
  return S_ISREG(St.st_mode) && St.st_size <= 4096;
}

/// The owner a lock names, read through its link without blocking.
std::optional<std::pair<std::string, long>> lockOwner(const std::string &Path) {
  int FD = ::open(Path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0)
    return std::nullopt;
  struct stat St;
  char Buf[4097];
  ssize_t N = -1;
  if (::fstat(FD, &St) == 0 && S_ISREG(St.st_mode) && St.st_size <= 4096)
    N = ::read(FD, Buf, sizeof Buf - 1);
  ::close(FD);
  if (N < 0)
    return std::nullopt;
  auto [Host, PidText] = llvm::StringRef(Buf, N).trim().split(' ');
  long Pid = 0;
  if (PidText.getAsInteger(10, Pid))
    return std::nullopt;
  return std::make_pair(Host.str(), Pid);
}

void removeIfRegular(const std::string &Path) {
  struct stat St;
  if (::lstat(Path.c_str(), &St) == 0 && S_ISREG(St.st_mode))
    ::unlink(Path.c_str());
}

/// Writes Data to Path through a unique temporary file and a rename, so a
/// concurrent reader sees the old file or the new one, never a torn one.
/// The temporary file names this process, so that a later run can tell an
/// orphan (its writer killed) from a write in progress.
std::error_code writeAtomically(const std::string &Path, llvm::StringRef Data) {
  if (!regularOrAbsent(Path))
    return std::make_error_code(std::errc::file_exists);
  llvm::SmallString<256> Tmp;
  int FD;
  std::string Model = Path + ".tmp-" +
                      std::to_string(llvm::sys::Process::getProcessId()) +
                      "-%%%%%%%%";
  if (std::error_code EC = fs::createUniqueFile(Model, FD, Tmp))
    return EC;
  std::string TmpPath(Tmp);
  llvm::sys::RemoveFileOnSignal(TmpPath);
  auto Done = [&](std::error_code EC) {
    if (EC)
      fs::remove(TmpPath);
    llvm::sys::DontRemoveFileOnSignal(TmpPath);
    return EC;
  };
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Data;
    OS.close();
    if (OS.has_error()) {
      std::error_code EC = OS.error();
      OS.clear_error();
      return Done(EC);
    }
  }
  return Done(fs::rename(TmpPath, Path));
}

std::string hostName() {
  struct utsname U;
  return ::uname(&U) == 0 ? std::string(U.nodename) : std::string();
}

bool processAlive(long Pid) {
  return Pid > 0 && (::kill(static_cast<pid_t>(Pid), 0) == 0 || errno == EPERM);
}

/// Which standard headers a parse of the LibTorch include alone takes in
/// such a way that a file including them *before* LibTorch parses the same
/// program on top of the LibTorch-alone PCH. There, the file's own
/// `#include <vector>` comes after LibTorch's; so the questions are whether
/// including <vector> first would have changed LibTorch's parse, and
/// whether including it again afterwards changes anything. A standard
/// header H is *absorbed* when:
///  - LibTorch includes it by that name, in angle brackets, from one of its
///    own headers (the same lookup as the file's: same command, same
///    search path);
///  - including it again is a no-op: clang found it include-guarded or
///    `#pragma once`; or (libstdc++'s <cmath>, <cstdlib>, ... re-run a few
///    directives before their guard) LibTorch's parse included it again
///    and every such re-inclusion read no new file and left every macro as
///    it was (<cassert> redefines assert: fine, identically);
///  - the window of its first inclusion (H and what it includes for the
///    first time) defines or undefines nothing that one of LibTorch's own
///    headers had tested while undefined before that window (#ifdef,
///    #ifndef, defined(), an identifier of an #if or #elif, #undef), and
///    leaves no macro one of them had defined before the window other than
///    as it was: the ways including H earlier could change how LibTorch's
///    directives go;
///  - and the other way round: no directive in the window tests a macro
///    whose state one of LibTorch's own headers had set before it (c10
///    defines __STDC_FORMAT_MACROS before <cinttypes>), which H would not
///    see if it came first.
///    The standard library's own headers (those included by a C or C++
///    standard or system name, and all they include) are left out of both:
///    the standard headers may be included in any order ([using.headers]),
///    and glibc's re-run their feature macros on every inclusion. Clang's
///    predefines and the command line's macros come first in either order.
/// Declarations need no check: the parse with H first sees the same
/// declarations, and a LibTorch header that named something of H before
/// including H would fail in the LibTorch-alone parse, which compiled.
/// Not seen: an #if that tests a name made by token pasting (glibc's
/// __GLIBC_USE(F)); only glibc's own headers do that, consistently.
class AbsorptionRecorder {
public:
  void attach(CompilerInstance &CI) { this->CI = &CI; }

  void enterFile(SourceLocation Loc) {
    const SourceManager &SM = CI->getSourceManager();
    FileID FID = SM.getFileID(Loc);
    const FileEntry *FE = SM.getFileEntryForID(FID);
    if (!MainSeen && FE && FID != SM.getMainFileID()) {
      // The first header: everything before it was clang's predefines and
      // the command line's macros, first in either order.
      MainSeen = true;
      MainStart = Seq + 1;
    }
    Entry E{FE, ++Seq, 0, false};
    E.Library = PendingLibrary || (!Stack.empty() && Stack.back().Library);
    PendingLibrary = false;
    if (FE && !Windows.count(FE))
      E.First = true;
    Stack.push_back(E);
    if (E.First)
      Windows[FE] = {E.Start, 0};
  }
  void exitFile() {
    if (Stack.empty())
      return;
    Entry E = Stack.back();
    Stack.pop_back();
    E.End = ++Seq;
    if (E.First)
      Windows[E.File].End = E.End;
    else if (E.File)
      ReEntries.push_back(E);
  }
  void include(SourceLocation HashLoc, StringRef Name, bool Angled,
               OptionalFileEntryRef File) {
    const SourceManager &SM = CI->getSourceManager();
    PendingLibrary = Angled && isLibraryHeaderName(Name);
    if (!Angled || !File || !isStandardHeaderName(Name) ||
        SM.getFileID(HashLoc) == SM.getMainFileID())
      return;
    Candidates.emplace(Name.str(), &File->getFileEntry());
  }
  void testedUndefined(StringRef Name) {
    if (inLibrary())
      return;
    FirstUndefinedTest.try_emplace(Name, ++Seq);
  }
  /// A directive of the standard library tested Name: note it when
  /// LibTorch's own headers set Name's state.
  void testedInLibrary(StringRef Name) {
    if (!inLibrary())
      return;
    auto It = LastSetByLibTorch.find(Name);
    if (It != LastSetByLibTorch.end())
      LibraryTests.push_back({++Seq, It->second});
  }
  void ifCondition(SourceRange Condition) {
    const SourceManager &SM = CI->getSourceManager();
    StringRef Text = Lexer::getSourceText(
        CharSourceRange::getCharRange(Condition), SM, CI->getLangOpts());
    Preprocessor &PP = CI->getPreprocessor();
    // Every identifier, comments and all: a name too many only makes the
    // check stricter.
    for (size_t I = 0; I < Text.size();) {
      if (!isAsciiIdentifierStart(Text[I])) {
        // Numbers whole ("1e5", "0x1f" hold letters).
        if (isDigit(Text[I]))
          while (I < Text.size() && isAsciiIdentifierContinue(Text[I]))
            ++I;
        else
          ++I;
        continue;
      }
      size_t J = I;
      while (J < Text.size() && isAsciiIdentifierContinue(Text[J]))
        ++J;
      StringRef Id = Text.slice(I, J);
      if (!PP.isMacroDefined(Id))
        testedUndefined(Id);
      testedInLibrary(Id);
      I = J;
    }
  }
  void defined(StringRef Name, const MacroInfo *MI) { change(Name, MI); }
  void undefined(StringRef Name, bool WasDefined) {
    testedInLibrary(Name);
    if (!WasDefined) {
      testedUndefined(Name); // an #undef of nothing: its effect depends on it
      return;
    }
    change(Name, nullptr);
  }

  /// The absorbed standard headers, sorted; call after the parse.
  std::vector<std::string> absorbed() {
    std::vector<std::string> Out;
    if (!CI || !CI->hasPreprocessor())
      return Out;
    Preprocessor &PP = CI->getPreprocessor();
    HeaderSearch &HS = PP.getHeaderSearchInfo();
    for (const auto &[Name, FE] : Candidates) {
      auto W = Windows.find(FE);
      if (W == Windows.end() || W->second.End == 0)
        continue;
      if (!HS.isFileMultipleIncludeGuarded(FE) && !reincludesAreNoOps(FE, PP))
        continue;
      if (firstInclusionMatters(W->second.Start, W->second.End))
        continue;
      Out.push_back(Name);
    }
    return Out; // Candidates is a map: sorted by name
  }

private:
  struct Window {
    uint64_t Start = 0, End = 0;
  };
  struct Entry {
    const FileEntry *File;
    uint64_t Start, End;
    bool First;
    bool Library = false; // the standard library's, or included by it
  };
  struct MacroEvent {
    std::string Name;
    uint64_t Seq;
    int64_t PriorSeq;          // -1: not defined before
    const MacroInfo *PriorMI;  // the definition before (null: none)
    const MacroInfo *MI;       // after (null: undefined)
    bool Library = false;      // made by the standard library's headers
  };
  struct LibraryTest {
    uint64_t Seq;
    uint64_t SetAt; // when LibTorch's headers last set the macro tested
  };

  bool inLibrary() const { return !Stack.empty() && Stack.back().Library; }

  /// <vector>, <stdio.h>, <sys/types.h>, <bits/...>: what the C and C++
  /// standard libraries, POSIX and the kernel's headers are included by.
  static bool isLibraryHeaderName(StringRef Name) {
    if (isStandardHeaderName(Name))
      return true;
    for (const char *Dir : {"bits/", "sys/", "gnu/", "asm/", "asm-generic/",
                            "linux/", "x86_64-linux-gnu/"})
      if (Name.startswith(Dir))
        return true;
    static const char *const CAndPosix[] = {
        "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h",
        "inttypes.h", "iso646.h", "limits.h", "locale.h", "math.h",
        "setjmp.h", "signal.h", "stdalign.h", "stdarg.h", "stdatomic.h",
        "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h",
        "stdnoreturn.h", "string.h", "tgmath.h", "threads.h", "time.h",
        "uchar.h", "wchar.h", "wctype.h", "features.h", "alloca.h",
        "endian.h", "strings.h", "unistd.h", "pthread.h", "sched.h",
        "dlfcn.h", "fcntl.h", "dirent.h", "execinfo.h", "cxxabi.h",
        "malloc.h", "memory.h", "langinfo.h", "libintl.h", "nl_types.h",
        "iconv.h", "ctype.h", "wait.h", "poll.h", "semaphore.h",
        "immintrin.h", "xmmintrin.h", "emmintrin.h", "x86intrin.h",
        "stdc-predef.h", "syscall.h", "limits.h", "unwind.h"};
    return llvm::is_contained(CAndPosix, Name);
  }

  void change(StringRef Name, const MacroInfo *MI) {
    testedInLibrary(Name);
    if (inLibrary())
      LastSetByLibTorch.erase(Name);
    else if (MainSeen)
      LastSetByLibTorch[Name] = Seq + 1;
    auto It = Active.find(Name);
    MacroEvent E{Name.str(), ++Seq, -1, nullptr, MI};
    E.Library = inLibrary();
    if (It != Active.end()) {
      E.PriorSeq = int64_t(It->second.first);
      E.PriorMI = It->second.second;
    }
    Events.push_back(std::move(E));
    if (MI)
      Active[Name] = {Seq, MI};
    else
      Active.erase(Name);
  }

  /// Per macro changed in [Start, End]: its first and last change there.
  llvm::StringMap<std::pair<const MacroEvent *, const MacroEvent *>>
  changesIn(uint64_t Start, uint64_t End) const {
    llvm::StringMap<std::pair<const MacroEvent *, const MacroEvent *>> Out;
    auto It = std::lower_bound(
        Events.begin(), Events.end(), Start,
        [](const MacroEvent &E, uint64_t S) { return E.Seq < S; });
    for (; It != Events.end() && It->Seq <= End; ++It) {
      auto &FL = Out[It->Name];
      if (!FL.first)
        FL.first = &*It;
      FL.second = &*It;
    }
    return Out;
  }
  static bool same(const MacroInfo *A, const MacroInfo *B, Preprocessor &PP) {
    return A == B ||
           (A && B && A->isIdenticalTo(*B, PP, /*Syntactically=*/true));
  }

  /// Whether including H (first included in Start..End) before LibTorch
  /// could change a directive of either. In the other order, H and every
  /// library header it includes come first, including those LibTorch had
  /// already included before H; so this over-approximates what H defines
  /// by everything the library's headers define anywhere in the parse.
  bool firstInclusionMatters(uint64_t Start, uint64_t End) {
    if (!Summarised) {
      llvm::StringSet<> LibraryChanged;
      for (const MacroEvent &E : Events)
        if (E.Library)
          LibraryChanged.insert(E.Name);
      // LibTorch's own tests of macros then undefined, and its own
      // definitions, of names the library also defines.
      for (const auto &T : FirstUndefinedTest)
        if (LibraryChanged.count(T.first()))
          LibTorchSawLibrary = std::min(LibTorchSawLibrary, T.second);
      for (const MacroEvent &E : Events)
        if (!E.Library && E.Seq >= MainStart && LibraryChanged.count(E.Name))
          LibTorchSawLibrary = std::min(LibTorchSawLibrary, E.Seq);
      for (const LibraryTest &T : LibraryTests)
        LibrarySawLibTorch = std::min(LibrarySawLibTorch, T.Seq);
      Summarised = true;
    }
    return LibTorchSawLibrary < Start || LibrarySawLibTorch < End;
  }

  bool reincludesAreNoOps(const FileEntry *FE, Preprocessor &PP) const {
    bool Seen = false;
    for (const Entry &E : ReEntries) {
      if (E.File != FE)
        continue;
      Seen = true;
      for (const auto &[File, W] : Windows)
        if (W.Start > E.Start && W.Start < E.End)
          return false; // read a new file
      for (const auto &Change : changesIn(E.Start, E.End))
        if (!same(Change.second.first->PriorMI, Change.second.second->MI, PP))
          return false;
    }
    return Seen;
  }

  CompilerInstance *CI = nullptr;
  uint64_t Seq = 0;
  uint64_t MainStart = 0;
  bool MainSeen = false;
  std::vector<Entry> Stack;
  std::vector<Entry> ReEntries;
  std::map<const FileEntry *, Window> Windows;
  std::map<std::string, const FileEntry *> Candidates;
  llvm::StringMap<uint64_t> FirstUndefinedTest;
  llvm::StringMap<std::pair<uint64_t, const MacroInfo *>> Active;
  llvm::StringMap<uint64_t> LastSetByLibTorch;
  std::vector<LibraryTest> LibraryTests;
  bool PendingLibrary = false;
  bool Summarised = false;
  uint64_t LibTorchSawLibrary = UINT64_MAX, LibrarySawLibTorch = UINT64_MAX;
  std::vector<MacroEvent> Events;
};

/// Records every file the parse read (size and mtime as clang saw them),
/// the first component of every include name it looked up, and (for the
/// LibTorch include alone) the standard headers it absorbs.
class RecordInputs : public PreambleCallbacks {
public:
  explicit RecordInputs(bool FindAbsorbed) : FindAbsorbed(FindAbsorbed) {}
  void BeforeExecute(CompilerInstance &CI) override { Absorption.attach(CI); }
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
    if (FindAbsorbed)
      Absorbed = Absorption.absorbed();
  }
  std::unique_ptr<PPCallbacks> createPPCallbacks() override {
    return std::make_unique<Recorder>(Names, FindAbsorbed ? &Absorption
                                                          : nullptr);
  }
  // Project headers in a file's own preamble keep their bodies (a module
  // defined in its header is followed into); LibTorch's do not.
  bool shouldSkipFunctionBody(Decl *D) override { return !keepsFunctionBody(D); }
  struct SeenFile {
    std::string Path;
    uint64_t Size;
    int64_t MTimeSeconds;
  };
  std::vector<SeenFile> Seen;
  std::set<std::string> Names;
  std::vector<std::string> Absorbed;

private:
  class Recorder : public PPCallbacks {
  public:
    Recorder(std::set<std::string> &Names, AbsorptionRecorder *Absorption)
        : Names(Names), A(Absorption) {}
    void InclusionDirective(SourceLocation HashLoc, const Token &,
                            StringRef FileName, bool IsAngled, CharSourceRange,
                            OptionalFileEntryRef File, StringRef, StringRef,
                            const Module *,
                            SrcMgr::CharacteristicKind) override {
      add(FileName);
      if (A)
        A->include(HashLoc, FileName, IsAngled, File);
    }
    void HasInclude(SourceLocation, StringRef FileName, bool,
                    OptionalFileEntryRef, SrcMgr::CharacteristicKind) override {
      add(FileName);
    }
    void FileChanged(SourceLocation Loc, FileChangeReason Reason,
                     SrcMgr::CharacteristicKind, FileID) override {
      if (!A)
        return;
      if (Reason == EnterFile)
        A->enterFile(Loc);
      else if (Reason == ExitFile)
        A->exitFile();
    }
    void MacroDefined(const Token &Name, const MacroDirective *MD) override {
      if (A)
        A->defined(Name.getIdentifierInfo()->getName(),
                   MD ? MD->getMacroInfo() : nullptr);
    }
    void MacroUndefined(const Token &Name, const MacroDefinition &MD,
                        const MacroDirective *) override {
      if (A)
        A->undefined(Name.getIdentifierInfo()->getName(), bool(MD));
    }
    void Ifdef(SourceLocation, const Token &Name,
               const MacroDefinition &MD) override {
      tested(Name, MD);
    }
    void Ifndef(SourceLocation, const Token &Name,
                const MacroDefinition &MD) override {
      tested(Name, MD);
    }
    void Elifdef(SourceLocation, const Token &Name,
                 const MacroDefinition &MD) override {
      tested(Name, MD);
    }
    void Elifndef(SourceLocation, const Token &Name,
                  const MacroDefinition &MD) override {
      tested(Name, MD);
    }
    void Defined(const Token &Name, const MacroDefinition &MD,
                 SourceRange) override {
      tested(Name, MD);
    }
    void If(SourceLocation, SourceRange Condition,
            ConditionValueKind) override {
      if (A)
        A->ifCondition(Condition);
    }
    void Elif(SourceLocation, SourceRange Condition, ConditionValueKind,
              SourceLocation) override {
      if (A)
        A->ifCondition(Condition);
    }

  private:
    void tested(const Token &Name, const MacroDefinition &MD) {
      if (!A || !Name.getIdentifierInfo())
        return;
      if (!MD)
        A->testedUndefined(Name.getIdentifierInfo()->getName());
      A->testedInLibrary(Name.getIdentifierInfo()->getName());
    }
    void add(StringRef FileName) {
      std::string Root = includeNameRoot(FileName);
      // A name the manifest's one-line list could not hold: record it as
      // ".", which every directory has, so that every directory matters.
      if (Root.find_first_of(" \n\r") != std::string::npos)
        Root = ".";
      if (!Root.empty())
        Names.insert(Root);
    }
    std::set<std::string> &Names;
    AbsorptionRecorder *A;
  };
  bool FindAbsorbed;
  AbsorptionRecorder Absorption;
};

std::string hex(llvm::ArrayRef<uint8_t> Bytes) {
  return llvm::toHex(Bytes, /*LowerCase=*/true);
}

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

std::vector<OwnedFile> listOwned(llvm::StringRef Dir) {
  std::vector<OwnedFile> Files;
  std::error_code EC;
  for (fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    llvm::StringRef Name = llvm::sys::path::filename(It->path());
    if (!Name.startswith("libtorch-") && !Name.startswith("preamble-"))
      continue;
    struct stat St;
    if (::lstat(It->path().c_str(), &St) != 0)
      continue;
    // The cache writes only regular files, and LockFileManager's locks are
    // symbolic links; anything else was not made here.
    bool IsLockLink = S_ISLNK(St.st_mode) && Name.endswith(".lock");
    if (!S_ISREG(St.st_mode) && !IsLockLink)
      continue;
    OwnedFile F;
    F.Path = It->path();
    F.Size = St.st_size;
    F.MTimeSeconds = St.st_mtime;
    if (Name.contains(".tmp-") || Name.endswith(".lock") ||
        Name.contains(".lock-")) {
      F.IsLeftover = true;
    } else if (Name == EvictionLogName) {
      F.IsRecord = true;
    } else if (Name.endswith(".pch")) {
      F.Stem = Name.drop_back(4).str();
    } else if (Name.endswith(".deps")) {
      F.Stem = Name.drop_back(5).str();
      F.IsManifest = true;
    } else if (Name.endswith(".names")) {
      F.Stem = Name.str(); // a hint of its own; evicted like an entry
      F.IsManifest = true;
    } else {
      continue;
    }
    Files.push_back(std::move(F));
  }
  return Files;
}

} // namespace

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
