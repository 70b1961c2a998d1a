// Matrix products (LinearAlgebra.cpp, Linear.cpp): fresh contiguous outputs,
// and the copies matmul makes to fold or batch its operands.
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

namespace {

/// How matmul treats a left operand of rank >= 3 against a 1-D or 2-D right
/// one: it folds the batch into rows with reshape({-1, k}), which copies
/// when that cannot be a view, unless should_fold sends it to bmm as it is.
struct FoldPlan {
  Tri Copies = Tri::False;
  std::string UnknownWhy; ///< Copies == Unknown: the question
};

FoldPlan foldLeftOperand(const TensorValue &A, size_t RB,
                         const TorchVersion &Version) {
  FoldPlan Plan;
  if (!A.Strides) {
    Plan.Copies = Tri::Unknown;
    Plan.UnknownWhy = "strides of the left operand are unknown, so whether "
                      "matmul copies it is unknown";
    return Plan;
  }
  const Shape &SA = *A.Sizes, &St = *A.Strides;
  size_t RA = SA.size();
  Tri UseBmm;
  if (Version.atLeast(2, 1)) {
    // PR #76828: fold only when the batch dims are packed.
    Tri Packed = Tri::True;
    for (size_t I = 0; I + 2 < RA; ++I)
      Packed = triAnd(Packed, sizeEq(St[I], St[I + 1] * SA[I + 1]));
    UseBmm = !Packed;
  } else {
    // PR #73115: 3D@2D with a transposed last dim uses bmm.
    UseBmm = RA == 3 && RB == 2
                 ? triAnd(sizeNe(St[2], 1), sizeEq(St[0], SA[1] * SA[2]))
                 : Tri::False;
  }
  if (UseBmm == Tri::Unknown) {
    Plan.Copies = Tri::Unknown;
    Plan.UnknownWhy = "whether matmul folds or batches the left operand is "
                      "not decidable";
  } else if (UseBmm == Tri::False) {
    // numel / max(k, 1): the -1 of reshape({-1, k}), 0 when empty.
    SymSize K = SA.back();
    Shape Folded = {SymSize::floorDiv(numel(SA), sizeMax(K, 1)), K};
    Shape FoldedStrides;
    Tri Viewable = computeStride(SA, St, Folded, FoldedStrides);
    Plan.Copies = !Viewable;
    if (Viewable == Tri::Unknown)
      Plan.UnknownWhy = "whether matmul's fold of the left operand copies it "
                        "is not decidable";
  }
  return Plan;
}

/// Batched matmul flattens each operand: expand(batch + matrix), then
/// reshape({batch_numel, ...}), which copies when the expanded tensor is
/// not viewable so. The bytes of that copy, 0 when none, nullopt when not
/// decidable.
std::optional<SymSize> batchReshapeCopy(const TensorValue &T, bool Left,
                                        const Shape &Batch, const Shape &Matrix) {
  if (!T.Strides || !T.itemBytes())
    return std::nullopt;
  Shape ExpSizes = Batch;
  ExpSizes.insert(ExpSizes.end(), Matrix.begin(), Matrix.end());
  Shape ExpStrides(ExpSizes.size(), 0);
  const Shape &TS = *T.Sizes, &TSt = *T.Strides;
  // A 1-D operand is unsqueezed to a matrix first.
  Shape MS = TS, MSt = TSt;
  if (TS.size() == 1) {
    if (Left) {
      MS = {1, TS[0]};
      MSt = {TS[0] * TSt[0], TSt[0]};
    } else {
      MS = {TS[0], 1};
      MSt = {TSt[0], 1};
    }
  }
  size_t Off = ExpSizes.size() - MS.size();
  for (size_t I = 0; I < MS.size(); ++I) {
    // A broadcast dim (1 expanded to more) gets stride 0.
    Tri Broadcast = triAnd(sizeEq(MS[I], 1), sizeNe(ExpSizes[Off + I], 1));
    if (Broadcast == Tri::Unknown)
      return std::nullopt;
    ExpStrides[Off + I] = Broadcast == Tri::True ? SymSize(0) : MSt[I];
  }
  Shape Flat = {numel(Batch), Matrix[0], Matrix[1]};
  Shape FlatStrides;
  Tri Viewable = computeStride(ExpSizes, ExpStrides, Flat, FlatStrides);
  if (Viewable == Tri::Unknown)
    return std::nullopt;
  if (Viewable == Tri::True)
    return SymSize(0);
  return mulSizes(checkedNumel(Flat), *T.itemBytes());
}

} // namespace

