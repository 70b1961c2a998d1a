// The preamble cache (driver/PreambleCache.h) never changes an answer: a
// cache hit, a rebuilt entry and a recovered corrupt entry all give the
// same table and JSON as parsing without the cache. No timing here: speed
// is measured by bench/bench.sh.
//
// Every test parses real LibTorch headers; cold parses are the slow part,
// so the suite shares one cache of testdata/seed/blocks.cpp.
#include "driver/Analysis.h"
#include "driver/PreambleCache.h"
#include "report/Report.h"

#include "clang/Tooling/JSONCompilationDatabase.h"
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
#include <signal.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

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

/// Runs the CLI with Args; its stdout, stderr and exit code.
struct CliResult {
  int Code = -1;
  std::string Out, Err;
};
CliResult runCli(const std::vector<std::string> &Args, const std::string &Dir) {
  std::vector<llvm::StringRef> Refs = {TMA_CLI};
  for (const std::string &A : Args)
    Refs.push_back(A);
  std::string Out = Dir + "/cli-out.txt", Err = Dir + "/cli-err.txt";
  std::optional<llvm::StringRef> Redirects[] = {
      std::nullopt, llvm::StringRef(Out), llvm::StringRef(Err)};
  CliResult R;
  R.Code = llvm::sys::ExecuteAndWait(TMA_CLI, Refs, std::nullopt, Redirects);
  R.Out = readFile(Out);
  R.Err = readFile(Err);
  return R;
}

/// The cache's entries whose PCH does not match its manifest.
std::vector<std::string> corruptEntries(const std::string &Dir) {
  std::vector<std::string> Bad;
  for (const std::string &Deps : filesIn(Dir, ".deps")) {
    std::string Manifest = readFile(Deps);
    llvm::SmallVector<llvm::StringRef, 4> Lines;
    llvm::StringRef(Manifest).split(Lines, '\n');
    llvm::SmallVector<llvm::StringRef, 3> Parts;
    if (Lines.size() > 1)
      Lines[1].split(Parts, ' ');
    std::string PCH = Deps.substr(0, Deps.size() - 5) + ".pch";
    std::string Bytes = readFile(PCH);
    uint64_t Size = 0, Hash = 0;
    if (Parts.size() != 3 || Parts[1].getAsInteger(10, Size) ||
        Parts[2].getAsInteger(16, Hash) || Bytes.size() != Size ||
        llvm::xxHash64(Bytes) != Hash)
      Bad.push_back(Deps);
  }
  return Bad;
}

std::vector<std::string> leftovers(const std::string &Dir) {
  std::vector<std::string> L = filesIn(Dir, ".lock");
  for (const std::string &F : filesIn(Dir, ""))
    if (F.find(".tmp-") != std::string::npos ||
        F.find(".lock-") != std::string::npos)
      L.push_back(F);
  return L;
}

/// The pid of a process that has exited.
long deadPid() {
  llvm::sys::ProcessInfo P =
      llvm::sys::ExecuteNoWait("/bin/true", {"true"}, std::nullopt);
  llvm::sys::Wait(P, std::nullopt);
  return P.Pid;
}

std::string hostName() {
  struct utsname U;
  return ::uname(&U) == 0 ? U.nodename : "";
}

