// Geometry rules that derive new sizes and strides, each a transcription of
// the ATen function it names: a view's strides (computeStride), a size
// inferred from -1 (inferSize), the strides of empty_like and of
// TensorIterator outputs, broadcasting, dim wrapping.
//
// 1. Geometry.cpp holds sizes, numel, packed strides and the contiguity
//    tests these rules build on.
// 2. Every comparison of sizes is a decision (model/Decide.h): exact for
//    constants, by facts and stated assumptions for symbols, Unknown
//    otherwise; an Unknown decision makes the function's answer Unknown
//    unless the answer does not depend on it.
#include "model/Geometry.h"
#include "model/Decide.h"
#include "model/GeometryImpl.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace tma {

using detail::dimsAssumedNotOne;


// at::detail::computeStride_impl (aten/src/ATen/TensorUtils.cpp).
//
// 1. A 0-dim input: every new stride is 1.
// 2. No elements: keep the old strides for an unchanged shape, otherwise
//    pack new contiguous strides (size 0 counted as 1).
// 3. Otherwise walk the old dims from the back, grouping them into chunks of
//    dims that are contiguous with each other (size-1 dims never end a
//    chunk). Each chunk must be covered exactly by a run of new dims, which
//    inherit the chunk's base stride.
// A contiguous input with as many elements as the new shape is the common
// case, and its answer is the new shape's contiguous strides whatever the
// sizes are; it is taken first so symbolic sizes need no other decision.
namespace {

/// int64 multiplication as ATen's unchecked loops get it: wrapping.
int64_t wrappingMul(int64_t A, int64_t B) {
  return static_cast<int64_t>(static_cast<uint64_t>(A) *
                              static_cast<uint64_t>(B));
}

/// computeStride over constants, to the bit: ATen's products are unchecked
/// int64, and hostile shapes whose products wrap must get its answer.
bool computeConstantStride(const DimList &OldSizes, const DimList &OldStrides,
                           const DimList &NewSizes, DimList &NewStrides) {
  int64_t N = 1;
  for (int64_t S : OldSizes)
    N = wrappingMul(N, S);
  if (N == 0 && OldSizes == NewSizes) {
    NewStrides = OldStrides;
    return true;
  }
  NewStrides.assign(NewSizes.size(), 0);
  if (N == 0) {
    for (int64_t D = static_cast<int64_t>(NewSizes.size()) - 1; D >= 0; --D) {
      if (D == static_cast<int64_t>(NewSizes.size()) - 1)
        NewStrides[D] = 1;
      else
        NewStrides[D] =
            wrappingMul(std::max<int64_t>(NewSizes[D + 1], 1), NewStrides[D + 1]);
    }
    return true;
  }
  int64_t ViewD = static_cast<int64_t>(NewSizes.size()) - 1;
  int64_t ChunkBaseStride = OldStrides.back();
  int64_t TensorNumel = 1;
  int64_t ViewNumel = 1;
  for (int64_t TensorD = static_cast<int64_t>(OldSizes.size()) - 1;
       TensorD >= 0; --TensorD) {
    TensorNumel = wrappingMul(TensorNumel, OldSizes[TensorD]);
    bool ChunkEnds =
        TensorD == 0 ||
        (OldSizes[TensorD - 1] != 1 &&
         OldStrides[TensorD - 1] != wrappingMul(TensorNumel, ChunkBaseStride));
    if (!ChunkEnds)
      continue;
    while (ViewD >= 0 && (ViewNumel < TensorNumel || NewSizes[ViewD] == 1)) {
      NewStrides[ViewD] = wrappingMul(ViewNumel, ChunkBaseStride);
      ViewNumel = wrappingMul(ViewNumel, NewSizes[ViewD]);
      --ViewD;
    }
    if (ViewNumel != TensorNumel)
      return false;
    if (TensorD > 0) {
      ChunkBaseStride = OldStrides[TensorD - 1];
      TensorNumel = 1;
      ViewNumel = 1;
    }
  }
  return ViewD == -1;
}

} // namespace

