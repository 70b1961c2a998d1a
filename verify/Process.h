// Internal to verify/ (and the driver's --verify): running the compiler and
// the harness so that nothing outlives the tool (issue 10 item 15).
//
// Every command runs in a process group of its own under a small supervisor
// process, a fork of the tool that never execs:
//
//   tool ── supervisor ── command (group leader) ── its children ...
//
// The supervisor waits for the command and mirrors its exit status. When the
// tool dies, however it dies (SIGKILL included), the kernel tells the
// supervisor (PR_SET_PDEATHSIG); it then kills the command's whole group,
// removes the run's temporary directory and exits. So a compiler's cc1plus
// and a harness's per-function children die with the tool, not just the
// process the tool started.
//
// An InterruptScope makes SIGINT, SIGTERM and SIGHUP orderly while it lives:
// the handler only records the signal and kills the running groups; the
// waiting code sees the command end, reports it as interrupted, and the
// caller removes its temporary directory and calls reraise(), which restores
// the previous handlers and delivers the signal again, so the tool still
// dies of it (exit status 128 + N in a shell).
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace tma::verify {

struct ProcessResult {
  int ReturnCode = -1;  ///< exit status, or -1 when not exited normally
  int Signal = 0;       ///< the signal that ended the command, if any
  bool TimedOut = false;
  int Interrupted = 0;  ///< the signal an InterruptScope caught meanwhile
  std::string ErrMsg;   ///< set when the command could not be started
  std::string Stdout, Stderr;
};

/// Runs Args (Args[0] is the program, an absolute path) with Dir as its
/// working directory, stdin from /dev/null, and stdout and stderr captured
/// in files <Dir>/<Tag>.stdout and .stderr (truncated first). The command
/// is killed with its whole group after TimeoutSeconds (0: no limit).
/// CleanupDir is removed by the supervisor if the tool dies meanwhile.
/// Env entries ("NAME=value") are set for the command on top of the tool's
/// environment (TMPDIR=<Dir> keeps a killed compiler's temporary files
/// inside the directory that is removed).
ProcessResult runInGroup(const std::vector<std::string> &Args,
                         llvm::StringRef Dir, llvm::StringRef Tag,
                         unsigned TimeoutSeconds, llvm::StringRef CleanupDir,
                         const std::vector<std::string> &Env = {});

/// Installs the SIGINT/SIGTERM/SIGHUP handlers for its lifetime. Scopes do
/// not nest (a second one is inert).
class InterruptScope {
public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope &) = delete;
  InterruptScope &operator=(const InterruptScope &) = delete;
  /// The signal received since the scope began, or 0.
  static int signalled();
  /// Restores the previous handlers and raises the recorded signal again.
  /// Returns only if the signal did not end the process.
  void reraise();

private:
  bool Active = false;
};

} // namespace tma::verify
