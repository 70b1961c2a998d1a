// Elementwise rules (OpTable.def's Elementwise family): arithmetic,
// comparisons, unary ops, activations and their in-place forms over the
// TensorIterator geometry of TensorIterator.cpp, whose opening comment
// gives the traffic accounting every rule shares.
#include "model/Ops.h"
#include "model/ops/OpCodes.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tma {

using namespace detail;

namespace {

/// The operand an argument is: a tensor, or a C++ scalar that ATen wraps.
ElemOperand operandOf(const ArgValue &A) {
  if (A.K == ArgValue::Kind::Tensor)
    return ElemOperand::tensor(A.TV);
  if (A.K == ArgValue::Kind::Scalar)
    return A.Scalar;
  return ElemOperand::scalar(std::nullopt);
}

const char *const BoolNegError =
    "Negation, the `-` operator, on a bool tensor is not supported. If you "
    "are trying to invert a mask, use the `~` or `logical_not()` operator "
    "instead.";
const char *const BoolSubError =
    "Subtraction, the `-` operator, with a bool tensor is not supported. If "
    "you are trying to invert a mask, use the `~` or `logical_not()` "
    "operator instead.";

/// A unary op: relu, exp, ... (gelu takes no options here).
RuleResult unary(const OpCall &C, const std::string &Op, ElemDType Rule) {
  const TensorValue &In = C.self().TV;
  if (In.Type && *In.Type == DType::Bool) {
    if (Op == "neg")
      return one(throws(BoolNegError), Op);
    if (Op == "relu")
      return one(throws("Boolean inputs not supported for relu"), Op);
    if (Op == "abs")
      return notModelled(C, "abs of a bool tensor is not modelled");
  }
  return one(elementwise(Op, {ElemOperand::tensor(In)}, Rule), Op);
}

/// A binary op written with the C++ scalar on the left (ATen/
/// TensorOperators.h): `2 * x` is mul(x, 2), `2 < x` is gt(x, 2),
/// `2 - x` and `2 / x` are empty_like(x).fill_(2).sub_(x) / div_(x).
RuleResult scalarOnTheLeft(const OpCall &C, const std::string &Flipped,
                           bool Compare) {
  const ArgValue &S = C.arg(0), &T = C.arg(1);
  if (Flipped == "rsub" || Flipped == "rdiv")
    return one(reverseScalarOp(Flipped == "rsub" ? "sub" : "div",
                               operandOf(S), T.TV, Flipped == "rdiv"),
               Flipped);
  return one(elementwise(Flipped, {ElemOperand::tensor(T.TV), operandOf(S)},
                         Compare ? ElemDType::Bool : ElemDType::Promote),
             Flipped);
}

/// add/sub/mul/div/maximum/minimum/pow and the comparisons, with a tensor
/// self: (self, other[, alpha | rounding_mode]).
RuleResult binary(const OpCall &C, const std::string &Op, ElemDType Rule) {
  const TensorValue &In = C.self().TV;
  std::vector<ElemOperand> Ops = {ElemOperand::tensor(In), operandOf(C.arg(1))};
  // add/sub alpha; div rounding_mode.
  if (C.arg(2).given()) {
    if (Op == "div")
      return notModelledOnAll(C, "div with a rounding mode is not modelled");
    auto Common = resultType(Ops);
    const ArgValue &Alpha = C.arg(2);
    auto AlphaType = Alpha.K == ArgValue::Kind::Scalar ? Alpha.Scalar.ScalarType
                                                       : std::nullopt;
    if (!AlphaType || !Common ||
        (isIntegral(*Common, true) && *AlphaType == DType::Float64))
      return notModelledOnAll(C, "this alpha argument is not modelled");
  }
  if (Op == "sub") {
    // sub_check: any bool operand (a `true` scalar included) throws.
    bool AnyBool = false;
    for (const ElemOperand &O : Ops)
      AnyBool |= O.IsScalar ? O.ScalarType == DType::Bool
                            : O.T.Type == DType::Bool;
    if (AnyBool)
      return one(throws(BoolSubError), Op);
  }
  return one(elementwise(Op, Ops, Rule), Op);
}

/// An op with scalar-left, tensor-self and (for sub) unary overloads.
RuleResult arithmetic(const OpCall &C, const std::string &Op, ElemDType Rule,
                      const std::string &Flipped, bool Compare) {
  if (C.arg(0).Type == ArgType::Scalar)
    return scalarOnTheLeft(C, Flipped, Compare);
  return binary(C, Op, Rule);
}

} // namespace

