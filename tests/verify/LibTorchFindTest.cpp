// Unit tests of LibTorch discovery against fake installs in a temporary
// directory (plus the real Debian package when it is installed), and of
// building and running small programs that do not need LibTorch: compile
// errors, exit codes, non-JSON output and the time-limit backstop.
#include "verify/Harness.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace tma::verify;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

bool contains(const std::vector<std::string> &V, const std::string &S) {
  return std::find(V.begin(), V.end(), S) != V.end();
}

class TempDir {
public:
  TempDir() {
    llvm::SmallString<256> Base, P;
    path::system_temp_directory(/*ErasedOnReboot=*/true, Base);
    path::append(Base, "tma-verify-test");
    EXPECT_FALSE(fs::createUniqueDirectory(Base, P));
    Path = std::string(P);
  }
  ~TempDir() { fs::remove_directories(Path); }
  std::string file(const std::string &Rel, const std::string &Text = "",
                   bool Executable = false) const {
    llvm::SmallString<256> P(Path);
    path::append(P, Rel);
    fs::create_directories(path::parent_path(P));
    std::error_code EC;
    {
      llvm::raw_fd_ostream OS(P, EC);
      EXPECT_FALSE(EC) << EC.message();
      OS << Text;
    }
    if (Executable)
      fs::setPermissions(P, fs::all_read | fs::all_exe | fs::owner_write);
    return std::string(P);
  }
  std::string sub(const std::string &Rel) const {
    llvm::SmallString<256> P(Path);
    path::append(P, Rel);
    return std::string(P);
  }
  std::string Path;
};

/// A LibTorch-shaped tree under Prefix (relative to the TempDir).
void fakeInstall(const TempDir &T, const std::string &Prefix, bool CUDA,
                 const std::string &Abi = "") {
  T.file(Prefix + "/include/torch/csrc/api/include/torch/torch.h");
  T.file(Prefix + "/include/torch/csrc/api/include/torch/version.h",
         "#pragma once\n#define TORCH_VERSION_MAJOR 2\n#define TORCH_VERSION \\\n  \"2.3.1\"\n");
  T.file(Prefix + "/lib/libtorch.so");
  T.file(Prefix + "/lib/libtorch_cpu.so");
  T.file(Prefix + "/lib/libc10.so");
  if (CUDA) {
    T.file(Prefix + "/lib/libtorch_cuda.so");
    T.file(Prefix + "/lib/libc10_cuda.so");
  }
  if (!Abi.empty())
    T.file(Prefix + "/share/cmake/Torch/TorchConfig.cmake",
           "set(TORCH_CXX_FLAGS \"-D_GLIBCXX_USE_CXX11_ABI=" + Abi + "\")\n");
}

detail::LibTorchSearch emptySearch() { return detail::LibTorchSearch(); }

TEST(FindLibTorch, TorchDirIsWalkedUpToThePrefix) {
  TempDir T;
  fakeInstall(T, "libtorch", /*CUDA=*/true, "0");
  auto S = emptySearch();
  S.TorchDir = T.sub("libtorch/share/cmake/Torch");
  auto I = detail::findLibTorchWith(S, false);
  ASSERT_TRUE(static_cast<bool>(I)) << llvm::toString(I.takeError());
  EXPECT_EQ(I->IncludeDirs.at(0), T.sub("libtorch/include"));
  EXPECT_EQ(I->IncludeDirs.at(1), T.sub("libtorch/include/torch/csrc/api/include"));
  EXPECT_EQ(I->LibDirs, std::vector<std::string>{T.sub("libtorch/lib")});
  EXPECT_EQ(I->Libs, (std::vector<std::string>{"torch", "torch_cpu", "torch_cuda",
                                               "c10_cuda", "c10"}));
  EXPECT_TRUE(I->HasCUDA);
  EXPECT_EQ(I->Version, "2.3.1");
  EXPECT_TRUE(contains(I->Defines, "_GLIBCXX_USE_CXX11_ABI=0"));
  EXPECT_TRUE(contains(I->Defines, "TMA_PROBE_HAS_CUDA=1"));
  EXPECT_NE(I->Description.find("Torch_DIR"), std::string::npos);
  EXPECT_NE(I->Description.find("with CUDA"), std::string::npos);
}

TEST(FindLibTorch, PreferCUDASkipsACPUOnlyInstall) {
  TempDir T;
  fakeInstall(T, "cpu", /*CUDA=*/false);
  fakeInstall(T, "gpu", /*CUDA=*/true);
  auto S = emptySearch();
  S.TorchDir = T.sub("cpu");
  S.PrefixPath = {T.sub("gpu")};
  auto First = detail::findLibTorchWith(S, false);
  ASSERT_TRUE(static_cast<bool>(First));
  EXPECT_FALSE(First->HasCUDA);
  EXPECT_FALSE(contains(First->Defines, "TMA_PROBE_HAS_CUDA=1"));
  auto Cuda = detail::findLibTorchWith(S, true);
  ASSERT_TRUE(static_cast<bool>(Cuda));
  EXPECT_TRUE(Cuda->HasCUDA);
  EXPECT_NE(Cuda->Description.find("CMAKE_PREFIX_PATH"), std::string::npos);
  // Without any CUDA install, PreferCUDA still returns what there is.
  S.PrefixPath.clear();
  auto Fallback = detail::findLibTorchWith(S, true);
  ASSERT_TRUE(static_cast<bool>(Fallback));
  EXPECT_FALSE(Fallback->HasCUDA);
}

