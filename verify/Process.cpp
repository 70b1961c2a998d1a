// Running commands so that nothing outlives the tool: see Process.h.
//
// The supervisor is a fork of a process that may have threads (the
// analysis' thread pool), so between fork and _exit it calls only
// async-signal-safe functions: no allocation, no stdio, no locks. Everything
// it needs (argument vector, paths) is prepared before the fork. Removing a
// directory tree is done with openat/getdents64/unlinkat for the same
// reason.
#include "verify/Process.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

extern char **environ;

namespace tma::verify {

namespace {

// ------------------------------------------------------------ interrupts
const int HandledSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int HandledCount = sizeof(HandledSignals) / sizeof(HandledSignals[0]);

constexpr int MaxGroups = 16;
std::atomic<pid_t> RunningGroups[MaxGroups];
volatile std::sig_atomic_t Caught = 0;
std::atomic<bool> ScopeActive{false};
struct sigaction OldActions[HandledCount];
bool Installed[HandledCount];

extern "C" void onInterrupt(int Sig) {
  if (!Caught)
    Caught = Sig;
  for (std::atomic<pid_t> &G : RunningGroups) {
    pid_t P = G.load();
    if (P > 0)
      kill(-P, SIGKILL);
  }
}

int registerGroup(pid_t G) {
  for (int I = 0; I < MaxGroups; ++I) {
    pid_t Free = 0;
    if (RunningGroups[I].compare_exchange_strong(Free, G))
      return I;
  }
  return -1; // more than MaxGroups at once: the supervisor still guards it
}

void unregisterGroup(int Slot) {
  if (Slot >= 0)
    RunningGroups[Slot].store(0);
}

sigset_t handledSet() {
  sigset_t S;
  sigemptyset(&S);
  for (int Sig : HandledSignals)
    sigaddset(&S, Sig);
  return S;
}

// ------------------------------------------------------------ supervisor
#if defined(__linux__)
struct LinuxDirent64 {
  uint64_t Ino;
  int64_t Off;
  unsigned short RecLen;
  unsigned char Type;
  char Name[1];
};

bool isDotOrDotDot(const char *N) {
  return N[0] == '.' && (N[1] == 0 || (N[1] == '.' && N[2] == 0));
}

/// rm -r of Name relative to ParentFd, with async-signal-safe calls only.
/// Never follows a symbolic link.
void removeTree(int ParentFd, const char *Name, int Depth) {
  if (unlinkat(ParentFd, Name, 0) == 0 || errno == ENOENT)
    return;
  if (Depth > 64)
    return;
  int Fd = openat(ParentFd, Name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (Fd < 0)
    return;
  alignas(8) char Buf[4096];
  // Deleting while reading may make getdents skip entries: rescan until a
  // pass finds nothing left.
  for (int Pass = 0; Pass < 16; ++Pass) {
    bool Found = false;
    lseek(Fd, 0, SEEK_SET);
    for (;;) {
      long N = syscall(SYS_getdents64, Fd, Buf, sizeof Buf);
      if (N <= 0)
        break;
      for (long Pos = 0; Pos < N;) {
        auto *D = reinterpret_cast<LinuxDirent64 *>(Buf + Pos);
        Pos += D->RecLen;
        if (isDotOrDotDot(D->Name))
          continue;
        Found = true;
        removeTree(Fd, D->Name, Depth + 1);
      }
    }
    if (!Found)
      break;
  }
  close(Fd);
  unlinkat(ParentFd, Name, AT_REMOVEDIR);
}
#endif

void sleepMillis(long Ms) {
  timespec T{Ms / 1000, (Ms % 1000) * 1000000L};
  while (nanosleep(&T, &T) != 0 && errno == EINTR) {
  }
}

/// The tool died: take the whole group down, then the directory.
[[noreturn]] void orphaned(pid_t Group, const char *CleanupDir) {
  int Status;
  for (int I = 0; I < 500; ++I) { // up to 5 s for the group to go
    if (kill(-Group, SIGKILL) != 0 && errno == ESRCH)
      break;
    // The leader is ours to reap; its children are init's.
    while (waitpid(-1, &Status, WNOHANG) > 0) {
    }
    sleepMillis(10);
  }
#if defined(__linux__)
  if (CleanupDir && *CleanupDir)
    removeTree(AT_FDCWD, CleanupDir, 0);
#endif
  _exit(125);
}

/// The command's own process (the group leader). Never returns.
[[noreturn]] void execCommand(char *const *Argv, char *const *Envp, const char *Dir,
                              const char *OutPath, const char *ErrPath, int ExecErrorFd) {
  setpgid(0, 0);
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGKILL); // the supervisor died: so do we
#endif
  struct sigaction Default;
  std::memset(&Default, 0, sizeof Default);
  Default.sa_handler = SIG_DFL;
  sigemptyset(&Default.sa_mask);
  // The tool's handlers must not run here before exec; what the tool's
  // caller ignored (nohup's SIGHUP) stays ignored, as exec would keep it.
  for (int Sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1}) {
    struct sigaction Now;
    if (sigaction(Sig, nullptr, &Now) == 0 && Now.sa_handler != SIG_IGN)
      sigaction(Sig, &Default, nullptr);
  }
  sigset_t None;
  sigemptyset(&None);
  sigprocmask(SIG_SETMASK, &None, nullptr);
  int In = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int Out = open(OutPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int Err = open(ErrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int E = 0;
  if (In < 0 || Out < 0 || Err < 0 || dup2(In, 0) < 0 || dup2(Out, 1) < 0 ||
      dup2(Err, 2) < 0 || chdir(Dir) != 0)
    E = errno;
  if (!E) {
    execve(Argv[0], Argv, Envp);
    E = errno;
  }
  ssize_t Ignored = write(ExecErrorFd, &E, sizeof E);
  (void)Ignored;
  _exit(127);
}

/// The supervisor: starts the command, waits for it, mirrors its status.
[[noreturn]] void supervise(pid_t Tool, char *const *Argv, char *const *Envp,
                            const char *Dir, const char *OutPath, const char *ErrPath,
                            const char *CleanupDir, int PidFd, int ExecErrorFd) {
  sigset_t All;
  sigfillset(&All);
  sigprocmask(SIG_SETMASK, &All, nullptr);
  rlimit NoCore{0, 0};
  setrlimit(RLIMIT_CORE, &NoCore); // mirroring a crash must not dump here
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGUSR1);
#endif
  pid_t G = fork();
  if (G == 0)
    execCommand(Argv, Envp, Dir, OutPath, ErrPath, ExecErrorFd);
  close(ExecErrorFd);
  if (G < 0)
    _exit(126); // the tool reads no pid and says so
  setpgid(G, G); // also here, so the group exists before anyone kills it
  ssize_t Ignored = write(PidFd, &G, sizeof G);
  (void)Ignored;
  close(PidFd);

  sigset_t Wake;
  sigemptyset(&Wake);
  sigaddset(&Wake, SIGCHLD);
  sigaddset(&Wake, SIGUSR1);
  for (;;) {
    timespec Tick{0, 100 * 1000000L};
    siginfo_t Info;
    sigtimedwait(&Wake, &Info, &Tick);
    if (getppid() != Tool)
      orphaned(G, CleanupDir);
    siginfo_t Child;
    std::memset(&Child, 0, sizeof Child);
    if (waitid(P_PID, static_cast<id_t>(G), &Child, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        Child.si_pid != G)
      continue;
    // The leader is a zombie, so its group id cannot be reused yet: kill
    // what it left behind in the group, then reap it.
    kill(-G, SIGKILL);
    int Status = 0;
    while (waitpid(G, &Status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(Status))
      _exit(WEXITSTATUS(Status));
    int Sig = WIFSIGNALED(Status) ? WTERMSIG(Status) : SIGKILL;
    struct sigaction Default;
    std::memset(&Default, 0, sizeof Default);
    Default.sa_handler = SIG_DFL;
    sigemptyset(&Default.sa_mask);
    sigaction(Sig, &Default, nullptr);
    sigset_t Only;
    sigemptyset(&Only);
    sigaddset(&Only, Sig);
    sigprocmask(SIG_UNBLOCK, &Only, nullptr);
    raise(Sig);
    _exit(128 + Sig);
  }
}

std::string readWhole(const std::string &Path) {
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
  return Buf ? (*Buf)->getBuffer().str() : std::string();
}

ssize_t readFully(int Fd, void *Data, size_t Size) {
  size_t Got = 0;
  while (Got < Size) {
    ssize_t N = read(Fd, static_cast<char *>(Data) + Got, Size - Got);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      break;
    Got += static_cast<size_t>(N);
  }
  return static_cast<ssize_t>(Got);
}

} // namespace

ProcessResult runInGroup(const std::vector<std::string> &Args, llvm::StringRef Dir,
                         llvm::StringRef Tag, unsigned TimeoutSeconds,
                         llvm::StringRef CleanupDir, const std::vector<std::string> &Env) {
  ProcessResult R;
  if (Args.empty()) {
    R.ErrMsg = "no command";
    return R;
  }
  if (int Sig = Caught) {
    R.Interrupted = Sig;
    R.ErrMsg = "interrupted by signal " + std::to_string(Sig);
    return R;
  }
  llvm::SmallString<256> OutPath(Dir), ErrPath(Dir);
  llvm::sys::path::append(OutPath, Tag + ".stdout");
  llvm::sys::path::append(ErrPath, Tag + ".stderr");
  std::vector<std::string> Storage(Args);
  std::vector<char *> Argv;
  for (std::string &A : Storage)
    Argv.push_back(A.data());
  Argv.push_back(nullptr);
  // The environment, with Env's names replaced.
  std::vector<std::string> EnvStorage;
  for (char **E = environ; E && *E; ++E) {
    llvm::StringRef Entry(*E);
    bool Replaced = false;
    for (const std::string &New : Env)
      Replaced |= Entry.split('=').first == llvm::StringRef(New).split('=').first;
    if (!Replaced)
      EnvStorage.push_back(Entry.str());
  }
  EnvStorage.insert(EnvStorage.end(), Env.begin(), Env.end());
  std::vector<char *> Envp;
  for (std::string &E : EnvStorage)
    Envp.push_back(E.data());
  Envp.push_back(nullptr);
  std::string DirZ = Dir.str(), CleanupZ = CleanupDir.str();
  std::string OutZ(OutPath.str()), ErrZ(ErrPath.str());

  int PidPipe[2], ExecPipe[2];
  if (pipe2(PidPipe, O_CLOEXEC) != 0) {
    R.ErrMsg = std::string("pipe failed: ") + std::strerror(errno);
    return R;
  }
  if (pipe2(ExecPipe, O_CLOEXEC) != 0) {
    R.ErrMsg = std::string("pipe failed: ") + std::strerror(errno);
    close(PidPipe[0]);
    close(PidPipe[1]);
    return R;
  }
  // No interrupt between starting the command and registering its group.
  sigset_t Block = handledSet(), Previous;
  sigprocmask(SIG_BLOCK, &Block, &Previous);
  pid_t Tool = getpid();
  pid_t Supervisor = fork();
  if (Supervisor == 0) {
    close(PidPipe[0]);
    close(ExecPipe[0]);
    supervise(Tool, Argv.data(), Envp.data(), DirZ.c_str(), OutZ.c_str(), ErrZ.c_str(),
              CleanupZ.c_str(), PidPipe[1], ExecPipe[1]);
  }
  close(PidPipe[1]);
  close(ExecPipe[1]);
  if (Supervisor < 0) {
    sigprocmask(SIG_SETMASK, &Previous, nullptr);
    R.ErrMsg = std::string("fork failed: ") + std::strerror(errno);
    close(PidPipe[0]);
    close(ExecPipe[0]);
    return R;
  }
  pid_t Group = 0;
  int Slot = -1;
  if (readFully(PidPipe[0], &Group, sizeof Group) == sizeof Group && Group > 0)
    Slot = registerGroup(Group);
  close(PidPipe[0]);
  sigprocmask(SIG_SETMASK, &Previous, nullptr); // a pending signal lands now
  int ExecErrno = 0;
  if (readFully(ExecPipe[0], &ExecErrno, sizeof ExecErrno) != sizeof ExecErrno)
    ExecErrno = 0;
  close(ExecPipe[0]);

  auto Start = std::chrono::steady_clock::now();
  int Status = 0;
  for (;;) {
    pid_t Done = waitpid(Supervisor, &Status, WNOHANG);
    if (Done == Supervisor || (Done < 0 && errno != EINTR))
      break;
    if (TimeoutSeconds && !R.TimedOut && Group > 0 &&
        std::chrono::steady_clock::now() - Start >= std::chrono::seconds(TimeoutSeconds)) {
      R.TimedOut = true;
      kill(-Group, SIGKILL);
    }
    sleepMillis(10);
  }
  unregisterGroup(Slot);
  R.Interrupted = Caught;
  if (Group <= 0) {
    R.ErrMsg = "could not start " + Args[0];
  } else if (ExecErrno) {
    R.ErrMsg = "cannot run " + Args[0] + ": " + std::strerror(ExecErrno);
  } else if (WIFEXITED(Status)) {
    R.ReturnCode = WEXITSTATUS(Status);
  } else if (WIFSIGNALED(Status)) {
    R.Signal = WTERMSIG(Status);
  }
  if (R.Interrupted && R.ErrMsg.empty())
    R.ErrMsg = "interrupted by signal " + std::to_string(R.Interrupted);
  R.Stdout = readWhole(OutZ);
  R.Stderr = readWhole(ErrZ);
  return R;
}

InterruptScope::InterruptScope() {
  bool Expected = false;
  if (!ScopeActive.compare_exchange_strong(Expected, true))
    return;
  Active = true;
  Caught = 0;
  struct sigaction SA;
  std::memset(&SA, 0, sizeof SA);
  SA.sa_handler = onInterrupt;
  sigemptyset(&SA.sa_mask);
  for (int I = 0; I < HandledCount; ++I) {
    Installed[I] = false;
    struct sigaction Old;
    if (sigaction(HandledSignals[I], nullptr, &Old) != 0 || Old.sa_handler == SIG_IGN)
      continue; // an ignored signal (nohup) stays ignored
    Installed[I] = sigaction(HandledSignals[I], &SA, &OldActions[I]) == 0;
  }
}

InterruptScope::~InterruptScope() {
  if (!Active)
    return;
  for (int I = 0; I < HandledCount; ++I)
    if (Installed[I])
      sigaction(HandledSignals[I], &OldActions[I], nullptr);
  Active = false;
  ScopeActive = false;
}

int InterruptScope::signalled() { return Caught; }

void InterruptScope::reraise() {
  int Sig = Caught;
  if (Active) {
    for (int I = 0; I < HandledCount; ++I)
      if (Installed[I])
        sigaction(HandledSignals[I], &OldActions[I], nullptr);
    Active = false;
    ScopeActive = false;
  }
  if (Sig)
    raise(Sig);
  Caught = 0; // still alive: the previous handler chose to survive it
}

} // namespace tma::verify
