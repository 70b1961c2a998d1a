// Op rules. Each rule follows the ATen function named in its comment; see
// ../shared/design/aten-rules.md for the sources. The shape of every rule:
//   1. derive what can be derived from what is known,
//   2. say view / self / copy / throws,
//   3. count bytes read and written (views move nothing).
#include "model/Ops.h"
#include "model/OpsDetail.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace tma {

using namespace detail;

OpOutcome unmodelled(const std::string &Op) {
  OpOutcome Out;
  Out.Kind = OpKind::Unknown;
  Out.Value.markUnknown("'" + Op + "' is not modelled");
  return Out;
}

OpOutcome throws(const std::string &Message) {
  OpOutcome Out;
  Out.Kind = OpKind::Throws;
  Out.Error = Message;
  Out.Value.markUnknown("throws at run time: " + Message);
  return Out;
}

// LibTorch checks every geometry it creates: TensorImpl's
// safe_compute_numel for any tensor ("numel: integer multiplication
// overflow") and computeStorageNbytes for a new storage ("Storage size
// calculation overflowed"). A fresh tensor's storage is sized first, so an
// allocating op reports the storage error.
OpOutcome checkedOutcome(OpOutcome Out) {
  if (Out.Kind == OpKind::Throws || Out.Kind == OpKind::Unknown ||
      Out.Kind == OpKind::Use || !Out.Value.Sizes)
    return Out;
  const Dims &Sizes = *Out.Value.Sizes;
  bool Allocates = Out.Kind == OpKind::Alloc || Out.Kind == OpKind::Copy;
  bool NumelFits = checkedNumel(Sizes).has_value();
  if (Allocates && Out.Value.Type) {
    auto Bytes = Out.Value.Strides
                     ? checkedStorageBytes(Sizes, *Out.Value.Strides,
                                           itemSize(*Out.Value.Type))
                     : denseBytes(Sizes, *Out.Value.Type);
    if (!NumelFits || !Bytes)
      return throws("Storage size calculation overflowed with sizes=" +
                    dimsText(Sizes));
  }
  if (!NumelFits)
    return throws(Allocates ? "Storage size calculation overflowed with sizes=" +
                                  dimsText(Sizes)
                            : "numel: integer multiplication overflow");
  return Out;
}

OpOutcome factory(const std::optional<Dims> &Sizes,
                  const std::optional<DType> &Type,
                  const std::optional<Device> &Dev, FillKind Fill) {
  OpOutcome Out;
  Out.Kind = OpKind::Alloc;
  Out.ReadBytes = 0;
  if (Sizes) {
    for (int64_t S : *Sizes)
      if (S < 0)
        return throws("Trying to create tensor with negative dimension " +
                      std::to_string(S) + ": " + dimsText(*Sizes));
    Out.Value.Sizes = *Sizes;
    Out.Value.Strides = contiguousStrides(*Sizes);
    Out.Value.Offset = 0;
  } else {
    Out.Value.markUnknown("shape argument could not be derived");
  }
  Out.Value.Type = Type;
  if (!Type)
    Out.Value.markUnknown("dtype argument could not be derived");
  Out.Value.Dev = Dev;
  if (!Dev)
    Out.Value.markUnknown("device argument could not be derived");
  if (Fill == FillKind::Uninitialized)
    Out.WrittenBytes = 0;
  else
    Out.WrittenBytes = Out.Value.logicalBytes();
  return Out;
}

// transpose (TensorShape.cpp): swaps sizes and strides.
OpOutcome transpose(const TensorValue &In, int64_t Dim0, int64_t Dim1) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  auto D0 = wrapDim(Dim0, Rank), D1 = wrapDim(Dim1, Rank);
  if (!D0 || !D1)
    return throws("Dimension out of range (expected to be in range of [" +
                  std::to_string(-std::max<int64_t>(Rank, 1)) + ", " +
                  std::to_string(std::max<int64_t>(Rank, 1) - 1) + "])");
  Out.Value.Sizes = In.Sizes;
  Out.Value.Strides = In.Strides;
  Out.Value.Offset = In.Offset;
  if (Rank > 0) {
    std::swap((*Out.Value.Sizes)[*D0], (*Out.Value.Sizes)[*D1]);
#ifndef TMA_PLANTED_WRONG_RULE
    std::swap((*Out.Value.Strides)[*D0], (*Out.Value.Strides)[*D1]);
#endif
    // TMA_PLANTED_WRONG_RULE: a deliberately wrong transpose (strides not
    // swapped) for the test that proves --verify catches a wrong rule.
  }
  return Out;
}

// Tensor::t (TensorShape.cpp): "t() expects a tensor with <= 2 dimensions".
OpOutcome matrixTranspose(const TensorValue &In) {
  if (In.Sizes && In.Sizes->size() > 2)
    return throws("t() expects a tensor with <= 2 dimensions, but self is " +
                  std::to_string(In.Sizes->size()) + "D");
  if (In.Sizes && In.Sizes->size() < 2) {
    OpOutcome Out = viewOf(In);
    if (needLayout(In, Out)) {
      Out.Value.Sizes = In.Sizes;
      Out.Value.Strides = In.Strides;
      Out.Value.Offset = In.Offset;
    }
    return Out;
  }
  return transpose(In, 0, 1);
}

OpOutcome permute(const TensorValue &In, const Dims &Order) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (static_cast<int64_t>(Order.size()) != Rank)
    return throws("permute(sparse_coo): number of dimensions in the tensor "
                  "input does not match the length of the desired ordering "
                  "of dimensions i.e. input.dim() = " +
                  std::to_string(Rank) +
                  " is not equal to len(dims) = " + std::to_string(Order.size()));
  Dims Sizes(Rank), Strides(Rank);
  std::vector<bool> Seen(Rank, false);
  for (int64_t I = 0; I < Rank; ++I) {
    auto D = wrapDim(Order[I], Rank);
    if (!D || Seen[*D])
      return throws("permute(): duplicate or out-of-range dims");
    Seen[*D] = true;
    Sizes[I] = (*In.Sizes)[*D];
    Strides[I] = (*In.Strides)[*D];
  }
  Out.Value.Sizes = Sizes;
  Out.Value.Strides = Strides;
  Out.Value.Offset = In.Offset;
  return Out;
}

