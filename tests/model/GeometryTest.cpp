// Unit tests for model/Geometry: every case of shared/design/aten-rules.md
// marked [V] (observed on LibTorch 1.13.1) that the geometry functions can
// express, plus the edge cases of the ATen functions they transcribe.
// ModelVsATenTest.cpp checks the same functions against LibTorch itself.
#include "model/Geometry.h"
#include "tests/model/ConcreteGeometry.h"

#include <gtest/gtest.h>

using namespace tma;
using namespace tma::testing;

namespace {

// x = empty({2,3,4}); y = x.transpose(1,2): sizes [2,4,3], strides [12,1,4].
const Dims YSizes{2, 4, 3};
const Dims YStrides{12, 1, 4};

} // namespace

// ---------------------------------------------------------------- basics --

TEST(GeometryTest, NumelCountsZeroAndScalar) {
  EXPECT_EQ(numel({}), 1);
  EXPECT_EQ(numel({2, 3, 4}), 24);
  EXPECT_EQ(numel({2, 0, 4}), 0);
}

TEST(GeometryTest, ContiguousStridesTreatZeroAndOneAsOne) {
  EXPECT_EQ(contiguousStrides({}), Dims{});
  EXPECT_EQ(contiguousStrides({5}), Dims{1});
  EXPECT_EQ(contiguousStrides({2, 3, 4}), (Dims{12, 4, 1}));
  EXPECT_EQ(contiguousStrides({2, 0, 3}), (Dims{3, 3, 1}));
  EXPECT_EQ(contiguousStrides({2, 1, 3}), (Dims{3, 3, 1}));
}

TEST(GeometryTest, ChannelsLastStrides) {
  EXPECT_EQ(channelsLastStrides({2, 3, 4, 5}), (Dims{60, 1, 15, 3}));
  EXPECT_EQ(channelsLastStrides({2, 1, 4, 5}), (Dims{20, 1, 5, 1}));
  // c10::get_channels_last_strides_2d uses the raw sizes: a size-0 dim
  // zeroes the strides outside it (at::empty({2,0,3,3}, ChannelsLast)).
  EXPECT_EQ(channelsLastStrides({2, 0, 3, 3}), (Dims{0, 1, 0, 0}));
  EXPECT_EQ(channelsLastStrides({2, 2, 0, 2}), (Dims{0, 1, 4, 2}));
  // Not 4-D: contiguous.
  EXPECT_EQ(channelsLastStrides({2, 3, 4}), (Dims{12, 4, 1}));
}

// ---------------------------------------------------- view / reshape (§1) --

TEST(GeometryTest, ComputeStrideTransposedViewFails) {
  // [V] y.view({8,3}) throws "view size is not compatible".
  EXPECT_EQ(viewStrides(YSizes, YStrides, {8, 3}), std::nullopt);
  EXPECT_EQ(viewStrides(YSizes, YStrides, {24}), std::nullopt);
}

TEST(GeometryTest, ComputeStrideTransposedSplitSucceeds) {
  // [V] y.view({2,2,2,3}) gives strides [12,2,1,4].
  EXPECT_EQ(viewStrides(YSizes, YStrides, {2, 2, 2, 3}),
            (Dims{12, 2, 1, 4}));
  // Splitting dim 0 and keeping the transposed pair also works.
  EXPECT_EQ(viewStrides(YSizes, YStrides, {1, 2, 4, 3}),
            (Dims{24, 12, 1, 4}));
}

TEST(GeometryTest, ComputeStrideSlicedMerge) {
  // [V] x[:,1:] has sizes [2,2,4], strides [12,4,1]; .view({2,8}) -> [12,1].
  EXPECT_EQ(viewStrides({2, 2, 4}, {12, 4, 1}, {2, 8}), (Dims{12, 1}));
  // ... but the batch dim cannot be merged into the sliced rows.
  EXPECT_EQ(viewStrides({2, 2, 4}, {12, 4, 1}, {16}), std::nullopt);
  EXPECT_EQ(viewStrides({2, 2, 4}, {12, 4, 1}, {4, 4}), std::nullopt);
}

TEST(GeometryTest, ComputeStrideExpandedReshapeIsAView) {
  // [V] x[2,3,4].unsqueeze(0).expand({2,2,3,4}).reshape({2,24}) -> [0,1].
  const Dims Sizes{2, 2, 3, 4}, Strides{0, 12, 4, 1};
  EXPECT_EQ(viewStrides(Sizes, Strides, {2, 24}), (Dims{0, 1}));
  // Merging the expanded dim with real ones is impossible.
  EXPECT_EQ(viewStrides(Sizes, Strides, {48}), std::nullopt);
  EXPECT_EQ(viewStrides(Sizes, Strides, {4, 12}), std::nullopt);
}

