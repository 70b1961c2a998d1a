// Unit and property tests for model/ShapeEnv: facts, three-valued
// decisions, the recorded default assumptions, bindings and printing.
//
// The randomized test checks soundness, the property every decision rests
// on: whenever the environment answers True or False for a random
// comparison, that answer holds for every draw of values satisfying the
// facts and the assumptions it recorded.
#include "model/Assume.h"
#include "model/Decide.h"
#include "model/Geometry.h"
#include "model/ShapeEnv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace tma;

namespace {

/// --gtest_random_seed=N explores other draws; the default (0) keeps the
/// suite deterministic.
uint64_t extraSeed() { return uint64_t(GTEST_FLAG_GET(random_seed)); }

Tri isMultiple(ShapeEnv &Env, const SymSize &A, const SymSize &B) {
  return Env.decide(SymRelation::multiple(A, B));
}

struct Env3 {
  ShapeEnv Env;
  SymSize B, T, C;
  Env3() {
    B = Env.tensorSize("x", 0);
    T = Env.tensorSize("x", 1);
    C = Env.tensorSize("x", 2);
    Env.setDisplayName("x.size(0)", "B");
    Env.setDisplayName("x.size(1)", "T");
    Env.setDisplayName("x.size(2)", "C");
  }
};

} // namespace

TEST(ShapeEnvTest, SizesAreAssumedAtLeastTwoAndTheAssumptionIsStated) {
  Env3 E;
  // From the facts alone (a size is >= 0) B == 1 is open.
  EXPECT_EQ(E.Env.decideFromFacts(SymRelation::eq(E.B, 1)), Tri::Unknown);
  EXPECT_TRUE(E.Env.assumptions().empty());
  // The 0/1 specialisation settles it, and says so.
  EXPECT_EQ(E.Env.eq(E.B, 1), Tri::False);
  EXPECT_EQ(E.Env.assumptions(), std::vector<std::string>{"x.size(0) >= 2"});
  // Decisions the facts settle assume nothing.
  EXPECT_EQ(E.Env.le(E.B * 0, E.T), Tri::True);
  EXPECT_EQ(E.Env.assumptions().size(), 1u);
}

TEST(ShapeEnvTest, OnlyTheNeededAssumptionsAreRecorded) {
  Env3 E;
  // B*T - B = B*(T-1) >= 0 needs T >= 1, not anything about B.
  EXPECT_EQ(E.Env.decide(SymRelation::ge(E.B * E.T, E.B)), Tri::True);
  EXPECT_EQ(E.Env.assumptions(), std::vector<std::string>{"x.size(1) >= 1"});
  // (B-1)*(T-1) > 0 needs both at 2 (T's bound strengthened in place).
  EXPECT_EQ(E.Env.decide(SymRelation::gt((E.B - 1) * (E.T - 1), 0)), Tri::True);
  EXPECT_EQ(E.Env.assumptions(),
            (std::vector<std::string>{"x.size(1) >= 2", "x.size(0) >= 2"}));
}

TEST(ShapeEnvTest, UndecidableStaysUnknown) {
  Env3 E;
  EXPECT_EQ(E.Env.eq(E.B, E.T), Tri::Unknown);
  EXPECT_EQ(E.Env.lt(E.B, E.T), Tri::Unknown);
  EXPECT_EQ(isMultiple(E.Env, E.C, E.T), Tri::Unknown);
  EXPECT_EQ(isMultiple(E.Env, E.C, 4), Tri::Unknown);
  SymSize N = E.Env.integer("n");
  EXPECT_EQ(E.Env.decide(SymRelation::ge(N, 0)), Tri::Unknown);
  EXPECT_EQ(E.Env.eq(N, 1), Tri::Unknown); // an int is not size-like
  EXPECT_TRUE(E.Env.assumptions().empty());
}

TEST(ShapeEnvTest, AFactOverridesTheDefault) {
  Env3 E;
  EXPECT_EQ(E.Env.addFact(SymRelation::eq(E.T, 1)),
            ShapeEnv::FactResult::Added);
  EXPECT_EQ(E.Env.eq(E.T, 1), Tri::True);
  EXPECT_EQ(E.Env.simplify(E.B * E.T * E.C), E.B * E.C);
  // n <= 1 keeps the default away from n even once it is a size.
  SymSize N = E.Env.integer("n");
  E.Env.markSizeLike("n");
  E.Env.addFact(SymRelation::le(N, 1));
  EXPECT_EQ(E.Env.eq(N, 1), Tri::Unknown);
  EXPECT_EQ(E.Env.decide(SymRelation::ge(N, 0)), Tri::True);
  EXPECT_TRUE(E.Env.assumptions().empty());
}

