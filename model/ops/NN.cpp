// Neural-network layers as functions (LibTorch 1.13, CPU): convolutions,
// pooling, normalisations, and their torch::nn::functional spellings.
//
// Shapes are ATen's formulas exactly (cited at each rule), over SymSize so a
// symbolic input size gives a symbolic output size. Layouts: these kernels
// choose their output's memory format from the input's
// (suggest_memory_format; oneDNN for float convolutions); a contiguous
// input (and weight) gives a contiguous output, anything else is left
// unknown with that reason. Their internal buffers (im2col columns, oneDNN
// scratch, pooling indices, saved statistics) are not modelled: transient
// bytes are unknown with a note, so the peak says so too.
//
// Traffic accounting as elsewhere: ReadBytes counts each input tensor's
// logical bytes once, WrittenBytes the output's.
#include "model/Ops.h"
#include "model/ops/OpCodes.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>

namespace tma {

using namespace detail;

namespace {

const char *const ScratchNote =
    "the kernel's internal buffers are not modelled";

/// The number of spatial dims of an op that has a 1-d, 2-d and 3-d form
/// (conv1d -> 1); 2 for the others.
int spatialDims(OpCode Code) {
  switch (Code) {
  case OpCode::conv1d: case OpCode::conv_transpose1d: case OpCode::max_pool1d:
  case OpCode::avg_pool1d: case OpCode::adaptive_avg_pool1d:
    return 1;
  case OpCode::conv3d: case OpCode::conv_transpose3d: case OpCode::max_pool3d:
  case OpCode::avg_pool3d: case OpCode::adaptive_avg_pool3d:
    return 3;
  default:
    return 2;
  }
}

std::string listText(const DimList &L) {
  std::string S = "[";
  for (size_t I = 0; I < L.size(); ++I)
    S += (I ? ", " : "") + std::to_string(L[I]);
  return S + "]";
}

/// A list argument expanded to N values the way ATen's
/// expand_param_if_needed does: one value stands for all (a size may be
/// symbolic: a convolution's stride from a constructor's parameter);
/// nullopt with Why when it is not a list of 1 or N values.
std::optional<Shape> expandSizes(const ArgValue *A, size_t N, const std::string &Name,
                                 int64_t Default, std::string &Why) {
  if (!A || A->K == ArgValue::Kind::Absent)
    return Shape(N, SymSize(Default));
  if (A->K != ArgValue::Kind::IntList) {
    Why = Name + " could not be derived";
    return std::nullopt;
  }
  if (A->List.size() == 1)
    return Shape(N, A->List[0]);
  if (A->List.size() != N) {
    Why = Name + " " + dimsText(A->List) + " does not have 1 or " +
          std::to_string(N) + " values (LibTorch throws)";
    return std::nullopt;
  }
  return A->List;
}

/// expandSizes of an option that must be constant; without a Default an
/// absent one is missing.
std::optional<DimList> expandParam(const ArgValue *A, size_t N,
                                   const std::string &Name,
                                   std::optional<DimList> Default,
                                   std::string &Why) {
  if (!A || A->K == ArgValue::Kind::Absent) {
    if (!Default)
      Why = Name + " is missing";
    return Default;
  }
  std::optional<Shape> Sizes = expandSizes(A, N, Name, 0, Why);
  if (!Sizes)
    return std::nullopt;
  std::optional<DimList> D = constantShape(*Sizes);
  if (!D)
    Why = Name + " could not be derived";
  return D;
}

/// The first unknown reason of the inputs, their device and a dtype all
/// must share.
OpOutcome freshOutput(const TensorValue &In,
                      std::vector<const TensorValue *> Others) {
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  keepDType(Out.Value, In);
  Out.Value.Dev = In.Dev;
  Out.Value.markUnknown(In.UnknownReason);
  for (const TensorValue *T : Others)
    if (T)
      Out.Value.markUnknown(T->UnknownReason);
  if (!Out.Value.dtypeKnown())
    Out.Value.markUnknown("dtype of the input is unknown");
  if (!In.Dev)
    Out.Value.markUnknown("device of the input is unknown");
  return Out;
}

/// Sizes Out: a contiguous output when In (and the other operands) are
/// contiguous, else unknown strides with the reason.
void layoutFollowingInput(OpOutcome &Out, const Shape &Sizes,
                          const TensorValue &In,
                          std::vector<const TensorValue *> Others,
                          const std::string &Op) {
  Out.Value.Sizes = Sizes;
  Out.Value.Offset = 0;
  bool Contig = In.contiguous().value_or(false);
  for (const TensorValue *T : Others)
    Contig = Contig && T && T->contiguous().value_or(false);
  if (Contig)
    Out.Value.Strides = contiguousStrides(Sizes);
  else
    Out.Value.markUnknown("the memory format " + Op + " picks for a "
                          "non-contiguous input is not modelled");
}

void finishTraffic(OpOutcome &Out, std::vector<const TensorValue *> Reads) {
  Reads.erase(std::remove(Reads.begin(), Reads.end(), nullptr), Reads.end());
  Out.ReadBytes = sumBytes(Reads);
  Out.WrittenBytes = Out.Value.logicalBytes();
  Out.TransientBytes.reset();
  Out.Note = ScratchNote;
}

/// The option (functional spelling) or the schema argument K.
const ArgValue *argOrOption(const OpCall &C, size_t OptionsArg, size_t K,
                            const std::string &Name) {
  const ArgValue &O = C.arg(OptionsArg);
  if (O.K == ArgValue::Kind::NNOptions)
    return O.option(Name);
  return &C.arg(K);
}

} // namespace

// ---- Convolutions -----------------------------------------------------------------

// conv1d/2d/3d (Convolution.cpp, 1.13): an unbatched input (one dim fewer)
// is unsqueezed and the result squeezed; check_shape_forward: weight has
// the input's rank, input.size(1) == weight.size(1) * groups, weight.size(0)
// divisible by groups, the dilated kernel fits in the padded input;
// conv_output_size (ConvUtils.h): out = (in + 2 * pad - (dil * (k - 1) + 1))
// / stride + 1, channels weight.size(0). padding="valid" is 0;
// padding="same" (_convolution_mode) keeps the input size and needs stride 1.
// conv_transpose (ConvUtils.h conv_input_size): out = (in - 1) * stride -
// 2 * pad + dil * (k - 1) + output_padding + 1, channels weight.size(1) *
// groups, input.size(1) == weight.size(0).
static RuleResult convolution(const OpCall &C) {
  bool Transposed = C.Op->Code == OpCode::conv_transpose1d ||
                    C.Op->Code == OpCode::conv_transpose2d ||
                    C.Op->Code == OpCode::conv_transpose3d;
  size_t N = static_cast<size_t>(spatialDims(C.Op->Code));
  std::string Op = C.Written;
  const TensorValue &In = C.arg(0).TV, &W = C.arg(1).TV;
  bool Functional = C.arg(2).K == ArgValue::Kind::NNOptions;
  if (Functional && !C.arg(2).Named->Complete)
    return notModelledOnAll(C, Op + " options could not be derived: " +
                                   C.arg(2).Named->Why);
  const ArgValue *BiasA = argOrOption(C, 2, 2, "bias");
  const TensorValue *Bias =
      BiasA && BiasA->K == ArgValue::Kind::Tensor ? &BiasA->TV : nullptr;
  if (BiasA && BiasA->K == ArgValue::Kind::Unknown)
    return notModelledOnAll(C, Op + "'s bias could not be derived");
  std::string Why;
  // The stride may be symbolic (Conv2dOptions(...).stride(stride) with a
  // constructor's parameter); the other options are constants.
  auto Stride = expandSizes(argOrOption(C, 2, 3, "stride"), N, "stride", 1, Why);
  bool ConstantStride = Stride && constantShape(*Stride).has_value();
  // padding: a list, or (conv, not transposed) "same" / "valid".
  const ArgValue *PadA = argOrOption(C, 2, 4, "padding");
  bool Same = false;
  std::optional<DimList> Padding;
  if (PadA && PadA->Str) {
    if (*PadA->Str == "valid")
      Padding = DimList(N, 0);
    else if (*PadA->Str == "same")
      Same = true;
    else
      return one(throws("Invalid padding string: '" + *PadA->Str + "'"), Op);
  } else if (PadA && PadA->K == ArgValue::Kind::Other) {
    return notModelledOnAll(C, Op + "'s padding could not be derived");
  } else {
    Padding = expandParam(PadA, N, "padding", DimList(N, 0), Why);
  }
  std::optional<DimList> OutPad = DimList(N, 0);
  std::optional<DimList> Dilation;
  const ArgValue *GroupsA;
  if (Transposed) {
    OutPad = expandParam(argOrOption(C, 2, 5, "output_padding"), N,
                         "output_padding", DimList(N, 0), Why);
    GroupsA = argOrOption(C, 2, 6, "groups");
    Dilation = expandParam(argOrOption(C, 2, 7, "dilation"), N, "dilation",
                           DimList(N, 1), Why);
  } else {
    Dilation = expandParam(argOrOption(C, 2, 5, "dilation"), N, "dilation",
                           DimList(N, 1), Why);
    GroupsA = argOrOption(C, 2, 6, "groups");
  }
  int64_t Groups = 1;
  if (GroupsA && GroupsA->K != ArgValue::Kind::Absent) {
    if (GroupsA->K != ArgValue::Kind::Int)
      return notModelledOnAll(C, Op + "'s groups could not be derived");
    Groups = GroupsA->Int;
  }
  if (!Stride || (!Padding && !Same) || !Dilation || !OutPad)
    return notModelledOnAll(C, Why.empty() ? Op + " arguments could not be "
                                                  "derived"
                                           : Why);
  if (Groups <= 0)
    return one(throws("non-positive groups is not supported"), Op);
  if (!ConstantStride && (Transposed || Same))
    return notModelledOnAll(C, "a symbolic stride of " + Op +
                                   (Same ? " with padding='same'" : "") +
                                   " is not modelled");
  for (size_t K = 0; K < N; ++K) {
    Tri Positive = requireLe(SymSize(1), (*Stride)[K]);
    if (Positive == Tri::False)
      return one(throws("non-positive stride is not supported"), Op);
    if (Positive == Tri::Unknown)
      return notModelledOnAll(C, undecided("<=", SymSize(1), (*Stride)[K]));
    if (!Same && (*Padding)[K] < 0)
      return one(throws("negative padding is not supported"), Op);
    if ((*Dilation)[K] <= 0)
      return one(throws("dilation should be greater than zero"), Op);
    if (Transposed && sizeGe(SymSize((*OutPad)[K]), (*Stride)[K]) == Tri::True &&
        (*OutPad)[K] >= (*Dilation)[K])
      return one(throws("output padding must be smaller than either stride "
                        "or dilation"),
                 Op);
  }
  if (Same)
    for (size_t K = 0; K < N; ++K)
      if (sizeEq((*Stride)[K], 1) != Tri::True)
        return one(throws("padding='same' is not supported for strided "
                          "convolutions"),
                   Op);
  OpOutcome Out = freshOutput(In, {&W, Bias});
  if (In.Type && !isFloating(*In.Type))
    return notModelledOnAll(C, Op + " of a " + dtypeName(*In.Type) +
                                   " input is not modelled");
  if (In.Type && W.Type && *In.Type != *W.Type)
    return notModelledOnAll(C, Op + " of a " + dtypeName(*In.Type) +
                                   " input with a " + dtypeName(*W.Type) +
                                   " weight is not modelled (LibTorch throws)");
  if (!In.Sizes || !W.Sizes) {
    Out.Value.markUnknown(shapeReason(In.Sizes ? W : In));
    finishTraffic(Out, {});
    Out.ReadBytes.reset();
    Out.WrittenBytes.reset();
    return one(Out, Op);
  }
  const Shape &WS = *W.Sizes;
  Shape IS = *In.Sizes;
  bool Batched = IS.size() == N + 2;
  if (!Batched && IS.size() != N + 1)
    return one(throws("Expected " + std::to_string(N + 1) + "D (unbatched) or " +
                      std::to_string(N + 2) + "D (batched) input to " + Op +
                      ", but got input of size: " + dimsText(IS)),
               Op);
  if (!Batched)
    IS.insert(IS.begin(), SymSize(1));
  if (WS.size() != N + 2)
    return one(throws("Expected " + std::to_string(N + 2) +
                      "-dimensional input for " + std::to_string(N + 2) +
                      "-dimensional weight " + dimsText(WS) +
                      ", but got " + std::to_string(IS.size()) +
                      "-dimensional input of size " + dimsText(IS) +
                      " instead"),
               Op);
  // Channels.
  SymSize OutChannels;
  auto Fails = [&](Tri T, const std::string &Msg,
                   const std::string &Question) -> std::optional<RuleResult> {
    if (T == Tri::False)
      return one(throws(Msg), Op);
    if (T == Tri::Unknown)
      return one(undecidedOutcome(Out, Question), Op);
    return std::nullopt;
  };
  if (!Transposed) {
    if (auto R = Fails(requireEq(IS[1], WS[1] * Groups),
                       "Given groups=" + std::to_string(Groups) +
                           ", weight of size " + dimsText(WS) +
                           ", expected input" + dimsText(IS) + " to have " +
                           sizeText(WS[1] * Groups) + " channels, but got " +
                           sizeText(IS[1]) + " channels instead",
                       undecided("==", IS[1], WS[1] * Groups)))
      return *R;
    if (auto R = Fails(sizeDivides(SymSize(Groups), WS[0]),
                       "Given groups=" + std::to_string(Groups) +
                           ", expected weight to be divisible by " +
                           std::to_string(Groups) + " at dimension 0",
                       "whether groups divides the weight's dimension 0"))
      return *R;
    OutChannels = WS[0];
  } else {
    if (auto R = Fails(requireEq(IS[1], WS[0]),
                       "Given transposed=1, weight of size " + dimsText(WS) +
                           ", expected input" + dimsText(IS) + " to have " +
                           sizeText(WS[0]) + " channels, but got " +
                           sizeText(IS[1]) + " channels instead",
                       undecided("==", IS[1], WS[0])))
      return *R;
    OutChannels = WS[1] * Groups;
  }
  if (Bias) {
    if (!Bias->Sizes)
      return one(undecidedOutcome(Out, shapeReason(*Bias)), Op);
    if (Bias->Sizes->size() != 1)
      return one(throws("Given weight of size " + dimsText(WS) +
                        ", expected bias to be 1-dimensional"),
                 Op);
    if (auto R = Fails(requireEq((*Bias->Sizes)[0], OutChannels),
                       "Given weight of size " + dimsText(WS) +
                           ", expected bias to be 1-dimensional with " +
                           sizeText(OutChannels) + " elements, but got bias of size " +
                           dimsText(*Bias->Sizes) + " instead",
                       undecided("==", (*Bias->Sizes)[0], OutChannels)))
      return *R;
  }
  Shape OS = {IS[0], OutChannels};
  for (size_t K = 0; K < N; ++K) {
    SymSize In_ = IS[K + 2], Kern = WS[K + 2];
    SymSize Extent = SymSize((*Dilation)[K]) * (Kern - 1) + 1;
    if (Transposed) {
      OS.push_back((In_ - 1) * (*Stride)[K] - SymSize(2 * (*Padding)[K]) + Extent - 1 +
                   (*OutPad)[K] + 1);
      continue;
    }
    if (Same) {
      OS.push_back(In_);
      continue;
    }
    SymSize Padded = In_ + 2 * (*Padding)[K];
    if (auto R = Fails(requireLe(Extent, Padded),
                       "Calculated padded input size per channel: (" +
                           sizeText(Padded) + "). Kernel size: (" +
                           sizeText(Extent) +
                           "). Kernel size can't be greater than actual input "
                           "size",
                       undecided("<=", Extent, Padded)))
      return *R;
    OS.push_back(SymSize::floorDiv(Padded - Extent, (*Stride)[K]) + 1);
  }
  if (!Batched)
    OS.erase(OS.begin());
  layoutFollowingInput(Out, OS, In, {&W}, Op);
  finishTraffic(Out, {&In, &W, Bias});
  return one(Out, Op);
}

RuleResult rule_conv2d(const OpCall &C) { return convolution(C); }
RuleResult rule_conv_transpose2d(const OpCall &C) { return convolution(C); }

// ---- Pooling ------------------------------------------------------------------------

namespace {

// pooling_output_shape_pad_lr (Pool.h): out = div_rtn(in + 2 * pad -
// dil * (k - 1) - 1 + (ceil ? stride - 1 : 0), stride) + 1, then in ceil
// mode one less when the last window would start in the right padding
// ((out - 1) * stride >= in + pad).
std::optional<SymSize> poolOutput(const SymSize &In, int64_t K, int64_t Pad,
                                  int64_t Stride, int64_t Dil, bool Ceil,
                                  std::string &Why) {
  SymSize Num = In + 2 * Pad - Dil * (K - 1) - 1 + (Ceil ? Stride - 1 : 0);
  // A negative numerator gives an output size of 0 or less: LibTorch
  // throws "Output size is too small" (pool2d_shape_check). So on every
  // path that goes on the window fits: stated when undecided
  // (`4 <= x.size(2) - 2`), as the convolution states its kernel's fit.
  int64_t Window = Dil * (K - 1) + 1 - (Ceil ? Stride - 1 : 0);
  Tri NonNeg = requireLe(SymSize(Window), In + 2 * Pad);
  if (NonNeg != Tri::True) {
    Why = NonNeg == Tri::False ? "Output size is too small"
                               : undecided(">=", Num, SymSize(0));
    return std::nullopt;
  }
  SymSize Out = SymSize::floorDiv(Num, Stride) + 1;
  if (Ceil) {
    Tri Last = sizeGe((Out - 1) * Stride, In + Pad);
    if (Last == Tri::Unknown) {
      Why = undecided(">=", (Out - 1) * Stride, In + Pad);
      return std::nullopt;
    }
    if (Last == Tri::True)
      Out = Out - 1;
  }
  return Out;
}

enum class PoolKind { Max, Avg };

RuleResult pool(const OpCall &C, PoolKind Kind) {
  std::string Op = C.Written;
  size_t N = static_cast<size_t>(spatialDims(C.Op->Code));
  const TensorValue &In = C.self().TV;
  bool Functional = C.arg(1).K == ArgValue::Kind::NNOptions;
  if (Functional && !C.arg(1).Named->Complete)
    return notModelled(C, Op + " options could not be derived: " +
                              C.arg(1).Named->Why);
  std::string Why;
  auto Kernel = expandParam(argOrOption(C, 1, 1, "kernel_size"), N,
                            "kernel_size", std::nullopt, Why);
  if (!Kernel)
    return notModelled(C, Why);
  // stride: empty (the default) means the kernel size.
  const ArgValue *StrideA = argOrOption(C, 1, 2, "stride");
  std::optional<DimList> Stride;
  if (!StrideA || StrideA->K == ArgValue::Kind::Absent ||
      (StrideA->K == ArgValue::Kind::IntList && StrideA->List.empty()))
    Stride = Kernel;
  else
    Stride = expandParam(StrideA, N, "stride", std::nullopt, Why);
  auto Padding = expandParam(argOrOption(C, 1, 3, "padding"), N, "padding",
                             DimList(N, 0), Why);
  std::optional<DimList> Dilation = DimList(N, 1);
  const ArgValue *CeilA;
  if (Kind == PoolKind::Max) {
    Dilation = expandParam(argOrOption(C, 1, 4, "dilation"), N, "dilation",
                           DimList(N, 1), Why);
    CeilA = argOrOption(C, 1, 5, "ceil_mode");
  } else {
    CeilA = argOrOption(C, 1, 4, "ceil_mode");
    const ArgValue *Div = argOrOption(C, 1, 6, "divisor_override");
    if (Div && Div->K != ArgValue::Kind::Absent && !Div->known())
      return notModelled(C, "divisor_override could not be derived");
  }
  if (!Stride || !Padding || !Dilation)
    return notModelled(C, Why);
  bool Ceil = false;
  if (CeilA && CeilA->K != ArgValue::Kind::Absent) {
    if (!CeilA->known())
      return notModelled(C, "ceil_mode could not be derived");
    Ceil = CeilA->Bool;
  }
  for (size_t K = 0; K < N; ++K) {
    if ((*Kernel)[K] <= 0)
      return one(throws("kernel size should be greater than zero, but got "
                        "kernel_size=" + listText(*Kernel)),
                 Op);
    if ((*Stride)[K] <= 0)
      return one(throws("stride should be greater than zero, but got stride=" +
                        listText(*Stride)),
                 Op);
    if ((*Dilation)[K] <= 0)
      return one(throws("dilation should be greater than zero, but got "
                        "dilation=" + listText(*Dilation)),
                 Op);
    int64_t Effective = Kind == PoolKind::Max
                            ? ((*Kernel)[K] - 1) * (*Dilation)[K] + 1
                            : (*Kernel)[K];
    if ((*Padding)[K] * 2 > Effective)
      return one(throws(Kind == PoolKind::Max
                            ? "pad should be at most half of effective kernel "
                              "size"
                            : "pad should be smaller than or equal to half of "
                              "kernel size"),
                 Op);
  }
  OpOutcome Out = freshOutput(In, {});
  if (In.Type && !isFloating(*In.Type) && Kind == PoolKind::Avg)
    return notModelled(C, Op + " of a " + dtypeName(*In.Type) +
                              " tensor is not modelled");
  if (!In.Sizes) {
    Out.Value.markUnknown(shapeReason(In));
    return one(Out, Op);
  }
  const Shape &IS = *In.Sizes;
  if (IS.size() != N + 1 && IS.size() != N + 2)
    return one(throws(Op + ": Expected " + std::to_string(N + 1) + "D or " +
                      std::to_string(N + 2) + "D input"),
               Op);
  Shape OS(IS.begin(), IS.end() - N);
  for (size_t K = 0; K < N; ++K) {
    SymSize I = IS[IS.size() - N + K];
    auto O = poolOutput(I, (*Kernel)[K], (*Padding)[K], (*Stride)[K],
                        (*Dilation)[K], Ceil, Why);
    if (!O) {
      if (Why == "Output size is too small")
        return one(throws("Output size is too small"), Op);
      return one(undecidedOutcome(Out, Why), Op);
    }
    OS.push_back(*O);
  }
  layoutFollowingInput(Out, OS, In, {}, Op);
  finishTraffic(Out, {&In});
  return one(Out, Op);
}

} // namespace

// max_pool1d/2d (MaxPooling.cpp, DilatedMaxPool2d.cpp) and avg_pool1d/2d
// (AveragePool2d.cpp; avg_pool1d is avg_pool2d over an unsqueezed input):
// input [N, C, *] or [C, *], output sizes pooling_output_shape per dim,
// stride empty meaning kernel_size. max_pool's indices are an internal
// buffer here.
RuleResult rule_max_pool2d(const OpCall &C) { return pool(C, PoolKind::Max); }
RuleResult rule_avg_pool2d(const OpCall &C) { return pool(C, PoolKind::Avg); }

// adaptive_avg_pool1d/2d (AdaptiveAveragePooling.cpp): [N, C, *] or [C, *]
// to the output_size given; output_size {1, 1} is a keepdim mean.
RuleResult rule_adaptive_avg_pool2d(const OpCall &C) {
  std::string Op = C.Written;
  size_t N = static_cast<size_t>(spatialDims(C.Op->Code));
  const TensorValue &In = C.self().TV;
  const ArgValue &O = C.arg(1);
  const ArgValue *Size = &O;
  if (O.K == ArgValue::Kind::NNOptions) {
    if (!O.Named->Complete)
      return notModelled(C, Op + " options could not be derived: " + O.Named->Why);
    Size = O.option("output_size");
  }
  if (!Size || Size->K != ArgValue::Kind::IntList)
    return notModelled(C, Op + "'s output_size could not be derived");
  if (Size->List.size() != N)
    return one(throws(Op + ": output_size must be " + std::to_string(N)), Op);
  OpOutcome Out = freshOutput(In, {});
  if (!In.Sizes) {
    Out.Value.markUnknown(shapeReason(In));
    return one(Out, Op);
  }
  const Shape &IS = *In.Sizes;
  if (IS.size() != N + 1 && IS.size() != N + 2)
    return one(throws(Op + ": Expected " + std::to_string(N + 1) + "D or " +
                      std::to_string(N + 2) + "D tensor"),
               Op);
  Shape OS(IS.begin(), IS.end() - N);
  OS.insert(OS.end(), Size->List.begin(), Size->List.end());
  layoutFollowingInput(Out, OS, In, {}, Op);
  finishTraffic(Out, {&In});
  return one(Out, Op);
}

// ---- Normalisation ----------------------------------------------------------------------

/// What 1.13.1's native_layer_norm makes beside its output on the CPU,
/// measured: a contiguous copy of an input that is not contiguous
/// (expect_contiguous, freed when it returns), then mean and rstd, one
/// float per row each (M, the product of the sizes before
/// normalized_shape), freed when layer_norm returns, or kept by
/// NativeLayerNormBackward0 with gradients on (GradientTape rule 6). Only
/// for float32 operands, a contiguous weight and bias; otherwise the
/// transient stays unknown.
static void layerNormStatistics(const OpCall &C, OpOutcome &Out,
                                const std::vector<const TensorValue *> &Operands,
                                size_t Leading) {
  const TensorValue &In = C.arg(0).TV;
  if (!(C.Version.Major == 1 && C.Version.Minor == 13) || !In.Dev ||
      In.Dev->Kind != DeviceKind::CPU)
    return;
  std::optional<SymSize> Copy = SymSize(0);
  for (const TensorValue *T : Operands) {
    std::optional<bool> Dense = T->contiguous();
    if (T->Type != std::optional<DType>(DType::Float32) || !Dense ||
        (!*Dense && T != &In))
      return;
    if (!*Dense)
      Copy = T->logicalBytes();
  }
  std::optional<SymSize> Rows = SymSize(1);
  for (size_t K = 0; K < Leading; ++K)
    Rows = mulSizes(Rows, (*In.Sizes)[K]);
  std::optional<SymSize> Each = mulSizes(Rows, SymSize(4));
  if (!Each)
    return;
  Out.TransientBytes = addSizes(Copy, addSizes(Each, Each));
  if (!Out.TransientBytes)
    return;
  Out.Intermediates = {*Each, *Each};
  Out.Note = std::string(Copy && Copy->constant() == std::optional<int64_t>(0)
                             ? ""
                             : "a contiguous copy of the input, ") +
             "mean and rstd: one float per row each, until it returns";
}

// layer_norm (layer_norm.cpp, _check_layer_norm_inputs): normalized_shape
// must be the input's trailing sizes, weight and bias (when given) of that
// shape; native_layer_norm on the CPU normalises input.contiguous() into a
// contiguous output of the input's shape and dtype.
RuleResult rule_layer_norm(const OpCall &C) {
  const TensorValue &In = C.arg(0).TV;
  const ArgValue &O = C.arg(1);
  const ArgValue *Norm = &O, *WA = &C.arg(2), *BA = &C.arg(3);
  if (O.K == ArgValue::Kind::NNOptions) {
    if (!O.Named->Complete)
      return notModelledOnAll(C, "layer_norm options could not be derived: " +
                                     O.Named->Why);
    Norm = O.option("normalized_shape");
    WA = O.option("weight");
    BA = O.option("bias");
  }
  if (!Norm || Norm->K != ArgValue::Kind::IntList)
    return notModelledOnAll(C, "layer_norm's normalized_shape could not be "
                               "derived");
  for (const ArgValue *A : {WA, BA})
    if (A && A->K == ArgValue::Kind::Unknown)
      return notModelledOnAll(C, "layer_norm's weight or bias could not be "
                                 "derived");
  const Shape &NS = Norm->List;
  OpOutcome Out = freshOutput(In, {});
  if (!In.Sizes) {
    Out.Value.markUnknown(shapeReason(In));
    return one(Out, "layer_norm");
  }
  const Shape &IS = *In.Sizes;
  std::string Msg = "Given normalized_shape=" + dimsText(NS) +
                    ", expected input with shape [*";
  for (const SymSize &S : NS)
    Msg += ", " + sizeText(S);
  Msg += "], but got input of size" + dimsText(IS);
  if (NS.empty())
    return one(throws("Expected normalized_shape to be at least 1-dimensional, "
                      "i.e., containing at least one element, but got "
                      "normalized_shape = []"),
               "layer_norm");
  if (IS.size() < NS.size())
    return one(throws(Msg), "layer_norm");
  for (size_t K = 0; K < NS.size(); ++K) {
    Tri Eq = requireEq(IS[IS.size() - NS.size() + K], NS[K]);
    if (Eq == Tri::False)
      return one(throws(Msg), "layer_norm");
    if (Eq == Tri::Unknown)
      return one(undecidedOutcome(Out, undecided("==", IS[IS.size() - NS.size() + K],
                                                 NS[K])),
                 "layer_norm");
  }
  for (const ArgValue *A : {WA, BA}) {
    if (!A || A->K != ArgValue::Kind::Tensor)
      continue;
    if (!A->TV.Sizes)
      return one(undecidedOutcome(Out, shapeReason(A->TV)), "layer_norm");
    Tri Same = triOf(A->TV.Sizes->size() == NS.size());
    for (size_t K = 0; Same == Tri::True && K < NS.size(); ++K)
      Same = triAnd(Same, requireEq((*A->TV.Sizes)[K], NS[K]));
    if (Same == Tri::False)
      return one(throws("Expected weight to be of same shape as "
                        "normalized_shape, but got weight of shape " +
                        dimsText(*A->TV.Sizes) + " and normalized_shape = " +
                        dimsText(NS)),
                 "layer_norm");
    if (Same == Tri::Unknown)
      return one(undecidedOutcome(Out, "whether the weight's shape is "
                                       "normalized_shape is not decidable"),
                 "layer_norm");
  }
  Out.Value.Sizes = IS;
  Out.Value.Strides = contiguousStrides(IS);
  Out.Value.Offset = 0;
  std::vector<const TensorValue *> Reads = {&In};
  for (const ArgValue *A : {WA, BA})
    if (A && A->K == ArgValue::Kind::Tensor)
      Reads.push_back(&A->TV);
  finishTraffic(Out, Reads);
  Out.Note = "input.contiguous(), mean and rstd are not modelled";
  layerNormStatistics(C, Out, Reads, IS.size() - NS.size());
  return one(Out, "layer_norm");
}

// batch_norm (Normalization.cpp, batch_norm_cpu) and group_norm
// (group_norm.cpp): the output is empty_like(input, suggest_memory_format)
// of the input's shape and dtype; group_norm needs C divisible by
// num_groups ("Expected number of channels in input to be divisible by
// num_groups"). Contiguous input: contiguous output.
RuleResult rule_batch_norm(const OpCall &C) {
  bool Group = C.Op->Code == OpCode::group_norm;
  std::string Op = Group ? "group_norm" : "batch_norm";
  const TensorValue &In = C.arg(0).TV;
  OpOutcome Out = freshOutput(In, {});
  if (C.Functional || C.arg(1).K == ArgValue::Kind::NNOptions ||
      C.arg(2).K == ArgValue::Kind::NNOptions)
    return notModelledOnAll(C, "torch::nn::functional::" + Op +
                                   " is not modelled");
  if (!In.Sizes) {
    Out.Value.markUnknown(shapeReason(In));
    return one(Out, Op);
  }
  const Shape &IS = *In.Sizes;
  if (IS.size() < 2)
    return one(throws(Group ? "Expected at least 2 dimensions for input tensor "
                              "but received " + std::to_string(IS.size())
                            : "batch_norm: expected an input with at least 2 "
                              "dimensions"),
               Op);
  if (Group) {
    const ArgValue &G = C.arg(1);
    if (G.K != ArgValue::Kind::Int)
      return notModelledOnAll(C, "group_norm's num_groups could not be derived");
    if (G.Int <= 0)
      return notModelledOnAll(C, "group_norm with num_groups <= 0 is not modelled");
    Tri Div = sizeDivides(SymSize(G.Int), IS[1]);
    if (Div == Tri::False)
      return one(throws("Expected number of channels in input to be divisible "
                        "by num_groups, but got input of shape " +
                        dimsText(IS) + " and num_groups=" +
                        std::to_string(G.Int)),
                 Op);
    if (Div == Tri::Unknown)
      return one(undecidedOutcome(Out, "whether num_groups divides the "
                                       "channels is not decidable"),
                 Op);
  }
  if (!Group) {
    const ArgValue &Train = C.arg(5);
    if (!Train.known())
      return notModelledOnAll(C, "batch_norm's training flag could not be derived");
    if (!Train.Bool && (C.arg(3).K != ArgValue::Kind::Tensor ||
                        C.arg(4).K != ArgValue::Kind::Tensor))
      return notModelledOnAll(C, "batch_norm in evaluation mode without "
                                 "running statistics is not modelled");
  }
  // Per-channel tensors must have C elements.
  std::vector<const TensorValue *> Reads = {&In};
  for (size_t K = Group ? 2 : 1; K < (Group ? 4u : 5u); ++K) {
    const ArgValue &A = C.arg(K);
    if (A.K == ArgValue::Kind::Unknown)
      return notModelledOnAll(C, Op + "'s " + C.argName(K) +
                                     " could not be derived");
    if (A.K != ArgValue::Kind::Tensor)
      continue;
    if (!A.TV.Sizes)
      return one(undecidedOutcome(Out, shapeReason(A.TV)), Op);
    Tri Ok = A.TV.Sizes->size() == 1 ? requireEq((*A.TV.Sizes)[0], IS[1])
                                     : Tri::Unknown;
    if (Ok != Tri::True)
      return one(undecidedOutcome(Out, "whether " + C.argName(K) + " has the "
                                       "input's channel count is not decided"),
                 Op);
    Reads.push_back(&A.TV);
  }
  layoutFollowingInput(Out, IS, In, {}, Op);
  finishTraffic(Out, Reads);
  Out.Note = Op + "'s saved statistics are not modelled";
  return one(Out, Op);
}
} // namespace tma

namespace tma {
RuleResult rule_group_norm(const OpCall &C) { return rule_batch_norm(C); }
} // namespace tma