// matmul (native/LinearAlgebra.cpp, _matmul_impl / should_fold).
OpOutcome matmul(const TensorValue &A, const TensorValue &B,
                 const TorchVersion &Version) {
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  // An unknown operand's own reason explains the most.
  Out.Value.markUnknown(A.UnknownReason);
  Out.Value.markUnknown(B.UnknownReason);
  if (A.Type && B.Type) {
    if (*A.Type != *B.Type)
      return throws(std::string("expected scalar type ") + dtypeName(*A.Type) +
                    " but found " + dtypeName(*B.Type));
    Out.Value.Type = A.Type;
  } else {
    commonDType({&A, &B}, Out.Value);
    if (!Out.Value.dtypeKnown())
      Out.Value.markUnknown("dtype of an operand is unknown");
  }
  Out.Value.Dev = A.Dev ? A.Dev : B.Dev;
  if (!A.Sizes || !B.Sizes) {
    Out.Value.markUnknown("shape of an operand is unknown");
    return Out;
  }
  const Shape &SA = *A.Sizes, &SB = *B.Sizes;
  size_t RA = SA.size(), RB = SB.size();
  if (RA == 0 || RB == 0)
    return throws("both arguments to matmul need to be at least 1D, but they "
                  "are " + std::to_string(RA) + "D and " + std::to_string(RB) +
                  "D");
  SymSize K1 = SA.back();
  SymSize K2 = RB >= 2 ? SB[RB - 2] : SB[0];
  Tri Inner = requireEq(K1, K2);
  if (Inner == Tri::Unknown)
    return undecidedOutcome(Out, undecided("==", K1, K2));
  if (Inner == Tri::False)
    return throws("mat1 and mat2 shapes cannot be multiplied");
  Shape OutSizes;
  std::optional<SymSize> Transient = SymSize(0);
  if (RA == 1 && RB == 1) {
    OutSizes = {};
  } else if (RA == 2 && RB == 1) {
    OutSizes = {SA[0]};
  } else if (RA == 1 && RB == 2) {
    OutSizes = {SB[1]};
  } else if (RA == 2 && RB == 2) {
    OutSizes = {SA[0], SB[1]};
  } else if (RA >= 3 && (RB == 1 || RB == 2)) {
    // Fold the batch of A into its rows: A.reshape({-1, k}) then mm/mv.
    OutSizes.assign(SA.begin(), SA.end() - 1);
    if (RB == 2)
      OutSizes.push_back(SB[1]);
    FoldPlan Plan = foldLeftOperand(A, RB, Version);
    if (Plan.Copies == Tri::Unknown) {
      Transient.reset();
      Out.Value.markUnknown(Plan.UnknownWhy);
    } else if (Plan.Copies == Tri::True) {
      Transient = A.itemBytes() ? mulSizes(checkedNumel(SA), *A.itemBytes())
                                 : std::nullopt;
      Out.Note = "matmul folds the batch with reshape, which copies the "
                 "non-viewable left operand";
    }
  } else {
    // Batched: expand both batch portions, then reshape to 3-D for bmm.
    Shape BatchA(SA.begin(), SA.end() - std::min<size_t>(RA, 2));
    Shape BatchB(SB.begin(), SB.end() - std::min<size_t>(RB, 2));
    Shape Batch;
    Tri Broadcasts = broadcastShapes(BatchA, BatchB, Batch);
    if (Broadcasts == Tri::Unknown)
      return undecidedOutcome(Out, "whether matmul's batch dimensions " +
                                       dimsText(BatchA) + " and " +
                                       dimsText(BatchB) + " broadcast");
    if (Broadcasts == Tri::False)
      return throws("matmul batch dimensions cannot be broadcast");
    SymSize N = RA > 1 ? SA[RA - 2] : SymSize(1);
    SymSize P = SB.back();
    OutSizes = Batch;
    if (RA > 1)
      OutSizes.push_back(N);
    if (RB > 1)
      OutSizes.push_back(P);
    SymSize M1 = SA.back();
    auto CA = batchReshapeCopy(A, /*Left=*/true, Batch, {N, M1});
    auto CB = batchReshapeCopy(B, /*Left=*/false, Batch, {K2, P});
    Transient = addSizes(CA, CB);
    if (Transient && !Transient->identical(0))
      Out.Note = "matmul copies an operand to batch it for bmm";
  }
  Out.Value.Sizes = OutSizes;
  Out.Value.Strides = contiguousStrides(OutSizes);
  Out.Value.Offset = 0;
  Out.TransientBytes = Transient;
  Out.WrittenBytes = Out.Value.logicalBytes();
  Out.ReadBytes = addSizes(A.logicalBytes(), B.logicalBytes());
  gemmScratch(Out);
  return Out;
}

