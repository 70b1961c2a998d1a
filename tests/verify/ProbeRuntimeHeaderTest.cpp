// verify/tma_probe.h compiles as a header against the real LibTorch
// (-fsyntax-only, with the install's defines, so the CUDA statistics are
// checked where the install has CUDA). The harness build compiles the same
// text too, but only in the slower verify_libtorch suite and with -w; this
// shows the header's own errors and warnings in a few seconds.
#include "verify/Harness.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace tma::verify;

namespace {

/// Compiles Text with -fsyntax-only against the install's headers; Extra
/// flags go before the source. Returns the compiler's exit status.
int compileSyntaxOnly(const LibTorchInstall &Install, const std::string &Text,
                      const std::vector<std::string> &Extra, std::string &Error) {
  const char *CXX = std::getenv("CXX");
  auto Compiler = llvm::sys::findProgramByName(CXX && *CXX ? CXX : "g++");
  if (!Compiler) {
    Error = "no C++ compiler: set $CXX or install g++";
    return -1;
  }
  llvm::SmallString<128> Source;
  if (llvm::sys::fs::createTemporaryFile("tma-probe-header", "cpp", Source)) {
    Error = "no temporary file";
    return -1;
  }
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Source, EC);
    OS << Text;
  }
  std::vector<std::string> Args = {*Compiler, "-std=c++17", "-fsyntax-only", "-pthread",
                                   "-Wall", "-I", TMA_SOURCE_DIR};
  for (const std::string &D : Install.Defines)
    Args.push_back("-D" + D);
  Args.insert(Args.end(), Extra.begin(), Extra.end());
  for (const std::string &I : Install.IncludeDirs) {
    Args.push_back("-isystem");
    Args.push_back(I);
  }
  Args.push_back(std::string(Source));
  std::vector<llvm::StringRef> Refs(Args.begin(), Args.end());
  int RC = llvm::sys::ExecuteAndWait(*Compiler, Refs, std::nullopt, {}, 600, 0, &Error);
  llvm::sys::fs::remove(Source);
  return RC;
}

TEST(ProbeRuntimeHeader, CompilesAgainstLibTorch) {
  auto Install = findLibTorch();
  if (!Install)
    GTEST_SKIP() << llvm::toString(Install.takeError());
  std::string Error;
  EXPECT_EQ(compileSyntaxOnly(*Install, "#include \"verify/tma_probe.h\"\n", {}, Error), 0)
      << Error;
}

// The CUDA statistics (issue 37: getDeviceStats' allocated and reserved
// peaks, emptyCache and resetPeakStats per function) are compiled only
// with TMA_PROBE_HAS_CUDA and the CUDA runtime's header. Here, with a
// CPU-only LibTorch, declarations standing in for that header (the ones
// the analysis parses CUDA host code with, driver/cuda-stubs) let the code
// under the #if be checked against
// the real c10/cuda/CUDACachingAllocator.h; and what a run reports from
// the statistics is checked at compile time on made-up figures.
TEST(ProbeRuntimeHeader, CudaStatisticsCompile) {
  auto Install = findLibTorch();
  if (!Install)
    GTEST_SKIP() << llvm::toString(Install.takeError());
  const char *Text = R"CPP(#include "verify/tma_probe.h"
#if !defined(TMA_PROBE_CUDA_STATS)
#error the CUDA statistics were not compiled in
#endif
namespace {
// A function that peaked at 1536 B allocated and 22 MiB reserved, having
// started with 512 B allocated in one 2 MiB segment (an input).
constexpr tma_probe::CudaByteStats Start{512, 512, 2097152, 2097152};
constexpr tma_probe::CudaByteStats End{512, 2048, 23068672, 23068672};
constexpr tma_probe::CudaRunFigures F = tma_probe::cuda_run_figures(Start, End);
static_assert(F.PeakAllocated == 1536, "allocated peak over the start");
static_assert(F.PeakReserved == 20971520, "reserved peak over the start");
static_assert(F.ReservedAtStart == 2097152, "segments held at the start");
[[maybe_unused]] auto *Measure = &tma_probe::cuda_start_measuring;
}
)CPP";
  // A CUDA install brings the real runtime header (Install.Defines then
  // has TMA_PROBE_HAS_CUDA): no stand-ins.
  std::vector<std::string> Extra;
  if (!Install->HasCUDA)
    Extra = {"-DTMA_PROBE_HAS_CUDA=1", "-isystem",
             std::string(TMA_SOURCE_DIR) + "/driver/cuda-stubs"};
  std::string Error;
  EXPECT_EQ(compileSyntaxOnly(*Install, Text, Extra, Error), 0) << Error;
}

} // namespace
