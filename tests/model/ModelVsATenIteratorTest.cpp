// Differential test, continued (ModelVsATenTest.cpp says what is compared
// and how the tensors are generated): TensorIterator's output strides for
// unary, binary (broadcast) and ternary (where) ops, dtype promotion, and
// dim wrapping, against real LibTorch.
#include "tests/model/ModelVsATenSupport.h"

using namespace tma_diff;

namespace {

TEST(ModelVsATen, TensorIteratorUnary) {
  Rng R(seed(7));
  Tally Unary("tensorIteratorOutputStrides vs a.exp().strides()");
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes());
    Dims Model = model::tensorIteratorOutputStrides(
        S, {model::IterOperand{S, toDims(T.strides())}});
    at::Tensor Out = T.exp();
    Unary.expect(toDims(Out.strides()) == Model && toDims(Out.sizes()) == S,
                 [&] {
                   return describe(T) + ".exp(): model " + str(Model) +
                          " aten " + describe(Out);
                 });
  }
  EXPECT_NO_MISMATCHES(Unary);
}

TEST(ModelVsATen, TensorIteratorBinaryAndBroadcast) {
  Rng R(seed(8));
  Tally Broadcast("broadcastShapes vs at::infer_size(a, b)");
  Tally Binary("tensorIteratorOutputStrides vs (a + b).strides()");
  int64_t Pairs = 0, Unbroadcastable = 0, NonTrivial = 0;
  for (int I = 0; I < 2 * NumTensors; ++I) {
    at::Tensor A = randomTensor(R);
    Dims PS = randomPartnerShape(toDims(A.sizes()), R);
    at::Tensor B = withLayout(PS, R);
    if (R.chance(0.5))
      std::swap(A, B);
    Dims SA = toDims(A.sizes()), SB = toDims(B.sizes());
    std::optional<Dims> Model = model::broadcastShapes(SA, SB);
    std::optional<Dims> Aten;
    try {
      Aten = at::infer_size(A.sizes(), B.sizes());
    } catch (const std::exception &) {
    }
    Broadcast.expect(Model == Aten, [&] {
      return "infer_size(" + str(SA) + ", " + str(SB) + "): model " +
             str(Model) + " aten " + str(Aten);
    });
    if (!Aten) {
      ++Unbroadcastable;
      continue;
    }
    ++Pairs;
    Dims Out = *Aten;
    Dims MS = model::tensorIteratorOutputStrides(
        Out, {model::IterOperand{SA, toDims(A.strides())},
              model::IterOperand{SB, toDims(B.strides())}});
    NonTrivial += MS != model::contiguousStrides(Out);
    at::Tensor Sum = A + B;
    Binary.expect(toDims(Sum.strides()) == MS && toDims(Sum.sizes()) == Out,
                  [&] {
                    return "(" + describe(A) + ") + (" + describe(B) +
                           "): model " + str(MS) + " aten " + describe(Sum);
                  });
  }
  EXPECT_NO_MISMATCHES(Broadcast);
  EXPECT_NO_MISMATCHES(Binary);
  EXPECT_GT(Pairs, NumTensors);
  EXPECT_GT(Unbroadcastable, 100);
  EXPECT_GT(NonTrivial, 300);
}

