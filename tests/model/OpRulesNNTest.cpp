// Op rules called directly, without Clang: NN layers, losses, and rules
// under a function's ShapeEnv (symbolic sizes, parameters' dtypes). Split
// from OpRulesTest.cpp (which says what these tests are and how their
// expected values were obtained) to keep each file under 800 lines.
#include "tests/model/OpRulesSupport.h"

using namespace tma;
using namespace tma::oprules_test;

namespace {

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
  // 1.13 (the default version here): log_softmax's [4, 5] output and the
  // 0-d total_weight come and go inside, and are what autograd keeps.
  EXPECT_EQ(Mean.TransientBytes, std::optional<int64_t>(80 + 4));
  ASSERT_EQ(Mean.Intermediates.size(), 2u);
  EXPECT_EQ(Mean.Intermediates[0], SymSize(80));
  EXPECT_EQ(Mean.Intermediates[1], SymSize(4));
  // Other versions are not measured: unknown.
  OpCall Later = bind("cross_entropy_loss", 0, {tensorArg(Logits), tensorArg(Classes)}, false);
  Later.Version = TorchVersion{2, 1};
  OpOutcome LaterMean = run(Later);
  EXPECT_FALSE(LaterMean.TransientBytes.has_value());
  EXPECT_TRUE(LaterMean.Intermediates.empty());
  OpOutcome None = run(bind("cross_entropy_loss", 0,
                            {tensorArg(Logits), tensorArg(Classes), ArgValue(), intArg(0)},
                            false));
  expectGeometry(None, {4}, {1}, 0, DType::Float32);
  EXPECT_FALSE(None.TransientBytes.has_value()) << "None is not measured";
  // Label smoothing computes a smoothed loss besides: not measured either.
  OpOutcome Smoothed = run(bind("cross_entropy_loss", 0,
                                {tensorArg(Logits), tensorArg(Classes), ArgValue(),
                                 intArg(1), intArg(-100), doubleScalarArg(0.1)},
                                false));
  EXPECT_FALSE(Smoothed.TransientBytes.has_value());
  EXPECT_TRUE(Smoothed.Intermediates.empty());
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
  // 1.13's mse_loss_out reduces a 48 B temporary into it; mean's div_ by
  // the count wraps it (8 B) and converts it to float (4 B).
  EXPECT_EQ(Mean.TransientBytes, std::optional<int64_t>(48 + 12));
  OpOutcome Sum = run(bind("mse_loss", 0,
                           {tensorArg(dense({4, 3})), tensorArg(dense({4, 3})), intArg(2)},
                           false));
  EXPECT_EQ(Sum.TransientBytes, std::optional<int64_t>(48));
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
