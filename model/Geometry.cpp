// Geometry rules, each a transcription of the ATen function it names, over
// sizes that may be symbolic. Where ATen has a subtle tie-break, the comment
// says which one and why the result matters for storage accounting.
//
// Every comparison of sizes is a decision (model/Decide.h): exact for
// constants, by facts and stated assumptions for symbols, Unknown
// otherwise; an Unknown decision makes the function's answer Unknown
// unless the answer does not depend on it.
//
// This file: sizes, numel, packed strides and the contiguity tests.
// GeometryDerive.cpp: the rules that derive new sizes and strides (views,
// inferred sizes, broadcasting, TensorIterator outputs).
#include "model/Geometry.h"
#include "model/Decide.h"
#include "model/GeometryImpl.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace tma {

Shape shapeOf(const std::vector<int64_t> &Ints) {
  return Shape(Ints.begin(), Ints.end());
}

std::optional<std::vector<int64_t>> constantShape(const Shape &S) {
  std::vector<int64_t> Out;
  Out.reserve(S.size());
  for (const SymSize &X : S) {
    auto C = X.constant();
    if (!C)
      return std::nullopt;
    Out.push_back(*C);
  }
  return Out;
}

SymSize numel(const Shape &Sizes) {
  SymSize N = 1;
  for (const SymSize &S : Sizes)
    N = N * S;
  return N;
}

std::optional<int64_t> checkedMul(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_mul_overflow(A, B, &R))
    return std::nullopt;
  return R;
}

std::optional<int64_t> checkedAdd(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_add_overflow(A, B, &R))
    return std::nullopt;
  return R;
}

std::optional<SymSize> addSizes(const std::optional<SymSize> &A,
                                const std::optional<SymSize> &B) {
  if (!A || !B)
    return std::nullopt;
  SymSize R = *A + *B;
  if (R.isError())
    return std::nullopt;
  return R;
}

std::optional<SymSize> mulSizes(const std::optional<SymSize> &A,
                                const std::optional<SymSize> &B) {
  if (!A || !B)
    return std::nullopt;
  SymSize R = *A * *B;
  if (R.isError())
    return std::nullopt;
  return R;
}

