// The seed exercise (testdata/seed/blocks.cpp) against every number in
// testdata/seed/blocks.expected.md, and every named tensor against what
// real LibTorch 1.13.1 reported (testdata/seed/blocks.truth.json, measured
// on the meta device). The file is parsed once for all tests.
#include "driver/Analysis.h"
#include "report/Report.h"
#include "tests/frontend/TraceLookup.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace tma;

namespace {

constexpr int64_t KiB = 1024, MiB = 1024 * KiB;

class SeedTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::string Error;
    auto DB = makeFixedDatabase({}, false, Error);
    ASSERT_TRUE(DB) << Error;
    Run = new AnalysisRun(
        analyzeFiles(*DB, {TMA_SOURCE_DIR "/testdata/seed/blocks.cpp"}));
  }
  static void TearDownTestSuite() { delete Run; }

  static const FunctionTrace &fn(const std::string &Name) {
    return tma::testing::findFunction(*Run, Name);
  }
  /// The row of the Nth binding of Name (reassignments are separate rows).
  static RowFacts row(const FunctionTrace &T, const std::string &Name,
                       int Nth = 0) {
    return tma::testing::findRow(T, Name, Nth);
  }
  static const Statement &statementAt(const FunctionTrace &T, unsigned Line) {
    for (const Statement &S : T.Statements)
      if (S.Where.Line == Line)
        return S;
    ADD_FAILURE() << "no statement at line " << Line;
    static Statement Empty;
    return Empty;
  }
  static int64_t sum(const FunctionTrace &T, const Statement &S,
                     std::optional<SymSize> OpEvent::*Field) {
    int64_t Total = 0;
    for (OpId Id : S.Ops) {
      const std::optional<SymSize> &V = T.Ops[Id].*Field;
      EXPECT_TRUE(V && V->constant()) << "a literal program gave a formula";
      Total += V && V->constant() ? *V->constant() : 0;
    }
    return Total;
  }

  static AnalysisRun *Run;
};
AnalysisRun *SeedTest::Run = nullptr;

void expectRow(const RowFacts &R, Dims Shape, DType Type, int64_t Bytes,
               const std::string &Kind, const std::string &Base,
               bool Contiguous) {
  ASSERT_TRUE(R.Value);
  EXPECT_EQ(R.Value->Sizes, std::optional<Dims>(Shape)) << R.B->Name;
  EXPECT_EQ(R.Value->Type, std::optional<DType>(Type)) << R.B->Name;
  EXPECT_EQ(R.StorageBytes, std::optional<int64_t>(Bytes)) << R.B->Name;
  EXPECT_EQ(rowKindName(R.Kind), Kind) << R.B->Name;
  EXPECT_EQ(R.Base, Base) << R.B->Name;
  EXPECT_EQ(R.Value->contiguous(), std::optional<bool>(Contiguous)) << R.B->Name;
}

TEST_F(SeedTest, ParsesWithoutErrors) {
  ASSERT_EQ(Run->Files.size(), 1u);
  EXPECT_FALSE(Run->Failed);
  EXPECT_EQ(Run->Files[0].Traces.size(), 4u);
}

TEST_F(SeedTest, Block1Rows) {
  const FunctionTrace &T = fn("block1");
  expectRow(row(T, "x"), {16, 1024, 4096}, DType::Float16, 128 * MiB, "alloc", "", true);
  expectRow(row(T, "a"), {16, 4096, 1024}, DType::Float16, 128 * MiB, "view", "x", false);
  expectRow(row(T, "b"), {16, 4096, 1024}, DType::Float16, 128 * MiB, "copy", "", true);
  expectRow(row(T, "c"), {65536, 1024}, DType::Float16, 128 * MiB, "view", "b", true);
  expectRow(row(T, "d"), {65536, 1024}, DType::Float32, 256 * MiB, "copy", "", true);
  expectRow(row(T, "e"), {65536, 512}, DType::Float32, 256 * MiB, "view", "d", false);
  expectRow(row(T, "f"), {65536, 512}, DType::Float32, 128 * MiB, "copy", "", true);
  // Keeps alive: e pins all of d.
  EXPECT_EQ(keepsAliveText(row(T, "a")), "x");
  EXPECT_EQ(keepsAliveText(row(T, "c")), "b");
  EXPECT_EQ(keepsAliveText(row(T, "e")), "all of d: 256 MiB for 128 MiB of view");
  EXPECT_EQ(keepsAliveText(row(T, "f")), "f");
  // The facts behind the words (model/RowFacts.h).
  RowFacts E = row(T, "e");
  EXPECT_EQ(E.Owner, StorageOwner::Named);
  EXPECT_EQ(E.OwnerName, "d");
  EXPECT_EQ(E.HeldBytes, std::optional<int64_t>(256 * MiB));
  EXPECT_EQ(E.ShownBytes, std::optional<int64_t>(128 * MiB));
  EXPECT_EQ(E.PinnedBytes, std::optional<int64_t>(128 * MiB));
  EXPECT_EQ(row(T, "a").PinnedBytes, std::nullopt);
}

