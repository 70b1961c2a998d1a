#include "driver/Toolchain.h"
#include "verify/Harness.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <set>

#ifndef TMA_CLANG_RESOURCE_DIR
#define TMA_CLANG_RESOURCE_DIR "/usr/lib/llvm-16/lib/clang/16"
#endif

namespace tma {

namespace {

bool exists(const std::string &Path) { return llvm::sys::fs::exists(Path); }

/// A LibTorch root holds include/torch/csrc/api/include/torch/torch.h (a
/// LibTorch zip, a CMake install, PyTorch's torch/ directory).
std::optional<LibTorchHeaders> fromRoot(const std::string &Root,
                                        const std::string &Where) {
  std::string Include = Root + "/include";
  std::string Api = Include + "/torch/csrc/api/include";
  if (!exists(Api + "/torch/torch.h"))
    return std::nullopt;
  return LibTorchHeaders{{Include, Api},
                         {},
                         Where + " (" + Root + ")",
                         verify::readTorchVersion(Api)};
}

/// $Torch_DIR points at <root>/share/cmake/Torch (or lib/cmake/Torch).
std::optional<LibTorchHeaders> fromCMakeDir(const std::string &Dir,
                                            const std::string &Where) {
  llvm::SmallString<256> P(Dir);
  for (int Up = 0; Up < 4 && !P.empty(); ++Up) {
    if (auto Found = fromRoot(std::string(P), Where))
      return Found;
    llvm::sys::path::remove_filename(P);
  }
  return std::nullopt;
}

std::optional<std::string> pythonTorchRoot() {
  auto Python = llvm::sys::findProgramByName("python3");
  if (!Python)
    return std::nullopt;
  llvm::SmallString<128> Out;
  if (llvm::sys::fs::createTemporaryFile("tma-python", "txt", Out))
    return std::nullopt;
  std::string OutPath(Out);
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt,
                                                llvm::StringRef(OutPath),
                                                llvm::StringRef("")};
  llvm::StringRef Args[] = {*Python, "-c",
                            "import os, torch; "
                            "print(os.path.dirname(torch.__file__))"};
  int RC = llvm::sys::ExecuteAndWait(*Python, Args, std::nullopt, Redirects,
                                     /*SecondsToWait=*/20);
  auto Buf = llvm::MemoryBuffer::getFile(OutPath);
  llvm::sys::fs::remove(OutPath);
  if (RC != 0 || !Buf)
    return std::nullopt;
  return (*Buf)->getBuffer().trim().str();
}

/// "3.11" -> {3, 11}, for picking the newest Python.
std::pair<unsigned, unsigned> pythonVersion(llvm::StringRef Name) {
  unsigned Major = 0, Minor = 0;
  Name.consume_front("python");
  auto [MajorText, MinorText] = Name.split('.');
  if (MajorText.getAsInteger(10, Major) ||
      MinorText.take_while(llvm::isDigit).getAsInteger(10, Minor))
    return {0, 0};
  return {Major, Minor};
}

/// The newest <Dir>/python3.N holding Python.h.
std::string newestPythonIn(const std::string &Dir) {
  std::string Best;
  std::pair<unsigned, unsigned> BestVersion{0, 0};
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    llvm::StringRef Name = llvm::sys::path::filename(It->path());
    if (!Name.startswith("python3") || !exists(It->path() + "/Python.h"))
      continue;
    auto Version = pythonVersion(Name);
    if (Best.empty() || Version > BestVersion) {
      Best = It->path();
      BestVersion = Version;
    }
  }
  return Best;
}