TEST(ShapeEnvTest, FactsContradictingWhatIsKnownOrAssumed) {
  Env3 E;
  EXPECT_EQ(E.Env.addFact(SymRelation::eq(E.C, 3)),
            ShapeEnv::FactResult::Added);
  EXPECT_EQ(E.Env.addFact(SymRelation::eq(E.C, 4)),
            ShapeEnv::FactResult::Contradicts);
  EXPECT_EQ(E.Env.addFact(SymRelation::ge(E.C, 2)),
            ShapeEnv::FactResult::AlreadyKnown);
  // An assumption made earlier, then a check that says otherwise.
  EXPECT_EQ(E.Env.eq(E.B, 1), Tri::False); // assumes x.size(0) >= 2
  EXPECT_EQ(E.Env.addFact(SymRelation::le(E.B, 1)),
            ShapeEnv::FactResult::ContradictsAssumption);
}

TEST(ShapeEnvTest, EqualitiesSubstituteTheLaterSymbol) {
  Env3 E;
  SymSize W0 = E.Env.tensorSize("w", 0);
  SymSize N = E.Env.integer("n_embd");
  E.Env.addFact(SymRelation::eq(W0, E.C));
  EXPECT_EQ(E.Env.simplify(W0 * 4), E.C * 4);
  E.Env.addFact(SymRelation::eq(E.C, N)); // n_embd is later: it goes
  EXPECT_EQ(E.Env.simplify(N), E.C);
  EXPECT_EQ(E.Env.simplify(W0 + N), 2 * E.C);
  // Rank facts turn into numbers.
  SymSize D = E.Env.tensorDim("x");
  E.Env.addFact(SymRelation::eq(D, 3));
  EXPECT_EQ(E.Env.simplify(D).constant(), 3);
  // A non-linear equality is kept as a fact both ways.
  SymSize Numel = E.Env.tensorNumel("y");
  E.Env.addFact(SymRelation::eq(Numel, E.B * E.T));
  EXPECT_EQ(E.Env.simplify(Numel), E.B * E.T);
  EXPECT_EQ(E.Env.facts().size(), 4u);
}

TEST(ShapeEnvTest, DivisibilityFactsMakeHeadSplitsExact) {
  Env3 E;
  SymSize H = E.Env.integer("n_head");
  E.Env.markSizeLike("n_head");
  EXPECT_EQ(E.Env.addFact(SymRelation::multiple(E.C, H)),
            ShapeEnv::FactResult::Added);
  SymSize D = SymSize::floorDiv(E.C, H);
  // view({B, T, H, C / H}) has the numel of (B, T, C).
  EXPECT_EQ(E.Env.simplify(E.B * E.T * H * D), E.B * E.T * E.C);
  EXPECT_EQ(E.Env.simplify(SymSize::mod(E.C, H)), SymSize(0));
  EXPECT_EQ(isMultiple(E.Env, E.B * E.C, H), Tri::True);
  EXPECT_EQ(isMultiple(E.Env, E.B * E.C + E.T, H), Tri::Unknown);
  // Constant divisors: C % 64 == 0 makes 2*C a multiple of 128 and 32.
  Env3 F;
  F.Env.addFact(SymRelation::multiple(F.C, 64));
  EXPECT_EQ(isMultiple(F.Env, 2 * F.C, 128), Tri::True);
  EXPECT_EQ(isMultiple(F.Env, F.C, 32), Tri::True);
  EXPECT_EQ(isMultiple(F.Env, F.C, 128), Tri::Unknown);
  EXPECT_EQ(isMultiple(F.Env, 4 * F.B + 2, 4), Tri::False);
  EXPECT_EQ(F.Env.simplify(SymSize::floorDiv(F.C, 64) * 64), F.C);
}

TEST(ShapeEnvTest, StatedAssumptionsAreListedAndUsed) {
  Env3 E;
  SymSize H = E.Env.integer("n_head");
  E.Env.assume(SymRelation::multiple(E.C, H));
  E.Env.assume("x.is_contiguous()");
  EXPECT_EQ(E.Env.assumptions(),
            (std::vector<std::string>{"x.size(2) % n_head == 0",
                                      "x.is_contiguous()"}));
  EXPECT_EQ(isMultiple(E.Env, E.C, H), Tri::True);
  EXPECT_TRUE(E.Env.facts().empty()); // the code did not say it
}

TEST(ShapeEnvTest, MaxAndMinResolveUnderFactsAndDefaults) {
  Env3 E;
  // contiguous_strides multiplies max(size, 1).
  EXPECT_EQ(E.Env.max(E.C, 1), E.C);
  EXPECT_EQ(E.Env.assumptions(), std::vector<std::string>{"x.size(2) >= 1"});
  // A slice end clamped to the size: min(64, T) is open without a fact...
  EXPECT_EQ(E.Env.min(E.T, 64), SymSize::min(E.T, 64));
  // ...and settled by one.
  E.Env.addFact(SymRelation::ge(E.T, 64));
  EXPECT_EQ(E.Env.min(E.T, 64), SymSize(64));
  EXPECT_EQ(E.Env.simplify(SymSize::max(E.B * E.T, E.B)), E.B * E.T);
}

