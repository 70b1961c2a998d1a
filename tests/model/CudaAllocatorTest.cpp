// The CUDA caching allocator model (model/CudaAllocator.h) against the
// rules of LibTorch 1.13's c10/cuda/CUDACachingAllocator.cpp, each
// expected value worked out from the rule it tests.
#include "model/CudaAllocator.h"

#include <gtest/gtest.h>

using namespace tma;
using namespace tma::cuda_caching_allocator;

namespace {

constexpr int64_t KiB = 1024;
constexpr int64_t MiB = 1024 * 1024;

TEST(CudaAllocator, ConstantsAreThoseOfTheSource) {
  EXPECT_EQ(kMinBlockSize, 512);
  EXPECT_EQ(kSmallSize, 1 * MiB);
  EXPECT_EQ(kSmallBuffer, 2 * MiB);
  EXPECT_EQ(kLargeBuffer, 20 * MiB);
  EXPECT_EQ(kMinLargeAlloc, 10 * MiB);
  EXPECT_EQ(kRoundLarge, 2 * MiB);
}

TEST(CudaAllocator, RoundsRequestsUpTo512) {
  EXPECT_EQ(roundSize(1), 512);
  EXPECT_EQ(roundSize(512), 512);
  EXPECT_EQ(roundSize(513), 1024);
  EXPECT_EQ(roundSize(4000), 4096);
}

TEST(CudaAllocator, OneByteTakes512AllocatedAndASmallSegment) {
  CudaCachingAllocatorModel A;
  auto B = A.allocate(1);
  EXPECT_EQ(A.blockSize(B), 512);
  EXPECT_EQ(A.allocatedBytes(), 512);
  EXPECT_EQ(A.reservedBytes(), 2 * MiB);
  EXPECT_EQ(A.segmentCount(), 1);
}

TEST(CudaAllocator, ZeroBytesMakeNoBlock) {
  CudaCachingAllocatorModel A;
  EXPECT_EQ(A.allocate(0), CudaCachingAllocatorModel::NoBlock);
  EXPECT_EQ(A.peakAllocatedBytes(), 0);
  EXPECT_EQ(A.peakReservedBytes(), 0);
}

TEST(CudaAllocator, OneMiBIsStillSmall) {
  CudaCachingAllocatorModel A;
  A.allocate(1 * MiB);
  EXPECT_EQ(A.allocatedBytes(), 1 * MiB);
  EXPECT_EQ(A.reservedBytes(), 2 * MiB);
  // The other half of the 2 MiB segment serves the next small request.
  A.allocate(1 * MiB);
  EXPECT_EQ(A.reservedBytes(), 2 * MiB);
  EXPECT_EQ(A.segmentCount(), 1);
}

TEST(CudaAllocator, OverOneMiBComesFromA20MiBSegment) {
  CudaCachingAllocatorModel A;
  auto B = A.allocate(1 * MiB + 1);
  EXPECT_EQ(A.blockSize(B), 1 * MiB + 512);
  EXPECT_EQ(A.allocatedBytes(), 1 * MiB + 512);
  EXPECT_EQ(A.reservedBytes(), 20 * MiB);
}

TEST(CudaAllocator, LargePoolDoesNotServeFromSmallSegments) {
  CudaCachingAllocatorModel A;
  A.free(A.allocate(512)); // a free 2 MiB small segment
  A.allocate(1 * MiB + 1);
  EXPECT_EQ(A.reservedBytes(), 2 * MiB + 20 * MiB);
  EXPECT_EQ(A.segmentCount(), 2);
}

TEST(CudaAllocator, SmallPoolDoesNotServeFromLargeSegments) {
  CudaCachingAllocatorModel A;
  A.free(A.allocate(2 * MiB)); // a free 20 MiB large segment
  A.allocate(512);
  EXPECT_EQ(A.reservedBytes(), 20 * MiB + 2 * MiB);
}

TEST(CudaAllocator, JustUnderTenMiBSharesA20MiBSegment) {
  CudaCachingAllocatorModel A;
  A.allocate(10 * MiB - 512);
  EXPECT_EQ(A.reservedBytes(), 20 * MiB);
  // 10 MiB + 512 are left, more than 1 MiB: split, and a 4 MiB request fits.
  A.allocate(4 * MiB);
  EXPECT_EQ(A.reservedBytes(), 20 * MiB);
  EXPECT_EQ(A.allocatedBytes(), 14 * MiB - 512);
}

TEST(CudaAllocator, TenMiBAndMoreGetTheirOwnSegmentRoundedTo2MiB) {
  CudaCachingAllocatorModel A;
  A.allocate(10 * MiB);
  EXPECT_EQ(A.reservedBytes(), 10 * MiB);
  CudaCachingAllocatorModel B;
  B.allocate(11 * MiB);
  EXPECT_EQ(B.reservedBytes(), 12 * MiB);
}

TEST(CudaAllocator, LargeRemainderOfOneMiBIsNotSplitOff) {
  // 11 MiB in a 12 MiB segment leaves exactly 1 MiB: not more than
  // kSmallSize, so the whole 12 MiB block is handed out and counted.
  CudaCachingAllocatorModel A;
  auto B = A.allocate(11 * MiB);
  EXPECT_EQ(A.blockSize(B), 12 * MiB);
  EXPECT_EQ(A.allocatedBytes(), 12 * MiB);
  // Nothing is left free: the next request reserves again.
  A.allocate(1 * MiB + 1);
  EXPECT_EQ(A.reservedBytes(), 12 * MiB + 20 * MiB);
}

TEST(CudaAllocator, SmallRemainderOf512IsSplitOff) {
  CudaCachingAllocatorModel A;
  A.allocate(1 * MiB);                     // at 0
  auto Big = A.allocate(1 * MiB - 512);    // at 1 MiB, 512 left over
  EXPECT_EQ(A.blockSize(Big), 1 * MiB - 512);
  auto Last = A.allocate(512);
  EXPECT_EQ(A.addressOf(Last), 2 * MiB - 512);
  EXPECT_EQ(A.segmentCount(), 1);
}

TEST(CudaAllocator, FreedBlockIsReusedWithoutNewReserve) {
  CudaCachingAllocatorModel A;
  auto B = A.allocate(3 * MiB);
  A.free(B);
  EXPECT_EQ(A.allocatedBytes(), 0);
  EXPECT_EQ(A.reservedBytes(), 20 * MiB); // freed blocks stay reserved
  A.allocate(3 * MiB);
  EXPECT_EQ(A.reservedBytes(), 20 * MiB);
  EXPECT_EQ(A.peakReservedBytes(), 20 * MiB);
  EXPECT_EQ(A.peakAllocatedBytes(), 3 * MiB);
}

TEST(CudaAllocator, SplitRemainderServesTheNextRequest) {
  CudaCachingAllocatorModel A;
  auto First = A.allocate(1536);
  auto Second = A.allocate(512);
  EXPECT_EQ(A.addressOf(First), 0);
  EXPECT_EQ(A.addressOf(Second), 1536);
  EXPECT_EQ(A.segmentCount(), 1);
  EXPECT_EQ(A.allocatedBytes(), 2048);
}

TEST(CudaAllocator, BestFitTakesTheSmallestFreeBlockThatFits) {
  CudaCachingAllocatorModel A;
  auto Wide = A.allocate(4 * KiB);     // at 0
  A.allocate(512);                      // at 4096: keeps Wide from merging
  auto Narrow = A.allocate(2 * KiB);   // at 4608
  A.allocate(512);                      // at 6656
  A.free(Wide);
  A.free(Narrow);
  // Free: 4 KiB at 0, 2 KiB at 4608, the segment's tail at 7168. 1500
  // rounds to 1536: the 2 KiB block is the smallest that fits.
  auto B = A.allocate(1500);
  EXPECT_EQ(A.addressOf(B), 4608);
  // Its 512-byte remainder is split off; 3 KiB now fits only in Wide.
  auto C = A.allocate(3 * KiB);
  EXPECT_EQ(A.addressOf(C), 0);
}

TEST(CudaAllocator, EqualFreeBlocksAreTakenByLowerAddress) {
  CudaCachingAllocatorModel A;
  auto Low = A.allocate(1024);  // at 0
  A.allocate(512);              // at 1024
  auto High = A.allocate(1024); // at 1536
  A.allocate(512);              // at 2560
  A.free(High);
  A.free(Low);
  EXPECT_EQ(A.addressOf(A.allocate(1024)), 0);
  EXPECT_EQ(A.addressOf(A.allocate(1024)), 1536);
}

TEST(CudaAllocator, FreedNeighboursMerge) {
  CudaCachingAllocatorModel A;
  auto First = A.allocate(512);  // at 0
  auto Second = A.allocate(512); // at 512
  A.allocate(512);               // at 1024: keeps the tail apart
  A.free(First);
  A.free(Second);
  // Only merged do 0..1024 hold a 1024-byte request; unmerged it would
  // come from the tail at 1536.
  EXPECT_EQ(A.addressOf(A.allocate(1024)), 0);
}

TEST(CudaAllocator, AWholeLargeSegmentMergesBackAndIsReused) {
  CudaCachingAllocatorModel A;
  auto First = A.allocate(2 * MiB); // at 0 of a 20 MiB segment
  auto Next = A.allocate(2 * MiB);  // at 2 MiB
  A.free(Next);
  A.free(First);
  // 19 MiB fits only in the 20 MiB segment made whole again.
  auto B = A.allocate(19 * MiB);
  EXPECT_EQ(A.addressOf(B), 0);
  EXPECT_EQ(A.reservedBytes(), 20 * MiB);
  EXPECT_EQ(A.blockSize(B), 20 * MiB); // 1 MiB left: not split off
}

TEST(CudaAllocator, BlocksOfDifferentSegmentsDoNotMerge) {
  CudaCachingAllocatorModel A;
  // 19 MiB takes a whole 20 MiB segment (1 MiB left: not split off), so
  // 12 MiB reserves its own segment, right after it in the model.
  auto First = A.allocate(19 * MiB);
  auto Own = A.allocate(12 * MiB);
  EXPECT_EQ(A.addressOf(Own), 20 * MiB);
  A.free(First);
  A.free(Own);
  // 20 MiB + 12 MiB are free side by side in the model's addresses, but
  // in two segments: 25 MiB fits in neither and reserves a third.
  A.allocate(25 * MiB);
  EXPECT_EQ(A.segmentCount(), 3);
  EXPECT_EQ(A.reservedBytes(), 20 * MiB + 12 * MiB + 26 * MiB);
}

TEST(CudaAllocator, PeaksFollowTheHighestPoint) {
  CudaCachingAllocatorModel A;
  auto X = A.allocate(3 * MiB);
  auto Y = A.allocate(3 * MiB);
  A.free(X);
  A.free(Y);
  A.allocate(1 * MiB + 1);
  EXPECT_EQ(A.peakAllocatedBytes(), 6 * MiB);
  EXPECT_EQ(A.allocatedBytes(), 1 * MiB + 512);
  EXPECT_EQ(A.peakReservedBytes(), 20 * MiB);
}

} // namespace
