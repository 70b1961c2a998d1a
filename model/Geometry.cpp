// Geometry rules, each a transcription of the ATen function it names.
// Where ATen has a subtle tie-break, the comment says which one and why the
// result matters for storage accounting.
#include "model/Geometry.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace tma {

int64_t numel(const Shape &Sizes) {
  uint64_t N = 1;
  for (int64_t S : Sizes)
    N *= static_cast<uint64_t>(S);
  return static_cast<int64_t>(N);
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

// c10::safe_multiply_u64 accumulates the overflow flag over the running
// product, then safe_compute_numel compares the result with int64's max.
std::optional<int64_t> checkedNumel(const Shape &Sizes) {
  uint64_t N = 1;
  bool Overflowed = false;
  for (int64_t S : Sizes)
    Overflowed |= __builtin_mul_overflow(N, static_cast<uint64_t>(S), &N);
  if (Overflowed ||
      N > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return std::nullopt;
  return static_cast<int64_t>(N);
}

// EmptyTensor.cpp, computeStorageNbytes: a size-0 dim needs no storage;
// otherwise 1 + sum(stride * (size - 1)), plus the offset, times the item
// size, each step checked in uint64, and the total against storage_max().
std::optional<int64_t> checkedStorageBytes(const Shape &Sizes,
                                           const Shape &Strides,
                                           int64_t ItemSize, int64_t Offset) {
  uint64_t Size = 1;
  bool Overflowed = false;
  for (size_t I = 0; I < Sizes.size(); ++I) {
    if (Sizes[I] == 0)
      return 0;
    uint64_t Strided;
    Overflowed |= __builtin_mul_overflow(static_cast<uint64_t>(Strides[I]),
                                         static_cast<uint64_t>(Sizes[I] - 1),
                                         &Strided);
    Overflowed |= __builtin_add_overflow(Size, Strided, &Size);
  }
  Overflowed |= __builtin_add_overflow(Size, static_cast<uint64_t>(Offset), &Size);
  Overflowed |= __builtin_mul_overflow(Size, static_cast<uint64_t>(ItemSize), &Size);
  if (Overflowed ||
      Size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return std::nullopt;
  return static_cast<int64_t>(Size);
}

Shape contiguousStrides(const Shape &Sizes) {
  Shape Strides(Sizes.size());
  uint64_t Next = 1;
  for (size_t I = Sizes.size(); I-- > 0;) {
    Strides[I] = static_cast<int64_t>(Next);
    Next *= static_cast<uint64_t>(std::max<int64_t>(Sizes[I], 1));
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

bool isContiguous(const Shape &Sizes, const Shape &Strides) {
  if (numel(Sizes) == 0)
    return true;
  int64_t Expected = 1;
  for (size_t I = Sizes.size(); I-- > 0;) {
    if (Sizes[I] == 1)
      continue;
    if (Strides[I] != Expected)
      return false;
    Expected *= Sizes[I];
  }
  return true;
}

bool isChannelsLastContiguous(const Shape &Sizes, const Shape &Strides) {
  if (Sizes.size() != 4)
    return false;
  int64_t Expected = 1;
  for (int D : {1, 3, 2, 0}) {
    if (Sizes[D] == 1)
      continue;
    if (Strides[D] != Expected)
      return false;
    Expected *= Sizes[D];
  }
  return true;
}

bool isNonOverlappingAndDense(const Shape &Sizes, const Shape &Strides) {
  // TensorImpl::refresh_contiguous caches is_contiguous_ ||
  // is_channels_last_contiguous_ || compute_non_overlapping_and_dense().
  // Only the first term matters beyond the sort below: it makes every
  // tensor with no elements dense, whatever its strides.
  if (isContiguous(Sizes, Strides))
    return true;
  size_t Rank = Sizes.size();
  if (Rank == 0)
    return true;
  if (Rank == 1)
    return Sizes[0] < 2 || Strides[0] == 1;
  std::vector<size_t> Perm(Rank);
  std::iota(Perm.begin(), Perm.end(), 0);
  // Size-0/1 dims sort last; the rest by stride (std::sort, as ATen does:
  // ties cannot change the verdict).
  std::sort(Perm.begin(), Perm.end(), [&](size_t A, size_t B) {
    if (Sizes[A] < 2)
      return false;
    if (Sizes[B] < 2)
      return true;
    return Strides[A] < Strides[B];
  });
  int64_t Required = 1;
  for (size_t D : Perm) {
    if (Sizes[D] < 2)
      return true;
    if (Strides[D] != Required)
      return false;
    Required *= Sizes[D];
  }
  return true;
}

// is_channels_last_strides_2d_s4 (c10/core/MemoryFormat.h), which decides
// suggest_memory_format() and so the layout of clone/to/empty_like outputs.
bool suggestsChannelsLast(const Shape &Sizes, const Shape &Strides) {
  if (Sizes.size() != 4)
    return false;
  if (Strides[1] == 0)
    return false;
  int64_t Min = 0;
  for (int D : {1, 3, 2, 0}) {
    if (Sizes[D] == 0)
      return false;
    if (Strides[D] < Min)
      return false;
    // N111 and N11W tensors default to NCHW.
    if (D == 0 && Min == Strides[1])
      return false;
    Min = Strides[D];
    if (Sizes[D] > 1)
      Min *= Sizes[D];
  }
  return true;
}

// at::detail::computeStride_impl (aten/src/ATen/TensorUtils.cpp).
//
// 1. A 0-dim input: every new stride is 1.
// 2. No elements: keep the old strides for an unchanged shape, otherwise
//    pack new contiguous strides (size 0 counted as 1).
// 3. Otherwise walk the old dims from the back, grouping them into chunks of
//    dims that are contiguous with each other (size-1 dims never end a
//    chunk). Each chunk must be covered exactly by a run of new dims, which
//    inherit the chunk's base stride.
std::optional<Shape> computeStride(const Shape &OldSizes, const Shape &OldStrides,
                                  const Shape &NewSizes) {
  if (OldSizes.empty())
    return Shape(NewSizes.size(), 1);
  int64_t N = numel(OldSizes);
  if (N == 0 && OldSizes == NewSizes)
    return OldStrides;
  Shape NewStrides(NewSizes.size());
  if (N == 0) {
    for (int64_t D = static_cast<int64_t>(NewSizes.size()) - 1; D >= 0; --D) {
      if (D == static_cast<int64_t>(NewSizes.size()) - 1)
        NewStrides[D] = 1;
      else
        NewStrides[D] =
            std::max<int64_t>(NewSizes[D + 1], 1) * NewStrides[D + 1];
    }
    return NewStrides;
  }
  int64_t ViewD = static_cast<int64_t>(NewSizes.size()) - 1;
  int64_t ChunkBaseStride = OldStrides.back();
  int64_t TensorNumel = 1;
  int64_t ViewNumel = 1;
  for (int64_t TensorD = static_cast<int64_t>(OldSizes.size()) - 1;
       TensorD >= 0; --TensorD) {
    TensorNumel *= OldSizes[TensorD];
    bool ChunkEnds =
        TensorD == 0 ||
        (OldSizes[TensorD - 1] != 1 &&
         OldStrides[TensorD - 1] != TensorNumel * ChunkBaseStride);
    if (!ChunkEnds)
      continue;
    while (ViewD >= 0 && (ViewNumel < TensorNumel || NewSizes[ViewD] == 1)) {
      NewStrides[ViewD] = ViewNumel * ChunkBaseStride;
      ViewNumel *= NewSizes[ViewD];
      --ViewD;
    }
    if (ViewNumel != TensorNumel)
      return std::nullopt;
    if (TensorD > 0) {
      ChunkBaseStride = OldStrides[TensorD - 1];
      TensorNumel = 1;
      ViewNumel = 1;
    }
  }
  if (ViewD != -1)
    return std::nullopt;
  return NewStrides;
}

std::optional<Shape> inferSize(const Shape &Target, int64_t Numel) {
  Shape Result = Target;
  int64_t NewSize = 1;
  std::optional<size_t> InferDim;
  for (size_t D = 0; D < Target.size(); ++D) {
    if (Target[D] == -1) {
      if (InferDim)
        return std::nullopt;
      InferDim = D;
    } else if (Target[D] >= 0) {
      NewSize *= Target[D];
    } else {
      return std::nullopt;
    }
  }
  if (Numel == NewSize || (InferDim && NewSize > 0 && Numel % NewSize == 0)) {
    if (InferDim) {
      if (NewSize == 0)
        return std::nullopt;
      Result[*InferDim] = Numel / NewSize;
    }
    return Result;
  }
  return std::nullopt;
}

// at::infer_dense_strides (aten/src/ATen/ExpandUtils.cpp): a stable
// insertion sort of dims by stride (0 strides are ambiguous and never move;
// equal strides put the larger size outward), then dense packing.
Shape inferDenseStrides(const Shape &Sizes, const Shape &Strides) {
  size_t Rank = Sizes.size();
  if (Rank == 0)
    return {};
  if (Rank == 1)
    return {1};
  std::vector<size_t> Perm(Rank);
  std::iota(Perm.rbegin(), Perm.rend(), 0);
  auto ShouldSwap = [&](size_t D0, size_t D1) {
    int64_t S0 = Strides[D0], S1 = Strides[D1];
    if (S0 == 0 || S1 == 0)
      return 0;
    if (S0 < S1)
      return -1;
    if (S0 > S1)
      return 1;
    return Sizes[D0] > Sizes[D1] ? 1 : 0;
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
  Shape Out(Rank);
  int64_t Cur = 1;
  for (size_t I = 0; I < Rank; ++I) {
    size_t D = Perm[I];
    Out[D] = Cur;
    if (Sizes[D] > 1)
      Cur *= Sizes[D];
  }
  return Out;
}

// clone(Preserve) uses empty_strided with the same strides for a
// non-overlapping-and-dense input; empty_like(Preserve) does the same and
// otherwise infers dense strides. Both therefore land here.
Shape preserveFormatStrides(const Shape &Sizes, const Shape &Strides) {
  if (isNonOverlappingAndDense(Sizes, Strides))
    return Strides;
  return inferDenseStrides(Sizes, Strides);
}

int64_t storageBytesFor(const Shape &Sizes, const Shape &Strides,
                        int64_t ItemSize) {
  uint64_t Span = 1;
  for (size_t I = 0; I < Sizes.size(); ++I) {
    if (Sizes[I] == 0)
      return 0;
    Span += static_cast<uint64_t>(Sizes[I] - 1) * static_cast<uint64_t>(Strides[I]);
  }
  return static_cast<int64_t>(Span * static_cast<uint64_t>(ItemSize));
}

std::optional<Shape> broadcastShapes(const Shape &A, const Shape &B) {
  size_t Rank = std::max(A.size(), B.size());
  Shape Out(Rank);
  for (size_t I = 0; I < Rank; ++I) {
    int64_t DA = I < Rank - A.size() ? 1 : A[I - (Rank - A.size())];
    int64_t DB = I < Rank - B.size() ? 1 : B[I - (Rank - B.size())];
    if (DA != DB && DA != 1 && DB != 1)
      return std::nullopt;
    Out[I] = DA == 1 ? DB : DA;
  }
  return Out;
}

// TensorIteratorBase::fast_set_up / reorder_dimensions /
// allocate_or_resize_outputs (aten/src/ATen/TensorIterator.cpp).
Shape tensorIteratorOutputStrides(const Shape &OutSizes,
                                 const std::vector<IterOperand> &Inputs) {
  size_t Rank = OutSizes.size();
  // Fast set-up: every operand has the output's shape.
  bool SameShape = std::all_of(Inputs.begin(), Inputs.end(),
                               [&](const IterOperand &Op) {
                                 return Op.Sizes == OutSizes;
                               });
  if (SameShape && !Inputs.empty()) {
    bool AllContiguous = true, AllChannelsLast = true, AllDense = true;
    for (const IterOperand &Op : Inputs) {
      AllContiguous &= isContiguous(Op.Sizes, Op.Strides);
      AllChannelsLast &= isChannelsLastContiguous(Op.Sizes, Op.Strides);
      AllDense &= isNonOverlappingAndDense(Op.Sizes, Op.Strides);
    }
    if (AllContiguous)
      return contiguousStrides(OutSizes);
    if (AllChannelsLast)
      return channelsLastStrides(OutSizes);
    if (AllDense) {
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
    for (size_t I = 0; I < Op.Sizes.size(); ++I)
      S[Offset + I] =
          (Op.Sizes[I] == 1 && OutSizes[Offset + I] != 1) ? 0 : Op.Strides[I];
    OpStrides.push_back(S);
  }

  // TensorIterator orders dims fastest-first: perm starts as [n-1 .. 0].
  std::vector<size_t> Perm(Rank);
  std::iota(Perm.rbegin(), Perm.rend(), 0);
  auto ShouldSwap = [&](size_t D0, size_t D1) {
    for (const Shape &S : OpStrides) {
      int64_t S0 = S[D0], S1 = S[D1];
      if (S0 == 0 || S1 == 0)
        continue;
      if (S0 < S1)
        return -1;
      if (S0 > S1)
        return 1;
      if (OutSizes[D0] > OutSizes[D1])
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
  bool Inverted = true;
  for (size_t J = 0; J < Rank; ++J)
    if (Perm[J] != Rank - J - 1)
      Inverted = false;
  if (Inverted)
    return contiguousStrides(OutSizes);
  // compatible_stride over the permuted shape, then un-permute.
  Shape Out(Rank);
  int64_t Next = 1;
  for (size_t J = 0; J < Rank; ++J) {
    Out[Perm[J]] = Next;
    Next *= OutSizes[Perm[J]];
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
