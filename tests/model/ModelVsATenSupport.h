// The generator and adapters of the model-vs-LibTorch differential test
// (ModelVsATenTest.cpp says what it compares and why; the tests are split
// over ModelVsATenTest.cpp and ModelVsATenIteratorTest.cpp to keep each
// file under 800 lines): integer shapes to the model's SymSize geometry and
// back, a fixed-seed generator of CPU tensors with varied layouts, and a
// Tally of compared properties.
#pragma once

#include "model/DType.h"
#include "model/Geometry.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/InferSize.h>
#include <c10/core/WrapDimMinimal.h>
#include <c10/util/Logging.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <iterator>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

// The test draws integer shapes, as LibTorch takes them; the model's
// geometry takes SymSizes and answers three-valued. These adapters convert
// both ways, and a constant shape that leaves a question undecided fails.
using Dims = std::vector<int64_t>;

namespace model {

inline tma::Shape sym(const Dims &D) { return tma::shapeOf(D); }
inline Dims ints(const tma::Shape &S) {
  auto C = tma::constantShape(S);
  if (!C) {
    ADD_FAILURE() << "a constant shape gave a symbolic answer";
    return {};
  }
  return *C;
}
inline std::optional<Dims> ints(const std::optional<tma::Shape> &S) {
  if (!S)
    return std::nullopt;
  return ints(*S);
}
inline Dims must(const std::optional<tma::Shape> &S) {
  if (!S) {
    ADD_FAILURE() << "a constant shape left the layout undecided";
    return {};
  }
  return ints(*S);
}
inline bool yes(tma::Tri T) {
  if (T == tma::Tri::Unknown)
    ADD_FAILURE() << "a constant shape left a question undecided";
  return T == tma::Tri::True;
}
inline std::optional<Dims> when(tma::Tri T, const tma::Shape &S) {
  if (!yes(T))
    return std::nullopt;
  return ints(S);
}

inline int64_t numel(const Dims &D) { return *tma::numel(sym(D)).constant(); }
inline std::optional<Dims> inferSize(const Dims &Target, int64_t Numel) {
  tma::Shape S;
  tma::Tri T = tma::inferSize(sym(Target), Numel, S);
  return when(T, S);
}
inline std::optional<Dims> computeStride(const Dims &S, const Dims &St,
                                  const Dims &New) {
  tma::Shape Out;
  tma::Tri T = tma::computeStride(sym(S), sym(St), sym(New), Out);
  return when(T, Out);
}
inline std::optional<Dims> broadcastShapes(const Dims &A, const Dims &B) {
  tma::Shape Out;
  tma::Tri T = tma::broadcastShapes(sym(A), sym(B), Out);
  return when(T, Out);
}
inline Dims contiguousStrides(const Dims &S) {
  return ints(tma::contiguousStrides(sym(S)));
}
inline Dims channelsLastStrides(const Dims &S) {
  return ints(tma::channelsLastStrides(sym(S)));
}
inline Dims preserveFormatStrides(const Dims &S, const Dims &St) {
  return must(tma::preserveFormatStrides(sym(S), sym(St)));
}
inline Dims inferDenseStrides(const Dims &S, const Dims &St) {
  return must(tma::inferDenseStrides(sym(S), sym(St)));
}
inline int64_t storageBytesFor(const Dims &S, const Dims &St, int64_t ItemSize) {
  auto B = tma::checkedStorageBytes(sym(S), sym(St), ItemSize);
  return B && B->constant() ? *B->constant() : -1;
}
inline bool isContiguous(const Dims &S, const Dims &St) {
  return yes(tma::isContiguous(sym(S), sym(St)));
}
inline bool isNonOverlappingAndDense(const Dims &S, const Dims &St) {
  return yes(tma::isNonOverlappingAndDense(sym(S), sym(St)));
}
inline bool isChannelsLastContiguous(const Dims &S, const Dims &St) {
  return yes(tma::isChannelsLastContiguous(sym(S), sym(St)));
}
inline bool suggestsChannelsLast(const Dims &S, const Dims &St) {
  return yes(tma::suggestsChannelsLast(sym(S), sym(St)));
}
struct IterOperand {
  Dims Sizes, Strides;
};
inline Dims tensorIteratorOutputStrides(const Dims &Out,
                                 const std::vector<IterOperand> &Ins) {
  std::vector<tma::IterOperand> Sym;
  for (const IterOperand &O : Ins)
    Sym.push_back({sym(O.Sizes), sym(O.Strides)});
  return must(tma::tensorIteratorOutputStrides(sym(Out), Sym));
}

} // namespace model