// view_impl (TensorShape.cpp).
OpOutcome viewAs(const TensorValue &In, const Dims &Shape) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  auto Sizes = inferSize(Shape, numel(*In.Sizes));
  if (!Sizes)
    return throws("shape '" + dimsText(Shape) + "' is invalid for input of size " +
                  std::to_string(numel(*In.Sizes)));
  auto Strides = computeStride(*In.Sizes, *In.Strides, *Sizes);
  if (!Strides)
    return throws("view size is not compatible with input tensor's size and "
                  "stride (at least one dimension spans across two contiguous "
                  "subspaces). Use .reshape(...) instead.");
  Out.Value.Sizes = *Sizes;
  Out.Value.Strides = *Strides;
  Out.Value.Offset = In.Offset;
  return Out;
}

// select (TensorShape.cpp): drops the dim, offset += index * stride.
OpOutcome select(const TensorValue &In, int64_t Dim, int64_t Index) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return throws("select() cannot be applied to a 0-dim tensor.");
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return throws("Dimension out of range");
  int64_t Size = (*In.Sizes)[*D];
  if (Index < -Size || Index >= Size)
    return throws("index " + std::to_string(Index) +
                  " is out of bounds for dimension " + std::to_string(*D) +
                  " with size " + std::to_string(Size));
  if (Index < 0)
    Index += Size;
  Dims Sizes = *In.Sizes, Strides = *In.Strides;
  int64_t Offset = *In.Offset + Index * Strides[*D];
  Sizes.erase(Sizes.begin() + *D);
  Strides.erase(Strides.begin() + *D);
  Out.Value.Sizes = Sizes;
  Out.Value.Strides = Strides;
  Out.Value.Offset = Offset;
  return Out;
}

// slice (TensorShape.cpp): bounds wrap once and clamp; size = ceil(len/step).
OpOutcome slice(const TensorValue &In, int64_t Dim, std::optional<int64_t> Start,
                std::optional<int64_t> End, int64_t Step) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return throws("slice() cannot be applied to a 0-dim tensor.");
  if (Step <= 0)
    return throws("slice step must be positive");
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return throws("Dimension out of range");
  int64_t Size = (*In.Sizes)[*D];
  int64_t S = Start.value_or(0), E = End.value_or(INT64_MAX);
  if (S < 0)
    S += Size;
  if (E < 0)
    E += Size;
  if (S < 0)
    S = 0;
  else if (S >= Size)
    S = Size;
  if (E < S)
    E = S;
  else if (E >= Size)
    E = Size;
  Dims Sizes = *In.Sizes, Strides = *In.Strides;
  int64_t Offset = *In.Offset + S * Strides[*D];
  Sizes[*D] = (E - S + Step - 1) / Step;
  Strides[*D] *= Step;
  Out.Value.Sizes = Sizes;
  Out.Value.Strides = Strides;
  Out.Value.Offset = Offset;
  return Out;
}

// unsqueeze (TensorShape.cpp, inferUnsqueezeGeometry).
OpOutcome unsqueeze(const TensorValue &In, int64_t Dim) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  auto D = wrapDim(Dim, Rank + 1);
  if (!D)
    return throws("Dimension out of range");
  Dims Sizes = *In.Sizes, Strides = *In.Strides;
  int64_t NewStride =
      *D >= Rank ? 1 : Sizes[*D] * Strides[*D];
  Sizes.insert(Sizes.begin() + *D, 1);
  Strides.insert(Strides.begin() + *D, NewStride);
  Out.Value.Sizes = Sizes;
  Out.Value.Strides = Strides;
  Out.Value.Offset = In.Offset;
  return Out;
}

OpOutcome alias(const TensorValue &In) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  Out.Value.Sizes = In.Sizes;
  Out.Value.Strides = In.Strides;
  Out.Value.Offset = In.Offset;
  return Out;
}

// reshape (TensorShape.cpp): _reshape_alias when computeStride succeeds,
// otherwise _unsafe_view(clone(Contiguous)).
OpOutcome reshape(const TensorValue &In, const Dims &Shape) {
  if (!In.Sizes) {
    OpOutcome Out = unmodelled("reshape");
    Out.Value = TensorValue();
    Out.Value.Type = In.Type;
    Out.Value.Dev = In.Dev;
    Out.Value.markUnknown(In.UnknownReason.empty() ? "shape of the input is unknown"
                                                   : In.UnknownReason);
    return Out;
  }
  auto Sizes = inferSize(Shape, numel(*In.Sizes));
  if (!Sizes)
    return throws("shape '" + dimsText(Shape) + "' is invalid for input of size " +
                  std::to_string(numel(*In.Sizes)));
  if (!In.hasLayout()) {
    // The shape is known but whether it copies is not.
    OpOutcome Out;
    Out.Kind = OpKind::Unknown;
    Out.Value.Sizes = *Sizes;
    Out.Value.Type = In.Type;
    Out.Value.Dev = In.Dev;
    Out.Value.markUnknown(In.UnknownReason.empty()
                              ? "strides of the input are unknown, so whether "
                                "reshape copies is unknown"
                              : In.UnknownReason);
    return Out;
  }
  if (auto Strides = computeStride(*In.Sizes, *In.Strides, *Sizes)) {
    OpOutcome Out = viewOf(In);
    Out.Value.Sizes = *Sizes;
    Out.Value.Strides = *Strides;
    Out.Value.Offset = In.Offset;
    Out.Note = "viewable: returns an alias";
    return Out;
  }
  OpOutcome Out = copyOf(In, contiguousStrides(*Sizes), In.Type, In.Dev);
  Out.Value.Sizes = *Sizes;
  Out.Note = "input is not viewable as " + dimsText(*Sizes) +
             ": reshape copies into a contiguous tensor";
  return Out;
}

// contiguous (TensorProperties.cpp): self when is_contiguous(fmt), else
// clone(fmt).
OpOutcome contiguous(const TensorValue &In, MemoryFormat Fmt) {
  if (!In.Sizes || !In.Strides) {
    OpOutcome Out = unmodelled("contiguous");
    Out.Value = TensorValue();
    Out.Value.Sizes = In.Sizes;
    Out.Value.Type = In.Type;
    Out.Value.Dev = In.Dev;
    Out.Value.markUnknown(In.UnknownReason.empty()
                              ? "strides of the input are unknown, so whether "
                                "contiguous() copies is unknown"
                              : In.UnknownReason);
    return Out;
  }
  bool Already = Fmt == MemoryFormat::ChannelsLast
                     ? isChannelsLastContiguous(*In.Sizes, *In.Strides)
                     : isContiguous(*In.Sizes, *In.Strides);
  if (Already)
    return selfOf(In, "already contiguous: returns self");
  return clone(In, Fmt == MemoryFormat::Preserve ? MemoryFormat::Contiguous : Fmt);
}