TEST(FindLibTorch, AnUnusableTorchDirIsMentioned) {
  TempDir T;
  fakeInstall(T, "usr", /*CUDA=*/false);
  auto S = emptySearch();
  S.TorchDir = T.sub("stale/share/cmake/Torch");
  S.SystemPrefixes = {T.sub("usr")};
  auto I = detail::findLibTorchWith(S, false);
  ASSERT_TRUE(static_cast<bool>(I)) << llvm::toString(I.takeError());
  EXPECT_NE(I->Description.find("system"), std::string::npos) << I->Description;
  EXPECT_NE(I->Description.find("was ignored"), std::string::npos) << I->Description;
}

TEST(FindLibTorch, PythonTorchDirectory) {
  TempDir T;
  fakeInstall(T, "site-packages/torch", /*CUDA=*/false);
  auto S = emptySearch();
  S.Python = T.file("python3", "#!/bin/sh\necho '" + T.sub("site-packages/torch") +
                                   "'\necho 0\necho ''\necho ''\n",
                    /*Executable=*/true);
  auto I = detail::findLibTorchWith(S, false);
  ASSERT_TRUE(static_cast<bool>(I)) << llvm::toString(I.takeError());
  EXPECT_TRUE(contains(I->Defines, "_GLIBCXX_USE_CXX11_ABI=0"));
  EXPECT_NE(I->Description.find("PyTorch"), std::string::npos);
}

TEST(FindLibTorch, NothingFoundExplainsWhere) {
  TempDir T;
  auto S = emptySearch();
  S.TorchDir = T.sub("nowhere");
  S.SystemPrefixes = {T.sub("usr")};
  S.Python = T.file("python3",
                    "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\n"
                    "exit 1\n",
                    /*Executable=*/true);
  auto I = detail::findLibTorchWith(S, false);
  ASSERT_FALSE(static_cast<bool>(I));
  std::string Msg = llvm::toString(I.takeError());
  EXPECT_NE(Msg.find("no LibTorch found"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("$Torch_DIR=" + T.sub("nowhere")), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("No module named 'torch'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("libtorch-dev"), std::string::npos) << Msg;
}

TEST(FindLibTorch, AHangingPythonIsCutOff) {
  TempDir T;
  auto S = emptySearch();
  S.Python = T.file("python3", "#!/bin/sh\nexec sleep 30\n", /*Executable=*/true);
  S.PythonTimeoutSeconds = 1;
  auto I = detail::findLibTorchWith(S, false);
  ASSERT_FALSE(static_cast<bool>(I));
  std::string Msg = llvm::toString(I.takeError());
  EXPECT_NE(Msg.find("did not finish within 1 s"), std::string::npos) << Msg;
}

TEST(FindLibTorch, DebianPackage) {
  if (!fs::exists("/usr/include/torch/csrc/api/include/torch/torch.h"))
    GTEST_SKIP() << "Debian's libtorch-dev is not installed";
  auto S = emptySearch();
  S.SystemPrefixes = {"/usr"};
  auto I = detail::findLibTorchWith(S, false);
  ASSERT_TRUE(static_cast<bool>(I)) << llvm::toString(I.takeError());
  // /usr/include must never become -isystem (it breaks #include_next).
  EXPECT_EQ(I->IncludeDirs,
            std::vector<std::string>{"/usr/include/torch/csrc/api/include"});
  EXPECT_TRUE(contains(I->Libs, "torch"));
  EXPECT_TRUE(contains(I->Libs, "c10"));
  EXPECT_FALSE(I->Version.empty());
  EXPECT_NE(I->Description.find("Debian"), std::string::npos);
  // And the production entry point finds something on this machine.
  auto Any = findLibTorch();
  EXPECT_TRUE(static_cast<bool>(Any)) << (Any ? "" : llvm::toString(Any.takeError()));
}

// A stand-in for a harness: behaves according to its first argument.
const char *FakeHarness = R"(#include <cstdio>
#include <cstring>
#include <unistd.h>
int main(int argc, char **argv) {
  const char *What = argc > 1 ? argv[1] : "";
  if (!std::strcmp(What, "fail")) { std::fprintf(stderr, "boom\n"); return 3; }
  if (!std::strcmp(What, "text")) { std::printf("not json\n"); return 0; }
  if (!std::strcmp(What, "sleep")) { sleep(60); return 0; }
  std::printf("{\"args\":[");
  for (int I = 1; I < argc; ++I) std::printf("%s\"%s\"", I > 1 ? "," : "", argv[I]);
  std::printf("]}\n");
  std::fprintf(stderr, "to the log\n");
  return 0;
}
)";

class BuildRun : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::string Log;
    auto B = buildHarness(FakeHarness, LibTorchInstall(), Log);
    ASSERT_TRUE(static_cast<bool>(B)) << llvm::toString(B.takeError()) << Log;
    Binary = *B;
  }
  static void TearDownTestSuite() {
    if (!Binary.empty())
      removeHarnessDir(Binary);
  }
  static std::string Binary;
};
std::string BuildRun::Binary;

