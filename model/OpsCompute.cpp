// Rules for the ops that compute a new tensor from their inputs: matrix
// products, gathers, concatenation, TensorIterator (elementwise) ops,
// reductions and softmax, and the in-place ops that write into an input.
//
// Traffic accounting, the same for every rule here:
// - ReadBytes counts each input tensor's logical bytes (numel * itemsize)
//   once, even when broadcasting makes the kernel revisit elements; C++
//   scalars count nothing. Index tensors count their own bytes.
// - WrittenBytes counts the output's logical bytes once.
// - TransientBytes counts storages an op allocates and frees inside itself
//   (matmul's folding copy; on CPU, TensorIterator's promoted copies of
//   inputs whose dtype differs from the common dtype).
#include "model/Ops.h"
#include "model/OpsDetail.h"

#include <algorithm>

namespace tma {

using namespace detail;

namespace {

std::optional<int64_t> sumBytes(const std::vector<const TensorValue *> &Ins) {
  std::optional<int64_t> Total = 0;
  for (const TensorValue *T : Ins) {
    auto B = T->logicalBytes();
    if (!B || !Total)
      return std::nullopt;
    Total = checkedAdd(*Total, *B);
  }
  return Total;
}

/// A fresh contiguous output of Sizes; Type/Dev may be unknown.
OpOutcome freshContiguous(const Dims &Sizes, std::optional<DType> Type,
                          std::optional<Device> Dev) {
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  Out.Value.Sizes = Sizes;
  Out.Value.Strides = contiguousStrides(Sizes);
  Out.Value.Offset = 0;
  Out.Value.Type = Type;
  Out.Value.Dev = Dev;
  if (!Type)
    Out.Value.markUnknown("dtype of an input is unknown");
  if (!Dev)
    Out.Value.markUnknown("device of an input is unknown");
  Out.WrittenBytes = Out.Value.logicalBytes();
  return Out;
}

/// An output whose shape cannot be derived: a copy of unknown size.
OpOutcome unknownCopy(const std::string &Reason, std::optional<DType> Type,
                      std::optional<Device> Dev) {
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  Out.Value.Type = Type;
  Out.Value.Dev = Dev;
  Out.Value.markUnknown(Reason);
  return Out;
}

std::string shapeReason(const TensorValue &T) {
  return T.UnknownReason.empty() ? "shape of an input is unknown"
                                 : T.UnknownReason;
}

/// Both dtypes known and equal, as the BLAS-backed ops require.
std::optional<OpOutcome> sameDTypeOrThrow(const TensorValue &A,
                                          const TensorValue &B,
                                          const char *Op) {
  if (A.Type && B.Type && *A.Type != *B.Type)
    return throws(std::string(Op) + ": expected mat1 and mat2 to have the same "
                  "dtype, but got: " + dtypeName(*A.Type) + " != " +
                  dtypeName(*B.Type));
  return std::nullopt;
}

bool canCast(DType From, DType To) {
  // c10::canCast: no complex -> real, no floating -> integral, no
  // non-bool -> bool.
  if (isComplex(From) && !isComplex(To))
    return false;
  if (isFloating(From) && isIntegral(To, true))
    return false;
  if (From != DType::Bool && To == DType::Bool)
    return false;
  return true;
}

} // namespace

// mm (LinearAlgebra.cpp): 2-D @ 2-D, a fresh contiguous [n, p].
OpOutcome mm(const TensorValue &A, const TensorValue &B) {
  if (auto T = sameDTypeOrThrow(A, B, "mm"))
    return *T;
  if (!A.Sizes || !B.Sizes)
    return unknownCopy(shapeReason(A.Sizes ? B : A), A.Type, A.Dev);
  const Dims &SA = *A.Sizes, &SB = *B.Sizes;
  if (SA.size() != 2)
    return throws("self must be a matrix");
  if (SB.size() != 2)
    return throws("mat2 must be a matrix");
  if (SA[1] != SB[0])
    return throws("mat1 and mat2 shapes cannot be multiplied (" +
                  std::to_string(SA[0]) + "x" + std::to_string(SA[1]) +
                  " and " + std::to_string(SB[0]) + "x" +
                  std::to_string(SB[1]) + ")");
  OpOutcome Out = freshContiguous({SA[0], SB[1]}, A.Type, A.Dev);
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
  const Dims &SA = *A.Sizes, &SB = *B.Sizes;
  if (SA.size() != 3)
    return throws("batch1 must be a 3D tensor");
  if (SB.size() != 3)
    return throws("batch2 must be a 3D tensor");
  if (SA[0] != SB[0] || SA[2] != SB[1])
    return throws("Expected size for first two dimensions of batch2 tensor to "
                  "be: [" + std::to_string(SA[0]) + ", " +
                  std::to_string(SA[2]) + "] but got: [" +
                  std::to_string(SB[0]) + ", " + std::to_string(SB[1]) + "].");
  OpOutcome Out = freshContiguous({SA[0], SA[1], SB[2]}, A.Type, A.Dev);
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
    Fused = Rank == 2 || (Rank == 3 && isContiguous(*In.Sizes, *In.Strides));
  }
  OpOutcome Out;
  if (Fused) {
    Out = matmul(In, WT.Value, Version);
    Out.TransientBytes = 0; // addmm on (a view of) the input: no fold copy
  } else {
    Out = matmul(In, WT.Value, Version);
  }
  if (Out.Kind == OpKind::Throws)
    return Out;
  if (Bias && Out.Value.Sizes && Bias->Sizes &&
      !broadcastShapes(*Out.Value.Sizes, *Bias->Sizes))
    return throws("linear: bias of shape " + dimsText(*Bias->Sizes) +
                  " does not broadcast to the output " +
                  dimsText(*Out.Value.Sizes));
  if (Bias && Bias->Type && Out.Value.Type && *Bias->Type != *Out.Value.Type)
    return unknownCopy("linear with a bias of another dtype is not modelled",
                       Out.Value.Type, Out.Value.Dev);
  if (Bias) {
    if (auto R = Out.ReadBytes) {
      auto BB = Bias->logicalBytes();
      Out.ReadBytes = BB ? checkedAdd(*R, *BB) : std::nullopt;
    }
  }
  Out.Note = Fused ? "linear with bias: addmm into a fresh output"
                   : Out.Note;
  gemmScratch(Out);
  return Out;
}

