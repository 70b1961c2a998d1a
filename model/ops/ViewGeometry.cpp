// View geometry (TensorShape.cpp): a new tensor on its input's storage,
// with the sizes, strides and offset ATen computes (model/Ops.h declares
// each). Views move no bytes; the rules that bind arguments to these are
// in Views.cpp.
#include "model/Ops.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tma {

using namespace detail;

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

OpOutcome permute(const TensorValue &In, const DimList &Order) {
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
  Shape Sizes(Rank), Strides(Rank);
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

// view_impl of a packed tensor (its flat self, packedAsFlat): computeStride
// gives the packed strides of any shape with its element count, whether it
// is empty (the max(size, 1) products of its numel == 0 branch) or not, so
// emptiness need not be decided.
OpOutcome viewPacked(const TensorValue &Flat, const Shape &Target) {
  OpOutcome Out = viewOf(Flat);
  Shape Sizes;
  const SymSize &N = Flat.Sizes->front();
  Tri Valid = inferSize(Target, N, Sizes);
  if (Valid == Tri::Unknown)
    return undecidedOutcome(Out, "whether shape '" + dimsText(Target) +
                                     "' is valid for input of size " +
                                     sizeText(N) + " is not known");
  if (Valid == Tri::False)
    return throws("shape '" + dimsText(Target) + "' is invalid for input of size " +
                  sizeText(N));
  Out.Value.Sizes = Sizes;
  // Each dim assumed non-empty like any other (the 0/1 specialisation,
  // stated): strides are then the sizes' products, without max(size, 1).
  Out.Value.Strides = shapeIsEmpty(Sizes) == Tri::False
                          ? packedStridesOfNonEmpty(Sizes)
                          : contiguousStrides(Sizes);
  Out.Value.Offset = Flat.Offset;
  return Out;
}

// view_impl (TensorShape.cpp).
OpOutcome viewAs(const TensorValue &In, const Shape &Target) {
  if (auto Flat = packedAsFlat(In))
    return viewPacked(*Flat, Target);
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  Shape Sizes;
  SymSize N = numel(*In.Sizes);
  Tri Valid = inferSize(Target, N, Sizes);
  if (Valid == Tri::Unknown)
    return undecidedOutcome(Out, "whether shape '" + dimsText(Target) +
                                     "' is valid for input of size " +
                                     sizeText(N) + " is not known");
  if (Valid == Tri::False)
    return throws("shape '" + dimsText(Target) + "' is invalid for input of size " +
                  sizeText(N));
  Shape Strides;
  Tri Viewable = computeStride(*In.Sizes, *In.Strides, Sizes, Strides,
                                /*SameNumel=*/true);
  if (Viewable == Tri::Unknown)
    return undecidedOutcome(Out, "whether the input can be viewed as " +
                                     dimsText(Sizes) + " is not known");
  if (Viewable == Tri::False)
    return throws("view size is not compatible with input tensor's size and "
                  "stride (at least one dimension spans across two contiguous "
                  "subspaces). Use .reshape(...) instead.");
  Out.Value.Sizes = Sizes;
  Out.Value.Strides = Strides;
  Out.Value.Offset = In.Offset;
  return Out;
}

// select (TensorShape.cpp): drops the dim, offset += index * stride. A
// symbolic index (`batch[n - 1]`) is answered where it is known not to be
// negative (a negative one counts from the end).
OpOutcome select(const TensorValue &In, int64_t Dim, const SymSize &Index) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  auto Constant = Index.constant();
  if (!Constant && (Index.isError() || sizeLe(0, Index) != Tri::True))
    return undecidedOutcome(Out, undecided(">=", Index, 0));
  bool FromEnd = Constant && *Constant < 0;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return throws("select() cannot be applied to a 0-dim tensor.");
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return throws("Dimension out of range");
  const SymSize &Size = (*In.Sizes)[*D];
  // LibTorch throws for an index outside the dim: on the path that goes
  // on, it is inside.
  Tri Inside = FromEnd ? requireLe(-Index, Size) : requireLt(Index, Size);
  if (Inside == Tri::Unknown)
    return undecidedOutcome(Out, undecided("<", Index, Size));
  if (Inside == Tri::False)
    return throws("index " + sizeText(Index) + " is out of bounds for dimension " +
                  std::to_string(*D) + " with size " + sizeText(Size));
  SymSize At = FromEnd ? Size + Index : Index;
  Shape Sizes = *In.Sizes, Strides = *In.Strides;
  SymSize Offset = *In.Offset + At * Strides[*D];
  Sizes.erase(Sizes.begin() + *D);
  Strides.erase(Strides.begin() + *D);
  Out.Value.Sizes = Sizes;
  Out.Value.Strides = Strides;
  Out.Value.Offset = Offset;
  return Out;
}