Tri matmulCopiesOperand(const TensorValue &A, const TensorValue &B,
                        unsigned Operand, const TorchVersion &Version) {
  // Where matmul would throw or cannot say, nothing is claimed.
  if (matmul(A, B, Version).Kind != OpKind::Copy || !A.Sizes || !B.Sizes)
    return Tri::Unknown;
  const Shape &SA = *A.Sizes, &SB = *B.Sizes;
  size_t RA = SA.size(), RB = SB.size();
  // dot, mv, mm and the folded mm take their operands with the strides
  // they have (as the rule counts them: no copy).
  if (RA <= 2 && RB <= 2)
    return Tri::False;
  if (RA >= 3 && RB <= 2)
    return Operand == 0 ? foldLeftOperand(A, RB, Version).Copies : Tri::False;
  Shape BatchA(SA.begin(), SA.end() - std::min<size_t>(RA, 2));
  Shape BatchB(SB.begin(), SB.end() - std::min<size_t>(RB, 2));
  Shape Batch;
  if (broadcastShapes(BatchA, BatchB, Batch) != Tri::True)
    return Tri::Unknown;
  SymSize N = RA > 1 ? SA[RA - 2] : SymSize(1);
  SymSize K2 = RB >= 2 ? SB[RB - 2] : SB[0];
  std::optional<SymSize> Copy =
      Operand == 0 ? batchReshapeCopy(A, /*Left=*/true, Batch, {N, SA.back()})
                   : batchReshapeCopy(B, /*Left=*/false, Batch, {K2, SB.back()});
  if (!Copy)
    return Tri::Unknown;
  return Copy->identical(0) ? Tri::False : Tri::True;
}

// mm (LinearAlgebra.cpp): 2-D @ 2-D, a fresh contiguous [n, p].
OpOutcome mm(const TensorValue &A, const TensorValue &B) {
  if (auto T = sameDTypeOrThrow(A, B, "mm"))
    return *T;
  if (!A.Sizes || !B.Sizes)
    return unknownCopy(shapeReason(A.Sizes ? B : A), A.Type, A.Dev);
  const Shape &SA = *A.Sizes, &SB = *B.Sizes;
  if (SA.size() != 2)
    return throws("self must be a matrix");
  if (SB.size() != 2)
    return throws("mat2 must be a matrix");
  Tri Inner = requireEq(SA[1], SB[0]);
  if (Inner == Tri::Unknown)
    return unknownCopy(undecided("==", SA[1], SB[0]), A.Type, A.Dev);
  if (Inner == Tri::False)
    return throws("mat1 and mat2 shapes cannot be multiplied (" +
                  sizeText(SA[0]) + "x" + sizeText(SA[1]) + " and " +
                  sizeText(SB[0]) + "x" + sizeText(SB[1]) + ")");
  TensorValue DT;
  commonDType({&A, &B}, DT);
  OpOutcome Out = freshContiguous({SA[0], SB[1]}, DT.Type, A.Dev, DT.TypeOf);
  Out.ReadBytes = sumBytes({&A, &B});
  gemmScratch(Out);
  return Out;
}

