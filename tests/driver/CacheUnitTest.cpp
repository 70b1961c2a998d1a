// The preamble cache's pure parts, without parsing LibTorch: which files
// may share the LibTorch PCH (driver/LibTorchPrefix.h), how commands are
// keyed, sizes and the configuration file, eviction and the refusal to
// touch what the cache did not create (driver/PreambleCache.h). The real
// parses are in CacheTest.cpp.
#include "driver/LibTorchPrefix.h"
#include "driver/PreambleCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace tma;
namespace fs = llvm::sys::fs;

namespace {

std::string makeTempDir() {
  llvm::SmallString<128> Dir;
  EXPECT_FALSE(fs::createUniqueDirectory("tma-cache-unit", Dir));
  return std::string(Dir);
}

void writeFile(const std::string &Path, const std::string &Text) {
  fs::create_directories(llvm::sys::path::parent_path(Path));
  std::ofstream(Path, std::ios::binary) << Text;
}

void setMTime(const std::string &Path, int SecondsAgo) {
  int FD;
  ASSERT_FALSE(
      fs::openFileForWrite(Path, FD, fs::CD_OpenExisting, fs::OF_Append));
  auto T = std::chrono::system_clock::now() - std::chrono::seconds(SecondsAgo);
  ASSERT_FALSE(fs::setLastAccessAndModificationTime(FD, T, T));
  fs::closeFile(FD);
}

class PrefixTest : public ::testing::Test {
protected:
  void SetUp() override { Dir = makeTempDir(); }
  void TearDown() override { fs::remove_directories(Dir); }

  /// The shared prefix of main.cpp with Text, compiled in Dir with Flags.
  std::optional<std::string> prefix(const std::string &Text,
                                    std::vector<std::string> Flags = {}) {
    std::string Main = Dir + "/main.cpp";
    writeFile(Main, Text);
    std::vector<std::string> Args = {"clang++", "-std=c++17"};
    Args.insert(Args.end(), Flags.begin(), Flags.end());
    Args.push_back(Main);
    KeyedCommand C = splitCommand(Args, Main, Dir);
    Why.clear();
    return findLibTorchPrefix(Text, Main, C, *llvm::vfs::getRealFileSystem(),
                              &Why);
  }

