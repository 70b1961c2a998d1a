// Splits (TensorShape.cpp): chunk, split, split_with_sizes and unbind give
// one view per piece.
//
// Traffic accounting, the same for every rule:
// - ReadBytes counts each input tensor's logical bytes (numel * itemsize)
//   once, even when broadcasting makes the kernel revisit elements; C++
//   scalars count nothing. Index tensors count their own bytes.
// - WrittenBytes counts the output's logical bytes once.
// - TransientBytes counts storages an op allocates and frees inside itself
//   (matmul's folding copy; on CPU, TensorIterator's promoted copies of
//   inputs whose dtype differs from the common dtype).
#include "model/Ops.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tma {

using namespace detail;

std::vector<OpOutcome> splitWithSizes(const TensorValue &In, const Shape &Sizes,
                                      int64_t Dim) {
  OpOutcome Probe = viewOf(In);
  if (!needLayout(In, Probe))
    return {Probe};
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return {throws("split expects at least a 1-dimensional tensor")};
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return {throws(rangeError(Rank))};
  SymSize Total = 0;
  for (const SymSize &S : Sizes) {
    Tri Negative = sizeLt(S, 0);
    if (Negative == Tri::Unknown)
      return {undecidedOutcome(Probe, undecided("<", S, 0))};
    if (Negative == Tri::True)
      return {throws("split_with_sizes expects split_sizes have only "
                     "non-negative entries, but got split_sizes=" +
                     dimsText(Sizes))};
    Total += S;
  }
  const SymSize &N = (*In.Sizes)[*D];
  Tri Sums = requireEq(Total, N);
  if (Sums == Tri::Unknown)
    return {undecidedOutcome(Probe, undecided("==", Total, N))};
  if (Sums == Tri::False)
    return {throws("split_with_sizes expects split_sizes to sum exactly to " +
                   sizeText(N) + " (input tensor's size at dimension " +
                   std::to_string(*D) + "), but got split_sizes=" +
                   dimsText(Sizes))};
  std::vector<OpOutcome> Pieces;
  SymSize Start = 0;
  for (const SymSize &S : Sizes) {
    Pieces.push_back(narrow(In, *D, Start, S));
    Start += S;
  }
  return Pieces;
}

// split (TensorShape.cpp): ceil(N / size) pieces (at least one), the last
// one shorter.
std::vector<OpOutcome> split(const TensorValue &In, const SymSize &SplitSize,
                             int64_t Dim) {
  OpOutcome Probe = viewOf(In);
  if (!needLayout(In, Probe))
    return {Probe};
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return {throws("split expects at least a 1-dimensional tensor")};
  Tri Negative = sizeLt(SplitSize, 0);
  if (Negative == Tri::Unknown)
    return {undecidedOutcome(Probe, undecided("<", SplitSize, 0))};
  if (Negative == Tri::True)
    return {throws("split expects split_size be non-negative, but got "
                   "split_size=" + sizeText(SplitSize))};
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return {throws(rangeError(Rank))};
  const SymSize &N = (*In.Sizes)[*D];
  Tri Zero = sizeEq(SplitSize, 0);
  if (Zero == Tri::Unknown)
    return {undecidedOutcome(Probe, undecided("==", SplitSize, 0))};
  if (Zero == Tri::True) {
    Tri Empty = sizeEq(N, 0);
    if (Empty == Tri::Unknown)
      return {undecidedOutcome(Probe, undecided("==", N, 0))};
    if (Empty == Tri::False)
      return {throws("split_size can only be 0 if dimension size is 0, but "
                     "got dimension size of " + sizeText(N))};
    return splitWithSizes(In, {SymSize(0)}, *D);
  }
  // The number of pieces is a list length: it must be a number. A size
  // that divides the dim exactly gives N / size equal pieces.
  std::optional<int64_t> Count;
  if (auto Whole = SymSize::floorDiv(N, SplitSize).constant();
      Whole && sizeDivides(SplitSize, N) == Tri::True)
    Count = std::max<int64_t>(*Whole, 1);
  else if (auto Ceil = SymSize::ceilDiv(N, SplitSize).constant())
    Count = std::max<int64_t>(*Ceil, 1);
  if (!Count)
    return {undecidedOutcome(Probe, "the number of pieces of a dim of size " +
                                        sizeText(N) + " split by " +
                                        sizeText(SplitSize) + " is not a number")};
  Shape Sizes;
  for (int64_t K = 0; K < *Count; ++K)
    Sizes.push_back(sizeMin(SplitSize, N - SymSize(K) * SplitSize));
  return splitWithSizes(In, Sizes, *D);
}

