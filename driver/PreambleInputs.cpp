#include "driver/PreambleInputs.h"
#include "driver/LibTorchPrefix.h"
#include "frontend/AstQueries.h"

#include "clang/Basic/CharInfo.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Lex/HeaderSearch.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <map>

using namespace clang;

namespace tma::preamble {

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

class RecordInputs::Recorder : public PPCallbacks {
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

RecordInputs::RecordInputs(bool FindAbsorbed)
    : FindAbsorbed(FindAbsorbed),
      Absorption(std::make_unique<AbsorptionRecorder>()) {}

RecordInputs::~RecordInputs() = default;

void RecordInputs::BeforeExecute(CompilerInstance &CI) {
  Absorption->attach(CI);
}

void RecordInputs::AfterExecute(CompilerInstance &CI) {
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
    Absorbed = Absorption->absorbed();
}

std::unique_ptr<PPCallbacks> RecordInputs::createPPCallbacks() {
  return std::make_unique<Recorder>(Names, FindAbsorbed ? Absorption.get()
                                                        : nullptr);
}

bool RecordInputs::shouldSkipFunctionBody(Decl *D) {
  return !keepsFunctionBody(D);
}

} // namespace tma::preamble
