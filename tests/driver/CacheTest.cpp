// The preamble cache (driver/PreambleCache.h) never changes an answer: a
// cache hit, a rebuilt entry and a recovered corrupt entry all give the
// same table and JSON as parsing without the cache. No timing here: speed
// is measured by bench/bench.sh.
//
// Every test parses real LibTorch headers; cold parses are the slow part,
// so the suite shares one cache of testdata/seed/blocks.cpp.
#include "driver/Analysis.h"
#include "driver/Report.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

using namespace tma;
namespace fs = llvm::sys::fs;

namespace {

const std::string Seed = TMA_SOURCE_DIR "/testdata/seed/blocks.cpp";

std::string render(const AnalysisRun &Run) {
  std::vector<FunctionTrace> Traces;
  for (const FileAnalysis &FA : Run.Files)
    Traces.insert(Traces.end(), FA.Traces.begin(), FA.Traces.end());
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  printTable(OS, Traces);
  OS << "----\n" << llvm::formatv("{0:2}", toJSON(Traces, {})) << "\n";
  return OS.str();
}

std::string makeTempDir(const std::string &Prefix) {
  llvm::SmallString<128> Dir;
  EXPECT_FALSE(fs::createUniqueDirectory(Prefix, Dir));
  return std::string(Dir);
}

void writeFile(const std::string &Path, const std::string &Text) {
  std::ofstream(Path, std::ios::binary) << Text;
}

std::string readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  std::stringstream S;
  S << In.rdbuf();
  return S.str();
}

/// Files in Dir ending in Suffix.
std::vector<std::string> filesIn(const std::string &Dir,
                                 const std::string &Suffix) {
  std::vector<std::string> Found;
  std::error_code EC;
  for (fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (llvm::StringRef(It->path()).endswith(Suffix))
      Found.push_back(It->path());
  std::sort(Found.begin(), Found.end());
  return Found;
}

/// Moves a file's mtime by Seconds (a real edit does; a same-second edit
/// of the same size is still caught, since the cache records nanoseconds).
void bumpMTime(const std::string &Path, int Seconds) {
  int FD;
  ASSERT_FALSE(fs::openFileForWrite(Path, FD, fs::CD_OpenExisting,
                                    fs::OF_Append));
  fs::file_status S;
  ASSERT_FALSE(fs::status(FD, S));
  auto T = S.getLastModificationTime() + std::chrono::seconds(Seconds);
  ASSERT_FALSE(fs::setLastAccessAndModificationTime(FD, T, T));
  fs::closeFile(FD);
}

class CacheTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::string Error;
    DB = makeFixedDatabase({}, false, Error).release();
    ASSERT_TRUE(DB) << Error;
    CacheDir = new std::string(makeTempDir("tma-cache-test"));
    // Without the cache: the reference answer. The cache directory named
    // in the options must stay untouched.
    RunOptions Plain;
    Plain.CacheDir = *CacheDir + "/unused";
    AnalysisRun Run = analyzeFiles(*DB, {Seed}, {}, Plain);
    ASSERT_FALSE(Run.Failed);
    Expected = new std::string(render(Run));
    EXPECT_FALSE(fs::exists(Plain.CacheDir)) << "--no-cache wrote a cache";
  }
  static void TearDownTestSuite() {
    fs::remove_directories(*CacheDir);
    delete DB;
    delete CacheDir;
    delete Expected;
  }

  static AnalysisRun cached(const std::vector<std::string> &Files,
                            const std::string &Dir,
                            const clang::tooling::CompilationDatabase &Using,
                            unsigned Jobs = 1) {
    RunOptions Opts;
    Opts.UseCache = true;
    Opts.CacheDir = Dir;
    Opts.Jobs = Jobs;
    return analyzeFiles(Using, Files, {}, Opts);
  }
  static AnalysisRun cached(const std::vector<std::string> &Files) {
    return cached(Files, *CacheDir, *DB);
  }

  static clang::tooling::CompilationDatabase *DB;
  static std::string *CacheDir;
  static std::string *Expected;
};
clang::tooling::CompilationDatabase *CacheTest::DB = nullptr;
std::string *CacheTest::CacheDir = nullptr;
std::string *CacheTest::Expected = nullptr;