Tri computeStride(const Shape &OldSizes, const Shape &OldStrides,
                  const Shape &NewSizes, Shape &NewStrides, bool SameNumel) {
  if (!OldSizes.empty()) {
    auto OS = constantShape(OldSizes), OSt = constantShape(OldStrides),
         NS = constantShape(NewSizes);
    if (OS && OSt && NS) {
      DimList Strides;
      if (!computeConstantStride(*OS, *OSt, *NS, Strides))
        return Tri::False;
      NewStrides = shapeOf(Strides);
      return Tri::True;
    }
  }
  if (OldSizes.empty()) {
    NewStrides = Shape(NewSizes.size(), 1);
    return Tri::True;
  }
  SymSize N = numel(OldSizes);
  Tri Empty = shapeIsEmpty(OldSizes);
  if (Empty == Tri::Unknown)
    return Tri::Unknown;
  if (Empty == Tri::False && !constantShape(OldSizes) &&
      isContiguous(OldSizes, OldStrides) == Tri::True &&
      (SameNumel || sizeEq(numel(NewSizes), N) == Tri::True)) {
    // A non-empty tensor with as many elements: no new dim is 0.
    NewStrides = packedStridesOfNonEmpty(NewSizes);
    return Tri::True;
  }
  if (Empty == Tri::True && OldSizes == NewSizes) {
    NewStrides = OldStrides;
    return Tri::True;
  }
  NewStrides = Shape(NewSizes.size());
  if (Empty == Tri::True) {
    for (int64_t D = static_cast<int64_t>(NewSizes.size()) - 1; D >= 0; --D) {
      if (D == static_cast<int64_t>(NewSizes.size()) - 1)
        NewStrides[D] = 1;
      else
        NewStrides[D] = sizeMax(NewSizes[D + 1], 1) * NewStrides[D + 1];
    }
    return Tri::True;
  }
  int64_t ViewD = static_cast<int64_t>(NewSizes.size()) - 1;
  SymSize ChunkBaseStride = OldStrides.back();
  SymSize TensorNumel = 1;
  SymSize ViewNumel = 1;
  int64_t ChunkLast = static_cast<int64_t>(OldSizes.size()) - 1;
  // Whether the view's dims taken so far fall short of the chunk, when the
  // sizes leave it open (is `x.size(2) / n` more than 1?): each size of
  // the chunk and of the view taken so far assumed not 1, as dimIsOne
  // does, and asked again.
  auto FallsShort = [&](int64_t TensorD, int64_t ViewD) {
    Tri Short = sizeLt(ViewNumel, TensorNumel);
    if (Short != Tri::Unknown)
      return Short;
    if (!dimsAssumedNotOne(OldSizes.begin() + TensorD,
                           OldSizes.begin() + ChunkLast + 1) ||
        !dimsAssumedNotOne(NewSizes.begin() + ViewD + 1, NewSizes.end()))
      return Tri::Unknown;
    return sizeLt(ViewNumel, TensorNumel);
  };
  for (int64_t TensorD = static_cast<int64_t>(OldSizes.size()) - 1;
       TensorD >= 0; --TensorD) {
    TensorNumel = TensorNumel * OldSizes[TensorD];
    Tri ChunkEnds = Tri::True;
    if (TensorD > 0) {
      Tri One = sizeEq(OldSizes[TensorD - 1], 1);
      Tri Joined = sizeEq(OldStrides[TensorD - 1], TensorNumel * ChunkBaseStride);
      ChunkEnds = triAnd(!One, !Joined);
      if (ChunkEnds == Tri::Unknown && One == Tri::Unknown && Joined == Tri::False)
        ChunkEnds = triAnd(!dimIsOne(OldSizes[TensorD - 1]), !Joined);
    }
    if (ChunkEnds == Tri::Unknown)
      return Tri::Unknown;
    if (ChunkEnds == Tri::False)
      continue;
    while (ViewD >= 0) {
      Tri Short = FallsShort(TensorD, ViewD);
      Tri One = sizeEq(NewSizes[ViewD], 1);
      Tri Take = triOr(Short, One);
      if (Take == Tri::Unknown && One == Tri::Unknown && Short == Tri::False)
        Take = triOr(Short, dimIsOne(NewSizes[ViewD]));
      if (Take == Tri::Unknown)
        return Tri::Unknown;
      if (Take == Tri::False)
        break;
      NewStrides[ViewD] = ViewNumel * ChunkBaseStride;
      ViewNumel = ViewNumel * NewSizes[ViewD];
      --ViewD;
    }
    Tri Covered = sizeEq(ViewNumel, TensorNumel);
    if (Covered != Tri::True)
      return Covered;
    if (TensorD > 0) {
      ChunkBaseStride = OldStrides[TensorD - 1];
      TensorNumel = 1;
      ViewNumel = 1;
      ChunkLast = TensorD - 1;
    }
  }
  return triOf(ViewD == -1);
}