// Issue 14: a project's files with different include blocks and include
// directories share one LibTorch PCH, and answer as without it.
TEST_F(CacheTest, OneSharedLibTorchEntryServesAProject) {
  std::string Dir = makeTempDir("tma-cache-project");
  fs::create_directories(Dir + "/a/include");
  fs::create_directories(Dir + "/b/include");
  writeFile(Dir + "/a/include/net.h", "#pragma once\n#include <torch/torch.h>\n"
                                      "struct Net : torch::nn::Module {};\n");
  writeFile(Dir + "/b/include/util.h",
            "#ifndef UTIL_H\n#define UTIL_H\n#include <torch/torch.h>\n"
            "inline int rows() { return 4; }\n#endif\n");
  writeFile(Dir + "/a/main.cpp",
            "#include \"net.h\"\n#include <iomanip>\n\n"
            "void a() {\n  auto x = torch::zeros({4, 8});\n"
            "  auto y = x.t().contiguous();\n}\n");
  writeFile(Dir + "/b/main.cpp",
            "// B.\n#include <torch/torch.h>\n#include <random>\n"
            "#include \"util.h\"\n\nvoid b() {\n"
            "  auto x = torch::ones({2, 8}, torch::kDouble);\n"
            "  auto z = x.to(torch::kFloat);\n}\n");
  std::string Torch = "/usr/include/torch/csrc/api/include";
  std::string Json =
      "[{\"directory\": \"" + Dir +
      "/a\", \"file\": \"main.cpp\", "
      "\"command\": \"/usr/bin/c++ -std=c++17 -Iinclude -isystem " +
      Torch + " -o main.o -c main.cpp\"},\n{\"directory\": \"" + Dir +
      "/b\", \"file\": \"" + Dir +
      "/b/main.cpp\", \"command\": "
      "\"/usr/bin/c++ -std=c++17 -I" +
      Dir + "/b/include -isystem " + Torch + " -c " + Dir + "/b/main.cpp\"}]";
  writeFile(Dir + "/compile_commands.json", Json);
  std::string Error;
  auto DBJ = clang::tooling::JSONCompilationDatabase::loadFromFile(
      Dir + "/compile_commands.json", Error,
      clang::tooling::JSONCommandLineSyntax::AutoDetect);
  ASSERT_TRUE(DBJ) << Error;
  std::vector<std::string> Files = {Dir + "/a/main.cpp", Dir + "/b/main.cpp"};
  std::string Plain = render(analyzeFiles(*DBJ, Files));
  ASSERT_NE(Plain.find("(8, 4)"), std::string::npos) << Plain;
  AnalysisRun Run = cached(Files, Dir + "/cache", *DBJ, /*Jobs=*/2);
  ASSERT_FALSE(Run.Failed);
  EXPECT_EQ(render(Run), Plain);
  EXPECT_EQ(Run.CacheBuilds, 1u) << "the second file waits for the first";
  EXPECT_EQ(filesIn(Dir + "/cache", ".pch").size(), 1u);
  ASSERT_EQ(inspectCache(Dir + "/cache").SharedEntries, 1u);
  AnalysisRun Warm = cached(Files, Dir + "/cache", *DBJ, /*Jobs=*/2);
  EXPECT_EQ(render(Warm), Plain);
  EXPECT_EQ(Warm.CacheHits, 2u);
  EXPECT_EQ(Warm.CacheBuilds, 0u);
  fs::remove_directories(Dir);
}

