// Finding LibTorch, compiling the harness, and running it.
//
// Discovery looks for files, never runs CMake: find_package(Torch) would
// cost seconds and pull in Caffe2's dependency checks, while all the harness
// needs is two include directories, a library directory and a handful of
// library names. Every place where LibTorch may live is reduced to a prefix
// that holds include/torch/csrc/api/include/torch/torch.h and a directory
// with libtorch.so; Torch_DIR and CMAKE_PREFIX_PATH entries point somewhere
// below such a prefix, so we walk up from them.
//
// Asking python3 for an installed PyTorch is the last resort because it is
// slow (importing torch takes seconds) and may be absent or broken; it runs
// under a timeout and any failure just means "not found here".
//
// The compile runs in the temporary directory with relative file names so
// that ccache (used when installed) sees identical command lines and
// preprocessed text across runs and can return a cached object: the
// LibTorch headers make every compile cost about half a minute.
#include "verify/Harness.h"
#include "verify/Process.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>

namespace tma::verify {

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

std::string join(llvm::StringRef A, llvm::StringRef B) {
  llvm::SmallString<256> P(A);
  path::append(P, B);
  return std::string(P);
}

std::optional<std::string> readFile(llvm::StringRef Path) {
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buf)
    return std::nullopt;
  return (*Buf)->getBuffer().str();
}

/// "_GLIBCXX_USE_CXX11_ABI=N" from a TorchConfig.cmake, if it names one.
std::string abiFromTorchConfig(llvm::StringRef ConfigDir) {
  auto Text = readFile(join(ConfigDir, "TorchConfig.cmake"));
  if (!Text)
    return "";
  llvm::StringRef Key = "_GLIBCXX_USE_CXX11_ABI=";
  size_t Pos = llvm::StringRef(*Text).find(Key);
  if (Pos == llvm::StringRef::npos || Pos + Key.size() >= Text->size())
    return "";
  char Digit = (*Text)[Pos + Key.size()];
  if (Digit != '0' && Digit != '1')
    return "";
  return Key.str() + Digit;
}

const char *const MultiarchDirs[] = {"lib", "lib/x86_64-linux-gnu",
                                     "lib/aarch64-linux-gnu", "lib64"};

/// The install under Prefix, or a sentence saying why there is none.
std::optional<LibTorchInstall> installAt(llvm::StringRef Prefix,
                                         llvm::StringRef Origin,
                                         std::string &WhyNot) {
  std::string Include = join(Prefix, "include");
  std::string ApiInclude = join(Include, "torch/csrc/api/include");
  if (!fs::exists(join(ApiInclude, "torch/torch.h"))) {
    WhyNot = "no " + join(ApiInclude, "torch/torch.h");
    return std::nullopt;
  }
  std::string LibDir;
  for (const char *Sub : MultiarchDirs) {
    std::string Candidate = join(Prefix, Sub);
    if (fs::exists(join(Candidate, "libtorch.so"))) {
      LibDir = Candidate;
      break;
    }
  }
  if (LibDir.empty()) {
    WhyNot = "headers under " + Include + " but no libtorch.so in " +
             join(Prefix, "lib") + " or its multiarch directories";
    return std::nullopt;
  }
  LibTorchInstall I;
  // Never pass /usr/include as -isystem: it reorders the system directories
  // and breaks libstdc++'s #include_next <stdlib.h>.
  if (Include != "/usr/include" && Include != "/usr/local/include")
    I.IncludeDirs.push_back(Include);
  I.IncludeDirs.push_back(ApiInclude);
  I.LibDirs.push_back(LibDir);
  I.Libs.push_back("torch");
  if (fs::exists(join(LibDir, "libtorch_cpu.so")))
    I.Libs.push_back("torch_cpu");
  I.HasCUDA = fs::exists(join(LibDir, "libtorch_cuda.so"));
  if (I.HasCUDA) {
    I.Libs.push_back("torch_cuda");
    if (fs::exists(join(LibDir, "libc10_cuda.so")))
      I.Libs.push_back("c10_cuda");
  }
  I.Libs.push_back("c10");
  I.Version = readTorchVersion(ApiInclude);
  for (const std::string &ConfigDir :
       {join(Prefix, "share/cmake/Torch"), join(LibDir, "cmake/Torch")}) {
    std::string Abi = abiFromTorchConfig(ConfigDir);
    if (!Abi.empty()) {
      I.Defines.push_back(Abi);
      break;
    }
  }
  I.Description = (Origin + ": LibTorch " +
                   (I.Version.empty() ? std::string("(version unknown)") : I.Version) +
                   " at " + Prefix + ", libraries in " + LibDir +
                   (I.HasCUDA ? ", with CUDA" : ", CPU only"))
                      .str();
  return I;
}