TEST_F(SeedTest, Block1Answers) {
  const FunctionTrace &T = fn("block1");
  // 1. Live storage after f, nothing freed: 640 MiB.
  EXPECT_EQ(T.Summary.LiveBytesNothingFreed, std::optional<int64_t>(640 * MiB));
  EXPECT_EQ(T.Summary.PeakLiveBytes, std::optional<int64_t>(640 * MiB));
  // 2. The first full copy is b = a.contiguous(), 128 MiB.
  const OpEvent *FirstCopy = nullptr;
  for (const OpEvent &Op : T.Ops)
    if (Op.Kind == OpKind::Copy) {
      FirstCopy = &Op;
      break;
    }
  ASSERT_TRUE(FirstCopy);
  EXPECT_EQ(FirstCopy->Name, "contiguous");
  EXPECT_EQ(FirstCopy->Where.Line, 12u);
  EXPECT_EQ(FirstCopy->AllocatedBytes, std::optional<int64_t>(128 * MiB));
  // 3. d and f: the cast allocates 256 MiB, the clone of the slice 128 MiB;
  //    the slice shows 128 MiB of d's 256 MiB.
  EXPECT_EQ(row(T, "e").Value->logicalBytes(), std::optional<int64_t>(128 * MiB));
  EXPECT_EQ(T.Ops[T.producer(row(T, "f").B->Value)->Id].AllocatedBytes,
            std::optional<int64_t>(128 * MiB));
  // 4. d = c.to(kFloat32): 128 MiB read + 256 MiB written = 384 MiB.
  const Statement &Cast = statementAt(T, 14);
  EXPECT_EQ(sum(T, Cast, &OpEvent::ReadBytes), 128 * MiB);
  EXPECT_EQ(sum(T, Cast, &OpEvent::WrittenBytes), 256 * MiB);
  EXPECT_EQ(sum(T, Cast, &OpEvent::ReadBytes) + sum(T, Cast, &OpEvent::WrittenBytes),
            384 * MiB);
}

TEST_F(SeedTest, Block2) {
  const FunctionTrace &T = fn("block2");
  expectRow(row(T, "w"), {4096, 4096}, DType::BFloat16, 32 * MiB, "alloc", "", true);
  expectRow(row(T, "h"), {8, 4096}, DType::BFloat16, 64 * KiB, "alloc", "", true);
  expectRow(row(T, "y"), {8, 4096}, DType::BFloat16, 64 * KiB, "copy", "", true);
  expectRow(row(T, "z"), {2, 4, 4096}, DType::BFloat16, 64 * KiB, "view", "y", true);
  expectRow(row(T, "p"), {4, 2, 4096}, DType::BFloat16, 64 * KiB, "view", "y", false);
  expectRow(row(T, "q"), {4, 8192}, DType::BFloat16, 64 * KiB, "copy", "", true);
  // 1. y allocates, z and p do not, q copies 64 KiB.
  EXPECT_EQ(sum(T, statementAt(T, 23), &OpEvent::AllocatedBytes), 64 * KiB);
  EXPECT_EQ(sum(T, statementAt(T, 24), &OpEvent::AllocatedBytes), 0);
  EXPECT_EQ(sum(T, statementAt(T, 25), &OpEvent::AllocatedBytes), 0);
  EXPECT_EQ(sum(T, statementAt(T, 26), &OpEvent::AllocatedBytes), 64 * KiB);
  // 2. w.t() is a view.
  const OpEvent *Mm = T.producer(row(T, "y").B->Value);
  ASSERT_TRUE(Mm);
  ASSERT_EQ(Mm->Inputs.size(), 2u);
  const OpEvent *Wt = T.producer(Mm->Inputs[1]);
  ASSERT_TRUE(Wt);
  EXPECT_EQ(Wt->Name, "t");
  EXPECT_EQ(Wt->Kind, OpKind::View);
  // 3. A later q.contiguous() would be free: q is contiguous.
  EXPECT_EQ(row(T, "q").Value->contiguous(), std::optional<bool>(true));
}