// Issue 33: a code base whose files put different standard headers before
// <torch/torch.h> built one 80 MB entry per include block. Those LibTorch
// includes itself (as the LibTorch-alone entry records, from the real
// headers) now share that entry: two files with different blocks, one
// entry, and the answers of --no-cache. A project header with code before
// LibTorch still makes an entry of its own.
TEST_F(CacheTest, StandardHeadersBeforeLibTorchShareItsEntry) {
  std::string Dir = makeTempDir("tma-cache-blocks");
  writeFile(Dir + "/a.cpp",
            "#include <vector>\n#include <iostream>\n#include <torch/torch.h>\n"
            "\nvoid a() {\n  auto x = torch::zeros({4, 8});\n"
            "  auto y = x.t().contiguous();\n}\n");
  writeFile(Dir + "/b.cpp",
            "// B.\n#include <string>\n#include <memory>\n#include <cmath>\n"
            "#include <tuple>\n#include <torch/torch.h>\n\nvoid b() {\n"
            "  auto x = torch::ones({2, 8}, torch::kDouble);\n"
            "  auto z = x.to(torch::kFloat);\n}\n");
  std::vector<std::string> Files = {Dir + "/a.cpp", Dir + "/b.cpp"};
  std::string Plain = render(analyzeFiles(*DB, Files));
  ASSERT_NE(Plain.find("(8, 4)"), std::string::npos) << Plain;
  AnalysisRun Run = cached(Files, Dir + "/cache", *DB);
  ASSERT_FALSE(Run.Failed);
  EXPECT_EQ(render(Run), Plain);
  CacheContents C = inspectCache(Dir + "/cache");
  EXPECT_EQ(C.SharedEntries, 1u);
  EXPECT_EQ(C.FileEntries, 0u);
  EXPECT_EQ(Run.CacheBuilds, 1u);
  std::vector<std::string> Manifests = filesIn(Dir + "/cache", ".deps");
  ASSERT_EQ(Manifests.size(), 1u);
  std::string Manifest = readFile(Manifests[0]);
  std::string Absorbs = Manifest.substr(Manifest.find("\nabsorbs") + 1);
  Absorbs = Absorbs.substr(0, Absorbs.find('\n')) + " ";
  for (const char *H : {"vector", "iostream", "string", "memory", "cmath",
                        "tuple"})
    EXPECT_NE(Absorbs.find(std::string(" ") + H + " "), std::string::npos)
        << H << " in " << Absorbs;

  // A project header with code in it before LibTorch: its own entry.
  writeFile(Dir + "/project.h", "#pragma once\ninline int rows() { return 4; }\n");
  writeFile(Dir + "/p.cpp",
            "#include <vector>\n#include \"project.h\"\n#include <torch/torch.h>\n"
            "\nvoid p() {\n  auto x = torch::zeros({rows(), 8});\n}\n");
  std::vector<std::string> All = {Dir + "/a.cpp", Dir + "/b.cpp", Dir + "/p.cpp"};
  std::string PlainAll = render(analyzeFiles(*DB, All));
  AnalysisRun Warm = cached(All, Dir + "/cache", *DB);
  EXPECT_EQ(render(Warm), PlainAll);
  C = inspectCache(Dir + "/cache");
  EXPECT_EQ(C.SharedEntries, 1u);
  EXPECT_EQ(C.FileEntries, 1u);
  EXPECT_EQ(Warm.CacheHits, 2u);
  EXPECT_EQ(Warm.CacheBuilds, 1u);
  fs::remove_directories(Dir);
}

// Issue 14: over every file in testdata/, the CLI's JSON (analysis and
// checks) with the shared parse, cold and warm, is byte-identical to
// --no-cache; and every one of them took the shared entry.
TEST_F(CacheTest, TestdataIsByteIdenticalWithTheSharedParse) {
  std::string Dir = makeTempDir("tma-cache-testdata");
  std::vector<std::string> Sources;
  std::error_code EC;
  for (fs::recursive_directory_iterator It(TMA_SOURCE_DIR "/testdata", EC), End;
       It != End && !EC; It.increment(EC))
    if (llvm::StringRef(It->path()).endswith(".cpp"))
      Sources.push_back(It->path());
  std::sort(Sources.begin(), Sources.end());
  ASSERT_GE(Sources.size(), 8u);
  std::vector<std::string> Common = {"--format=json", "-j", "2"};
  Common.insert(Common.end(), Sources.begin(), Sources.end());
  auto With = [&](std::vector<std::string> Front) {
    Front.insert(Front.end(), Common.begin(), Common.end());
    return runCli(Front, Dir);
  };
  CliResult Plain = With({"--no-cache"});
  ASSERT_NE(Plain.Out.find("\"functions\""), std::string::npos) << Plain.Err;
  std::string Cache = Dir + "/cache";
  CliResult Cold = With({"--cache-dir", Cache});
  CliResult Warm = With({"--cache-dir", Cache, "--cache-stats"});
  EXPECT_EQ(Cold.Code, Plain.Code) << Cold.Err;
  EXPECT_EQ(Warm.Code, Plain.Code) << Warm.Err;
  EXPECT_TRUE(Cold.Out == Plain.Out) << "cold output differs from --no-cache";
  EXPECT_TRUE(Warm.Out == Plain.Out) << "warm output differs from --no-cache";
  CacheContents C = inspectCache(Cache);
  EXPECT_EQ(C.SharedEntries, 1u);
  EXPECT_EQ(C.FileEntries, 0u) << "a testdata file did not take the shared "
                                  "entry";
  EXPECT_NE(Warm.Err.find("this run: " + std::to_string(Sources.size()) +
                          " hits, 0 built"),
            std::string::npos)
      << Warm.Err;
  fs::remove_directories(Dir);
}