TEST_F(CacheTest, HitGivesTheSameTableAndJSONAsNoCache) {
  AnalysisRun Cold = cached({Seed});
  ASSERT_FALSE(Cold.Failed);
  EXPECT_EQ(render(Cold), *Expected);
  ASSERT_EQ(filesIn(*CacheDir, ".pch").size(), 1u);
  ASSERT_EQ(filesIn(*CacheDir, ".deps").size(), 1u);

  std::string PCH = filesIn(*CacheDir, ".pch")[0];
  fs::file_status Before;
  ASSERT_FALSE(fs::status(PCH, Before));
  AnalysisRun Warm = cached({Seed});
  ASSERT_FALSE(Warm.Failed);
  EXPECT_EQ(render(Warm), *Expected);
  fs::file_status After;
  ASSERT_FALSE(fs::status(PCH, After));
  EXPECT_EQ(Before.getLastModificationTime(), After.getLastModificationTime())
      << "a warm run rebuilt the preamble";
}

TEST_F(CacheTest, CorruptEntriesAreRecoveredFrom) {
  ASSERT_FALSE(cached({Seed}).Failed); // make sure the entry exists
  std::string PCH = filesIn(*CacheDir, ".pch").at(0);
  std::string Deps = filesIn(*CacheDir, ".deps").at(0);

  // 1. Bytes overwritten in place: the manifest's hash no longer matches,
  //    so the entry is rebuilt.
  std::string Bytes = readFile(PCH);
  for (size_t I = Bytes.size() / 2; I < Bytes.size() / 2 + 4096; ++I)
    Bytes[I] = '\x5a';
  writeFile(PCH, Bytes);
  AnalysisRun Run = cached({Seed});
  EXPECT_FALSE(Run.Failed);
  EXPECT_EQ(render(Run), *Expected);

  // 2. A PCH clang cannot read, vouched for by a manifest that matches it:
  //    clang refuses it, the run reparses without it and drops the entry.
  std::string Garbage(1 << 16, '\x17');
  writeFile(PCH, Garbage);
  std::string Manifest = readFile(Deps);
  size_t Line2 = Manifest.find('\n') + 1;
  size_t Line3 = Manifest.find('\n', Line2) + 1;
  Manifest.replace(Line2, Line3 - Line2,
                   "pch " + std::to_string(Garbage.size()) + " " +
                       llvm::utohexstr(llvm::xxHash64(Garbage)) + "\n");
  writeFile(Deps, Manifest);
  Run = cached({Seed});
  EXPECT_FALSE(Run.Failed);
  EXPECT_EQ(render(Run), *Expected);
  EXPECT_FALSE(fs::exists(PCH)) << "the unreadable entry was kept";

  // 3. A manifest that is not one: rebuilt.
  ASSERT_FALSE(cached({Seed}).Failed);
  writeFile(Deps, "not a manifest\n");
  Run = cached({Seed});
  EXPECT_FALSE(Run.Failed);
  EXPECT_EQ(render(Run), *Expected);
  EXPECT_NE(readFile(Deps), "not a manifest\n");
}

// A header in the preamble, and a flag that changes what it says.
class HeaderCacheTest : public CacheTest {
protected:
  void SetUp() override {
    Dir = makeTempDir("tma-cache-header");
    Cache = Dir + "/cache";
    Header = Dir + "/shape.h";
    Main = Dir + "/main.cpp";
    writeFile(Header, "#ifndef ROWS\n#define ROWS 4\n#endif\n");
    writeFile(Main, "#include <torch/torch.h>\n"
                    "#include \"shape.h\"\n"
                    "\n"
                    "void f() {\n"
                    "  auto x = torch::zeros({ROWS, 8});\n"
                    "  auto y = x.t().contiguous();\n"
                    "}\n");
  }
  void TearDown() override { fs::remove_directories(Dir); }

  std::string Dir, Cache, Header, Main;
};

TEST_F(HeaderCacheTest, TouchedHeaderRebuilds) {
  AnalysisRun First = cached({Main}, Cache, *DB);
  ASSERT_FALSE(First.Failed);
  EXPECT_NE(render(First).find("(4, 8)"), std::string::npos) << render(First);

  writeFile(Header, "#ifndef ROWS\n#define ROWS 6\n#endif\n");
  bumpMTime(Header, 10);
  AnalysisRun Second = cached({Main}, Cache, *DB);
  ASSERT_FALSE(Second.Failed);
  std::string Got = render(Second);
  EXPECT_NE(Got.find("(6, 8)"), std::string::npos) << Got;
  EXPECT_EQ(Got.find("(4, 8)"), std::string::npos) << Got;
  EXPECT_EQ(Got, render(analyzeFiles(*DB, {Main})));
  // Rebuilt in place: one entry for one key.
  EXPECT_EQ(filesIn(Cache, ".pch").size(), 1u);
}