  std::string Dir, Why;
};

TEST_F(PrefixTest, LibTorchFirstIsShared) {
  EXPECT_EQ(prefix("// A model.\n#include <torch/torch.h>\n#include "
                   "<iostream>\nint x;\n"),
            "#include <torch/torch.h>\n");
  EXPECT_EQ(prefix("#pragma once\n/* a\n comment */ #include "
                   "<torch/extension.h>\n"),
            "#include <torch/extension.h>\n");
  EXPECT_EQ(prefix("#include <ATen/ATen.h>\n"), "#include <ATen/ATen.h>\n");
}

TEST_F(PrefixTest, StandardHeadersBeforeLibTorchJoinThePrefix) {
  EXPECT_EQ(
      prefix("#include <vector>\n#include <cstdint>\n#include "
             "<torch/torch.h>\n"),
      "#include <vector>\n#include <cstdint>\n#include <torch/torch.h>\n");
  // Unless a project directory holds a header of that name.
  writeFile(Dir + "/inc/vector", "#define SURPRISE 1\n");
  EXPECT_FALSE(prefix("#include <vector>\n#include <torch/torch.h>\n",
                      {"-I" + Dir + "/inc"}));
  EXPECT_NE(Why.find("<vector>"), std::string::npos) << Why;
}

TEST_F(PrefixTest, ProjectHeadersAreFollowed) {
  writeFile(
      Dir + "/include/net.h",
      "#pragma once\n// The net.\n#include <torch/torch.h>\nstruct N {};\n");
  EXPECT_EQ(
      prefix("#include \"net.h\"\n#include <torch/torch.h>\n", {"-Iinclude"}),
      "#include <torch/torch.h>\n");
  writeFile(Dir + "/guarded.h", "#ifndef GUARDED_H\n#define GUARDED_H\n"
                                "#include <torch/script.h>\n#endif\n");
  EXPECT_EQ(prefix("#include \"guarded.h\"\n"), "#include <torch/script.h>\n");
  // A guard the command line defines would skip the header.
  EXPECT_FALSE(prefix("#include \"guarded.h\"\n", {"-DGUARDED_H"}));
  // A header with only standard includes, then LibTorch.
  writeFile(Dir + "/std.h", "#pragma once\n#include <map>\n");
  EXPECT_EQ(prefix("#include \"std.h\"\n#include <torch/torch.h>\n"),
            "#include <map>\n#include <torch/torch.h>\n");
}

TEST_F(PrefixTest, AnythingElseBeforeLibTorchKeepsTheFilesOwnPreamble) {
  EXPECT_FALSE(prefix("#define NDEBUG\n#include <torch/torch.h>\n"));
  EXPECT_NE(Why.find("#define"), std::string::npos) << Why;
  EXPECT_FALSE(
      prefix("#include <opencv2/core.hpp>\n#include <torch/torch.h>\n"));
  EXPECT_FALSE(prefix("#if 1\n#include <torch/torch.h>\n#endif\n"));
  EXPECT_FALSE(prefix("int x;\n#include <torch/torch.h>\n"));
  EXPECT_FALSE(prefix("#include <stdio.h>\n#include <torch/torch.h>\n"));
  EXPECT_FALSE(prefix("#include TORCH_HEADER\n"));
  EXPECT_FALSE(prefix("#include <torch/torch.h>\n", {"-include", "pre.h"}));
  EXPECT_FALSE(prefix("#include <vector>\nint main() {}\n"));
  EXPECT_FALSE(prefix("/* never closed\n#include <torch/torch.h>\n"));
  writeFile(Dir + "/config.h", "#pragma once\n#define USE_X 1\n");
  EXPECT_FALSE(prefix("#include \"config.h\"\n#include <torch/torch.h>\n"));
  writeFile(Dir + "/code.h",
            "#pragma once\nint f();\n#include <torch/torch.h>\n");
  EXPECT_FALSE(prefix("#include \"code.h\"\n"));
  // A header that includes itself (no guard) is not followed forever.
  writeFile(Dir + "/loop.h", "#include \"loop.h\"\n");
  EXPECT_FALSE(prefix("#include \"loop.h\"\n"));
  // A quoted LibTorch include that no project directory holds is <...>.
  EXPECT_EQ(prefix("#include \"torch/torch.h\"\n"),
            "#include <torch/torch.h>\n");
  writeFile(Dir + "/torch/torch.h", "#define NOT_LIBTORCH\n");
  EXPECT_FALSE(prefix("#include \"torch/torch.h\"\n"));
}

TEST(KeyedCommandTest, RelativePathsAreMadeAbsoluteSoTheDirectoryIsNotKeyed) {
  std::vector<std::string> Args = {"/usr/bin/c++", "-Iinclude", "-isystem",
                                   "/opt/torch",   "-iquote",   "../q",
                                   "-DX=1",        "-x",        "c++",
                                   "--sysroot=sr", "src/m.cpp"};
  KeyedCommand A = splitCommand(Args, "src/m.cpp", "/p/a");
  KeyedCommand B = splitCommand(Args, "/p/a/src/m.cpp", "/p/a");
  EXPECT_FALSE(A.NeedsWorkingDirectory);
  EXPECT_EQ(A.Flags, B.Flags);
  ASSERT_EQ(A.Dirs.size(), 3u);
  EXPECT_EQ(A.Dirs[0].Path, "/p/a/include");
  EXPECT_EQ(A.Dirs[1].Flag, "-isystem");
  EXPECT_EQ(A.Dirs[2].Path, "/p/q");
  EXPECT_TRUE(llvm::is_contained(A.Flags, "--sysroot=/p/a/sr"));
  EXPECT_EQ(A.DefinedMacros, std::vector<std::string>{"X"});
  EXPECT_FALSE(llvm::is_contained(A.Flags, "src/m.cpp"));
  // The same command from another directory with absolute paths: equal.
  KeyedCommand C = splitCommand({"/usr/bin/c++", "-I/p/a/include", "-isystem",
                                 "/opt/torch", "-iquote/p/q", "-DX=1", "-x",
                                 "c++", "--sysroot=/p/a/sr", "/p/a/src/m.cpp"},
                                "/p/a/src/m.cpp", "/elsewhere");
  EXPECT_EQ(A.Flags, C.Flags);
  EXPECT_EQ(A.Dirs, C.Dirs);
  // A bare word it cannot place keys the directory.
  EXPECT_TRUE(splitCommand({"c++", "-Xclang", "-include-pch", "-Xclang",
                            "rel.pch", "m.cpp"},
                           "m.cpp", "/p")
                  .NeedsWorkingDirectory);
  EXPECT_TRUE(splitCommand({"c++", "-include", "pre.h", "m.cpp"}, "m.cpp", "/p")
                  .ForcedInclude);
}

TEST_F(PrefixTest, OnlyDirectoriesHoldingALookedUpNameMatter) {
  writeFile(Dir + "/proj/include/net.h", "");
  writeFile(Dir + "/vendored/c10/util/Half.h", "");
  auto &FS = *llvm::vfs::getRealFileSystem();
  std::vector<std::string> Names = {"torch", "c10", "vector"};
  EXPECT_FALSE(directoryMayShadow(Dir + "/proj/include", Names, FS));
  EXPECT_TRUE(directoryMayShadow(Dir + "/vendored", Names, FS));
  EXPECT_FALSE(directoryMayShadow(Dir + "/missing", Names, FS));
  writeFile(Dir + "/headermap", "");
  EXPECT_TRUE(directoryMayShadow(Dir + "/headermap", Names, FS));
  EXPECT_EQ(includeNameRoot("c10/util/Half.h"), "c10");
  EXPECT_EQ(includeNameRoot("vector"), "vector");
  EXPECT_EQ(includeNameRoot("/abs/x.h"), "");
}

TEST(CacheSizeTest, Parses) {
  EXPECT_EQ(parseCacheSize("500M"), uint64_t(500) << 20);
  EXPECT_EQ(parseCacheSize("2G"), uint64_t(2) << 30);
  EXPECT_EQ(parseCacheSize("2GiB"), uint64_t(2) << 30);
  EXPECT_EQ(parseCacheSize("64kb"), uint64_t(64) << 10);
  EXPECT_EQ(parseCacheSize("1048576"), uint64_t(1048576));
  EXPECT_EQ(parseCacheSize("0"), uint64_t(0));
  for (const char *Bad :
       {"", "lots", "-5", "5X", "1.5G", "99999999999999T", "M", "5 M B"})
    EXPECT_FALSE(parseCacheSize(Bad)) << Bad;
}

TEST(CacheConfigTest, MaxSizeKey) {
  std::string Dir = makeTempDir();
  std::string Error;
  EXPECT_FALSE(configuredCacheSize(Dir, Error));
  EXPECT_EQ(Error, "");
  writeFile(cacheConfigPath(Dir), "# CI cache\nmax_size = 300M\n");
  EXPECT_EQ(configuredCacheSize(Dir, Error), uint64_t(300) << 20);
  writeFile(cacheConfigPath(Dir), "max_size = lots\n");
  EXPECT_FALSE(configuredCacheSize(Dir, Error));
  EXPECT_NE(Error.find("max_size"), std::string::npos) << Error;
  writeFile(cacheConfigPath(Dir), "maxsize = 1G\n");
  Error.clear();
  EXPECT_FALSE(configuredCacheSize(Dir, Error));
  EXPECT_NE(Error.find("unknown key"), std::string::npos) << Error;
  fs::remove_directories(Dir);
}

/// A fake entry of Bytes bytes last used SecondsAgo.
void fakeEntry(const std::string &Dir, const std::string &Stem, size_t Bytes,
               int SecondsAgo) {
  writeFile(Dir + "/" + Stem + ".pch", std::string(Bytes, 'p'));
  writeFile(Dir + "/" + Stem + ".deps", "manifest\n");
  setMTime(Dir + "/" + Stem + ".pch", SecondsAgo);
  setMTime(Dir + "/" + Stem + ".deps", SecondsAgo);
}

TEST(CacheEvictionTest, LeastRecentlyUsedGoFirstAndForeignFilesStay) {
  std::string Dir = makeTempDir();
  fakeEntry(Dir, "libtorch-old", 400 << 10, 3000);
  fakeEntry(Dir, "preamble-mid", 400 << 10, 2000);
  fakeEntry(Dir, "libtorch-new", 400 << 10, 10);
  writeFile(Dir + "/notes.txt", std::string(1 << 20, 'x')); // not ours
  ASSERT_EQ(::mkfifo((Dir + "/preamble-fifo.pch").c_str(), 0600), 0);
  CacheContents Before = inspectCache(Dir);
  EXPECT_EQ(Before.SharedEntries, 2u);
  EXPECT_EQ(Before.FileEntries, 1u);

  PreambleCache Cache(Dir, /*MaxBytes=*/1 << 20);
  Cache.trim();
  EXPECT_FALSE(fs::exists(Dir + "/libtorch-old.pch"));
  EXPECT_FALSE(fs::exists(Dir + "/libtorch-old.deps"));
  EXPECT_TRUE(fs::exists(Dir + "/preamble-mid.pch"));
  EXPECT_TRUE(fs::exists(Dir + "/libtorch-new.pch"));
  EXPECT_TRUE(fs::exists(Dir + "/notes.txt"));
  EXPECT_TRUE(fs::exists(Dir + "/preamble-fifo.pch"));
  EXPECT_LE(inspectCache(Dir).Bytes, uint64_t(1) << 20);

  // No limit: nothing goes. --cache-clear: everything the cache owns goes,
  // nothing else.
  PreambleCache(Dir, 0).trim();
  EXPECT_TRUE(fs::exists(Dir + "/preamble-mid.pch"));
  writeFile(cacheConfigPath(Dir), "max_size = 1G\n");
  // The two entries left, and the record of libtorch-old's eviction.
  EXPECT_TRUE(fs::exists(Dir + "/preamble-evictions.log"));
  EXPECT_EQ(clearCache(Dir), 5u);
  CacheContents After = inspectCache(Dir);
  EXPECT_EQ(After.SharedEntries + After.FileEntries, 0u);
  EXPECT_TRUE(fs::exists(Dir + "/notes.txt"));
  EXPECT_TRUE(fs::exists(Dir + "/preamble-fifo.pch"));
  EXPECT_TRUE(fs::exists(cacheConfigPath(Dir)));
  ::unlink((Dir + "/preamble-fifo.pch").c_str()); // fs::remove keeps FIFOs
  fs::remove_directories(Dir);
}

} // namespace