// bmm (LinearAlgebra.cpp): [b, n, m] @ [b, m, p], contiguous.
OpOutcome bmm(const TensorValue &A, const TensorValue &B) {
  if (auto T = sameDTypeOrThrow(A, B, "bmm"))
    return *T;
  if (!A.Sizes || !B.Sizes)
    return unknownCopy(shapeReason(A.Sizes ? B : A), A.Type, A.Dev);
  const Shape &SA = *A.Sizes, &SB = *B.Sizes;
  if (SA.size() != 3)
    return throws("batch1 must be a 3D tensor");
  if (SB.size() != 3)
    return throws("batch2 must be a 3D tensor");
  Tri Match = triAnd(requireEq(SA[0], SB[0]), requireEq(SA[2], SB[1]));
  if (Match == Tri::Unknown)
    return unknownCopy("whether the batch sizes " + dimsText(SA) + " and " +
                           dimsText(SB) + " match is not decidable",
                       A.Type, A.Dev);
  if (Match == Tri::False)
    return throws("Expected size for first two dimensions of batch2 tensor to "
                  "be: [" + sizeText(SA[0]) + ", " + sizeText(SA[2]) +
                  "] but got: [" + sizeText(SB[0]) + ", " + sizeText(SB[1]) +
                  "].");
  TensorValue DT;
  commonDType({&A, &B}, DT);
  OpOutcome Out = freshContiguous({SA[0], SA[1], SB[2]}, DT.Type, A.Dev, DT.TypeOf);
  Out.ReadBytes = sumBytes({&A, &B});
  gemmScratch(Out);
  return Out;
}

// linear (native/Linear.cpp): 2-D input with bias -> addmm; 3-D contiguous
// input with bias -> addmm on a view; otherwise matmul(input, weight.t())
// and add_(bias). Every path gives a fresh contiguous output.
OpOutcome linear(const TensorValue &In, const TensorValue &Weight,
                 const TensorValue *Bias, const TorchVersion &Version) {
  if (Weight.Sizes && Weight.Sizes->size() != 2)
    return unknownCopy("linear with a weight that is not 2-D is not modelled",
                       In.Type, In.Dev);
  OpOutcome WT = matrixTranspose(Weight);
  if (WT.Kind == OpKind::Throws)
    return WT;
  bool Fused = false;
  if (Bias && In.Sizes && In.Strides) {
    size_t Rank = In.Sizes->size();
    Tri Contiguous = Rank == 3 ? isContiguous(*In.Sizes, *In.Strides) : Tri::False;
    if (Rank == 3 && Contiguous == Tri::Unknown)
      return unknownCopy("whether linear's 3-D input is contiguous is not "
                         "decidable", In.Type, In.Dev);
    Fused = Rank == 2 || Contiguous == Tri::True;
  }
  OpOutcome Out;
  if (Fused) {
    Out = matmul(In, WT.Value, Version);
    Out.TransientBytes = SymSize(0); // addmm on (a view of) the input: no fold copy
  } else {
    Out = matmul(In, WT.Value, Version);
  }
  if (Out.Kind == OpKind::Throws)
    return Out;
  Shape WithBias;
  Tri BiasFits = Bias && Out.Value.Sizes && Bias->Sizes
                     ? broadcastShapes(*Out.Value.Sizes, *Bias->Sizes, WithBias)
                     : Tri::True;
  if (BiasFits == Tri::Unknown)
    return unknownCopy("whether linear's bias broadcasts to the output is not "
                       "decidable", Out.Value.Type, Out.Value.Dev);
  if (BiasFits == Tri::False)
    return throws("linear: bias of shape " + dimsText(*Bias->Sizes) +
                  " does not broadcast to the output " +
                  dimsText(*Out.Value.Sizes));
  if (Bias && Bias->Type && Out.Value.Type && *Bias->Type != *Out.Value.Type)
    return unknownCopy("linear with a bias of another dtype is not modelled",
                       Out.Value.Type, Out.Value.Dev);
  if (Bias) {
    Out.ReadBytes = addSizes(Out.ReadBytes, Bias->logicalBytes());
  }
  Out.Note = Fused ? "linear with bias: addmm into a fresh output"
                   : Out.Note;
  gemmScratch(Out);
  return Out;
}

