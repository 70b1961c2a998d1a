#include "driver/PreambleCacheFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace fs = llvm::sys::fs;

namespace tma::preamble {

std::unique_ptr<llvm::MemoryBuffer> readCacheFile(const std::string &Path,
                                                  uint64_t MaxBytes) {
  int FD = ::open(Path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0)
    return nullptr;
  struct stat St;
  if (::fstat(FD, &St) != 0 || !S_ISREG(St.st_mode) ||
      static_cast<uint64_t>(St.st_size) > MaxBytes) {
    ::close(FD);
    return nullptr;
  }
  auto Buf = llvm::MemoryBuffer::getOpenFile(fs::convertFDToNativeFile(FD),
                                             Path, St.st_size,
                                             /*RequiresNullTerminator=*/false);
  ::close(FD);
  return Buf ? std::move(*Buf) : nullptr;
}

bool regularOrAbsent(const std::string &Path) {
  struct stat St;
  if (::lstat(Path.c_str(), &St) != 0)
    return errno == ENOENT;
  return S_ISREG(St.st_mode);
}

bool lockIsSafe(const std::string &Path) {
  struct stat St;
  if (::lstat(Path.c_str(), &St) != 0)
    return errno == ENOENT;
  if (!S_ISREG(St.st_mode) && !S_ISLNK(St.st_mode))
    return false;
  if (::stat(Path.c_str(), &St) != 0)
    return errno == ENOENT; // a dangling link: its owner is gone
  return S_ISREG(St.st_mode) && St.st_size <= 4096;
}

std::optional<std::pair<std::string, long>> lockOwner(const std::string &Path) {
  int FD = ::open(Path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0)
    return std::nullopt;
  struct stat St;
  char Buf[4097];
  ssize_t N = -1;
  if (::fstat(FD, &St) == 0 && S_ISREG(St.st_mode) && St.st_size <= 4096)
    N = ::read(FD, Buf, sizeof Buf - 1);
  ::close(FD);
  if (N < 0)
    return std::nullopt;
  auto [Host, PidText] = llvm::StringRef(Buf, N).trim().split(' ');
  long Pid = 0;
  if (PidText.getAsInteger(10, Pid))
    return std::nullopt;
  return std::make_pair(Host.str(), Pid);
}

void removeIfRegular(const std::string &Path) {
  struct stat St;
  if (::lstat(Path.c_str(), &St) == 0 && S_ISREG(St.st_mode))
    ::unlink(Path.c_str());
}

std::error_code writeAtomically(const std::string &Path, llvm::StringRef Data) {
  if (!regularOrAbsent(Path))
    return std::make_error_code(std::errc::file_exists);
  llvm::SmallString<256> Tmp;
  int FD;
  std::string Model = Path + ".tmp-" +
                      std::to_string(llvm::sys::Process::getProcessId()) +
                      "-%%%%%%%%";
  if (std::error_code EC = fs::createUniqueFile(Model, FD, Tmp))
    return EC;
  std::string TmpPath(Tmp);
  llvm::sys::RemoveFileOnSignal(TmpPath);
  auto Done = [&](std::error_code EC) {
    if (EC)
      fs::remove(TmpPath);
    llvm::sys::DontRemoveFileOnSignal(TmpPath);
    return EC;
  };
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Data;
    OS.close();
    if (OS.has_error()) {
      std::error_code EC = OS.error();
      OS.clear_error();
      return Done(EC);
    }
  }
  return Done(fs::rename(TmpPath, Path));
}

std::string hostName() {
  struct utsname U;
  return ::uname(&U) == 0 ? std::string(U.nodename) : std::string();
}

bool processAlive(long Pid) {
  return Pid > 0 && (::kill(static_cast<pid_t>(Pid), 0) == 0 || errno == EPERM);
}

std::vector<OwnedFile> listOwned(llvm::StringRef Dir) {
  std::vector<OwnedFile> Files;
  std::error_code EC;
  for (fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    llvm::StringRef Name = llvm::sys::path::filename(It->path());
    if (!Name.startswith("libtorch-") && !Name.startswith("preamble-"))
      continue;
    struct stat St;
    if (::lstat(It->path().c_str(), &St) != 0)
      continue;
    // The cache writes only regular files, and LockFileManager's locks are
    // symbolic links; anything else was not made here.
    bool IsLockLink = S_ISLNK(St.st_mode) && Name.endswith(".lock");
    if (!S_ISREG(St.st_mode) && !IsLockLink)
      continue;
    OwnedFile F;
    F.Path = It->path();
    F.Size = St.st_size;
    F.MTimeSeconds = St.st_mtime;
    if (Name.contains(".tmp-") || Name.endswith(".lock") ||
        Name.contains(".lock-")) {
      F.IsLeftover = true;
    } else if (Name == EvictionLogName) {
      F.IsRecord = true;
    } else if (Name.endswith(".pch")) {
      F.Stem = Name.drop_back(4).str();
    } else if (Name.endswith(".deps")) {
      F.Stem = Name.drop_back(5).str();
      F.IsManifest = true;
    } else if (Name.endswith(".names")) {
      F.Stem = Name.str(); // a hint of its own; evicted like an entry
      F.IsManifest = true;
    } else {
      continue;
    }
    Files.push_back(std::move(F));
  }
  return Files;
}

} // namespace tma::preamble