// index_select (TensorAdvancedIndexing.cpp): the dim takes the index's
// length; a fresh contiguous output.
OpOutcome indexSelect(const TensorValue &In, int64_t Dim,
                      const TensorValue &Index) {
  if (Index.Type && *Index.Type != DType::Int64 && *Index.Type != DType::Int32)
    return throws("index_select(): Expected dtype int32 or int64 for index");
  if (!In.Sizes || !Index.Sizes)
    return unknownCopy(shapeReason(In.Sizes ? Index : In), In.Type, In.Dev);
  if (Index.Sizes->size() > 1)
    return throws("index_select(): Index is supposed to be a vector");
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return unknownCopy("index_select of a 0-dim tensor is not modelled",
                       In.Type, In.Dev);
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return throws(rangeError(Rank));
  Dims Sizes = *In.Sizes;
  Sizes[*D] = numel(*Index.Sizes);
  OpOutcome Out = freshContiguous(Sizes, In.Type, In.Dev);
  // Each selected slice is read once, plus the index itself.
  auto IB = Index.logicalBytes();
  if (Out.WrittenBytes && IB)
    Out.ReadBytes = checkedAdd(*Out.WrittenBytes, *IB);
  return Out;
}

// embedding (native/Embedding.cpp): weight.index_select(0,
// indices.reshape(-1)).view(indices.sizes() + [dim]). The reshape copies a
// non-viewable index tensor (a transient).
OpOutcome embedding(const TensorValue &Weight, const TensorValue &Indices) {
  if (Indices.Type && *Indices.Type != DType::Int64 &&
      *Indices.Type != DType::Int32)
    return throws("Expected tensor for argument #1 'indices' to have one of "
                  "the following scalar types: Long, Int");
  if (!Weight.Sizes || !Indices.Sizes)
    return unknownCopy(shapeReason(Weight.Sizes ? Indices : Weight),
                       Weight.Type, Weight.Dev);
  if (Weight.Sizes->size() != 2)
    return throws("'weight' must be 2-D");
  Dims Sizes = *Indices.Sizes;
  Sizes.push_back((*Weight.Sizes)[1]);
  OpOutcome Out = freshContiguous(Sizes, Weight.Type, Weight.Dev);
  Out.TransientBytes = 0;
  if (Indices.Strides && Indices.Type &&
      !computeStride(*Indices.Sizes, *Indices.Strides,
                     {numel(*Indices.Sizes)}))
    Out.TransientBytes = denseBytes(*Indices.Sizes, *Indices.Type);
  else if (!Indices.Strides)
    Out.TransientBytes.reset();
  auto IB = Indices.logicalBytes();
  if (Out.WrittenBytes && IB)
    Out.ReadBytes = checkedAdd(*Out.WrittenBytes, *IB);
  return Out;
}

