#include "driver/CudaHostCode.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <mutex>

using namespace clang::tooling;

namespace tma {

bool compilesAsCuda(const CompileCommand &Command, llvm::StringRef File) {
  std::string Selected;
  llvm::StringRef Name = llvm::sys::path::filename(File);
  const std::vector<std::string> &Args = Command.CommandLine;
  for (size_t I = 1; I < Args.size(); ++I) {
    llvm::StringRef A = Args[I];
    if (A == "--" || A == Command.Filename ||
        (!A.startswith("-") && llvm::sys::path::filename(A) == Name))
      break; // the file: what follows does not apply to it
    std::optional<llvm::StringRef> X;
    if ((A == "-x" || A == "--language" || A == "--x") && I + 1 < Args.size())
      X = llvm::StringRef(Args[++I]);
    else if (A.startswith("--language="))
      X = A.drop_front(llvm::StringRef("--language=").size());
    else if (A.startswith("--x="))
      X = A.drop_front(4);
    else if (A.startswith("-x") && A.size() > 2)
      X = A.drop_front(2);
    if (X)
      Selected = *X == "none" ? "" : X->str();
  }
  if (!Selected.empty())
    return Selected == "cuda" || Selected == "cu";
  std::string Ext = llvm::sys::path::extension(File).lower();
  return Ext == ".cu" || Ext == ".cuh";
}

namespace {

/// CUDA_VERSION as include/cuda.h defines it (`#define CUDA_VERSION
/// 11080`), or 0.
int readCudaVersion(const std::string &Root) {
  llvm::SmallString<256> Header(Root);
  llvm::sys::path::append(Header, "include", "cuda.h");
  auto Buffer = llvm::MemoryBuffer::getFile(Header);
  if (!Buffer)
    return 0;
  llvm::StringRef Text = (*Buffer)->getBuffer();
  size_t At = Text.find("#define CUDA_VERSION ");
  if (At == llvm::StringRef::npos)
    return 0;
  int Version = 0;
  Text.drop_front(At + llvm::StringRef("#define CUDA_VERSION ").size())
      .ltrim()
      .consumeInteger(10, Version);
  return Version;
}

std::optional<CudaToolkit> toolkitAt(const std::string &Root) {
  llvm::SmallString<256> Runtime(Root);
  llvm::sys::path::append(Runtime, "include", "cuda_runtime.h");
  if (Root.empty() || !llvm::sys::fs::exists(Runtime))
    return std::nullopt;
  CudaToolkit Kit;
  Kit.Root = Root;
  Kit.Version = readCudaVersion(Root);
  // clang 16 knows CUDA up to 11.8; 12 removed texture_fetch_functions.h,
  // which its wrapper includes.
  Kit.ClangReadsIt = Kit.Version > 0 && Kit.Version <= 11080;
  return Kit;
}

std::optional<CudaToolkit> lookForCudaToolkit() {
  for (const char *Variable : {"CUDA_PATH", "CUDA_HOME"})
    if (std::optional<std::string> Set = llvm::sys::Process::GetEnv(Variable))
      return toolkitAt(*Set);
  std::optional<CudaToolkit> Best = toolkitAt("/usr/local/cuda");
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It("/usr/local", EC), End;
       !EC && It != End; It.increment(EC)) {
    if (!llvm::sys::path::filename(It->path()).startswith("cuda-"))
      continue;
    std::optional<CudaToolkit> Kit = toolkitAt(It->path());
    if (Kit && (!Best || Kit->Version > Best->Version))
      Best = Kit;
  }
  return Best;
}

/// nvcc flags that take their value as the next argument (or after '=');
/// clang knows none of them, and none changes what the host code means.
bool isNvccFlagWithValue(llvm::StringRef Flag) {
  return llvm::StringSwitch<bool>(Flag)
      .Cases("-gencode", "--generate-code", "-arch", "--gpu-architecture",
             "-code", "--gpu-code", true)
      .Cases("-ccbin", "--compiler-bindir", "-Xptxas", "--ptxas-options",
             "-Xnvlink", "--nvlink-options", true)
      .Cases("-Xcudafe", "-Xfatbin", "--fatbin-options", "-Xarchive",
             "--archive-options", "-maxrregcount", true)
      .Cases("--maxrregcount", "--threads", "-t", "-rdc",
             "--relocatable-device-code", "-default-stream", true)
      .Cases("--default-stream", "-cudart", "--cudart", "--keep-dir",
             "-diag-suppress", "--diag-suppress", true)
      .Cases("-Xlinker", "--linker-options", "-odir", "--output-directory",
             "--dependency-output", "-MF", true)
      .Default(false);
}

/// What an nvcc command means for clang's host parse: nvcc's own flags
/// dropped, its spellings of the shared ones (--std c++17, -x cu,
/// --include-path, --compiler-options) translated, the host compiler's
/// flags behind -Xcompiler passed on. Flags nvcc and clang share (-I, -D,
/// -std=, -O2, -g, -c, -o) stay.
std::vector<std::string> fromNvcc(const std::vector<std::string> &Args) {
  std::vector<std::string> Out = {"clang++"};
  auto ValueOf = [&](size_t &I, llvm::StringRef A,
                     llvm::StringRef Flag) -> std::optional<std::string> {
    if (A == Flag)
      return I + 1 < Args.size() ? std::optional<std::string>(Args[++I])
                                 : std::nullopt;
    if (A.startswith(Flag.str() + "="))
      return A.drop_front(Flag.size() + 1).str();
    return std::nullopt;
  };
  for (size_t I = 1; I < Args.size(); ++I) {
    llvm::StringRef A = Args[I];
    if (A == "--") {
      Out.insert(Out.end(), Args.begin() + I, Args.end());
      break;
    }
    if (auto Host = ValueOf(I, A, "-Xcompiler")) {
      llvm::SmallVector<llvm::StringRef, 4> Parts;
      llvm::StringRef(*Host).split(Parts, ',', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef P : Parts)
        Out.push_back(P.trim("'\" ").str());
      continue;
    }
    if (auto Host = ValueOf(I, A, "--compiler-options")) {
      llvm::SmallVector<llvm::StringRef, 4> Parts;
      llvm::StringRef(*Host).split(Parts, ',', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef P : Parts)
        Out.push_back(P.trim("'\" ").str());
      continue;
    }
    if (auto Std = ValueOf(I, A, "--std")) {
      Out.push_back("-std=" + *Std);
      continue;
    }
    if (A == "-std" && I + 1 < Args.size()) {
      Out.push_back("-std=" + Args[++I]);
      continue;
    }
    if (auto Language = ValueOf(I, A, "--x")) {
      Out.push_back("-x");
      Out.push_back(*Language == "cu" ? "cuda" : *Language);
      continue;
    }
    if (A == "-x" && I + 1 < Args.size()) {
      Out.push_back("-x");
      Out.push_back(Args[I + 1] == "cu" ? "cuda" : Args[I + 1]);
      ++I;
      continue;
    }
    bool Translated = false;
    for (auto [Long, Short] :
         {std::pair<const char *, const char *>{"--include-path", "-I"},
          {"--system-include", "-isystem"},
          {"--define-macro", "-D"},
          {"--undefine-macro", "-U"},
          {"--pre-include", "-include"},
          {"--output-file", "-o"}})
      if (auto Value = ValueOf(I, A, Long)) {
        Out.push_back(Short);
        Out.push_back(*Value);
        Translated = true;
        break;
      }
    if (Translated)
      continue;
    llvm::StringRef Flag = A.split('=').first;
    if (isNvccFlagWithValue(Flag)) {
      if (Flag == A)
        ++I; // its value is the next argument
      continue;
    }
    // The flags nvcc and clang share, and the input files.
    // The flags nvcc and clang share (and the ones this tool adds for
    // LibTorch: -isystem, -idirafter), and the input files.
    bool Separate = A == "-o" || A == "-I" || A == "-D" || A == "-U" ||
                    A == "-isystem" || A == "-idirafter" || A == "-iquote" ||
                    A == "-include";
    if (!A.startswith("-") || Separate || A.startswith("-I") ||
        A.startswith("-D") || A.startswith("-U") || A.startswith("-isystem") ||
        A.startswith("-idirafter") || A.startswith("-iquote") ||
        A.startswith("-std=") || A.startswith("-O") || A == "-g" ||
        A == "-c" || A.startswith("--cuda-") || A.startswith("-W") ||
        A == "-m64") {
      Out.push_back(A.str());
      if (Separate && I + 1 < Args.size())
        Out.push_back(Args[++I]);
      continue;
    }
    // Anything else is nvcc's alone (--expt-relaxed-constexpr,
    // --use_fast_math, -lineinfo, -G, -dc, -ftz=true, ...): nothing the
    // host parse needs, and clang would refuse it.
  }
  return Out;
}

bool isNvcc(llvm::StringRef Driver) {
  llvm::StringRef Name = llvm::sys::path::filename(Driver);
  return Name == "nvcc" || Name == "nvcc.exe";
}

} // namespace