OpOutcome select(const TensorValue &In, int64_t Dim, int64_t Index) {
  return select(In, Dim, SymSize(Index));
}

namespace {

/// slice's bound: wrapped once when negative, then clamped to [0, Size]
/// (a missing end is Size); a bound over the function's sizes
/// (`x.size(0) - 1`) where the facts decide each comparison. nullopt when
/// that is not decidable.
std::optional<SymSize> sliceBound(const std::optional<SymSize> &Bound,
                                  const SymSize &Size, const SymSize &Floor) {
  if (!Bound)
    return Size;
  SymSize B = *Bound;
  Tri Negative = sizeLt(B, 0);
  if (Negative == Tri::Unknown)
    return std::nullopt;
  if (Negative == Tri::True)
    B = Size + *Bound;
  Tri Low = sizeLt(B, Floor);
  if (Low == Tri::Unknown)
    return std::nullopt;
  if (Low == Tri::True)
    return Floor;
  Tri High = sizeGe(B, Size);
  if (High == Tri::Unknown)
    return std::nullopt;
  return High == Tri::True ? Size : B;
}

} // namespace

// slice (TensorShape.cpp): bounds wrap once and clamp; size = ceil(len/step).
OpOutcome slice(const TensorValue &In, int64_t Dim, std::optional<SymSize> Start,
                std::optional<SymSize> End, int64_t Step) {
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
  const SymSize &Size = (*In.Sizes)[*D];
  auto S = sliceBound(Start.value_or(SymSize(0)), Size, 0);
  if (!S)
    return undecidedOutcome(Out, "where slice start " +
                                     sizeText(Start.value_or(SymSize(0))) +
                                     " falls in a dim of size " +
                                     sizeText(Size) + " is not known");
  auto E = End ? sliceBound(End, Size, *S) : std::optional<SymSize>(Size);
  if (!E)
    return undecidedOutcome(Out, "where slice end " + sizeText(*End) +
                                     " falls in a dim of size " +
                                     sizeText(Size) + " is not known");
  Shape Sizes = *In.Sizes, Strides = *In.Strides;
  SymSize Offset = *In.Offset + *S * Strides[*D];
  Sizes[*D] = SymSize::ceilDiv(*E - *S, Step);
  Strides[*D] = Strides[*D] * Step;
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
  Shape Sizes = *In.Sizes, Strides = *In.Strides;
  SymSize NewStride = *D >= Rank ? SymSize(1) : Sizes[*D] * Strides[*D];
  Sizes.insert(Sizes.begin() + *D, SymSize(1));
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

// narrow (TensorShape.cpp): start wraps once; start + length must fit.
OpOutcome narrow(const TensorValue &In, int64_t Dim, const SymSize &Start,
                 const SymSize &Length) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return throws("narrow() cannot be applied to a 0-dim tensor.");
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return throws(rangeError(Rank));
  const SymSize &Size = (*In.Sizes)[*D];
  Tri Negative = sizeLt(Start, 0);
  if (Negative == Tri::Unknown)
    return undecidedOutcome(Out, undecided("<", Start, 0));
  // On the path that goes on, start and length fit in the dim.
  Tri StartFits = Negative == Tri::True ? requireLe(-Start, Size)
                                        : requireLe(Start, Size);
  if (StartFits == Tri::Unknown)
    return undecidedOutcome(Out, undecided("<=", Start, Size));
  if (StartFits == Tri::False)
    return throws("start out of range (expected to be in range of [" +
                  sizeText(-Size) + ", " + sizeText(Size) + "], but got " +
                  sizeText(Start) + ")");
  SymSize From = Negative == Tri::True ? Size + Start : Start;
  Tri LengthNegative = sizeLt(Length, 0);
  if (LengthNegative == Tri::Unknown)
    return undecidedOutcome(Out, undecided("<", Length, 0));
  Tri Fits = LengthNegative == Tri::True ? Tri::False
                                         : requireLe(From + Length, Size);
  if (Fits == Tri::Unknown)
    return undecidedOutcome(Out, undecided("<=", From + Length, Size));
  if (Fits == Tri::False)
    return throws("start (" + sizeText(From) + ") + length (" +
                  sizeText(Length) + ") exceeds dimension size (" +
                  sizeText(Size) + ").");
  Shape Sizes = *In.Sizes, Strides = *In.Strides;
  SymSize Offset = *In.Offset + From * Strides[*D];
  Sizes[*D] = Length;
  Out.Value.Sizes = Sizes;
  Out.Value.Strides = Strides;
  Out.Value.Offset = Offset;
  return Out;
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
  Shape Sizes, Strides;
  for (int64_t K = 0; K < Rank; ++K) {
    if (!D || *D == K) {
      Tri One = sizeEq((*In.Sizes)[K], 1);
      if (One == Tri::Unknown)
        return undecidedOutcome(Out, undecided("==", (*In.Sizes)[K], 1));
      if (One == Tri::True)
        continue;
    }
    Sizes.push_back((*In.Sizes)[K]);
    Strides.push_back((*In.Strides)[K]);
  }
  return viewWith(In, Sizes, Strides, *In.Offset);
}