TEST(GeometryTest, ComputeStrideZeroDimInputGivesOnes) {
  EXPECT_EQ(viewStrides({}, {}, {}), Dims{});
  EXPECT_EQ(viewStrides({}, {}, {1, 1}), (Dims{1, 1}));
  EXPECT_EQ(viewStrides({}, {}, {1}), Dims{1});
}

TEST(GeometryTest, ComputeStrideNoElements) {
  // Same shape: the old (arbitrary) strides are kept.
  EXPECT_EQ(viewStrides({0, 3}, {7, 2}, {0, 3}), (Dims{7, 2}));
  // Other shape: packed strides with size 0 counted as 1.
  EXPECT_EQ(viewStrides({0, 3}, {7, 2}, {3, 0, 2}), (Dims{2, 2, 1}));
  EXPECT_EQ(viewStrides({0, 3}, {7, 2}, {0}), Dims{1});
}

TEST(GeometryTest, ComputeStrideSizeOneDimsNeverBreakAChunk) {
  // The size-1 dim's stride 999 is ignored.
  EXPECT_EQ(viewStrides({2, 1, 3}, {3, 999, 1}, {6}), Dims{1});
  // New size-1 dims take view_numel * chunk_base_stride.
  EXPECT_EQ(viewStrides({2, 3}, {3, 1}, {1, 2, 1, 3, 1}),
            (Dims{6, 3, 3, 1, 1}));
  // Identity view of a contiguous tensor.
  EXPECT_EQ(viewStrides({2, 3, 4}, {12, 4, 1}, {2, 3, 4}),
            (Dims{12, 4, 1}));
}

TEST(GeometryTest, ComputeStrideNarrowedRows) {
  // x[:, :3] of a [4,6] tensor: sizes [4,3], strides [6,1]: the rows are a
  // chunk of their own, so only splits inside a row or of the rows work.
  EXPECT_EQ(viewStrides({4, 3}, {6, 1}, {12}), std::nullopt);
  EXPECT_EQ(viewStrides({4, 3}, {6, 1}, {2, 2, 3}), (Dims{12, 6, 1}));
  // x[:, ::2] of the same x: sizes [4,3], strides [6,2] is a uniform
  // stride-2 walk (6 == 3*2), so it flattens.
  EXPECT_EQ(viewStrides({4, 3}, {6, 2}, {12}), Dims{2});
}

TEST(GeometryTest, InferSize) {
  EXPECT_EQ(inferred({-1, 4}, 12), (Dims{3, 4}));
  EXPECT_EQ(inferred({2, -1, 2}, 12), (Dims{2, 3, 2}));
  EXPECT_EQ(inferred({2, 6}, 12), (Dims{2, 6}));
  EXPECT_EQ(inferred({-1}, 0), Dims{0});
  EXPECT_EQ(inferred({-1, -1}, 4), std::nullopt); // two -1s
  EXPECT_EQ(inferred({2, 5}, 12), std::nullopt);  // wrong product
  EXPECT_EQ(inferred({-1, 5}, 12), std::nullopt); // not divisible
  EXPECT_EQ(inferred({-2, 6}, 12), std::nullopt); // negative size
  // 0 elements into a shape with 0 and -1: the -1 is ambiguous.
  EXPECT_EQ(inferred({0, -1}, 0), std::nullopt);
  EXPECT_EQ(inferred({0, 5}, 0), (Dims{0, 5}));
}

// ------------------------------------------------ contiguity (§2, §4, §5) --

TEST(GeometryTest, IsContiguousIgnoresSizeOneStrides) {
  // [V] [2,1,4] with strides [4,999,1]: contiguous(), returns self.
  EXPECT_TRI_TRUE(isContiguous({2, 1, 4}, {4, 999, 1}));
  EXPECT_TRI_TRUE(isContiguous({2, 3, 4}, {12, 4, 1}));
  EXPECT_TRI_FALSE(isContiguous(YSizes, YStrides));
  EXPECT_TRI_FALSE(isContiguous({2, 2, 4}, {12, 4, 1})); // x[:,1:]
  EXPECT_TRI_TRUE(isContiguous({}, {}));
  EXPECT_TRI_TRUE(isContiguous({1}, {7}));
}

TEST(GeometryTest, IsContiguousNoElements) {
  // A tensor with numel 0 counts as contiguous whatever its strides.
  EXPECT_TRI_TRUE(isContiguous({0, 3}, {1, 7}));
  EXPECT_TRI_TRUE(isContiguous({2, 0}, {5, 7}));
}

