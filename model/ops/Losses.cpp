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
#include "model/ops/LossCommon.h"

#include <algorithm>

namespace tma {

using namespace detail;
using namespace loss;


namespace {

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
    // 1.13's mse_loss_out computes the unreduced loss into a temporary of
    // the same size and reduces it into the result with mean_out (sum_out,
    // then div_ by the count: a wrapped int64 scalar converted to float,
    // 8 + 4 B) or sum_out; measured with a counting allocator.
    if (L.Op == "mse_loss" && C.Version.Major == 1 && C.Version.Minor == 13 &&
        Typed.Type == std::optional<DType>(DType::Float32))
      Out.TransientBytes =
          R == Reduction::Mean ? addSizes(Out.StorageBytes, SymSize(12))
                               : Out.StorageBytes;
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

} // namespace tma