// gather (TensorAdvancedIndexing.cpp): output of the index's shape, fresh
// and contiguous.
OpOutcome gather(const TensorValue &In, int64_t Dim, const TensorValue &Index) {
  if (Index.Type && *Index.Type != DType::Int64)
    return throws("gather(): Expected dtype int64 for index");
  if (!In.Sizes || !Index.Sizes)
    return unknownCopy(shapeReason(In.Sizes ? Index : In), In.Type, In.Dev);
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (!wrapDim(Dim, Rank))
    return throws(rangeError(Rank));
  if (static_cast<int64_t>(Index.Sizes->size()) != std::max<int64_t>(Rank, 1) &&
      !(Rank == 0 && Index.Sizes->empty()))
    return throws("Index tensor must have the same number of dimensions as "
                  "input tensor");
  OpOutcome Out = freshContiguous(*Index.Sizes, In.Type, In.Dev);
  auto IB = Index.logicalBytes();
  if (Out.WrittenBytes && IB)
    Out.ReadBytes = checkedAdd(*Out.WrittenBytes, *IB);
  return Out;
}

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
  std::vector<const TensorValue *> Used;
  for (const TensorValue &T : Ins) {
    if (!T.Sizes || !T.Strides)
      return unknownCopy(shapeReason(T), Type, Dev);
    if (T.Sizes->size() == 1 && (*T.Sizes)[0] == 0)
      continue; // skipped
    if (T.Sizes->empty())
      return throws("zero-dimensional tensor cannot be concatenated");
    Used.push_back(&T);
  }
  if (Used.empty()) {
    OpOutcome Out = freshContiguous({0}, Type, Dev);
    Out.ReadBytes = 0;
    return Out;
  }
  const Dims &First = *Used.front()->Sizes;
  int64_t Rank = static_cast<int64_t>(First.size());
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return throws(rangeError(Rank));
  Dims Sizes = First;
  Sizes[*D] = 0;
  bool AllChannelsLast = Rank == 4;
  for (const TensorValue *T : Used) {
    const Dims &S = *T->Sizes;
    if (static_cast<int64_t>(S.size()) != Rank)
      return throws("Tensors must have same number of dimensions: got " +
                    std::to_string(Rank) + " and " + std::to_string(S.size()));
    for (int64_t K = 0; K < Rank; ++K)
      if (K != *D && S[K] != First[K])
        return throws("Sizes of tensors must match except in dimension " +
                      std::to_string(*D) + ". Expected size " +
                      std::to_string(First[K]) + " but got size " +
                      std::to_string(S[K]) + " for tensor number 1 in the "
                      "list.");
    Sizes[*D] += S[*D];
    AllChannelsLast &= suggestsChannelsLast(S, *T->Strides);
  }
  OpOutcome Out = freshContiguous(Sizes, Type, Dev);
  if (AllChannelsLast)
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
    if (*T.Sizes != *Ins.front().Sizes)
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
      if (!isContiguous(*T.Sizes, *T.Strides))
        return unknownCopy("stack of non-contiguous inputs into a 5-D output "
                           "is not modelled",
                           T.Type, T.Dev);
  return cat(Unsqueezed, Dim);
}

