// Concatenation and repetition (TensorShape.cpp): cat, stack and repeat
// allocate their output.
//
// Traffic accounting, the same for every rule:
// - ReadBytes counts each input tensor's logical bytes (numel * itemsize)
//   once, even when broadcasting makes the kernel revisit elements; C++
//   scalars count nothing. Index tensors count their own bytes.
// - WrittenBytes counts the output's logical bytes once.
// - TransientBytes counts storages an op allocates and frees inside itself
//   (matmul's folding copy; on CPU, TensorIterator's promoted copies of
//   inputs whose dtype differs from the common dtype).
#include "model/Ops.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tma {

using namespace detail;

// cat (TensorShape.cpp, cat_compute_output_memory_format): the dtype is
// result_type of the inputs; the output is channels-last only when every
// input suggests channels-last, otherwise contiguous. 1-D empty inputs are
// skipped (legacy behaviour).
OpOutcome cat(const std::vector<TensorValue> &Ins, int64_t Dim) {
  if (Ins.empty())
    return throws("torch.cat(): expected a non-empty list of Tensors");
  std::vector<ElemOperand> Ops;
  std::optional<Device> Dev = Ins.front().Dev;
  for (const TensorValue &T : Ins)
    Ops.push_back(ElemOperand::tensor(T));
  std::optional<DType> Type = resultType(Ops);
  // Inputs whose dtypes are parameters' (cat of two halves of x): the
  // promoted dtype is that parameter's where they are one (stated when
  // they are several parameters').
  std::string TypeOf;
  if (!Type && std::none_of(Ins.begin(), Ins.end(),
                            [](const TensorValue &T) { return T.Type.has_value(); })) {
    std::vector<const TensorValue *> In;
    for (const TensorValue &T : Ins)
      In.push_back(&T);
    TensorValue Common;
    commonDType(In, Common);
    TypeOf = Common.TypeOf;
  }
  std::vector<const TensorValue *> Used;
  for (const TensorValue &T : Ins) {
    if (!T.Sizes || !T.Strides)
      return unknownCopy(shapeReason(T), Type, Dev);
    if (T.Sizes->size() == 1) {
      // Skipped when empty (the legacy 1-D [0] tensor); a symbolic size
      // is not, as in chunk (stated `S >= 2`).
      Tri Empty = shapeIsEmpty({(*T.Sizes)[0]});
      if (Empty == Tri::Unknown)
        return unknownCopy(undecided("==", (*T.Sizes)[0], 0), Type, Dev);
      if (Empty == Tri::True)
        continue; // skipped
    }
    if (T.Sizes->empty())
      return throws("zero-dimensional tensor cannot be concatenated");
    Used.push_back(&T);
  }
  if (Used.empty()) {
    OpOutcome Out = freshContiguous({0}, Type, Dev);
    Out.ReadBytes = SymSize(0);
    return Out;
  }
  const Shape &First = *Used.front()->Sizes;
  int64_t Rank = static_cast<int64_t>(First.size());
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return throws(rangeError(Rank));
  Shape Sizes = First;
  Sizes[*D] = 0;
  Tri AllChannelsLast = triOf(Rank == 4);
  for (const TensorValue *T : Used) {
    const Shape &S = *T->Sizes;
    if (static_cast<int64_t>(S.size()) != Rank)
      return throws("Tensors must have same number of dimensions: got " +
                    std::to_string(Rank) + " and " + std::to_string(S.size()));
    for (int64_t K = 0; K < Rank; ++K) {
      if (K == *D)
        continue;
      Tri Match = requireEq(S[K], First[K]);
      if (Match == Tri::Unknown)
        return unknownCopy(undecided("==", S[K], First[K]), Type, Dev);
      if (Match == Tri::False)
        return throws("Sizes of tensors must match except in dimension " +
                      std::to_string(*D) + ". Expected size " +
                      sizeText(First[K]) + " but got size " + sizeText(S[K]) +
                      " for tensor number 1 in the list.");
    }
    Sizes[*D] += S[*D];
    if (AllChannelsLast != Tri::False)
      AllChannelsLast =
          triAnd(AllChannelsLast, suggestsChannelsLast(S, *T->Strides));
  }
  OpOutcome Out = freshContiguous(Sizes, Type, Dev, TypeOf);
  if (AllChannelsLast == Tri::Unknown)
    Out.Value.markUnknown("whether every input of cat suggests channels-last "
                          "is not decidable");
  if (AllChannelsLast == Tri::True)
    Out.Value.Strides = channelsLastStrides(Sizes);
  std::vector<const TensorValue *> All;
  for (const TensorValue &T : Ins)
    All.push_back(&T);
  Out.ReadBytes = sumBytes(All);
  return Out;
}

