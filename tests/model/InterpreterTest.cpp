// Unit tests of the Interpreter's lifetime ledger as the trace records it:
// when each storage was released (the statement, and whether at its
// scope's end) and until when each name held its value. The HTML report
// draws storages as bands from these; the peak and live bytes are tested
// through the seed elsewhere.
#include "model/Interpreter.h"
#include "model/Ops.h"

#include <gtest/gtest.h>

using namespace tma;

namespace {

OpOutcome newTensor(int64_t Elements) {
  return factory(Dims{Elements}, DType::Float32, Device{}, FillKind::Filled);
}

Statement statementAt(unsigned Line) {
  Statement S;
  S.Where.Line = Line;
  return S;
}

class Ledger : public ::testing::Test {
protected:
  Interpreter I{"f.cpp", "f", SourceSpan{}};
  ValueId allocate(int64_t Elements) {
    return I.apply("randn", {}, {}, {}, newTensor(Elements));
  }
};

TEST_F(Ledger, TemporaryIsReleasedAfterItsStatement) {
  I.beginStatement(statementAt(1));
  allocate(4); // unnamed: dies with the full expression
  I.endStatement();
  FunctionTrace T = I.finish();
  ASSERT_EQ(T.Storages.size(), 1u);
  ASSERT_TRUE(T.Storages[0].ReleasedAfter);
  EXPECT_EQ(*T.Storages[0].ReleasedAfter, 0u);
  EXPECT_FALSE(T.Storages[0].ReleasedAtScopeEnd);
}

TEST_F(Ledger, ReassignmentReleasesTheOldStorageAndEndsTheBinding) {
  I.enterScope();
  I.beginStatement(statementAt(1));
  I.bind("x", "x", allocate(4), {}, {}, false);
  I.endStatement();
  I.beginStatement(statementAt(2));
  I.endStatement();
  I.beginStatement(statementAt(3));
  I.bind("x", "x", allocate(8), {}, {}, true);
  I.endStatement();
  I.exitScope();
  FunctionTrace T = I.finish();
  ASSERT_EQ(T.Storages.size(), 2u);
  EXPECT_EQ(T.Storages[0].ReleasedAfter, std::optional<unsigned>(2));
  EXPECT_FALSE(T.Storages[0].ReleasedAtScopeEnd);
  EXPECT_EQ(T.Storages[1].ReleasedAfter, std::optional<unsigned>(2));
  EXPECT_TRUE(T.Storages[1].ReleasedAtScopeEnd);
  ASSERT_EQ(T.Bindings.size(), 2u);
  EXPECT_EQ(T.Bindings[0].HeldUntil, std::optional<unsigned>(2));
  EXPECT_FALSE(T.Bindings[0].HeldToScopeEnd);
  EXPECT_EQ(T.Bindings[1].HeldUntil, std::optional<unsigned>(2));
  EXPECT_TRUE(T.Bindings[1].HeldToScopeEnd);
}

TEST_F(Ledger, AViewKeepsItsBaseAliveAfterTheBaseNameEnds) {
  I.enterScope();
  I.beginStatement(statementAt(1));
  I.bind("x", "x", allocate(4), {}, {}, false);
  I.endStatement();
  I.enterScope();
  I.beginStatement(statementAt(3));
  ValueId X = I.lookup("x");
  I.bind("v", "v", I.apply("view", {}, {}, {X}, alias(I.value(X))), {}, {},
         false);
  I.endStatement();
  I.beginStatement(statementAt(4));
  I.bind("x", "x", allocate(2), {}, {}, true); // x lets go; v still holds
  I.endStatement();
  I.exitScope(); // v's scope ends after statement 2
  I.beginStatement(statementAt(6));
  I.endStatement();
  I.exitScope();
  FunctionTrace T = I.finish();
  ASSERT_EQ(T.Storages.size(), 2u);
  EXPECT_EQ(T.Storages[0].ReleasedAfter, std::optional<unsigned>(2));
  EXPECT_TRUE(T.Storages[0].ReleasedAtScopeEnd);
  EXPECT_EQ(T.Storages[1].ReleasedAfter, std::optional<unsigned>(3));
  ASSERT_EQ(T.Bindings.size(), 3u);
  EXPECT_EQ(T.Bindings[0].HeldUntil, std::optional<unsigned>(2)); // x, 1st
  EXPECT_EQ(T.Bindings[1].HeldUntil, std::optional<unsigned>(2)); // v
  EXPECT_TRUE(T.Bindings[1].HeldToScopeEnd);
  EXPECT_EQ(T.Bindings[2].HeldUntil, std::optional<unsigned>(3)); // x, 2nd
}

TEST_F(Ledger, ExternalStorageIsNeverReleased) {
  ValueId P = I.external(unknownTensor("parameter"));
  I.bind("p", "p", P, {}, {}, false, /*IsParameter=*/true);
  I.beginStatement(statementAt(1));
  I.endStatement();
  FunctionTrace T = I.finish();
  ASSERT_EQ(T.Storages.size(), 1u);
  EXPECT_FALSE(T.Storages[0].ReleasedAfter);
  EXPECT_EQ(T.Bindings[0].HeldUntil, std::optional<unsigned>(0));
}

} // namespace

