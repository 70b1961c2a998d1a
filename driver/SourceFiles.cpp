#include "driver/SourceFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Errno.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tma {

namespace fs = llvm::sys::fs;

std::optional<SourceSnapshot> readSourceFile(llvm::StringRef Path,
                                             std::string *Error) {
  auto Fail = [&](std::error_code EC) -> std::optional<SourceSnapshot> {
    if (Error)
      *Error = "cannot read '" + Path.str() + "': " + EC.message();
    return std::nullopt;
  };
  llvm::Expected<fs::file_t> FD = fs::openNativeFileForRead(Path);
  if (!FD)
    return Fail(llvm::errorToErrorCode(FD.takeError()));
  SourceSnapshot S;
  fs::file_status Status;
  std::error_code EC = fs::status(*FD, Status);
  // IsVolatile: copied, not mapped (the file may change under us).
  auto Buffer = EC ? llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>>(EC)
                   : llvm::MemoryBuffer::getOpenFile(
                         *FD, Path, /*FileSize=*/-1,
                         /*RequiresNullTerminator=*/false,
                         /*IsVolatile=*/true);
  fs::closeFile(*FD);
  if (!Buffer)
    return Fail(Buffer.getError());
  S.Bytes = (*Buffer)->getBuffer().str();
  S.ID = Status.getUniqueID();
  llvm::SmallString<256> Real;
  if (!fs::real_path(Path, Real))
    S.RealPath = std::string(Real);
  return S;
}

namespace {

/// A file whose contents are copied into memory when read, never mapped.
class UnmappedFile : public llvm::vfs::File {
public:
  explicit UnmappedFile(std::unique_ptr<llvm::vfs::File> Inner)
      : Inner(std::move(Inner)) {}
  llvm::ErrorOr<llvm::vfs::Status> status() override { return Inner->status(); }
  llvm::ErrorOr<std::string> getName() override { return Inner->getName(); }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>>
  getBuffer(const llvm::Twine &Name, int64_t FileSize,
            bool RequiresNullTerminator, bool /*IsVolatile*/) override {
    return Inner->getBuffer(Name, FileSize, RequiresNullTerminator,
                            /*IsVolatile=*/true);
  }
  std::error_code close() override { return Inner->close(); }

private:
  std::unique_ptr<llvm::vfs::File> Inner;
};

/// A pinned file: the snapshot's bytes, under the status of the file on
/// disk with the snapshot's size (clang compares the two).
class PinnedFile : public llvm::vfs::File {
public:
  PinnedFile(llvm::vfs::Status Status,
             std::shared_ptr<const SourceSnapshot> Snapshot)
      : Status(llvm::vfs::Status::copyWithNewSize(Status,
                                                  Snapshot->Bytes.size())),
        Snapshot(std::move(Snapshot)) {}
  llvm::ErrorOr<llvm::vfs::Status> status() override { return Status; }
  llvm::ErrorOr<std::string> getName() override {
    return Status.getName().str();
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>>
  getBuffer(const llvm::Twine &Name, int64_t, bool, bool) override {
    return llvm::MemoryBuffer::getMemBufferCopy(Snapshot->Bytes, Name);
  }
  std::error_code close() override { return {}; }

private:
  llvm::vfs::Status Status;
  std::shared_ptr<const SourceSnapshot> Snapshot;
};

class UnmappedFileSystem : public llvm::vfs::ProxyFileSystem {
public:
  UnmappedFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Base,
                     std::vector<std::shared_ptr<const SourceSnapshot>> Pinned)
      : ProxyFileSystem(std::move(Base)), Pinned(std::move(Pinned)) {}