// Issue 10, item 11: a FIFO, a link to /dev/zero or a FIFO lock at a cache
// path is never read (it would block or never end) nor replaced: the run
// parses without that entry and answers as without the cache.
TEST_F(CacheTest, HostileCacheFilesAreNeitherReadNorReplaced) {
  std::string Dir = makeTempDir("tma-cache-hostile");
  ASSERT_FALSE(cached({Seed}, Dir, *DB).Failed);
  std::vector<std::string> Names = filesIn(Dir, ".names");
  ASSERT_EQ(Names.size(), 1u);
  std::string PCH = filesIn(Dir, ".pch").at(0);
  std::string Deps = filesIn(Dir, ".deps").at(0);
  std::string Manifest = readFile(Deps);

  ::unlink(Deps.c_str()); // fs::remove keeps FIFOs
  ASSERT_EQ(::mkfifo(Deps.c_str(), 0600), 0);
  AnalysisRun Run = cached({Seed}, Dir, *DB);
  EXPECT_FALSE(Run.Failed);
  EXPECT_EQ(render(Run), *Expected);
  fs::file_status S;
  ASSERT_FALSE(fs::status(Deps, S));
  EXPECT_EQ(S.type(), fs::file_type::fifo_file) << "the FIFO was replaced";
  ::unlink(Deps.c_str()); // fs::remove keeps FIFOs

  writeFile(Deps, Manifest);
  ::unlink(PCH.c_str());
  ASSERT_FALSE(fs::create_link("/dev/zero", PCH));
  Run = cached({Seed}, Dir, *DB);
  EXPECT_FALSE(Run.Failed);
  EXPECT_EQ(render(Run), *Expected);
  ASSERT_FALSE(fs::status(PCH, S, /*follow=*/false));
  EXPECT_EQ(S.type(), fs::file_type::symlink_file) << "the link was replaced";
  ::unlink(PCH.c_str());
  ::unlink(Deps.c_str()); // fs::remove keeps FIFOs

  // The lock the builders of this key take.
  std::string Lock = Names[0].substr(0, Names[0].size() - 6) + ".pch.lock";
  ASSERT_EQ(::mkfifo(Lock.c_str(), 0600), 0);
  Run = cached({Seed}, Dir, *DB);
  EXPECT_FALSE(Run.Failed);
  EXPECT_EQ(render(Run), *Expected);
  ::unlink(Lock.c_str());
  fs::remove_directories(Dir);
}

// Issue 10, item 25: a cache that cannot be written is not built for (the
// run is then no slower than --no-cache), but answers the same.
TEST_F(CacheTest, UnwritableCacheBuildsNothing) {
  std::string Dir = makeTempDir("tma-cache-unwritable");
  writeFile(Dir + "/file", "not a directory\n");
  testing::internal::CaptureStderr();
  AnalysisRun Run = cached({Seed}, Dir + "/file/cache", *DB);
  std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(Run.Failed);
  EXPECT_EQ(render(Run), *Expected);
  EXPECT_EQ(Run.CacheBuilds, 0u) << "built a PCH it could not keep";
  EXPECT_NE(Err.find("parsing without the cache"), std::string::npos) << Err;
  fs::remove_directories(Dir);
}