const std::optional<CudaToolkit> &findCudaToolkit() {
  static std::once_flag Once;
  static std::optional<CudaToolkit> Kit;
  std::call_once(Once, [] { Kit = lookForCudaToolkit(); });
  return Kit;
}

std::string cudaDeclarationsNote() {
  const std::optional<CudaToolkit> &Kit = findCudaToolkit();
  if (!Kit || Kit->ClangReadsIt)
    return "";
  std::string Version =
      Kit->Version ? std::to_string(Kit->Version / 1000) + "." +
                         std::to_string(Kit->Version % 1000 / 10)
                   : "of unknown version";
  return "the CUDA Toolkit at " + Kit->Root + " (" + Version +
         ") is newer than Clang 16 reads (11.8 at most): CUDA host code is "
         "parsed with the tool's own CUDA declarations";
}

std::string missingCudaHeaderHint(const std::string &Header) {
  // CUDA's own headers and libraries' (cufft.h, curand_kernel.h, thrust/,
  // cub/, nvtx3/, cooperative_groups.h, mma.h); anything else is the
  // project's or LibTorch's, which a toolkit would not bring.
  llvm::StringRef Name(Header);
  bool FromCuda = Name.startswith("cu") || Name.startswith("thrust/") ||
                  Name.startswith("nv") || Name.startswith("cooperative_groups") ||
                  Name.startswith("crt/") || Name.startswith("sm_") ||
                  Name == "mma.h" || Name.startswith("texture_") ||
                  Name.startswith("device_") || Name.startswith("math_");
  if (!FromCuda)
    return "";
  const std::optional<CudaToolkit> &Kit = findCudaToolkit();
  if (Kit && Kit->ClangReadsIt)
    return "'" + Header + "' is in neither the project's include "
           "directories nor the CUDA Toolkit at " + Kit->Root;
  return "'" + Header + "' was not found: with no CUDA Toolkit that Clang 16 "
         "reads (11.8 at most; $CUDA_HOME or /usr/local/cuda), CUDA host code "
         "is parsed with the tool's own declarations, which cover the CUDA "
         "runtime, cuda_fp16.h, cuda_bf16.h and what ATen/cuda and c10/cuda "
         "include, not '" + Header + "' (docs/cuda.md)";
}