// stack (TensorShape.cpp): cat of the inputs unsqueezed at dim; every
// input must have the same shape.
OpOutcome stack(const std::vector<TensorValue> &Ins, int64_t Dim) {
  if (Ins.empty())
    return throws("stack expects a non-empty TensorList");
  std::vector<TensorValue> Unsqueezed;
  for (const TensorValue &T : Ins) {
    if (!T.Sizes || !T.Strides)
      return unknownCopy(shapeReason(T), T.Type, T.Dev);
    const Shape &Want = *Ins.front().Sizes;
    Tri Same = triOf(T.Sizes->size() == Want.size());
    for (size_t K = 0; Same == Tri::True && K < Want.size(); ++K)
      Same = triAnd(Same, requireEq((*T.Sizes)[K], Want[K]));
    if (Same == Tri::Unknown)
      return unknownCopy("whether stack's inputs " + dimsText(Want) + " and " +
                             dimsText(*T.Sizes) +
                             " have equal sizes is not decidable",
                         T.Type, T.Dev);
    if (Same == Tri::False)
      return throws("stack expects each tensor to be equal size, but got " +
                    dimsText(*Ins.front().Sizes) + " at entry 0 and " +
                    dimsText(*T.Sizes) + " at entry 1");
    OpOutcome U = unsqueeze(T, Dim);
    if (U.Kind == OpKind::Throws)
      return U;
    Unsqueezed.push_back(U.Value);
  }
  // A 5-D output could take a channels-last-3d layout from its inputs:
  // not modelled, so only claim a layout when no input could suggest it.
  size_t OutRank = Unsqueezed.front().Sizes->size();
  if (OutRank == 5)
    for (const TensorValue &T : Unsqueezed)
      if (isContiguous(*T.Sizes, *T.Strides) != Tri::True)
        return unknownCopy("stack of non-contiguous inputs into a 5-D output "
                           "is not modelled",
                           T.Type, T.Dev);
  return cat(Unsqueezed, Dim);
}

// repeat (TensorShape.cpp): sizes multiplied by the repeats (padded with
// leading 1s); a fresh contiguous output.
OpOutcome repeat(const TensorValue &In, const Shape &Repeats) {
  if (!In.Sizes)
    return unknownCopy(shapeReason(In), In.Type, In.Dev);
  if (Repeats.size() < In.Sizes->size())
    return throws("Number of dimensions of repeat dims can not be smaller "
                  "than number of dimensions of tensor");
  for (const SymSize &R : Repeats) {
    Tri NonNegative = requireLe(0, R);
    if (NonNegative == Tri::Unknown)
      return unknownCopy(undecided(">=", R, 0), In.Type, In.Dev);
    if (NonNegative == Tri::False)
      return throws("Trying to create tensor with negative dimension " +
                    sizeText(R) + ": " + dimsText(Repeats));
  }
  Shape Sizes = Repeats;
  size_t Off = Repeats.size() - In.Sizes->size();
  for (size_t K = 0; K < In.Sizes->size(); ++K)
    Sizes[Off + K] *= (*In.Sizes)[K];
  OpOutcome Out = freshContiguous(Sizes, In.Type, In.Dev, In.TypeOf);
  Out.ReadBytes = In.logicalBytes();
  return Out;
}

} // namespace tma

// ---- Rules (OpTable.def) ------------------------------------------------------------

namespace tma {

using namespace detail;

/// cat / stack: the tensors in the list are the inputs.
static RuleResult concat(const OpCall &C, bool Stack) {
  const ArgValue &List = C.arg(0), &D = C.arg(1);
  RuleResult R;
  if (!List.known() || (D.given() && !D.known()) ||
      D.Type == ArgType::Dimname) {
    R.Outcomes.push_back(unmodelled(C.Written));
    R.Outcomes[0].Value.UnknownReason =
        List.known() ? "dim could not be derived"
                     : "the tensor list could not be derived";
    return R;
  }
  int64_t Dim = D.given() ? D.Int : 0;
  R.Name = Stack ? "stack" : "cat"; // concat is cat
  R.Outcomes.push_back(Stack ? stack(List.TVs, Dim) : cat(List.TVs, Dim));
  return R;
}

RuleResult rule_cat(const OpCall &C) { return concat(C, false); }
RuleResult rule_stack(const OpCall &C) { return concat(C, true); }

RuleResult rule_repeat(const OpCall &C) {
  if (!C.arg(1).known())
    return notModelled(C, "repeats could not be derived");
  return one(repeat(C.self().TV, C.arg(1).List));
}

} // namespace tma