/// Walks up from Dir (a Torch_DIR or a CMAKE_PREFIX_PATH entry) to the first
/// directory that is a LibTorch prefix.
std::optional<LibTorchInstall> installAbove(llvm::StringRef Dir,
                                            llvm::StringRef Origin,
                                            std::string &WhyNot) {
  llvm::SmallString<256> P(Dir);
  fs::make_absolute(P);
  path::remove_dots(P, /*remove_dot_dot=*/true);
  std::string FirstWhy;
  for (int Level = 0; Level < 6 && !P.empty(); ++Level) {
    std::string Why;
    if (auto I = installAt(P, Origin, Why))
      return I;
    if (FirstWhy.empty())
      FirstWhy = Why;
    llvm::StringRef Parent = path::parent_path(P);
    if (Parent == P || Parent.empty())
      break;
    P = Parent;
  }
  WhyNot = "no LibTorch prefix at or above " + Dir.str() + " (" + FirstWhy + ")";
  return std::nullopt;
}

/// CUDA runtime headers, needed by <c10/cuda/...> for the memory statistics.
void addCudaHeaders(LibTorchInstall &I, llvm::StringRef ExtraDir) {
  std::vector<std::string> Candidates;
  if (!ExtraDir.empty())
    Candidates.push_back(ExtraDir.str());
  for (const char *Env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *V = std::getenv(Env))
      Candidates.push_back(join(V, "include"));
  Candidates.push_back("/usr/local/cuda/include");
  for (const std::string &C : Candidates)
    if (fs::exists(join(C, "cuda_runtime_api.h"))) {
      I.IncludeDirs.push_back(C);
      break;
    }
  I.Defines.push_back("TMA_PROBE_HAS_CUDA=1");
}

/// Runs Args (Args[0] found on PATH if not absolute) in Dir under a
/// supervisor (Process.h), with stdout and stderr captured in files there.
/// The command's TMPDIR is Dir too: what a killed compiler leaves there
/// (its cc*.s files) goes with the directory.
ProcessResult runCaptured(std::vector<std::string> Args, llvm::StringRef Dir,
                          llvm::StringRef Tag, unsigned SecondsToWait,
                          llvm::StringRef CleanupDir) {
  if (!Args.empty() && !path::is_absolute(Args[0]))
    if (auto Found = llvm::sys::findProgramByName(Args[0]))
      Args[0] = *Found;
  return runInGroup(Args, Dir, Tag, SecondsToWait, CleanupDir, {"TMPDIR=" + Dir.str()});
}

/// What went wrong with a command that did not exit 0, as a phrase.
std::string failure(const ProcessResult &R, unsigned SecondsToWait) {
  if (R.Interrupted)
    return "interrupted by signal " + std::to_string(R.Interrupted);
  if (R.TimedOut)
    return "timed out after " + std::to_string(SecondsToWait) + " s";
  if (!R.ErrMsg.empty())
    return R.ErrMsg;
  if (R.Signal)
    return "killed by signal " + std::to_string(R.Signal);
  return "exited with status " + std::to_string(R.ReturnCode);
}

std::string makeTempDir(const char *Prefix) {
  llvm::SmallString<256> Base;
  path::system_temp_directory(/*ErasedOnReboot=*/true, Base);
  path::append(Base, Prefix);
  llvm::SmallString<256> Result;
  if (fs::createUniqueDirectory(Base, Result))
    return "";
  return std::string(Result);
}

std::string commandLine(const std::vector<std::string> &Args) {
  std::string S;
  for (const std::string &A : Args) {
    if (!S.empty())
      S += ' ';
    bool Plain = !A.empty() && A.find_first_of(" \t\"'$\\") == std::string::npos;
    S += Plain ? A : "'" + A + "'";
  }
  return S;
}