TEST(GeometryTest, ChannelsLastContiguity) {
  // [V] an NHWC tensor: .contiguous() copies, .contiguous(ChannelsLast)
  // returns self.
  const Dims Sizes{2, 3, 4, 5}, NHWC{60, 1, 15, 3};
  EXPECT_TRI_FALSE(isContiguous(Sizes, NHWC));
  EXPECT_TRI_TRUE(isChannelsLastContiguous(Sizes, NHWC));
  EXPECT_TRI_FALSE(isChannelsLastContiguous(Sizes, {60, 20, 5, 1}));
  // [V] With C == 1 both checks pass.
  const Dims C1{2, 1, 4, 5}, C1Strides{20, 1, 5, 1};
  EXPECT_TRI_TRUE(isContiguous(C1, C1Strides));
  EXPECT_TRI_TRUE(isChannelsLastContiguous(C1, C1Strides));
  // Only 4-D tensors are channels-last contiguous.
  EXPECT_TRI_FALSE(isChannelsLastContiguous({3, 4, 5}, {1, 15, 3}));
}

TEST(GeometryTest, NonOverlappingAndDense) {
  EXPECT_TRI_TRUE(isNonOverlappingAndDense({}, {}));
  EXPECT_TRI_TRUE(isNonOverlappingAndDense(YSizes, YStrides)); // permuted
  EXPECT_TRI_TRUE(isNonOverlappingAndDense({2, 1, 4}, {4, 999, 1}));
  EXPECT_TRI_TRUE(isNonOverlappingAndDense({2, 3, 4, 5}, {60, 1, 15, 3}));
  EXPECT_TRI_TRUE(isNonOverlappingAndDense({1}, {7}));
  EXPECT_TRI_FALSE(isNonOverlappingAndDense({5}, {2}));
  EXPECT_TRI_FALSE(isNonOverlappingAndDense({2, 2, 4}, {12, 4, 1})); // gap
  EXPECT_TRI_FALSE(isNonOverlappingAndDense({3, 4}, {1, 0}));        // expanded
  EXPECT_TRI_FALSE(isNonOverlappingAndDense({3, 4}, {1, 1}));        // overlap
}

TEST(GeometryTest, NonOverlappingAndDenseNoElements) {
  // TensorImpl::refresh_contiguous: is_non_overlapping_and_dense_ is
  // is_contiguous_ || compute_non_overlapping_and_dense(), and an empty
  // tensor is contiguous.
  EXPECT_TRI_TRUE(isNonOverlappingAndDense({2, 0}, {5, 7}));
  EXPECT_TRI_TRUE(isNonOverlappingAndDense({0, 3, 2}, {1, 9, 4}));
  EXPECT_TRI_TRUE(isNonOverlappingAndDense({2, 0}, {0, 0}));
}

TEST(GeometryTest, SuggestsChannelsLast) {
  EXPECT_TRI_TRUE(suggestsChannelsLast({2, 3, 4, 5}, {60, 1, 15, 3}));
  EXPECT_TRI_FALSE(suggestsChannelsLast({2, 3, 4, 5}, {60, 20, 5, 1}));
  // N111 defaults to NCHW (both layouts have the same strides).
  EXPECT_TRI_FALSE(suggestsChannelsLast({2, 1, 1, 1}, {1, 1, 1, 1}));
  // A zero channel stride (expanded C) and a size-0 dim default to NCHW.
  EXPECT_TRI_FALSE(suggestsChannelsLast({2, 3, 4, 5}, {20, 0, 5, 1}));
  EXPECT_TRI_FALSE(suggestsChannelsLast({2, 3, 0, 5}, {0, 1, 15, 3}));
  // Only 4-D.
  EXPECT_TRI_FALSE(suggestsChannelsLast({3, 4, 5}, {1, 15, 3}));
  // [V] y is transposed but not channels-last: suggest_memory_format() is
  // Contiguous, which is why y.to(kFloat,false,false,Contiguous) returns
  // the non-contiguous self (§3).
  EXPECT_TRI_FALSE(suggestsChannelsLast({1, 2, 4, 3}, {24, 12, 1, 4}));
}

// ---------------------------------------- clone / empty_like / bytes (§2) --

TEST(GeometryTest, InferDenseStridesExamples) {
  // [V] examples.
  EXPECT_EQ(inferDenseStrides({2, 3, 2}, {2, 4, 12}), (Dims{1, 2, 6}));
  EXPECT_EQ(inferDenseStrides({2, 3, 2}, {12, 4, 2}), (Dims{6, 2, 1}));
  EXPECT_EQ(inferDenseStrides({3, 4}, {1, 0}), (Dims{4, 1}));
}

