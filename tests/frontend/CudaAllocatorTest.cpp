// The CUDA caching allocator summary (issue 37) through the whole analysis:
// testdata/cuda/allocator.cpp parsed with the real LibTorch headers, each
// expected figure worked out in that file's comments from the allocator's
// rules (model/CudaAllocator.h), and how the JSON report carries it.
#include "driver/Analysis.h"
#include "report/Report.h"
#include "tests/frontend/TraceLookup.h"

#include <gtest/gtest.h>

using namespace tma;

namespace {

constexpr int64_t MiB = 1024 * 1024;

class CudaAllocatorTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::string Error;
    auto DB = makeFixedDatabase({}, false, Error);
    ASSERT_TRUE(DB) << Error;
    Run = new AnalysisRun(
        analyzeFiles(*DB, {TMA_SOURCE_DIR "/testdata/cuda/allocator.cpp"}));
  }
  static void TearDownTestSuite() { delete Run; }
  static const FunctionTrace &function(const std::string &Name) {
    return tma::testing::findFunction(*Run, Name);
  }
  /// The function's summary object in the JSON report.
  static llvm::json::Object summaryJSON(const std::string &Name) {
    llvm::json::Value J = toJSON({function(Name)}, {});
    return *J.getAsObject()
                ->getArray("functions")
                ->front()
                .getAsObject()
                ->getObject("summary");
  }
  static AnalysisRun *Run;
};
AnalysisRun *CudaAllocatorTest::Run = nullptr;

TEST_F(CudaAllocatorTest, AFreedBlockIsReusedWithoutANewSegment) {
  const auto &Cuda = function("reuse_after_free").Summary.CudaAllocator;
  ASSERT_TRUE(Cuda);
  EXPECT_EQ(Cuda->PeakAllocatedBytes, std::optional<int64_t>(1024 + 24 * MiB));
  EXPECT_EQ(Cuda->PeakReservedBytes, std::optional<int64_t>(2 * MiB + 24 * MiB));
  EXPECT_EQ(Cuda->UnknownReason, "");
}

TEST_F(CudaAllocatorTest, ALargeRequestGetsItsOwnRoundedSegment) {
  llvm::json::Object S = summaryJSON("own_segment");
  const llvm::json::Object *Cuda = S.getObject("cuda_allocator");
  ASSERT_TRUE(Cuda);
  EXPECT_EQ(Cuda->getInteger("peak_allocated_bytes"), 12 * MiB + 512);
  EXPECT_EQ(Cuda->getInteger("peak_reserved_bytes"), 14 * MiB);
  EXPECT_FALSE(Cuda->get("unknown_reason"));
}

TEST_F(CudaAllocatorTest, ASymbolicSizeIsNullWithAReason) {
  llvm::json::Object S = summaryJSON("symbolic_size");
  const llvm::json::Object *Cuda = S.getObject("cuda_allocator");
  ASSERT_TRUE(Cuda);
  EXPECT_EQ(*Cuda->get("peak_allocated_bytes"), llvm::json::Value(nullptr));
  EXPECT_EQ(*Cuda->get("peak_reserved_bytes"), llvm::json::Value(nullptr));
  auto Reason = Cuda->getString("unknown_reason");
  ASSERT_TRUE(Reason);
  EXPECT_NE(Reason->find("x's storage (line 31) is a formula (n * 4)"),
            llvm::StringRef::npos)
      << Reason->str();
}

TEST_F(CudaAllocatorTest, AFunctionWithoutCudaTensorsHasNoField) {
  EXPECT_FALSE(function("cpu_only").Summary.CudaAllocator);
  EXPECT_FALSE(summaryJSON("cpu_only").get("cuda_allocator"));
}

TEST_F(CudaAllocatorTest, TheTableShowsItUnderThePeak) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printTable(OS, {function("own_segment")});
  OS.flush();
  // The line after the peak's (b, line 26, reaches it).
  EXPECT_NE(Text.find(" at line 26\n"
                      "  CUDA caching allocator: peak allocated 12.00 MiB "
                      "(12583424 B), peak reserved 14 MiB\n"),
            std::string::npos)
      << Text;
}

} // namespace