RuleResult rule_add(const OpCall &C) {
  return arithmetic(C, "add", ElemDType::Promote, "add", false);
}
RuleResult rule_sub(const OpCall &C) {
  if (C.Args.size() == 1) // unary minus: Tensor::operator-()
    return unary(C, "neg", ElemDType::Promote);
  return arithmetic(C, "sub", ElemDType::Promote, "rsub", false);
}
RuleResult rule_mul(const OpCall &C) {
  return arithmetic(C, "mul", ElemDType::Promote, "mul", false);
}
RuleResult rule_div(const OpCall &C) {
  return arithmetic(C, "div", ElemDType::FloatPromote, "rdiv", false);
}
RuleResult rule_maximum(const OpCall &C) {
  return binary(C, "maximum", ElemDType::Promote);
}
RuleResult rule_minimum(const OpCall &C) {
  return binary(C, "minimum", ElemDType::Promote);
}
RuleResult rule_pow(const OpCall &C) {
  if (C.arg(0).Type == ArgType::Scalar)
    return notModelled(C, "'" + C.Written + "' is not modelled");
  return binary(C, "pow", ElemDType::Promote);
}
// A comparison with the scalar on the left flips: 2 < x is x > 2.
RuleResult rule_gt(const OpCall &C) {
  return arithmetic(C, "gt", ElemDType::Bool, "lt", true);
}
RuleResult rule_lt(const OpCall &C) {
  return arithmetic(C, "lt", ElemDType::Bool, "gt", true);
}
RuleResult rule_ge(const OpCall &C) {
  return arithmetic(C, "ge", ElemDType::Bool, "le", true);
}
RuleResult rule_le(const OpCall &C) {
  return arithmetic(C, "le", ElemDType::Bool, "ge", true);
}
RuleResult rule_eq(const OpCall &C) {
  return arithmetic(C, "eq", ElemDType::Bool, "eq", true);
}
RuleResult rule_ne(const OpCall &C) {
  return arithmetic(C, "ne", ElemDType::Bool, "ne", true);
}

RuleResult rule_exp(const OpCall &C) { return unary(C, "exp", ElemDType::FloatPromote); }
RuleResult rule_log(const OpCall &C) { return unary(C, "log", ElemDType::FloatPromote); }
RuleResult rule_sqrt(const OpCall &C) { return unary(C, "sqrt", ElemDType::FloatPromote); }
RuleResult rule_rsqrt(const OpCall &C) { return unary(C, "rsqrt", ElemDType::FloatPromote); }
RuleResult rule_tanh(const OpCall &C) { return unary(C, "tanh", ElemDType::FloatPromote); }
RuleResult rule_sigmoid(const OpCall &C) { return unary(C, "sigmoid", ElemDType::FloatPromote); }
RuleResult rule_sin(const OpCall &C) { return unary(C, "sin", ElemDType::FloatPromote); }
RuleResult rule_cos(const OpCall &C) { return unary(C, "cos", ElemDType::FloatPromote); }
RuleResult rule_relu(const OpCall &C) {
  // F::relu(x, ReLUFuncOptions): inplace(true) is relu_.
  if (const ArgValue *In = C.arg(1).option("inplace"); In && (!In->known() || In->Bool))
    return notModelled(C, "in-place relu through its options is not modelled");
  if (C.arg(1).K == ArgValue::Kind::NNOptions && !C.arg(1).Named->Complete)
    return notModelled(C, "relu options could not be derived");
  return unary(C, "relu", ElemDType::Promote);
}
RuleResult rule_neg(const OpCall &C) { return unary(C, "neg", ElemDType::Promote); }
RuleResult rule_abs(const OpCall &C) { return unary(C, "abs", ElemDType::Promote); }

RuleResult rule_gelu(const OpCall &C) {
  if (C.arg(1).given())
    return notModelled(C, "gelu options are not modelled");
  return unary(C, "gelu", ElemDType::FloatOnly);
}