/// The compiler's first error lines (or the last lines when there is no
/// "error:", as for some linker failures).
std::string firstErrors(llvm::StringRef Output) {
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Output.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  size_t Start = Lines.size();
  for (size_t I = 0; I < Lines.size(); ++I)
    if (Lines[I].contains("error:") || Lines[I].contains("undefined reference")) {
      Start = I;
      break;
    }
  if (Start == Lines.size())
    Start = Lines.size() > 12 ? Lines.size() - 12 : 0;
  std::string S;
  for (size_t I = Start; I < Lines.size() && I < Start + 12; ++I)
    S += "  " + Lines[I].str() + "\n";
  return S;
}

/// The compiler command, split: $CXX may be "ccache g++" or "g++-12 -m64".
std::vector<std::string> compilerCommand() {
  std::vector<std::string> Cmd;
  if (const char *CXX = std::getenv("CXX"); CXX && *CXX) {
    llvm::SmallVector<llvm::StringRef, 4> Parts;
    llvm::StringRef(CXX).split(Parts, ' ', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef P : Parts)
      Cmd.push_back(P.str());
  } else {
    for (const char *Name : {"g++", "c++", "clang++"})
      if (llvm::sys::findProgramByName(Name)) {
        Cmd.push_back(Name);
        break;
      }
  }
  if (Cmd.empty())
    return Cmd;
  // ExecuteAndWait does not search PATH.
  if (!path::is_absolute(Cmd[0]))
    if (auto Found = llvm::sys::findProgramByName(Cmd[0]))
      Cmd[0] = *Found;
  bool HasCcache = path::filename(Cmd[0]).startswith("ccache");
  if (!HasCcache && !std::getenv("TMA_NO_CCACHE"))
    if (auto Ccache = llvm::sys::findProgramByName("ccache"))
      Cmd.insert(Cmd.begin(), *Ccache);
  return Cmd;
}

} // namespace

std::string readTorchVersion(llvm::StringRef ApiInclude) {
  auto Text = readFile(join(ApiInclude, "torch/version.h"));
  if (!Text)
    return "";
  llvm::StringRef T(*Text);
  size_t Pos = T.find("#define TORCH_VERSION ");
  if (Pos == llvm::StringRef::npos)
    Pos = T.find("#define TORCH_VERSION\t");
  if (Pos == llvm::StringRef::npos)
    Pos = T.find("#define TORCH_VERSION \\");
  if (Pos == llvm::StringRef::npos)
    return "";
  T = T.drop_front(Pos);
  size_t Open = T.find('"');
  if (Open == llvm::StringRef::npos)
    return "";
  size_t Close = T.find('"', Open + 1);
  if (Close == llvm::StringRef::npos)
    return "";
  return T.slice(Open + 1, Close).str();
}

