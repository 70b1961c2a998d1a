// Op rules called directly, without Clang (issue 11: "no test reaches
// model/ op rules without Clang").
//
// Each case binds arguments the way the frontend does (model/ops/OpTable.h:
// an OpCall of the op's table entry, one ArgValue per schema argument,
// self first) and runs the rule through applyRule, so the table entry, the
// overload's schema and the rule are what is tested; no source file, no
// parse, no Interpreter. The expected values are ATen's documented
// behaviour for LibTorch 1.13 (TensorShape.cpp, TensorIterator,
// ReduceOps.cpp, the type promotion rules), and each one was checked once
// against Debian's libtorch-dev 1.13.1 by printing sizes(), strides(),
// dtype and storage().nbytes() of the same expression. Bytes read and
// written follow the model's accounting (model/ops/Concat.cpp's header:
// each input's and the output's logical bytes once). The differential
// tests (ops_tests, model_vs_aten_tests, the symbolic corpus) compare the
// rules with real LibTorch at scale; this file shows that a rule can be
// tested on its own, and is where an op's unit case goes when it is added
// (OpTable.def: one entry, one rule, one test).
#include "tests/model/OpRulesSupport.h"
#include "model/Autograd.h"

using namespace tma;
using namespace tma::oprules_test;

namespace {

// ---- Views -------------------------------------------------------------------

TEST(OpRules, TransposeSwapsSizesAndStrides) {
  // x.transpose(0, 2) of [2,3,4]: sizes [4,3,2], strides [1,4,12].
  OpOutcome Out = run(bind("transpose", 0, {tensorArg(X), intArg(0), intArg(2)}));
  EXPECT_EQ(Out.Kind, OpKind::View);
  expectGeometry(Out, {4, 3, 2}, {1, 4, 12}, 0, DType::Float32);
  expectNoTraffic(Out);
  // A negative dim wraps: transpose(-1, 0) is the same view; so is the
  // alias swapaxes.
  OpOutcome Neg = run(bind("swapaxes", 0, {tensorArg(X), intArg(-1), intArg(0)}));
  EXPECT_EQ(Neg.Kind, OpKind::View);
  expectGeometry(Neg, {4, 3, 2}, {1, 4, 12}, 0, DType::Float32);
}

TEST(OpRules, TransposeOutOfRangeThrows) {
  // maybe_wrap_dim: dim 3 of a 3-D tensor.
  OpOutcome Out = run(bind("transpose", 0, {tensorArg(X), intArg(0), intArg(3)}));
  expectThrows(Out,
               "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
               "Dimension out of range (expected to be in range of [-3, 2]");
}

// Whatever its dims, transpose returns a view of self: its geometry is
// unknown with the reason, its dtype and the storage it shares are not.
TEST(OpRules, TransposeWithUnknownDimsIsAViewOfUnknownShape) {
  OpOutcome Out = run(bind("transpose", 0,
                           {tensorArg(X), unknownArg(ArgType::Int, "a parameter"),
                            intArg(1)}));
  EXPECT_EQ(Out.Kind, OpKind::View);
  EXPECT_FALSE(Out.Value.Sizes.has_value());
  EXPECT_EQ(Out.Value.Type, std::optional<DType>(DType::Float32));
  EXPECT_EQ(Out.Value.UnknownReason, "transpose dims could not be derived");
  expectNoTraffic(Out);
}

// ---- view vs reshape -----------------------------------------------------------

TEST(OpRules, ViewOfContiguousIsAView) {
  OpOutcome Out = run(bind("view", 0, {tensorArg(X), intListArg({6, 4})}));
  EXPECT_EQ(Out.Kind, OpKind::View);
  expectGeometry(Out, {6, 4}, {4, 1}, 0, DType::Float32);
  expectNoTraffic(Out);
}

TEST(OpRules, ViewOfNonViewableThrows) {
  OpOutcome Out = run(bind("view", 0, {tensorArg(transposed()), intListArg({2, 12})}));
  EXPECT_EQ(Out.Kind, OpKind::Throws);
  EXPECT_EQ(Out.Error, // LibTorch's text, word for word
            "view size is not compatible with input tensor's size and stride (at "
            "least one dimension spans across two contiguous subspaces). Use "
            ".reshape(...) instead.");
}

TEST(OpRules, ReshapeViewsWhenItCanAndCopiesWhenItCannot) {
  // Contiguous input, -1 inferred: a view [6, 4].
  OpOutcome View = run(bind("reshape", 0, {tensorArg(X), intListArg({-1, 4})}));
  EXPECT_EQ(View.Kind, OpKind::View);
  expectGeometry(View, {6, 4}, {4, 1}, 0, DType::Float32);
  expectNoTraffic(View);
  // The transposed input cannot be viewed as [2, 12]: reshape copies into a
  // fresh contiguous 96-byte tensor, reading and writing every element once.
  OpOutcome Copy = run(bind("reshape", 0, {tensorArg(transposed()), intListArg({2, 12})}));
  EXPECT_EQ(Copy.Kind, OpKind::Copy);
  expectGeometry(Copy, {2, 12}, {12, 1}, 0, DType::Float32);
  EXPECT_EQ(Copy.ReadBytes, std::optional<int64_t>(96));
  EXPECT_EQ(Copy.WrittenBytes, std::optional<int64_t>(96));
}

TEST(OpRules, ViewAndReshapeOfAPackedTensorOfUnknownRank) {
  // A parameter x whose rank nothing fixes: only its element count x.numel()
  // and that it is packed are known. Viewing it as (x.size(0), H, -1) is a
  // view whether its rank is 2 or 5; the -1 is numel / (x.size(0) * H), on
  // the stated assumption that it divides.
  ShapeEnv Env;
  DecisionScope Decisions(Env);
  SymSize N = Env.tensorNumel("x"), B = Env.tensorSize("x", 0), H = Env.integer("H");
  Env.addFact(SymRelation::gt(H, 0)); // TORCH_CHECK(H > 0)
  TensorValue X;
  X.PackedNumel = N;
  X.Offset = SymSize(0);
  X.Type = DType::Float32;
  X.Dev = Device{};
  ArgValue Target;
  Target.K = ArgValue::Kind::IntList;
  Target.List = Shape{B, H, SymSize(-1)};
  for (const char *Op : {"view", "reshape"}) {
    OpOutcome Out = run(bind(Op, 0, {tensorArg(X), Target}));
    EXPECT_EQ(Out.Kind, OpKind::View) << Op;
    Shape Sizes{B, H, SymSize::floorDiv(N, B * H)};
    EXPECT_EQ(Out.Value.Sizes, std::optional<Shape>(Sizes)) << Op;
    EXPECT_EQ(Out.Value.Strides, std::optional<Shape>(contiguousStrides(Sizes))) << Op;
    EXPECT_TRUE(Out.Value.UnknownReason.empty()) << Out.Value.UnknownReason;
  }
  std::vector<std::string> Assumed = Env.assumptions();
  EXPECT_NE(std::find(Assumed.begin(), Assumed.end(), "x.numel() % (H * x.size(0)) == 0"),
            Assumed.end());
  // Anything but a full shape stays unknown: its rank is needed.
  OpOutcome T = run(bind("transpose", 0, {tensorArg(X), intArg(0), intArg(1)}));
  EXPECT_FALSE(T.Value.Sizes);
}

// ---- contiguous: self vs copy -----------------------------------------------------

TEST(OpRules, ContiguousOfContiguousReturnsSelf) {
  OpOutcome Out = run(bind("contiguous", 0, {tensorArg(X)}));
  EXPECT_EQ(Out.Kind, OpKind::Self);
  expectGeometry(Out, {2, 3, 4}, {12, 4, 1}, 0, DType::Float32);
  expectNoTraffic(Out);
}

TEST(OpRules, ContiguousOfTransposedCopies) {
  OpOutcome Out = run(bind("contiguous", 0, {tensorArg(transposed())}));
  EXPECT_EQ(Out.Kind, OpKind::Copy);
  expectGeometry(Out, {2, 4, 3}, {12, 3, 1}, 0, DType::Float32);
  EXPECT_EQ(Out.ReadBytes, std::optional<int64_t>(96));
  EXPECT_EQ(Out.WrittenBytes, std::optional<int64_t>(96));
}

// ---- Elementwise: broadcast and type promotion ------------------------------------------

TEST(OpRules, AddBroadcastsAndPromotes) {
  // int64 [2,1,3] + float32 [4,1]: both dimensioned, floating beats
  // integral, so float32 [2,4,3], contiguous. Reads 48 + 16 B, writes 96 B.
  TensorValue A = dense({2, 1, 3}, DType::Int64), B = dense({4, 1});
  OpOutcome Out = run(bind("operator+", 0, {tensorArg(A), tensorArg(B)}, false));
  EXPECT_EQ(Out.Kind, OpKind::Copy);
  expectGeometry(Out, {2, 4, 3}, {12, 3, 1}, 0, DType::Float32);
  EXPECT_EQ(Out.ReadBytes, std::optional<int64_t>(64));
  EXPECT_EQ(Out.WrittenBytes, std::optional<int64_t>(96));
}

TEST(OpRules, AddOfAWrappedNumberTakesTheDefaultDtype) {
  // int64 [2,1,3] + 2.5: the double is a wrapped number of a higher
  // category, so the result is the default dtype, float32 (not float64).
  // The output keeps the input's strides [3,3,1]; the scalar reads nothing.
  TensorValue A = dense({2, 1, 3}, DType::Int64);
  OpOutcome Out = run(bind("add", 1, {tensorArg(A), doubleScalarArg(2.5)}));
  EXPECT_EQ(Out.Kind, OpKind::Copy);
  expectGeometry(Out, {2, 1, 3}, {3, 3, 1}, 0, DType::Float32);
  EXPECT_EQ(Out.ReadBytes, std::optional<int64_t>(48));
  EXPECT_EQ(Out.WrittenBytes, std::optional<int64_t>(24));
}

TEST(OpRules, ZeroDimTensorDoesNotWidenWithinItsCategory) {
  // float16 [3] + float64 0-dim tensor: same category, the dimensioned
  // tensor's dtype wins: float16.
  TensorValue H = dense({3}, DType::Float16), D = dense({}, DType::Float64);
  OpOutcome Out = run(bind("add", 0, {tensorArg(H), tensorArg(D)}));
  expectGeometry(Out, {3}, {1}, 0, DType::Float16);
}

TEST(OpRules, AddOfUnbroadcastableShapesThrows) {
  OpOutcome Out = run(bind("add", 0, {tensorArg(dense({2, 3})), tensorArg(dense({4}))}));
  expectThrows(Out,
               "The size of tensor a (3) must match the size of tensor b (4) at "
               "non-singleton dimension 1",
               "must match the size of tensor b");
}

TEST(OpRules, AddOfAnOperandOfUnknownStridesHasTheBroadcastShape) {
  // A gradient from autograd::grad: sizes [2,3] and float32 known, strides
  // not (model/Autograd.h). g + [3] is float32 [2,3] whatever g's strides
  // were; only the permutation TensorIterator gives the output follows
  // them, so the strides stay unknown with the reason. The output is dense:
  // 24 B written.
  TensorValue G = autogradGradient(dense({2, 3}), /*MayBeUndefined=*/false);
  ASSERT_FALSE(G.Strides);
  OpOutcome Out = run(bind("add", 0, {tensorArg(G), tensorArg(dense({3}))}));
  EXPECT_EQ(Out.Kind, OpKind::Copy);
  EXPECT_EQ(Out.Value.Sizes, std::optional<Shape>(Shape{2, 3}));
  EXPECT_EQ(Out.Value.Type, std::optional<DType>(DType::Float32));
  EXPECT_FALSE(Out.Value.Strides);
  EXPECT_FALSE(Out.Value.UnknownReason.empty());
  EXPECT_EQ(Out.WrittenBytes, std::optional<int64_t>(24));
}

TEST(OpRules, AutogradGradientHasItsInputsShapeAndDtypeOnly) {
  // The engine holds a gradient to its input's sizes, dtype and device;
  // its layout and storage are the backward formula's. With allow_unused
  // it may be undefined: nothing but the reason.
  TensorValue In = dense({4, 5}, DType::Float64);
  TensorValue G = autogradGradient(In, false);
  EXPECT_EQ(G.Sizes, In.Sizes);
  EXPECT_EQ(G.Type, std::optional<DType>(DType::Float64));
  EXPECT_EQ(G.Dev, In.Dev);
  EXPECT_FALSE(G.Strides);
  EXPECT_FALSE(G.Offset);
  EXPECT_EQ(G.Storage, NoStorage);
  EXPECT_FALSE(G.UnknownReason.empty());
  TensorValue Unused = autogradGradient(In, true);
  EXPECT_FALSE(Unused.Sizes);
  EXPECT_FALSE(Unused.Type);
  EXPECT_FALSE(Unused.UnknownReason.empty());
}

// ---- Reductions -------------------------------------------------------------------

// sum and mean are bound by their C++ types (OpTable.def: "sum(...)").
const std::vector<ArgType> DimsKeepdim = {ArgType::Tensor, ArgType::IntList,
                                          ArgType::Bool};

TEST(OpRules, SumWithKeepdimKeepsASizeOneDim) {
  // x.sum({1}, true) of [2,3,4] float32: [2,1,4], strides [4,4,1], 32 B.
  OpOutcome Keep = run(bind("sum", 0, {tensorArg(X), intListArg({1}), boolArg(true)},
                            true, DimsKeepdim));
  EXPECT_EQ(Keep.Kind, OpKind::Copy);
  expectGeometry(Keep, {2, 1, 4}, {4, 4, 1}, 0, DType::Float32);
  EXPECT_EQ(Keep.ReadBytes, std::optional<int64_t>(96));
  EXPECT_EQ(Keep.WrittenBytes, std::optional<int64_t>(32));
  // Without keepdim the dim goes: [2,4], strides [4,1].
  OpOutcome Drop = run(bind("sum", 0, {tensorArg(X), intListArg({1}), boolArg(false)},
                            true, DimsKeepdim));
  expectGeometry(Drop, {2, 4}, {4, 1}, 0, DType::Float32);
}

TEST(OpRules, SumOfIntegersIsInt64AndMeanOfIntegersThrows) {
  TensorValue I = dense({2, 3}, DType::Int32);
  OpOutcome Sum = run(bind("sum", 0, {tensorArg(I), intListArg({0})}, true,
                           DimsKeepdim));
  expectGeometry(Sum, {3}, {1}, 0, DType::Int64);
  OpOutcome Mean = run(bind("mean", 0, {tensorArg(I), intListArg({0})}, true,
                            DimsKeepdim));
  expectThrows(Mean,
               "mean(): could not infer output dtype. Input dtype must be either "
               "a floating point or complex dtype. Got: Int",
               "mean(): could not infer output dtype. Input dtype must be either "
               "a floating point or complex dtype. Got: ");
}

TEST(OpRules, MeanOfAZeroDimTensorOverItsLastDim) {
  // torch::scalar_tensor(2.).mean({-1}, true): a 0-d tensor may name dim -1
  // (or 0); the result is 0-d too. (The rule used to read past the end of
  // its list of reduced dims here.)
  TensorValue S = dense({}, DType::Float32);
  OpOutcome Mean = run(bind("mean", 0, {tensorArg(S), intListArg({-1}), boolArg(true)},
                            true, DimsKeepdim));
  EXPECT_EQ(Mean.Kind, OpKind::Copy);
  expectGeometry(Mean, {}, {}, 0, DType::Float32);
}

// ---- cat ----------------------------------------------------------------------------

TEST(OpRules, CatAddsTheDimAndPromotes) {
  // cat({[2,3], [4,3]}, 0): [6,3] float32, 72 B; reads both inputs.
  OpOutcome Out = run(bind("cat", 0,
                           {tensorListArg({dense({2, 3}), dense({4, 3})}), intArg(0)},
                           false));
  EXPECT_EQ(Out.Kind, OpKind::Copy);
  expectGeometry(Out, {6, 3}, {3, 1}, 0, DType::Float32);
  EXPECT_EQ(Out.ReadBytes, std::optional<int64_t>(72));
  EXPECT_EQ(Out.WrittenBytes, std::optional<int64_t>(72));
  // The alias, with the dim left to its default 0, and mixed dtypes:
  // result_type(float32, float64) is float64.
  OpOutcome Mixed = run(bind("concat", 0,
                             {tensorListArg({dense({2, 3}), dense({1, 3}, DType::Float64)})},
                             false));
  expectGeometry(Mixed, {3, 3}, {3, 1}, 0, DType::Float64);
}

TEST(OpRules, CatOfMismatchedSizesThrows) {
  OpOutcome Out = run(bind("cat", 0,
                           {tensorListArg({dense({2, 3}), dense({1, 2})}), intArg(0)},
                           false));
  expectThrows(Out,
               "Sizes of tensors must match except in dimension 0. Expected size 3 "
               "but got size 2 for tensor number 1 in the list.",
               "Sizes of tensors must match except in dimension 0. Expected size 3 "
               "but got size 2 for tensor number 1 in the list.");
  OpOutcome Dim = run(bind("cat", 0,
                           {tensorListArg({dense({2, 3}), dense({4, 3})}), intArg(2)},
                           false));
  expectThrows(Dim,
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
               "Dimension out of range (expected to be in range of [-2, 1]");
}

// ---- NN elementwise ops: activations, clamp, masked_fill, tril, dropout ------------

ArgValue floatArg(double V) {
  ArgValue A;
  A.K = ArgValue::Kind::Number;
  A.Number = V;
  A.Floating = true;
  return A;
}

TEST(OpRules, ComparisonIsBoolEvenWhenAnOperandDtypeIsUnknown) {
  // pred.eq(target) with target's dtype unknown: eq's output is created as
  // kBool whatever the operands are.
  TensorValue Unknown = dense({3, 4});
  Unknown.Type.reset();
  Unknown.UnknownReason = "dtype of a parameter";
  OpOutcome Out = run(bind("eq", 0, {tensorArg(dense({3, 4})), tensorArg(Unknown)}));
  EXPECT_EQ(Out.Kind, OpKind::Copy);
  EXPECT_EQ(Out.Value.Type, std::optional<DType>(DType::Bool));
  EXPECT_EQ(Out.WrittenBytes, std::optional<int64_t>(12));
}

TEST(OpRules, TrilIsAContiguousCopyAndNeedsTwoDims) {
  // tril of the transposed [2,4,3] (strides [12,1,4]): contiguous [12,3,1].
  OpOutcome Out = run(bind("tril", 0, {tensorArg(transposed())}));
  EXPECT_EQ(Out.Kind, OpKind::Copy);
  expectGeometry(Out, {2, 4, 3}, {12, 3, 1}, 0, DType::Float32);
  EXPECT_EQ(Out.ReadBytes, std::optional<int64_t>(96));
  OpOutcome Bad = run(bind("triu", 0, {tensorArg(dense({4}))}));
  expectThrows(Bad, "Dimension out of range (expected to be in range of [-1, 0], but got -2)",
               "Dimension out of range (expected to be in range of [-1, 0], but got -2)");
}

TEST(OpRules, MaskedFillBroadcastsMaskAndSelfIntoAContiguousResult) {
  // [4] self, [3, 4] bool mask: expand_outplace then clone(Contiguous).
  TensorValue Mask = dense({3, 4}, DType::Bool);
  OpOutcome Out = run(bind("masked_fill", 0,
                           {tensorArg(dense({4})), tensorArg(Mask), doubleScalarArg(1.5)}));
  EXPECT_EQ(Out.Kind, OpKind::Copy);
  expectGeometry(Out, {3, 4}, {4, 1}, 0, DType::Float32);
  // 1.13 takes an int32 mask without an error: not modelled, not a throw.
  OpOutcome Int = run(bind("masked_fill", 0,
                           {tensorArg(dense({3, 4})), tensorArg(dense({3, 4}, DType::Int32)),
                            doubleScalarArg(0)}));
  EXPECT_EQ(Int.Kind, OpKind::Unknown);
}

TEST(OpRules, ClampOfIntegersWithAFloatBoundIsFloat) {
  // int64 [3, 4].clamp(0.5): result_type(int64, 0.5) is float32.
  OpOutcome Out = run(bind("clamp", 0, {tensorArg(dense({3, 4}, DType::Int64)),
                                        doubleScalarArg(0.5)}));
  expectGeometry(Out, {3, 4}, {4, 1}, 0, DType::Float32);
  OpOutcome Same = run(bind("clamp_min", 0, {tensorArg(dense({3, 4})), doubleScalarArg(0)}));
  expectGeometry(Same, {3, 4}, {4, 1}, 0, DType::Float32);
}

TEST(OpRules, LeakyReluKeepsTheInputsLayout) {
  OpOutcome Out = run(bind("leaky_relu", 0, {tensorArg(transposed()), doubleScalarArg(0.2)}));
  EXPECT_EQ(Out.Kind, OpKind::Copy);
  expectGeometry(Out, {2, 4, 3}, {12, 1, 4}, 0, DType::Float32);
}

TEST(OpRules, DropoutReturnsItsInputUnlessItDrops) {
  // train == false: `return input`, the same tensor.
  OpOutcome Eval = run(bind("dropout", 0, {tensorArg(X), floatArg(0.5), boolArg(false)}, false));
  EXPECT_EQ(Eval.Kind, OpKind::Self);
  expectNoTraffic(Eval);
  // train: input * noise, the noise (96 B, contiguous) freed on return.
  OpOutcome Train = run(bind("dropout", 0, {tensorArg(transposed()), floatArg(0.5), boolArg(true)}, false));
  EXPECT_EQ(Train.Kind, OpKind::Copy);
  expectGeometry(Train, {2, 4, 3}, {12, 1, 4}, 0, DType::Float32);
  EXPECT_EQ(Train.TransientBytes, std::optional<int64_t>(96));
  OpOutcome Bad = run(bind("dropout", 0, {tensorArg(X), floatArg(1.5), boolArg(true)}, false));
  expectThrows(Bad, "dropout probability has to be between 0 and 1, but got 1.5",
               "dropout probability has to be between 0 and 1, but got 1.5");
}

// ---- matmul and linear: the operands they copy themselves --------------------------

// What torch-contiguous-copy asks (model/Ops.h): would the op copy this
// non-contiguous operand itself? testdata/ops/compute.cpp's
// matmul_strided_operands measures the same layouts on LibTorch.
TEST(OpRules, MatmulCopiesAnOperandItsReshapeCannotView) {
  TorchVersion V113;
  TensorValue W = dense({4, 5}), Weight = dense({5, 4});
  // transpose(0, 1) of [3, 2, 4]: [2, 3, 4] with strides [4, 8, 1]; the
  // fold's reshape({6, 4}) cannot be a view of it.
  TensorValue Folded = transpose(dense({3, 2, 4}), 0, 1).Value;
  EXPECT_EQ(matmulCopiesOperand(Folded, W, 0, V113), Tri::True);
  EXPECT_EQ(matmulCopiesOperand(Folded, W, 1, V113), Tri::False);
  EXPECT_EQ(linearCopiesInput(Folded, Weight, true, V113), Tri::True);
  EXPECT_EQ(linearCopiesInput(Folded, Weight, false, V113), Tri::True);
  // transpose(1, 2) of a contiguous [2, 4, 3]: 1.13's should_fold hands it
  // to bmm as it is.
  TensorValue ToBmm = transpose(dense({2, 4, 3}), 1, 2).Value;
  EXPECT_EQ(matmulCopiesOperand(ToBmm, W, 0, V113), Tri::False);
  EXPECT_EQ(linearCopiesInput(ToBmm, Weight, true, V113), Tri::False);
  // A 2-D input: addmm and mm take the transposed strides.
  TensorValue T2 = transpose(dense({4, 3}), 0, 1).Value;
  EXPECT_EQ(linearCopiesInput(T2, Weight, true, V113), Tri::False);
  EXPECT_EQ(linearCopiesInput(T2, Weight, false, V113), Tri::False);
  // Batched: transpose(1, 2) of [2, 5, 3, 4] has batch dims (2, 3) that
  // reshape({6, 5, 4}) cannot merge; the contiguous one can.
  TensorValue Q = transpose(dense({2, 5, 3, 4}), 1, 2).Value;
  EXPECT_EQ(matmulCopiesOperand(Q, dense({2, 3, 4, 6}), 0, V113), Tri::True);
  EXPECT_EQ(matmulCopiesOperand(dense({2, 3, 5, 4}), dense({2, 3, 4, 6}), 0, V113),
            Tri::False);
  // Operands that do not multiply: nothing is claimed.
  EXPECT_EQ(matmulCopiesOperand(Folded, Weight, 0, V113), Tri::Unknown);
}

} // namespace
