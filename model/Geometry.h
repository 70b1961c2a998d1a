// Tensor geometry as ATen computes it: sizes, strides, contiguity, the
// view-compatibility test behind view()/reshape(), and the stride choices of
// the ops that allocate.
//
// Style follows ATen's TensorUtils.cpp: free functions, no I/O; each
// function names the ATen function it mirrors
// (../shared/design/aten-rules.md has the sources).
//
// Sizes are SymSizes: concrete or symbolic. Every question a function asks
// of them (is this dim 1? is this stride the one expected?) goes through
// model/Decide.h, so concrete sizes are answered exactly and symbolic ones
// by the function's facts and stated assumptions; where neither settles a
// question the answer is Tri::Unknown (or nullopt), never a guess.
#pragma once

#include "model/SymSize.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tma {

/// Sizes and strides: a tensor's geometry, and the shapes ops take (view,
/// reshape, expand, a factory's size).
using Shape = std::vector<SymSize>;
/// Dimension indices: permute's order, movedim's source and destination, a
/// reduction's dims. Always integers.
using DimList = std::vector<int64_t>;
/// The name both meanings shared before; what remains of it means Shape.
using Dims = Shape;

/// A Shape of integers.
Shape shapeOf(const std::vector<int64_t> &Ints);
/// The integers of a Shape whose every size is a constant.
std::optional<std::vector<int64_t>> constantShape(const Shape &S);

/// The product of the sizes (an error value when a constant product leaves
/// int64).
SymSize numel(const Shape &Sizes);

/// c10's TensorImpl::safe_compute_numel: nullopt where LibTorch throws
/// "numel: integer multiplication overflow". For constants the running
/// product is what LibTorch checks, so {0, 2^62, 2^62} is 0 but
/// {2^62, 2^62, 0} overflows.
std::optional<SymSize> checkedNumel(const Shape &Sizes);

/// at::detail::computeStorageNbytes(sizes, strides, itemsize, offset): the
/// bytes a storage for this geometry needs, or nullopt where LibTorch
/// throws "Storage size calculation overflowed" (a constant sum leaves
/// uint64 or exceeds int64, storage_max()). A symbolic size that may be 0
/// makes the answer unknown too (nullopt with Unknown set).
std::optional<SymSize> checkedStorageBytes(const Shape &Sizes,
                                           const Shape &Strides,
                                           const SymSize &ItemSize,
                                           const SymSize &Offset = 0,
                                           bool *Unknown = nullptr);

/// Checked int64 arithmetic: nullopt instead of a wrapped number.
std::optional<int64_t> checkedMul(int64_t A, int64_t B);
std::optional<int64_t> checkedAdd(int64_t A, int64_t B);
/// The same over sizes: nullopt when either is unknown or the result
/// is an error value.
std::optional<SymSize> addSizes(const std::optional<SymSize> &A,
                                const std::optional<SymSize> &B);
std::optional<SymSize> mulSizes(const std::optional<SymSize> &A,
                                const std::optional<SymSize> &B);

/// Row-major strides for Sizes (c10::contiguous_strides): the last stride
/// is 1 and size-0/1 dims count as 1.
Shape contiguousStrides(const Shape &Sizes);
/// The same for sizes known to be non-zero (a caller that decided it): the
/// products of the sizes, without max(size, 1).
Shape packedStridesOfNonEmpty(const Shape &Sizes);

/// Channels-last (NHWC) strides for a 4-D size (c10::get_channels_last_strides_2d).
Shape channelsLastStrides(const Shape &Sizes);

/// TensorImpl::compute_contiguous: strides of size-1 dims are ignored and a
/// tensor with no elements is contiguous.
Tri isContiguous(const Shape &Sizes, const Shape &Strides);

/// compute_channels_last_contiguous_2d for 4-D tensors.
Tri isChannelsLastContiguous(const Shape &Sizes, const Shape &Strides);

/// TensorImpl::compute_non_overlapping_and_dense.
Tri isNonOverlappingAndDense(const Shape &Sizes, const Shape &Strides);

/// suggest_memory_format() == ChannelsLast.
Tri suggestsChannelsLast(const Shape &Sizes, const Shape &Strides);

/// at::detail::computeStride: whether a view of (OldSizes, OldStrides) with
/// NewSizes exists, and then its strides in NewStrides. SameNumel: the
/// caller has established that both have one element count (inferSize
/// required it), which a symbolic -1 size may not show in canonical form.
Tri computeStride(const Shape &OldSizes, const Shape &OldStrides,
                  const Shape &NewSizes, Shape &NewStrides,
                  bool SameNumel = false);

/// at::infer_size: resolves one -1 against Numel. False when the shape is
/// invalid (two -1s, a negative size, or a product that does not match);
/// Unknown when that is not decidable. A symbolic product that must match
/// (or divide, for a -1) for the program to go on is stated as an
/// assumption in the ShapeEnv in force (Decide.h's require*).
Tri inferSize(const Shape &Target, const SymSize &Numel, Shape &Result);

/// at::infer_dense_strides: a dense layout keeping the input's dim order;
/// nullopt when the order is not decidable.
std::optional<Shape> inferDenseStrides(const Shape &Sizes, const Shape &Strides);

/// Strides of an allocation made under MemoryFormat::Preserve from an input
/// with these strides (clone, _to_copy, empty_like): dense inputs keep
/// their strides exactly, other inputs get inferDenseStrides (non-overlapping
/// but not dense) or a contiguous/channels-last layout; nullopt when not
/// decidable.
std::optional<Shape> preserveFormatStrides(const Shape &Sizes,
                                           const Shape &Strides);

/// at::infer_size for broadcasting. False when the shapes do not broadcast.
/// Two sizes that cannot be 1 must be equal on every path that goes on
/// (LibTorch throws otherwise): stated as an assumption.
Tri broadcastShapes(const Shape &A, const Shape &B, Shape &Out);

/// One operand of a TensorIterator op: its sizes and strides.
struct IterOperand {
  Shape Sizes;
  Shape Strides;
};

/// The strides TensorIterator allocates for an output of shape OutSizes,
/// given the inputs in order (reorder_dimensions + allocate_or_resize_outputs).
/// Inputs are broadcast to OutSizes first (broadcast dims get stride 0).
/// nullopt when the order is not decidable.
std::optional<Shape> tensorIteratorOutputStrides(
    const Shape &OutSizes, const std::vector<IterOperand> &Inputs);

/// Normalizes a possibly negative dim against Rank (maybe_wrap_dim).
/// nullopt when out of range. Rank 0 accepts -1 and 0.
std::optional<int64_t> wrapDim(int64_t Dim, int64_t Rank);

} // namespace tma
