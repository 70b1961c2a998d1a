#include "model/CudaAllocator.h"

#include <algorithm>
#include <stdexcept>

namespace tma {

namespace cuda_caching_allocator {

int64_t roundSize(int64_t Bytes) {
  // round_size: sizes below kMinBlockSize become kMinBlockSize, the rest
  // the next multiple of it (roundup_power2_divisions is 0 by default).
  if (Bytes < kMinBlockSize)
    return kMinBlockSize;
  return kMinBlockSize * ((Bytes + kMinBlockSize - 1) / kMinBlockSize);
}

bool isSmallPoolSize(int64_t RoundedSize) {
  // get_pool: `size <= kSmallSize` picks small_blocks.
  return RoundedSize <= kSmallSize;
}

int64_t segmentSizeFor(int64_t RoundedSize) {
  // get_allocation_size, on the rounded size.
  if (RoundedSize <= kSmallSize)
    return kSmallBuffer;
  if (RoundedSize < kMinLargeAlloc)
    return kLargeBuffer;
  return kRoundLarge * ((RoundedSize + kRoundLarge - 1) / kRoundLarge);
}

} // namespace cuda_caching_allocator

using namespace cuda_caching_allocator;

CudaCachingAllocatorModel::BlockMap::iterator
CudaCachingAllocatorModel::bestFreeBlock(int64_t RoundedSize, bool Small) {
  // Walking by address and keeping only a strictly smaller fit leaves the
  // lowest address among equal sizes: BlockComparator's order.
  auto Best = Blocks.end();
  for (auto It = Blocks.begin(); It != Blocks.end(); ++It) {
    const Block &B = It->second;
    if (B.Allocated || B.Small != Small || B.Size < RoundedSize)
      continue;
    if (Best == Blocks.end() || B.Size < Best->second.Size)
      Best = It;
  }
  return Best;
}

CudaCachingAllocatorModel::BlockMap::iterator
CudaCachingAllocatorModel::reserveSegment(int64_t RoundedSize, bool Small) {
  const int64_t SegmentSize = segmentSizeFor(RoundedSize);
  Block Whole;
  Whole.Size = SegmentSize;
  Whole.Segment = Segments++;
  Whole.Small = Small;
  const int64_t Address = NextSegmentAddress;
  NextSegmentAddress += SegmentSize;
  Reserved += SegmentSize;
  PeakReserved = std::max(PeakReserved, Reserved);
  return Blocks.emplace(Address, Whole).first;
}

void CudaCachingAllocatorModel::splitIfWorthIt(BlockMap::iterator It,
                                               int64_t RoundedSize) {
  Block &B = It->second;
  const int64_t Remaining = B.Size - RoundedSize;
  // should_split: a small-pool remainder of one minimum block is kept; a
  // large-pool remainder only when it is itself a large request's worth.
  const bool Worth = B.Small ? Remaining >= kMinBlockSize : Remaining > kSmallSize;
  if (!Worth)
    return;
  Block Rest = B;
  Rest.Size = Remaining;
  Rest.Allocated = false;
  B.Size = RoundedSize;
  // The allocation keeps the front; the remainder starts after it.
  Blocks.emplace(It->first + RoundedSize, Rest);
}

CudaCachingAllocatorModel::AllocationId
CudaCachingAllocatorModel::allocate(int64_t Bytes) {
  if (Bytes < 0)
    throw std::invalid_argument("a negative allocation");
  if (Bytes == 0)
    return NoBlock;
  const int64_t Size = roundSize(Bytes);
  const bool Small = isSmallPoolSize(Size);
  auto It = bestFreeBlock(Size, Small);
  if (It == Blocks.end())
    It = reserveSegment(Size, Small);
  splitIfWorthIt(It, Size);
  It->second.Allocated = true;
  Allocated += It->second.Size;
  PeakAllocated = std::max(PeakAllocated, Allocated);
  const AllocationId Id = NextId++;
  LiveAddress[Id] = It->first;
  return Id;
}

void CudaCachingAllocatorModel::mergeWithNext(BlockMap::iterator It) {
  auto Next = std::next(It);
  if (It == Blocks.end() || Next == Blocks.end())
    return;
  if (It->second.Allocated || Next->second.Allocated ||
      Next->second.Segment != It->second.Segment)
    return;
  It->second.Size += Next->second.Size;
  Blocks.erase(Next);
}

void CudaCachingAllocatorModel::free(AllocationId Id) {
  if (Id == NoBlock)
    return;
  auto Live = LiveAddress.find(Id);
  if (Live == LiveAddress.end())
    throw std::invalid_argument("a block freed twice or never allocated");
  auto It = Blocks.find(Live->second);
  LiveAddress.erase(Live);
  It->second.Allocated = false;
  Allocated -= It->second.Size;
  // free_block merges with prev and next; merging the next one first
  // keeps It valid, then the previous block absorbs It.
  mergeWithNext(It);
  if (It != Blocks.begin())
    mergeWithNext(std::prev(It));
}

int64_t CudaCachingAllocatorModel::blockSize(AllocationId Id) const {
  auto Live = LiveAddress.find(Id);
  if (Live == LiveAddress.end())
    return 0;
  return Blocks.at(Live->second).Size;
}

int64_t CudaCachingAllocatorModel::addressOf(AllocationId Id) const {
  auto Live = LiveAddress.find(Id);
  return Live == LiveAddress.end() ? -1 : Live->second;
}

} // namespace tma
