// The CUDA allocator summary of a trace (model/CudaMemory.h): the
// ledger's events replayed through the allocator model, and the cases
// where it must say unknown instead of guessing.
#include "model/CudaMemory.h"
#include "model/Interpreter.h"
#include "model/Ops.h"

#include <gtest/gtest.h>

using namespace tma;

namespace {

constexpr int64_t MiB = 1024 * 1024;

Statement statementAt(unsigned Line) {
  Statement S;
  S.Where.Line = Line;
  return S;
}

class CudaReplay : public ::testing::Test {
protected:
  Interpreter I{"f.cpp", "f", SourceSpan{}};
  ValueId make(SymSize Elements, std::optional<Device> Dev) {
    SourceSpan Where;
    Where.Line = Line;
    return I.apply("empty", Where, {}, {},
                   factory(Shape{Elements}, DType::Float32, Dev,
                           FillKind::Filled));
  }
  ValueId onCuda(SymSize Elements) {
    return make(Elements, Device{DeviceKind::CUDA, -1});
  }
  void statement(unsigned At, const std::function<void()> &Body) {
    Line = At;
    I.beginStatement(statementAt(At));
    Body();
    I.endStatement();
  }
  unsigned Line = 0;
};

TEST_F(CudaReplay, ACpuFunctionGetsNoSummary) {
  statement(1, [&] { I.bind("x", "x", make(4, Device{}), {}, {}, false); });
  EXPECT_FALSE(predictCudaAllocator(I.finish()));
}

TEST_F(CudaReplay, RoundsPoolsAndReusesInTheLedgersOrder) {
  // x: 1024 B -> a 1024 B block in a 2 MiB small segment. The temporary
  // of 1 MiB + 4 B -> a 1 MiB + 512 block in a 20 MiB large segment, freed
  // at the end of its statement; y reuses that block.
  statement(1, [&] { I.bind("x", "x", onCuda(256), {}, {}, false); });
  statement(2, [&] { onCuda(262145); });
  statement(3, [&] { I.bind("y", "y", onCuda(262145), {}, {}, false); });
  auto S = predictCudaAllocator(I.finish());
  ASSERT_TRUE(S);
  EXPECT_EQ(S->PeakAllocatedBytes, std::optional<int64_t>(1024 + MiB + 512));
  EXPECT_EQ(S->PeakReservedBytes, std::optional<int64_t>(2 * MiB + 20 * MiB));
  EXPECT_EQ(S->UnknownReason, "");
}

TEST_F(CudaReplay, ASymbolicSizeIsUnknownWithItsFormula) {
  statement(1, [&] {
    OpOutcome Empty = factory(Shape{4}, DType::Float32,
                              Device{DeviceKind::CUDA, -1}, FillKind::Filled);
    Empty.StorageBytes = SymSize::symbol("n") * SymSize(4);
    I.bind("x", "x", I.apply("empty", {}, {}, {}, Empty), {}, {}, false);
  });
  auto S = predictCudaAllocator(I.finish());
  ASSERT_TRUE(S);
  EXPECT_FALSE(S->PeakAllocatedBytes);
  EXPECT_FALSE(S->PeakReservedBytes);
  EXPECT_NE(S->UnknownReason.find("x's storage"), std::string::npos)
      << S->UnknownReason;
  EXPECT_NE(S->UnknownReason.find("is a formula (n * 4)"), std::string::npos)
      << S->UnknownReason;
}

TEST_F(CudaReplay, AStorageOfUnknownDeviceMakesItUnknown) {
  statement(1, [&] { I.bind("x", "x", onCuda(4), {}, {}, false); });
  statement(2, [&] { I.bind("y", "y", make(4, std::nullopt), {}, {}, false); });
  auto S = predictCudaAllocator(I.finish());
  ASSERT_TRUE(S);
  EXPECT_FALSE(S->PeakAllocatedBytes);
  EXPECT_EQ(S->UnknownReason, "the device of y's storage (line 2) is unknown");
}

TEST_F(CudaReplay, AnOpAllocatingInsideItselfOnCudaMakesItUnknown) {
  statement(1, [&] {
    OpOutcome Sum = factory(Shape{4}, DType::Float32,
                            Device{DeviceKind::CUDA, -1}, FillKind::Filled);
    Sum.TransientBytes = SymSize(64);
    I.bind("x", "x", I.apply("sum", {}, {}, {}, Sum), {}, {}, false);
  });
  auto S = predictCudaAllocator(I.finish());
  ASSERT_TRUE(S);
  EXPECT_FALSE(S->PeakReservedBytes);
  EXPECT_NE(S->UnknownReason.find("'sum'"), std::string::npos);
}

TEST_F(CudaReplay, CpuStoragesBesideCudaOnesAreLeftOut) {
  statement(1, [&] { I.bind("c", "c", make(1 << 20, Device{}), {}, {}, false); });
  statement(2, [&] { I.bind("g", "g", onCuda(1), {}, {}, false); });
  auto S = predictCudaAllocator(I.finish());
  ASSERT_TRUE(S);
  EXPECT_EQ(S->PeakAllocatedBytes, std::optional<int64_t>(512));
  EXPECT_EQ(S->PeakReservedBytes, std::optional<int64_t>(2 * MiB));
}

} // namespace