// chunk (TensorShape.cpp): split(ceil(N / chunks)), so it can give fewer
// pieces than asked; an empty dim gives `chunks` empty pieces.
std::vector<OpOutcome> chunk(const TensorValue &In, int64_t Chunks,
                             int64_t Dim) {
  OpOutcome Probe = viewOf(In);
  if (!needLayout(In, Probe))
    return {Probe};
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return {throws("chunk expects at least a 1-dimensional tensor")};
  if (Chunks <= 0)
    return {throws("chunk expects `chunks` to be greater than 0, got: " +
                   std::to_string(Chunks))};
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return {throws(rangeError(Rank))};
  const SymSize &N = (*In.Sizes)[*D];
  // A symbolic dim is not empty unless the facts say so (PyTorch's 0/1
  // specialisation, stated as `N >= 2`).
  Tri Empty = shapeIsEmpty({N});
  if (Empty == Tri::Unknown)
    return {undecidedOutcome(Probe, undecided("==", N, 0))};
  if (Empty == Tri::True)
    return splitWithSizes(In, Shape(Chunks, 0), *D);
  // `chunks` equal pieces when they divide the dim (the symbolic case that
  // split's ceil(N / ceil(N / chunks)) pieces cannot count).
  //
  // A symbolic dim that the facts neither show divisible nor not: the
  // number of pieces is a list length, which has to be a number, and it is
  // `chunks` for some N and fewer for others (chunk(3) of 4 gives 2). Like
  // torch's ShapeEnv, which guards on that count, the answer specialises,
  // here to the even split the code almost always relies on (the pieces
  // of qkv.chunk(3, -1) are then viewed as equal heads): stated as
  // `N % chunks == 0`, so every answer after it holds under it.
  if (!N.isConstant() && requireDivides(Chunks, N) == Tri::True)
    return splitWithSizes(In, Shape(Chunks, SymSize::floorDiv(N, Chunks)), *D);
  return split(In, SymSize::ceilDiv(N, Chunks), *D);
}

// unbind (TensorShape.cpp): one select per index.
std::vector<OpOutcome> unbind(const TensorValue &In, int64_t Dim) {
  OpOutcome Probe = viewOf(In);
  if (!needLayout(In, Probe))
    return {Probe};
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return {throws("Dimension specified as 0 but tensor has no dimensions")};
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return {throws(rangeError(Rank))};
  auto Count = (*In.Sizes)[*D].constant();
  if (!Count)
    return {undecidedOutcome(Probe, "unbind gives one piece per index of a "
                                    "dim of size " +
                                        sizeText((*In.Sizes)[*D]) +
                                        ", not a number")};
  std::vector<OpOutcome> Pieces;
  for (int64_t K = 0; K < *Count; ++K)
    Pieces.push_back(select(In, *D, K));
  return Pieces;
}

} // namespace tma

// ---- Rules (OpTable.def) ------------------------------------------------------------
//
// A split's outcomes are one view per piece, or a single Throws/Unknown
// outcome (the list is then unknown).

namespace tma {

using namespace detail;

static RuleResult pieces(const OpCall &C, std::vector<OpOutcome> P) {
  if (P.empty())
    return notModelled(C, "'" + C.Written + "' with these arguments is not modelled");
  RuleResult R;
  R.Outcomes = std::move(P);
  return R;
}

static std::optional<int64_t> intOr(const ArgValue &A, int64_t Default) {
  if (!A.given())
    return Default;
  if (!A.known())
    return std::nullopt;
  return A.Int;
}

RuleResult rule_chunk(const OpCall &C) {
  auto N = intOr(C.arg(1), 0), D = intOr(C.arg(2), 0);
  if (!C.arg(1).known() || !D)
    return pieces(C, {});
  return pieces(C, chunk(C.self().TV, *N, *D));
}

RuleResult rule_split(const OpCall &C) {
  auto D = intOr(C.arg(2), 0);
  if (!D || !C.arg(1).known())
    return pieces(C, {});
  if (C.Overload == 0)
    return pieces(C, split(C.self().TV, C.arg(1).Int, *D));
  return pieces(C, splitWithSizes(C.self().TV, C.arg(1).List, *D));
}

RuleResult rule_split_with_sizes(const OpCall &C) {
  auto D = intOr(C.arg(2), 0);
  if (!D || !C.arg(1).known())
    return pieces(C, {});
  return pieces(C, splitWithSizes(C.self().TV, C.arg(1).List, *D));
}

RuleResult rule_unbind(const OpCall &C) {
  auto D = intOr(C.arg(1), 0);
  if (!D || C.Overload != 0)
    return pieces(C, {});
  return pieces(C, unbind(C.self().TV, *D));
}

} // namespace tma