// Issue 32, item 10: the key ignored the language, so a .cu file reused the
// C++ PCH of a .cpp with the same flags (and "worked" only then). The
// command's language (its -x, else the file's extension) joins the key.
TEST(CacheKeyTest, TheLanguageIsPartOfTheKey) {
  std::vector<std::string> Flags = {"clang++", "-std=c++17"};
  auto Split = [&](std::vector<std::string> Args, llvm::StringRef File) {
    Args.push_back(File.str());
    return splitCommand(Args, File, "/p");
  };
  KeyedCommand Cpp = Split(Flags, "m.cpp"), Cu = Split(Flags, "m.cu");
  EXPECT_EQ(Cpp.Flags, Cu.Flags); // the flags alone cannot tell them apart
  EXPECT_NE(Cpp.Language, Cu.Language);
  // -x in every spelling selects the language, whatever the extension;
  // "-x none" gives it back to the extension; a -x after the file does
  // not apply to it.
  std::string CudaX = Split({"clang++", "-x", "cuda"}, "m.cpp").Language;
  EXPECT_EQ(Split({"clang++", "-xcuda"}, "m.cpp").Language, CudaX);
  EXPECT_EQ(Split({"clang++", "--language=cuda"}, "m.cpp").Language, CudaX);
  EXPECT_EQ(Split({"clang++", "--language", "cuda"}, "m.cpp").Language, CudaX);
  EXPECT_NE(Split({"clang++", "-x", "c++"}, "m.cu").Language, CudaX);
  EXPECT_EQ(Split({"clang++", "-x", "cuda", "-x", "none"}, "m.cu").Language,
            Cu.Language);
  EXPECT_EQ(splitCommand({"clang++", "m.cu", "-x", "c++"}, "m.cu", "/p").Language,
            Cu.Language);

  // Through the cache: the same preamble and flags in a .c and a .cpp
  // file are two entries, never one PCH read as the other language.
  std::string Dir = makeTempDir();
  writeFile(Dir + "/src/shared.h", "int shared_value;\n");
  writeFile(Dir + "/src/m.cpp", "#include \"shared.h\"\nint f() { return 1; }\n");
  writeFile(Dir + "/src/m.c", "#include \"shared.h\"\nint f() { return 1; }\n");
  PreambleCache Cache(Dir + "/cache", 0);
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS(
      llvm::vfs::createPhysicalFileSystem().release());
  FS->setCurrentWorkingDirectory(Dir + "/src");
  auto Prepare = [&](const std::string &File) {
    std::string Note;
    auto Use = Cache.prepare({"clang", "-fsyntax-only", File}, File, FS, Note);
    EXPECT_TRUE(Use.has_value()) << File << ": " << Note;
    return Use;
  };
  auto First = Prepare(Dir + "/src/m.cpp");
  auto Again = Prepare(Dir + "/src/m.cpp");
  auto OtherLanguage = Prepare(Dir + "/src/m.c");
  if (First && Again && OtherLanguage) {
    EXPECT_TRUE(First->Built);
    EXPECT_FALSE(Again->Built); // the same language: a hit
    EXPECT_TRUE(OtherLanguage->Built);
    EXPECT_NE(OtherLanguage->PCHPath, First->PCHPath);
  }
  fs::remove_directories(Dir);
}