TEST(GeometryTest, InferDenseStridesTiesAndSmallRanks) {
  EXPECT_EQ(inferDenseStrides({}, {}), Dims{});
  EXPECT_EQ(inferDenseStrides({5}, {3}), Dims{1});
  // Equal strides: the larger size goes outward.
  EXPECT_EQ(inferDenseStrides({2, 3}, {1, 1}), (Dims{1, 2}));
  EXPECT_EQ(inferDenseStrides({3, 2}, {1, 1}), (Dims{2, 1}));
  // Sizes <= 1 count as 1 when packing.
  EXPECT_EQ(inferDenseStrides({2, 0, 3}, {6, 6, 2}), (Dims{3, 3, 1}));
  // Stride-0 dims never move: ATen's own comment example
  // (6,5,4,3,2)/(6,0,120,0,1) sorts perm (4,3,2,1,0) to (4,3,0,1,2).
  EXPECT_EQ(inferDenseStrides({6, 5, 4, 3, 2}, {6, 0, 120, 0, 1}),
            (Dims{6, 36, 180, 2, 1}));
}

TEST(GeometryTest, PreserveFormatStrides) {
  // [V] clone(Preserve) of a dense input keeps its strides, including odd
  // size-1 strides; t.clone() of a transposed tensor stays transposed (§8).
  EXPECT_EQ(preserveFormatStrides({2, 1, 4}, {4, 999, 1}),
            (Dims{4, 999, 1}));
  EXPECT_EQ(preserveFormatStrides(YSizes, YStrides), YStrides);
  EXPECT_EQ(preserveFormatStrides({2, 3, 4, 5}, {60, 1, 15, 3}),
            (Dims{60, 1, 15, 3}));
  // Anything else: infer_dense_strides.
  EXPECT_EQ(preserveFormatStrides({2, 3, 2}, {12, 4, 2}), (Dims{6, 2, 1}));
  EXPECT_EQ(preserveFormatStrides({2, 3, 2}, {2, 4, 12}), (Dims{1, 2, 6}));
  EXPECT_EQ(preserveFormatStrides({3, 4}, {1, 0}), (Dims{4, 1}));
  // An empty input is dense, so clone() keeps even its odd strides.
  EXPECT_EQ(preserveFormatStrides({2, 0}, {0, 0}), (Dims{0, 0}));
  EXPECT_EQ(preserveFormatStrides({3, 2, 1, 0}, {3, 9, 5, 11}),
            (Dims{3, 9, 5, 11}));
  // x[:,1:] -> a contiguous copy.
  EXPECT_EQ(preserveFormatStrides({2, 2, 4}, {12, 4, 1}), (Dims{8, 4, 1}));
}

TEST(GeometryTest, StorageBytes) {
  // [V] empty_strided({2,3},{10,1}) in float32: 52 bytes.
  EXPECT_EQ(storageBytesFor({2, 3}, {10, 1}, 4), 52);
  EXPECT_EQ(storageBytesFor({2, 3, 4}, {12, 4, 1}, 4), 96);
  EXPECT_EQ(storageBytesFor({2, 3, 4}, {12, 4, 1}, 8), 192);
  EXPECT_EQ(storageBytesFor({}, {}, 8), 8);
  EXPECT_EQ(storageBytesFor({2, 0, 3}, {3, 3, 1}, 4), 0);
  // Stride-0 dims do not grow the storage.
  EXPECT_EQ(storageBytesFor({5, 3}, {0, 1}, 2), 6);
}

// ------------------------------------------------------ broadcasting (§5) --

TEST(GeometryTest, BroadcastShapes) {
  EXPECT_EQ(broadcast({2, 1, 4}, {3, 1}), (Dims{2, 3, 4}));
  EXPECT_EQ(broadcast({}, {2, 3}), (Dims{2, 3}));
  EXPECT_EQ(broadcast({1}, {0}), Dims{0}); // 1 maps to the other, even 0
  EXPECT_EQ(broadcast({2, 3}, {4}), std::nullopt);
  EXPECT_EQ(broadcast({0}, {2}), std::nullopt);
}

// --------------------------------------------------- TensorIterator (§5) --