RunLimits limits(unsigned Seconds, int64_t MaxLive = 0) {
  RunLimits L;
  L.FunctionSeconds = Seconds;
  L.MaxLiveBytes = MaxLive;
  return L;
}

TEST_F(BuildRun, PassesArgumentsAndLimits) {
  std::string Log;
  auto Out = runHarness(Binary, {"--mode", "cpu"}, limits(7, 1024), Log);
  ASSERT_TRUE(static_cast<bool>(Out)) << llvm::toString(Out.takeError());
  EXPECT_EQ(*Out, "{\"args\":[\"--mode\",\"cpu\",\"--function-timeout\",\"7\","
                  "\"--max-live-bytes\",\"1024\"]}\n");
  EXPECT_NE(Log.find("to the log"), std::string::npos);
}

TEST_F(BuildRun, ASecondShorterRunLeavesNothingBehind) {
  // Regression: the capture files are reused per directory, and LLVM opens
  // redirect targets without O_TRUNC.
  std::string Log;
  auto Long = runHarness(Binary, {"a-rather-long-argument", "and-another-one"}, limits(0), Log);
  ASSERT_TRUE(static_cast<bool>(Long)) << llvm::toString(Long.takeError());
  auto Short = runHarness(Binary, {"x"}, limits(0), Log);
  ASSERT_TRUE(static_cast<bool>(Short)) << llvm::toString(Short.takeError());
  EXPECT_EQ(*Short, "{\"args\":[\"x\"]}\n");
}

TEST_F(BuildRun, NonZeroExitIsAnError) {
  std::string Log;
  auto Out = runHarness(Binary, {"fail"}, limits(0), Log);
  ASSERT_FALSE(static_cast<bool>(Out));
  std::string Msg = llvm::toString(Out.takeError());
  EXPECT_NE(Msg.find("status 3"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("boom"), std::string::npos) << Msg;
}

TEST_F(BuildRun, OutputMustBeJSON) {
  std::string Log;
  auto Out = runHarness(Binary, {"text"}, limits(0), Log);
  ASSERT_FALSE(static_cast<bool>(Out));
  EXPECT_NE(llvm::toString(Out.takeError()).find("not JSON"), std::string::npos);
}

TEST_F(BuildRun, BackstopKillsAProgramThatIgnoresItsLimit) {
  std::string Log;
  auto Out = runHarness(Binary, {"sleep"}, limits(1), Log); // killed after 1 x (1 + 2) + 10 s
  ASSERT_FALSE(static_cast<bool>(Out));
  std::string Msg = llvm::toString(Out.takeError());
  EXPECT_NE(Msg.find("13 s backstop (1 s per function)"), std::string::npos) << Msg;
}

TEST(BuildAndRun, CompileErrorsPointAtTheUserFile) {
  std::string Log;
  auto Out = buildAndRun("#line 1 \"user/file.cpp\"\nvoid f() { int x = ; }\nint main() {}\n",
                         LibTorchInstall(), limits(10), Log);
  ASSERT_FALSE(static_cast<bool>(Out));
  std::string Msg = llvm::toString(Out.takeError());
  EXPECT_NE(Msg.find("did not compile"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("user/file.cpp:1:"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("error:"), std::string::npos) << Msg;
  // The directory is kept for inspection; clean it up here.
  size_t At = Log.find("harness directory: ");
  ASSERT_NE(At, std::string::npos);
  std::string Dir = Log.substr(At + 19, Log.find('\n', At) - At - 19);
  EXPECT_TRUE(fs::exists(Dir));
  fs::remove_directories(Dir);
}

TEST(BuildAndRun, SuccessRemovesTheDirectory) {
  std::string Log;
  auto Out = buildAndRun(FakeHarness, LibTorchInstall(), limits(5), Log);
  ASSERT_TRUE(static_cast<bool>(Out)) << llvm::toString(Out.takeError()) << Log;
  EXPECT_EQ(*Out, "{\"args\":[\"--function-timeout\",\"5\"]}\n");
  size_t At = Log.find("harness directory: ");
  ASSERT_NE(At, std::string::npos);
  std::string Dir = Log.substr(At + 19, Log.find('\n', At) - At - 19);
  EXPECT_FALSE(fs::exists(Dir));
}

} // namespace