namespace {

/// One run's worth of the cache: prepare each file, then trim, as
/// analyzeFiles does; the hint it would print.
std::string runOnce(const std::string &CacheDir, uint64_t Limit,
                    const std::vector<std::string> &Files,
                    unsigned *Rebuilt = nullptr) {
  PreambleCache Cache(CacheDir, Limit);
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS(
      llvm::vfs::createPhysicalFileSystem().release());
  for (const std::string &File : Files) {
    FS->setCurrentWorkingDirectory(llvm::sys::path::parent_path(File));
    std::string Note;
    auto Use = Cache.prepare({"clang++", "-fsyntax-only", File}, File, FS, Note);
    EXPECT_TRUE(Use.has_value()) << File << ": " << Note;
  }
  Cache.trim();
  if (Rebuilt)
    *Rebuilt = Cache.rebuiltAfterEviction();
  return Cache.sizeHint();
}

} // namespace

// Issue 33: a cache too small for a code base's include blocks thrashed
// silently (each run evicted what the next one needed; "warm" runs were as
// slow as cold ones). Evictions are recorded, and a run that must rebuild
// an evicted entry says which size would keep them; one that fits does not.
TEST(CacheEvictionTest, ACacheTooSmallSaysWhichSizeWouldKeepItsEntries) {
  std::string Dir = makeTempDir();
  writeFile(Dir + "/src/x.h", "#pragma once\nstruct X { int v[64]; };\n");
  writeFile(Dir + "/src/y.h", "#pragma once\nstruct Y { int v[64]; };\n");
  writeFile(Dir + "/src/a.cpp", "#include \"x.h\"\nint f() { return X().v[0]; }\n");
  writeFile(Dir + "/src/b.cpp", "#include \"y.h\"\nint g() { return Y().v[0]; }\n");
  std::string A = Dir + "/src/a.cpp", B = Dir + "/src/b.cpp";

  // How big one entry is here (a PCH of a small header: ~200 KB).
  EXPECT_EQ(runOnce(Dir + "/probe", 0, {A}), "");
  uint64_t One = inspectCache(Dir + "/probe").Bytes;
  ASSERT_GT(One, 0u);

  // Room for one entry, not two: a, then b (evicts a), then a again.
  uint64_t Small = One + One / 2;
  std::string Cache = Dir + "/small";
  unsigned Rebuilt = 0;
  EXPECT_EQ(runOnce(Cache, Small, {A}, &Rebuilt), "");
  EXPECT_EQ(runOnce(Cache, Small, {B}, &Rebuilt), "");
  EXPECT_EQ(Rebuilt, 0u) << "b is new, not rebuilt";
  std::string Hint = runOnce(Cache, Small, {A}, &Rebuilt);
  EXPECT_EQ(Rebuilt, 1u);
  EXPECT_NE(Hint.find("the preamble cache ("), std::string::npos) << Hint;
  EXPECT_NE(Hint.find("too small for the 2 include blocks"), std::string::npos)
      << Hint;
  // The size it names holds both entries (whole K here, whole M or G for
  // LibTorch's 80 MB entries).
  size_t At = Hint.find("--cache-size=");
  ASSERT_NE(At, std::string::npos) << Hint;
  auto Named = parseCacheSize(
      llvm::StringRef(Hint).drop_front(At + 13).take_until(
          [](char C) { return C == ' '; }));
  ASSERT_TRUE(Named.has_value()) << Hint;
  EXPECT_GE(*Named, 2 * One);
  EXPECT_EQ(Hint.back(), '\n');

  // With that size, the same sequence evicts nothing and says nothing.
  std::string Fits = Dir + "/fits";
  for (const std::string &F : {A, B, A}) {
    EXPECT_EQ(runOnce(Fits, *Named, {F}, &Rebuilt), "");
    EXPECT_EQ(Rebuilt, 0u);
  }
  EXPECT_FALSE(fs::exists(Fits + "/preamble-evictions.log"));
  // Nor does one run that needs both: entries a run uses are never
  // evicted by it.
  EXPECT_EQ(runOnce(Dir + "/onerun", Small, {A, B}), "");
  // The record is the cache's: --cache-clear removes it.
  EXPECT_TRUE(fs::exists(Cache + "/preamble-evictions.log"));
  clearCache(Cache);
  EXPECT_FALSE(fs::exists(Cache + "/preamble-evictions.log"));
  fs::remove_directories(Dir);
}

