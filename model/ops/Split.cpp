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
  int64_t Total = 0;
  for (int64_t S : Sizes) {
    if (S < 0)
      return {throws("split_with_sizes expects split_sizes have only "
                     "non-negative entries, but got split_sizes=" +
                     dimsText(Sizes))};
    Total += S;
  }
  if (Total != (*In.Sizes)[*D])
    return {throws("split_with_sizes expects split_sizes to sum exactly to " +
                   std::to_string((*In.Sizes)[*D]) +
                   " (input tensor's size at dimension " + std::to_string(*D) +
                   "), but got split_sizes=" + dimsText(Sizes))};
  std::vector<OpOutcome> Pieces;
  int64_t Start = 0;
  for (int64_t S : Sizes) {
    Pieces.push_back(narrow(In, *D, Start, S));
    Start += S;
  }
  return Pieces;
}

// split (TensorShape.cpp): ceil(N / size) pieces (at least one), the last
// one shorter.
std::vector<OpOutcome> split(const TensorValue &In, int64_t SplitSize,
                             int64_t Dim) {
  OpOutcome Probe = viewOf(In);
  if (!needLayout(In, Probe))
    return {Probe};
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return {throws("split expects at least a 1-dimensional tensor")};
  if (SplitSize < 0)
    return {throws("split expects split_size be non-negative, but got "
                   "split_size=" + std::to_string(SplitSize))};
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return {throws(rangeError(Rank))};
  int64_t N = (*In.Sizes)[*D];
  if (SplitSize == 0 && N != 0)
    return {throws("split_size can only be 0 if dimension size is 0, but got "
                   "dimension size of " + std::to_string(N))};
  int64_t Pieces = SplitSize == 0
                       ? 1
                       : std::max<int64_t>((N + SplitSize - 1) / SplitSize, 1);
  Shape Sizes;
  for (int64_t K = 0; K < Pieces; ++K)
    Sizes.push_back(std::min(SplitSize, N - K * SplitSize));
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
  int64_t N = (*In.Sizes)[*D];
  int64_t SplitSize = (N + Chunks - 1) / Chunks;
  if (SplitSize == 0 && N == 0)
    return splitWithSizes(In, Shape(Chunks, 0), *D);
  return split(In, SplitSize, *D);
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
  std::vector<OpOutcome> Pieces;
  for (int64_t K = 0; K < (*In.Sizes)[*D]; ++K)
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