namespace detail {

LibTorchSearch searchFromEnvironment() {
  LibTorchSearch S;
  if (const char *D = std::getenv("Torch_DIR"))
    S.TorchDir = D;
  if (const char *P = std::getenv("CMAKE_PREFIX_PATH")) {
    llvm::SmallVector<llvm::StringRef, 4> Parts;
    llvm::StringRef(P).split(Parts, ':', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef Part : Parts)
      S.PrefixPath.push_back(Part.str());
  }
  S.SystemPrefixes = {"/usr"};
  if (auto Python = llvm::sys::findProgramByName("python3"))
    S.Python = *Python;
  return S;
}

llvm::Expected<LibTorchInstall> findLibTorchWith(const LibTorchSearch &S,
                                                 bool PreferCUDA) {
  std::vector<LibTorchInstall> Found;
  std::vector<std::string> Tried;
  auto Consider = [&](std::optional<LibTorchInstall> I, const std::string &What,
                      const std::string &WhyNot) {
    if (I)
      Found.push_back(std::move(*I));
    else
      Tried.push_back(What + ": " + WhyNot);
  };
  // With PreferCUDA keep looking until a CUDA install turns up.
  auto Done = [&] {
    if (Found.empty())
      return false;
    if (!PreferCUDA)
      return true;
    for (const LibTorchInstall &I : Found)
      if (I.HasCUDA)
        return true;
    return false;
  };

  std::string Why;
  std::string TorchDirProblem; // an explicit setting we could not use
  if (!S.TorchDir.empty()) {
    auto I = installAbove(S.TorchDir, "Torch_DIR", Why);
    if (I && I->HasCUDA)
      addCudaHeaders(*I, "");
    if (!I)
      TorchDirProblem = "$Torch_DIR=" + S.TorchDir + " was ignored: " + Why;
    Consider(std::move(I), "$Torch_DIR=" + S.TorchDir, Why);
  } else {
    Tried.push_back("$Torch_DIR: not set");
  }
  for (const std::string &P : S.PrefixPath) {
    if (Done())
      break;
    auto I = installAbove(P, "CMAKE_PREFIX_PATH", Why);
    if (I && I->HasCUDA)
      addCudaHeaders(*I, "");
    Consider(std::move(I), "$CMAKE_PREFIX_PATH entry " + P, Why);
  }
  if (S.PrefixPath.empty())
    Tried.push_back("$CMAKE_PREFIX_PATH: not set");
  for (const std::string &P : S.SystemPrefixes) {
    if (Done())
      break;
    auto I = installAt(P, "system (Debian libtorch-dev layout)", Why);
    if (I && I->HasCUDA)
      addCudaHeaders(*I, "");
    Consider(std::move(I), P, Why);
  }

  if (!Done() && !S.Python.empty()) {
    // One line each: torch's directory, the C++11 ABI flag, the CUDA
    // version it was built with, and the pip CUDA runtime's directory.
    static const char *Snippet =
        "import os, torch\n"
        "print(os.path.dirname(torch.__file__))\n"
        "print(int(getattr(torch._C, '_GLIBCXX_USE_CXX11_ABI', True)))\n"
        "print(torch.version.cuda or '')\n"
        "try:\n"
        "    import nvidia.cuda_runtime as r\n"
        "    print(list(r.__path__)[0])\n"
        "except Exception:\n"
        "    print('')\n";
    std::string Dir = makeTempDir("tma-python");
    ProcessResult R;
    if (!Dir.empty())
      R = runCaptured({S.Python, "-c", Snippet}, Dir, "python",
                      S.PythonTimeoutSeconds, Dir);
    if (!Dir.empty())
      fs::remove_directories(Dir);
    llvm::SmallVector<llvm::StringRef, 4> Lines;
    llvm::StringRef(R.Stdout).split(Lines, '\n', -1, /*KeepEmpty=*/true);
    if (Dir.empty()) {
      Tried.push_back(S.Python + ": could not create a temporary directory");
    } else if (R.TimedOut) {
      Tried.push_back(S.Python + ": 'import torch' did not finish within " +
                      std::to_string(S.PythonTimeoutSeconds) + " s");
    } else if (!R.ErrMsg.empty()) {
      Tried.push_back(S.Python + ": " + R.ErrMsg);
    } else if (R.ReturnCode != 0 || Lines.empty() || Lines[0].trim().empty()) {
      llvm::StringRef Err = llvm::StringRef(R.Stderr).trim();
      llvm::StringRef Last = Err.substr(Err.rfind('\n') + 1);
      Tried.push_back(S.Python + ": " +
                      (Last.empty() ? "no answer" : Last.str()));
    } else {
      std::string TorchDir = Lines[0].trim().str();
      auto I = installAt(TorchDir, "PyTorch (" + S.Python + ")", Why);
      if (I) {
        if (Lines.size() > 1 && (Lines[1].trim() == "0" || Lines[1].trim() == "1")) {
          llvm::erase_if(I->Defines, [](const std::string &D) {
            return llvm::StringRef(D).startswith("_GLIBCXX_USE_CXX11_ABI=");
          });
          I->Defines.push_back("_GLIBCXX_USE_CXX11_ABI=" + Lines[1].trim().str());
        }
        if (I->HasCUDA)
          addCudaHeaders(*I, Lines.size() > 3 && !Lines[3].trim().empty()
                                 ? join(Lines[3].trim(), "include")
                                 : "");
      }
      Consider(std::move(I), "PyTorch at " + TorchDir, Why);
    }
  } else if (S.Python.empty()) {
    Tried.push_back("python3: not found");
  }

  if (Found.empty()) {
    std::string Msg = "no LibTorch found. Looked at:\n";
    for (const std::string &T : Tried)
      Msg += "  " + T + "\n";
    Msg += "Install Debian's libtorch-dev, set Torch_DIR to <libtorch>/share/cmake/Torch "
           "(or CMAKE_PREFIX_PATH to <libtorch>), or install PyTorch for python3.";
    return makeError(Msg);
  }
  LibTorchInstall *Chosen = &Found.front();
  if (PreferCUDA)
    for (LibTorchInstall &I : Found)
      if (I.HasCUDA) {
        Chosen = &I;
        break;
      }
  if (!TorchDirProblem.empty())
    Chosen->Description += " (" + TorchDirProblem + ")";
  return std::move(*Chosen);
}

} // namespace detail