/// Python.h for torch/extension.h. A PyTorch installed in
/// <prefix>/lib/python3.N/site-packages/torch (TorchRoot, or a directory
/// under it such as $Torch_DIR's share/cmake/Torch) belongs to the Python of
/// <prefix>/include/python3.N; otherwise (Debian's libtorch-dev, a LibTorch
/// zip) the newest Python under /usr/local/include, then /usr/include.
std::string pythonIncludeFor(const std::string &TorchRoot) {
  llvm::SmallString<256> P(TorchRoot);
  for (int Up = 0; Up < 8 && !P.empty(); ++Up) {
    llvm::sys::path::remove_filename(P);
    llvm::StringRef Name = llvm::sys::path::filename(P);
    if (Name.startswith("python3") &&
        llvm::sys::path::filename(llvm::sys::path::parent_path(P))
            .startswith("lib")) {
      llvm::SmallString<256> Prefix(P);
      llvm::sys::path::remove_filename(Prefix); // lib
      llvm::sys::path::remove_filename(Prefix); // <prefix>
      std::string Include = (Prefix + "/include/" + Name).str();
      if (exists(Include + "/Python.h"))
        return Include;
      break;
    }
  }
  for (const char *Dir : {"/usr/local/include", "/usr/include"}) {
    std::string Found = newestPythonIn(Dir);
    if (!Found.empty())
      return Found;
  }
  return "";
}

LibTorchHeaders withExtensionDirs(LibTorchHeaders H, const std::string &Root) {
  std::string Python = pythonIncludeFor(Root);
  if (!Python.empty())
    H.ExtensionDirs.push_back(Python);
  return H;
}

} // namespace

std::string missingHeaderHint(const std::string &Header) {
  if (Header == "Python.h" || Header == "pyconfig.h")
    return "torch/extension.h needs Python's development headers "
           "(Python.h): install python3-dev (Debian, Ubuntu: sudo apt install "
           "python3-dev), or give their directory after -- "
           "(-isystem $(python3 -c \"import sysconfig; "
           "print(sysconfig.get_paths()['include'])\"))";
  if (llvm::StringRef(Header).startswith("pybind11/"))
    return "torch/extension.h needs pybind11's headers: install "
           "pybind11-dev (Debian, Ubuntu: sudo apt install pybind11-dev), or "
           "give their directory after -- (-isystem $(python3 -m pybind11 "
           "--includes))";
  return "";
}

std::optional<LibTorchHeaders> findLibTorchHeaders() {
  if (auto Dir = llvm::sys::Process::GetEnv("Torch_DIR"))
    if (auto Found = fromCMakeDir(*Dir, "$Torch_DIR"))
      return withExtensionDirs(*Found, *Dir);
  if (auto Prefixes = llvm::sys::Process::GetEnv("CMAKE_PREFIX_PATH")) {
    llvm::SmallVector<llvm::StringRef, 4> Parts;
    llvm::StringRef(*Prefixes).split(Parts, ':', -1, false);
    for (llvm::StringRef P : Parts)
      if (auto Found = fromRoot(P.str(), "$CMAKE_PREFIX_PATH"))
        return withExtensionDirs(*Found, P.str());
  }
  // Debian's libtorch-dev.
  if (exists("/usr/include/torch/csrc/api/include/torch/torch.h"))
    // /usr/include is already a system directory; naming it again with
    // -isystem would reorder it before libstdc++'s and break #include_next.
    return withExtensionDirs(
        LibTorchHeaders{
            {"/usr/include/torch/csrc/api/include"},
            {},
            "Debian libtorch-dev (/usr/include)",
            verify::readTorchVersion("/usr/include/torch/csrc/api/include")},
        "");
  if (auto Root = pythonTorchRoot())
    if (auto Found = fromRoot(*Root, "installed PyTorch"))
      return withExtensionDirs(*Found, *Root);
  return std::nullopt;
}