TEST(ModelVsATen, TensorIteratorTernaryWhere) {
  // at::where(cond, a, b): TensorIterator sees the operands in the order
  // cond, a, b, so the bool condition's layout decides first.
  Rng R(seed(9));
  Tally Where("tensorIteratorOutputStrides vs where(c, a, b).strides()");
  int64_t Compared = 0;
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor A = randomTensor(R);
    Dims SA = toDims(A.sizes());
    at::Tensor C = withLayout(randomPartnerShape(SA, R), R, at::kBool);
    at::Tensor B = withLayout(randomPartnerShape(SA, R), R);
    if (R.chance(0.5))
      std::swap(A, B);
    SA = toDims(A.sizes());
    Dims SB = toDims(B.sizes()), SC = toDims(C.sizes());
    std::optional<Dims> Out = model::broadcastShapes(SC, SA);
    if (Out)
      Out = model::broadcastShapes(*Out, SB);
    if (!Out)
      continue;
    ++Compared;
    Dims MS = model::tensorIteratorOutputStrides(
        *Out, {model::IterOperand{SC, toDims(C.strides())},
               model::IterOperand{SA, toDims(A.strides())},
               model::IterOperand{SB, toDims(B.strides())}});
    at::Tensor W = at::where(C, A, B);
    Where.expect(toDims(W.strides()) == MS && toDims(W.sizes()) == *Out, [&] {
      return "where(" + describe(C) + ", " + describe(A) + ", " +
             describe(B) + "): model " + str(MS) + " aten " + describe(W);
    });
  }
  EXPECT_NO_MISMATCHES(Where);
  EXPECT_GT(Compared, NumTensors / 3);
}

TEST(ModelVsATen, DTypes) {
  Tally Names("dtypeFromName(c10::toString) and itemSize vs elementSize");
  Tally Promote("promoteTypes vs c10::promoteTypes");
  Tally ZeroDim("category rule vs at::result_type(tensor, zero-dim tensor)");
  for (tma::DType A : AllTypes) {
    c10::ScalarType CA = toC10(A);
    Names.expect(tma::dtypeFromName(c10::toString(CA)) == A &&
                     tma::itemSize(A) ==
                         static_cast<int64_t>(c10::elementSize(CA)),
                 [&] {
                   return std::string(tma::dtypeName(A)) + " vs " +
                          c10::toString(CA);
                 });
    for (tma::DType B : AllTypes) {
      c10::ScalarType CB = toC10(B);
      c10::ScalarType Expected = c10::promoteTypes(CA, CB);
      tma::DType Got = tma::promoteTypes(A, B);
      Promote.expect(toC10(Got) == Expected, [&] {
        return std::string(tma::dtypeName(A)) + " + " + tma::dtypeName(B) +
               ": model " + tma::dtypeName(Got) + " aten " +
               c10::toString(Expected);
      });
      // A dimensioned tensor of A with a zero-dim tensor of B: the
      // zero-dim operand only counts when its category is higher, and a
      // complex zero-dim keeps a floating tensor's precision
      // (combine_categories). The rule is the one DTypeTest spells out.
      c10::ScalarType RT =
          at::result_type(at::empty({2}, CA), at::empty({}, CB));
      tma::DType Rule = A;
      if (tma::typeCategory(B) > tma::typeCategory(A))
        Rule = tma::isComplex(B) && tma::isFloating(A)
                   ? tma::toComplex(A)
                   : tma::promoteTypes(A, B);
      ZeroDim.expect(toC10(Rule) == RT, [&] {
        return std::string(tma::dtypeName(A)) + "[2] + " + tma::dtypeName(B) +
               "[]: model " + tma::dtypeName(Rule) + " aten " +
               c10::toString(RT);
      });
    }
  }
  EXPECT_NO_MISMATCHES(Names);
  EXPECT_NO_MISMATCHES(Promote);
  EXPECT_NO_MISMATCHES(ZeroDim);
}

TEST(ModelVsATen, WrapDim) {
  Tally Wrap("wrapDim vs c10::maybe_wrap_dim");
  for (int64_t Rank = 0; Rank <= MaxRank; ++Rank)
    for (int64_t Dim = -MaxRank - 2; Dim <= MaxRank + 2; ++Dim) {
      std::optional<int64_t> Aten;
      try {
        Aten = c10::maybe_wrap_dim(Dim, Rank);
      } catch (const std::exception &) {
      }
      std::optional<int64_t> Model = tma::wrapDim(Dim, Rank);
      Wrap.expect(Model == Aten, [&] {
        return "dim " + std::to_string(Dim) + " rank " + std::to_string(Rank);
      });
    }
  EXPECT_NO_MISMATCHES(Wrap);
}

} // namespace