// inferExpandGeometry (ExpandUtils.cpp). New dims and expanded size-1 dims
// get stride 0; a new leading dim of size 1 gets the stride of the dims
// inside it; a 0-dim input gets all strides 0.
OpOutcome expand(const TensorValue &In, const Shape &Sizes) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  const Shape &TS = *In.Sizes, &TSt = *In.Strides;
  int64_t NDim = static_cast<int64_t>(Sizes.size());
  int64_t TDim = static_cast<int64_t>(TS.size());
  if (NDim < TDim)
    return throws("expand: the number of sizes provided (" +
                  std::to_string(NDim) +
                  ") must be greater or equal to the number of dimensions in "
                  "the tensor (" + std::to_string(TDim) + ")");
  if (TDim == 0) {
    for (const SymSize &S : Sizes) {
      Tri Negative = sizeLt(S, 0);
      if (Negative == Tri::Unknown)
        return undecidedOutcome(Out, undecided("<", S, 0));
      if (Negative == Tri::True)
        return throws("The expanded size of the tensor (" + sizeText(S) +
                      ") isn't allowed in a leading, non-existing dimension");
    }
    return viewWith(In, Sizes, Shape(NDim, 0), *In.Offset);
  }
  Shape ES(NDim), ESt(NDim);
  for (int64_t I = NDim - 1; I >= 0; --I) {
    int64_t Off = NDim - 1 - I;
    int64_t D = TDim - 1 - Off;
    SymSize Size = D >= 0 ? TS[D] : SymSize(1);
    SymSize Stride = D >= 0 ? TSt[D] : ES[I + 1] * ESt[I + 1];
    SymSize Target = Sizes[I];
    if (Target.identical(-1)) {
      if (D < 0)
        return throws("The expanded size of the tensor (-1) isn't allowed in "
                      "a leading, non-existing dimension " + std::to_string(I));
      Target = Size;
    }
    Tri Same = sizeEq(Size, Target);
    if (Same == Tri::False || Same == Tri::Unknown) {
      Tri One = sizeEq(Size, 1);
      if (One == Tri::Unknown)
        return undecidedOutcome(Out, undecided("==", Size, 1));
      if (One == Tri::False) {
        // Not 1: LibTorch goes on only when the sizes match.
        Tri Match = Same == Tri::False ? Tri::False : requireEq(Size, Target);
        if (Match == Tri::Unknown)
          return undecidedOutcome(Out, undecided("==", Size, Target));
        if (Match == Tri::False)
          return throws("The expanded size of the tensor (" + sizeText(Target) +
                        ") must match the existing size (" + sizeText(Size) +
                        ") at non-singleton dimension " + std::to_string(I) +
                        ".  Target sizes: " + dimsText(Sizes) +
                        ".  Tensor sizes: " + dimsText(TS));
      } else {
        Size = Target;
        Stride = 0;
      }
    }
    ES[I] = Size;
    ESt[I] = Stride;
  }
  return viewWith(In, ES, ESt, *In.Offset);
}

