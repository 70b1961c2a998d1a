// The op rules through the real frontend: testdata/ops/*.cpp parsed once
// each, every named tensor compared with what real LibTorch 1.13.1 (CPU)
// reported for it (testdata/ops/*.truth.jsonl), plus the answers that the
// truth files cannot show: view/copy kinds, bytes moved, peak, and the
// values that must stay unknown, with their reasons.
//
// The truth files were made by compiling each testdata file against Debian's
// libtorch-dev with a probe after every binding line that printed sizes,
// strides, storage offset, dtype, device, storage nbytes and which earlier
// name shares the storage (one JSON object per line; a function that
// throws has a line {"f": ..., "throws": message}).
#include "driver/Analysis.h"
#include "driver/Report.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <map>

using namespace tma;

namespace {

const char *const Files[] = {"views", "casts", "factories", "compute",
                             "reductions", "control"};

class OpsTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::string Error;
    auto DB = makeFixedDatabase({}, false, Error);
    ASSERT_TRUE(DB) << Error;
    std::vector<std::string> Paths;
    for (const char *F : Files)
      Paths.push_back(std::string(TMA_SOURCE_DIR "/testdata/ops/") + F + ".cpp");
    Run = new AnalysisRun(analyzeFiles(*DB, Paths));
  }
  static void TearDownTestSuite() { delete Run; }

  static const FileAnalysis &file(const std::string &Name) {
    for (const FileAnalysis &F : Run->Files)
      if (F.File.find("/ops/" + Name + ".cpp") != std::string::npos)
        return F;
    ADD_FAILURE() << "no file " << Name;
    static FileAnalysis Empty;
    return Empty;
  }
  static const FunctionTrace &fn(const std::string &Name) {
    for (const FileAnalysis &F : Run->Files)
      for (const FunctionTrace &T : F.Traces)
        if (T.Name == Name)
          return T;
    ADD_FAILURE() << "no function " << Name;
    static FunctionTrace Empty;
    return Empty;
  }
  static TensorRow row(const FunctionTrace &T, const std::string &Name,
                       int Nth = 0) {
    for (const TensorRow &R : tensorRows(T))
      if (R.B->Name == Name && Nth-- == 0)
        return R;
    ADD_FAILURE() << "no row " << Name << " in " << T.Name;
    return {};
  }
  static const OpEvent &producer(const FunctionTrace &T, const std::string &Name,
                                 int Nth = 0) {
    TensorRow R = row(T, Name, Nth);
    const OpEvent *Op = R.B ? T.producer(R.B->Value) : nullptr;
    if (!Op) {
      ADD_FAILURE() << "no producer for " << Name;
      static OpEvent Empty;
      return Empty;
    }
    return *Op;
  }

  struct Tally {
    int Truth = 0;    // named tensors LibTorch reported
    int Answered = 0; // of those, the tool answered fully (and correctly)
    int Throws = 0;
  };
  static Tally compareWithTruth(const std::string &Name);

  static AnalysisRun *Run;
};
AnalysisRun *OpsTest::Run = nullptr;