// clone (TensorFactories.cpp): Preserve keeps dense strides; offset dropped.
OpOutcome clone(const TensorValue &In, MemoryFormat Fmt) {
  std::optional<Dims> Strides;
  if (In.Sizes) {
    switch (Fmt) {
    case MemoryFormat::Contiguous:
      Strides = contiguousStrides(*In.Sizes);
      break;
    case MemoryFormat::ChannelsLast:
      if (In.Sizes->size() != 4)
        return throws("required rank 4 tensor to use channels_last format");
      Strides = channelsLastStrides(*In.Sizes);
      break;
    case MemoryFormat::Preserve:
      if (In.Strides)
        Strides = preserveFormatStrides(*In.Sizes, *In.Strides);
      break;
    }
  }
  OpOutcome Out = copyOf(In, Strides, In.Type, In.Dev);
  if (Fmt == MemoryFormat::Preserve && Strides && In.Strides &&
      !isContiguous(*In.Sizes, *Strides))
    Out.Note = "clone keeps the input's dense layout: the copy is not "
               "contiguous";
  return Out;
}

// to() (TensorConversions.cpp): to_will_alias, else _to_copy.
OpOutcome to(const TensorValue &In, const ToTarget &Target) {
  if (Target.TypeUnknown || Target.DeviceUnknown) {
    OpOutcome Out = unmodelled("to");
    Out.Value.Sizes = In.Sizes;
    Out.Value.Type = Target.TypeUnknown ? std::nullopt : Target.Type ? Target.Type : In.Type;
    Out.Value.Dev = Target.DeviceUnknown ? std::nullopt : Target.Dev ? Target.Dev : In.Dev;
    Out.Value.UnknownReason.clear();
    Out.Value.markUnknown("target of to() could not be derived, so whether it "
                          "copies is unknown");
    return Out;
  }
  std::optional<bool> SameType, SameDevice;
  if (!Target.Type)
    SameType = true;
  else if (In.Type)
    SameType = *In.Type == *Target.Type;
  if (!Target.Dev)
    SameDevice = true;
  else if (In.Dev)
    SameDevice = In.Dev->Kind == Target.Dev->Kind &&
                 (Target.Dev->Index < 0 || In.Dev->Index < 0 ||
                  In.Dev->Index == Target.Dev->Index);
  std::optional<bool> FormatOk;
  if (Target.Fmt == MemoryFormat::Preserve)
    FormatOk = true;
  else if (In.Sizes && In.Strides)
    FormatOk = suggestsChannelsLast(*In.Sizes, *In.Strides) ==
               (Target.Fmt == MemoryFormat::ChannelsLast);
  std::optional<DType> OutType = Target.Type ? Target.Type : In.Type;
  std::optional<Device> OutDev = Target.Dev ? Target.Dev : In.Dev;
  if (!SameType || !SameDevice || !FormatOk) {
    OpOutcome Out = unmodelled("to");
    Out.Value.Sizes = In.Sizes;
    Out.Value.Type = OutType;
    Out.Value.Dev = OutDev;
    Out.Value.UnknownReason.clear();
    Out.Value.markUnknown(In.UnknownReason.empty()
                              ? "dtype or device of the input is unknown, so "
                                "whether to() copies is unknown"
                              : In.UnknownReason);
    return Out;
  }
  if (*SameType && *SameDevice && !Target.Copy && *FormatOk)
    return selfOf(In, "same dtype and device: to() returns self");
  std::optional<Dims> Strides;
  if (In.Sizes) {
    if (Target.Fmt == MemoryFormat::Preserve) {
      if (In.Strides)
        Strides = preserveFormatStrides(*In.Sizes, *In.Strides);
    } else if (Target.Fmt == MemoryFormat::ChannelsLast) {
      Strides = channelsLastStrides(*In.Sizes);
    } else {
      Strides = contiguousStrides(*In.Sizes);
    }
  }
  OpOutcome Out = copyOf(In, Strides, OutType, OutDev);
  if (!*SameType && In.Type && OutType)
    Out.Note = std::string("cast ") + dtypeName(*In.Type) + " -> " +
               dtypeName(*OutType);
  else if (!*SameDevice)
    Out.Note = "device transfer";
  else
    Out.Note = "copy=true forces a copy";
  return Out;
}