// repeat (TensorShape.cpp): sizes multiplied by the repeats (padded with
// leading 1s); a fresh contiguous output.
OpOutcome repeat(const TensorValue &In, const Dims &Repeats) {
  if (!In.Sizes)
    return unknownCopy(shapeReason(In), In.Type, In.Dev);
  if (Repeats.size() < In.Sizes->size())
    return throws("Number of dimensions of repeat dims can not be smaller "
                  "than number of dimensions of tensor");
  for (int64_t R : Repeats)
    if (R < 0)
      return throws("Trying to create tensor with negative dimension " +
                    std::to_string(R) + ": " + dimsText(Repeats));
  Dims Sizes = Repeats;
  size_t Off = Repeats.size() - In.Sizes->size();
  for (size_t K = 0; K < In.Sizes->size(); ++K)
    Sizes[Off + K] *= (*In.Sizes)[K];
  OpOutcome Out = freshContiguous(Sizes, In.Type, In.Dev);
  Out.ReadBytes = In.logicalBytes();
  return Out;
}

// ---- TensorIterator ops --------------------------------------------------------

// at::native::result_type (TypeProperties.cpp): dimensioned tensors, zero-dim
// tensors and wrapped numbers are promoted separately and then combined so
// that a lower group only wins with a higher category. A wrapped floating
// number counts as the default dtype (float32), a complex one as
// complex64.
std::optional<DType> resultType(const std::vector<ElemOperand> &Ops) {
  std::optional<DType> DimR, ZeroR, WrapR;
  auto Add = [](std::optional<DType> &Acc, DType T) {
    Acc = Acc ? promoteTypes(*Acc, T) : T;
  };
  for (const ElemOperand &O : Ops) {
    if (O.IsScalar) {
      if (!O.ScalarType)
        return std::nullopt;
      DType T = *O.ScalarType;
      if (isComplex(T))
        T = DType::Complex64;
      else if (isFloating(T))
        T = DType::Float32;
      Add(WrapR, T);
      continue;
    }
    if (!O.T.Type || !O.T.Sizes)
      return std::nullopt;
    Add(O.T.Sizes->empty() ? ZeroR : DimR, *O.T.Type);
  }
  // combine_categories(higher, lower).
  auto Combine = [](std::optional<DType> Higher,
                    std::optional<DType> Lower) -> std::optional<DType> {
    if (!Higher)
      return Lower;
    if (!Lower)
      return Higher;
    if (isComplex(*Higher))
      return Higher;
    if (isComplex(*Lower))
      return isFloating(*Higher) ? toComplex(*Higher) : *Lower;
    if (isFloating(*Higher))
      return Higher;
    if (*Higher == DType::Bool || isFloating(*Lower))
      return promoteTypes(*Higher, *Lower);
    return Higher;
  };
  return Combine(DimR, Combine(ZeroR, WrapR));
}

OpOutcome elementwise(const std::string &Op,
                      const std::vector<ElemOperand> &Ops, ElemDType Rule) {
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  std::optional<Device> Dev;
  for (const ElemOperand &O : Ops)
    if (!O.IsScalar) {
      Dev = O.T.Dev;
      break;
    }
  Out.Value.Dev = Dev;
  // An unknown operand's own reason explains the most.
  for (const ElemOperand &O : Ops)
    if (!O.IsScalar && !O.T.UnknownReason.empty())
      Out.Value.markUnknown(O.T.UnknownReason);
  if (!Dev)
    Out.Value.markUnknown("device of an input is unknown");
  // The common dtype, then what the op makes of it.
  std::optional<DType> Common = resultType(Ops);
  std::optional<DType> Type = Common;
  if (Common) {
    switch (Rule) {
    case ElemDType::Promote:
      break;
    case ElemDType::FloatPromote:
      if (isIntegral(*Common, true))
        Type = DType::Float32;
      break;
    case ElemDType::Bool:
      Type = DType::Bool;
      break;
    case ElemDType::FloatOnly:
      if (!isFloating(*Common)) {
        OpOutcome U = unknownCopy("'" + Op + "' of a " + dtypeName(*Common) +
                                      " tensor is not modelled",
                                  std::nullopt, Dev);
        return U;
      }
      break;
    }
  } else {
    Out.Value.markUnknown("dtype of an operand is unknown");
  }
  Out.Value.Type = Type;
  // The broadcast shape and TensorIterator's output layout.
  std::optional<Dims> Shape = Dims{};
  std::vector<IterOperand> Iter;
  std::vector<const TensorValue *> Tensors;
  for (const ElemOperand &O : Ops) {
    if (O.IsScalar) {
      Iter.push_back({Dims{}, Dims{}});
      continue;
    }
    Tensors.push_back(&O.T);
    if (!O.T.Sizes || !O.T.Strides) {
      Out.Value.markUnknown(shapeReason(O.T));
      Shape.reset();
      continue;
    }
    if (Shape) {
      Shape = broadcastShapes(*Shape, *O.T.Sizes);
      if (!Shape)
        return throws("The size of tensor a must match the size of tensor b "
                      "at a non-singleton dimension (" + Op + ": shapes do "
                      "not broadcast)");
    }
    Iter.push_back({*O.T.Sizes, *O.T.Strides});
  }
  if (Shape) {
    Out.Value.Sizes = *Shape;
    Out.Value.Strides = tensorIteratorOutputStrides(*Shape, Iter);
    Out.Value.Offset = 0;
  }
  Out.ReadBytes = sumBytes(Tensors);
  Out.WrittenBytes = Out.Value.logicalBytes();
  // On CPU, TensorIterator converts an input whose dtype differs from the
  // common dtype into a temporary first (compute_types).
  if (Dev && Dev->Kind == DeviceKind::CPU && Common) {
    std::optional<int64_t> Transient = 0;
    for (const TensorValue *T : Tensors)
      if (T->Type && *T->Type != *Common && T->Sizes) {
        auto B = denseBytes(*T->Sizes, *Common);
        Transient = Transient && B ? checkedAdd(*Transient, *B) : std::nullopt;
      }
    Out.TransientBytes = Transient;
  }
  return Out;
}