namespace tma_diff {

inline int64_t envInt(const char *Name, int64_t Default) {
  const char *V = std::getenv(Name);
  return V && *V ? std::atoll(V) : Default;
}

// The corpus is fixed: 3000 tensors per property from fixed seeds. For a
// soak run without rebuilding, TMA_DIFF_SCALE multiplies the corpus and
// TMA_DIFF_SEED picks other seeds.
const int NumTensors =
    static_cast<int>(3000 * std::max<int64_t>(envInt("TMA_DIFF_SCALE", 1), 1));
inline uint64_t seed(uint64_t Property) {
  return Property + 1000003ULL * static_cast<uint64_t>(envInt("TMA_DIFF_SEED", 0));
}
constexpr int MaxRank = 5;

inline Dims toDims(c10::IntArrayRef R) { return Dims(R.begin(), R.end()); }

inline std::string str(const Dims &D) {
  std::string S = "[";
  for (size_t I = 0; I < D.size(); ++I)
    S += (I ? "," : "") + std::to_string(D[I]);
  return S + "]";
}

inline std::string str(const std::optional<Dims> &D) {
  return D ? str(*D) : std::string("none");
}

inline std::string describe(const at::Tensor &T) {
  return "sizes=" + str(toDims(T.sizes())) +
         " strides=" + str(toDims(T.strides())) +
         " offset=" + std::to_string(T.storage_offset());
}

inline bool sameStorage(const at::Tensor &A, const at::Tensor &B) {
  return A.storage().unsafeGetStorageImpl() ==
         B.storage().unsafeGetStorageImpl();
}

// One compared property: counts checks and mismatches, keeps the first few.
class Tally {
public:
  explicit Tally(std::string Name) : Name(std::move(Name)) {}

  void expect(bool Ok, const std::function<std::string()> &Describe) {
    ++Checks;
    if (Ok)
      return;
    if (Mismatches++ < MaxShown)
      Shown.push_back(Describe());
  }

  int64_t checks() const { return Checks; }
  int64_t mismatches() const { return Mismatches; }

