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

using Dims = std::vector<int64_t>;

int64_t numel(const Dims &Sizes);

/// Row-major strides for Sizes (c10::contiguous_strides): the last stride
/// is 1 and size-0/1 dims count as 1.
Dims contiguousStrides(const Dims &Sizes);

/// Channels-last (NHWC) strides for a 4-D size (c10::get_channels_last_strides_2d).
Dims channelsLastStrides(const Dims &Sizes);

/// TensorImpl::compute_contiguous: strides of size-1 dims are ignored and a
/// tensor with no elements is contiguous.
bool isContiguous(const Dims &Sizes, const Dims &Strides);

/// compute_channels_last_contiguous_2d for 4-D tensors.
bool isChannelsLastContiguous(const Dims &Sizes, const Dims &Strides);

/// TensorImpl::compute_non_overlapping_and_dense.
bool isNonOverlappingAndDense(const Dims &Sizes, const Dims &Strides);

/// suggest_memory_format() == ChannelsLast.
bool suggestsChannelsLast(const Dims &Sizes, const Dims &Strides);

/// at::detail::computeStride: the strides a view of (OldSizes, OldStrides)
/// with NewSizes would have, or nullopt when no such view exists.
std::optional<Dims> computeStride(const Dims &OldSizes, const Dims &OldStrides,
                                  const Dims &NewSizes);

/// at::infer_size: resolves one -1 against Numel. nullopt when the shape is
/// invalid (two -1s, a negative size, or a product that does not match).
std::optional<Dims> inferSize(const Dims &Shape, int64_t Numel);

/// at::infer_dense_strides: a dense layout keeping the input's dim order.
Dims inferDenseStrides(const Dims &Sizes, const Dims &Strides);

/// Strides of an allocation made under MemoryFormat::Preserve from an input
/// with these strides (clone, _to_copy, empty_like): dense inputs keep
/// their strides exactly, other inputs get inferDenseStrides (non-overlapping
/// but not dense) or a contiguous/channels-last layout.
Dims preserveFormatStrides(const Dims &Sizes, const Dims &Strides);

/// Bytes of a fresh storage for (Sizes, Strides) (at::detail::computeStorageNbytes).
int64_t storageBytesFor(const Dims &Sizes, const Dims &Strides,
                        int64_t ItemSize);

/// at::infer_size for broadcasting. nullopt when the shapes do not broadcast.
std::optional<Dims> broadcastShapes(const Dims &A, const Dims &B);

/// One operand of a TensorIterator op: its sizes and strides.
struct IterOperand {
  Dims Sizes;
  Dims Strides;
};

/// The strides TensorIterator allocates for an output of shape OutSizes,
/// given the inputs in order (reorder_dimensions + allocate_or_resize_outputs).
/// Inputs are broadcast to OutSizes first (broadcast dims get stride 0).
Dims tensorIteratorOutputStrides(const Dims &OutSizes,
                                 const std::vector<IterOperand> &Inputs);

/// Normalizes a possibly negative dim against Rank (maybe_wrap_dim).
/// nullopt when out of range. Rank 0 accepts -1 and 0.
std::optional<int64_t> wrapDim(int64_t Dim, int64_t Rank);

} // namespace tma
