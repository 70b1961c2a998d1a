// Class losses (LibTorch 1.13, CPU): nll_loss (and nll_loss_nd /
// nll_loss2d) and cross_entropy; the design the losses share is in
// Losses.cpp's opening comment.
#include "model/Ops.h"
#include "model/ops/LossCommon.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>

namespace tma {

using namespace detail;
using namespace loss;

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

/// What 1.13.1's cross_entropy over class indices (2-D float32 input, no
/// weight, no label smoothing, Mean) makes inside: log_softmax's output
/// and total_weight; empty where not measured.
static std::vector<SymSize>
crossEntropyIntermediates(const TorchVersion &Version, const TensorValue &In,
                          const ClassLossArgs &A, size_t Rank) {
  auto LogSoftmax = In.logicalBytes();
  if (!(Version.Major == 1 && Version.Minor == 13) || A.Weight || Rank != 2 ||
      A.Reduce != std::optional<Reduction>(Reduction::Mean) ||
      A.LabelSmoothing != std::optional<double>(0.0) ||
      In.Type != std::optional<DType>(DType::Float32) || !LogSoftmax)
    return {};
  return {*LogSoftmax, SymSize(4)};
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
  RuleResult R =
      classLossResult(C, Op, S, *A.Reduce, Typed, {&In, &Target, A.Weight});
  // Measured on 1.13.1: log_softmax's output (the input's size) and
  // nll_loss's 0-d total_weight live until the op returns; with
  // gradients on, autograd keeps both (GradientTape, rule 6).
  std::vector<SymSize> Kept = crossEntropyIntermediates(C.Version, In, A, IS.size());
  if (!Kept.empty())
    for (OpOutcome &Out : R.Outcomes) {
      Out.TransientBytes = addSizes(Kept[0], Kept[1]);
      Out.Intermediates = Kept;
    }
  return R;
}

} // namespace tma