OpOutcome reverseScalarOp(const std::string &Op, const ElemOperand &Scalar,
                          const TensorValue &T, bool TrueDivide) {
  OpOutcome Out = likeFactory(T, std::nullopt, std::nullopt,
                              MemoryFormat::Preserve, FillKind::Filled);
  if (Out.Kind == OpKind::Throws)
    return Out;
  Out.Kind = OpKind::Copy;
  std::optional<DType> Common =
      resultType({ElemOperand::tensor(T), Scalar});
  if (Common && TrueDivide && isIntegral(*Common, true))
    Common = DType::Float32;
  if (Common && T.Type && !canCast(*Common, *T.Type))
    return throws(std::string("result type ") + dtypeName(*Common) +
                  " can't be cast to the desired output type " +
                  dtypeName(*T.Type));
  if (!Common)
    Out.Value.markUnknown("dtype of an operand is unknown");
  // empty_like + fill_ writes the output once, the in-place op reads it
  // and the tensor and writes it again.
  auto N = Out.Value.logicalBytes();
  auto TB = T.logicalBytes();
  Out.WrittenBytes = N ? checkedMul(2, *N) : std::nullopt;
  Out.ReadBytes = N && TB ? checkedAdd(*N, *TB) : std::nullopt;
  Out.Note = "scalar " + Op + " tensor: empty_like(tensor).fill_(scalar)." +
             Op + "_(tensor), so the result keeps the tensor's dtype";
  return Out;
}

OpOutcome inPlace(const std::string &Op, const TensorValue &Self,
                  const std::vector<ElemOperand> &Others, ElemDType ResultRule,
                  bool ReadsSelf) {
  OpOutcome Out;
  Out.Kind = OpKind::InPlace;
  Out.Value = Self;
  Out.Note = "in-place: returns self";
  if (Self.Sizes && Self.Strides) {
    // An expanded (internally overlapping) self cannot be written in place
    // by most ops; which ones check is not modelled.
    for (size_t K = 0; K < Self.Sizes->size(); ++K)
      if ((*Self.Strides)[K] == 0 && (*Self.Sizes)[K] > 1) {
        OpOutcome U;
        U.Kind = OpKind::Unknown;
        U.Value.markUnknown("in-place '" + Op + "' on a tensor whose elements "
                            "overlap is not modelled");
        return U;
      }
  }
  for (const ElemOperand &O : Others) {
    if (O.IsScalar || !O.T.Sizes || !Self.Sizes)
      continue;
    auto B = broadcastShapes(*Self.Sizes, *O.T.Sizes);
    if (!B || *B != *Self.Sizes)
      return throws("output with shape " + dimsText(*Self.Sizes) +
                    " doesn't match the broadcast shape " +
                    (B ? dimsText(*B) : std::string("(none)")));
  }
  if (ResultRule != ElemDType::Bool && Self.Type) {
    std::vector<ElemOperand> All = {ElemOperand::tensor(Self)};
    All.insert(All.end(), Others.begin(), Others.end());
    std::optional<DType> Common = resultType(All);
    if (Common && ResultRule == ElemDType::FloatPromote &&
        isIntegral(*Common, true))
      Common = DType::Float32;
    if (Common && !canCast(*Common, *Self.Type))
      return throws(std::string("result type ") + dtypeName(*Common) +
                    " can't be cast to the desired output type " +
                    dtypeName(*Self.Type));
  }
  std::vector<const TensorValue *> Reads;
  if (ReadsSelf)
    Reads.push_back(&Self);
  for (const ElemOperand &O : Others)
    if (!O.IsScalar)
      Reads.push_back(&O.T);
  Out.ReadBytes = sumBytes(Reads);
  Out.WrittenBytes = Self.logicalBytes();
  return Out;
}

