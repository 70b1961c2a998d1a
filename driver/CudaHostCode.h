// CUDA sources analysed as host code (issue 35, item 7).
//
// A .cu file (or a command with -x cuda, nvcc's -x cu) is parsed by clang's
// CUDA front end in host-only mode: host functions are C++ like any other;
// kernel and device function bodies are skipped (frontend/AstQueries.h's
// isDeviceOnlyFunction), and a launch `k<<<grid, block>>>(...)` is a call
// whose kernel the analysis does not follow.
//
// 1. The command: nvcc's own flags (-gencode, --expt-relaxed-constexpr,
//    -Xcompiler ...) are dropped or translated to clang's, keeping what
//    changes the host parse (-I, -D, -std, -include, the host compiler's
//    flags behind -Xcompiler); then --cuda-host-only.
// 2. The declarations. Clang 16 reads a CUDA Toolkit up to 11.8 through
//    its own wrapper (__clang_cuda_runtime_wrapper.h); one is looked for in
//    $CUDA_PATH, $CUDA_HOME (either, when set, is the only place looked),
//    else /usr/local/cuda and /usr/local/cuda-*. Where none is found, or a
//    newer one clang cannot read (CUDA 12 dropped headers the wrapper
//    includes), the parse uses -nocudainc and the headers in
//    driver/cuda-stubs/, which the tool carries: the attributes, dim3, the
//    runtime API, __half and __nv_bfloat16, and the cuBLAS/cuSPARSE/
//    cuSOLVER handles ATen/cuda's headers name. They are embedded at build
//    time and served from the tool's in-memory file system under
//    CudaStubDirectory, the prelude force-included as nvcc force-includes
//    cuda_runtime.h.
#pragma once

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <optional>
#include <string>

namespace tma {

/// One header the tool carries: its path under its directory, its text.
struct EmbeddedHeader {
  const char *Path;
  const char *Text;
};
/// driver/cuda-stubs/, embedded (cmake/TmaEmbedHeaders.cmake); the last
/// entry is {nullptr, nullptr}.
extern const EmbeddedHeader CudaStubHeaders[];

/// Where the stub headers appear to clang: a directory of the tool's
/// in-memory file system, named so that a diagnostic in one says whose
/// it is.
inline constexpr const char *CudaStubDirectory =
    "/tensor-accountant/cuda-stubs";

/// Whether Command compiles its file as CUDA: a -x cuda (nvcc's -x cu) or
/// --language=cuda before the file, else a .cu or .cuh name; "-x none"
/// gives the choice back to the name.
bool compilesAsCuda(const clang::tooling::CompileCommand &Command,
                    llvm::StringRef File);

/// A CUDA Toolkit's headers, as found on this machine.
struct CudaToolkit {
  std::string Root;    // holds include/cuda_runtime.h
  int Version = 0;     // CUDA_VERSION from include/cuda.h (11080), 0 if unread
  /// Whether clang 16's CUDA wrapper reads it (CUDA 11.8 at most).
  bool ClangReadsIt = false;
};
/// The toolkit $CUDA_PATH or $CUDA_HOME names (when either is set, the only
/// one looked at), else the newest of /usr/local/cuda and
/// /usr/local/cuda-*; nullopt when none has include/cuda_runtime.h.
/// Looked for once per process.
const std::optional<CudaToolkit> &findCudaToolkit();

/// One line saying which CUDA declarations host code is parsed with when
/// that is not the toolkit found (a newer one than clang reads); "" when
/// nothing needs saying.
std::string cudaDeclarationsNote();

/// What to do about a CUDA header (cufft.h, thrust/...) a CUDA source's
/// parse could not find: which declarations it was parsed with, and how to
/// give it a toolkit's; "" for any other header.
std::string missingCudaHeaderHint(const std::string &Header);

/// The adjuster that makes a CUDA compile command parse its file's host
/// side: nvcc's flags dropped or translated, -x cuda before the file,
/// --cuda-host-only, and the toolkit's headers or the tool's stubs.
clang::tooling::ArgumentsAdjuster cudaHostOnly();

/// Adds the stub headers under CudaStubDirectory.
void addCudaStubHeaders(llvm::vfs::InMemoryFileSystem &FS);

} // namespace tma