// Tensor::index (ATen/TensorIndexing.h, applySlicing + dispatch_index).
OpOutcome index(const TensorValue &In, const std::vector<IndexSpec> &Indices) {
  if (!In.hasLayout()) {
    OpOutcome Out;
    Out.Kind = OpKind::Unknown;
    Out.Value.Type = In.Type;
    Out.Value.Dev = In.Dev;
    Out.Value.markUnknown(In.UnknownReason.empty() ? "shape of the input is unknown"
                                                   : In.UnknownReason);
    return Out;
  }
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  // Count the dims the indices consume (everything but None and Ellipsis;
  // a bool consumes none either).
  int64_t Specified = 0;
  int Ellipses = 0;
  for (const IndexSpec &I : Indices) {
    if (I.K == IndexSpec::Ellipsis)
      ++Ellipses;
    else if (I.K == IndexSpec::Tensor && I.TensorIndex.Sizes &&
             I.TensorIndex.Type &&
             (*I.TensorIndex.Type == DType::Bool ||
              *I.TensorIndex.Type == DType::UInt8))
      Specified += static_cast<int64_t>(I.TensorIndex.Sizes->size());
    else if (I.K != IndexSpec::None && I.K != IndexSpec::Boolean)
      ++Specified;
  }
  if (Ellipses > 1)
    return throws("An index can only have a single ellipsis ('...')");
  if (Specified > Rank)
    return throws("too many indices for tensor of dimension " +
                  std::to_string(Rank));

  TensorValue Cur = In;
  int64_t Dim = 0;
  struct Advanced {
    int64_t Dim;
    TensorValue Index;
  };
  std::vector<Advanced> TensorIndices;
  for (const IndexSpec &I : Indices) {
    if (I.Unknown) {
      OpOutcome Out = viewOf(In);
      Out.Kind = OpKind::Unknown;
      Out.Value.markUnknown("an index bound could not be derived");
      return Out;
    }
    OpOutcome Step;
    switch (I.K) {
    case IndexSpec::Integer:
      Step = select(Cur, Dim, I.Int);
      break;
    case IndexSpec::Slice:
      Step = slice(Cur, Dim, I.Start, I.Stop, I.Step);
      ++Dim;
      break;
    case IndexSpec::None:
      Step = unsqueeze(Cur, Dim);
      ++Dim;
      break;
    case IndexSpec::Ellipsis:
      Dim += Rank - Specified;
      continue;
    case IndexSpec::Boolean: {
      Step = unsqueeze(Cur, Dim);
      if (!I.Bool && Step.Kind == OpKind::View)
        Step = slice(Step.Value, Dim, 0, 0, 1);
      ++Dim;
      break;
    }
    case IndexSpec::Tensor: {
      const TensorValue &T = I.TensorIndex;
      if (!T.Sizes || !T.Type) {
        OpOutcome Out;
        Out.Kind = OpKind::Unknown;
        Out.Value.Type = In.Type;
        Out.Value.Dev = In.Dev;
        Out.Value.markUnknown("shape or dtype of the index tensor is unknown");
        return Out;
      }
      // A 0-dim integral (not bool/uint8) index is item() + select: a view.
      if (T.Sizes->empty() && isIntegral(*T.Type, false) &&
          *T.Type != DType::UInt8) {
        OpOutcome Out = viewOf(In);
        Out.Kind = OpKind::Unknown;
        Out.Value.markUnknown("a 0-dim index tensor selects at a value known "
                              "only at run time");
        return Out;
      }
      if (*T.Type == DType::Bool || *T.Type == DType::UInt8) {
        OpOutcome Out;
        Out.Kind = OpKind::Copy;
        Out.Value.Type = In.Type;
        Out.Value.Dev = In.Dev;
        Out.Value.markUnknown("a boolean mask selects a data-dependent number "
                              "of elements");
        Out.Note = "boolean mask indexing copies";
        return Out;
      }
      if (!isIntegral(*T.Type, false))
        return throws("tensors used as indices must be long, int, byte or "
                      "bool tensors");
      TensorIndices.push_back({Dim, T});
      ++Dim;
      continue;
    }
    }
    if (Step.Kind == OpKind::Throws)
      return Step;
    Cur = Step.Value;
  }

  if (TensorIndices.empty()) {
    OpOutcome Out = viewOf(In);
    Out.Value.Sizes = Cur.Sizes;
    Out.Value.Strides = Cur.Strides;
    Out.Value.Offset = Cur.Offset;
    Out.Note = "basic indexing: a view";
    return Out;
  }

  // Advanced indexing (AdvancedIndex in TensorAdvancedIndexing.cpp): index
  // tensors broadcast together; adjacent ones replace their dims in place,
  // separated ones move the broadcast dims to the front.
  std::optional<Dims> IndexShape = *TensorIndices.front().Index.Sizes;
  for (const Advanced &A : TensorIndices) {
    IndexShape = broadcastShapes(*IndexShape, *A.Index.Sizes);
    if (!IndexShape)
      return throws("shape mismatch: indexing tensors could not be broadcast "
                    "together");
  }
  for (const Advanced &A : TensorIndices)
    if (A.Dim >= static_cast<int64_t>(Cur.Sizes->size()))
      return throws("too many indices for tensor");
  bool Adjacent = true;
  for (size_t I = 1; I < TensorIndices.size(); ++I)
    if (TensorIndices[I].Dim != TensorIndices[I - 1].Dim + 1)
      Adjacent = false;
  const Dims &Src = *Cur.Sizes;
  const Dims &SrcStrides = *Cur.Strides;
  int64_t First = TensorIndices.front().Dim;
  int64_t Last = TensorIndices.back().Dim;
  int64_t IndexRank = static_cast<int64_t>(IndexShape->size());
  Dims OutSizes;
  // The restrided source (restride_src): indexed dims replaced by the index
  // shape with stride 0. Its operand order decides the output layout.
  Dims RestrideStrides;
  int64_t IndexPos;
  if (Adjacent) {
    for (int64_t D = 0; D < First; ++D) {
      OutSizes.push_back(Src[D]);
      RestrideStrides.push_back(SrcStrides[D]);
    }
    IndexPos = First;
    for (int64_t S : *IndexShape) {
      OutSizes.push_back(S);
      RestrideStrides.push_back(0);
    }
    for (int64_t D = Last + 1; D < static_cast<int64_t>(Src.size()); ++D) {
      OutSizes.push_back(Src[D]);
      RestrideStrides.push_back(SrcStrides[D]);
    }
  } else {
    // Separated indices: the source is first permuted so indexed dims lead.
    IndexPos = 0;
    for (int64_t S : *IndexShape) {
      OutSizes.push_back(S);
      RestrideStrides.push_back(0);
    }
    std::vector<bool> Indexed(Src.size(), false);
    for (const Advanced &A : TensorIndices)
      Indexed[A.Dim] = true;
    for (size_t D = 0; D < Src.size(); ++D)
      if (!Indexed[D]) {
        OutSizes.push_back(Src[D]);
        RestrideStrides.push_back(SrcStrides[D]);
      }
  }
  std::vector<IterOperand> Operands;
  Operands.push_back({OutSizes, RestrideStrides});
  for (const Advanced &A : TensorIndices) {
    // reshape_indexer: the broadcast index gets size-1 dims around it; after
    // TensorIterator broadcasting those are stride 0.
    Dims IdxStrides(OutSizes.size(), 0);
    Dims IdxSizes = *A.Index.Sizes;
    if (A.Index.Strides && IdxSizes == *IndexShape)
      for (int64_t K = 0; K < IndexRank; ++K)
        IdxStrides[IndexPos + K] = IdxSizes[K] == 1 ? 0 : (*A.Index.Strides)[K];
    else
      for (int64_t K = 0; K < IndexRank; ++K)
        IdxStrides[IndexPos + K] = 0;
    Operands.push_back({OutSizes, IdxStrides});
  }
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  Out.Value.Sizes = OutSizes;
  Out.Value.Strides = tensorIteratorOutputStrides(OutSizes, Operands);
  Out.Value.Offset = 0;
  Out.Value.Type = In.Type;
  Out.Value.Dev = In.Dev;
  Out.Note = "indexing with a tensor gathers: a new tensor, not a view";
  Out.WrittenBytes = Out.Value.logicalBytes();
  std::optional<int64_t> IndexBytes = 0;
  for (const Advanced &A : TensorIndices) {
    auto B = A.Index.logicalBytes();
    IndexBytes = IndexBytes && B ? checkedAdd(*IndexBytes, *B) : std::nullopt;
  }
  if (Out.WrittenBytes && IndexBytes)
    Out.ReadBytes = checkedAdd(*Out.WrittenBytes, *IndexBytes);
  return Out;
}