namespace {

/// A stand-in LibTorch (torch/torch.h) in an -isystem directory; the
/// LibTorch-alone entry's absorbed standard headers, and the PCH each file
/// gets.
struct StandIn {
  std::string Dir;
  PreambleCache Cache;
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS;
  StandIn(const std::string &Dir, const std::string &TorchHeader)
      : Dir(Dir), Cache(Dir + "/cache", 0),
        FS(llvm::vfs::createPhysicalFileSystem().release()) {
    writeFile(Dir + "/libtorch/torch/torch.h", TorchHeader);
    FS->setCurrentWorkingDirectory(Dir);
  }
  std::optional<PreambleCache::Use> use(const std::string &Name,
                                        const std::string &Text) {
    std::string File = Dir + "/" + Name;
    writeFile(File, Text);
    std::string Note;
    auto U = Cache.prepare({"clang++", "-std=c++17", "-isystem",
                            Dir + "/libtorch", "-fsyntax-only", File},
                           File, FS, Note);
    EXPECT_TRUE(U.has_value()) << Name << ": " << Note;
    return U;
  }
};

bool has(const std::vector<std::string> &V, const char *S) {
  return std::find(V.begin(), V.end(), S) != V.end();
}

} // namespace

// Issue 33: files whose standard headers before LibTorch differ shared
// nothing (one 80 MB entry per include block). A standard header that
// LibTorch includes itself, in a way that the order cannot matter, now
// leaves the file on the LibTorch-alone entry.
TEST(AbsorbedHeadersTest, StandardHeadersLibTorchIncludesShareItsEntry) {
  StandIn S(makeTempDir(),
            "#pragma once\n#include <vector>\n#include <string>\n"
            "#include <cassert>\nstruct TorchStandIn {};\n");
  auto Alone = S.use("alone.cpp", "#include <torch/torch.h>\nint a;\n");
  auto Two = S.use("two.cpp", "#include <string>\n#include <vector>\n"
                              "#include <torch/torch.h>\nint b;\n");
  auto Other = S.use("other.cpp", "#include <vector>\n#include <map>\n"
                                  "#include <torch/torch.h>\nint c;\n");
  ASSERT_TRUE(Alone && Two && Other);
  EXPECT_TRUE(has(Alone->Absorbs, "vector")) << Alone->Absorbs.size();
  EXPECT_TRUE(has(Alone->Absorbs, "string"));
  // Not include-guarded, and LibTorch includes it once only: including it
  // again could do anything.
  EXPECT_FALSE(has(Alone->Absorbs, "cassert"));
  // Not included by LibTorch at all.
  EXPECT_FALSE(has(Alone->Absorbs, "map"));
  EXPECT_TRUE(Alone->Shared && Two->Shared && Other->Shared);
  EXPECT_EQ(Two->PCHPath, Alone->PCHPath);
  EXPECT_FALSE(Two->Built) << "a hit on the LibTorch-alone entry";
  // <map> stays in front of LibTorch, in an entry of its own.
  EXPECT_NE(Other->PCHPath, Alone->PCHPath);
  EXPECT_EQ(inspectCache(S.Dir + "/cache").SharedEntries, 2u);
  EXPECT_EQ(S.Cache.hits(), 1u) << "the probe of the LibTorch-alone entry "
                                   "for other.cpp is not a hit of its own";
  fs::remove_directories(S.Dir);
}