// Issue 10, item 25: the working directory is not part of the key; the
// same command (absolute paths) from another directory hits.
TEST_F(CacheTest, WorkingDirectoryIsNotPartOfTheKey) {
  std::string Dir = makeTempDir("tma-cache-cwd");
  fs::create_directories(Dir + "/one");
  fs::create_directories(Dir + "/two");
  std::vector<std::string> Flags = {"-std=c++17", "-isystem",
                                    "/usr/include/torch/csrc/api/include"};
  clang::tooling::FixedCompilationDatabase One(Dir + "/one", Flags);
  clang::tooling::FixedCompilationDatabase Two(Dir + "/two", Flags);
  ASSERT_FALSE(cached({Seed}, Dir + "/cache", One).Failed);
  AnalysisRun Run = cached({Seed}, Dir + "/cache", Two);
  EXPECT_EQ(render(Run), *Expected);
  EXPECT_EQ(Run.CacheHits, 1u);
  EXPECT_EQ(Run.CacheBuilds, 0u);
  EXPECT_EQ(filesIn(Dir + "/cache", ".pch").size(), 1u);
  fs::remove_directories(Dir);
}

// Issue 10, item 25: what a killed run leaves is cleaned up. SIGTERM
// during a build removes its lock at once; what SIGKILL leaves (a lock
// naming a dead process on this host, an orphaned temporary file) goes
// with the next run that writes. Live locks and foreign files stay.
TEST_F(CacheTest, KilledRunsLeaveNoLocksOrTemporaryFiles) {
  std::string Dir = makeTempDir("tma-cache-killed");
  std::string Cache = Dir + "/cache";
  fs::create_directories(Cache);
  long Dead = deadPid();
  std::string Tmp =
      Cache + "/libtorch-0123.pch.tmp-" + std::to_string(Dead) + "-abcdefgh";
  writeFile(Tmp, "half a PCH");
  int FD;
  ASSERT_FALSE(
      fs::openFileForWrite(Tmp, FD, fs::CD_OpenExisting, fs::OF_Append));
  auto Old = std::chrono::system_clock::now() - std::chrono::minutes(5);
  ASSERT_FALSE(fs::setLastAccessAndModificationTime(FD, Old, Old));
  fs::closeFile(FD);
  writeFile(Cache + "/preamble-4567.pch.lock",
            hostName() + " " + std::to_string(Dead));
  std::string Live = Cache + "/preamble-89ab.pch.lock";
  writeFile(Live, hostName() + " " + std::to_string(::getpid()));
  writeFile(Cache + "/mine.lock", "a file the cache did not create");
  ASSERT_FALSE(cached({Seed}, Cache, *DB).Failed);
  EXPECT_FALSE(fs::exists(Tmp));
  EXPECT_FALSE(fs::exists(Cache + "/preamble-4567.pch.lock"));
  EXPECT_TRUE(fs::exists(Live));
  EXPECT_TRUE(fs::exists(Cache + "/mine.lock"));

  // A run terminated while it builds.
  std::string Fresh = Dir + "/fresh";
  std::vector<llvm::StringRef> Args = {TMA_CLI, "--cache-dir", Fresh, Seed};
  std::optional<llvm::StringRef> Quiet[] = {std::nullopt, llvm::StringRef(""),
                                            llvm::StringRef("")};
  llvm::sys::ProcessInfo P =
      llvm::sys::ExecuteNoWait(TMA_CLI, Args, std::nullopt, Quiet);
  ASSERT_NE(P.Pid, llvm::sys::ProcessInfo::InvalidPid);
  bool Locked = false;
  for (int I = 0; I < 6000 && !Locked; ++I) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    Locked = !filesIn(Fresh, ".lock").empty();
  }
  ASSERT_TRUE(Locked) << "the run never took its build lock";
  ::kill(P.Pid, SIGTERM);
  llvm::sys::Wait(P, std::nullopt);
  EXPECT_EQ(leftovers(Fresh), std::vector<std::string>{});
  fs::remove_directories(Dir);
}