// c10::safe_multiply_u64 accumulates the overflow flag over the running
// product, then safe_compute_numel compares the result with int64's max.
std::optional<SymSize> checkedNumel(const Shape &Sizes) {
  if (auto C = constantShape(Sizes)) {
    uint64_t N = 1;
    bool Overflowed = false;
    for (int64_t S : *C)
      Overflowed |= __builtin_mul_overflow(N, static_cast<uint64_t>(S), &N);
    if (Overflowed ||
        N > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return SymSize(static_cast<int64_t>(N));
  }
  SymSize N = numel(Sizes);
  if (N.isError())
    return std::nullopt;
  return N;
}

// EmptyTensor.cpp, computeStorageNbytes: a size-0 dim needs no storage;
// otherwise 1 + sum(stride * (size - 1)), plus the offset, times the item
// size, each step checked in uint64, and the total against storage_max().
std::optional<SymSize> checkedStorageBytes(const Shape &Sizes,
                                           const Shape &Strides,
                                           const SymSize &ItemSize,
                                           const SymSize &Offset,
                                           bool *Unknown) {
  auto CS = constantShape(Sizes), CT = constantShape(Strides);
  auto CI = ItemSize.constant(), CO = Offset.constant();
  if (CS && CT && CI && CO) {
    uint64_t Size = 1;
    bool Overflowed = false;
    for (size_t I = 0; I < CS->size(); ++I) {
      if ((*CS)[I] == 0)
        return SymSize(0);
      uint64_t Strided;
      Overflowed |= __builtin_mul_overflow(static_cast<uint64_t>((*CT)[I]),
                                           static_cast<uint64_t>((*CS)[I] - 1),
                                           &Strided);
      Overflowed |= __builtin_add_overflow(Size, Strided, &Size);
    }
    Overflowed |= __builtin_add_overflow(Size, static_cast<uint64_t>(*CO), &Size);
    Overflowed |= __builtin_mul_overflow(Size, static_cast<uint64_t>(*CI), &Size);
    if (Overflowed ||
        Size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return SymSize(static_cast<int64_t>(Size));
  }
  // Packed strides from offset 0 span numel elements, empty or not: no
  // size needs to be assumed non-empty (zeros({n}) is 4·n bytes at n = 0).
  // So do packed strides in another dim order (nonzero()'s column-major
  // [u, k], strides (1, u)): a dense permutation of the sizes.
  if (Offset.constant() == 0 && Sizes.size() <= 4) {
    std::vector<size_t> Order(Sizes.size());
    std::iota(Order.begin(), Order.end(), 0);
    do {
      Shape Permuted;
      for (size_t D : Order)
        Permuted.push_back(Sizes[D]);
      Shape Packed = packedStridesOfNonEmpty(Permuted);
      bool IsPacked = true;
      for (size_t I = 0; I < Order.size() && IsPacked; ++I)
        IsPacked = Strides[Order[I]].identical(Packed[I]);
      if (IsPacked) {
        SymSize Bytes = numel(Sizes) * ItemSize;
        if (!Bytes.isError())
          return Bytes;
        break;
      }
    } while (std::next_permutation(Order.begin(), Order.end()));
  }
  SymSize Size = 1;
  for (size_t I = 0; I < Sizes.size(); ++I) {
    Tri Empty = sizeEq(Sizes[I], 0);
    if (Empty == Tri::True)
      return SymSize(0);
    if (Empty == Tri::Unknown) {
      if (Unknown)
        *Unknown = true;
      return std::nullopt;
    }
    Size = Size + Strides[I] * (Sizes[I] - 1);
  }
  Size = (Size + Offset) * ItemSize;
  if (Size.isError())
    return std::nullopt;
  return Size;
}

Shape contiguousStrides(const Shape &Sizes) {
  if (auto C = constantShape(Sizes)) {
    Shape Strides(C->size());
    uint64_t Next = 1;
    for (size_t I = C->size(); I-- > 0;) {
      Strides[I] = static_cast<int64_t>(Next);
      Next *= static_cast<uint64_t>(std::max<int64_t>((*C)[I], 1));
    }
    return Strides;
  }
  Shape Strides(Sizes.size());
  SymSize Next = 1;
  for (size_t I = Sizes.size(); I-- > 0;) {
    Strides[I] = Next;
    // The outermost size is in no stride: asking whether it is 0 would
    // state an assumption nothing needs (`n >= 1` for zeros({n})).
    if (I > 0)
      Next = Next * sizeMax(Sizes[I], 1);
  }
  return Strides;
}

Shape packedStridesOfNonEmpty(const Shape &Sizes) {
  Shape Strides(Sizes.size());
  SymSize Next = 1;
  for (size_t I = Sizes.size(); I-- > 0;) {
    Strides[I] = Next;
    Next = Next * Sizes[I];
  }
  return Strides;
}

Shape channelsLastStrides(const Shape &Sizes) {
  if (Sizes.size() != 4)
    return contiguousStrides(Sizes);
  // c10::get_channels_last_strides_2d multiplies the raw sizes (no
  // max(size, 1), unlike contiguous_strides): a size-0 dim zeroes the
  // strides outside it ([2,0,3,3] -> [0,1,0,0]).
  Shape Strides(4);
  Strides[1] = 1;
  Strides[3] = Sizes[1];
  Strides[2] = Strides[3] * Sizes[3];
  Strides[0] = Strides[2] * Sizes[2];
  return Strides;
}

namespace detail {

/// Each dim of [First, Last) not decided to be 1 or not is assumed not
/// (dimIsOne, stated); false when one stays undecided.
bool dimsAssumedNotOne(Shape::const_iterator First, Shape::const_iterator Last) {
  return std::all_of(First, Last,
                     [](const SymSize &S) { return dimIsOne(S) != Tri::Unknown; });
}
bool dimsAssumedNotOne(const Shape &Sizes) {
  return dimsAssumedNotOne(Sizes.begin(), Sizes.end());
}

} // namespace detail

using detail::dimsAssumedNotOne;

namespace {

/// Dims in Order, each of size 1 skipped, must have the strides of a dense
/// packing in that order.
Tri packedInOrder(const Shape &Sizes, const Shape &Strides,
                  const std::vector<size_t> &Order) {
  SymSize Expected = 1;
  for (size_t I : Order) {
    Tri One = sizeEq(Sizes[I], 1);
    if (One == Tri::True)
      continue;
    Tri Same = sizeEq(Strides[I], Expected);
    // A stride that is the packed one only if another dim is 1
    // (`H * W * (C / g)` against `H * W`): every dim assumed not 1, as
    // dimIsOne states it, and asked again.
    if (Same == Tri::Unknown && dimsAssumedNotOne(Sizes))
      Same = sizeEq(Strides[I], Expected);
    // A dim that may be of size 1 (x.size(2) / 2) but has the packed
    // stride is packed either way: Expected * 1 is Expected. Otherwise
    // whether it is 1 matters: assumed not, stated (dimIsOne).
    if (One == Tri::Unknown && Same == Tri::False)
      One = dimIsOne(Sizes[I]);
    if (One == Tri::Unknown && Same != Tri::True)
      return Tri::Unknown;
    if (Same != Tri::True)
      return Same;
    Expected = Expected * Sizes[I];
  }
  return Tri::True;
}

/// A tensor with no elements is contiguous whatever its strides: Packed
/// decides unless the tensor may be empty.
Tri orEmpty(const Shape &Sizes, Tri Packed) {
  if (Packed == Tri::True)
    return Tri::True;
  // Only a verdict of not packed needs the tensor non-empty (stated when
  // undecided, shapeIsEmpty); an undecided one stays undecided anyway.
  Tri Empty = Packed == Tri::False ? shapeIsEmpty(Sizes) : sizeEq(numel(Sizes), 0);
  if (Empty == Tri::True)
    return Tri::True;
  if (Packed == Tri::False && Empty == Tri::False)
    return Tri::False;
  return Tri::Unknown;
}

} // namespace

Tri isContiguous(const Shape &Sizes, const Shape &Strides) {
  std::vector<size_t> Order(Sizes.size());
  std::iota(Order.rbegin(), Order.rend(), 0);
  return orEmpty(Sizes, packedInOrder(Sizes, Strides, Order));
}

Tri isChannelsLastContiguous(const Shape &Sizes, const Shape &Strides) {
  if (Sizes.size() != 4)
    return Tri::False;
  return packedInOrder(Sizes, Strides, {1, 3, 2, 0});
}

Tri isNonOverlappingAndDense(const Shape &Sizes, const Shape &Strides) {
  // TensorImpl::refresh_contiguous caches is_contiguous_ ||
  // is_channels_last_contiguous_ || compute_non_overlapping_and_dense().
  // Only the first term matters beyond the sort below: it makes every
  // tensor with no elements dense, whatever its strides.
  Tri Contiguous = isContiguous(Sizes, Strides);
  if (Contiguous == Tri::True)
    return Tri::True;
  size_t Rank = Sizes.size();
  if (Rank == 0)
    return Tri::True;
  // Asked in turn: a question a verdict does not need records nothing.
  if (Rank == 1) {
    if (Contiguous == Tri::True || sizeEq(Strides[0], 1) == Tri::True)
      return Tri::True;
    return triOr(Contiguous, triOr(sizeLt(Sizes[0], 2), sizeEq(Strides[0], 1)));
  }
  // Size-0/1 dims sort last; the rest by stride (std::sort, as ATen does:
  // ties cannot change the verdict). Every comparison must be decided.
  std::vector<Tri> Small(Rank);
  for (size_t D = 0; D < Rank; ++D) {
    Small[D] = sizeLt(Sizes[D], 2);
    // A computed size (x.size(3) / 2) specialised like an input's: not 0
    // or 1, stated (dimIsOne).
    if (Small[D] == Tri::Unknown && dimIsOne(Sizes[D]) == Tri::False)
      Small[D] = sizeLt(Sizes[D], 2);
    if (Small[D] == Tri::Unknown)
      return Tri::Unknown;
  }
  bool Undecided = false;
  std::vector<size_t> Perm(Rank);
  std::iota(Perm.begin(), Perm.end(), 0);
  std::stable_sort(Perm.begin(), Perm.end(), [&](size_t A, size_t B) {
    if (Small[A] == Tri::True)
      return false;
    if (Small[B] == Tri::True)
      return true;
    Tri Less = sizeLt(Strides[A], Strides[B]);
    Undecided |= Less == Tri::Unknown;
    return Less == Tri::True;
  });
  if (Undecided)
    return Tri::Unknown;
  SymSize Required = 1;
  for (size_t D : Perm) {
    if (Small[D] == Tri::True)
      return Tri::True;
    Tri Same = sizeEq(Strides[D], Required);
    if (Same != Tri::True)
      return triOr(Contiguous, Same);
    Required = Required * Sizes[D];
  }
  return Tri::True;
}

// is_channels_last_strides_2d_s4 (c10/core/MemoryFormat.h), which decides
// suggest_memory_format() and so the layout of clone/to/empty_like outputs.
Tri suggestsChannelsLast(const Shape &Sizes, const Shape &Strides) {
  if (Sizes.size() != 4)
    return Tri::False;
  Tri ZeroC = sizeEq(Strides[1], 0);
  if (ZeroC != Tri::False)
    return !ZeroC;
  SymSize Min = 0;
  for (int D : {1, 3, 2, 0}) {
    Tri Empty = sizeEq(Sizes[D], 0);
    if (Empty != Tri::False)
      return !Empty;
    Tri Below = sizeLt(Strides[D], Min);
    if (Below != Tri::False)
      return !Below;
    // N111 and N11W tensors default to NCHW.
    if (D == 0) {
      Tri Same = sizeEq(Min, Strides[1]);
      if (Same != Tri::False)
        return !Same;
    }
    Min = Strides[D];
    Tri Big = sizeGt(Sizes[D], 1);
    if (Big == Tri::Unknown)
      return Tri::Unknown;
    if (Big == Tri::True)
      Min = Min * Sizes[D];
  }
  return Tri::True;
}

} // namespace tma