// as_strided (TensorShape.cpp, setStrided + checkInBoundsForStorage).
OpOutcome asStrided(const TensorValue &In, const Shape &Sizes,
                    const Shape &Strides, std::optional<int64_t> Offset,
                    std::optional<SymSize> StorageBytes) {
  OpOutcome Out = viewOf(In);
  if (Sizes.size() != Strides.size())
    return throws("mismatch in length of strides and shape");
  for (const SymSize &S : Strides) {
    Tri Negative = sizeLt(S, 0);
    if (Negative == Tri::Unknown)
      return undecidedOutcome(Out, undecided("<", S, 0));
    if (Negative == Tri::True)
      return throws("as_strided: Negative strides are not supported at the "
                    "moment, got strides: " + dimsText(Strides));
  }
  SymSize At;
  if (Offset) {
    At = *Offset;
  } else {
    if (!In.Offset) {
      Out.Value.markUnknown("storage offset of the input is unknown");
      return Out;
    }
    At = *In.Offset;
  }
  if (StorageBytes && In.Type) {
    // setStorage's bound check; a geometry whose extent overflows is
    // out of bounds for any storage.
    bool Undecided = false;
    auto Needed = checkedStorageBytes(Sizes, Strides, itemSize(*In.Type), At,
                                      &Undecided);
    if (!Needed && Undecided)
      return undecidedOutcome(Out, "the storage as_strided needs is not known");
    if (!Needed)
      return throws("Storage size calculation overflowed with sizes=" +
                    dimsText(Sizes) + " and strides=" + dimsText(Strides));
    Tri Outside = sizeGt(*Needed, *StorageBytes);
    if (Outside == Tri::Unknown)
      return undecidedOutcome(Out, undecided(">", *Needed, *StorageBytes));
    if (Outside == Tri::True)
      return throws("setStorage: sizes " + dimsText(Sizes) + ", strides " +
                    dimsText(Strides) + ", storage offset " + sizeText(At) +
                    ", and itemsize " + std::to_string(itemSize(*In.Type)) +
                    " requiring a storage size of " + sizeText(*Needed) +
                    " are out of bounds for storage of size " +
                    sizeText(*StorageBytes));
  }
  return viewWith(In, Sizes, Strides, At);
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
  const Shape &S = *In.Sizes, &St = *In.Strides;
  SymSize DiagSize =
      Offset >= 0 ? sizeMax(sizeMin(S[*D1], S[*D2] - Offset), 0)
                  : sizeMax(sizeMin(S[*D1] + Offset, S[*D2]), 0);
  SymSize NewOffset = *In.Offset;
  Tri NonEmpty = sizeGt(DiagSize, 0);
  if (NonEmpty == Tri::Unknown)
    return undecidedOutcome(Out, undecided(">", DiagSize, 0));
  if (NonEmpty == Tri::True)
    NewOffset = NewOffset + (Offset >= 0 ? Offset * St[*D2] : -Offset * St[*D1]);
  Shape Sizes, Strides;
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
  SymSize MaxSize = Rank == 0 ? SymSize(1) : (*In.Sizes)[*D];
  // The window fits, or LibTorch throws: stated when not decided.
  Tri TooBig = !requireLe(SymSize(Size), MaxSize);
  if (TooBig == Tri::Unknown)
    return undecidedOutcome(Out, undecided(">", SymSize(Size), MaxSize));
  if (TooBig == Tri::True)
    return throws("maximum size for tensor at dimension " + std::to_string(*D) +
                  " is " + sizeText(MaxSize) + " but size is " +
                  std::to_string(Size));
  if (Step <= 0)
    return throws("step is " + std::to_string(Step) + " but must be > 0");
  if (Size < 0)
    return throws("size is " + std::to_string(Size) + " but must be >= 0");
  if (Rank == 0)
    return viewWith(In, {SymSize(Size)}, {SymSize(1)}, *In.Offset);
  Shape Sizes = *In.Sizes, Strides = *In.Strides;
  Sizes.push_back(Size);
  Strides.push_back(Strides[*D]);
  Sizes[*D] = SymSize::floorDiv(Sizes[*D] - Size, Step) + 1;
  Strides[*D] = Strides[*D] * Step;
  return viewWith(In, Sizes, Strides, *In.Offset);
}

// movedim (TensorShape.cpp): sources go to their destinations, the other
// dims keep their order in the free places; then permute.
OpOutcome movedim(const TensorValue &In, const DimList &Source,
                  const DimList &Destination) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Source.size() != Destination.size())
    return throws("movedim: Invalid source or destination dims: source (" +
                  dimsText(shapeOf(Source)) +
                  " dims) should contain the same number of dims as "
                  "destination (" + dimsText(shapeOf(Destination)) + " dims)");
  if (Rank == 0)
    return alias(In);
  DimList Order(Rank, -1);
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
    return reshape(In, {SymSize(1)});
  if (*S == *E)
    return selfOf(In, "flatten of a single dim returns self");
  Shape Flat;
  for (int64_t K = 0; K < *S; ++K)
    Flat.push_back((*In.Sizes)[K]);
  SymSize Mid = 1;
  for (int64_t K = *S; K <= *E; ++K)
    Mid = Mid * (*In.Sizes)[K];
  Flat.push_back(Mid);
  for (int64_t K = *E + 1; K < Rank; ++K)
    Flat.push_back((*In.Sizes)[K]);
  return reshape(In, Flat);
}