TEST(ShapeEnvTest, RangesOfKindsAndOperations) {
  ShapeEnv Env;
  SymSize Es = Env.tensorElementSize("x");
  EXPECT_EQ(Env.decideFromFacts(SymRelation::ge(Es, 1)), Tri::True);
  EXPECT_EQ(Env.decideFromFacts(SymRelation::le(Es, 16)), Tri::True);
  SymSize S = Env.tensorSize("x", 0);
  auto R = Env.range(SymSize::mod(S, 8));
  EXPECT_EQ(R.Lo, 0);
  EXPECT_EQ(R.Hi, 7);
  R = Env.range(SymSize::floorDiv(S + 1, 2), /*Defaults=*/true);
  EXPECT_EQ(R.Lo, 1);
  EXPECT_FALSE(R.Hi);
  // Huge bounds become "unbounded", never a wrapped number.
  SymSize Huge = S * S * S * S;
  Env.addFact(SymRelation::ge(S, int64_t(1) << 40));
  R = Env.range(Huge * 1024);
  EXPECT_TRUE(R.Lo);
  EXPECT_FALSE(R.Hi);
  EXPECT_EQ(Env.decideFromFacts(SymRelation::gt(Huge * 1024, 0)), Tri::True);
  // Decisions on values that overflow are Unknown.
  SymSize Over = S * INT64_MAX * 4;
  EXPECT_TRUE(Over.isError());
  EXPECT_EQ(Env.decide(SymRelation::gt(Over, 0)), Tri::Unknown);
}

TEST(ShapeEnvTest, BindingsGiveNumbersWithoutChangingFormulas) {
  Env3 E;
  SymSize Bytes = 2 * E.B * E.T * 4096;
  EXPECT_EQ(E.Env.formatBytes(Bytes), "8192·B·T B");
  ASSERT_TRUE(E.Env.bind("B", 16));
  ASSERT_TRUE(E.Env.bind("x.size(1)", 1024));
  std::string Err;
  EXPECT_FALSE(E.Env.bind("Q", 3, &Err));
  EXPECT_EQ(Err, "no symbol named 'Q'");
  EXPECT_EQ(E.Env.formatBytes(Bytes), "8192·B·T B (128 MiB at B=16, T=1024)");
  EXPECT_EQ(E.Env.toCpp(Bytes), "x.size(0) * x.size(1) * 8192");
  EXPECT_EQ(E.Env.evaluate(Bytes).Value, int64_t(128) << 20);
  EXPECT_EQ(E.Env.formatBytes(4096), "4 KiB");
  // An equality carries a binding across.
  SymSize W = E.Env.tensorSize("w", 0);
  E.Env.addFact(SymRelation::eq(W, E.C));
  ASSERT_TRUE(E.Env.bind("w.size(0)", 64));
  EXPECT_EQ(E.Env.evaluate(E.C * W).Value, 64 * 64);
}

TEST(ShapeEnvTest, ViolationsNameTheBrokenFactsAndAssumptions) {
  Env3 E;
  SymSize H = E.Env.integer("n_head");
  E.Env.addFact(SymRelation::multiple(E.C, H));
  EXPECT_EQ(E.Env.eq(E.B, 1), Tri::False); // assumes x.size(0) >= 2
  E.Env.bind("B", 1);
  E.Env.bind("C", 100);
  E.Env.bind("n_head", 3);
  EXPECT_EQ(
      E.Env.violations(),
      (std::vector<std::string>{"x.size(2) % n_head == 0", "x.size(0) >= 2"}));
  E.Env.bind("B", 4);
  E.Env.bind("n_head", 4);
  EXPECT_TRUE(E.Env.violations().empty());
}

TEST(ShapeEnvTest, DisequalitiesFromChecks) {
  Env3 E;
  E.Env.addFact(SymRelation::ne(E.T, 1));
  EXPECT_EQ(E.Env.decide(SymRelation::eq(E.T, 1)), Tri::False);
  EXPECT_TRUE(E.Env.assumptions().empty());
  E.Env.addFact(SymRelation::gt(E.B, E.T));
  EXPECT_EQ(E.Env.decide(SymRelation::ge(E.B, E.T)), Tri::True);
  EXPECT_EQ(E.Env.decide(SymRelation::lt(E.B, E.T)), Tri::False);
  EXPECT_EQ(E.Env.decide(SymRelation::ge(E.B + E.C, E.T)), Tri::True);
}

// ----------------------------------------------------- soundness property --

namespace {

SymSize randomExpr(std::mt19937_64 &R, const std::vector<SymSize> &Syms,
                   int Depth) {
  int Pick = int(R() % 10);
  if (Depth == 0 || Pick < 3)
    return Pick % 2 ? Syms[R() % Syms.size()] : SymSize(int64_t(R() % 7) - 2);
  SymSize A = randomExpr(R, Syms, Depth - 1),
          B = randomExpr(R, Syms, Depth - 1);
  switch (R() % 7) {
  case 0:
    return A + B;
  case 1:
    return A - B;
  case 2:
    return A * B;
  case 3:
    return SymSize::floorDiv(A, SymSize::max(B, 1));
  case 4:
    return SymSize::mod(A, SymSize::max(B, 1));
  case 5:
    return SymSize::max(A, B);
  default:
    return SymSize::min(A, B);
  }
}

} // namespace

