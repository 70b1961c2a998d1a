// Unit tests of verify/Process.h (issue 10 item 15): a command and
// everything it starts die with the tool, and an interrupted tool cleans up
// and still dies of its signal. The "tool" in the last two tests is a forked
// child of the test, so that it can be killed.
#include "verify/Process.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace tma::verify;
namespace fs = llvm::sys::fs;

namespace {

struct TempDir {
  std::string Path;
  TempDir() {
    llvm::SmallString<256> Base, P;
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Base);
    llvm::sys::path::append(Base, "tma-process-test");
    EXPECT_FALSE(fs::createUniqueDirectory(Base, P));
    Path = std::string(P);
  }
  ~TempDir() { fs::remove_directories(Path); }
  std::string file(const std::string &Name) const { return Path + "/" + Name; }
};

/// Whether a process is alive (a zombie is not: it only waits to be reaped).
bool alive(pid_t Pid) {
  std::ifstream Stat("/proc/" + std::to_string(Pid) + "/stat");
  std::string Line;
  if (!std::getline(Stat, Line))
    return false;
  size_t Close = Line.rfind(')');
  return Close != std::string::npos && Close + 2 < Line.size() && Line[Close + 2] != 'Z';
}

/// Waits up to Seconds for Pred.
template <class F> bool eventually(F Pred, double Seconds = 10) {
  auto End = std::chrono::steady_clock::now() + std::chrono::duration<double>(Seconds);
  while (std::chrono::steady_clock::now() < End) {
    if (Pred())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Pred();
}

pid_t readPid(const std::string &Path) {
  pid_t Pid = 0;
  eventually([&] {
    std::ifstream In(Path);
    return static_cast<bool>(In >> Pid) && Pid > 0;
  });
  return Pid;
}

TEST(RunInGroup, CapturesOutputAndStatus) {
  TempDir D;
  ProcessResult R = runInGroup({"/bin/sh", "-c", "echo out; echo err >&2; pwd; exit 3"},
                               D.Path, "t", 0, "");
  EXPECT_EQ(R.ReturnCode, 3);
  EXPECT_TRUE(R.ErrMsg.empty()) << R.ErrMsg;
  llvm::SmallString<256> Real;
  fs::real_path(D.Path, Real);
  EXPECT_EQ(R.Stdout, "out\n" + std::string(Real) + "\n");
  EXPECT_EQ(R.Stderr, "err\n");
}

TEST(RunInGroup, AMissingProgramIsAnErrorNotACrash) {
  TempDir D;
  ProcessResult R = runInGroup({"/nonexistent/program"}, D.Path, "t", 0, "");
  EXPECT_NE(R.ErrMsg.find("cannot run /nonexistent/program"), std::string::npos) << R.ErrMsg;
}

TEST(RunInGroup, WhatTheCommandLeftRunningDiesWithIt) {
  TempDir D;
  ProcessResult R = runInGroup(
      {"/bin/sh", "-c", "sleep 60 & echo $! > " + D.file("pid") + "; exit 0"}, D.Path,
      "t", 0, "");
  EXPECT_EQ(R.ReturnCode, 0);
  pid_t Orphan = readPid(D.file("pid"));
  ASSERT_GT(Orphan, 0);
  EXPECT_TRUE(eventually([&] { return !alive(Orphan); })) << "sleep " << Orphan << " survived";
}

TEST(RunInGroup, ATimeoutKillsTheWholeGroup) {
  TempDir D;
  auto T0 = std::chrono::steady_clock::now();
  ProcessResult R = runInGroup(
      {"/bin/sh", "-c", "sleep 60 & echo $! > " + D.file("pid") + "; sleep 60"}, D.Path,
      "t", 1, "");
  EXPECT_TRUE(R.TimedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - T0, std::chrono::seconds(20));
  pid_t Child = readPid(D.file("pid"));
  ASSERT_GT(Child, 0);
  EXPECT_TRUE(eventually([&] { return !alive(Child); }));
}

TEST(RunInGroup, SIGKILLedToolTakesTheGroupAndTheDirectoryWithIt) {
  TempDir D;
  std::string Work = D.file("tma-verify-work");
  ASSERT_FALSE(fs::create_directory(Work));
  std::ofstream(Work + "/harness.cpp") << "// left by the build\n";
  pid_t Tool = fork();
  ASSERT_GE(Tool, 0);
  if (Tool == 0) {
    runInGroup({"/bin/sh", "-c",
                "sleep 60 & echo $! > " + D.file("pid") + "; sleep 60"},
               Work, "run", 0, Work);
    _exit(0);
  }
  pid_t Grandchild = readPid(D.file("pid"));
  ASSERT_GT(Grandchild, 0);
  kill(Tool, SIGKILL);
  int Status;
  waitpid(Tool, &Status, 0);
  EXPECT_TRUE(eventually([&] { return !alive(Grandchild); })) << "sleep survived the tool";
  EXPECT_TRUE(eventually([&] { return !fs::exists(Work); })) << Work << " left behind";
}

TEST(InterruptScope, SIGTERMKillsTheCommandAndTheToolDiesOfIt) {
  TempDir D;
  pid_t Tool = fork();
  ASSERT_GE(Tool, 0);
  if (Tool == 0) {
    InterruptScope Scope;
    ProcessResult R = runInGroup(
        {"/bin/sh", "-c", "echo $$ > " + D.file("pid") + "; exec sleep 60"}, D.Path, "t", 0, "");
    // The command ended because of the signal; the caller cleans up, then
    // dies of it.
    if (R.Interrupted != SIGTERM || InterruptScope::signalled() != SIGTERM)
      _exit(10);
    std::ofstream(D.file("cleaned")) << "yes\n";
    Scope.reraise();
    _exit(11); // not reached
  }
  pid_t Command = readPid(D.file("pid"));
  ASSERT_GT(Command, 0);
  kill(Tool, SIGTERM);
  int Status = 0;
  waitpid(Tool, &Status, 0);
  ASSERT_TRUE(WIFSIGNALED(Status)) << "exit status " << WEXITSTATUS(Status);
  EXPECT_EQ(WTERMSIG(Status), SIGTERM);
  EXPECT_TRUE(fs::exists(D.file("cleaned")));
  EXPECT_TRUE(eventually([&] { return !alive(Command); }));
}

TEST(InterruptScope, AnIgnoredSignalStaysIgnored) {
  struct sigaction Ignore {}, Old {};
  Ignore.sa_handler = SIG_IGN;
  sigemptyset(&Ignore.sa_mask);
  sigaction(SIGHUP, &Ignore, &Old);
  {
    InterruptScope Scope;
    struct sigaction Now {};
    sigaction(SIGHUP, nullptr, &Now);
    EXPECT_EQ(Now.sa_handler, SIG_IGN);
  }
  sigaction(SIGHUP, &Old, nullptr);
}

} // namespace