// A run-time choice between tensors (ValueInfo::MayBe): it may share a
// tensor with each candidate, through nested choices, and with nothing
// else.
TEST_F(Ledger, AChoiceMayBeEachOfItsCandidatesAndNothingElse) {
  I.beginStatement(statementAt(1));
  ValueId A = allocate(4), B = allocate(4), C = allocate(4);
  ValueId AB = I.unknown("?:", "chosen at run time", {});
  I.mayBe(AB, {A, B});
  ValueId Nested = I.unknown("?:", "chosen at run time", {});
  I.mayBe(Nested, {AB, C});
  I.endStatement();
  EXPECT_TRUE(I.mayShareTensor(AB, A));
  EXPECT_TRUE(I.mayShareTensor(B, AB));
  EXPECT_FALSE(I.mayShareTensor(AB, C));
  EXPECT_TRUE(I.mayShareTensor(Nested, A));
  EXPECT_TRUE(I.mayShareTensor(Nested, C));
  EXPECT_TRUE(I.mayShareTensor(Nested, AB));
  EXPECT_FALSE(I.mayShareTensor(A, B));
}

// What unfollowed code returns may be any tensor (a std::function that
// returns its argument); one known to be a choice is only its candidates.
TEST_F(Ledger, AnUnfollowedResultMayBeAnyTensorUntilItIsAChoice) {
  I.beginStatement(statementAt(1));
  ValueId A = allocate(4), B = allocate(4);
  ValueId Opaque = I.unknown("call", "call to a lambda is not analysed", {});
  ValueId Member = I.unknown("member", "a member", {},
                             Interpreter::Provenance::External);
  ValueId Choice = I.unknown("?:", "chosen at run time", {});
  I.mayBe(Choice, {A});
  I.endStatement();
  EXPECT_TRUE(I.mayShareTensor(Opaque, A));
  EXPECT_TRUE(I.mayShareTensor(B, Opaque));
  EXPECT_FALSE(I.mayShareTensor(Member, A));
  EXPECT_TRUE(I.mayShareTensor(Choice, A));
  EXPECT_FALSE(I.mayShareTensor(Choice, B));
}