TEST(ShapeEnvPropertyTest, DecisionsHoldForEveryDrawThatSatisfiesThem) {
  std::mt19937_64 R(31337 + extraSeed());
  int Decided = 0, Draws = 0;
  for (int Case = 0; Case < 1500; ++Case) {
    ShapeEnv Env;
    std::vector<SymSize> Syms = {Env.tensorSize("x", 0), Env.tensorSize("x", 1),
                                 Env.integer("n")};
    // Sometimes a fact about n.
    if (Case % 3 == 0)
      Env.addFact(SymRelation::ge(Syms[2], int64_t(R() % 4)));
    if (Case % 5 == 0)
      Env.markSizeLike("n");
    if (Case % 7 == 1)
      Env.addFact(SymRelation::multiple(Syms[0], 2));
    if (Case % 11 == 2)
      Env.addFact(SymRelation::ne(Syms[1], 3));
    bool Tied = Case % 13 == 3;
    if (Tied)
      Env.addFact(SymRelation::eq(Syms[1], Syms[2]));
    SymSize L = randomExpr(R, Syms, 3), Rt = randomExpr(R, Syms, 3);
    if (L.isError() || Rt.isError())
      continue;
    auto Op = SymRelation::Op(R() % 6);
    SymRelation Rel{Op, L, Rt};
    Tri T = Env.decide(Rel);
    if (T == Tri::Unknown)
      continue;
    ++Decided;
    // Every draw that satisfies the facts and the recorded assumptions
    // must agree with the decision.
    for (int D = 0; D < 60; ++D) {
      SymBindings B;
      B["x.size(0)"] = int64_t(R() % 12);
      B["x.size(1)"] = int64_t(R() % 12);
      B["n"] = Tied && D % 2 ? B["x.size(1)"] : int64_t(R() % 24) - 8;
      bool Satisfies = true;
      for (const SymRelation &F : Env.facts())
        Satisfies = Satisfies && F.evaluate(B) == Tri::True;
      if (Env.info("n")->SizeLike)
        Satisfies = Satisfies && B["n"] >= 0;
      for (const std::string &A : Env.assumptions()) {
        auto P = A.find(" >= ");
        ASSERT_NE(P, std::string::npos) << A;
        int64_t Min = std::stoll(A.substr(P + 4));
        Satisfies = Satisfies && B.at(A.substr(0, P)) >= Min;
      }
      if (!Satisfies)
        continue;
      Tri Actual = Rel.evaluate(B);
      if (Actual == Tri::Unknown)
        continue; // a division by zero in the drawn values
      ++Draws;
      ASSERT_EQ(Actual, T) << Rel.toCpp() << " decided " << triName(T)
                           << " at x.size(0)=" << B["x.size(0)"]
                           << " x.size(1)=" << B["x.size(1)"]
                           << " n=" << B["n"];
    }
  }
  EXPECT_GT(Decided, 300);
  EXPECT_GT(Draws, 5000);
}

// --assume (model/Assume.h): what the CLI and the config accept.
TEST(AssumeTest, ParsesBindingsAndRefusesBadInput) {
  std::string Err;
  auto B = parseAssumeBinding("B=16", Err);
  ASSERT_TRUE(B);
  EXPECT_EQ(B->Symbol, "B");
  EXPECT_EQ(B->Value, 16);
  B = parseAssumeBinding(" x.size( 1 ) = 2048 ", Err);
  ASSERT_TRUE(B);
  EXPECT_EQ(B->Symbol, "x.size(1)");
  EXPECT_EQ(B->Value, 2048);
  EXPECT_EQ(B->Text, "x.size(1)=2048");
  B = parseAssumeBinding("x.storage().nbytes()=9223372036854775807", Err);
  ASSERT_TRUE(B);
  EXPECT_EQ(B->Value, INT64_MAX);
  for (const char *Bad :
       {"=3", "B", "B=", "B=abc", "B=-1", "B=1.5", "B=99999999999999999999",
        "B=9223372036854775808", "2*B=3", "16=16", "B+T=4"}) {
    Err.clear();
    EXPECT_FALSE(parseAssumeBinding(Bad, Err)) << Bad;
    EXPECT_NE(Err.find(Bad), std::string::npos) << Bad << ": " << Err;
  }
  auto L = parseAssumeList("B=16, x.size(1)=2048; n_heads=8,", Err);
  ASSERT_TRUE(L);
  ASSERT_EQ(L->size(), 3u);
  EXPECT_EQ((*L)[2].Symbol, "n_heads");
  EXPECT_FALSE(parseAssumeList("B=16, T=x", Err));
}