// where(cond, self, other): TensorIterator sees (cond, self, other) in that
// order; the condition takes part in the layout, not in the dtype.
RuleResult rule_where(const OpCall &C) {
  const ArgValue &Cond = C.arg(0), &A = C.arg(1), &B = C.arg(2);
  if (Cond.TV.Type && *Cond.TV.Type != DType::Bool)
    return notModelledOnAll(C, "where with a non-bool condition is not modelled");
  ElemOperand OA = operandOf(A), OB = operandOf(B);
  OpOutcome Out = elementwise("where", {ElemOperand::tensor(Cond.TV), OA, OB},
                              ElemDType::Promote);
  if (Out.Kind == OpKind::Copy) {
    Out.Value.Type = resultType({OA, OB});
    if (!Out.Value.Type)
      Out.Value.markUnknown("dtype of an operand is unknown");
    Out.WrittenBytes = Out.Value.logicalBytes();
    // where converts operands of another dtype with .to() first.
    Out.TransientBytes.reset();
  }
  return one(Out, "where");
}

// ---- In place ----

namespace {

/// An in-place op on self: the further operands broadcast to self's shape
/// and ResultRule's dtype must cast into self's (ElemDType::Bool here means
/// "the value is cast into self": fill_, copy_, masked_fill_, clamp_).
RuleResult inPlaceRule(const OpCall &C, const std::string &Op,
                       ElemDType ResultRule, bool ReadsSelf,
                       std::vector<size_t> Operands) {
  const TensorValue &Self = C.self().TV;
  std::vector<ElemOperand> Others;
  for (size_t K : Operands) {
    const ArgValue &A = C.arg(K);
    if (!A.given())
      continue;
    Others.push_back(operandOf(A));
  }
  if (Op == "relu_" && Self.Type && *Self.Type == DType::Bool)
    return one(throws("Boolean inputs not supported for relu"), Op);
  return one(inPlace(Op, Self, Others, ResultRule, ReadsSelf), Op);
}

} // namespace

RuleResult rule_add_(const OpCall &C) {
  return inPlaceRule(C, "add_", ElemDType::Promote, true, {1});
}
RuleResult rule_sub_(const OpCall &C) {
  return inPlaceRule(C, "sub_", ElemDType::Promote, true, {1});
}
RuleResult rule_mul_(const OpCall &C) {
  return inPlaceRule(C, "mul_", ElemDType::Promote, true, {1});
}
RuleResult rule_div_(const OpCall &C) {
  return inPlaceRule(C, "div_", ElemDType::FloatPromote, true, {1, 2});
}
RuleResult rule_exp_(const OpCall &C) {
  return inPlaceRule(C, "exp_", ElemDType::FloatPromote, true, {});
}
RuleResult rule_sigmoid_(const OpCall &C) {
  return inPlaceRule(C, "sigmoid_", ElemDType::FloatPromote, true, {});
}
RuleResult rule_tanh_(const OpCall &C) {
  return inPlaceRule(C, "tanh_", ElemDType::FloatPromote, true, {});
}
RuleResult rule_neg_(const OpCall &C) {
  return inPlaceRule(C, "neg_", ElemDType::Promote, true, {});
}
RuleResult rule_relu_(const OpCall &C) {
  return inPlaceRule(C, "relu_", ElemDType::Promote, true, {});
}
// clamp_(min, max): only tensor bounds take part (a scalar bound is cast
// into self and changes nothing of its geometry).
RuleResult rule_clamp_(const OpCall &C) {
  std::vector<size_t> TensorBounds;
  for (size_t K : {size_t(1), size_t(2)})
    if (C.arg(K).K == ArgValue::Kind::Tensor)
      TensorBounds.push_back(K);
  return inPlaceRule(C, "clamp_", ElemDType::Bool, true, TensorBounds);
}
RuleResult rule_masked_fill_(const OpCall &C) {
  return inPlaceRule(C, "masked_fill_", ElemDType::Bool, true, {1, 2});
}
RuleResult rule_zero_(const OpCall &C) {
  return inPlaceRule(C, "zero_", ElemDType::Bool, false, {});
}
RuleResult rule_fill_(const OpCall &C) {
  return inPlaceRule(C, "fill_", ElemDType::Bool, false, {1});
}
RuleResult rule_copy_(const OpCall &C) {
  return inPlaceRule(C, "copy_", ElemDType::Bool, false, {1});
}

} // namespace tma