Tri linearCopiesInput(const TensorValue &In, const TensorValue &Weight,
                      bool HasBias, const TorchVersion &Version) {
  if (!In.Sizes || !In.Strides || !Weight.Sizes || Weight.Sizes->size() != 2)
    return Tri::Unknown;
  size_t Rank = In.Sizes->size();
  // The fused paths (linear() above): addmm on the input or on a view of it.
  if (HasBias && Rank == 2)
    return Tri::False;
  if (HasBias && Rank == 3) {
    Tri Contiguous = isContiguous(*In.Sizes, *In.Strides);
    if (Contiguous != Tri::False)
      return Contiguous == Tri::True ? Tri::False : Tri::Unknown;
  }
  OpOutcome WT = matrixTranspose(Weight);
  if (WT.Kind == OpKind::Throws)
    return Tri::Unknown;
  return matmulCopiesOperand(In, WT.Value, 0, Version);
}

} // namespace tma

// ---- Rules (OpTable.def) ------------------------------------------------------------

namespace tma {

using namespace detail;

RuleResult rule_matmul(const OpCall &C) {
  return one(matmul(C.self().TV, C.arg(1).TV, C.Version));
}

RuleResult rule_mm(const OpCall &C) { return one(mm(C.self().TV, C.arg(1).TV)); }

RuleResult rule_bmm(const OpCall &C) { return one(bmm(C.self().TV, C.arg(1).TV)); }

// at::linear(input, weight, bias = {}) and
// torch::nn::functional::linear(input, weight, bias = {}).
RuleResult rule_linear(const OpCall &C) {
  const ArgValue &Bias = C.arg(2);
  if (Bias.K == ArgValue::Kind::Unknown)
    return notModelledOnAll(C, "bias could not be derived");
  return one(linear(C.arg(0).TV, C.arg(1).TV,
                    Bias.K == ArgValue::Kind::Tensor ? &Bias.TV : nullptr,
                    C.Version));
}

// outer (LinearAlgebra.cpp): both operands must be 1-D (check_1d), then
// `self.reshape({self.size(0), 1}) * vec2`. The reshape of a 1-D tensor is
// always a view, so the result is mul's: a fresh (n, m) tensor of the
// promoted dtype, laid out by TensorIterator.
RuleResult rule_outer(const OpCall &C) {
  const TensorValue &Self = C.self().TV, &Vec2 = C.arg(1).TV;
  const std::pair<const TensorValue *, const char *> Operands[] = {
      {&Self, "self"}, {&Vec2, "vec2"}};
  for (const auto &[T, Name] : Operands) {
    auto Rank = T->rank();
    if (!Rank)
      return notModelled(C, shapeReason(*T));
    if (*Rank != 1)
      return one(throws(std::string("outer: Expected 1-D argument ") + Name +
                        ", but got " + std::to_string(*Rank) + "-D"));
  }
  TensorValue Column = Self;
  Column.Sizes = Shape{(*Self.Sizes)[0], SymSize(1)};
  if (Self.Strides)
    Column.Strides = Shape{(*Self.Strides)[0], (*Self.Strides)[0]};
  return one(elementwise("mul", {ElemOperand::tensor(Column),
                                 ElemOperand::tensor(Vec2)},
                         ElemDType::Promote));
}

} // namespace tma
