#include "driver/Toolchain.h"
#include "verify/Harness.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

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
  return LibTorchHeaders{
      {Include, Api}, Where + " (" + Root + ")", verify::readTorchVersion(Api)};
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

} // namespace

std::optional<LibTorchHeaders> findLibTorchHeaders() {
  if (auto Dir = llvm::sys::Process::GetEnv("Torch_DIR"))
    if (auto Found = fromCMakeDir(*Dir, "$Torch_DIR"))
      return Found;
  if (auto Prefixes = llvm::sys::Process::GetEnv("CMAKE_PREFIX_PATH")) {
    llvm::SmallVector<llvm::StringRef, 4> Parts;
    llvm::StringRef(*Prefixes).split(Parts, ':', -1, false);
    for (llvm::StringRef P : Parts)
      if (auto Found = fromRoot(P.str(), "$CMAKE_PREFIX_PATH"))
        return Found;
  }
  // Debian's libtorch-dev.
  if (exists("/usr/include/torch/csrc/api/include/torch/torch.h"))
    // /usr/include is already a system directory; naming it again with
    // -isystem would reorder it before libstdc++'s and break #include_next.
    return LibTorchHeaders{
        {"/usr/include/torch/csrc/api/include"},
        "Debian libtorch-dev (/usr/include)",
        verify::readTorchVersion("/usr/include/torch/csrc/api/include")};
  if (auto Root = pythonTorchRoot())
    if (auto Found = fromRoot(*Root, "installed PyTorch"))
      return Found;
  return std::nullopt;
}

std::string clangResourceDir() {
  if (exists(TMA_CLANG_RESOURCE_DIR "/include/stddef.h"))
    return TMA_CLANG_RESOURCE_DIR;
  return "";
}

} // namespace tma