std::vector<std::string> userIncludeDirs(const std::vector<std::string> &Args,
                                         const std::string &Directory) {
  // Longer spellings first: "-isystem-after" also starts with "-isystem".
  // The single-dash flags take their directory joined ("-Idir") or as the
  // next argument; the long ones after '=' or as the next argument.
  static const char *const Joined[] = {"-isystem-after", "-cxx-isystem",
                                       "-isystem",       "-idirafter",
                                       "-iquote",        "-I"};
  static const char *const Long[] = {"--include-directory-after",
                                     "--include-directory"};
  std::vector<std::string> Dirs;
  auto Add = [&](llvm::StringRef Dir) {
    if (Dir.empty() || Dir == "-") // "-I-" splits quote and angle paths
      return;
    llvm::SmallString<256> P(Dir);
    if (!llvm::sys::path::is_absolute(P)) {
      llvm::SmallString<256> Base(Directory);
      if (Base.empty() || !llvm::sys::path::is_absolute(Base))
        llvm::sys::fs::make_absolute(Base);
      llvm::sys::path::append(Base, P);
      P = Base;
    }
    llvm::sys::path::remove_dots(P, /*remove_dot_dot=*/true);
    Dirs.push_back(std::string(P));
  };
  for (size_t K = 0; K < Args.size(); ++K) {
    llvm::StringRef A = Args[K];
    if (A == "--")
      break; // input files follow (an interpolated command's "-- <file>")
    bool Matched = false;
    for (llvm::StringRef Flag : Long) {
      if (A == Flag) {
        if (K + 1 < Args.size())
          Add(Args[++K]);
        Matched = true;
      } else if (A.startswith(Flag) && A.drop_front(Flag.size()).startswith("=")) {
        Add(A.drop_front(Flag.size() + 1));
        Matched = true;
      }
      if (Matched)
        break;
    }
    if (Matched)
      continue;
    for (llvm::StringRef Flag : Joined) {
      if (!A.startswith(Flag))
        continue;
      if (A == Flag) {
        if (K + 1 < Args.size())
          Add(Args[++K]);
      } else {
        Add(A.drop_front(Flag.size()));
      }
      break;
    }
  }
  // As clang reads them: ':'-separated, an empty entry is the directory
  // the compiler runs in.
  for (const char *Variable : {"CPATH", "CPLUS_INCLUDE_PATH"})
    if (auto Value = llvm::sys::Process::GetEnv(Variable)) {
      llvm::SmallVector<llvm::StringRef, 4> Parts;
      llvm::StringRef(*Value).split(Parts, ':', -1, /*KeepEmpty=*/true);
      for (llvm::StringRef Part : Parts)
        Add(Part.empty() ? llvm::StringRef(".") : Part);
    }
  return Dirs;
}

namespace {

/// Path as a file on disk, links resolved; "" when there is none.
std::string realFile(const llvm::Twine &Path) {
  llvm::SmallString<256> Real;
  if (llvm::sys::fs::real_path(Path, Real) || !llvm::sys::fs::is_regular_file(Real))
    return "";
  return std::string(Real);
}

/// The ATen/ATen.h that Default's directories bring: in one of them, or in
/// the include root above LibTorch's API directory (Debian's /usr/include
/// is a system directory the flags never name).
std::set<std::string> defaultATenHeaders(const LibTorchHeaders &Default) {
  std::set<std::string> Found;
  for (llvm::StringRef Dir : Default.IncludeDirs) {
    std::string Here = realFile(Dir + "/ATen/ATen.h");
    if (!Here.empty())
      Found.insert(Here);
    llvm::StringRef Root = Dir.rtrim('/');
    if (Root.consume_back("/torch/csrc/api/include")) {
      std::string Above = realFile(Root + "/ATen/ATen.h");
      if (!Above.empty())
        Found.insert(Above);
    }
  }
  return Found;
}

} // namespace

bool commandReachesLibTorch(const std::vector<std::string> &Args,
                            const std::string &Directory,
                            const LibTorchHeaders *Default) {
  std::optional<std::set<std::string>> DefaultATen;
  for (const std::string &Dir : userIncludeDirs(Args, Directory)) {
    if (!realFile(Dir + "/torch/torch.h").empty())
      return true;
    std::string ATen = realFile(Dir + "/ATen/ATen.h");
    if (ATen.empty())
      continue;
    if (!Default)
      return true;
    if (!DefaultATen)
      DefaultATen = defaultATenHeaders(*Default);
    if (!DefaultATen->count(ATen))
      return true;
  }
  return false;
}

std::vector<std::string> libTorchFlags(const LibTorchHeaders &Default) {
  std::vector<std::string> Flags;
  for (const std::string &Dir : Default.IncludeDirs)
    Flags.push_back("-isystem" + Dir);
  for (const std::string &Dir : Default.ExtensionDirs)
    Flags.push_back("-idirafter" + Dir);
  return Flags;
}

std::string clangResourceDir() {
  if (exists(TMA_CLANG_RESOURCE_DIR "/include/stddef.h"))
    return TMA_CLANG_RESOURCE_DIR;
  return "";
}

} // namespace tma
