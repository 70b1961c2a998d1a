// Loss functions (LibTorch 1.13, CPU): cross_entropy, nll_loss (and
// nll_loss_nd / nll_loss2d), mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits and kl_div, as
// torch:: / at:: functions with an integer reduction (at::Reduction::None,
// Mean, Sum) and as torch::nn::functional functions with an options object
// whose reduction is torch::kNone / kMean / kSum (F::kl_div also
// kBatchMean).
//
// What a loss returns:
//  1. Mean and Sum (every spelling's default is Mean): a fresh 0-d tensor
//     (Loss.cpp apply_loss_reduction: unreduced.mean() / .sum(); the
//     nll_loss meta function: an output of size {}).
//  2. None: the unreduced loss. The elementwise losses give the broadcast
//     shape of input and target; nll_loss the target's ([N], [N, d1, ...]);
//     cross_entropy with class-probability targets the input's shape less
//     the class dim.
//  3. dtype: the input's. Only float32 and float64 inputs are answered,
//     with targets (and weights) of the same dtype, class indices int64:
//     with mixed dtypes some losses promote (mse_loss is one TensorIterator
//     op: float32 with float64 is float64, measured), others keep the
//     input's dtype (huber_loss writes into empty_like(input)) and others
//     throw (binary_cross_entropy's TensorIterator wants one dtype), so
//     mixed dtypes are unknown with the reason, mse_loss's excepted.
//  4. Storage: a fresh tensor, except that mse_loss, smooth_l1_loss and
//     binary_cross_entropy reduce into the unreduced loss's storage
//     (resized to {}): their 0-d result keeps all of its bytes.
//  5. The layout of an unreduced loss, per rule (UnreducedLayout).
//
// Not modelled, said in each outcome's note: the unreduced loss freed by a
// Mean/Sum reduction, log_softmax's output inside cross_entropy, nll_loss's
// total_weight and the composite losses' intermediate tensors are
// allocated and freed inside the call, so transient bytes (and the peak)
// are unknown. Class indices outside [0, C) make LibTorch throw at run time
// ("Target 7 is out of bounds."): that depends on the target's values,
// which the analysis does not follow (as for embedding's indices).
#include "model/Ops.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>