// unflatten (TensorShape.cpp): view(shape) with the dim replaced by Sizes
// (one -1 inferred from the dim's size).
OpOutcome unflatten(const TensorValue &In, int64_t Dim, const Shape &Sizes) {
  OpOutcome Out = viewOf(In);
  if (!needLayout(In, Out))
    return Out;
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  auto D = wrapDim(Dim, Rank);
  if (!D || Rank == 0)
    return throws(rangeError(Rank));
  if (Sizes.empty())
    return throws("unflatten: sizes must be non-empty");
  Shape Inner;
  Tri Valid = inferSize(Sizes, (*In.Sizes)[*D], Inner);
  if (Valid == Tri::Unknown)
    return undecidedOutcome(Out, "whether sizes " + dimsText(Sizes) +
                                     " multiply up to " +
                                     sizeText((*In.Sizes)[*D]) + " is not known");
  if (Valid == Tri::False)
    return throws("unflatten: Provided sizes " + dimsText(Sizes) +
                  " don't multiply up to the size of dim " +
                  std::to_string(Dim) + " (" + sizeText((*In.Sizes)[*D]) +
                  ") in the input tensor");
  Shape Unflat(In.Sizes->begin(), In.Sizes->begin() + *D);
  Unflat.insert(Unflat.end(), Inner.begin(), Inner.end());
  Unflat.insert(Unflat.end(), In.Sizes->begin() + *D + 1, In.Sizes->end());
  return viewAs(In, Unflat);
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
  Shape Sizes = *In.Sizes, Strides = *In.Strides;
  SymSize Offset = *In.Offset;
  if (Old == New)
    return viewWith(Out.Value, Sizes, Strides, Offset);
  std::string What = std::string("to view ") + dtypeName(*In.Type) + " as " +
                     dtypeName(Type) + " (different element sizes)";
  if (Sizes.empty())
    return throws("self.dim() cannot be 0 " + What);
  auto Require = [&](Tri T, const std::string &Error,
                     const std::string &Question) -> std::optional<OpOutcome> {
    if (T == Tri::Unknown)
      return undecidedOutcome(Out, Question);
    if (T == Tri::False)
      return throws(Error);
    return std::nullopt;
  };
  if (Old < New)
    if (auto R = Require(sizeDivides(New / Old, Sizes.back()),
                         "self.size(-1) must be divisible by " +
                             std::to_string(New / Old) + " " + What +
                             ", but got " + sizeText(Sizes.back()),
                         "whether " + sizeText(Sizes.back()) +
                             " is divisible by " + std::to_string(New / Old) +
                             " is not known"))
      return *R;
  if (auto R = Require(sizeEq(Strides.back(), 1),
                       "self.stride(-1) must be 1 " + What,
                       undecided("==", Strides.back(), 1)))
    return *R;
  if (Old > New) {
    int64_t R = Old / New;
    for (size_t K = 0; K + 1 < Strides.size(); ++K)
      Strides[K] = Strides[K] * R;
    Sizes.back() = Sizes.back() * R;
    Offset = Offset * R;
  } else {
    int64_t R = New / Old;
    if (auto E = Require(sizeDivides(R, Offset),
                         "self.storage_offset() must be divisible by " +
                             std::to_string(R) + " " + What,
                         "whether the offset is divisible by " +
                             std::to_string(R) + " is not known"))
      return *E;
    for (size_t K = 0; K + 1 < Strides.size(); ++K) {
      if (auto E = Require(sizeDivides(R, Strides[K]),
                           "self.stride(" + std::to_string(K) +
                               ") must be divisible by " + std::to_string(R) +
                               " " + What,
                           "whether a stride is divisible by " +
                               std::to_string(R) + " is not known"))
        return *E;
      Strides[K] = SymSize::floorDiv(Strides[K], R);
    }
    Sizes.back() = SymSize::floorDiv(Sizes.back(), R);
    Offset = SymSize::floorDiv(Offset, R);
  }
  return viewWith(Out.Value, Sizes, Strides, Offset);
}

} // namespace tma
