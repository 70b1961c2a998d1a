// A model of LibTorch 1.13's CUDA caching allocator
// (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator), fed exact
// byte counts, so the report can answer what torch.cuda.memory_allocated()
// and memory_reserved() peak at, not only the sum of storage nbytes.
//
// 1. A request of n > 0 bytes is rounded up to a multiple of 512
//    (round_size, kMinBlockSize); n == 0 makes no block at all
//    (CudaCachingAllocator::allocate calls malloc only when size != 0).
// 2. A rounded size <= 1 MiB (kSmallSize) belongs to the small pool,
//    anything larger to the large pool (get_pool).
// 3. The pool's free block with the smallest size that fits, ties broken
//    by the lower address, is reused (get_free_block: lower_bound over
//    BlockComparator, which orders by stream, size, then address).
// 4. With no such block a new segment is reserved (alloc_block, cudaMalloc)
//    of get_allocation_size(size): 2 MiB (kSmallBuffer) for the small
//    pool, 20 MiB (kLargeBuffer) for sizes under 10 MiB (kMinLargeAlloc),
//    else the size rounded up to 2 MiB (kRoundLarge).
// 5. The chosen block is split when what is left is worth a block of its
//    own (should_split): remaining >= 512 in the small pool, remaining
//    > 1 MiB in the large pool (max_split_size is SIZE_MAX unless
//    PYTORCH_CUDA_ALLOC_CONF sets it). The allocation takes the front.
// 6. allocated_bytes grows by the block's size (the rounded request, or
//    the whole block when it was not split); reserved_bytes by each
//    segment's size. A freed block merges with a free neighbour of its
//    segment (free_block, try_merge_blocks) and stays reserved: segments
//    go back to the driver only on emptyCache() or an out-of-memory retry,
//    neither of which the model runs.
//
// Assumptions, stated because the source leaves them to the run: one
// stream (the default; blocks are reused only on their own stream), the
// default PYTORCH_CUDA_ALLOC_CONF, no out-of-memory retry, and segments
// that cudaMalloc returns at increasing addresses (this only decides ties
// between equal free blocks of different segments).
//
// Checked against the constants and functions named above; the 1.13.1
// header (c10/cuda/CUDACachingAllocator.h: Stat, StatType, DeviceStats)
// is the one Debian's libtorch-dev installs.
#pragma once

#include <cstdint>
#include <map>

namespace tma {

namespace cuda_caching_allocator {
/// "all sizes are rounded to at least 512 bytes"
constexpr int64_t kMinBlockSize = 512;
/// "largest 'small' allocation is 1 MiB"
constexpr int64_t kSmallSize = 1048576;
/// "'small' allocations are packed in 2 MiB blocks"
constexpr int64_t kSmallBuffer = 2097152;
/// "'large' allocations may be packed in 20 MiB blocks"
constexpr int64_t kLargeBuffer = 20971520;
/// "allocations between 1 and 10 MiB may use kLargeBuffer"
constexpr int64_t kMinLargeAlloc = 10485760;
/// "round up large allocations to 2 MiB"
constexpr int64_t kRoundLarge = 2097152;

/// round_size: the block size a request of Bytes (> 0) gets.
int64_t roundSize(int64_t Bytes);
/// get_pool: whether a rounded size is served by the small pool.
bool isSmallPoolSize(int64_t RoundedSize);
/// get_allocation_size: the segment reserved for a rounded size no free
/// block fits.
int64_t segmentSizeFor(int64_t RoundedSize);
} // namespace cuda_caching_allocator

class CudaCachingAllocatorModel {
public:
  using AllocationId = int;
  /// What allocate(0) returns: no block was made.
  static constexpr AllocationId NoBlock = -1;

  /// A request of Bytes (>= 0): the block it gets, or NoBlock for 0.
  AllocationId allocate(int64_t Bytes);
  /// Frees what allocate returned (NoBlock: nothing to do).
  void free(AllocationId Id);

  /// torch.cuda.memory_allocated() and memory_reserved() now, and their
  /// highest values so far (DeviceStats' allocated_bytes and
  /// reserved_bytes, StatType::AGGREGATE: current and peak).
  int64_t allocatedBytes() const { return Allocated; }
  int64_t reservedBytes() const { return Reserved; }
  int64_t peakAllocatedBytes() const { return PeakAllocated; }
  int64_t peakReservedBytes() const { return PeakReserved; }
  /// The size of the block Id holds (tests read splitting from it).
  int64_t blockSize(AllocationId Id) const;
  /// The model's address of that block: segments laid out one after
  /// another in the order they were reserved (tests read best fit from it).
  int64_t addressOf(AllocationId Id) const;
  /// Number of segments reserved so far.
  int segmentCount() const { return Segments; }

private:
  struct Block {
    int64_t Size = 0;
    int Segment = 0;
    bool Small = false;
    bool Allocated = false;
  };
  using BlockMap = std::map<int64_t, Block>; // by address

  /// The best-fit free block of the pool for RoundedSize, or end().
  BlockMap::iterator bestFreeBlock(int64_t RoundedSize, bool Small);
  BlockMap::iterator reserveSegment(int64_t RoundedSize, bool Small);
  void splitIfWorthIt(BlockMap::iterator It, int64_t RoundedSize);
  /// Merges the free block at It with Next when both are free and in the
  /// same segment (try_merge_blocks).
  void mergeWithNext(BlockMap::iterator It);

  BlockMap Blocks;
  std::map<AllocationId, int64_t> LiveAddress;
  AllocationId NextId = 0;
  int Segments = 0;
  int64_t NextSegmentAddress = 0;
  int64_t Allocated = 0;
  int64_t Reserved = 0;
  int64_t PeakAllocated = 0;
  int64_t PeakReserved = 0;
};

} // namespace tma
