// driver/SourceFiles.h: sources read into owned memory, pinned by device
// and inode, and --fix's writes (only over the analysed bytes; mode, links
// and owner kept). No LibTorch: fast.
#include "cli/FileSelection.h"
#include "driver/SourceFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace tma;
namespace fs = llvm::sys::fs;

namespace {

class SourceFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(fs::createUniqueDirectory("tma-sources", Dir));
  }
  void TearDown() override {
    ::chmod(Dir.c_str(), 0755);
    fs::remove_directories(Dir);
  }
  std::string path(const std::string &Name) { return (Dir + "/" + Name).str(); }
  std::string write(const std::string &Name, const std::string &Text) {
    std::string P = path(Name);
    std::ofstream(P, std::ios::binary) << Text;
    return P;
  }
  static std::string read(const std::string &P) {
    std::ifstream In(P, std::ios::binary);
    std::stringstream S;
    S << In.rdbuf();
    return S.str();
  }
  static struct stat statOf(const std::string &P) {
    struct stat S {};
    EXPECT_EQ(::lstat(P.c_str(), &S), 0) << P;
    return S;
  }
  llvm::SmallString<128> Dir;
};

TEST_F(SourceFilesTest, ReadsBytesAndWhichFile) {
  std::string A = write("a.cpp", std::string("int a;\n\0tail", 12));
  auto S = readSourceFile(A);
  ASSERT_TRUE(S);
  EXPECT_EQ(S->Bytes, std::string("int a;\n\0tail", 12));
  fs::file_status Status;
  ASSERT_FALSE(fs::status(A, Status));
  EXPECT_EQ(S->ID, Status.getUniqueID());
  std::string Error;
  EXPECT_FALSE(readSourceFile(path("missing.cpp"), &Error));
  EXPECT_NE(Error.find("cannot read"), std::string::npos) << Error;
}

TEST_F(SourceFilesTest, LargeFilesAreCopiedNotMapped) {
  // 16 KiB and over is what LLVM maps; not a multiple of the page size, so
  // the null terminator would not stop it either.
  std::string Big(64 * 1024 + 17, 'x');
  std::string P = write("big.h", Big);
  auto FS = unmappedFileSystem(llvm::vfs::createPhysicalFileSystem());
  auto File = FS->openFileForRead(P);
  ASSERT_TRUE(File);
  auto Buffer = (*File)->getBuffer(P, Big.size(), /*RequiresNullTerminator=*/true,
                                   /*IsVolatile=*/false);
  ASSERT_TRUE(Buffer);
  EXPECT_EQ((*Buffer)->getBufferKind(), llvm::MemoryBuffer::MemoryBuffer_Malloc);
  // Truncating it now cannot touch what was read.
  ASSERT_EQ(::truncate(P.c_str(), 0), 0);
  EXPECT_EQ((*Buffer)->getBuffer(), Big);
}

TEST_F(SourceFilesTest, PinnedFileIsTheSnapshotUnderAnyName) {
  std::string A = write("a.cpp", "int analysed;\n");
  auto S = readSourceFile(A);
  ASSERT_TRUE(S);
  auto Pinned = std::make_shared<const SourceSnapshot>(*S);
  // Changed on disk after it was read (in place: same inode), and named
  // through a hard link and a symbolic link.
  std::ofstream(A, std::ios::binary | std::ios::trunc) << "int changed_since_then;\n";
  ASSERT_FALSE(fs::create_hard_link(A, path("hard.cpp")));
  ASSERT_FALSE(fs::create_link(A, path("soft.cpp")));
  auto FS = unmappedFileSystem(llvm::vfs::createPhysicalFileSystem(), {Pinned});
  for (const std::string &Name : {A, path("hard.cpp"), path("soft.cpp")}) {
    auto Status = FS->status(Name);
    ASSERT_TRUE(Status) << Name;
    EXPECT_EQ(Status->getSize(), Pinned->Bytes.size()) << Name;
    auto Buffer = FS->getBufferForFile(Name);
    ASSERT_TRUE(Buffer) << Name;
    EXPECT_EQ((*Buffer)->getBuffer(), "int analysed;\n") << Name;
  }
  // Replaced by a rename (a new inode under the same name), as editors
  // and checkouts do: still the snapshot.
  std::string Fresh = write("fresh.cpp", "int renamed_over_it;\n");
  ASSERT_FALSE(fs::rename(Fresh, A));
  EXPECT_EQ((*FS->getBufferForFile(A))->getBuffer(), "int analysed;\n");
  // Through a linked directory too (the same file name: only those are
  // compared by real path).
  ASSERT_FALSE(fs::create_link(Dir, path("linked-dir")));
  EXPECT_EQ((*FS->getBufferForFile(path("linked-dir/a.cpp")))->getBuffer(),
            "int analysed;\n");
  EXPECT_EQ(FS->status(A)->getSize(), Pinned->Bytes.size());
  // Other files are read as they are.
  std::string B = write("b.cpp", "int b;\n");
  EXPECT_EQ((*FS->getBufferForFile(B))->getBuffer(), "int b;\n");
}