  llvm::ErrorOr<llvm::vfs::Status> status(const llvm::Twine &Path) override {
    auto S = ProxyFileSystem::status(Path);
    if (S)
      if (auto P = pinned(Path, *S))
        return llvm::vfs::Status::copyWithNewSize(*S, P->Bytes.size());
    return S;
  }

  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>>
  openFileForRead(const llvm::Twine &Path) override {
    auto F = ProxyFileSystem::openFileForRead(Path);
    if (!F)
      return F;
    if (!Pinned.empty())
      if (auto S = (*F)->status())
        if (auto P = pinned(Path, *S))
          return std::unique_ptr<llvm::vfs::File>(
              std::make_unique<PinnedFile>(*S, P));
    return std::unique_ptr<llvm::vfs::File>(
        std::make_unique<UnmappedFile>(std::move(*F)));
  }

private:
  /// The snapshot Path is: the same inode, or (after a rename over it) the
  /// same real path. The real path is asked only for a file of the same
  /// name, not for each of LibTorch's headers.
  std::shared_ptr<const SourceSnapshot> pinned(const llvm::Twine &Path,
                                               const llvm::vfs::Status &S) {
    for (const auto &P : Pinned)
      if (P->ID == S.getUniqueID())
        return P;
    llvm::SmallString<256> Name;
    Path.toVector(Name);
    for (const auto &P : Pinned) {
      if (P->RealPath.empty() || llvm::sys::path::filename(Name) !=
                                     llvm::sys::path::filename(P->RealPath))
        continue;
      llvm::SmallString<256> Real;
      if (!getRealPath(Name, Real) && Real == P->RealPath)
        return P;
    }
    return nullptr;
  }
  std::vector<std::shared_ptr<const SourceSnapshot>> Pinned;
};

std::string errnoText(int Errno) { return llvm::sys::StrError(Errno); }

/// Writes all of Bytes to FD from offset 0; false with errno set.
bool writeAll(int FD, llvm::StringRef Bytes) {
  size_t Done = 0;
  while (Done < Bytes.size()) {
    ssize_t N = ::pwrite(FD, Bytes.data() + Done, Bytes.size() - Done,
                         static_cast<off_t>(Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      if (N == 0)
        errno = EIO;
      return false;
    }
    Done += static_cast<size_t>(N);
  }
  return true;
}

enum class RenameResult { Written, Changed, UseInPlace, Failed };

/// Writes Fixed to a new file beside Target with Target's mode and group,
/// then renames it over Target. UseInPlace when the new file cannot be
/// made to look like the old one, or cannot be made at all.
RenameResult replaceByRename(llvm::StringRef Name, const std::string &Target,
                             const struct stat &Old, llvm::StringRef Analysed,
                             llvm::StringRef Fixed, std::string &Error) {
  llvm::SmallString<256> Model(llvm::sys::path::parent_path(Target));
  if (Model.empty())
    Model = ".";
  llvm::sys::path::append(Model, "." + llvm::sys::path::filename(Target) +
                                     ".tma-fix-%%%%%%");
  llvm::SmallString<256> Temp;
  int FD = -1;
  if (fs::createUniqueFile(Model, FD, Temp, fs::OF_None, 0600))
    return RenameResult::UseInPlace;
  auto Discard = [&] {
    ::close(FD);
    fs::remove(Temp);
  };
  // Mode bits exactly (fchmod ignores the umask); the group when the new
  // file got another one and we may set it; else rewrite in place.
  if (::fchmod(FD, Old.st_mode & 07777) != 0 ||
      (Old.st_gid != ::getegid() && ::fchown(FD, -1, Old.st_gid) != 0)) {
    Discard();
    return RenameResult::UseInPlace;
  }
  struct stat New;
  if (::fstat(FD, &New) != 0 || New.st_gid != Old.st_gid ||
      (New.st_mode & 07777) != (Old.st_mode & 07777)) {
    Discard();
    return RenameResult::UseInPlace;
  }
  if (!writeAll(FD, Fixed) || ::fsync(FD) != 0) {
    Error = "cannot write beside '" + Name.str() + "': " + errnoText(errno);
    Discard();
    return RenameResult::Failed;
  }
  ::close(FD);
  // Once more, just before the rename: the window in which a change
  // would be lost is this check to the rename, not the whole write.
  std::optional<SourceSnapshot> Now = readSourceFile(Target);
  if (!Now || Now->Bytes != Analysed) {
    fs::remove(Temp);
    return RenameResult::Changed;
  }
  if (std::error_code EC = fs::rename(Temp, Target)) {
    fs::remove(Temp);
    Error = "cannot replace '" + Name.str() + "': " + EC.message();
    return RenameResult::Failed;
  }
  return RenameResult::Written;
}

/// Overwrites Target's own bytes (the inode stays, with its links, owner
/// and mode). A failure half-way puts the analysed bytes back.
bool rewriteInPlace(llvm::StringRef Name, const std::string &Target,
                    llvm::StringRef Analysed, llvm::StringRef Fixed,
                    std::string &Error) {
  int FD = ::open(Target.c_str(), O_WRONLY | O_CLOEXEC);
  if (FD < 0) {
    Error = "cannot write '" + Name.str() + "': " + errnoText(errno);
    return false;
  }
  bool OK = writeAll(FD, Fixed) &&
            ::ftruncate(FD, static_cast<off_t>(Fixed.size())) == 0 &&
            ::fsync(FD) == 0;
  if (!OK) {
    Error = "cannot write '" + Name.str() + "': " + errnoText(errno);
    bool Restored = writeAll(FD, Analysed) &&
                    ::ftruncate(FD, static_cast<off_t>(Analysed.size())) == 0;
    Error += Restored ? " (its old contents are back)"
                      : " (and its old contents could not be put back)";
  }
  ::close(FD);
  return OK;
}

} // namespace

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
unmappedFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Base,
                   std::vector<std::shared_ptr<const SourceSnapshot>> Pinned) {
  return llvm::makeIntrusiveRefCnt<UnmappedFileSystem>(std::move(Base),
                                                       std::move(Pinned));
}