llvm::Expected<LibTorchInstall> findLibTorch(bool PreferCUDA) {
  return detail::findLibTorchWith(detail::searchFromEnvironment(), PreferCUDA);
}

llvm::Expected<std::string> buildHarness(const std::string &HarnessSource,
                                         const LibTorchInstall &Install,
                                         std::string &Log) {
  std::vector<std::string> Compiler = compilerCommand();
  if (Compiler.empty())
    return makeError("no C++ compiler: set $CXX or install g++");
  std::string Dir = makeTempDir("tma-verify");
  if (Dir.empty())
    return makeError("could not create a temporary directory for the harness");
  std::string Source = join(Dir, "harness.cpp");
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Source, EC);
    if (EC)
      return makeError("cannot write " + Source + ": " + EC.message());
    OS << HarnessSource;
  }
  Log += "harness directory: " + Dir + "\n";

  // Compile with relative names from inside Dir (see the file comment).
  std::vector<std::string> Compile(Compiler.begin(), Compiler.end());
  for (const char *Flag : {"-std=c++17", "-O0", "-w", "-pthread"})
    Compile.push_back(Flag);
  for (const std::string &D : Install.Defines)
    Compile.push_back("-D" + D);
  Compile.insert(Compile.end(), Install.UserFlags.begin(), Install.UserFlags.end());
  for (const std::string &I : Install.IncludeDirs) {
    Compile.push_back("-isystem");
    Compile.push_back(I);
  }
  for (const char *Arg : {"-c", "harness.cpp", "-o", "harness.o"})
    Compile.push_back(Arg);
  Log += "compile (in " + Dir + "): " + commandLine(Compile) + "\n";
  ProcessResult C = runCaptured(Compile, Dir, "compile", 1800, Dir);
  Log += C.Stdout + C.Stderr;
  if (C.Interrupted) {
    fs::remove_directories(Dir);
    return makeError("interrupted by signal " + std::to_string(C.Interrupted) +
                     " while compiling the harness");
  }
  if (!C.ErrMsg.empty() || C.TimedOut || C.Signal)
    return makeError("could not run the compiler (" + Compiler.back() + "): " +
                     failure(C, 1800) + "; harness kept in " + Dir);
  if (C.ReturnCode != 0)
    return makeError("the harness did not compile (" + Source + "):\n" +
                     firstErrors(C.Stderr + C.Stdout));

  std::string Binary = join(Dir, "harness");
  std::vector<std::string> Link(Compiler.begin(), Compiler.end());
  if (path::filename(Link[0]).startswith("ccache"))
    Link.erase(Link.begin()); // ccache does not cache links
  Link.push_back(join(Dir, "harness.o"));
  Link.push_back("-o");
  Link.push_back(Binary);
  for (const std::string &L : Install.LibDirs) {
    Link.push_back("-L" + L);
    Link.push_back("-Wl,-rpath," + L);
  }
  // CUDA registers itself from static initialisers in libtorch_cuda:
  // --as-needed would drop it because nothing references it by name.
  Link.push_back("-Wl,--no-as-needed");
  for (const std::string &L : Install.Libs)
    Link.push_back("-l" + L);
  Link.push_back("-Wl,--as-needed");
  Link.push_back("-pthread");
  Log += "link: " + commandLine(Link) + "\n";
  ProcessResult L = runCaptured(Link, Dir, "link", 600, Dir);
  Log += L.Stdout + L.Stderr;
  if (L.Interrupted) {
    fs::remove_directories(Dir);
    return makeError("interrupted by signal " + std::to_string(L.Interrupted) +
                     " while linking the harness");
  }
  if (!L.ErrMsg.empty() || L.TimedOut || L.Signal || L.ReturnCode != 0)
    return makeError("the harness did not link (" + Source + "):\n" +
                     (L.ReturnCode > 0 ? firstErrors(L.Stderr + L.Stdout) : failure(L, 600)));
  return Binary;
}