// Tensor::operator[](const Tensor&) (TensorBody.h): the index must be a
// 0-dim integral tensor; it is item() + select.
OpOutcome subscriptWithTensor(const TensorValue &In, const TensorValue &Index) {
  if (Index.Sizes && !Index.Sizes->empty())
    return throws("Can only index with tensors that are scalars (zero-dim)");
  if (Index.Type && !isIntegral(*Index.Type, false))
    return throws("Can only index with tensors that are integral scalars");
  OpOutcome Out = viewOf(In);
  Out.Kind = OpKind::View;
  Out.Value.markUnknown("a 0-dim index tensor selects at a value known only at "
                        "run time");
  return Out;
}

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
    Out.Value.markUnknown("dtype of an operand is unknown");
  }
  Out.Value.Dev = A.Dev ? A.Dev : B.Dev;
  if (!A.Sizes || !B.Sizes) {
    Out.Value.markUnknown("shape of an operand is unknown");
    return Out;
  }
  const Dims &SA = *A.Sizes, &SB = *B.Sizes;
  size_t RA = SA.size(), RB = SB.size();
  if (RA == 0 || RB == 0)
    return throws("both arguments to matmul need to be at least 1D, but they "
                  "are " + std::to_string(RA) + "D and " + std::to_string(RB) +
                  "D");
  int64_t K1 = SA.back();
  int64_t K2 = RB >= 2 ? SB[RB - 2] : SB[0];
  if (K1 != K2)
    return throws("mat1 and mat2 shapes cannot be multiplied");
  Dims OutSizes;
  std::optional<int64_t> Transient = 0;
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
    if (!A.Strides) {
      Transient.reset();
      Out.Value.markUnknown("strides of the left operand are unknown, so "
                            "whether matmul copies it is unknown");
    } else {
      const Dims &St = *A.Strides;
      bool UseBmm;
      if (Version.atLeast(2, 1)) {
        // PR #76828: fold only when the batch dims are packed.
        bool Packed = true;
        for (size_t I = 0; I + 2 < RA; ++I)
          if (St[I] != St[I + 1] * SA[I + 1])
            Packed = false;
        UseBmm = !Packed;
      } else {
        // PR #73115: 3D@2D with a transposed last dim uses bmm.
        UseBmm = RA == 3 && RB == 2 && St[2] != 1 && St[0] == SA[1] * SA[2];
      }
      if (!UseBmm) {
        Dims Folded = {numel(SA) / std::max<int64_t>(K1, 1), K1};
        if (numel(SA) == 0)
          Folded = {0, K1};
        if (!computeStride(SA, St, Folded) && A.Type) {
          Transient = denseBytes(SA, *A.Type);
          Out.Note = "matmul folds the batch with reshape, which copies the "
                     "non-viewable left operand";
        }
      }
    }
  } else {
    // Batched: expand both batch portions, then reshape to 3-D for bmm.
    Dims BatchA(SA.begin(), SA.end() - std::min<size_t>(RA, 2));
    Dims BatchB(SB.begin(), SB.end() - std::min<size_t>(RB, 2));
    auto Batch = broadcastShapes(BatchA, BatchB);
    if (!Batch)
      return throws("matmul batch dimensions cannot be broadcast");
    int64_t N = RA > 1 ? SA[RA - 2] : 1;
    int64_t P = SB.back();
    OutSizes = *Batch;
    if (RA > 1)
      OutSizes.push_back(N);
    if (RB > 1)
      OutSizes.push_back(P);
    // Each operand: expand(batch + matrix) then reshape({batch_numel, ...});
    // the reshape copies when the expanded tensor is not viewable.
    auto ExpandCopy = [&](const TensorValue &T, const Dims &Matrix)
        -> std::optional<int64_t> {
      if (!T.Strides || !T.Type)
        return std::nullopt;
      Dims ExpSizes = *Batch;
      ExpSizes.insert(ExpSizes.end(), Matrix.begin(), Matrix.end());
      Dims ExpStrides(ExpSizes.size(), 0);
      const Dims &TS = *T.Sizes, &TSt = *T.Strides;
      // A 1-D operand is unsqueezed to a matrix first.
      Dims MS = TS, MSt = TSt;
      if (TS.size() == 1) {
        if (&T == &A) {
          MS = {1, TS[0]};
          MSt = {TS[0] * TSt[0], TSt[0]};
        } else {
          MS = {TS[0], 1};
          MSt = {TSt[0], 1};
        }
      }
      size_t Off = ExpSizes.size() - MS.size();
      for (size_t I = 0; I < MS.size(); ++I)
        ExpStrides[Off + I] =
            (MS[I] == 1 && ExpSizes[Off + I] != 1) ? 0 : MSt[I];
      Dims Flat = {numel(*Batch), Matrix[0], Matrix[1]};
      if (computeStride(ExpSizes, ExpStrides, Flat))
        return 0;
      return denseBytes(Flat, *T.Type);
    };
    int64_t M1 = SA.back();
    auto CA = ExpandCopy(A, {N, M1});
    auto CB = ExpandCopy(B, {K2, P});
    if (CA && CB)
      Transient = checkedAdd(*CA, *CB);
    else
      Transient.reset();
    if (Transient && *Transient > 0)
      Out.Note = "matmul copies an operand to batch it for bmm";
  }
  Out.Value.Sizes = OutSizes;
  Out.Value.Strides = contiguousStrides(OutSizes);
  Out.Value.Offset = 0;
  Out.TransientBytes = Transient;
  Out.WrittenBytes = Out.Value.logicalBytes();
  auto RBA = A.logicalBytes(), RBB = B.logicalBytes();
  if (RBA && RBB)
    Out.ReadBytes = checkedAdd(*RBA, *RBB);
  gemmScratch(Out);
  return Out;
}


// ---- More views -------------------------------------------------------------------

namespace {


/// A view with exactly this geometry.
OpOutcome viewWith(const TensorValue &In, Dims Sizes, Dims Strides,
                   int64_t Offset) {
  OpOutcome Out = viewOf(In);
  Out.Value.Sizes = std::move(Sizes);
  Out.Value.Strides = std::move(Strides);
  Out.Value.Offset = Offset;
  return Out;
}

} // namespace

// narrow (TensorShape.cpp): start wraps once; start + length must fit.
OpOutcome narrow(const TensorValue &In, int64_t Dim, int64_t Start,
                 int64_t Length) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return throws("narrow() cannot be applied to a 0-dim tensor.");
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return throws(rangeError(Rank));
  int64_t Size = (*In.Sizes)[*D];
  if (Start < -Size || Start > Size)
    return throws("start out of range (expected to be in range of [" +
                  std::to_string(-Size) + ", " + std::to_string(Size) +
                  "], but got " + std::to_string(Start) + ")");
  if (Start < 0)
    Start += Size;
  if (Length < 0 || Start > Size - Length)
    return throws("start (" + std::to_string(Start) + ") + length (" +
                  std::to_string(Length) + ") exceeds dimension size (" +
                  std::to_string(Size) + ").");
  return slice(In, *D, Start, Start + Length, 1);
}