FixWrite writeFixedSource(llvm::StringRef Path, llvm::StringRef Analysed,
                          llvm::StringRef Fixed, std::string &Error) {
  // The file itself: a rename over a symbolic link would put a copy where
  // the link was.
  llvm::SmallString<256> Real;
  if (std::error_code EC = fs::real_path(Path, Real)) {
    Error = "cannot write '" + Path.str() + "': " + EC.message();
    return FixWrite::Failed;
  }
  std::string Target(Real);
  std::string ReadError;
  std::optional<SourceSnapshot> Now = readSourceFile(Target, &ReadError);
  if (!Now) {
    Error = ReadError;
    return FixWrite::Failed;
  }
  if (Now->Bytes != Analysed)
    return FixWrite::ChangedSinceAnalysis;
  struct stat Old;
  if (::stat(Target.c_str(), &Old) != 0) {
    Error = "cannot write '" + Path.str() + "': " + errnoText(errno);
    return FixWrite::Failed;
  }
  if (!S_ISREG(Old.st_mode)) {
    Error = "cannot write '" + Path.str() + "': not a regular file";
    return FixWrite::Failed;
  }
  // A read-only file stays read-only: the rename could replace it, but
  // its owner said no.
  if (::access(Target.c_str(), W_OK) != 0) {
    Error = "cannot write '" + Path.str() + "': " + errnoText(errno);
    return FixWrite::Failed;
  }
  std::string Dir(llvm::sys::path::parent_path(Target));
  bool InPlace = Old.st_nlink > 1 || Old.st_uid != ::geteuid() ||
                 ::access(Dir.empty() ? "." : Dir.c_str(), W_OK | X_OK) != 0;
  if (!InPlace) {
    switch (replaceByRename(Path, Target, Old, Analysed, Fixed, Error)) {
    case RenameResult::Written:
      return FixWrite::Written;
    case RenameResult::Changed:
      return FixWrite::ChangedSinceAnalysis;
    case RenameResult::Failed:
      return FixWrite::Failed;
    case RenameResult::UseInPlace:
      break;
    }
  }
  return rewriteInPlace(Path, Target, Analysed, Fixed, Error) ? FixWrite::Written
                                                        : FixWrite::Failed;
}

} // namespace tma