// ---- Reductions ------------------------------------------------------------------

// Structured reductions (ReduceOps.cpp, resize_reduction): the output is
// allocated directly in its final shape, contiguous, in 1.13.
OpOutcome reduce(const std::string &Op, const TensorValue &In,
                 const std::optional<Dims> &ReduceDims, bool KeepDim,
                 ReduceKind Kind, std::optional<DType> Type) {
  std::optional<DType> OutType = Type;
  if (!OutType && In.Type) {
    switch (Kind) {
    case ReduceKind::Sum:
      OutType = isIntegral(*In.Type, true) ? DType::Int64 : *In.Type;
      break;
    case ReduceKind::Mean:
      if (!isFloating(*In.Type) && !isComplex(*In.Type))
        return throws("mean(): could not infer output dtype. Input dtype must "
                      "be either a floating point or complex dtype. Got: " +
                      std::string(dtypeName(*In.Type)));
      OutType = *In.Type;
      break;
    case ReduceKind::Same:
      OutType = *In.Type;
      break;
    case ReduceKind::Index:
      OutType = DType::Int64;
      break;
    }
  }
  if (Kind == ReduceKind::Index)
    OutType = DType::Int64;
  if (!In.Sizes)
    return unknownCopy(shapeReason(In), OutType, In.Dev);
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  std::vector<bool> Reduced(Rank, false);
  if (!ReduceDims || ReduceDims->empty()) {
    std::fill(Reduced.begin(), Reduced.end(), true);
  } else {
    for (int64_t D : *ReduceDims) {
      auto W = wrapDim(D, Rank);
      if (!W)
        return throws(rangeError(Rank));
      if (Reduced[*W] && Rank > 0)
        return throws("dim " + std::to_string(*W) +
                      " appears multiple times in the list of dims");
      if (Rank > 0)
        Reduced[*W] = true;
    }
  }
  if ((Kind == ReduceKind::Same || Kind == ReduceKind::Index) &&
      numel(*In.Sizes) == 0)
    return unknownCopy("'" + Op + "' of an empty tensor is not modelled",
                       OutType, In.Dev);
  Dims Sizes;
  for (int64_t K = 0; K < Rank; ++K) {
    if (!Reduced[K])
      Sizes.push_back((*In.Sizes)[K]);
    else if (KeepDim)
      Sizes.push_back(1);
  }
  OpOutcome Out = freshContiguous(Sizes, OutType, In.Dev);
  Out.ReadBytes = In.logicalBytes();
  // make_reduction_from_out_ty (ReduceOps.cpp): a sum, prod or mean whose
  // output dtype differs from the input's reads self.to(out dtype), a full
  // copy made and freed inside the op; on CUDA, float16/bfloat16 summed
  // into float32 is read as it is. (mean on the CPU is sum_out(dtype) then
  // div_, the same copy.)
  if ((Kind == ReduceKind::Sum || Kind == ReduceKind::Mean) && In.Type &&
      OutType && *In.Type != *OutType) {
    bool LowPrecisionToFloatOnCuda =
        In.Dev && In.Dev->Kind == DeviceKind::CUDA &&
        (*In.Type == DType::Float16 || *In.Type == DType::BFloat16) &&
        *OutType == DType::Float32;
    if (!In.Dev)
      Out.TransientBytes.reset();
    else if (!LowPrecisionToFloatOnCuda)
      Out.TransientBytes = denseBytes(*In.Sizes, *OutType);
  } else if ((Kind == ReduceKind::Sum || Kind == ReduceKind::Mean) &&
             (!In.Type || !OutType)) {
    Out.TransientBytes.reset();
  }
  return Out;
}

