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
#include "model/Decide.h"
#include "model/Ops.h"
#include "model/ShapeEnv.h"
#include "model/ops/OpTable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>

using namespace tma;

namespace {

TensorValue dense(const Shape &Sizes, DType Type = DType::Float32) {
  return makeContiguous(Sizes, Type, Device{});
}

ArgValue tensorArg(const TensorValue &V) {
  ArgValue A;
  A.K = ArgValue::Kind::Tensor;
  A.TV = V;
  return A;
}
ArgValue tensorListArg(std::initializer_list<TensorValue> Vs) {
  ArgValue A;
  A.K = ArgValue::Kind::TensorList;
  A.TVs = Vs;
  return A;
}
ArgValue intArg(int64_t V) {
  ArgValue A;
  A.K = ArgValue::Kind::Int;
  A.Int = V;
  return A;
}
/// A list argument: a Shape (view, reshape) or a DimList (a reduction's dims).
ArgValue intListArg(const std::vector<int64_t> &V) {
  ArgValue A;
  A.K = ArgValue::Kind::IntList;
  A.List = shapeOf(V);
  return A;
}
ArgValue boolArg(bool V) {
  ArgValue A;
  A.K = ArgValue::Kind::Bool;
  A.Bool = V;
  return A;
}
/// A C++ floating literal (2.5): a wrapped number of dtype float64.
ArgValue doubleScalarArg(double V) {
  ArgValue A;
  A.K = ArgValue::Kind::Scalar;
  A.Scalar = ElemOperand::scalar(DType::Float64);
  A.Number = V;
  A.Floating = true;
  A.LiteralType = DType::Float64;
  return A;
}
/// An argument the source gives but the analysis cannot derive.
ArgValue unknownArg(ArgType Type, const std::string &Reason) {
  ArgValue A;
  A.K = ArgValue::Kind::Unknown;
  A.Type = Type;
  A.Reason = Reason;
  return A;
}

/// Binds Args to overload Overload of the op written Written, taking each
/// argument's type from the schema, as the frontend's overload choice does.
/// A variadic schema ("(...)") is bound by the C++ types: pass Types.
OpCall bind(const std::string &Written, unsigned Overload,
            std::vector<ArgValue> Args, bool IsMethod = true,
            std::vector<ArgType> Types = {}) {
  OpCall C;
  C.Op = lookupOp(Written);
  C.Written = Written;
  C.Overload = Overload;
  C.IsMethod = IsMethod;
  if (!C.Op) {
    ADD_FAILURE() << "no table entry for " << Written;
    return C;
  }
  const Schema &S = C.Op->Overloads.at(Overload);
  for (size_t K = 0; K < Args.size(); ++K) {
    if (Args[K].Type != ArgType::Any)
      continue; // set by the case (an unknown argument)
    if (S.Variadic)
      Args[K].Type = K < Types.size() ? Types[K] : ArgType::Any;
    else if (K < S.Args.size())
      Args[K].Type = S.Args[K].Type;
    else
      ADD_FAILURE() << Written << ": more arguments than " << S.Text;
  }
  C.Args = std::move(Args);
  return C;
}

/// The single outcome of a rule.
OpOutcome run(const OpCall &C) {
  RuleResult R = applyRule(C);
  EXPECT_EQ(R.Outcomes.size(), 1u) << C.Written;
  if (R.Outcomes.empty())
    return unmodelled(C.Written);
  EXPECT_EQ(R.Outcomes[0].Code, C.Op->Code) << "applyRule stamps the op";
  return R.Outcomes[0];
}

void expectGeometry(const OpOutcome &Out, const Shape &Sizes, const Shape &Strides,
                    int64_t Offset, DType Type) {
  EXPECT_EQ(Out.Value.Sizes, std::optional<Shape>(Sizes));
  EXPECT_EQ(Out.Value.Strides, std::optional<Shape>(Strides));
  EXPECT_EQ(Out.Value.Offset, std::optional<int64_t>(Offset));
  EXPECT_EQ(Out.Value.Type, std::optional<DType>(Type));
  EXPECT_EQ(Out.Value.Dev, std::optional<Device>(Device{}));
  EXPECT_TRUE(Out.Value.UnknownReason.empty()) << Out.Value.UnknownReason;
}

/// The rule throws where LibTorch throws. Its message need not be
/// LibTorch's word for word (a rule may leave out the values LibTorch
/// appends), but must say what LibTorch says up to Shared: Shared is checked
/// to be part of LibTorch's own text (as 1.13.1 printed it) and of the
/// rule's.
void expectThrows(const OpOutcome &Out, const std::string &LibTorchText,
                  const std::string &Shared) {
  EXPECT_EQ(Out.Kind, OpKind::Throws);
  EXPECT_NE(LibTorchText.find(Shared), std::string::npos) << "test: " << Shared;
  EXPECT_NE(Out.Error.find(Shared), std::string::npos)
      << "rule says: " << Out.Error << "\nLibTorch says: " << LibTorchText;
}

/// A view or self: shares input 0's storage and moves no bytes.
void expectNoTraffic(const OpOutcome &Out) {
  EXPECT_EQ(Out.SharesInput, 0u);
  EXPECT_EQ(Out.ReadBytes, std::optional<int64_t>(0));
  EXPECT_EQ(Out.WrittenBytes, std::optional<int64_t>(0));
  EXPECT_EQ(Out.TransientBytes, std::optional<int64_t>(0));
}

const TensorValue X = dense({2, 3, 4}); // strides [12, 4, 1], 96 bytes
// x.transpose(1, 2): [2, 4, 3] with strides [12, 1, 4], not viewable as
// [2, 12].
TensorValue transposed() {
  OpOutcome T = transpose(X, 1, 2);
  return T.Value;
}

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

// ---- NN layers ----------------------------------------------------------------------

TEST(OpRules, Conv2dOutputSizeIsConvOutputSize) {
  // [2,3,9,8] * [4,3,3,3], stride 2, padding 1: (9 + 2 - 3) / 2 + 1 = 5,
  // (8 + 2 - 3) / 2 + 1 = 4; contiguous, as LibTorch 1.13.1 printed.
  OpOutcome Out = run(bind("conv2d", 0,
                           {tensorArg(dense({2, 3, 9, 8})), tensorArg(dense({4, 3, 3, 3})),
                            ArgValue(), intListArg({2}), intListArg({1})},
                           false));
  EXPECT_EQ(Out.Kind, OpKind::Copy);
  expectGeometry(Out, {2, 4, 5, 4}, {80, 20, 4, 1}, 0, DType::Float32);
  EXPECT_FALSE(Out.TransientBytes.has_value()) << "im2col / oneDNN buffers are unknown";
  OpOutcome Bad = run(bind("conv2d", 0,
                           {tensorArg(dense({2, 4, 5, 5})), tensorArg(dense({4, 3, 3, 3}))},
                           false));
  expectThrows(Bad,
               "Given groups=1, weight of size [4, 3, 3, 3], expected input[2, 4, 5, 5] to "
               "have 3 channels, but got 4 channels instead",
               "Given groups=1, weight of size [4, 3, 3, 3], expected input[2, 4, 5, 5] to "
               "have 3 channels, but got 4 channels instead");
}

TEST(OpRules, MaxPoolCeilModeDropsAWindowStartingInThePadding) {
  // [2,3,9,8], kernel [3,2], stride 2, padding 1, ceil_mode: H: ceil((9 + 2
  // - 3) / 2) + 1 = 5; W: ceil((8 + 2 - 2) / 2) + 1 = 5, then (5 - 1) * 2 = 8
  // >= 8 + 1 is false, so 5 stays.
  OpOutcome Out = run(bind("max_pool2d", 0,
                           {tensorArg(dense({2, 3, 9, 8})), intListArg({3, 2}),
                            intListArg({2, 2}), intListArg({1}), intListArg({1}),
                            boolArg(true)},
                           false));
  expectGeometry(Out, {2, 3, 5, 5}, {75, 25, 5, 1}, 0, DType::Float32);
}


// ---- Losses -------------------------------------------------------------------------
//
// The values below are what LibTorch 1.13.1 printed for the same calls
// (testdata/ops/losses.cpp and its truth rows).

/// A torch::nn options object setting reduction to an enumtype
/// (`F::CrossEntropyFuncOptions().reduction(torch::kNone)`), the rest
/// defaulted.
ArgValue reductionOptions(const std::string &Record, const std::string &Reduction) {
  auto N = std::make_shared<NamedArgs>();
  N->Record = Record;
  ArgValue R;
  R.K = ArgValue::Kind::Other;
  R.Str = Reduction;
  N->Values["reduction"] = R;
  ArgValue A;
  A.K = ArgValue::Kind::NNOptions;
  A.Named = N;
  return A;
}

TEST(OpRules, CrossEntropyReducesToZeroDimUnlessNone) {
  // [4, 5] logits, [4] int64 class indices: Mean (the default) and Sum
  // give a fresh 0-d float32 tensor, None gives [4].
  TensorValue Logits = dense({4, 5}), Classes = dense({4}, DType::Int64);
  OpOutcome Mean = run(bind("cross_entropy_loss", 0,
                            {tensorArg(Logits), tensorArg(Classes)}, false));
  EXPECT_EQ(Mean.Kind, OpKind::Copy);
  expectGeometry(Mean, {}, {}, 0, DType::Float32);
  EXPECT_EQ(Mean.WrittenBytes, std::optional<int64_t>(4));
  EXPECT_EQ(Mean.ReadBytes, std::optional<int64_t>(80 + 32));
  EXPECT_FALSE(Mean.TransientBytes.has_value()) << "log_softmax's output is not modelled";
  OpOutcome None = run(bind("cross_entropy_loss", 0,
                            {tensorArg(Logits), tensorArg(Classes), ArgValue(), intArg(0)},
                            false));
  expectGeometry(None, {4}, {1}, 0, DType::Float32);
  // F::cross_entropy(x, t, F::CrossEntropyFuncOptions().reduction(torch::kNone)).
  OpOutcome Functional = run(bind(
      "cross_entropy", 1,
      {tensorArg(Logits), tensorArg(Classes),
       reductionOptions("torch::nn::CrossEntropyLossOptions", "none")},
      false));
  expectGeometry(Functional, {4}, {1}, 0, DType::Float32);
  // A spatial input [2, 5, 7] with target [2, 7]: nll_loss_nd's [N, d1].
  OpOutcome Spatial = run(bind("cross_entropy_loss", 0,
                               {tensorArg(dense({2, 5, 7})),
                                tensorArg(dense({2, 7}, DType::Int64)), ArgValue(),
                                intArg(0)},
                               false));
  expectGeometry(Spatial, {2, 7}, {7, 1}, 0, DType::Float32);
}

TEST(OpRules, CrossEntropyErrorsAreLibTorchs) {
  OpOutcome Batch = run(bind("cross_entropy_loss", 0,
                             {tensorArg(dense({4, 5})), tensorArg(dense({3}, DType::Int64))},
                             false));
  expectThrows(Batch, "Expected input batch_size (4) to match target batch_size (3).",
               "Expected input batch_size (4) to match target batch_size (3).");
  // A target of the input's shape holds class probabilities: it must be
  // floating.
  OpOutcome LongProbabilities =
      run(bind("cross_entropy_loss", 0,
               {tensorArg(dense({4, 5})), tensorArg(dense({4, 5}, DType::Int64))}, false));
  expectThrows(LongProbabilities,
               "Expected floating point type for target with class probabilities, got Long",
               "Expected floating point type for target with class probabilities, got Long");
  // Class probabilities: the input's shape less the class dim.
  OpOutcome Probabilities = run(bind("cross_entropy_loss", 0,
                                     {tensorArg(dense({2, 5, 3})), tensorArg(dense({2, 5, 3})),
                                      ArgValue(), intArg(0)},
                                     false));
  expectGeometry(Probabilities, {2, 3}, {3, 1}, 0, DType::Float32);
  // Class indices of another dtype than int64: not guessed.
  OpOutcome IntClasses = run(bind("cross_entropy_loss", 0,
                                  {tensorArg(dense({4, 5})), tensorArg(dense({4}, DType::Int32))},
                                  false));
  EXPECT_EQ(IntClasses.Kind, OpKind::Unknown);
}

TEST(OpRules, NllLossShapesFollowTheTarget) {
  // nll_loss2d: [2, 5, 3, 4] with [2, 3, 4] -> [2, 3, 4]; a 4-D target
  // mismatch throws as LibTorch does.
  OpOutcome Spatial = run(bind("nll_loss2d", 0,
                               {tensorArg(dense({2, 5, 3, 4})),
                                tensorArg(dense({2, 3, 4}, DType::Int64)), ArgValue(),
                                intArg(0)},
                               false));
  expectGeometry(Spatial, {2, 3, 4}, {12, 4, 1}, 0, DType::Float32);
  OpOutcome Multi = run(bind("nll_loss", 0,
                             {tensorArg(dense({4, 5})), tensorArg(dense({4, 2}, DType::Int64))},
                             false));
  expectThrows(Multi, "0D or 1D target tensor expected, multi-target not supported",
               "0D or 1D target tensor expected, multi-target not supported");
  OpOutcome Mismatch = run(bind("nll_loss_nd", 0,
                                {tensorArg(dense({2, 5, 3, 4})),
                                 tensorArg(dense({2, 3, 5}, DType::Int64)), ArgValue(),
                                 intArg(0)},
                                false));
  expectThrows(Mismatch, "size mismatch (got input: [2, 5, 3, 4] , target: [2, 3, 5]",
               "size mismatch (got input: [2, 5, 3, 4] , target: [2, 3, 5]");
}

TEST(OpRules, MseLossReducesIntoItsUnreducedStorage) {
  // mse_loss's structured output is resized to {} when reducing: the 0-d
  // result keeps the [4, 3] loss's 48 B (LibTorch 1.13.1: nbytes 48).
  OpOutcome Mean = run(bind("mse_loss", 0, {tensorArg(dense({4, 3})), tensorArg(dense({4, 3}))},
                            false));
  expectGeometry(Mean, {}, {}, 0, DType::Float32);
  EXPECT_EQ(Mean.StorageBytes, std::optional<int64_t>(48));
  // l1_loss is (input - target).abs().mean(): a fresh 0-d result.
  OpOutcome L1 = run(bind("l1_loss", 0, {tensorArg(dense({4, 3})), tensorArg(dense({4, 3}))},
                          false));
  EXPECT_FALSE(L1.StorageBytes.has_value());
  // None broadcasts like a TensorIterator: the first operand's layout wins.
  OpOutcome None = run(bind("mse_loss", 0,
                            {tensorArg(transpose(dense({4, 3}), 0, 1).Value),
                             tensorArg(dense({3, 4})), intArg(0)},
                            false));
  expectGeometry(None, {3, 4}, {1, 3}, 0, DType::Float32);
  // float32 with float64: one TensorIterator op, so float64.
  OpOutcome Mixed = run(bind("mse_loss", 0,
                             {tensorArg(dense({4, 3})), tensorArg(dense({4, 3}, DType::Float64))},
                             false));
  EXPECT_EQ(Mixed.Value.Type, std::optional<DType>(DType::Float64));
  EXPECT_EQ(Mixed.StorageBytes, std::optional<int64_t>(96));
  // Mixed dtypes elsewhere are not guessed.
  OpOutcome KlMixed = run(bind("kl_div", 0,
                               {tensorArg(dense({4, 3})), tensorArg(dense({4, 3}, DType::Float64))},
                               false));
  EXPECT_EQ(KlMixed.Kind, OpKind::Unknown);
}

TEST(OpRules, BinaryCrossEntropyFunctionalNeedsOneSize) {
  // F::binary_cross_entropy throws on a target of another size.
  OpOutcome Bad = run(bind("binary_cross_entropy", 1,
                           {tensorArg(dense({4, 3})), tensorArg(dense({4, 1})),
                            reductionOptions("torch::nn::BCELossOptions", "mean")},
                           false));
  expectThrows(Bad,
               "Using a target size ([4, 1]) that is different to the input size ([4, 3]) "
               "is deprecated. Please ensure they have the same size.",
               "Using a target size ([4, 1]) that is different to the input size ([4, 3])");
  // Unreduced, it is empty_like(input): a transposed input's layout.
  OpOutcome None = run(bind("binary_cross_entropy", 0,
                            {tensorArg(transpose(dense({4, 3}), 0, 1).Value),
                             tensorArg(transpose(dense({4, 3}), 0, 1).Value), ArgValue(),
                             intArg(0)},
                            false));
  expectGeometry(None, {3, 4}, {1, 3}, 0, DType::Float32);
}

// ---- Symbolic sizes and parameters' dtypes (docs/symbolic.md) ---------------------
//
// The rules under a function's ShapeEnv, as the frontend installs it: a
// decision the facts cannot settle is either stated as an assumption
// (ShapeEnv::assumptions) or the answer is unknown.

/// Parameter Name as the frontend declares it: one symbol per dim,
/// contiguous, its dtype the caller's unless Type is given.
TensorValue parameter(ShapeEnv &Env, const std::string &Name, int Rank,
                      std::optional<DType> Type = std::nullopt) {
  TensorValue V;
  Shape Sizes;
  for (int K = 0; K < Rank; ++K)
    Sizes.push_back(Env.tensorSize(Name, K));
  V.Sizes = Sizes;
  V.Strides = contiguousStrides(Sizes);
  V.Offset = SymSize(0);
  V.Type = Type;
  if (!Type)
    V.TypeOf = Name;
  return V;
}

/// `p.scalar_type()` as a ScalarType argument, p's dtype the caller's.
ArgValue dtypeOfParameterArg(const std::string &Param) {
  ArgValue A;
  A.K = ArgValue::Kind::Unknown;
  A.TypeOf = Param;
  A.Reason = "the dtype is " + Param + ".scalar_type(), the caller's";
  return A;
}

ArgValue dtypeArg(DType T) {
  ArgValue A;
  A.K = ArgValue::Kind::DType;
  A.Type_ = T;
  return A;
}

TEST(OpRulesSymbolic, ChunkOfASymbolicDimStatesTheEvenSplit) {
  // qkv.chunk(3, -1) of (B, 3C'): LibTorch gives ceil(n / ceil(n / 3))
  // pieces, 3 for n = 6 and 2 for n = 4; the list's length must be a
  // number, so the answer specialises to n % 3 == 0, stated.
  ShapeEnv Env;
  DecisionScope Scope(Env);
  TensorValue Qkv = parameter(Env, "qkv", 2);
  RuleResult R = applyRule(bind("chunk", 0, {tensorArg(Qkv), intArg(3), intArg(-1)}));
  ASSERT_EQ(R.Outcomes.size(), 3u);
  SymSize N = Env.tensorSize("qkv", 1), B = Env.tensorSize("qkv", 0);
  for (int K = 0; K < 3; ++K) {
    const OpOutcome &P = R.Outcomes[K];
    EXPECT_EQ(P.Kind, OpKind::View);
    EXPECT_EQ(P.Value.Sizes, std::optional<Shape>(Shape{B, SymSize::floorDiv(N, 3)}));
    EXPECT_EQ(P.Value.Strides, std::optional<Shape>(Shape{N, SymSize(1)}));
    EXPECT_EQ(Env.simplify(*P.Value.Offset), Env.simplify(SymSize::floorDiv(N, 3) * K));
  }
  std::vector<std::string> A = Env.assumptions();
  EXPECT_NE(std::find(A.begin(), A.end(), "qkv.size(1) % 3 == 0"), A.end())
      << ::testing::PrintToString(A);
}

TEST(OpRulesSymbolic, ChunkWithAKnownRemainderIsNotAssumedEven) {
  // A fact that says the dim is not a multiple: nothing is assumed against
  // it, and the count of pieces is not a number.
  ShapeEnv Env;
  DecisionScope Scope(Env);
  TensorValue X = parameter(Env, "x", 1);
  Env.addFact(SymRelation::eq(SymSize::mod(Env.tensorSize("x", 0), 3), 1));
  RuleResult R = applyRule(bind("chunk", 0, {tensorArg(X), intArg(3), intArg(0)}));
  ASSERT_EQ(R.Outcomes.size(), 1u);
  EXPECT_FALSE(R.Outcomes[0].Value.Sizes.has_value());
  EXPECT_NE(R.Outcomes[0].Value.UnknownReason.find("is not a number"), std::string::npos)
      << R.Outcomes[0].Value.UnknownReason;
  std::vector<std::string> A = Env.assumptions();
  EXPECT_EQ(std::find(A.begin(), A.end(), "x.size(0) % 3 == 0"), A.end())
      << ::testing::PrintToString(A);
}

TEST(OpRulesSymbolic, ArangeOfASymbolicEnd) {
  // torch::arange(T, lengths.options()) with T = hidden.size(1): T
  // elements of lengths' dtype; arange(s, e, 2): ceil((e - s) / 2), and
  // e >= s is what LibTorch needs to go on (stated).
  ShapeEnv Env;
  DecisionScope Scope(Env);
  SymSize T = Env.tensorSize("hidden", 1);
  ArgValue End;
  End.K = ArgValue::Kind::Scalar;
  End.Scalar = ElemOperand::scalar(DType::Int64);
  End.Integral = T;
  ArgValue Opts;
  Opts.K = ArgValue::Kind::Options;
  Opts.Options.HasType = true;
  Opts.Options.TypeOf = "lengths";
  OpOutcome Out = run(bind("arange", 0, {End, Opts}, false,
                           {ArgType::Scalar, ArgType::Options}));
  EXPECT_EQ(Out.Kind, OpKind::Alloc);
  EXPECT_EQ(Out.Value.Sizes, std::optional<Shape>(Shape{T}));
  EXPECT_EQ(Out.Value.TypeOf, "lengths");
  // Nothing about the bounds: a size is >= 0, and a 1-d result's stride
  // and bytes (4·T, 0 at T = 0) need nothing about T (issue 32).
  EXPECT_TRUE(Env.assumptions().empty());

  SymSize S = Env.integer("s"), E = Env.integer("e");
  ArgValue Start = End, Stop = End, Step = End;
  Start.Integral = S;
  Stop.Integral = E;
  Step.Integral = SymSize(2);
  OpOutcome Stepped = run(bind("arange", 0, {Start, Stop, Step}, false,
                               {ArgType::Scalar, ArgType::Scalar, ArgType::Scalar}));
  EXPECT_EQ(Stepped.Value.Sizes, std::optional<Shape>(Shape{SymSize::ceilDiv(E - S, 2)}));
  EXPECT_EQ(Stepped.Value.Type, std::optional<DType>(DType::Int64));
  // LibTorch's requirement, then the factory's own (a size is >= 0), which
  // the range prover does not derive from it.
  EXPECT_EQ(Env.assumptions(),
            (std::vector<std::string>{"0 <= e - s",
                                      "0 <= (e + s + 1) / 2 - s"}));

  // A symbolic step is not modelled: unknown, with the reason.
  Step.Integral = Env.integer("k");
  OpOutcome Unstepped = run(bind("arange", 0, {Start, Stop, Step}, false,
                                 {ArgType::Scalar, ArgType::Scalar, ArgType::Scalar}));
  EXPECT_FALSE(Unstepped.Value.Sizes.has_value());
  EXPECT_EQ(Unstepped.Value.UnknownReason, "arange bounds could not be derived");
}

TEST(OpRulesSymbolic, ToAParametersDtype) {
  ShapeEnv Env;
  DecisionScope Scope(Env);
  // mask.to(hidden.scalar_type()) of a bool mask: a copy in hidden's
  // dtype, under hidden.is_floating_point() (stated).
  TensorValue Mask = dense({4, 5}, DType::Bool);
  OpOutcome Cast = run(bind("to", 2, {tensorArg(Mask), dtypeOfParameterArg("hidden")}));
  EXPECT_EQ(Cast.Kind, OpKind::Copy);
  EXPECT_FALSE(Cast.Value.Type.has_value());
  EXPECT_EQ(Cast.Value.TypeOf, "hidden");
  EXPECT_EQ(Cast.WrittenBytes,
            std::optional<SymSize>(SymSize(20) * SymSize::symbol("hidden.element_size()")));
  EXPECT_EQ(Env.assumptions(), std::vector<std::string>{"hidden.is_floating_point()"});

  // x.to(x.scalar_type()): the same dtype, self.
  TensorValue X = parameter(Env, "x", 2);
  OpOutcome Same = run(bind("to", 2, {tensorArg(X), dtypeOfParameterArg("x")}));
  EXPECT_EQ(Same.Kind, OpKind::Self);
  EXPECT_EQ(Same.Value.TypeOf, "x");

  // scale.to(x.scalar_type()): equal for some callers, not for others:
  // unknown whether it copies, but the dtype is x's.
  TensorValue Scale = parameter(Env, "scale", 1);
  OpOutcome Either = run(bind("to", 2, {tensorArg(Scale), dtypeOfParameterArg("x")}));
  EXPECT_EQ(Either.Kind, OpKind::Unknown);
  EXPECT_EQ(Either.Value.TypeOf, "x");
  // Self or a Preserve copy of a dense input: the same geometry either way.
  EXPECT_EQ(Either.Value.Sizes, Scale.Sizes);
  EXPECT_EQ(Either.Value.Strides, Scale.Strides);
  EXPECT_EQ(Either.Value.Offset, std::optional<SymSize>(SymSize(0)));
  // Not so for a view at an offset: a copy starts at 0.
  ArgValue One = intArg(1);
  One.Size = SymSize(1); // narrow reads its start and length as sizes
  TensorValue Tail = run(bind("narrow", 0, {tensorArg(Scale), intArg(0), One, One})).Value;
  ASSERT_EQ(Tail.Offset, std::optional<SymSize>(SymSize(1)));
  OpOutcome Moved = run(bind("to", 2, {tensorArg(Tail), dtypeOfParameterArg("x")}));
  EXPECT_EQ(Moved.Kind, OpKind::Unknown);
  EXPECT_FALSE(Moved.Value.Offset.has_value());
  EXPECT_EQ(Either.Value.UnknownReason,
            "whether the input's dtype (scale.scalar_type()) is already "
            "x.scalar_type() is not known, so whether to() copies is unknown");

  // A float32 tensor to a floating parameter's dtype: float32 is floating
  // too, so nothing settles it.
  OpOutcome Float = run(bind("to", 2, {tensorArg(dense({2})), dtypeOfParameterArg("hidden")}));
  EXPECT_EQ(Float.Kind, OpKind::Unknown);

  // rois.to(at::kLong), rois's dtype the caller's: int64 rois make it
  // self; the reason says so (not the parameter's device).
  TensorValue Rois = parameter(Env, "rois", 2);
  Rois.markUnknown("parameter 'rois': its device is the caller's");
  OpOutcome Long = run(bind("to", 2, {tensorArg(Rois), dtypeArg(DType::Int64)}));
  EXPECT_EQ(Long.Kind, OpKind::Unknown);
  EXPECT_EQ(Long.Value.Type, std::optional<DType>(DType::Int64));
  EXPECT_EQ(Long.Value.UnknownReason,
            "whether the input's dtype (rois.scalar_type()) is already int64 "
            "is not known, so whether to() copies is unknown");
}

} // namespace