// squeeze / squeeze(dim) (TensorShape.cpp, inferSqueezeGeometry): always a
// new alias, even when nothing is dropped.
OpOutcome squeeze(const TensorValue &In, std::optional<int64_t> Dim) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  std::optional<int64_t> D;
  if (Dim) {
    D = wrapDim(*Dim, Rank);
    if (!D)
      return throws(rangeError(Rank));
  }
  Dims Sizes, Strides;
  for (int64_t K = 0; K < Rank; ++K) {
    bool Drop = (*In.Sizes)[K] == 1 && (!D || *D == K);
    if (Drop)
      continue;
    Sizes.push_back((*In.Sizes)[K]);
    Strides.push_back((*In.Strides)[K]);
  }
  return viewWith(In, Sizes, Strides, *In.Offset);
}

// inferExpandGeometry (ExpandUtils.cpp). New dims and expanded size-1 dims
// get stride 0; a new leading dim of size 1 gets the stride of the dims
// inside it; a 0-dim input gets all strides 0.
OpOutcome expand(const TensorValue &In, const Dims &Sizes) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  const Dims &TS = *In.Sizes, &TSt = *In.Strides;
  int64_t NDim = static_cast<int64_t>(Sizes.size());
  int64_t TDim = static_cast<int64_t>(TS.size());
  if (NDim < TDim)
    return throws("expand: the number of sizes provided (" +
                  std::to_string(NDim) +
                  ") must be greater or equal to the number of dimensions in "
                  "the tensor (" + std::to_string(TDim) + ")");
  if (TDim == 0) {
    for (int64_t S : Sizes)
      if (S < 0)
        return throws("The expanded size of the tensor (" + std::to_string(S) +
                      ") isn't allowed in a leading, non-existing dimension");
    return viewWith(In, Sizes, Dims(NDim, 0), *In.Offset);
  }
  Dims ES(NDim), ESt(NDim);
  for (int64_t I = NDim - 1; I >= 0; --I) {
    int64_t Off = NDim - 1 - I;
    int64_t D = TDim - 1 - Off;
    int64_t Size = D >= 0 ? TS[D] : 1;
    int64_t Stride = D >= 0 ? TSt[D] : ES[I + 1] * ESt[I + 1];
    int64_t Target = Sizes[I];
    if (Target == -1) {
      if (D < 0)
        return throws("The expanded size of the tensor (-1) isn't allowed in "
                      "a leading, non-existing dimension " + std::to_string(I));
      Target = Size;
    }
    if (Size != Target) {
      if (Size != 1)
        return throws("The expanded size of the tensor (" +
                      std::to_string(Target) +
                      ") must match the existing size (" +
                      std::to_string(Size) + ") at non-singleton dimension " +
                      std::to_string(I) + ".  Target sizes: " +
                      dimsText(Sizes) + ".  Tensor sizes: " + dimsText(TS));
      Size = Target;
      Stride = 0;
    }
    ES[I] = Size;
    ESt[I] = Stride;
  }
  return viewWith(In, ES, ESt, *In.Offset);
}

// as_strided (TensorShape.cpp, setStrided + checkInBoundsForStorage).
OpOutcome asStrided(const TensorValue &In, const Dims &Sizes,
                    const Dims &Strides, std::optional<int64_t> Offset,
                    std::optional<int64_t> StorageBytes) {
  OpOutcome Out = viewOf(In);
  if (Sizes.size() != Strides.size())
    return throws("mismatch in length of strides and shape");
  for (int64_t S : Strides)
    if (S < 0)
      return throws("as_strided: Negative strides are not supported at the "
                    "moment, got strides: " + dimsText(Strides));
  if (!Offset) {
    if (!In.Offset) {
      Out.Value.markUnknown("storage offset of the input is unknown");
      return Out;
    }
    Offset = In.Offset;
  }
  if (StorageBytes && In.Type) {
    // setStorage's bound check; a geometry whose extent overflows is
    // out of bounds for any storage.
    auto Needed = checkedStorageBytes(Sizes, Strides, itemSize(*In.Type),
                                      *Offset);
    if (!Needed)
      return throws("Storage size calculation overflowed with sizes=" +
                    dimsText(Sizes) + " and strides=" + dimsText(Strides));
    if (*Needed > *StorageBytes)
      return throws("setStorage: sizes " + dimsText(Sizes) + ", strides " +
                    dimsText(Strides) + ", storage offset " +
                    std::to_string(*Offset) + ", and itemsize " +
                    std::to_string(itemSize(*In.Type)) +
                    " requiring a storage size of " + std::to_string(*Needed) +
                    " are out of bounds for storage of size " +
                    std::to_string(*StorageBytes));
  }
  return viewWith(In, Sizes, Strides, *Offset);
}

// diagonal (TensorShape.cpp): the diagonal dim goes last with stride
// s1 + s2; an empty diagonal keeps the offset.
OpOutcome diagonal(const TensorValue &In, int64_t Offset, int64_t Dim1,
                   int64_t Dim2) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank < 2)
    return throws(rangeError(Rank));
  auto D1 = wrapDim(Dim1, Rank), D2 = wrapDim(Dim2, Rank);
  if (!D1 || !D2)
    return throws(rangeError(Rank));
  if (*D1 == *D2)
    return throws("diagonal dimensions cannot be identical " +
                  std::to_string(Dim1) + ", " + std::to_string(Dim2));
  const Dims &S = *In.Sizes, &St = *In.Strides;
  int64_t DiagSize =
      Offset >= 0
          ? std::max<int64_t>(std::min(S[*D1], S[*D2] - Offset), 0)
          : std::max<int64_t>(std::min(S[*D1] + Offset, S[*D2]), 0);
  int64_t NewOffset = *In.Offset;
  if (DiagSize > 0)
    NewOffset += Offset >= 0 ? Offset * St[*D2] : -Offset * St[*D1];
  Dims Sizes, Strides;
  for (int64_t K = 0; K < Rank; ++K)
    if (K != *D1 && K != *D2) {
      Sizes.push_back(S[K]);
      Strides.push_back(St[K]);
    }
  Sizes.push_back(DiagSize);
  Strides.push_back(St[*D1] + St[*D2]);
  return viewWith(In, Sizes, Strides, NewOffset);
}