// max.dim / min.dim (ReduceOps.cpp, resize_reduction_with_indices): values
// of the input's dtype and int64 indices, each fresh and contiguous in the
// reduced shape. The op reads its input once: the read is counted on the
// values.
std::vector<OpOutcome> reduceWithIndices(const std::string &Op,
                                         const TensorValue &In, int64_t Dim,
                                         bool KeepDim) {
  OpOutcome Values = reduce(Op, In, Dims{Dim}, KeepDim, ReduceKind::Same,
                            std::nullopt);
  if (Values.Kind == OpKind::Throws)
    return {Values};
  OpOutcome Indices = reduce(Op, In, Dims{Dim}, KeepDim, ReduceKind::Index,
                             std::nullopt);
  Indices.ReadBytes = 0;
  return {Values, Indices};
}

// cumsum (ReduceOps.cpp, meta_func_cum_ops + impl_func_cum_ops): the
// output is fresh and contiguous with the input's shape, of dtype= or, for
// an integral or bool input, int64. The kernel runs on self.to(out dtype),
// a copy freed inside the op when the dtypes differ (not for 0-dim or
// empty inputs, which are filled directly). LibTorch 1.13's CPU kernel
// has no float16 ("cumsum_out_cpu" not implemented for 'Half'); later
// releases changed which reduced-precision types it takes, so those are
// left unknown there.
OpOutcome cumsum(const TensorValue &In, int64_t Dim, std::optional<DType> Type,
                 const TorchVersion &Version) {
  std::optional<DType> OutType = Type;
  if (!OutType && In.Type)
    OutType = isIntegral(*In.Type, true) ? DType::Int64 : *In.Type;
  if (!In.Sizes)
    return unknownCopy(shapeReason(In), OutType, In.Dev);
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (!wrapDim(Dim, Rank))
    return throws(rangeError(Rank));
  bool Direct = Rank == 0 || numel(*In.Sizes) == 0;
  if (!Direct && OutType &&
      (*OutType == DType::Float16 || *OutType == DType::BFloat16)) {
    if (!In.Dev)
      return unknownCopy("device of the input is unknown", OutType, In.Dev);
    if (In.Dev->Kind == DeviceKind::CPU) {
      if (!Version.atLeast(2, 0) && *OutType == DType::Float16)
        return throws("\"cumsum_out_cpu\" not implemented for 'Half'");
      return unknownCopy("cumsum of " + std::string(dtypeName(*OutType)) +
                             " on the CPU is not modelled for this LibTorch",
                         OutType, In.Dev);
    }
  }
  OpOutcome Out = freshContiguous(*In.Sizes, OutType, In.Dev);
  Out.ReadBytes = In.logicalBytes();
  if (!Direct && In.Type && OutType && *In.Type != *OutType)
    Out.TransientBytes = denseBytes(*In.Sizes, *OutType);
  else if (!Direct && (!In.Type || !OutType))
    Out.TransientBytes.reset();
  return Out;
}

// softmax / log_softmax (SoftMax.cpp): a fresh contiguous output; dtype=
// casts the input first.
OpOutcome softmax(const std::string &Op, const TensorValue &In, int64_t Dim,
                  std::optional<DType> Type) {
  std::optional<DType> OutType = Type ? Type : In.Type;
  if (OutType && !isFloating(*OutType))
    return unknownCopy("'" + Op + "' of a " + std::string(dtypeName(*OutType)) +
                           " tensor is not modelled",
                       OutType, In.Dev);
  if (!In.Sizes)
    return unknownCopy(shapeReason(In), OutType, In.Dev);
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (!wrapDim(Dim, Rank))
    return throws(rangeError(Rank));
  OpOutcome Out = freshContiguous(*In.Sizes, OutType, In.Dev);
  Out.ReadBytes = In.logicalBytes();
  if (Type && In.Type && *Type != *In.Type)
    Out.TransientBytes = denseBytes(*In.Sizes, *Type);
  return Out;
}

} // namespace tma