TEST(AssumeTest, BrokenAssumptionsGiveNoNumbers) {
  Env3 E;
  SymSize H = E.Env.integer("n_head");
  E.Env.addFact(SymRelation::multiple(E.C, H));
  EXPECT_EQ(E.Env.eq(E.T, 1), Tri::False); // assumes x.size(1) >= 2
  SymSize Bytes = 2 * E.B * E.T * E.C;
  EXPECT_FALSE(E.Env.hasBindings());
  EXPECT_FALSE(E.Env.bindingsUsable());
  E.Env.bind("B", 16);
  E.Env.bind("T", 1024);
  E.Env.bind("C", 4096);
  E.Env.bind("n_head", 8);
  ASSERT_TRUE(E.Env.bindingsUsable());
  EXPECT_EQ(E.Env.boundValue(Bytes), int64_t(2) * 16 * 1024 * 4096);
  EXPECT_EQ(E.Env.boundSuffix(Bytes), " (128 MiB at B=16, T=1024, C=4096)");
  EXPECT_EQ(E.Env.boundSuffix(Bytes, false),
            " (128 MiB at x.size(0)=16, x.size(1)=1024, x.size(2)=4096)");
  EXPECT_EQ(E.Env.boundSuffix(4096), "");
  // Partly bound: no number.
  EXPECT_EQ(E.Env.boundValue(Bytes * E.Env.integer("m")), std::nullopt);
  // T=1 breaks the assumption, C=12 with n_head=8 the stated fact.
  E.Env.bind("T", 1);
  E.Env.bind("C", 12);
  EXPECT_FALSE(E.Env.bindingsUsable());
  EXPECT_EQ(E.Env.boundValue(Bytes), std::nullopt);
  EXPECT_EQ(E.Env.formatBytes(Bytes), "2·B·T·C B");
  auto V = E.Env.violationDetails();
  ASSERT_EQ(V.size(), 2u);
  EXPECT_EQ(V[0].Cpp, "x.size(2) % n_head == 0");
  EXPECT_TRUE(V[0].Stated);
  EXPECT_EQ(V[1].Cpp, "x.size(1) >= 2");
  EXPECT_FALSE(V[1].Stated);
}

TEST(ShapeEnvTest, QuotientsStayBelowWhatTheyDivide) {
  // w / 3 <= w and 2 * (w / 3) <= w for any size w: interval arithmetic
  // alone loses the link between w and w / 3 (w = 3q + r, 0 <= r < 3).
  Env3 E;
  SymSize W = E.Env.tensorSize("w", 0);
  SymSize Q = SymSize::floorDiv(W, 3);
  EXPECT_EQ(E.Env.decideFromFacts(SymRelation::le(Q, W)), Tri::True);
  EXPECT_EQ(E.Env.decideFromFacts(SymRelation::le(Q * 2, W)), Tri::True);
  EXPECT_EQ(E.Env.decideFromFacts(SymRelation::le(Q * 4, W)), Tri::Unknown);
  // With 3 | w and w not empty (assumed), w / 3 >= 1, so w != w / 3.
  E.Env.addFact(SymRelation::multiple(W, 3));
  EXPECT_EQ(E.Env.decide(SymRelation::ne(W, Q)), Tri::True);
  EXPECT_EQ(E.Env.assumptions(), std::vector<std::string>{"w.size(0) >= 1"});
  // A symbolic divisor the facts show divides: C = h * (C / h), so
  // C / h < C once h >= 2 (C >= 2: C / h >= 1).
  SymSize H = E.Env.integer("h");
  E.Env.markSizeLike("h");
  E.Env.addFact(SymRelation::multiple(E.C, H));
  EXPECT_EQ(E.Env.decide(SymRelation::lt(SymSize::floorDiv(E.C, H), E.C)), Tri::True);
  // Without the fact a symbolic divisor k >= 1 still leaves T / k <= T
  // (T = k * q + r, 0 <= r < k), but not T / k < T (T / k is T at k = 1).
  SymSize K = E.Env.integer("k");
  EXPECT_EQ(E.Env.decideFromFacts(SymRelation::le(SymSize::floorDiv(E.T, K), E.T)),
            Tri::Unknown); // k may be 0 or negative: no claim
  E.Env.addFact(SymRelation::ge(K, 1));
  EXPECT_EQ(E.Env.decideFromFacts(SymRelation::le(SymSize::floorDiv(E.T, K), E.T)),
            Tri::True);
  EXPECT_EQ(E.Env.decideFromFacts(SymRelation::lt(SymSize::floorDiv(E.T, K), E.T)),
            Tri::Unknown);
  EXPECT_EQ(E.Env.decideFromFacts(SymRelation::lt(E.T, SymSize::floorDiv(E.T, K))),
            Tri::False);
}

TEST(ShapeEnvTest, AnEqualityOfAQuotientTimesItsDivisorIsADivisibility) {
  // n * (C / n) == C (a reshape of heads back to (B, T, C)) is n | C: then
  // n * (C / n) simplifies to C and C / n is at least 1.
  Env3 E;
  SymSize N = E.Env.integer("n");
  E.Env.addFact(SymRelation::ge(N, 1));
  SymSize Q = SymSize::floorDiv(E.C, N);
  EXPECT_EQ(E.Env.decideFromFacts(SymRelation::multiple(E.C, N)), Tri::Unknown);
  E.Env.assume(SymRelation::eq(N * Q, E.C));
  EXPECT_EQ(E.Env.decideFromFacts(SymRelation::multiple(E.C, N)), Tri::True);
  EXPECT_EQ(E.Env.simplify(N * Q), E.C);
  EXPECT_EQ(E.Env.decide(SymRelation::ge(Q, 1)), Tri::True);
  // The mirror image reads the same.
  Env3 F;
  SymSize M = F.Env.integer("m");
  F.Env.addFact(SymRelation::eq(F.T, M * SymSize::floorDiv(F.T, M)));
  EXPECT_EQ(F.Env.decideFromFacts(SymRelation::multiple(F.T, M)), Tri::True);
}