// Constants follow ATen to the bit: infer_size multiplies in int64 without
// an overflow check, so a product that wraps around can match (a view of
// [2^62 + 1, 4] from 4 elements infers, then fails in computeStride).
static std::optional<Tri> inferConstantSize(const Shape &Target,
                                            const SymSize &Numel,
                                            Shape &Result) {
  auto Sizes = constantShape(Target);
  auto N = Numel.constant();
  if (!Sizes || !N)
    return std::nullopt;
  uint64_t NewSize = 1; // int64 arithmetic as the hardware wraps it
  std::optional<size_t> InferDim;
  for (size_t D = 0; D < Sizes->size(); ++D) {
    int64_t S = (*Sizes)[D];
    if (S == -1) {
      if (InferDim)
        return Tri::False;
      InferDim = D;
    } else if (S >= 0) {
      NewSize *= static_cast<uint64_t>(S);
    } else {
      return Tri::False;
    }
  }
  int64_t Product = static_cast<int64_t>(NewSize);
  if (*N == Product || (InferDim && Product > 0 && *N % Product == 0)) {
    if (InferDim) {
      if (Product == 0)
        return Tri::False;
      Result[*InferDim] = *N / Product;
    }
    return Tri::True;
  }
  return Tri::False;
}

Tri inferSize(const Shape &Target, const SymSize &Numel, Shape &Result) {
  Result = Target;
  if (auto Constant = inferConstantSize(Target, Numel, Result))
    return *Constant;
  SymSize NewSize = 1;
  std::optional<size_t> InferDim;
  for (size_t D = 0; D < Target.size(); ++D) {
    if (Target[D] == SymSize(-1)) {
      if (InferDim)
        return Tri::False;
      InferDim = D;
      continue;
    }
    Tri NonNegative = sizeGe(Target[D], 0);
    if (NonNegative != Tri::True)
      return NonNegative;
    NewSize = NewSize * Target[D];
  }
  // The view goes on only where the element counts agree (LibTorch throws
  // otherwise): stated when the facts do not already say so.
  if (!InferDim)
    return requireEq(Numel, NewSize);
  if (auto C = NewSize.constant(); C && *C == 0)
    return Tri::False;
  if (auto CN = Numel.constant(), CS = NewSize.constant(); CN && CS) {
    if (*CS <= 0 || *CN % *CS != 0)
      return Tri::False;
    Result[*InferDim] = *CN / *CS;
    return Tri::True;
  }
  Tri Positive = sizeGt(NewSize, 0);
  if (Positive != Tri::True)
    return Positive;
  // The view goes on only where the other sizes divide the element count.
  Tri Divides = requireDivides(NewSize, Numel);
  if (Divides != Tri::True)
    return Divides;
  Result[*InferDim] = SymSize::floorDiv(Numel, NewSize);
  return Tri::True;
}

// at::infer_dense_strides (aten/src/ATen/ExpandUtils.cpp): a stable
// insertion sort of dims by stride (0 strides are ambiguous and never move;
// equal strides put the larger size outward), then dense packing.
std::optional<Shape> inferDenseStrides(const Shape &Sizes, const Shape &Strides) {
  size_t Rank = Sizes.size();
  if (Rank == 0)
    return Shape{};
  if (Rank == 1)
    return Shape{1};
  std::vector<size_t> Perm(Rank);
  std::iota(Perm.rbegin(), Perm.rend(), 0);
  bool Undecided = false;
  auto ShouldSwap = [&](size_t D0, size_t D1) {
    const SymSize &S0 = Strides[D0], &S1 = Strides[D1];
    Tri Zero = triOr(sizeEq(S0, 0), sizeEq(S1, 0));
    if (Zero == Tri::True)
      return 0;
    Tri Less = sizeLt(S0, S1), More = sizeGt(S0, S1);
    if (Zero == Tri::Unknown || Less == Tri::Unknown || More == Tri::Unknown) {
      Undecided = true;
      return 0;
    }
    if (Less == Tri::True)
      return -1;
    if (More == Tri::True)
      return 1;
    Tri Bigger = sizeGt(Sizes[D0], Sizes[D1]);
    Undecided |= Bigger == Tri::Unknown;
    return Bigger == Tri::True ? 1 : 0;
  };
  for (size_t I = 1; I < Rank; ++I) {
    size_t D1 = I;
    for (int64_t D0 = static_cast<int64_t>(I) - 1; D0 >= 0; --D0) {
      int Cmp = ShouldSwap(Perm[D0], Perm[D1]);
      if (Cmp > 0) {
        std::swap(Perm[D0], Perm[D1]);
        D1 = static_cast<size_t>(D0);
      } else if (Cmp < 0) {
        break;
      }
    }
  }
  if (Undecided)
    return std::nullopt;
  Shape Out(Rank);
  SymSize Cur = 1;
  for (size_t I = 0; I < Rank; ++I) {
    size_t D = Perm[I];
    Out[D] = Cur;
    Tri Big = sizeGt(Sizes[D], 1);
    if (Big == Tri::Unknown)
      return std::nullopt;
    if (Big == Tri::True)
      Cur = Cur * Sizes[D];
  }
  return Out;
}