  std::string report() const {
    std::ostringstream OS;
    OS << Name << ": " << Mismatches << " mismatches in " << Checks
       << " checks";
    for (const std::string &S : Shown)
      OS << "\n  " << S;
    if (Mismatches > MaxShown)
      OS << "\n  ...";
    return OS.str();
  }

private:
  static constexpr int64_t MaxShown = 6;
  std::string Name;
  int64_t Checks = 0;
  int64_t Mismatches = 0;
  std::vector<std::string> Shown;
};

#define EXPECT_NO_MISMATCHES(T)                                                \
  do {                                                                         \
    EXPECT_GT((T).checks(), 0) << (T).report();                                \
    EXPECT_EQ((T).mismatches(), 0) << (T).report();                            \
    if ((T).mismatches() == 0)                                                 \
      std::cout << "[ compared ] " << (T).report() << "\n";                    \
  } while (0)

// ------------------------------------------------------------ generator --

class Rng {
public:
  explicit Rng(uint64_t Seed) : G(Seed) {}
  /// Uniform in [Lo, Hi].
  int64_t range(int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(G);
  }
  bool chance(double P) { return std::bernoulli_distribution(P)(G); }
  std::vector<int64_t> permutation(int64_t N) {
    std::vector<int64_t> P(N);
    std::iota(P.begin(), P.end(), 0);
    std::shuffle(P.begin(), P.end(), G);
    return P;
  }

private:
  std::mt19937_64 G;
};

inline int64_t randomSize(Rng &R) {
  int64_t X = R.range(0, 99);
  if (X < 6)
    return 0;
  if (X < 30)
    return 1;
  return R.range(2, 4);
}

inline Dims randomShape(Rng &R, int64_t MinRank, int64_t MaxRankHere) {
  Dims S(R.range(MinRank, MaxRankHere));
  for (int64_t &X : S)
    X = randomSize(R);
  return S;
}

// Zero-filled, so that ops that read the data (exp, add, where) never see
// uninitialised memory (a bool condition must hold 0 or 1).
inline at::Tensor alloc(const Dims &S, at::ScalarType Type) {
  return at::zeros(S, Type);
}

// A tensor of exactly Shape with a random layout.
inline at::Tensor withLayout(const Dims &Shape, Rng &R,
                      at::ScalarType Type = at::kFloat) {
  int64_t Rank = Shape.size();
  switch (R.range(0, 6)) {
  default:
  case 0: // contiguous
    return alloc(Shape, Type);
  case 1: // channels-last when 4-D, else reversed dims
    if (Rank == 4) // at::zeros has no memory_format: empty + zero_
      return at::empty(Shape, at::TensorOptions(Type).memory_format(
                                  at::MemoryFormat::ChannelsLast))
          .zero_();
    if (Rank >= 2) {
      Dims Rev(Shape.rbegin(), Shape.rend());
      std::vector<int64_t> Back(Rank);
      std::iota(Back.rbegin(), Back.rend(), 0);
      return alloc(Rev, Type).permute(Back);
    }
    return alloc(Shape, Type);
  case 2: { // a permutation of a contiguous allocation
    std::vector<int64_t> P = R.permutation(Rank);
    Dims Alloc(Rank);
    for (int64_t I = 0; I < Rank; ++I)
      Alloc[I] = Shape[P[I]];
    std::vector<int64_t> Inv(Rank);
    for (int64_t I = 0; I < Rank; ++I)
      Inv[P[I]] = I;
    return alloc(Alloc, Type).permute(Inv);
  }
  case 3: { // sliced out of a larger tensor, with steps
    Dims Big(Rank), Start(Rank), Step(Rank);
    for (int64_t I = 0; I < Rank; ++I) {
      Step[I] = R.range(1, 2);
      Start[I] = R.range(0, 1);
      Big[I] = Start[I] + Shape[I] * Step[I] + R.range(0, 1);
    }
    at::Tensor T = withLayout(Big, R, Type);
    for (int64_t I = 0; I < Rank; ++I)
      T = T.slice(I, Start[I], Start[I] + Shape[I] * Step[I], Step[I]);
    return T;
  }
  case 4: { // expanded: fewer leading dims and some size-1 dims
    int64_t Drop = R.range(0, Rank);
    Dims Base(Shape.begin() + Drop, Shape.end());
    for (int64_t &X : Base)
      if (R.chance(0.4))
        X = 1;
    return withLayout(Base, R, Type).expand(Shape);
  }
  case 5: { // as_strided with arbitrary, possibly overlapping strides
    Dims Strides(Rank);
    for (int64_t &X : Strides)
      X = R.range(0, 13);
    int64_t Offset = R.range(0, 3);
    int64_t Extent = Offset + 1;
    for (int64_t I = 0; I < Rank; ++I)
      Extent += std::max<int64_t>(Shape[I] - 1, 0) * Strides[I];
    return alloc({Extent}, Type).as_strided(Shape, Strides, Offset);
  }
  case 6: // transposed pair of a contiguous allocation
    if (Rank >= 2) {
      int64_t A = R.range(0, Rank - 1), B = R.range(0, Rank - 1);
      Dims Alloc = Shape;
      std::swap(Alloc[A], Alloc[B]);
      return alloc(Alloc, Type).transpose(A, B);
    }
    return alloc(Shape, Type);
  }
}

// Further view ops, each keeping the rank within [0, MaxRank].
inline at::Tensor mutate(at::Tensor T, Rng &R) {
  int64_t Steps = R.range(1, 3);
  for (int64_t K = 0; K < Steps; ++K) {
    int64_t Rank = T.dim();
    switch (R.range(0, 8)) {
    case 0:
      if (Rank >= 2)
        T = T.transpose(R.range(0, Rank - 1), R.range(0, Rank - 1));
      break;
    case 1:
      if (Rank >= 2)
        T = T.permute(R.permutation(Rank));
      break;
    case 2:
      if (Rank >= 1) {
        int64_t D = R.range(0, Rank - 1), N = T.size(D);
        int64_t Start = R.range(0, N), End = R.range(Start, N);
        T = T.slice(D, Start, End, R.range(1, 3));
      }
      break;
    case 3:
      if (Rank < MaxRank)
        T = T.unsqueeze(R.range(0, Rank));
      break;
    case 4:
      if (Rank >= 1) {
        int64_t D = R.range(0, Rank - 1);
        if (T.size(D) > 0)
          T = T.select(D, R.range(0, T.size(D) - 1));
      }
      break;
    case 5: { // expand size-1 dims, maybe add a leading dim
      Dims S = toDims(T.sizes());
      for (int64_t &X : S)
        if (X == 1)
          X = R.chance(0.1) ? 0 : R.range(1, 3);
      if (Rank < MaxRank && R.chance(0.3))
        S.insert(S.begin(), R.range(1, 3));
      T = T.expand(S);
      break;
    }
    case 6:
      if (Rank >= 2) {
        int64_t A = R.range(0, Rank - 1), B = R.range(0, Rank - 2);
        if (B >= A)
          ++B;
        T = T.diagonal(R.range(-1, 1), A, B);
      }
      break;
    case 7:
      if (Rank >= 1) {
        int64_t D = R.range(0, Rank - 1);
        if (T.size(D) == 1)
          T = T.squeeze(D);
      }
      break;
    case 8: // a column slice: keeps rows apart
      if (Rank >= 2) {
        int64_t N = T.size(Rank - 1);
        if (N > 1)
          T = T.slice(Rank - 1, R.range(0, 1), N);
      }
      break;
    }
  }
  return T;
}

inline at::Tensor randomTensor(Rng &R) {
  at::Tensor T = withLayout(randomShape(R, 0, 4), R);
  if (R.chance(0.6))
    T = mutate(T, R);
  return T;
}

// Prime factors of N > 0.
inline std::vector<int64_t> primeFactors(int64_t N) {
  std::vector<int64_t> F;
  for (int64_t P = 2; P * P <= N; ++P)
    while (N % P == 0) {
      F.push_back(P);
      N /= P;
    }
  if (N > 1)
    F.push_back(N);
  return F;
}

// A shape to view/reshape a tensor of these sizes to; mostly valid ones
// (same numel), sometimes with a -1, sometimes invalid.
inline Dims randomViewShape(const Dims &Sizes, Rng &R) {
  int64_t N = model::numel(Sizes);
  int64_t Rank = Sizes.size();
  Dims Out;
  switch (R.range(0, 6)) {
  case 0:
    Out = Sizes;
    break;
  case 1: // merge a run of adjacent dims
    Out = Sizes;
    if (Rank >= 2) {
      int64_t I = R.range(0, Rank - 2), J = R.range(I + 1, Rank - 1);
      int64_t P = 1;
      for (int64_t K = I; K <= J; ++K)
        P *= Sizes[K];
      Out.erase(Out.begin() + I, Out.begin() + J + 1);
      Out.insert(Out.begin() + I, P);
    }
    break;
  case 2: // split one dim in two
    Out = Sizes;
    if (Rank >= 1) {
      int64_t D = R.range(0, Rank - 1), S = Sizes[D];
      std::vector<int64_t> Divisors;
      for (int64_t A = 1; A <= S; ++A)
        if (S % A == 0)
          Divisors.push_back(A);
      int64_t A = Divisors.empty() ? 0 : Divisors[R.range(0, Divisors.size() - 1)];
      int64_t B = A == 0 ? R.range(0, 3) : S / A;
      Out[D] = B;
      Out.insert(Out.begin() + D, A);
    }
    break;
  default: { // a random factorisation of numel
    if (N == 0) {
      Out = randomShape(R, 1, 4);
      Out[R.range(0, Out.size() - 1)] = 0;
    } else {
      Out.assign(R.range(0, 4), 1);
      for (int64_t F : primeFactors(N)) {
        if (Out.empty())
          Out.push_back(1);
        Out[R.range(0, Out.size() - 1)] *= F;
      }
    }
    break;
  }
  case 6: // often invalid
    Out = randomShape(R, 0, 4);
    break;
  }
  // Stray size-1 dims, and sometimes a -1 to infer.
  if (Out.size() < 6 && R.chance(0.2))
    Out.insert(Out.begin() + R.range(0, Out.size()), 1);
  if (!Out.empty() && R.chance(0.2))
    Out[R.range(0, Out.size() - 1)] = -1;
  return Out;
}

// A shape broadcastable with S (or sometimes not).
inline Dims randomPartnerShape(const Dims &S, Rng &R) {
  Dims P = S;
  switch (R.range(0, 4)) {
  case 0: // same shape
    break;
  case 1: // some dims become 1 and some leading dims disappear
    for (int64_t &X : P)
      if (R.chance(0.4))
        X = 1;
    P.erase(P.begin(), P.begin() + R.range(0, P.size()));
    break;
  case 2: // a larger shape: S's size-1 dims grow, new leading dims appear
    for (int64_t &X : P)
      if (X == 1 && R.chance(0.6))
        X = R.range(0, 4);
    while (static_cast<int64_t>(P.size()) < MaxRank && R.chance(0.4))
      P.insert(P.begin(), R.range(1, 3));
    break;
  case 3: // zero-dim
    P.clear();
    break;
  case 4: // anything
    P = randomShape(R, 0, 4);
    break;
  }
  return P;
}

// --------------------------------------------------------------- dtypes --

const tma::DType AllTypes[] = {
    tma::DType::Bool,      tma::DType::UInt8,     tma::DType::Int8,
    tma::DType::Int16,     tma::DType::Int32,     tma::DType::Int64,
    tma::DType::Float16,   tma::DType::BFloat16,  tma::DType::Float32,
    tma::DType::Float64,   tma::DType::Complex32, tma::DType::Complex64,
    tma::DType::Complex128,
};

inline c10::ScalarType toC10(tma::DType T) {
  switch (T) {
  case tma::DType::Bool: return c10::ScalarType::Bool;
  case tma::DType::UInt8: return c10::ScalarType::Byte;
  case tma::DType::Int8: return c10::ScalarType::Char;
  case tma::DType::Int16: return c10::ScalarType::Short;
  case tma::DType::Int32: return c10::ScalarType::Int;
  case tma::DType::Int64: return c10::ScalarType::Long;
  case tma::DType::Float16: return c10::ScalarType::Half;
  case tma::DType::BFloat16: return c10::ScalarType::BFloat16;
  case tma::DType::Float32: return c10::ScalarType::Float;
  case tma::DType::Float64: return c10::ScalarType::Double;
  case tma::DType::Complex32: return c10::ScalarType::ComplexHalf;
  case tma::DType::Complex64: return c10::ScalarType::ComplexFloat;
  case tma::DType::Complex128: return c10::ScalarType::ComplexDouble;
  }
  return c10::ScalarType::Undefined;
}

} // namespace tma_diff