// ... but not when including it first could change LibTorch's parse or
// the header's: here LibTorch tests <string>'s guard before including
// <string>; and defines _GLIBCXX_ASSERTIONS, which <vector> (through
// <bits/c++config.h>) tests, before including <vector>.
TEST(AbsorbedHeadersTest, OrderThatMattersKeepsItsOwnEntry) {
  StandIn S(makeTempDir(),
            "#pragma once\n#include <vector>\n"
            "#ifndef _GLIBCXX_STRING\n#define TORCH_STRING_CAME_LATER 1\n"
            "#endif\n#include <string>\nstruct TorchStandIn {};\n");
  auto Alone = S.use("alone.cpp", "#include <torch/torch.h>\nint a;\n");
  auto First = S.use("first.cpp", "#include <string>\n"
                                  "#include <torch/torch.h>\nint b;\n");
  ASSERT_TRUE(Alone && First);
  EXPECT_TRUE(has(Alone->Absorbs, "vector"));
  EXPECT_FALSE(has(Alone->Absorbs, "string"));
  EXPECT_NE(First->PCHPath, Alone->PCHPath);

  StandIn T(makeTempDir(),
            "#pragma once\n#define _GLIBCXX_ASSERTIONS 1\n#include <vector>\n"
            "struct TorchStandIn {};\n");
  auto Checked = T.use("alone.cpp", "#include <torch/torch.h>\nint a;\n");
  ASSERT_TRUE(Checked);
  EXPECT_FALSE(has(Checked->Absorbs, "vector"));
  fs::remove_directories(S.Dir);
  fs::remove_directories(T.Dir);
}