// clone(Preserve) uses empty_strided with the same strides for a
// non-overlapping-and-dense input; empty_like(Preserve) does the same and
// otherwise infers dense strides. Both therefore land here.
std::optional<Shape> preserveFormatStrides(const Shape &Sizes,
                                           const Shape &Strides) {
  Tri Dense = isNonOverlappingAndDense(Sizes, Strides);
  if (Dense == Tri::True)
    return Strides;
  if (Dense == Tri::Unknown)
    return std::nullopt;
  return inferDenseStrides(Sizes, Strides);
}

Tri broadcastShapes(const Shape &A, const Shape &B, Shape &Out) {
  size_t Rank = std::max(A.size(), B.size());
  Out = Shape(Rank);
  for (size_t I = 0; I < Rank; ++I) {
    SymSize DA = I < Rank - A.size() ? SymSize(1) : A[I - (Rank - A.size())];
    SymSize DB = I < Rank - B.size() ? SymSize(1) : B[I - (Rank - B.size())];
    // A dim of 1 (a missing one, a scalar's) takes the other side as it
    // is: nothing about that side needs deciding (or assuming).
    if (DA.constant() == 1 || DB.constant() == 1) {
      Out[I] = DA.constant() == 1 ? DB : DA;
      continue;
    }
    Tri Same = sizeEq(DA, DB);
    if (Same == Tri::True) {
      Out[I] = DA;
      continue;
    }
    Tri AOne = sizeEq(DA, 1), BOne = sizeEq(DB, 1);
    // One side may be 1 and the other is not: the result is the other
    // side either way (were they both not 1, they must be equal).
    if (AOne == Tri::Unknown && BOne == Tri::False) {
      Out[I] = DB;
      continue;
    }
    if (BOne == Tri::Unknown && AOne == Tri::False) {
      Out[I] = DA;
      continue;
    }
    // Both may be 1: assumed not (stated), as an input's size is.
    if (AOne == Tri::Unknown && BOne == Tri::Unknown) {
      AOne = dimIsOne(DA);
      BOne = dimIsOne(DB);
    }
    if (AOne == Tri::True) {
      Out[I] = DB;
      continue;
    }
    if (BOne == Tri::True) {
      Out[I] = DA;
      continue;
    }
    if (AOne == Tri::Unknown || BOne == Tri::Unknown)
      return Tri::Unknown;
    // Neither is 1: they must be equal, or LibTorch throws.
    Tri Equal = requireEq(DA, DB);
    if (Equal != Tri::True)
      return Equal;
    Out[I] = DA;
  }
  return Tri::True;
}