TEST_F(SeedTest, Block3) {
  const FunctionTrace &T = fn("block3");
  expectRow(row(T, "ids"), {4, 2048}, DType::Int64, 64 * KiB, "alloc", "", true);
  expectRow(row(T, "emb"), {32000, 4096}, DType::BFloat16, 262144000, "alloc", "", true);
  // 2. The gather is a copy, not a view into emb.
  expectRow(row(T, "hidden", 0), {4, 2048, 4096}, DType::BFloat16, 64 * MiB, "copy", "", true);
  expectRow(row(T, "hidden", 1), {4, 2048, 4096}, DType::Float32, 128 * MiB, "copy", "", true);
  expectRow(row(T, "logits"), {4, 2048, 32000}, DType::Float32, 1000 * MiB, "copy", "", true);
  EXPECT_TRUE(row(T, "hidden", 1).B->Reassignment);
  // 3. The cast reads 64 MiB and writes 128 MiB.
  const Statement &Cast = statementAt(T, 35);
  EXPECT_EQ(sum(T, Cast, &OpEvent::ReadBytes), 64 * MiB);
  EXPECT_EQ(sum(T, Cast, &OpEvent::WrittenBytes), 128 * MiB);
}

TEST_F(SeedTest, PythonHabits) {
  const FunctionTrace &T = fn("block3_python_habits");
  // randint with options but no dtype: float32, 32 KiB.
  expectRow(row(T, "ids"), {4, 2048}, DType::Float32, 32 * KiB, "alloc", "", true);
  // emb[ids] with a 2-D index throws at run time.
  EXPECT_EQ(T.Throws, "Can only index with tensors that are scalars (zero-dim)");
  EXPECT_FALSE(row(T, "hidden").Value->Sizes.has_value());
}

// Every named tensor against what real LibTorch reported.
TEST_F(SeedTest, AgreesWithLibTorchTruth) {
  auto Buffer = llvm::MemoryBuffer::getFile(TMA_SOURCE_DIR
                                            "/testdata/seed/blocks.truth.json");
  ASSERT_TRUE(Buffer);
  auto Truth = llvm::json::parse((*Buffer)->getBuffer());
  ASSERT_TRUE(bool(Truth));
  int Compared = 0;
  for (const llvm::json::Value &F : *Truth->getAsArray()) {
    const llvm::json::Object &FO = *F.getAsObject();
    const FunctionTrace &T = fn(FO.getString("function")->str());
    std::map<std::string, int> Seen;
    for (const llvm::json::Value &TV : *FO.getArray("tensors")) {
      const llvm::json::Object &O = *TV.getAsObject();
      std::string Name = O.getString("name")->str();
      RowFacts R = row(T, Name, Seen[Name]++);
      ASSERT_TRUE(R.Value);
      Dims Shape, Strides;
      for (const auto &X : *O.getArray("shape"))
        Shape.push_back(*X.getAsInteger());
      for (const auto &X : *O.getArray("strides"))
        Strides.push_back(*X.getAsInteger());
      EXPECT_EQ(R.Value->Sizes, std::optional<Dims>(Shape)) << Name;
      EXPECT_EQ(R.Value->Strides, std::optional<Dims>(Strides)) << Name;
      EXPECT_EQ(R.Value->Offset, O.getInteger("offset")) << Name;
      ASSERT_TRUE(R.Value->Type) << Name;
      EXPECT_EQ(dtypeName(*R.Value->Type), O.getString("dtype")->str()) << Name;
      EXPECT_EQ(R.StorageBytes, O.getInteger("storage_bytes")) << Name;
      auto Base = O.getString("base");
      EXPECT_EQ(R.Base, Base ? Base->str() : "") << Name;
      EXPECT_EQ(R.Value->contiguous(), O.getBoolean("contiguous")) << Name;
      ++Compared;
    }
  }
  EXPECT_EQ(Compared, 20);
}