TEST_F(SourceFilesTest, WritesOnlyOverTheAnalysedBytes) {
  std::string A = write("a.cpp", "int x = 1;\n");
  std::string Error;
  EXPECT_EQ(writeFixedSource(A, "int x = 1;\n", "int x = 2;\n", Error),
            FixWrite::Written)
      << Error;
  EXPECT_EQ(read(A), "int x = 2;\n");
  // Someone changed it since: nothing is written.
  write("a.cpp", "// a new first line\nint x = 2;\n");
  EXPECT_EQ(writeFixedSource(A, "int x = 2;\n", "int x = 3;\n", Error),
            FixWrite::ChangedSinceAnalysis);
  EXPECT_EQ(read(A), "// a new first line\nint x = 2;\n");
  EXPECT_EQ(writeFixedSource(path("gone.cpp"), "a", "b", Error),
            FixWrite::Failed);
  EXPECT_NE(Error.find("gone.cpp"), std::string::npos) << Error;
}

TEST_F(SourceFilesTest, KeepsModeAndLeavesNoTemporaryFile) {
  std::string A = write("a.cpp", "old\n");
  ASSERT_EQ(::chmod(A.c_str(), 0751), 0);
  std::string Error;
  ASSERT_EQ(writeFixedSource(A, "old\n", "new\n", Error), FixWrite::Written)
      << Error;
  EXPECT_EQ(read(A), "new\n");
  EXPECT_EQ(statOf(A).st_mode & 07777, 0751u);
  std::error_code EC;
  unsigned Entries = 0;
  for (fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    ++Entries;
  EXPECT_EQ(Entries, 1u);
}

TEST_F(SourceFilesTest, HardLinksStayOneFile) {
  std::string A = write("a.cpp", "old\n");
  std::string B = path("b.cpp");
  ASSERT_FALSE(fs::create_hard_link(A, B));
  ino_t Inode = statOf(A).st_ino;
  std::string Error;
  ASSERT_EQ(writeFixedSource(B, "old\n", "new\n", Error), FixWrite::Written)
      << Error;
  EXPECT_EQ(read(A), "new\n");
  EXPECT_EQ(read(B), "new\n");
  EXPECT_EQ(statOf(A).st_ino, Inode);
  EXPECT_EQ(statOf(B).st_nlink, 2u);
  // Named twice, the same file is selected once.
  EXPECT_EQ(uniqueFiles({A, B, A}), std::vector<std::string>({A}));
}

TEST_F(SourceFilesTest, SymbolicLinkStaysALink) {
  std::string A = write("a.cpp", "old\n");
  std::string L = path("link.cpp");
  ASSERT_FALSE(fs::create_link("a.cpp", L));
  std::string Error;
  ASSERT_EQ(writeFixedSource(L, "old\n", "new\n", Error), FixWrite::Written)
      << Error;
  EXPECT_TRUE(S_ISLNK(statOf(L).st_mode));
  EXPECT_EQ(read(A), "new\n");
}

TEST_F(SourceFilesTest, AnotherUsersFileKeepsItsOwner) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to give a file away";
  std::string A = write("a.cpp", "old\n");
  ASSERT_EQ(::chown(A.c_str(), 65534, 65534), 0);
  std::string Error;
  ASSERT_EQ(writeFixedSource(A, "old\n", "new\n", Error), FixWrite::Written)
      << Error;
  EXPECT_EQ(read(A), "new\n");
  EXPECT_EQ(statOf(A).st_uid, 65534u);
  EXPECT_EQ(statOf(A).st_gid, 65534u);
}

TEST_F(SourceFilesTest, UnwritableFileIsAnErrorAndUntouched) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root may write a read-only file (the CLI test runs "
                    "this case as another user)";
  std::string A = write("a.cpp", "old\n");
  ASSERT_EQ(::chmod(A.c_str(), 0444), 0);
  std::string Error;
  EXPECT_EQ(writeFixedSource(A, "old\n", "new\n", Error), FixWrite::Failed);
  EXPECT_NE(Error.find("cannot write"), std::string::npos) << Error;
  EXPECT_EQ(read(A), "old\n");
}

TEST_F(SourceFilesTest, ReadOnlyDirectoryIsWrittenInPlace) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root may create files in a read-only directory (the "
                    "CLI test runs this case as another user)";
  std::string A = write("a.cpp", "old\n");
  ino_t Inode = statOf(A).st_ino;
  ASSERT_EQ(::chmod(Dir.c_str(), 0555), 0);
  std::string Error;
  EXPECT_EQ(writeFixedSource(A, "old\n", "new\n", Error), FixWrite::Written)
      << Error;
  EXPECT_EQ(read(A), "new\n");
  EXPECT_EQ(statOf(A).st_ino, Inode);
}

} // namespace