// TensorIteratorBase::fast_set_up / reorder_dimensions /
// allocate_or_resize_outputs (aten/src/ATen/TensorIterator.cpp).
std::optional<Shape> tensorIteratorOutputStrides(
    const Shape &OutSizes, const std::vector<IterOperand> &Inputs) {
  size_t Rank = OutSizes.size();
  // Fast set-up: every operand has the output's shape.
  bool SameShape = std::all_of(Inputs.begin(), Inputs.end(),
                               [&](const IterOperand &Op) {
                                 return Op.Sizes == OutSizes;
                               });
  if (SameShape && !Inputs.empty()) {
    Tri AllContiguous = Tri::True, AllChannelsLast = Tri::True,
        AllDense = Tri::True;
    for (const IterOperand &Op : Inputs) {
      AllContiguous = triAnd(AllContiguous, isContiguous(Op.Sizes, Op.Strides));
      AllChannelsLast =
          triAnd(AllChannelsLast, isChannelsLastContiguous(Op.Sizes, Op.Strides));
      AllDense = triAnd(AllDense, isNonOverlappingAndDense(Op.Sizes, Op.Strides));
    }
    if (AllContiguous == Tri::True)
      return contiguousStrides(OutSizes);
    if (AllContiguous == Tri::Unknown)
      return std::nullopt;
    if (AllChannelsLast == Tri::True)
      return channelsLastStrides(OutSizes);
    if (AllChannelsLast == Tri::Unknown || AllDense == Tri::Unknown)
      return std::nullopt;
    if (AllDense == Tri::True) {
      bool SameStrides = std::all_of(
          Inputs.begin(), Inputs.end(), [&](const IterOperand &Op) {
            return Op.Strides == Inputs.front().Strides;
          });
      if (SameStrides)
        return Inputs.front().Strides;
    }
  }
  if (Rank <= 1)
    return contiguousStrides(OutSizes);

  // Broadcast each operand's strides to the output shape (compute_strides):
  // missing leading dims and expanded size-1 dims get stride 0.
  std::vector<Shape> OpStrides;
  for (const IterOperand &Op : Inputs) {
    // Broadcasting never adds dims to the output: an operand of higher rank
    // is a caller bug; treat it as a broadcast-free operand.
    if (Op.Sizes.size() > Rank || Op.Strides.size() != Op.Sizes.size())
      continue;
    Shape S(Rank, 0);
    size_t Offset = Rank - Op.Sizes.size();
    for (size_t I = 0; I < Op.Sizes.size(); ++I) {
      // A dim of the output's own size is not expanded, whatever it is.
      Tri Expanded =
          sizeEq(Op.Sizes[I], OutSizes[Offset + I]) == Tri::True
              ? Tri::False
              : triAnd(sizeEq(Op.Sizes[I], 1), sizeNe(OutSizes[Offset + I], 1));
      // Otherwise the sizes not known to be 1 are specialised (dimIsOne).
      if (Expanded == Tri::Unknown)
        Expanded = triAnd(dimIsOne(Op.Sizes[I]), !dimIsOne(OutSizes[Offset + I]));
      if (Expanded == Tri::Unknown)
        return std::nullopt;
      S[Offset + I] = Expanded == Tri::True ? SymSize(0) : Op.Strides[I];
    }
    OpStrides.push_back(S);
  }

  // TensorIterator orders dims fastest-first: perm starts as [n-1 .. 0].
  std::vector<size_t> Perm(Rank);
  std::iota(Perm.rbegin(), Perm.rend(), 0);
  bool Undecided = false;
  auto ShouldSwap = [&](size_t D0, size_t D1) {
    for (const Shape &S : OpStrides) {
      const SymSize &S0 = S[D0], &S1 = S[D1];
      Tri Zero = triOr(sizeEq(S0, 0), sizeEq(S1, 0));
      if (Zero == Tri::True)
        continue;
      Tri Less = sizeLt(S0, S1), More = sizeGt(S0, S1);
      if (Zero == Tri::Unknown || Less == Tri::Unknown ||
          More == Tri::Unknown) {
        Undecided = true;
        return 0;
      }
      if (Less == Tri::True)
        return -1;
      if (More == Tri::True)
        return 1;
      Tri Bigger = sizeGt(OutSizes[D0], OutSizes[D1]);
      if (Bigger == Tri::Unknown) {
        Undecided = true;
        return 0;
      }
      if (Bigger == Tri::True)
        return 1;
    }
    return 0;
  };
  for (size_t I = 1; I < Rank; ++I) {
    size_t D1 = I;
    for (int64_t D0 = static_cast<int64_t>(I) - 1; D0 >= 0; --D0) {
      int Cmp = ShouldSwap(Perm[D0], Perm[D1]);
      if (Cmp > 0) {
        std::swap(Perm[D0], Perm[D1]);
        D1 = static_cast<size_t>(D0);
      } else if (Cmp < 0) {
        break;
      }
    }
  }
  if (Undecided)
    return std::nullopt;
  bool Inverted = true;
  for (size_t J = 0; J < Rank; ++J)
    if (Perm[J] != Rank - J - 1)
      Inverted = false;
  if (Inverted)
    return contiguousStrides(OutSizes);
  // compatible_stride over the permuted shape, then un-permute.
  Shape Out(Rank);
  SymSize Next = 1;
  for (size_t J = 0; J < Rank; ++J) {
    Out[Perm[J]] = Next;
    Next = Next * OutSizes[Perm[J]];
  }
  return Out;
}

std::optional<int64_t> wrapDim(int64_t Dim, int64_t Rank) {
  int64_t R = Rank == 0 ? 1 : Rank;
  if (Dim < -R || Dim >= R)
    return std::nullopt;
  return Dim < 0 ? Dim + R : Dim;
}

} // namespace tma
