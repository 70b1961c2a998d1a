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

TEST(ProbeRuntimeHeader, CompilesAgainstLibTorch) {
  auto Install = findLibTorch();
  if (!Install)
    GTEST_SKIP() << llvm::toString(Install.takeError());
  const char *CXX = std::getenv("CXX");
  auto Compiler = llvm::sys::findProgramByName(CXX && *CXX ? CXX : "g++");
  ASSERT_TRUE(static_cast<bool>(Compiler)) << "no C++ compiler: set $CXX or install g++";

  llvm::SmallString<128> Source;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("tma-probe-header", "cpp", Source));
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Source, EC);
    ASSERT_FALSE(EC) << EC.message();
    OS << "#include \"verify/tma_probe.h\"\n";
  }
  std::vector<std::string> Args = {*Compiler, "-std=c++17", "-fsyntax-only", "-pthread",
                                   "-Wall", "-I", TMA_SOURCE_DIR};
  for (const std::string &D : Install->Defines)
    Args.push_back("-D" + D);
  for (const std::string &I : Install->IncludeDirs) {
    Args.push_back("-isystem");
    Args.push_back(I);
  }
  Args.push_back(std::string(Source));
  std::vector<llvm::StringRef> Refs(Args.begin(), Args.end());
  std::string Error;
  int RC = llvm::sys::ExecuteAndWait(*Compiler, Refs, std::nullopt, {}, 600, 0, &Error);
  llvm::sys::fs::remove(Source);
  EXPECT_EQ(RC, 0) << Error;
}

} // namespace