TEST_F(HeaderCacheTest, ChangedFlagIsADifferentEntry) {
  ASSERT_FALSE(cached({Main}, Cache, *DB).Failed);
  std::string Error;
  auto WithFlag = makeFixedDatabase({"-std=c++17", "-DROWS=5"}, true, Error);
  ASSERT_TRUE(WithFlag) << Error;
  AnalysisRun Run = cached({Main}, Cache, *WithFlag);
  ASSERT_FALSE(Run.Failed);
  std::string Got = render(Run);
  EXPECT_NE(Got.find("(5, 8)"), std::string::npos) << Got;
  EXPECT_EQ(filesIn(Cache, ".pch").size(), 2u);
}

// Files sharing a preamble, in parallel in one run, then two runs at once
// on one empty cache: every answer right, the preamble built once.
TEST_F(CacheTest, ParallelFilesAndConcurrentRuns) {
  std::string Dir = makeTempDir("tma-cache-parallel");
  std::string Source = readFile(Seed);
  std::vector<std::string> Copies;
  for (int I = 0; I < 3; ++I) {
    Copies.push_back(Dir + "/copy" + std::to_string(I) + ".cpp");
    writeFile(Copies.back(), Source);
  }
  std::string Cache = Dir + "/cache-in-process";
  AnalysisRun Run = cached(Copies, Cache, *DB, /*Jobs=*/2);
  ASSERT_FALSE(Run.Failed);
  ASSERT_EQ(Run.Files.size(), Copies.size());
  for (size_t I = 0; I < Copies.size(); ++I) {
    EXPECT_EQ(Run.Files[I].File, Copies[I]) << "not in input order";
    AnalysisRun One;
    One.Files.push_back(Run.Files[I]);
    std::string Got = render(One);
    // Same answers as the seed, under the copy's name.
    std::string Want = *Expected;
    for (size_t P; (P = Want.find(Seed)) != std::string::npos;)
      Want.replace(P, Seed.size(), Copies[I]);
    EXPECT_EQ(Got, Want) << Copies[I];
  }
  EXPECT_EQ(filesIn(Cache, ".pch").size(), 1u);

  // Two processes of the CLI on one empty cache.
  std::string Shared = Dir + "/cache-shared";
  std::vector<llvm::StringRef> Args = {TMA_CLI, "--cache-dir", Shared, Seed};
  std::string Out[2] = {Dir + "/out0.txt", Dir + "/out1.txt"};
  std::string Err[2] = {Dir + "/err0.txt", Dir + "/err1.txt"};
  llvm::sys::ProcessInfo P[2];
  for (int I = 0; I < 2; ++I) {
    std::optional<llvm::StringRef> Redirects[] = {
        std::nullopt, llvm::StringRef(Out[I]), llvm::StringRef(Err[I])};
    std::string ErrMsg;
    P[I] = llvm::sys::ExecuteNoWait(TMA_CLI, Args, std::nullopt, Redirects, 0,
                                    &ErrMsg);
    ASSERT_NE(P[I].Pid, llvm::sys::ProcessInfo::InvalidPid) << ErrMsg;
  }
  std::string Table[2];
  for (int I = 0; I < 2; ++I) {
    llvm::sys::ProcessInfo Done =
        llvm::sys::Wait(P[I], std::nullopt /*wait forever*/);
    EXPECT_EQ(Done.ReturnCode, 0) << readFile(Err[I]);
    Table[I] = readFile(Out[I]);
  }
  EXPECT_EQ(Table[0], Table[1]);
  // The CLI prints the table, then whatever else it reports (checks).
  std::string ExpectedTable = Expected->substr(0, Expected->find("----\n"));
  EXPECT_EQ(Table[0].substr(0, ExpectedTable.size()), ExpectedTable);
  EXPECT_EQ(filesIn(Shared, ".pch").size(), 1u);
  EXPECT_TRUE(filesIn(Shared, ".lock").empty());
  fs::remove_directories(Dir);
}

} // namespace