TEST(GeometryTest, TensorIteratorKeepsTransposedLayout) {
  const IterOperand Y{YSizes, YStrides};
  // [V] y+y, y+1, y.exp() keep [12,1,4].
  EXPECT_EQ(tensorIteratorOutputStrides(YSizes, {Y, Y}), YStrides);
  EXPECT_EQ(tensorIteratorOutputStrides(YSizes, {Y, IterOperand{{}, {}}}),
            YStrides);
  EXPECT_EQ(tensorIteratorOutputStrides(YSizes, {Y}), YStrides);
  // [V] y + bcast[4,1] keeps [12,1,4].
  EXPECT_EQ(tensorIteratorOutputStrides(YSizes, {Y, IterOperand{{4, 1}, {1, 1}}}),
            YStrides);
}

TEST(GeometryTest, TensorIteratorFirstOperandWins) {
  const IterOperand Y{YSizes, YStrides};
  const IterOperand C{YSizes, contiguousStrides(YSizes)};
  // [V] contig+y is contiguous; y+contig keeps y's order.
  EXPECT_EQ(tensorIteratorOutputStrides(YSizes, {C, Y}), (Dims{12, 3, 1}));
  EXPECT_EQ(tensorIteratorOutputStrides(YSizes, {Y, C}), YStrides);
}

TEST(GeometryTest, TensorIteratorChannelsLast) {
  const Dims Sizes{2, 3, 4, 5};
  const IterOperand NHWC{Sizes, {60, 1, 15, 3}};
  const IterOperand NCHW{Sizes, {60, 20, 5, 1}};
  // [V] NHWC+NCHW gives NHWC; NCHW+NHWC gives NCHW.
  EXPECT_EQ(tensorIteratorOutputStrides(Sizes, {NHWC, NCHW}),
            (Dims{60, 1, 15, 3}));
  EXPECT_EQ(tensorIteratorOutputStrides(Sizes, {NCHW, NHWC}),
            (Dims{60, 20, 5, 1}));
  // Both channels-last: the fast set-up allocates channels-last.
  EXPECT_EQ(tensorIteratorOutputStrides(Sizes, {NHWC, NHWC}),
            (Dims{60, 1, 15, 3}));
}

TEST(GeometryTest, TensorIteratorPacksNonDenseInputsKeepingPermutation) {
  // [V] x=[2,3,8]; x[:,:,::2].transpose(1,2): sizes [2,4,3], strides
  // [24,2,8]: the output is dense with the same dim order.
  EXPECT_EQ(tensorIteratorOutputStrides(YSizes, {IterOperand{YSizes, {24, 2, 8}}}),
            YStrides);
  // A non-dense contiguous-ordered input (x[:,1:]) gives contiguous.
  EXPECT_EQ(tensorIteratorOutputStrides({2, 2, 4}, {IterOperand{{2, 2, 4}, {12, 4, 1}}}),
            (Dims{8, 4, 1}));
}

TEST(GeometryTest, TensorIteratorExpandedInputGivesContiguous) {
  // [V] x[3,4].unsqueeze(0).expand({2,3,4}).exp() is contiguous.
  EXPECT_EQ(tensorIteratorOutputStrides({2, 3, 4}, {IterOperand{{2, 3, 4}, {0, 4, 1}}}),
            (Dims{12, 4, 1}));
  // An expanded transposed input: the non-zero strides still decide.
  EXPECT_EQ(tensorIteratorOutputStrides({2, 4, 3}, {IterOperand{{2, 4, 3}, {0, 1, 4}}}),
            (Dims{12, 1, 4}));
}

TEST(GeometryTest, TensorIteratorSmallRanksAndEmpty) {
  EXPECT_EQ(tensorIteratorOutputStrides({}, {IterOperand{{}, {}}}), Dims{});
  EXPECT_EQ(tensorIteratorOutputStrides({5}, {IterOperand{{5}, {3}}}), Dims{1});
  // An empty input is contiguous, so the fast set-up gives contiguous.
  EXPECT_EQ(tensorIteratorOutputStrides({2, 0}, {IterOperand{{2, 0}, {1, 2}}}),
            (Dims{1, 1}));
}

// ------------------------------------------------------------------ dims --

TEST(GeometryTest, WrapDim) {
  EXPECT_EQ(wrapDim(-1, 3), 2);
  EXPECT_EQ(wrapDim(-3, 3), 0);
  EXPECT_EQ(wrapDim(2, 3), 2);
  EXPECT_EQ(wrapDim(3, 3), std::nullopt);
  EXPECT_EQ(wrapDim(-4, 3), std::nullopt);
  // Rank 0 accepts -1 and 0 (wrap_scalar).
  EXPECT_EQ(wrapDim(-1, 0), 0);
  EXPECT_EQ(wrapDim(0, 0), 0);
  EXPECT_EQ(wrapDim(1, 0), std::nullopt);
}