// What several tensors have alike: their layout and dtype when all share
// it, the device only when all share it; nothing when a stride differs.
TEST(CommonLayout, KeepsWhatEveryValueShares) {
  TensorValue A = makeContiguous({2, 3}, DType::Float32, Device{});
  TensorValue B = A;
  B.Dev.reset();
  auto Common = commonLayout({A, B}, "chosen at run time");
  ASSERT_TRUE(Common);
  ASSERT_TRUE(Common->Sizes);
  EXPECT_EQ(Common->Sizes->size(), 2u);
  EXPECT_EQ(Common->Type, std::optional<DType>(DType::Float32));
  EXPECT_FALSE(Common->Dev);
  EXPECT_EQ(Common->Storage, NoStorage);
  EXPECT_EQ(Common->UnknownReason, "chosen at run time");

  TensorValue Transposed = A;
  Transposed.Strides = Shape{SymSize(1), SymSize(2)};
  EXPECT_FALSE(commonLayout({A, Transposed}, "r"));
  TensorValue Double = makeContiguous({2, 3}, DType::Float64, Device{});
  EXPECT_FALSE(commonLayout({A, Double}, "r"));
  EXPECT_FALSE(commonLayout({A, unknownTensor("no shape")}, "r"));
}

// An unrolled loop (model/UnrolledLoops.cpp): each iteration's statements
// are copies in the trace; the ledger counts them all, the peak windows
// give each iteration's peak, and folding leaves one row per statement
// with the most live bytes any copy had after it.
TEST_F(Ledger, UnrolledIterationsFoldIntoTheFirstAndKeepTheirPeaks) {
  I.enterScope();
  I.beginStatement(statementAt(1));
  I.bind("keep", "keep", allocate(4), {}, {}, false); // 16 B before the loop
  I.endStatement();
  std::vector<std::optional<SymSize>> Peaks;
  std::vector<unsigned> Begins;
  for (int Iteration = 0; Iteration < 3; ++Iteration) {
    Begins.push_back(static_cast<unsigned>(I.trace().Statements.size()));
    I.openPeakWindow();
    I.enterScope();
    Statement S = statementAt(3);
    S.Where.BeginRaw = 30; // the same statement of the source each time
    S.InLoop = S.Unrolled = true;
    I.beginStatement(S);
    // The first iteration makes a larger tensor than the later ones.
    I.bind("t", "t", allocate(Iteration == 0 ? 8 : 2), {}, {}, false);
    I.endStatement();
    I.exitScope();
    Peaks.push_back(I.closePeakWindow());
    if (Iteration > 0)
      I.markRepeats(Begins.back(), Begins.front(), 1);
  }
  EXPECT_EQ(Peaks[0], std::optional<SymSize>(SymSize(16 + 32)));
  EXPECT_EQ(Peaks[1], std::optional<SymSize>(SymSize(16 + 8)));
  EXPECT_EQ(I.liveNow(), std::optional<SymSize>(SymSize(16)));
  I.endUnrolledLoop({}, SymSize(8 * 7), SymSize(8 * 7)); // 7 iterations more
  I.exitScope();
  FunctionTrace T = I.finish();
  EXPECT_EQ(T.Summary.PeakLiveBytes, std::optional<SymSize>(SymSize(48)));
  EXPECT_EQ(T.Summary.LiveBytesNothingFreed,
            std::optional<SymSize>(SymSize(16 + 32 + 8 + 8 + 56)));
  foldRepeatedIterations(T);
  ASSERT_EQ(T.Statements.size(), 2u);
  EXPECT_EQ(T.Bindings.size(), 2u); // keep, and t once
  EXPECT_EQ(T.Ops.size(), 2u);
  EXPECT_EQ(T.Summary.PeakStatement, 1u);
  // Every storage's producer is an op that is still there.
  for (const StorageInfo &S : T.Storages)
    EXPECT_TRUE(S.Producer >= 0 && static_cast<size_t>(S.Producer) < T.Ops.size());
}

// A copy that is not the same statement of the source (another place, or
// as many ops) stays a row of its own rather than being merged.
TEST_F(Ledger, ACopyOfAnotherStatementIsNotFolded) {
  I.beginStatement(statementAt(1));
  allocate(4);
  I.endStatement();
  Statement Other = statementAt(2);
  Other.Where.BeginRaw = 99;
  I.beginStatement(Other);
  allocate(4);
  I.endStatement();
  I.markRepeats(1, 0, 1);
  FunctionTrace T = I.finish();
  foldRepeatedIterations(T);
  EXPECT_EQ(T.Statements.size(), 2u);
}