// unfold (TensorShape.cpp): the window count replaces the dim, the window
// becomes a new last dim.
OpOutcome unfold(const TensorValue &In, int64_t Dim, int64_t Size,
                 int64_t Step) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return throws(rangeError(Rank));
  int64_t MaxSize = Rank == 0 ? 1 : (*In.Sizes)[*D];
  if (Size > MaxSize)
    return throws("maximum size for tensor at dimension " + std::to_string(*D) +
                  " is " + std::to_string(MaxSize) + " but size is " +
                  std::to_string(Size));
  if (Step <= 0)
    return throws("step is " + std::to_string(Step) + " but must be > 0");
  if (Size < 0)
    return throws("size is " + std::to_string(Size) + " but must be >= 0");
  if (Rank == 0)
    return viewWith(In, {Size}, {1}, *In.Offset);
  Dims Sizes = *In.Sizes, Strides = *In.Strides;
  Sizes.push_back(Size);
  Strides.push_back(Strides[*D]);
  Sizes[*D] = (Sizes[*D] - Size) / Step + 1;
  Strides[*D] *= Step;
  return viewWith(In, Sizes, Strides, *In.Offset);
}

// movedim (TensorShape.cpp): sources go to their destinations, the other
// dims keep their order in the free places; then permute.
OpOutcome movedim(const TensorValue &In, const Dims &Source,
                  const Dims &Destination) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Source.size() != Destination.size())
    return throws("movedim: Invalid source or destination dims: source (" +
                  dimsText(Source) + " dims) should contain the same number of "
                  "dims as destination (" + dimsText(Destination) + " dims)");
  if (Rank == 0)
    return alias(In);
  Dims Order(Rank, -1);
  std::vector<bool> Used(Rank, false);
  for (size_t K = 0; K < Source.size(); ++K) {
    auto S = wrapDim(Source[K], Rank), D = wrapDim(Destination[K], Rank);
    if (!S || !D)
      return throws(rangeError(Rank));
    if (Order[*D] != -1 || Used[*S])
      return throws("movedim: repeated dim");
    Order[*D] = *S;
    Used[*S] = true;
  }
  int64_t NextSrc = 0;
  for (int64_t K = 0; K < Rank; ++K) {
    if (Order[K] != -1)
      continue;
    while (Used[NextSrc])
      ++NextSrc;
    Order[K] = NextSrc;
    Used[NextSrc] = true;
  }
  return permute(In, Order);
}

// flatten (TensorShape.cpp).
OpOutcome flatten(const TensorValue &In, int64_t Start, int64_t End) {
  if (!In.Sizes) {
    OpOutcome Out = viewOf(In);
    Out.Kind = OpKind::Unknown;
    Out.Value.markUnknown("shape of the input is unknown");
    return Out;
  }
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  auto S = wrapDim(Start, Rank), E = wrapDim(End, Rank);
  if (!S || !E)
    return throws(rangeError(Rank));
  if (*S > *E)
    return throws("flatten() has invalid args: start_dim cannot come after "
                  "end_dim");
  if (Rank == 0)
    return reshape(In, {1});
  if (*S == *E)
    return selfOf(In, "flatten of a single dim returns self");
  Dims Shape;
  for (int64_t K = 0; K < *S; ++K)
    Shape.push_back((*In.Sizes)[K]);
  int64_t Mid = 1;
  for (int64_t K = *S; K <= *E; ++K)
    Mid *= (*In.Sizes)[K];
  Shape.push_back(Mid);
  for (int64_t K = *E + 1; K < Rank; ++K)
    Shape.push_back((*In.Sizes)[K]);
  return reshape(In, Shape);
}

// unflatten (TensorShape.cpp): view(shape) with the dim replaced by Sizes
// (one -1 inferred from the dim's size).
OpOutcome unflatten(const TensorValue &In, int64_t Dim, const Dims &Sizes) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  auto D = wrapDim(Dim, Rank);
  if (!D || Rank == 0)
    return throws(rangeError(Rank));
  if (Sizes.empty())
    return throws("unflatten: sizes must be non-empty");
  auto Inner = inferSize(Sizes, (*In.Sizes)[*D]);
  if (!Inner)
    return throws("unflatten: Provided sizes " + dimsText(Sizes) +
                  " don't multiply up to the size of dim " +
                  std::to_string(Dim) + " (" +
                  std::to_string((*In.Sizes)[*D]) + ") in the input tensor");
  Dims Shape(In.Sizes->begin(), In.Sizes->begin() + *D);
  Shape.insert(Shape.end(), Inner->begin(), Inner->end());
  Shape.insert(Shape.end(), In.Sizes->begin() + *D + 1, In.Sizes->end());
  return viewAs(In, Shape);
}

// view(dtype) (TensorConversions.cpp, view_dtype).
OpOutcome viewDtype(const TensorValue &In, DType Type) {
  OpOutcome Out = viewOf(In);
  Out.Value.Type = Type;
  if (!In.Type) {
    Out.Value.markUnknown("dtype of the input is unknown");
    return Out;
  }
  if (!needLayout(In, Out))
    return Out;
  int64_t Old = itemSize(*In.Type), New = itemSize(Type);
  Dims Sizes = *In.Sizes, Strides = *In.Strides;
  int64_t Offset = *In.Offset;
  if (Old == New)
    return viewWith(Out.Value, Sizes, Strides, Offset);
  std::string What = std::string("to view ") + dtypeName(*In.Type) + " as " +
                     dtypeName(Type) + " (different element sizes)";
  if (Sizes.empty())
    return throws("self.dim() cannot be 0 " + What);
  if (Old < New && Sizes.back() % (New / Old) != 0)
    return throws("self.size(-1) must be divisible by " +
                  std::to_string(New / Old) + " " + What + ", but got " +
                  std::to_string(Sizes.back()));
  if (Strides.back() != 1)
    return throws("self.stride(-1) must be 1 " + What);
  if (Old > New) {
    int64_t R = Old / New;
    for (size_t K = 0; K + 1 < Strides.size(); ++K)
      Strides[K] *= R;
    Sizes.back() *= R;
    Offset *= R;
  } else {
    int64_t R = New / Old;
    if (Offset % R != 0)
      return throws("self.storage_offset() must be divisible by " +
                    std::to_string(R) + " " + What);
    for (size_t K = 0; K + 1 < Strides.size(); ++K) {
      if (Strides[K] % R != 0)
        return throws("self.stride(" + std::to_string(K) +
                      ") must be divisible by " + std::to_string(R) + " " +
                      What);
      Strides[K] /= R;
    }
    Sizes.back() /= R;
    Offset /= R;
  }
  return viewWith(Out.Value, Sizes, Strides, Offset);
}