static std::vector<std::string> runArguments(const std::vector<std::string> &Args,
                                             const RunLimits &Limits) {
  std::vector<std::string> Out(Args);
  if (Limits.FunctionSeconds) {
    Out.push_back("--function-timeout");
    Out.push_back(std::to_string(Limits.FunctionSeconds));
  }
  if (Limits.MaxLiveBytes > 0) {
    Out.push_back("--max-live-bytes");
    Out.push_back(std::to_string(Limits.MaxLiveBytes));
  }
  return Out;
}

static unsigned backstopSeconds(const RunLimits &Limits) {
  if (!Limits.FunctionSeconds)
    return 0;
  // Each function may use its whole limit (a meta run and its CPU rerun
  // share it); the harness kills it a moment later. Past that, the harness
  // itself is stuck.
  uint64_t S = uint64_t(Limits.Functions ? Limits.Functions : 1) * (Limits.FunctionSeconds + 2) + 10;
  return S > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<unsigned>(S);
}

llvm::Expected<std::string> runHarness(const std::string &Executable,
                                       const std::vector<std::string> &Args,
                                       const RunLimits &Limits, std::string &Log) {
  std::vector<std::string> Cmd = {Executable};
  for (const std::string &A : runArguments(Args, Limits))
    Cmd.push_back(A);
  std::string Dir(path::parent_path(Executable));
  Log += "run: " + commandLine(Cmd) + "\n";
  // The harness limits each function itself; the backstop covers a
  // harness that is itself stuck (or a program that ignores the flag).
  unsigned Backstop = backstopSeconds(Limits);
  ProcessResult R = runCaptured(Cmd, Dir, "run", Backstop, Dir);
  if (!R.Stderr.empty())
    Log += "harness stderr:\n" + R.Stderr;
  if (R.Interrupted)
    return makeError("interrupted by signal " + std::to_string(R.Interrupted) +
                     " while the harness ran");
  if (R.TimedOut)
    return makeError("the harness ran past its " + std::to_string(Backstop) +
                     " s backstop (" + std::to_string(Limits.FunctionSeconds) +
                     " s per function) and was killed");
  if (!R.ErrMsg.empty())
    return makeError("could not run the harness " + Executable + ": " + R.ErrMsg);
  if (R.Signal)
    return makeError("the harness was killed by signal " + std::to_string(R.Signal));
  if (R.ReturnCode != 0) {
    llvm::StringRef Err = llvm::StringRef(R.Stderr).trim();
    if (Err.size() > 2000)
      Err = Err.take_back(2000);
    return makeError("the harness exited with status " + std::to_string(R.ReturnCode) +
                     (Err.empty() ? std::string() : ":\n" + Err.str()));
  }
  if (auto Parsed = llvm::json::parse(R.Stdout); !Parsed) {
    std::string Why = llvm::toString(Parsed.takeError());
    return makeError("the harness printed something that is not JSON (" + Why + ")");
  }
  return R.Stdout;
}

void removeHarnessDir(const std::string &Executable) {
  llvm::StringRef Dir = path::parent_path(Executable);
  // Only ever delete what buildHarness created.
  if (path::filename(Dir).startswith("tma-verify-"))
    fs::remove_directories(Dir);
}

llvm::Expected<std::string> buildAndRun(const std::string &HarnessSource,
                                        const LibTorchInstall &Install,
                                        const RunLimits &Limits, std::string &Log) {
  auto Binary = buildHarness(HarnessSource, Install, Log);
  if (!Binary)
    return Binary.takeError();
  auto Output = runHarness(*Binary, {}, Limits, Log);
  if (!Output)
    return makeError(llvm::toString(Output.takeError()) + " (harness kept in " +
                     path::parent_path(*Binary).str() + ")");
  removeHarnessDir(*Binary);
  return Output;
}

} // namespace tma::verify