// Issue 14: four processes on one small cache, building and evicting each
// other's entries: every answer right, no entry corrupt, nothing left over.
TEST_F(CacheTest, FourProcessesShareACacheWhileEvictionRuns) {
  std::string Dir = makeTempDir("tma-cache-four");
  std::string Cache = Dir + "/cache";
  fs::create_directories(Cache);
  // Old entries that eviction removes first.
  for (const char *Stem : {"libtorch-0ld1", "libtorch-0ld2", "preamble-0ld3"}) {
    writeFile(Cache + "/" + Stem + ".pch", std::string(20 << 20, 'x'));
    writeFile(Cache + "/" + Stem + ".deps", "old\n");
  }
  std::string Copies[2] = {Dir + "/one.cpp", Dir + "/two.cpp"};
  for (const std::string &C : Copies)
    writeFile(C, readFile(Seed));
  // Two flag sets, two shared entries of ~75 MB: a 120M cache holds one.
  const char *Variant[4] = {"", "-DTMA_VARIANT=1", "", "-DTMA_VARIANT=1"};
  llvm::sys::ProcessInfo P[4];
  std::string Out[4], Err[4];
  for (int I = 0; I < 4; ++I) {
    Out[I] = Dir + "/out" + std::to_string(I);
    Err[I] = Dir + "/err" + std::to_string(I);
    std::vector<llvm::StringRef> Args = {
        TMA_CLI,       "--cache-dir",
        Cache,         "--cache-size=120M",
        "-j",          "1",
        Copies[I % 2], Copies[(I + 1) % 2],
        "--",          "-std=c++17",
        "-isystem",    "/usr/include/torch/csrc/api/include"};
    if (*Variant[I])
      Args.push_back(Variant[I]);
    std::optional<llvm::StringRef> Redirects[] = {
        std::nullopt, llvm::StringRef(Out[I]), llvm::StringRef(Err[I])};
    P[I] = llvm::sys::ExecuteNoWait(TMA_CLI, Args, std::nullopt, Redirects);
    ASSERT_NE(P[I].Pid, llvm::sys::ProcessInfo::InvalidPid);
  }
  std::string Table = Expected->substr(0, Expected->find("----\n"));
  auto Renamed = [&](const std::string &Text, const std::string &Name) {
    std::string T = Text;
    for (size_t Pos; (Pos = T.find(Seed)) != std::string::npos;)
      T.replace(Pos, Seed.size(), Name);
    return T;
  };
  for (int I = 0; I < 4; ++I) {
    llvm::sys::ProcessInfo Done = llvm::sys::Wait(P[I], std::nullopt);
    EXPECT_EQ(Done.ReturnCode, 0) << readFile(Err[I]);
    std::string Got = readFile(Out[I]);
    // Both files' tables, in the order given.
    std::string Want = Renamed(Table, Copies[I % 2]);
    EXPECT_EQ(Got.substr(0, Want.size()), Want) << I;
    EXPECT_NE(Got.find(Renamed(Table, Copies[(I + 1) % 2])), std::string::npos)
        << I;
  }
  EXPECT_EQ(corruptEntries(Cache), std::vector<std::string>{});
  EXPECT_EQ(leftovers(Cache), std::vector<std::string>{});
  for (const char *Stem : {"libtorch-0ld1", "libtorch-0ld2", "preamble-0ld3"})
    EXPECT_FALSE(fs::exists(Cache + "/" + Stem + ".pch")) << Stem;
  EXPECT_LE(inspectCache(Cache).Bytes, uint64_t(120) << 20);
  fs::remove_directories(Dir);
}

} // namespace