// ---- Activations, clamp, masked_fill, tril/triu, dropout ------------------------

namespace tma {

using namespace detail;

namespace {

/// An activation built as a TensorIterator unary op over self (structured
/// kernels: build_unary_op / build_borrowing_unary_op in Activation.cpp):
/// the output has self's dtype and TensorIterator's layout; only floating
/// kernels exist on the CPU. Its scalar arguments change no geometry.
RuleResult activation(const OpCall &C, const std::string &Op) {
  const ArgValue &O = C.arg(1);
  if (O.K == ArgValue::Kind::NNOptions) {
    const ArgValue *In = O.option("inplace");
    if (!O.Named->Complete || (In && (!In->known() || In->Bool)))
      return notModelled(C, "in-place " + Op + " or its options are not "
                            "modelled");
  }
  return one(elementwise(Op, {ElemOperand::tensor(C.self().TV)},
                         ElemDType::FloatOnly),
             Op);
}

} // namespace

RuleResult rule_leaky_relu(const OpCall &C) { return activation(C, "leaky_relu"); }
RuleResult rule_elu(const OpCall &C) { return activation(C, "elu"); }
RuleResult rule_silu(const OpCall &C) { return activation(C, "silu"); }
RuleResult rule_softplus(const OpCall &C) { return activation(C, "softplus"); }

// hardtanh (Activation.cpp): result = at::empty_like(self), then
// hardtanh_out -> clamp_out into it, so the output has empty_like's layout
// (Preserve) and self's dtype; "Bool inputs not allowed for hardtanh".
// Integral inputs go through clamp's promotion with the bounds: not
// modelled.
RuleResult rule_hardtanh(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  if (In.Type && *In.Type == DType::Bool)
    return one(throws("Bool inputs not allowed for hardtanh"), "hardtanh");
  const ArgValue &O = C.arg(1);
  if (O.K == ArgValue::Kind::NNOptions) {
    const ArgValue *Ip = O.option("inplace");
    if (!O.Named->Complete || (Ip && (!Ip->known() || Ip->Bool)))
      return notModelled(C, "in-place hardtanh or its options are not "
                            "modelled");
  }
  if (!In.Type && !(In.TypeOf.size() && requireFloatingParameter(In.TypeOf)))
    return notModelled(C, "hardtanh of a tensor of unknown dtype is not "
                          "modelled");
  if (In.Type && !isFloating(*In.Type))
    return notModelled(C, "hardtanh of a " + std::string(dtypeName(*In.Type)) +
                              " tensor is not modelled");
  OpOutcome Out = likeFactory(In, std::nullopt, std::nullopt,
                              MemoryFormat::Preserve, FillKind::Filled);
  if (Out.Kind == OpKind::Throws)
    return one(Out, "hardtanh");
  Out.Kind = OpKind::Copy;
  Out.ReadBytes = In.logicalBytes();
  return one(Out, "hardtanh");
}

// logical_not (UnaryOps.cpp): an empty bool tensor that logical_not_out
// resizes with TensorIterator's layout for self.
RuleResult rule_logical_not(const OpCall &C) {
  return one(elementwise("logical_not", {ElemOperand::tensor(C.self().TV)},
                         ElemDType::Bool),
             "logical_not");
}

// clamp / clamp_min / clamp_max (TensorCompare.cpp, TORCH_META_FUNC(clamp)):
// with scalar bounds, a unary op over self.to(result_type), result_type
// being self's dtype when floating, else result_type(self, bounds); with
// tensor bounds, a TensorIterator op over (self, min, max) promoting to
// their common dtype. Both are what elementwise() computes with the bounds
// as operands (a wrapped scalar bound never widens a floating self, and
// the CPU's conversion of self is its transient).
namespace {
RuleResult clampRule(const OpCall &C, const std::string &Op,
                     std::vector<size_t> Bounds) {
  const TensorValue &In = C.self().TV;
  std::vector<ElemOperand> Ops = {ElemOperand::tensor(In)};
  bool Any = false;
  for (size_t K : Bounds) {
    const ArgValue &B = C.arg(K);
    if (B.K == ArgValue::Kind::Absent)
      continue;
    if (B.K == ArgValue::Kind::Unknown)
      return notModelledOnAll(C, Op + " bounds could not be derived");
    Any = true;
    Ops.push_back(B.K == ArgValue::Kind::Tensor ? ElemOperand::tensor(B.TV)
                                                : B.Scalar);
  }
  if (!Any)
    return one(throws("torch.clamp: At least one of 'min' or 'max' must not "
                      "be None"),
               Op);
  if (In.Type && *In.Type == DType::Bool)
    return notModelledOnAll(C, Op + " of a bool tensor is not modelled");
  if (In.Type && isComplex(*In.Type))
    return one(throws("clamp is not supported for complex types"), Op);
  return one(elementwise(Op, Ops, ElemDType::Promote), Op);
}
} // namespace

RuleResult rule_clamp(const OpCall &C) { return clampRule(C, "clamp", {1, 2}); }
RuleResult rule_clamp_min(const OpCall &C) { return clampRule(C, "clamp_min", {1}); }
RuleResult rule_clamp_max(const OpCall &C) { return clampRule(C, "clamp_max", {1}); }

// masked_fill (TensorAdvancedIndexing.cpp, masked_fill): expand_outplace
// (mask, self), result = self.clone(Contiguous), result.masked_fill_(mask,
// value): the broadcast shape of mask and self, contiguous, self's dtype.
// masked_fill_ wants a 0-dim value tensor.
RuleResult rule_masked_fill(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  const TensorValue &Mask = C.arg(1).TV;
  const ArgValue &V = C.arg(2);
  // LibTorch 1.13 on the CPU accepts an int32 mask (seen: no error), so
  // only bool masks are modelled.
  if (Mask.Type && *Mask.Type != DType::Bool)
    return notModelledOnAll(C, "masked_fill with a " +
                                   std::string(dtypeName(*Mask.Type)) +
                                   " mask is not modelled");
  if (V.K == ArgValue::Kind::Tensor && V.TV.Sizes && !V.TV.Sizes->empty())
    return one(throws("masked_fill_ only supports a 0-dimensional value "
                      "tensor, but got tensor with " +
                      std::to_string(V.TV.Sizes->size()) + " dimension(s)."),
               "masked_fill");
  if (V.K == ArgValue::Kind::Tensor && !V.TV.Sizes)
    return notModelledOnAll(C, "the rank of masked_fill's value tensor is "
                               "unknown");
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  keepDType(Out.Value, In);
  Out.Value.Dev = In.Dev;
  Out.Value.markUnknown(In.UnknownReason);
  Out.Value.markUnknown(Mask.UnknownReason);
  if (!Out.Value.dtypeKnown())
    Out.Value.markUnknown("dtype of the input is unknown");
  if (!In.Dev)
    Out.Value.markUnknown("device of the input is unknown");
  if (!Mask.Type && Mask.TypeOf.empty())
    Out.Value.markUnknown("dtype of the mask is unknown");
  if (!In.Sizes || !Mask.Sizes) {
    Out.Value.markUnknown(shapeReason(In.Sizes ? Mask : In));
    return one(Out, "masked_fill");
  }
  Shape Both;
  Tri Broadcasts = broadcastShapes(*Mask.Sizes, *In.Sizes, Both);
  if (Broadcasts == Tri::False)
    return one(throws("The size of tensor a must match the size of tensor b "
                      "at a non-singleton dimension (masked_fill: shapes do "
                      "not broadcast)"),
               "masked_fill");
  if (Broadcasts == Tri::Unknown)
    return one(undecidedOutcome(Out, "whether " + dimsText(*Mask.Sizes) +
                                         " and " + dimsText(*In.Sizes) +
                                         " broadcast is not decidable"),
               "masked_fill");
  Out.Value.Sizes = Both;
  Out.Value.Strides = contiguousStrides(Both);
  Out.Value.Offset = 0;
  std::vector<const TensorValue *> Reads = {&In, &Mask};
  if (V.K == ArgValue::Kind::Tensor)
    Reads.push_back(&V.TV);
  Out.ReadBytes = sumBytes(Reads);
  Out.WrittenBytes = Out.Value.logicalBytes();
  return one(Out, "masked_fill");
}

// tril / triu (TriangularOps.cpp, TORCH_META_FUNC(tril)):
// set_output_raw_strided(0, self.sizes(), {}, self.options()): a fresh
// contiguous tensor of self's shape and dtype.
RuleResult rule_tril(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  std::string Op = C.Op->Code == OpCode::triu ? "triu" : "tril";
  // The kernel wraps dim -2 first (1.13: "Dimension out of range").
  if (In.Sizes && In.Sizes->size() < 2)
    return one(throws("Dimension out of range (expected to be in range of "
                      "[-1, 0], but got -2)"),
               Op);
  if (!C.arg(1).known() && C.arg(1).K != ArgValue::Kind::Absent &&
      C.arg(1).K != ArgValue::Kind::SymInt)
    return notModelled(C, Op + "'s diagonal could not be derived");
  if (!In.Sizes)
    return one(unknownCopy(shapeReason(In), In.Type, In.Dev), Op);
  OpOutcome Out = freshContiguous(*In.Sizes, In.Type, In.Dev, In.TypeOf);
  Out.Value.markUnknown(In.UnknownReason);
  Out.ReadBytes = In.logicalBytes();
  return one(Out, Op);
}

// dropout / feature_dropout (Dropout.cpp, 1.13): on the CPU the fused
// kernel is never taken (is_fused_kernel_acceptable wants CUDA, XPU or
// lazy), so _dropout_impl decides:
//  - p outside [0, 1]: "dropout probability has to be between 0 and 1";
//  - p == 0, !train or numel == 0: `return input`, the input itself;
//  - p == 1: input * zeros({}) (a 0-dim zero of input's options);
//  - else noise = empty_like(input, Contiguous) (feature: new_empty of
//    [N, C, 1, ...], at least 2 dims), bernoulli_, div_, and input * noise:
//    a TensorIterator output with input's layout; the noise is freed when
//    the op returns.
// torch::nn::functional::dropout(x, DropoutFuncOptions) calls the same with
// options.p() (0.5), options.training() (true); inplace is dropout_.
RuleResult rule_dropout(const OpCall &C) {
  bool Feature = C.Op->Code == OpCode::feature_dropout;
  std::string Op = Feature ? "feature_dropout" : "dropout";
  const TensorValue &In = C.self().TV;
  const ArgValue *P = &C.arg(1), *Train = &C.arg(2);
  if (C.arg(1).K == ArgValue::Kind::NNOptions) {
    const ArgValue &O = C.arg(1);
    if (!O.Named->Complete)
      return notModelled(C, "dropout options could not be derived: " +
                                O.Named->Why);
    const ArgValue *Inplace = O.option("inplace");
    if (!Inplace || !Inplace->known() || Inplace->Bool)
      return notModelled(C, "in-place dropout is not modelled");
    P = O.option("p");
    Train = O.option("training");
    if (!P || !Train)
      return notModelled(C, "dropout options could not be derived");
  }
  // A training flag the analysis cannot derive (`torch::dropout(x, 0.5,
  // is_training())` in a module's forward): a new tensor when training,
  // the input itself otherwise. What both share (shape, dtype, the layout
  // of a dense input) is answered; which tensor it is, and so its storage,
  // is not, and it may be the input (applyRule says so of every unknown
  // view-or-copy outcome).
  bool Positional = C.arg(1).K != ArgValue::Kind::NNOptions && C.Args.size() == 3;
  if (Positional && P->K == ArgValue::Kind::Number && P->Number && !Train->known()) {
    OpCall Training = C;
    Training.Args[2].K = ArgValue::Kind::Bool;
    Training.Args[2].Bool = true;
    RuleResult RT = rule_dropout(Training);
    if (RT.Outcomes.size() == 1 && RT.Outcomes[0].Kind == OpKind::Self)
      return RT; // p == 0 or an empty input: the input either way
    // Either way the result has the input's shape and dtype (training
    // multiplies by a noise that broadcasts into it) where it does not
    // throw; the layout too when the new tensor is laid out as the input.
    std::string Why = Op + "'s training flag could not be derived: a new "
                           "tensor when training, its input otherwise";
    OpOutcome Out = unmodelled(Op);
    std::optional<TensorValue> Common;
    if (RT.Outcomes.size() == 1 && RT.Outcomes[0].Kind == OpKind::Copy)
      Common = commonLayout({RT.Outcomes[0].Value, In}, Why);
    if (Common) {
      Out.Value = *Common;
    } else {
      Out.Value.Sizes = In.Sizes;
      keepDType(Out.Value, In);
      Out.Value.Dev = In.Dev;
      Out.Value.UnknownReason = Why;
    }
    return one(Out, Op);
  }
  if (P->K != ArgValue::Kind::Number || !P->Number || !Train->known())
    return notModelled(C, Op + " arguments could not be derived");
  double Prob = *P->Number;
  if (!(Prob >= 0 && Prob <= 1)) {
    std::ostringstream OS;
    OS << Prob;
    return one(throws("dropout probability has to be between 0 and 1, but "
                      "got " + OS.str()),
               Op);
  }
  if (Prob == 0 || !Train->Bool)
    return one(selfOf(In, Op + " returns its input (" +
                              (Train->Bool ? "p == 0" : "train == false") + ")"),
               Op);
  if (!In.Sizes)
    return notModelled(C, shapeReason(In));
  // A symbolic size is not 0 unless the facts say so (stated `S >= 2`).
  Tri Empty = shapeIsEmpty(*In.Sizes);
  if (Empty == Tri::Unknown)
    return notModelled(C, "whether " + Op + "'s input is empty (then it returns "
                          "the input) is not decidable");
  if (Empty == Tri::True)
    return one(selfOf(In, Op + " returns its empty input"), Op);
  TensorValue Noise;
  if (Prob == 1) {
    Noise = makeContiguous({}, In.Type.value_or(DType::Float32),
                           In.Dev.value_or(Device{}));
  } else {
    Shape NoiseSizes = *In.Sizes;
    if (Feature) {
      if (NoiseSizes.size() < 2)
        return one(throws("Feature dropout requires at least 2 dimensions in "
                          "the input"),
                   Op);
      for (size_t K = 2; K < NoiseSizes.size(); ++K)
        NoiseSizes[K] = 1;
    }
    Noise = makeContiguous(NoiseSizes, In.Type.value_or(DType::Float32),
                           In.Dev.value_or(Device{}));
  }
  keepDType(Noise, In);
  Noise.Dev = In.Dev;
  OpOutcome Out = elementwise("mul", {ElemOperand::tensor(In),
                                      ElemOperand::tensor(Noise)},
                              ElemDType::Promote);
  if (Out.Kind != OpKind::Copy)
    return one(Out, Op);
  Out.ReadBytes = In.logicalBytes();
  Out.TransientBytes = addSizes(Out.TransientBytes, Noise.logicalBytes());
  // With gradients on, input * noise records MulBackward0, which keeps the
  // noise (model/Autograd.h rule 6; measured on 1.13.1).
  if (Prob < 1 && !Feature && Noise.logicalBytes())
    Out.Intermediates = {*Noise.logicalBytes()};
  Out.Note = Prob == 1 ? Op + " with p == 1 multiplies by a 0-dim zero"
                       : Op + " multiplies by a noise tensor it frees on return";
  return one(Out, Op);
}

// atan2 and copysign (BinaryOps.cpp): TensorIterator's
// build_borrowing_binary_float_op, as true division: the promoted dtype,
// integral operands computed in the default float dtype. copysign's Scalar
// overload wraps the scalar (wrapped_scalar_tensor) and calls the Tensor one.
RuleResult rule_atan2(const OpCall &C) {
  return binary(C, "atan2", ElemDType::FloatPromote);
}
RuleResult rule_copysign(const OpCall &C) {
  return binary(C, "copysign", ElemDType::FloatPromote);
}

// hypot and logaddexp (BinaryOps.cpp): build_borrowing_binary_op, so the
// result type is the promoted one, not made floating; their CPU kernels
// cover floating types only, so an integral result is left unknown.
RuleResult rule_hypot(const OpCall &C) {
  return binary(C, "hypot", ElemDType::FloatOnly);
}
RuleResult rule_logaddexp(const OpCall &C) {
  return binary(C, "logaddexp", ElemDType::FloatOnly);
}

} // namespace tma