ArgumentsAdjuster cudaHostOnly() {
  return [](const CommandLineArguments &Args, llvm::StringRef File) {
    if (Args.empty())
      return Args;
    CommandLineArguments Out = isNvcc(Args[0]) ? fromNvcc(Args) : Args;
    // -x cuda right before the file: a .cuh, or a .cpp a database compiles
    // with -x cuda, is CUDA whatever its name says to clang.
    // (The command may name it relative to its directory: found by name.)
    llvm::StringRef Name = llvm::sys::path::filename(File);
    auto It = std::find_if(Out.rbegin(), Out.rend(), [&](const std::string &A) {
      return A == File || (!llvm::StringRef(A).startswith("-") &&
                           llvm::sys::path::filename(A) == Name);
    });
    if (It != Out.rend())
      Out.insert(Out.begin() + (Out.rend() - It - 1), {"-x", "cuda"});
    std::vector<std::string> Flags = {"--cuda-host-only", "-nocudalib",
                                      "-Wno-unknown-cuda-version"};
    const std::optional<CudaToolkit> &Kit = findCudaToolkit();
    std::string Stubs = CudaStubDirectory;
    if (Kit && Kit->ClangReadsIt) {
      Flags.push_back("--cuda-path=" + Kit->Root);
      // What a CUDA build of LibTorch generates and a CPU one lacks
      // (c10/cuda/impl/cuda_cmake_macros.h), after everything else.
      Flags.insert(Flags.end(), {"-idirafter", Stubs});
    } else {
      Flags.insert(Flags.end(),
                   {"-nocudainc", "-isystem", Stubs, "-include",
                    Stubs + "/tma_cuda_prelude.h"});
    }
    Out.insert(llvm::find(Out, "--"), Flags.begin(), Flags.end());
    return Out;
  };
}

void addCudaStubHeaders(llvm::vfs::InMemoryFileSystem &FS) {
  for (const EmbeddedHeader *H = CudaStubHeaders; H->Path; ++H) {
    std::string Path = std::string(CudaStubDirectory) + "/" + H->Path;
    FS.addFile(Path, 0, llvm::MemoryBuffer::getMemBuffer(H->Text, Path));
  }
}

} // namespace tma