TEST(ShapeEnvTest, ARemainderTheFactsKnowIsNotAMultiple) {
  // TORCH_CHECK(n % 3 == 1): n is no multiple of 3, so nothing may assume
  // it is (requireDivides refuses).
  ShapeEnv Env;
  DecisionScope Scope(Env);
  SymSize N = Env.tensorSize("x", 0);
  Env.addFact(SymRelation::eq(SymSize::mod(N, 3), 1));
  EXPECT_EQ(Env.decideFromFacts(SymRelation::multiple(N, 3)), Tri::False);
  EXPECT_EQ(requireDivides(3, N), Tri::False);
  EXPECT_TRUE(Env.assumptions().empty());
}

TEST(ShapeEnvTest, RequiredEqualitiesAreStatedSimply) {
  // A view of a chunk of qkv as heads needs B * T * (w / 3) == B * T * C:
  // stated without the factors B, T (not 0 under the 0/1 specialisation),
  // and the exact quotient multiplied out, which makes it a substitution.
  Env3 E;
  DecisionScope Scope(E.Env);
  SymSize W = E.Env.tensorSize("w", 0);
  E.Env.assume(SymRelation::multiple(W, 3));
  EXPECT_EQ(requireEq(E.B * E.T * SymSize::floorDiv(W, 3), E.B * E.T * E.C), Tri::True);
  std::vector<std::string> A = E.Env.assumptions();
  EXPECT_NE(std::find(A.begin(), A.end(), "w.size(0) == x.size(2) * 3"), A.end())
      << ::testing::PrintToString(A);
  EXPECT_EQ(E.Env.simplify(SymSize::floorDiv(W, 3)), E.C);
  EXPECT_EQ(E.Env.simplify(W), E.C * 3);
  // A factor that may be 0 is kept (B * x == B * y holds at B = 0).
  ShapeEnv Plain;
  DecisionScope Inner(Plain);
  SymSize N = Plain.integer("n"), X = Plain.integer("x"), Y = Plain.integer("y");
  EXPECT_EQ(requireEq(N * X, N * Y), Tri::True);
  EXPECT_EQ(Plain.assumptions(), std::vector<std::string>{"n * x == n * y"});
}

TEST(ShapeEnvTest, ARequirementAgainstADefaultIsStatedNotAThrow) {
  // A Conv2d of one input channel needs x.size(1) == 1; the default
  // x.size(1) >= 2 is no fact about the caller, so the requirement is
  // stated (the code runs when it holds) rather than a throw.
  ShapeEnv Env;
  DecisionScope Scope(Env);
  SymSize C = Env.tensorSize("x", 1);
  EXPECT_EQ(requireEq(C, 1), Tri::True);
  std::vector<std::string> A = Env.assumptions();
  EXPECT_NE(std::find(A.begin(), A.end(), "x.size(1) == 1"), A.end())
      << ::testing::PrintToString(A);
  // A default that makes it true is what is stated, the weakest one that
  // does: 0 < x.size(2) needs x.size(2) not empty.
  ShapeEnv Other;
  DecisionScope Inner(Other);
  SymSize H = Other.tensorSize("x", 2);
  EXPECT_EQ(requireLt(0, H), Tri::True);
  EXPECT_EQ(Other.assumptions(), std::vector<std::string>{"x.size(2) >= 1"});
  // A fact that contradicts it is a throw.
  ShapeEnv Checked;
  DecisionScope Third(Checked);
  SymSize K = Checked.tensorSize("x", 1);
  Checked.addFact(SymRelation::eq(K, 3));
  EXPECT_EQ(requireEq(K, 1), Tri::False);
  EXPECT_EQ(requireLe(SymSize(4), K), Tri::False);
}

