// Tensor geometry as ATen computes it: sizes, strides, contiguity, the
// view-compatibility test behind view()/reshape(), and the stride choices of
// the ops that allocate.
//
// Style follows ATen's TensorUtils.cpp: free functions, std::nullopt where
// ATen would say "cannot be a view", no I/O. Each function names the ATen
// function it mirrors; ../shared/design/aten-rules.md has the sources.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace tma {

/// Sizes and strides: a tensor's geometry, and the shapes ops take (view,
/// reshape, expand, a factory's size). The symbolic size type replaces
/// its element type in the next step; dimension arguments stay integers.
using Shape = std::vector<int64_t>;
/// Dimension indices: permute's order, movedim's source and destination, a
/// reduction's dims.
using DimList = std::vector<int64_t>;
/// The name both meanings shared before; what remains of it means Shape.
using Dims = Shape;

/// The product of the sizes. It wraps (defined, unsigned arithmetic) when
/// the product leaves int64: callers that can meet such sizes use
/// checkedNumel; the Interpreter checks every value an op produces, so a
/// wrapped product never reaches the report.
int64_t numel(const Shape &Sizes);

/// c10's TensorImpl::safe_compute_numel: nullopt when the running product
/// overflows uint64 or the result exceeds int64 (LibTorch throws "numel:
/// integer multiplication overflow"). The running product is what LibTorch
/// checks, so {0, 2^62, 2^62} is 0 but {2^62, 2^62, 0} overflows.
std::optional<int64_t> checkedNumel(const Shape &Sizes);

/// at::detail::computeStorageNbytes(sizes, strides, itemsize, offset): the
/// bytes a storage for this geometry needs, or nullopt where LibTorch
/// throws "Storage size calculation overflowed" (the sum leaves uint64 or
/// exceeds int64, storage_max()).
std::optional<int64_t> checkedStorageBytes(const Shape &Sizes,
                                           const Shape &Strides,
                                           int64_t ItemSize,
                                           int64_t Offset = 0);

/// Checked int64 arithmetic: nullopt instead of a wrapped number.
std::optional<int64_t> checkedMul(int64_t A, int64_t B);
std::optional<int64_t> checkedAdd(int64_t A, int64_t B);

/// Row-major strides for Sizes (c10::contiguous_strides): the last stride
/// is 1 and size-0/1 dims count as 1.
Shape contiguousStrides(const Shape &Sizes);

/// Channels-last (NHWC) strides for a 4-D size (c10::get_channels_last_strides_2d).
Shape channelsLastStrides(const Shape &Sizes);

/// TensorImpl::compute_contiguous: strides of size-1 dims are ignored and a
/// tensor with no elements is contiguous.
bool isContiguous(const Shape &Sizes, const Shape &Strides);

/// compute_channels_last_contiguous_2d for 4-D tensors.
bool isChannelsLastContiguous(const Shape &Sizes, const Shape &Strides);

/// TensorImpl::compute_non_overlapping_and_dense.
bool isNonOverlappingAndDense(const Shape &Sizes, const Shape &Strides);

/// suggest_memory_format() == ChannelsLast.
bool suggestsChannelsLast(const Shape &Sizes, const Shape &Strides);

/// at::detail::computeStride: the strides a view of (OldSizes, OldStrides)
/// with NewSizes would have, or nullopt when no such view exists.
std::optional<Shape> computeStride(const Shape &OldSizes, const Shape &OldStrides,
                                  const Shape &NewSizes);

/// at::infer_size: resolves one -1 against Numel. nullopt when the shape is
/// invalid (two -1s, a negative size, or a product that does not match).
std::optional<Shape> inferSize(const Shape &Target, int64_t Numel);

/// at::infer_dense_strides: a dense layout keeping the input's dim order.
Shape inferDenseStrides(const Shape &Sizes, const Shape &Strides);

/// Strides of an allocation made under MemoryFormat::Preserve from an input
/// with these strides (clone, _to_copy, empty_like): dense inputs keep
/// their strides exactly, other inputs get inferDenseStrides (non-overlapping
/// but not dense) or a contiguous/channels-last layout.
Shape preserveFormatStrides(const Shape &Sizes, const Shape &Strides);

/// Bytes of a fresh storage for (Sizes, Strides) (at::detail::computeStorageNbytes).
int64_t storageBytesFor(const Shape &Sizes, const Shape &Strides,
                        int64_t ItemSize);

/// at::infer_size for broadcasting. nullopt when the shapes do not broadcast.
std::optional<Shape> broadcastShapes(const Shape &A, const Shape &B);

/// One operand of a TensorIterator op: its sizes and strides.
struct IterOperand {
  Shape Sizes;
  Shape Strides;
};

/// The strides TensorIterator allocates for an output of shape OutSizes,
/// given the inputs in order (reorder_dimensions + allocate_or_resize_outputs).
/// Inputs are broadcast to OutSizes first (broadcast dims get stride 0).
Shape tensorIteratorOutputStrides(const Shape &OutSizes,
                                 const std::vector<IterOperand> &Inputs);

/// Normalizes a possibly negative dim against Rank (maybe_wrap_dim).
/// nullopt when out of range. Rank 0 accepts -1 and 0.
std::optional<int64_t> wrapDim(int64_t Dim, int64_t Rank);

} // namespace tma