std::vector<OpOutcome> splitWithSizes(const TensorValue &In, const Dims &Sizes,
                                      int64_t Dim) {
  OpOutcome Probe = viewOf(In);
  if (!needLayout(In, Probe))
    return {Probe};
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return {throws("split expects at least a 1-dimensional tensor")};
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return {throws(rangeError(Rank))};
  int64_t Total = 0;
  for (int64_t S : Sizes) {
    if (S < 0)
      return {throws("split_with_sizes expects split_sizes have only "
                     "non-negative entries, but got split_sizes=" +
                     dimsText(Sizes))};
    Total += S;
  }
  if (Total != (*In.Sizes)[*D])
    return {throws("split_with_sizes expects split_sizes to sum exactly to " +
                   std::to_string((*In.Sizes)[*D]) +
                   " (input tensor's size at dimension " + std::to_string(*D) +
                   "), but got split_sizes=" + dimsText(Sizes))};
  std::vector<OpOutcome> Pieces;
  int64_t Start = 0;
  for (int64_t S : Sizes) {
    Pieces.push_back(narrow(In, *D, Start, S));
    Start += S;
  }
  return Pieces;
}

// split (TensorShape.cpp): ceil(N / size) pieces (at least one), the last
// one shorter.
std::vector<OpOutcome> split(const TensorValue &In, int64_t SplitSize,
                             int64_t Dim) {
  OpOutcome Probe = viewOf(In);
  if (!needLayout(In, Probe))
    return {Probe};
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return {throws("split expects at least a 1-dimensional tensor")};
  if (SplitSize < 0)
    return {throws("split expects split_size be non-negative, but got "
                   "split_size=" + std::to_string(SplitSize))};
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return {throws(rangeError(Rank))};
  int64_t N = (*In.Sizes)[*D];
  if (SplitSize == 0 && N != 0)
    return {throws("split_size can only be 0 if dimension size is 0, but got "
                   "dimension size of " + std::to_string(N))};
  int64_t Pieces = SplitSize == 0
                       ? 1
                       : std::max<int64_t>((N + SplitSize - 1) / SplitSize, 1);
  Dims Sizes;
  for (int64_t K = 0; K < Pieces; ++K)
    Sizes.push_back(std::min(SplitSize, N - K * SplitSize));
  return splitWithSizes(In, Sizes, *D);
}

// chunk (TensorShape.cpp): split(ceil(N / chunks)), so it can give fewer
// pieces than asked; an empty dim gives `chunks` empty pieces.
std::vector<OpOutcome> chunk(const TensorValue &In, int64_t Chunks,
                             int64_t Dim) {
  OpOutcome Probe = viewOf(In);
  if (!needLayout(In, Probe))
    return {Probe};
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return {throws("chunk expects at least a 1-dimensional tensor")};
  if (Chunks <= 0)
    return {throws("chunk expects `chunks` to be greater than 0, got: " +
                   std::to_string(Chunks))};
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return {throws(rangeError(Rank))};
  int64_t N = (*In.Sizes)[*D];
  int64_t SplitSize = (N + Chunks - 1) / Chunks;
  if (SplitSize == 0 && N == 0)
    return splitWithSizes(In, Dims(Chunks, 0), *D);
  return split(In, SplitSize, *D);
}

// unbind (TensorShape.cpp): one select per index.
std::vector<OpOutcome> unbind(const TensorValue &In, int64_t Dim) {
  OpOutcome Probe = viewOf(In);
  if (!needLayout(In, Probe))
    return {Probe};
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return {throws("Dimension specified as 0 but tensor has no dimensions")};
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return {throws(rangeError(Rank))};
  std::vector<OpOutcome> Pieces;
  for (int64_t K = 0; K < (*In.Sizes)[*D]; ++K)
    Pieces.push_back(select(In, *D, K));
  return Pieces;
}

// ---- More factories ----------------------------------------------------------------

OpOutcome emptyStrided(const Dims &Sizes, const Dims &Strides,
                       const std::optional<DType> &Type,
                       const std::optional<Device> &Dev) {
  if (Sizes.size() != Strides.size())
    return throws("mismatch in length of strides and shape");
  OpOutcome Out = factory(Sizes, Type, Dev, FillKind::Uninitialized);
  if (Out.Kind == OpKind::Alloc)
    Out.Value.Strides = Strides;
  return Out;
}

// empty_like (TensorFactories.cpp) and the *_like factories built on it.
OpOutcome likeFactory(const TensorValue &In, const std::optional<DType> &Type,
                      const std::optional<Device> &Dev, MemoryFormat Fmt,
                      FillKind Fill) {
  OpOutcome Out;
  Out.Kind = OpKind::Alloc;
  Out.ReadBytes = 0;
  Out.Value.Type = Type ? Type : In.Type;
  Out.Value.Dev = Dev ? Dev : In.Dev;
  Out.Value.UnknownReason = In.UnknownReason;
  Out.Value.Sizes = In.Sizes;
  Out.Value.Offset = 0;
  if (In.Sizes) {
    switch (Fmt) {
    case MemoryFormat::Contiguous:
      Out.Value.Strides = contiguousStrides(*In.Sizes);
      break;
    case MemoryFormat::ChannelsLast:
      if (In.Sizes->size() != 4)
        return throws("required rank 4 tensor to use channels_last format");
      Out.Value.Strides = channelsLastStrides(*In.Sizes);
      break;
    case MemoryFormat::Preserve:
      if (In.Strides)
        Out.Value.Strides = preserveFormatStrides(*In.Sizes, *In.Strides);
      else
        Out.Value.markUnknown("strides of the input are unknown");
      break;
    }
  } else {
    Out.Value.markUnknown(In.UnknownReason.empty() ? "shape of the input is unknown"
                                                   : In.UnknownReason);
  }
  if (!Out.Value.Type)
    Out.Value.markUnknown("dtype of the input is unknown");
  if (!Out.Value.Dev)
    Out.Value.markUnknown("device of the input is unknown");
  Out.WrittenBytes =
      Fill == FillKind::Uninitialized ? std::optional<int64_t>(0)
                                      : Out.Value.logicalBytes();
  return Out;
}

std::optional<int64_t> arangeSize(double Start, double End, double Step) {
  if (Step == 0)
    return std::nullopt;
  if ((Step > 0 && End < Start) || (Step < 0 && End > Start))
    return std::nullopt;
  double Size = std::ceil((End - Start) / Step);
  if (!(Size >= 0) || Size > 9.0e18)
    return std::nullopt;
  return static_cast<int64_t>(Size);
}

} // namespace tma