TEST(ShapeEnvTest, LayoutDecisionsSpecialiseComputedSizes) {
  // ShuffleNet's channel shuffle: (N, g, C / g, H, W).transpose(1, 2) is
  // contiguous only if C / g is 1. The 0/1 specialisation, applied to the
  // computed size, says it is not, and states it.
  ShapeEnv Env;
  DecisionScope Scope(Env);
  SymSize N = Env.tensorSize("x", 0), C = Env.tensorSize("x", 1),
          H = Env.tensorSize("x", 2), W = Env.tensorSize("x", 3);
  SymSize G = Env.integer("g");
  Env.markSizeLike("g");
  Env.addFact(SymRelation::gt(G, 0));
  Env.addFact(SymRelation::multiple(C, G));
  SymSize Q = SymSize::floorDiv(C, G);
  Shape Grouped{N, G, Q, H, W};
  Shape Packed = contiguousStrides(Grouped);
  EXPECT_EQ(Env.simplify(Packed[0]), C * H * W) << "no max(C / g, 1) once C / g >= 1";
  Shape Swapped{N, Q, G, H, W};
  Shape SwappedStrides{Packed[0], Packed[2], Packed[1], Packed[3], Packed[4]};
  EXPECT_EQ(isContiguous(Swapped, SwappedStrides), Tri::False);
  std::vector<std::string> A = Env.assumptions();
  EXPECT_NE(std::find(A.begin(), A.end(), "x.size(1) / g >= 2"), A.end())
      << ::testing::PrintToString(A);
  // Heads merged back: (B, T, n, C / n) with the strides of a permuted
  // contiguous (B, n, T, C / n) is not viewable as (B, T, C): reshape copies.
  ShapeEnv Heads;
  DecisionScope Inner(Heads);
  SymSize B = Heads.tensorSize("x", 0), T = Heads.tensorSize("x", 1),
          Cx = Heads.tensorSize("x", 2);
  SymSize Nh = Heads.integer("n");
  Heads.markSizeLike("n");
  Heads.addFact(SymRelation::gt(Nh, 0));
  Heads.addFact(SymRelation::eq(Nh * SymSize::floorDiv(Cx, Nh), Cx));
  SymSize D = SymSize::floorDiv(Cx, Nh);
  Shape Bnt = contiguousStrides({B, Nh, T, D});
  Shape Out;
  EXPECT_EQ(computeStride({B, T, Nh, D}, {Bnt[0], Bnt[2], Bnt[1], Bnt[3]}, {B, T, Cx}, Out),
            Tri::False);
  // The heads of a contiguous input are viewable back.
  EXPECT_EQ(computeStride({B, T, Nh, D}, contiguousStrides({B, T, Nh, D}), {B, T, Cx}, Out),
            Tri::True);
  EXPECT_EQ(Out, contiguousStrides({B, T, Cx}));
}
TEST(ShapeEnvTest, DepthToSpaceAndBackIsDecided) {
  // pixel_shuffle by hand: x.size(1) == C * r * r (checked), then
  // (N, C, H * r, W * r) viewed as (N, C, H, r, W, r), permuted to
  // (N, C, r, r, H, W) and reshaped to (N, C * r * r, H, W): not viewable
  // (a copy). Needs x.size(1) >= r from x.size(1) = r * r * q, q >= 1,
  // after simplify has turned r * r * (x.size(1) / (r * r)) into x.size(1).
  ShapeEnv Env;
  DecisionScope Scope(Env);
  SymSize N = Env.tensorSize("x", 0), X1 = Env.tensorSize("x", 1),
          H = Env.tensorSize("x", 2), W = Env.tensorSize("x", 3);
  SymSize R = Env.integer("r");
  Env.markSizeLike("r");
  SymSize C = SymSize::floorDiv(X1, R * R);
  Env.addFact(SymRelation::eq(X1, C * R * R));
  Env.addFact(SymRelation::gt(R * R, 0));
  EXPECT_EQ(Env.decideFromFacts(SymRelation::multiple(X1, R * R)), Tri::True);
  EXPECT_EQ(sizeLt(X1, R), Tri::False);
  Shape Out = contiguousStrides({N, C, H * R, W * R});
  Shape V;
  ASSERT_EQ(computeStride({N, C, H * R, W * R}, Out, {N, C, H, R, W, R}, V), Tri::True);
  Shape Permuted{V[0], V[1], V[3], V[5], V[2], V[4]};
  Shape Res;
  EXPECT_EQ(computeStride({N, C, R, R, H, W}, Permuted, {N, C * R * R, H, W}, Res),
            Tri::False);
}

TEST(ShapeEnvTest, AQuotientOfANumeratorAFactBoundsIsNotNegative) {
  // A strided convolution's output size (H + 2 - K) / s + 1: H + 2 - K is
  // not negative only by the fact that the kernel fits its padded input,
  // which the intervals of H and K alone do not show.
  ShapeEnv Env;
  DecisionScope Scope(Env);
  SymSize H = Env.tensorSize("x", 2), K = Env.tensorSize("w", 2);
  SymSize S = Env.integer("stride");
  Env.addFact(SymRelation::ge(S, 1));
  SymSize Q = SymSize::floorDiv(H + 2 - K, S);
  EXPECT_EQ(Env.decideFromFacts(SymRelation::ge(Q, 0)), Tri::Unknown);
  Env.addFact(SymRelation::le(K, H + 2));
  EXPECT_EQ(Env.decideFromFacts(SymRelation::ge(Q, 0)), Tri::True);
  EXPECT_EQ(Env.decideFromFacts(SymRelation::ge(Q * 3 + Q * K + 1, 1)), Tri::True);
  // It bounds the quotient below, not above.
  EXPECT_EQ(Env.decideFromFacts(SymRelation::le(Q, 5)), Tri::Unknown);
}