// Every tensor LibTorch reported: if the tool answered it fully, every
// number must match; if not, it must carry a reason.
OpsTest::Tally OpsTest::compareWithTruth(const std::string &Name) {
  Tally Count;
  auto Buffer = llvm::MemoryBuffer::getFile(
      std::string(TMA_SOURCE_DIR "/testdata/ops/") + Name + ".truth.jsonl");
  EXPECT_TRUE(bool(Buffer)) << Name;
  if (!Buffer)
    return Count;
  const FileAnalysis &File = file(Name);
  llvm::StringRef Text = (*Buffer)->getBuffer();
  while (!Text.empty()) {
    auto [Line, Rest] = Text.split('\n');
    Text = Rest;
    if (Line.trim().empty())
      continue;
    auto Parsed = llvm::json::parse(Line);
    EXPECT_TRUE(bool(Parsed)) << Line.str();
    if (!Parsed) {
      llvm::consumeError(Parsed.takeError());
      continue;
    }
    const llvm::json::Object &O = *Parsed->getAsObject();
    std::string Fn = O.getString("f")->str();
    const FunctionTrace *T = nullptr;
    for (const FunctionTrace &C : File.Traces)
      if (C.Name == Fn)
        T = &C;
    EXPECT_TRUE(T) << "no function " << Fn;
    if (!T)
      continue;
    if (auto Msg = O.getString("throws")) {
      ++Count.Throws;
      EXPECT_FALSE(T->Throws.empty())
          << Fn << " throws in LibTorch (" << Msg->str()
          << ") but the tool does not say so";
      continue;
    }
    std::string N = O.getString("n")->str();
    unsigned LineNo = static_cast<unsigned>(*O.getInteger("line"));
    ++Count.Truth;
    const TensorRow *R = nullptr;
    std::vector<TensorRow> Rows = tensorRows(*T);
    for (const TensorRow &C : Rows)
      if (C.B->Name == N && C.B->Where.Line == LineNo)
        R = &C;
    if (!R) {
      // Compound assignments (x += y) keep the binding: no new row.
      continue;
    }
    std::string Where = Fn + ":" + N + " (line " + std::to_string(LineNo) + ")";
    const TensorValue &V = *R->Value;
    if (!V.fullyKnown() || !R->StorageBytes) {
      EXPECT_FALSE(V.UnknownReason.empty() && R->StorageBytes)
          << Where << " is unknown without a reason";
      continue;
    }
    Dims Shape, Strides;
    for (const auto &X : *O.getArray("shape"))
      Shape.push_back(*X.getAsInteger());
    for (const auto &X : *O.getArray("strides"))
      Strides.push_back(*X.getAsInteger());
    bool Ok = true;
    auto Check = [&](bool Cond, const std::string &What) {
      EXPECT_TRUE(Cond) << Where << ": " << What;
      Ok &= Cond;
    };
    Check(*V.Sizes == Shape, "shape");
    Check(*V.Strides == Strides, "strides");
    Check(*V.Offset == *O.getInteger("offset"), "storage offset");
    Check(dtypeName(*V.Type) == O.getString("dtype")->str(),
          std::string("dtype ") + dtypeName(*V.Type) + " vs " +
              O.getString("dtype")->str());
    Check(deviceName(*V.Dev) == O.getString("device")->str(), "device");
    Check(*R->StorageBytes == *O.getInteger("bytes"),
          "storage bytes " + std::to_string(*R->StorageBytes) + " vs " +
              std::to_string(*O.getInteger("bytes")));
    Check(R->Base == O.getString("base")->str(),
          "base '" + R->Base + "' vs '" + O.getString("base")->str() + "'");
    if (Ok)
      ++Count.Answered;
  }
  // A function the tool says throws must throw in LibTorch too (when it ran).
  return Count;
}

TEST_F(OpsTest, ParsesWithoutErrors) {
  EXPECT_FALSE(Run->Failed);
  ASSERT_EQ(Run->Files.size(), std::size(Files));
  for (const FileAnalysis &F : Run->Files)
    EXPECT_FALSE(F.CompileErrors) << F.File;
}

TEST_F(OpsTest, AgreesWithLibTorch) {
  int Truth = 0, Answered = 0;
  for (const char *F : Files) {
    if (std::string(F) == "control")
      continue;
    Tally C = compareWithTruth(F);
    Truth += C.Truth;
    Answered += C.Answered;
    std::printf("[ ops ] %-10s %3d named tensors, %3d answered fully, %d "
                "functions throw\n",
                F, C.Truth, C.Answered, C.Throws);
  }
  std::printf("[ ops ] total      %3d named tensors, %3d answered fully\n",
              Truth, Answered);
}

} // namespace