namespace tma {

using namespace detail;

namespace {

const char *const LossNote = "the unreduced loss and the kernel's "
                             "temporaries are not modelled";

enum class Reduction { None, Mean, Sum };

/// The reduction argument: at::Reduction's integer (None 0, Mean 1, Sum
/// 2) or an options object's enumtype ("none", "mean", "sum"; "batchmean"
/// where AllowBatchMean: F::kl_div sums, then divides by the batch size, a
/// 0-d result like Sum). Absent: Mean, the default of every spelling.
std::optional<Reduction> readReduction(const ArgValue *A, bool AllowBatchMean,
                                       std::string &Why) {
  if (!A || A->K == ArgValue::Kind::Absent)
    return Reduction::Mean;
  if (A->K == ArgValue::Kind::Int) {
    switch (A->Int) {
    case 0:
      return Reduction::None;
    case 1:
      return Reduction::Mean;
    case 2:
      return Reduction::Sum;
    }
    Why = "reduction " + std::to_string(A->Int) +
          " is not one of at::Reduction's None, Mean and Sum";
    return std::nullopt;
  }
  if (A->K == ArgValue::Kind::Other && A->Str) {
    if (*A->Str == "none")
      return Reduction::None;
    if (*A->Str == "mean")
      return Reduction::Mean;
    if (*A->Str == "sum")
      return Reduction::Sum;
    if (*A->Str == "batchmean" && AllowBatchMean)
      return Reduction::Sum;
  }
  Why = "the reduction could not be derived";
  return std::nullopt;
}

/// The options object of a functional spelling (argument OptionsArg), or
/// null for the positional spelling.
const ArgValue *optionsOf(const OpCall &C, size_t OptionsArg) {
  const ArgValue &O = C.arg(OptionsArg);
  return O.K == ArgValue::Kind::NNOptions ? &O : nullptr;
}

/// A tensor argument or option that may be absent (weight, pos_weight):
/// the tensor, or null when absent. Unknown (given but not derived) sets
/// Why.
const TensorValue *optionalTensor(const ArgValue *A, const std::string &Name,
                                  std::string &Why) {
  if (!A || A->K == ArgValue::Kind::Absent)
    return nullptr;
  if (A->K == ArgValue::Kind::Tensor)
    return &A->TV;
  Why = Name + " could not be derived";
  return nullptr;
}

/// The dtype as c10 prints it in messages: "Long", "Float".
std::string c10Name(DType T) {
  std::string Cpp = dtypeCpp(T); // "at::kLong"
  return Cpp.rfind("at::k", 0) == 0 ? Cpp.substr(5) : Cpp;
}

bool answeredFloating(DType T) {
  return T == DType::Float32 || T == DType::Float64;
}

/// The loss's dtype into Into: the input's, float32 or float64 (or a
/// parameter's dtype, then stated to be floating), every tensor in Same of
/// that dtype too. False with Why otherwise.
bool lossDType(const std::string &Op, const TensorValue &In,
               const std::vector<const TensorValue *> &Same, TensorValue &Into,
               std::string &Why) {
  std::vector<const TensorValue *> All = {&In};
  All.insert(All.end(), Same.begin(), Same.end());
  commonDType(All, Into);
  for (const TensorValue *T : All)
    if (T->Type && Into.Type && *T->Type != *Into.Type) {
      Why = Op + " of " + dtypeName(*Into.Type) + " and " +
            dtypeName(*T->Type) + " operands is not modelled (mixed dtypes)";
      return false;
    }
  if (!Into.dtypeKnown()) {
    Why = "dtype of an input is unknown";
    return false;
  }
  if (Into.Type && !answeredFloating(*Into.Type)) {
    Why = Op + " of a " + std::string(dtypeName(*Into.Type)) +
          " input is not modelled";
    return false;
  }
  if (!Into.Type && !requireFloatingParameter(Into.TypeOf)) {
    Why = Op + " needs a floating input; " + Into.TypeOf +
          "'s dtype is unknown";
    return false;
  }
  return true;
}

/// Class indices: LibTorch's CPU kernels read int64 (a parameter's dtype is
/// stated to be int64). False with Why otherwise.
bool classIndexTarget(const std::string &Op, const TensorValue &Target,
                      std::string &Why) {
  if (Target.Type) {
    if (*Target.Type == DType::Int64)
      return true;
    Why = Op + " with a " + std::string(dtypeName(*Target.Type)) +
          " class-index target is not modelled (int64 is)";
    return false;
  }
  if (!Target.TypeOf.empty() &&
      requireCondition(Target.TypeOf + ".scalar_type() == at::kLong"))
    return true;
  Why = "dtype of the target is unknown";
  return false;
}

/// The loss's result: a fresh 0-d tensor for Mean/Sum, else Unreduced
/// sizes with Strides (unset: unknown because LayoutWhy). Typed carries the
/// dtype (lossDType).
OpOutcome lossResult(Reduction R, const TensorValue &Typed,
                     std::optional<Device> Dev, const Shape &Unreduced,
                     const std::optional<Shape> &Strides,
                     const std::string &LayoutWhy,
                     std::vector<const TensorValue *> Reads) {
  bool Reduced = R != Reduction::None;
  OpOutcome Out = freshContiguous(Reduced ? Shape{} : Unreduced, Typed.Type,
                                  Dev, Typed.TypeOf);
  if (!Reduced) {
    if (Strides) {
      Out.Value.Strides = *Strides;
    } else {
      Out.Value.Strides.reset();
      Out.Value.markUnknown(LayoutWhy);
    }
  }
  Reads.erase(std::remove(Reads.begin(), Reads.end(), nullptr), Reads.end());
  Out.ReadBytes = sumBytes(Reads);
  Out.WrittenBytes = Out.Value.logicalBytes();
  Out.TransientBytes.reset();
  Out.Note = LossNote;
  return Out;
}

/// A loss of operands whose shapes are not known: a Mean or Sum result is
/// still 0-d wherever the op does not throw; its dtype is the input's when
/// every operand has it. Its storage is the unreduced loss's where ATen
/// reduces into it (unknown then), else the 0-d result's own.
OpOutcome reducedOfUnknownShape(const std::string &Op, Reduction R,
                                bool ReducesInPlace, const TensorValue &In,
                                const std::vector<const TensorValue *> &Others,
                                const std::string &Why) {
  if (R == Reduction::None)
    return unknownCopy(Why, std::nullopt, In.Dev);
  TensorValue Typed;
  std::string TypeWhy;
  if (!lossDType(Op, In, Others, Typed, TypeWhy))
    Typed = TensorValue();
  OpOutcome Out = freshContiguous(Shape{}, Typed.Type, In.Dev, Typed.TypeOf);
  Out.Value.markUnknown(Why);
  Out.ReadBytes.reset();
  Out.TransientBytes.reset();
  Out.StorageBytesUnknown = ReducesInPlace;
  if (ReducesInPlace)
    Out.WrittenBytes.reset();
  Out.Note = LossNote;
  return Out;
}

/// Whether two shapes are equal: rank, then every size (undecidable
/// symbolic sizes give Unknown).
Tri sameShape(const Shape &A, const Shape &B) {
  if (A.size() != B.size())
    return Tri::False;
  Tri All = Tri::True;
  for (size_t K = 0; K < A.size(); ++K)
    All = triAnd(All, sizeEq(A[K], B[K]));
  return All;
}

/// Whether Small broadcasts into Into without changing it (an in-place
/// `loss.mul_(weight)`).
Tri broadcastsInto(const Shape &Small, const Shape &Into) {
  Shape Both;
  Tri B = broadcastShapes(Into, Small, Both);
  if (B != Tri::True)
    return B;
  return sameShape(Both, Into);
}

bool allContiguous(const std::vector<const TensorValue *> &Ts) {
  for (const TensorValue *T : Ts)
    if (T && !T->contiguous().value_or(false))
      return false;
  return true;
}

// ---- Elementwise losses --------------------------------------------------------------

/// How an elementwise loss lays out its unreduced result.
enum class UnreducedLayout {
  /// One TensorIterator op over (input, target) (mse_loss, smooth_l1_loss;
  /// l1_loss is (input - target).abs()): elementwise()'s output strides.
  Iterator,
  /// Written into empty_like(input) (binary_cross_entropy, huber_loss):
  /// the input's dense layout, when the shapes are equal.
  LikeInput,
  /// A chain of ops (kl_div, binary_cross_entropy_with_logits): answered
  /// for contiguous operands only, whose every step is contiguous.
  ContiguousOnly,
};

struct ElementwiseLoss {
  std::string Op;
  UnreducedLayout Layout = UnreducedLayout::Iterator;
  /// Input and target must have one shape: the functional spelling throws
  /// otherwise (ThrowsOnMismatch); the at:: spelling's behaviour is not
  /// modelled.
  bool SameSizes = false;
  bool ThrowsOnMismatch = false;
  std::optional<Reduction> Reduce;
  std::string Why; // Reduce or an argument could not be read
  /// Weights multiplied into the unreduced loss in place: they must
  /// broadcast into its shape.
  std::vector<const TensorValue *> Weights;
  /// The dtype is input and target's result_type (one TensorIterator op
  /// computes in it: mse_loss of float32 and float64 is float64); other
  /// losses answer only operands of one dtype.
  bool Promotes = false;
  /// Mean/Sum write the 0-d result into the unreduced loss's own storage,
  /// resized to {}: the storage keeps the unreduced loss's bytes (mse_loss
  /// and smooth_l1_loss resize their structured output, 1.13.1 measured 48
  /// B for a [4, 3] float32 mse_loss; binary_cross_entropy resize_as_()s
  /// its empty_like(input)).
  bool ReducesInPlace = false;
};

RuleResult elementwiseLoss(const OpCall &C, const ElementwiseLoss &L) {
  const TensorValue &In = C.arg(0).TV, &Target = C.arg(1).TV;
  if (!L.Why.empty())
    return notModelledOnAll(C, L.Why);
  Reduction R = *L.Reduce;
  std::vector<const TensorValue *> Operands = {&In, &Target};
  Operands.insert(Operands.end(), L.Weights.begin(), L.Weights.end());
  // Shapes decide the result and its errors; strides only the unreduced
  // loss's layout.
  for (const TensorValue *T : Operands)
    if (!T->Sizes)
      return one(reducedOfUnknownShape(L.Op, R, L.ReducesInPlace, In,
                                       {Operands.begin() + 1, Operands.end()},
                                       shapeReason(*T)),
                 L.Op);
  // The shape: input and target broadcast (a TensorIterator, or the
  // functional spelling's torch::broadcast_tensors).
  Shape Unreduced;
  if (L.SameSizes) {
    Tri Same = sameShape(*In.Sizes, *Target.Sizes);
    if (Same == Tri::False && L.ThrowsOnMismatch)
      return one(throws("Using a target size (" + dimsText(*Target.Sizes) +
                        ") that is different to the input size (" +
                        dimsText(*In.Sizes) + ") is deprecated. Please "
                        "ensure they have the same size."),
                 L.Op);
    if (Same != Tri::True)
      return notModelledOnAll(
          C, Same == Tri::False
                 ? L.Op + " of an input and a target of different sizes is "
                          "not modelled"
                 : "whether " + L.Op + "'s input and target have one shape "
                                       "is not decidable");
    Unreduced = *In.Sizes;
  } else {
    Tri B = broadcastShapes(*In.Sizes, *Target.Sizes, Unreduced);
    if (B == Tri::False)
      return one(throws("The size of tensor a must match the size of tensor "
                        "b at a non-singleton dimension (" + L.Op +
                        ": shapes " + dimsText(*In.Sizes) + " and " +
                        dimsText(*Target.Sizes) + " do not broadcast)"),
                 L.Op);
    if (B == Tri::Unknown)
      return notModelledOnAll(C, "whether " + dimsText(*In.Sizes) + " and " +
                                     dimsText(*Target.Sizes) +
                                     " broadcast is not decidable");
  }
  for (const TensorValue *W : L.Weights) {
    Tri Fits = broadcastsInto(*W->Sizes, Unreduced);
    if (Fits != Tri::True)
      return notModelledOnAll(C, "a weight of shape " + dimsText(*W->Sizes) +
                                     " that does not broadcast into the "
                                     "loss's " + dimsText(Unreduced) +
                                     " is not modelled");
  }
  TensorValue Typed;
  std::string Why;
  if (L.Promotes && In.Type && Target.Type && *In.Type != *Target.Type) {
    // Both answered dtypes: their result_type is the wider one.
    if (!answeredFloating(*In.Type) || !answeredFloating(*Target.Type))
      return notModelledOnAll(C, L.Op + " of " + dtypeName(*In.Type) + " and " +
                                     dtypeName(*Target.Type) +
                                     " operands is not modelled");
    Typed.Type = promoteTypes(*In.Type, *Target.Type);
  } else if (!lossDType(L.Op, In, {&Target}, Typed, Why)) {
    return notModelledOnAll(C, Why);
  }
  for (const TensorValue *W : L.Weights) {
    TensorValue WeightTyped;
    if (!lossDType(L.Op, In, {W}, WeightTyped, Why))
      return notModelledOnAll(C, Why);
  }
  // The unreduced loss's layout.
  std::optional<Shape> Strides;
  std::string LayoutWhy = "the layout of " + L.Op +
                          "'s unreduced loss for these operands is not "
                          "modelled";
  if (R == Reduction::None) {
    switch (L.Layout) {
    case UnreducedLayout::Iterator: {
      OpOutcome E = elementwise(L.Op, {ElemOperand::tensor(In),
                                       ElemOperand::tensor(Target)},
                                ElemDType::Promote);
      Strides = E.Value.Strides;
      break;
    }
    case UnreducedLayout::LikeInput:
      if (In.Strides && sameShape(*In.Sizes, Unreduced) == Tri::True)
        Strides = preserveFormatStrides(*In.Sizes, *In.Strides);
      break;
    case UnreducedLayout::ContiguousOnly:
      if (allContiguous(Operands))
        Strides = contiguousStrides(Unreduced);
      break;
    }
  }
  OpOutcome Out = lossResult(R, Typed, In.Dev, Unreduced, Strides, LayoutWhy,
                             Operands);
  if (R != Reduction::None && L.ReducesInPlace) {
    Out.StorageBytes = mulSizes(checkedNumel(Unreduced), *Typed.itemBytes());
    if (!Out.StorageBytes)
      return notModelledOnAll(C, "the size of " + L.Op + "'s unreduced loss "
                                 "does not fit in int64");
  }
  return one(Out, L.Op);
}

/// The reduction of an elementwise loss: option "reduction" of the
/// options object at OptionsArg, else the integer at ReductionArg.
ElementwiseLoss readElementwise(const OpCall &C, const std::string &Op,
                                size_t OptionsArg, size_t ReductionArg) {
  ElementwiseLoss L;
  L.Op = Op;
  const ArgValue *O = optionsOf(C, OptionsArg);
  if (O && !O->Named->Complete) {
    L.Why = Op + " options could not be derived: " + O->Named->Why;
    return L;
  }
  L.Reduce = readReduction(O ? O->option("reduction") : &C.arg(ReductionArg),
                           Op == "kl_div" && O, L.Why);
  return L;
}

/// A double argument or option (beta, delta, label_smoothing): Default
/// when absent; Why when given but not derived.
std::optional<double> readNumber(const ArgValue *A, double Default,
                                 const std::string &Name, std::string &Why) {
  if (!A || A->K == ArgValue::Kind::Absent)
    return Default;
  if ((A->K == ArgValue::Kind::Number || A->K == ArgValue::Kind::Scalar) &&
      A->Number)
    return *A->Number;
  if (A->K == ArgValue::Kind::Int)
    return static_cast<double>(A->Int);
  Why = Name + " could not be derived";
  return std::nullopt;
}

} // namespace

// mse_loss (Loss.cpp, structured in 1.13): one TensorIterator binary op
// over input and target (dtypes promoted), whose output is resized to {}
// for Mean/Sum. F::mse_loss broadcasts them first
// (torch::broadcast_tensors), which gives the same shape.
RuleResult rule_mse_loss(const OpCall &C) {
  ElementwiseLoss L = readElementwise(C, "mse_loss", 2, 2);
  L.Promotes = true;
  L.ReducesInPlace = true;
  return elementwiseLoss(C, L);
}

// l1_loss (Loss.cpp, 1.13): apply_loss_reduction((input - target).abs()).
RuleResult rule_l1_loss(const OpCall &C) {
  return elementwiseLoss(C, readElementwise(C, "l1_loss", 2, 2));
}

// smooth_l1_loss (Loss.cpp, structured): the meta function builds a binary
// TensorIterator over input and target and resizes that output to {} when
// reducing; beta < 0 throws, beta == 0 runs l1_loss_out into the output
// instead (not modelled). F::smooth_l1_loss(input, target, options, beta)
// broadcasts first; its beta is the fourth argument as in at:: (the
// options' own beta is not read by it).
RuleResult rule_smooth_l1_loss(const OpCall &C) {
  ElementwiseLoss L = readElementwise(C, "smooth_l1_loss", 2, 2);
  L.ReducesInPlace = true;
  auto Beta = readNumber(&C.arg(3), 1.0, "beta", L.Why);
  if (Beta && *Beta < 0)
    return one(throws("smooth_l1_loss does not support negative values for "
                      "beta."),
               L.Op);
  if (Beta && *Beta == 0)
    return notModelledOnAll(C, "smooth_l1_loss with beta 0 (l1_loss_out into "
                               "its output) is not modelled");
  return elementwiseLoss(C, L);
}

// huber_loss (Loss.cpp): loss = empty_like(input), written by a binary
// TensorIterator, then apply_loss_reduction; delta <= 0 throws.
// F::huber_loss broadcasts input and target first.
RuleResult rule_huber_loss(const OpCall &C) {
  ElementwiseLoss L = readElementwise(C, "huber_loss", 2, 2);
  L.Layout = UnreducedLayout::LikeInput;
  const ArgValue *O = optionsOf(C, 2);
  auto Delta = readNumber(O ? O->option("delta") : &C.arg(3), 1.0, "delta",
                          L.Why);
  if (Delta && *Delta <= 0)
    return one(throws("huber_loss does not support non-positive values for "
                      "delta."),
               L.Op);
  return elementwiseLoss(C, L);
}

// binary_cross_entropy (Loss.cpp, binary_cross_entropy_cpu): loss =
// empty_like(input) written by a TensorIterator over the squeezed input and
// target (one dtype), times weight in place, then reduced. F::
// binary_cross_entropy throws when target.sizes() != input.sizes() and
// expands the weight to the target's size.
RuleResult rule_binary_cross_entropy(const OpCall &C) {
  ElementwiseLoss L = readElementwise(C, "binary_cross_entropy", 2, 3);
  L.Layout = UnreducedLayout::LikeInput;
  L.ReducesInPlace = true;
  L.SameSizes = true;
  const ArgValue *O = optionsOf(C, 2);
  L.ThrowsOnMismatch = O != nullptr;
  const ArgValue *WeightArg = O ? O->option("weight") : &C.arg(2);
  if (const TensorValue *W = optionalTensor(WeightArg, "the weight", L.Why))
    L.Weights.push_back(W);
  return elementwiseLoss(C, L);
}

// binary_cross_entropy_with_logits (Loss.cpp): a composite of
// TensorIterator ops, (1 - target).mul_(input).add_(...), times weight in
// place, then reduced. F::binary_cross_entropy_with_logits throws when
// target.sizes() != input.sizes() ("Target size (...) must be the same as
// input size (...)").
RuleResult rule_binary_cross_entropy_with_logits(const OpCall &C) {
  ElementwiseLoss L =
      readElementwise(C, "binary_cross_entropy_with_logits", 2, 4);
  L.Layout = UnreducedLayout::ContiguousOnly;
  L.SameSizes = true;
  const ArgValue *O = optionsOf(C, 2);
  L.ThrowsOnMismatch = O != nullptr;
  if (O) {
    const TensorValue &In = C.arg(0).TV, &Target = C.arg(1).TV;
    if (In.Sizes && Target.Sizes &&
        sameShape(*In.Sizes, *Target.Sizes) == Tri::False)
      return one(throws("Target size (" + dimsText(*Target.Sizes) +
                        ") must be the same as input size (" +
                        dimsText(*In.Sizes) + ")"),
                 L.Op);
  }
  if (const TensorValue *W = optionalTensor(O ? O->option("weight") : &C.arg(2),
                                            "the weight", L.Why))
    L.Weights.push_back(W);
  if (const TensorValue *P = optionalTensor(
          O ? O->option("pos_weight") : &C.arg(3), "pos_weight", L.Why))
    L.Weights.push_back(P);
  return elementwiseLoss(C, L);
}

// kl_div (Loss.cpp, 1.13): integral inputs throw; log_target ?
// exp(target) * (target - input) : xlogy(target, target) - target * input,
// then reduced. F::kl_div's kBatchMean sums, then divides the 0-d sum by
// the batch size.
RuleResult rule_kl_div(const OpCall &C) {
  ElementwiseLoss L = readElementwise(C, "kl_div", 2, 2);
  L.Layout = UnreducedLayout::ContiguousOnly;
  return elementwiseLoss(C, L);
}

// ---- Class losses: nll_loss and cross_entropy -------------------------------------

namespace {

struct ClassLossArgs {
  const TensorValue *Weight = nullptr;
  std::optional<Reduction> Reduce;
  std::optional<int64_t> IgnoreIndex = -100;
  std::optional<double> LabelSmoothing = 0.0;
  std::string Why;
};

/// weight, reduction, ignore_index (and cross_entropy's label_smoothing):
/// options of the functional spelling, or arguments 2, 3, 4 (5).
ClassLossArgs readClassLoss(const OpCall &C, const std::string &Op) {
  ClassLossArgs A;
  const ArgValue *O = optionsOf(C, 2);
  if (O && !O->Named->Complete) {
    A.Why = Op + " options could not be derived: " + O->Named->Why;
    return A;
  }
  A.Weight = optionalTensor(O ? O->option("weight") : &C.arg(2), "the weight",
                            A.Why);
  A.Reduce =
      readReduction(O ? O->option("reduction") : &C.arg(3), false, A.Why);
  const ArgValue *Ignore = O ? O->option("ignore_index") : &C.arg(4);
  if (Ignore && Ignore->K == ArgValue::Kind::Int)
    A.IgnoreIndex = Ignore->Int;
  else if (Ignore && Ignore->K != ArgValue::Kind::Absent)
    A.IgnoreIndex.reset();
  A.LabelSmoothing = readNumber(O ? O->option("label_smoothing") : &C.arg(5),
                                0.0, "label_smoothing", A.Why);
  return A;
}

/// The weight, when given, has one value per class: 1-D of C elements.
/// False: it has not (LibTorch throws); Unknown: not decided.
Tri weightFitsClasses(const TensorValue *Weight, const SymSize &Classes) {
  if (!Weight)
    return Tri::True;
  if (!Weight->Sizes)
    return Tri::Unknown;
  if (Weight->Sizes->size() != 1)
    return Tri::False;
  return requireEq((*Weight->Sizes)[0], Classes);
}

/// nll_loss_nd (LossNLL.cpp) over an input of shape IS and class-index
/// target TS: the unreduced loss's shape, or a throw, or unknown (Why).
/// Direct: the at:: function the spelling names (nll_loss: 1-D or 2-D
/// input only; nll_loss2d: 4-D only; nll_loss_nd: any).
struct NllShape {
  std::optional<Shape> Unreduced;
  std::optional<std::string> Throws;
  std::string Why;
};

NllShape nllShape(const Shape &IS, const Shape &TS, const TensorValue *Weight,
                  const std::string &Direct) {
  NllShape S;
  size_t N = IS.size();
  auto Throw = [&](const std::string &Msg) {
    S.Throws = Msg;
    return S;
  };
  auto Check = [&](Tri T, const std::string &Msg,
                   const std::string &Question) -> bool {
    if (T == Tri::False)
      S.Throws = Msg;
    else if (T == Tri::Unknown)
      S.Why = Question;
    return T == Tri::True;
  };
  if (Direct == "nll_loss" && (N < 1 || N > 2))
    return Throw("input tensor should be 1D or 2D");
  if (Direct == "nll_loss2d" && TS.size() != 3)
    return Throw("only batches of spatial targets supported (3D tensors) but "
                 "got targets of dimension: " + std::to_string(TS.size()));
  if (Direct == "nll_loss2d" && N != 4)
    return Throw("only batches of spatial inputs supported (4D tensors), but "
                 "got input of dimension: " + std::to_string(N));
  if (N < 1)
    return Throw("Expected 1 or more dimensions (got 0)");
  if (N != 1) {
    // nll_loss_nd reads target.sizes()[0]: a 0-d target is read out of
    // bounds there, not a defined error.
    if (TS.empty()) {
      S.Why = "a 0-d target for a batched input is not modelled";
      return S;
    }
    if (Direct != "nll_loss" &&
        !Check(requireEq(IS[0], TS[0]),
               "Expected input batch_size (" + sizeText(IS[0]) +
                   ") to match target batch_size (" + sizeText(TS[0]) + ").",
               undecided("==", IS[0], TS[0])))
      return S;
  }
  if (N <= 2) {
    // nll_loss's meta function.
    if (TS.size() > 1)
      return Throw("0D or 1D target tensor expected, multi-target not "
                   "supported");
    if (N == 1 && !TS.empty()) {
      S.Why = "a 1-D input with a 1-D target is not modelled";
      return S;
    }
    if (N == 2 && !Check(requireEq(IS[0], TS[0]),
                         "size mismatch (got input: " + dimsText(IS) +
                             ", target: " + dimsText(TS) + ")",
                         undecided("==", IS[0], TS[0])))
      return S;
    if (!Check(weightFitsClasses(Weight, IS.back()),
               "weight tensor should be defined either for all " +
                   sizeText(IS.back()) +
                   " classes or no classes but got weight tensor of shape: " +
                   (Weight && Weight->Sizes ? dimsText(*Weight->Sizes) : ""),
               "whether the weight has one value per class is not decided"))
      return S;
    S.Unreduced = N == 2 ? Shape{IS[0]} : Shape{};
    return S;
  }
  // 4-D: nll_loss2d; 3-D and more than 4-D: viewed as 4-D, then the
  // unreduced loss viewed back to [N, d1, ...].
  Shape Want = {IS[0]};
  Want.insert(Want.end(), IS.begin() + 2, IS.end());
  Tri Fits = sameShape(TS, Want);
  if (Fits == Tri::Unknown && TS.size() == Want.size()) {
    Fits = Tri::True;
    for (size_t K = 0; K < TS.size(); ++K)
      Fits = triAnd(Fits, requireEq(TS[K], Want[K]));
  }
  std::string Msg =
      N == 4 ? "size mismatch (got input: " + dimsText(IS) + " , target: " +
                   dimsText(TS)
             : "Expected target size " + dimsText(Want) + ", got " +
                   dimsText(TS);
  if (N == 4 && TS.size() != 3)
    Msg = "only batches of spatial targets supported (3D tensors) but got "
          "targets of dimension: " + std::to_string(TS.size());
  if (!Check(Fits, Msg, "whether the target's sizes are the input's less "
                        "the class dim is not decided"))
    return S;
  if (!Check(weightFitsClasses(Weight, IS[1]),
             "weight tensor should be defined either for all or no classes",
             "whether the weight has one value per class is not decided"))
    return S;
  S.Unreduced = Want;
  return S;
}

/// A shape nllShape did not answer: LibTorch's throw, or unknown.
std::optional<RuleResult> nllShapeFailure(const OpCall &C,
                                          const std::string &Op,
                                          const NllShape &S) {
  if (S.Throws)
    return one(throws(*S.Throws), Op);
  if (!S.Unreduced)
    return notModelledOnAll(C, S.Why);
  return std::nullopt;
}

/// The loss of an answered nllShape: contiguous when unreduced.
RuleResult classLossResult(const OpCall &C, const std::string &Op,
                           const NllShape &S, Reduction R,
                           const TensorValue &Typed,
                           std::vector<const TensorValue *> Reads) {
  const TensorValue &In = C.arg(0).TV;
  OpOutcome Out = lossResult(R, Typed, In.Dev, *S.Unreduced,
                             contiguousStrides(*S.Unreduced), "", Reads);
  Out.Note += "; class indices are assumed to be in range";
  return one(Out, Op);
}

} // namespace

// nll_loss / nll_loss_nd / nll_loss2d (LossNLL.cpp, LossNLL2d.cpp): the
// output has the input's dtype; unreduced, [N] for a 2-D input, [N, H, W]
// for a 4-D one, and nll_loss_nd's 3-D and >4-D inputs give [N, d1, ...]
// (a view of a fresh contiguous [N, 1, d1 * ...]: the same bytes). F::
// nll_loss needs 2 or more dims and checks the batch sizes before calling
// nll_loss_nd.
RuleResult rule_nll_loss(const OpCall &C) {
  const std::string &Op = C.Written;
  ClassLossArgs A = readClassLoss(C, Op);
  if (!A.Why.empty())
    return notModelledOnAll(C, A.Why);
  const TensorValue &In = C.arg(0).TV, &Target = C.arg(1).TV;
  if (!In.Sizes || !Target.Sizes)
    return one(reducedOfUnknownShape(Op, *A.Reduce, /*ReducesInPlace=*/false,
                                     In, {}, shapeReason(In.Sizes ? Target : In)),
               Op);
  bool Functional = optionsOf(C, 2) != nullptr || C.Functional;
  const Shape &IS = *In.Sizes, &TS = *Target.Sizes;
  if (Functional && IS.size() < 2)
    return one(throws("Expected 2 or more dimensions (got " +
                      std::to_string(IS.size()) + ")"),
               Op);
  NllShape S = nllShape(IS, TS, A.Weight,
                        Functional ? std::string("nll_loss_nd") : Op);
  if (auto Failed = nllShapeFailure(C, Op, S))
    return *Failed;
  TensorValue Typed;
  std::string Why;
  std::vector<const TensorValue *> Same;
  if (A.Weight)
    Same.push_back(A.Weight);
  if (!lossDType(Op, In, Same, Typed, Why) ||
      !classIndexTarget(Op, Target, Why))
    return notModelledOnAll(C, Why);
  return classLossResult(C, Op, S, *A.Reduce, Typed, {&In, &Target, A.Weight});
}

// cross_entropy_loss (LossNLL.cpp, 1.13; F::cross_entropy calls it):
//  - input and target of one shape: class probabilities. The target must
//    be floating ("Expected floating point type for target with class
//    probabilities"), ignore_index negative; unreduced, the input's shape
//    less the class dim (dim 1, or 0 for a 1-D input): -(log_softmax *
//    target * weight).sum(class_dim), a fresh contiguous tensor.
//  - otherwise class indices: label_smoothing must be in [0, 1]; the loss
//    is nll_loss_nd(log_softmax(input, class_dim), target, ...), so its
//    shapes and checks are nll_loss_nd's.
RuleResult rule_cross_entropy_loss(const OpCall &C) {
  const std::string &Op = C.Written;
  ClassLossArgs A = readClassLoss(C, Op);
  if (!A.Why.empty())
    return notModelledOnAll(C, A.Why);
  const TensorValue &In = C.arg(0).TV, &Target = C.arg(1).TV;
  if (!In.Sizes || !Target.Sizes)
    return one(reducedOfUnknownShape(Op, *A.Reduce, /*ReducesInPlace=*/false,
                                     In, {}, shapeReason(In.Sizes ? Target : In)),
               Op);
  const Shape &IS = *In.Sizes, &TS = *Target.Sizes;
  if (IS.empty())
    return notModelledOnAll(C, Op + " of a 0-d input is not modelled");
  Tri Probabilities = sameShape(IS, TS);
  if (Probabilities == Tri::Unknown)
    return notModelledOnAll(C, "whether " + Op + "'s target holds class "
                                   "probabilities (the input's shape) or "
                                   "class indices is not decided");
  TensorValue Typed;
  std::string Why;
  std::vector<const TensorValue *> Same;
  if (A.Weight)
    Same.push_back(A.Weight);
  if (Probabilities == Tri::True) {
    if (Target.Type && !isFloating(*Target.Type))
      return one(throws("Expected floating point type for target with class "
                        "probabilities, got " +
                        c10Name(*Target.Type)),
                 Op);
    if (!A.IgnoreIndex)
      return notModelledOnAll(C, "ignore_index could not be derived");
    if (*A.IgnoreIndex >= 0)
      return one(throws("ignore_index is not supported for floating point "
                        "target"),
                 Op);
    size_t ClassDim = IS.size() == 1 ? 0 : 1;
    if (A.Weight) {
      Tri Fits = weightFitsClasses(A.Weight, IS[ClassDim]);
      if (Fits != Tri::True)
        return notModelledOnAll(C, "a weight that is not one value per class "
                                   "is not modelled");
    }
    if (!A.LabelSmoothing || *A.LabelSmoothing > 1.0)
      return notModelledOnAll(C, "label_smoothing outside [0, 1] with class "
                                 "probabilities is not modelled");
    Same.push_back(&Target);
    if (!lossDType(Op, In, Same, Typed, Why))
      return notModelledOnAll(C, Why);
    Shape Unreduced = IS;
    Unreduced.erase(Unreduced.begin() + static_cast<std::ptrdiff_t>(ClassDim));
    OpOutcome Out = lossResult(*A.Reduce, Typed, In.Dev, Unreduced,
                               contiguousStrides(Unreduced), "",
                               {&In, &Target, A.Weight});
    return one(Out, Op);
  }
  if (!A.LabelSmoothing)
    return notModelledOnAll(C, "label_smoothing could not be derived");
  if (*A.LabelSmoothing > 1.0)
    return one(throws("label_smoothing must be between 0.0 and 1.0. Got: " +
                      std::to_string(*A.LabelSmoothing)),
               Op);
  NllShape S = nllShape(IS, TS, A.Weight, "nll_loss_nd");
  if (auto Failed = nllShapeFailure(C, Op, S))
    return *Failed;
  if (!lossDType(Op, In, Same, Typed, Why) ||
      !classIndexTarget(Op, Target, Why))
    return notModelledOnAll(C, Why);
  return classLossResult(C, Op, S, *A.Reduce, Typed, {&In, &Target, A.Weight});
}

} // namespace tma