TEST(ShapeEnvTest, AFactAboutAQuotientBoundsIt) {
  // Two max-pools of x (N, 16, H, W): (H / 2 + 1) / 2 - 2 >= 2 was stated
  // when the size was specialised, so the flattened size 16·(A - 2)·(B - 2)
  // written out as a polynomial is positive.
  ShapeEnv Env;
  DecisionScope Scope(Env);
  SymSize H = Env.tensorSize("x", 2), W = Env.tensorSize("x", 3);
  SymSize A = SymSize::floorDiv(SymSize::floorDiv(H, 2) + 1, 2);
  SymSize B = SymSize::floorDiv(SymSize::floorDiv(W, 2) + 1, 2);
  SymSize Flat = A * B * 16 + 64 - A * 32 - B * 32;
  EXPECT_EQ(Env.decideFromFacts(SymRelation::gt(Flat, 0)), Tri::Unknown);
  Env.addFact(SymRelation::ge(A - 2, 2));
  Env.addFact(SymRelation::ge(B - 2, 2));
  EXPECT_EQ(Env.decideFromFacts(SymRelation::gt(Flat, 0)), Tri::True);
  EXPECT_EQ(Env.decideFromFacts(SymRelation::ge(A, 4)), Tri::True);
  EXPECT_EQ(Env.decideFromFacts(SymRelation::ge(A, 5)), Tri::Unknown);
}

TEST(ShapeEnvTest, DefaultsAreNoStricterThanTheDecisionNeeds) {
  Env3 E;
  // Not empty is enough for max(C, 1) == C and for C != 0...
  EXPECT_EQ(E.Env.max(E.C, 1), E.C);
  EXPECT_EQ(E.Env.eq(E.C, 0), Tri::False);
  EXPECT_EQ(E.Env.assumptions(), std::vector<std::string>{"x.size(2) >= 1"});
  // ...C == 1 needs the 0/1 specialisation: one bound per symbol, the
  // strongest.
  EXPECT_EQ(E.Env.eq(E.C, 1), Tri::False);
  EXPECT_EQ(E.Env.assumptions(), std::vector<std::string>{"x.size(2) >= 2"});
  // 1 >= T is false for T >= 2 but drops nothing from max(T, 1): nothing
  // is assumed to show it.
  ShapeEnv Env;
  SymSize N = Env.integer("n");
  Env.markSizeLike("n");
  EXPECT_EQ(Env.max(1, N), N);
  EXPECT_EQ(Env.assumptions(), std::vector<std::string>{"n >= 1"});
}

TEST(ShapeEnvTest, AFactImplyingADefaultMakesItNoAssumption) {
  Env3 E;
  EXPECT_EQ(E.Env.max(E.T, 1), E.T); // x.size(1) >= 1
  EXPECT_EQ(E.Env.addFact(SymRelation::eq(E.T, 1)), ShapeEnv::FactResult::Added);
  EXPECT_TRUE(E.Env.assumptions().empty());
  EXPECT_FALSE(E.Env.factContradictedAssumption());
  ASSERT_TRUE(E.Env.bind("x.size(1)", 1));
  EXPECT_TRUE(E.Env.violations().empty());
}

TEST(ShapeEnvTest, AFactAgainstADefaultSeedsAnotherRun) {
  Env3 First;
  EXPECT_EQ(First.Env.eq(First.T, 1), Tri::False); // x.size(1) >= 2
  EXPECT_EQ(First.Env.addFact(SymRelation::eq(First.T, 1)),
            ShapeEnv::FactResult::ContradictsAssumption);
  EXPECT_TRUE(First.Env.factContradictedAssumption());
  // The run again knows the fact from its first decision on.
  ShapeEnv Seeded;
  Seeded.seedFacts(First.Env);
  SymSize T = Seeded.tensorSize("x", 1);
  EXPECT_EQ(Seeded.eq(T, 1), Tri::True);
  EXPECT_TRUE(Seeded.assumptions().empty());
  EXPECT_TRUE(Seeded.facts().empty()); // logged where the code states it
  EXPECT_EQ(Seeded.info("x.size(1)")->Kind, SymbolKind::Size);
}

// torch-contiguous-copy's "(unless x.size(0) == 1)": a question decided
// again in factsOnly() records exactly the sizes its answer assumed are not
// 1, never those the code's facts settle.
TEST(ShapeEnvTest, FactsOnlyRecordsWhatOneDecisionAssumes) {
  ShapeEnv Env;
  SymSize A = Env.tensorSize("x", 0), B = Env.tensorSize("x", 1);
  Env.addFact(SymRelation::ge(B, 3)); // TORCH_CHECK(x.size(1) >= 3)
  {
    DecisionScope Scope(Env);
    EXPECT_EQ(dimIsOne(A), Tri::False);
  }
  EXPECT_EQ(Env.symbolsAssumedNotOne(), std::vector<std::string>{"x.size(0)"});
  ShapeEnv Fresh = factsOnly(Env);
  EXPECT_TRUE(Fresh.assumptions().empty());
  EXPECT_EQ(Fresh.facts().size(), 1u);
  DecisionScope Scope(Fresh);
  EXPECT_EQ(dimIsOne(B), Tri::False);
  EXPECT_TRUE(Fresh.symbolsAssumedNotOne().empty());
  EXPECT_EQ(dimIsOne(A), Tri::False);
  EXPECT_EQ(Fresh.symbolsAssumedNotOne(), std::vector<std::string>{"x.size(0)"});
}