TEST_F(SeedTest, TableShowsTheSeedColumns) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  printTable(OS, Run->Files.at(0).Traces);
  OS.flush();
  for (const char *Expected :
       {"name", "shape", "dtype", "storage bytes", "view or copy", "keeps alive",
        "(16, 1024, 4096)", "128 MiB, shared", "view of x (transpose), not contiguous",
        "all of d: 256 MiB for 128 MiB of view", "live storage, nothing freed: 640 MiB",
        "read 128 MiB", "written 256 MiB", "moved 384 MiB", "250 MiB",
        "1000 MiB", "throws at run time: Can only index with tensors that are scalars"})
    EXPECT_NE(Out.find(Expected), std::string::npos) << Expected << "\n" << Out;
}

TEST_F(SeedTest, JsonFollowsTheSchema) {
  llvm::json::Value V = toJSON(Run->Files.at(0).Traces, {});
  const llvm::json::Object &Root = *V.getAsObject();
  EXPECT_EQ(Root.getInteger("version"), 1);
  const llvm::json::Array &Fns = *Root.getArray("functions");
  ASSERT_EQ(Fns.size(), 4u);
  const llvm::json::Object &B1 = *Fns[0].getAsObject();
  EXPECT_EQ(B1.getString("function"), "block1");
  const llvm::json::Object &X = *(*B1.getArray("tensors"))[0].getAsObject();
  EXPECT_EQ(X.getString("name"), "x");
  EXPECT_EQ(X.getInteger("line"), 10);
  EXPECT_EQ(X.getInteger("storage_bytes"), 134217728);
  EXPECT_EQ(X.getString("kind"), "alloc");
  EXPECT_EQ(X.getString("device"), "cuda");
  EXPECT_EQ(X.getString("op"), "randn");
  const llvm::json::Object &E = *(*B1.getArray("tensors"))[5].getAsObject();
  EXPECT_EQ(E.getString("base"), "d");
  EXPECT_EQ(E.getString("kind"), "view");
  const llvm::json::Object &Sum = *B1.getObject("summary");
  EXPECT_EQ(Sum.getInteger("live_bytes_nothing_freed"), 671088640);
  EXPECT_EQ(Sum.getInteger("unknowns"), 0);
  // The cast's op entry.
  bool FoundCast = false;
  for (const auto &Op : *B1.getArray("ops")) {
    const llvm::json::Object &O = *Op.getAsObject();
    if (O.getInteger("line") == 14) {
      FoundCast = true;
      EXPECT_EQ(O.getString("op"), "to");
      EXPECT_EQ(O.getInteger("allocated_bytes"), 268435456);
      EXPECT_EQ(O.getInteger("read_bytes"), 134217728);
      EXPECT_EQ(O.getInteger("written_bytes"), 268435456);
    }
  }
  EXPECT_TRUE(FoundCast);
  // Unknown is null, never a number.
  const llvm::json::Object &Habits = *Fns[3].getAsObject();
  const llvm::json::Object &Hidden = *(*Habits.getArray("tensors"))[2].getAsObject();
  EXPECT_EQ(Hidden.getString("name"), "hidden");
  EXPECT_EQ(Hidden.get("shape")->kind(), llvm::json::Value::Null);
  EXPECT_EQ(Hidden.get("storage_bytes")->kind(), llvm::json::Value::Null);
  EXPECT_TRUE(Hidden.getString("unknown_reason").has_value());
}

} // namespace
