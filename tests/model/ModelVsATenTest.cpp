// Differential test: model/Geometry and model/DType against real LibTorch.
//
// A fixed-seed generator builds a few thousand small CPU tensors (rank 0-5,
// sizes 0-4, size-1 dims common) with varied layouts: contiguous,
// channels-last, permuted, sliced with steps, expanded, as_strided with
// arbitrary (even overlapping) strides, then further transposed, permuted,
// sliced, selected, unsqueezed, expanded or diagonalised. For each tensor the
// model's answer is compared with what ATen itself does:
//
//   computeStride / inferSize   Tensor::view (success, sizes, strides, offset)
//   computeStride               Tensor::reshape (alias vs copy, layout, bytes)
//   isContiguous ...            is_contiguous(), is_contiguous(ChannelsLast),
//                               is_non_overlapping_and_dense(),
//                               suggest_memory_format()
//   preserveFormatStrides       clone(), empty_like(), contiguous()
//   inferDenseStrides           at::infer_dense_strides
//   storageBytesFor             empty_strided(...).storage().nbytes()
//   tensorIteratorOutputStrides a.exp(), a + b (broadcast, permuted,
//                               expanded and channels-last operands)
//   broadcastShapes             at::infer_size(a, b)
//   promoteTypes, itemSize ...  c10::promoteTypes, elementSize, toString
//
// Every property collects its mismatches; the first few are printed with
// the tensor that caused them and the test fails on any. Each property also
// asserts that the generator reached the interesting cases (views that fail,
// reshapes that copy, non-dense inputs, ...), so a generator regression
// cannot make the test pass vacuously.
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

tma::Shape sym(const Dims &D) { return tma::shapeOf(D); }
Dims ints(const tma::Shape &S) {
  auto C = tma::constantShape(S);
  if (!C) {
    ADD_FAILURE() << "a constant shape gave a symbolic answer";
    return {};
  }
  return *C;
}
std::optional<Dims> ints(const std::optional<tma::Shape> &S) {
  if (!S)
    return std::nullopt;
  return ints(*S);
}
Dims must(const std::optional<tma::Shape> &S) {
  if (!S) {
    ADD_FAILURE() << "a constant shape left the layout undecided";
    return {};
  }
  return ints(*S);
}
bool yes(tma::Tri T) {
  if (T == tma::Tri::Unknown)
    ADD_FAILURE() << "a constant shape left a question undecided";
  return T == tma::Tri::True;
}
std::optional<Dims> when(tma::Tri T, const tma::Shape &S) {
  if (!yes(T))
    return std::nullopt;
  return ints(S);
}

int64_t numel(const Dims &D) { return *tma::numel(sym(D)).constant(); }
std::optional<Dims> inferSize(const Dims &Target, int64_t Numel) {
  tma::Shape S;
  tma::Tri T = tma::inferSize(sym(Target), Numel, S);
  return when(T, S);
}
std::optional<Dims> computeStride(const Dims &S, const Dims &St,
                                  const Dims &New) {
  tma::Shape Out;
  tma::Tri T = tma::computeStride(sym(S), sym(St), sym(New), Out);
  return when(T, Out);
}
std::optional<Dims> broadcastShapes(const Dims &A, const Dims &B) {
  tma::Shape Out;
  tma::Tri T = tma::broadcastShapes(sym(A), sym(B), Out);
  return when(T, Out);
}
Dims contiguousStrides(const Dims &S) {
  return ints(tma::contiguousStrides(sym(S)));
}
Dims channelsLastStrides(const Dims &S) {
  return ints(tma::channelsLastStrides(sym(S)));
}
Dims preserveFormatStrides(const Dims &S, const Dims &St) {
  return must(tma::preserveFormatStrides(sym(S), sym(St)));
}
Dims inferDenseStrides(const Dims &S, const Dims &St) {
  return must(tma::inferDenseStrides(sym(S), sym(St)));
}
int64_t storageBytesFor(const Dims &S, const Dims &St, int64_t ItemSize) {
  auto B = tma::checkedStorageBytes(sym(S), sym(St), ItemSize);
  return B && B->constant() ? *B->constant() : -1;
}
bool isContiguous(const Dims &S, const Dims &St) {
  return yes(tma::isContiguous(sym(S), sym(St)));
}
bool isNonOverlappingAndDense(const Dims &S, const Dims &St) {
  return yes(tma::isNonOverlappingAndDense(sym(S), sym(St)));
}
bool isChannelsLastContiguous(const Dims &S, const Dims &St) {
  return yes(tma::isChannelsLastContiguous(sym(S), sym(St)));
}
bool suggestsChannelsLast(const Dims &S, const Dims &St) {
  return yes(tma::suggestsChannelsLast(sym(S), sym(St)));
}
struct IterOperand {
  Dims Sizes, Strides;
};
Dims tensorIteratorOutputStrides(const Dims &Out,
                                 const std::vector<IterOperand> &Ins) {
  std::vector<tma::IterOperand> Sym;
  for (const IterOperand &O : Ins)
    Sym.push_back({sym(O.Sizes), sym(O.Strides)});
  return must(tma::tensorIteratorOutputStrides(sym(Out), Sym));
}

} // namespace model

namespace {

int64_t envInt(const char *Name, int64_t Default) {
  const char *V = std::getenv(Name);
  return V && *V ? std::atoll(V) : Default;
}

// The corpus is fixed: 3000 tensors per property from fixed seeds. For a
// soak run without rebuilding, TMA_DIFF_SCALE multiplies the corpus and
// TMA_DIFF_SEED picks other seeds.
const int NumTensors =
    static_cast<int>(3000 * std::max<int64_t>(envInt("TMA_DIFF_SCALE", 1), 1));
uint64_t seed(uint64_t Property) {
  return Property + 1000003ULL * static_cast<uint64_t>(envInt("TMA_DIFF_SEED", 0));
}
constexpr int MaxRank = 5;

Dims toDims(c10::IntArrayRef R) { return Dims(R.begin(), R.end()); }

std::string str(const Dims &D) {
  std::string S = "[";
  for (size_t I = 0; I < D.size(); ++I)
    S += (I ? "," : "") + std::to_string(D[I]);
  return S + "]";
}

std::string str(const std::optional<Dims> &D) {
  return D ? str(*D) : std::string("none");
}

std::string describe(const at::Tensor &T) {
  return "sizes=" + str(toDims(T.sizes())) +
         " strides=" + str(toDims(T.strides())) +
         " offset=" + std::to_string(T.storage_offset());
}

bool sameStorage(const at::Tensor &A, const at::Tensor &B) {
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

int64_t randomSize(Rng &R) {
  int64_t X = R.range(0, 99);
  if (X < 6)
    return 0;
  if (X < 30)
    return 1;
  return R.range(2, 4);
}

Dims randomShape(Rng &R, int64_t MinRank, int64_t MaxRankHere) {
  Dims S(R.range(MinRank, MaxRankHere));
  for (int64_t &X : S)
    X = randomSize(R);
  return S;
}

// Zero-filled, so that ops that read the data (exp, add, where) never see
// uninitialised memory (a bool condition must hold 0 or 1).
at::Tensor alloc(const Dims &S, at::ScalarType Type) {
  return at::zeros(S, Type);
}

// A tensor of exactly Shape with a random layout.
at::Tensor withLayout(const Dims &Shape, Rng &R,
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
at::Tensor mutate(at::Tensor T, Rng &R) {
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

at::Tensor randomTensor(Rng &R) {
  at::Tensor T = withLayout(randomShape(R, 0, 4), R);
  if (R.chance(0.6))
    T = mutate(T, R);
  return T;
}

// Prime factors of N > 0.
std::vector<int64_t> primeFactors(int64_t N) {
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
Dims randomViewShape(const Dims &Sizes, Rng &R) {
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
Dims randomPartnerShape(const Dims &S, Rng &R) {
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

c10::ScalarType toC10(tma::DType T) {
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

// ---------------------------------------------------------------- tests --

// Failed views throw c10::Error, whose constructor symbolises a backtrace
// (milliseconds each). Thousands of expected failures need a cheap fetcher.
class CheapErrors : public ::testing::Environment {
public:
  void SetUp() override {
    c10::SetStackTraceFetcher([] { return std::string(); });
  }
};
const auto *const CheapErrorsEnv =
    ::testing::AddGlobalTestEnvironment(new CheapErrors);

TEST(ModelVsATen, ViewAndInferSize) {
  Rng R(seed(1));
  Tally View("view: computeStride(inferSize(shape)) vs Tensor::view");
  Tally Infer("inferSize vs at::infer_size");
  int64_t Ok = 0, Failed = 0;
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes()), St = toDims(T.strides());
    for (int J = 0; J < 4; ++J) {
      Dims Shape = randomViewShape(S, R);
      std::optional<Dims> Inferred = model::inferSize(Shape, T.numel());
      std::optional<Dims> AtenInferred;
      try {
        AtenInferred = at::infer_size(Shape, T.numel());
      } catch (const std::exception &) {
      }
      Infer.expect(Inferred == AtenInferred, [&] {
        return "infer_size(" + str(Shape) + ", " + std::to_string(T.numel()) +
               "): model " + str(Inferred) + " aten " + str(AtenInferred);
      });

      std::optional<Dims> Model =
          Inferred ? model::computeStride(S, St, *Inferred) : std::nullopt;
      std::optional<at::Tensor> V;
      try {
        V = T.view(Shape);
      } catch (const std::exception &) {
      }
      (V ? Ok : Failed) += 1;
      bool Match = Model.has_value() == V.has_value();
      if (Match && V)
        Match = toDims(V->strides()) == *Model &&
                toDims(V->sizes()) == *Inferred &&
                V->storage_offset() == T.storage_offset() &&
                sameStorage(*V, T);
      View.expect(Match, [&] {
        return describe(T) + " .view(" + str(Shape) + "): model " +
               str(Model) + " aten " +
               (V ? describe(*V) : std::string("throws"));
      });
    }
  }
  EXPECT_NO_MISMATCHES(View);
  EXPECT_NO_MISMATCHES(Infer);
  // The generator must reach both outcomes in earnest.
  EXPECT_GT(Ok, NumTensors);
  EXPECT_GT(Failed, NumTensors / 2);
}

TEST(ModelVsATen, ReshapeAliasOrCopy) {
  Rng R(seed(2));
  Tally Reshape("reshape: view iff computeStride, else a contiguous copy");
  int64_t Aliases = 0, Copies = 0;
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes()), St = toDims(T.strides());
    for (int J = 0; J < 3; ++J) {
      Dims Shape = randomViewShape(S, R);
      std::optional<Dims> Inferred = model::inferSize(Shape, T.numel());
      if (!Inferred)
        continue; // covered by ViewAndInferSize
      std::optional<Dims> Model = model::computeStride(S, St, *Inferred);
      at::Tensor Out = T.reshape(Shape);
      bool Alias = sameStorage(Out, T);
      (Alias ? Aliases : Copies) += 1;
      bool Match = Alias == Model.has_value() &&
                   toDims(Out.sizes()) == *Inferred;
      if (Match && Alias)
        Match = toDims(Out.strides()) == *Model &&
                Out.storage_offset() == T.storage_offset();
      if (Match && !Alias) {
        Dims Contig = model::contiguousStrides(*Inferred);
        Match = toDims(Out.strides()) == Contig && Out.storage_offset() == 0 &&
                static_cast<int64_t>(Out.storage().nbytes()) ==
                    model::storageBytesFor(*Inferred, Contig, 4);
      }
      Reshape.expect(Match, [&] {
        return describe(T) + " .reshape(" + str(Shape) + "): model " +
               (Model ? "view " + str(Model) : std::string("copy")) +
               " aten " + (Alias ? "view " : "copy ") + describe(Out) +
               " nbytes=" + std::to_string(Out.storage().nbytes());
      });
    }
  }
  EXPECT_NO_MISMATCHES(Reshape);
  EXPECT_GT(Aliases, NumTensors);
  EXPECT_GT(Copies, NumTensors / 4);
}

TEST(ModelVsATen, ContiguityAndMemoryFormat) {
  Rng R(seed(3));
  Tally Contig("isContiguous vs is_contiguous()");
  Tally CL("isChannelsLastContiguous vs is_contiguous(ChannelsLast)");
  Tally Dense("isNonOverlappingAndDense vs is_non_overlapping_and_dense()");
  Tally Suggest("suggestsChannelsLast vs suggest_memory_format()");
  Tally SelfContig("contiguous() returns self iff isContiguous");
  Tally SelfCL("contiguous(ChannelsLast) returns self iff "
               "isChannelsLastContiguous");
  int64_t NumContig = 0, NumDenseOnly = 0, NumNonDense = 0, NumCL = 0,
          NumSuggest = 0;
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes()), St = toDims(T.strides());
    auto Desc = [&] { return describe(T); };
    bool C = model::isContiguous(S, St);
    bool D = model::isNonOverlappingAndDense(S, St);
    bool L = model::isChannelsLastContiguous(S, St);
    bool G = model::suggestsChannelsLast(S, St);
    Contig.expect(C == T.is_contiguous(), Desc);
    CL.expect(L == T.is_contiguous(at::MemoryFormat::ChannelsLast), Desc);
    Dense.expect(D == T.is_non_overlapping_and_dense(), Desc);
    Suggest.expect(G == (T.suggest_memory_format() ==
                         at::MemoryFormat::ChannelsLast),
                   Desc);
    at::Tensor Self = T.contiguous();
    SelfContig.expect(
        (Self.unsafeGetTensorImpl() == T.unsafeGetTensorImpl()) == C, Desc);
    if (S.size() == 4) {
      at::Tensor SelfL = T.contiguous(at::MemoryFormat::ChannelsLast);
      SelfCL.expect(
          (SelfL.unsafeGetTensorImpl() == T.unsafeGetTensorImpl()) == L, Desc);
    }
    NumContig += C;
    NumDenseOnly += D && !C;
    NumNonDense += !D;
    NumCL += L && !C;
    NumSuggest += G;
  }
  EXPECT_NO_MISMATCHES(Contig);
  EXPECT_NO_MISMATCHES(CL);
  EXPECT_NO_MISMATCHES(Dense);
  EXPECT_NO_MISMATCHES(Suggest);
  EXPECT_NO_MISMATCHES(SelfContig);
  EXPECT_NO_MISMATCHES(SelfCL);
  EXPECT_GT(NumContig, 100);
  EXPECT_GT(NumDenseOnly, 100);
  EXPECT_GT(NumNonDense, 100);
  EXPECT_GT(NumCL, 20);
  EXPECT_GT(NumSuggest, 20);
}

TEST(ModelVsATen, ClonePreserveAndEmptyLike) {
  Rng R(seed(4));
  Tally Clone("preserveFormatStrides vs clone().strides()");
  Tally Like("preserveFormatStrides vs empty_like().strides()");
  Tally To("preserveFormatStrides vs to(kDouble).strides() (_to_copy)");
  Tally Infer("inferDenseStrides vs at::infer_dense_strides");
  Tally CloneContig("contiguousStrides vs clone(Contiguous).strides()");
  Tally CloneCL("channelsLastStrides vs clone(ChannelsLast).strides()");
  int64_t NonDense = 0;
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes()), St = toDims(T.strides());
    Dims Model = model::preserveFormatStrides(S, St);
    NonDense += !T.is_non_overlapping_and_dense();
    at::Tensor C = T.clone();
    Clone.expect(toDims(C.strides()) == Model && C.storage_offset() == 0, [&] {
      return describe(T) + ": model " + str(Model) + " aten " + describe(C);
    });
    at::Tensor E = at::empty_like(T);
    Like.expect(toDims(E.strides()) == Model, [&] {
      return describe(T) + ": model " + str(Model) + " aten " + describe(E);
    });
    at::Tensor D = T.to(at::kDouble);
    To.expect(toDims(D.strides()) == Model && D.storage_offset() == 0, [&] {
      return describe(T) + ": model " + str(Model) + " aten " + describe(D);
    });
    Dims MI = model::inferDenseStrides(S, St);
    Dims AI = at::infer_dense_strides(T.sizes(), T.strides());
    Infer.expect(MI == AI, [&] {
      return describe(T) + ": model " + str(MI) + " aten " + str(AI);
    });
    at::Tensor CC = T.clone(at::MemoryFormat::Contiguous);
    CloneContig.expect(toDims(CC.strides()) == model::contiguousStrides(S), [&] {
      return describe(T) + ": model " + str(model::contiguousStrides(S)) +
             " aten " + describe(CC);
    });
    if (S.size() == 4) {
      at::Tensor CL = T.clone(at::MemoryFormat::ChannelsLast);
      Dims ML = model::channelsLastStrides(S);
      CloneCL.expect(toDims(CL.strides()) == ML, [&] {
        return describe(T) + ": model " + str(ML) + " aten " + describe(CL);
      });
    }
  }
  EXPECT_NO_MISMATCHES(Clone);
  EXPECT_NO_MISMATCHES(Like);
  EXPECT_NO_MISMATCHES(To);
  EXPECT_NO_MISMATCHES(Infer);
  EXPECT_NO_MISMATCHES(CloneContig);
  EXPECT_NO_MISMATCHES(CloneCL);
  EXPECT_GT(NonDense, 200);
}

TEST(ModelVsATen, StorageBytes) {
  Rng R(seed(5));
  Tally Bytes("storageBytesFor vs empty_strided(...).storage().nbytes()");
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes()), St = toDims(T.strides());
    tma::DType Type = AllTypes[R.range(0, std::size(AllTypes) - 1)];
    at::Tensor E = at::empty_strided(S, St, at::TensorOptions(toC10(Type)));
    int64_t Model = model::storageBytesFor(S, St, tma::itemSize(Type));
    int64_t Aten = E.storage().nbytes();
    Bytes.expect(Model == Aten, [&] {
      return describe(T) + " " + tma::dtypeName(Type) + ": model " +
             std::to_string(Model) + " aten " + std::to_string(Aten);
    });
  }
  EXPECT_NO_MISMATCHES(Bytes);
}

TEST(ModelVsATen, FactoryStrides) {
  Rng R(seed(6));
  Tally Contig("contiguousStrides vs empty(sizes).strides()");
  Tally CL("channelsLastStrides vs empty(sizes, ChannelsLast).strides()");
  for (int I = 0; I < NumTensors; ++I) {
    Dims S = randomShape(R, 0, MaxRank);
    Dims AC = toDims(at::empty(S).strides());
    Contig.expect(AC == model::contiguousStrides(S), [&] {
      return str(S) + ": model " + str(model::contiguousStrides(S)) + " aten " +
             str(AC);
    });
    S.resize(4, 2);
    Dims AL = toDims(
        at::empty(S, at::TensorOptions().memory_format(
                         at::MemoryFormat::ChannelsLast))
            .strides());
    CL.expect(AL == model::channelsLastStrides(S), [&] {
      return str(S) + ": model " + str(model::channelsLastStrides(S)) +
             " aten " + str(AL);
    });
  }
  EXPECT_NO_MISMATCHES(Contig);
  EXPECT_NO_MISMATCHES(CL);
}

TEST(ModelVsATen, TensorIteratorUnary) {
  Rng R(seed(7));
  Tally Unary("tensorIteratorOutputStrides vs a.exp().strides()");
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes());
    Dims Model = model::tensorIteratorOutputStrides(
        S, {model::IterOperand{S, toDims(T.strides())}});
    at::Tensor Out = T.exp();
    Unary.expect(toDims(Out.strides()) == Model && toDims(Out.sizes()) == S,
                 [&] {
                   return describe(T) + ".exp(): model " + str(Model) +
                          " aten " + describe(Out);
                 });
  }
  EXPECT_NO_MISMATCHES(Unary);
}

TEST(ModelVsATen, TensorIteratorBinaryAndBroadcast) {
  Rng R(seed(8));
  Tally Broadcast("broadcastShapes vs at::infer_size(a, b)");
  Tally Binary("tensorIteratorOutputStrides vs (a + b).strides()");
  int64_t Pairs = 0, Unbroadcastable = 0, NonTrivial = 0;
  for (int I = 0; I < 2 * NumTensors; ++I) {
    at::Tensor A = randomTensor(R);
    Dims PS = randomPartnerShape(toDims(A.sizes()), R);
    at::Tensor B = withLayout(PS, R);
    if (R.chance(0.5))
      std::swap(A, B);
    Dims SA = toDims(A.sizes()), SB = toDims(B.sizes());
    std::optional<Dims> Model = model::broadcastShapes(SA, SB);
    std::optional<Dims> Aten;
    try {
      Aten = at::infer_size(A.sizes(), B.sizes());
    } catch (const std::exception &) {
    }
    Broadcast.expect(Model == Aten, [&] {
      return "infer_size(" + str(SA) + ", " + str(SB) + "): model " +
             str(Model) + " aten " + str(Aten);
    });
    if (!Aten) {
      ++Unbroadcastable;
      continue;
    }
    ++Pairs;
    Dims Out = *Aten;
    Dims MS = model::tensorIteratorOutputStrides(
        Out, {model::IterOperand{SA, toDims(A.strides())},
              model::IterOperand{SB, toDims(B.strides())}});
    NonTrivial += MS != model::contiguousStrides(Out);
    at::Tensor Sum = A + B;
    Binary.expect(toDims(Sum.strides()) == MS && toDims(Sum.sizes()) == Out,
                  [&] {
                    return "(" + describe(A) + ") + (" + describe(B) +
                           "): model " + str(MS) + " aten " + describe(Sum);
                  });
  }
  EXPECT_NO_MISMATCHES(Broadcast);
  EXPECT_NO_MISMATCHES(Binary);
  EXPECT_GT(Pairs, NumTensors);
  EXPECT_GT(Unbroadcastable, 100);
  EXPECT_GT(NonTrivial, 300);
}

TEST(ModelVsATen, TensorIteratorTernaryWhere) {
  // at::where(cond, a, b): TensorIterator sees the operands in the order
  // cond, a, b, so the bool condition's layout decides first.
  Rng R(seed(9));
  Tally Where("tensorIteratorOutputStrides vs where(c, a, b).strides()");
  int64_t Compared = 0;
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor A = randomTensor(R);
    Dims SA = toDims(A.sizes());
    at::Tensor C = withLayout(randomPartnerShape(SA, R), R, at::kBool);
    at::Tensor B = withLayout(randomPartnerShape(SA, R), R);
    if (R.chance(0.5))
      std::swap(A, B);
    SA = toDims(A.sizes());
    Dims SB = toDims(B.sizes()), SC = toDims(C.sizes());
    std::optional<Dims> Out = model::broadcastShapes(SC, SA);
    if (Out)
      Out = model::broadcastShapes(*Out, SB);
    if (!Out)
      continue;
    ++Compared;
    Dims MS = model::tensorIteratorOutputStrides(
        *Out, {model::IterOperand{SC, toDims(C.strides())},
               model::IterOperand{SA, toDims(A.strides())},
               model::IterOperand{SB, toDims(B.strides())}});
    at::Tensor W = at::where(C, A, B);
    Where.expect(toDims(W.strides()) == MS && toDims(W.sizes()) == *Out, [&] {
      return "where(" + describe(C) + ", " + describe(A) + ", " +
             describe(B) + "): model " + str(MS) + " aten " + describe(W);
    });
  }
  EXPECT_NO_MISMATCHES(Where);
  EXPECT_GT(Compared, NumTensors / 3);
}

TEST(ModelVsATen, DTypes) {
  Tally Names("dtypeFromName(c10::toString) and itemSize vs elementSize");
  Tally Promote("promoteTypes vs c10::promoteTypes");
  Tally ZeroDim("category rule vs at::result_type(tensor, zero-dim tensor)");
  for (tma::DType A : AllTypes) {
    c10::ScalarType CA = toC10(A);
    Names.expect(tma::dtypeFromName(c10::toString(CA)) == A &&
                     tma::itemSize(A) ==
                         static_cast<int64_t>(c10::elementSize(CA)),
                 [&] {
                   return std::string(tma::dtypeName(A)) + " vs " +
                          c10::toString(CA);
                 });
    for (tma::DType B : AllTypes) {
      c10::ScalarType CB = toC10(B);
      c10::ScalarType Expected = c10::promoteTypes(CA, CB);
      tma::DType Got = tma::promoteTypes(A, B);
      Promote.expect(toC10(Got) == Expected, [&] {
        return std::string(tma::dtypeName(A)) + " + " + tma::dtypeName(B) +
               ": model " + tma::dtypeName(Got) + " aten " +
               c10::toString(Expected);
      });
      // A dimensioned tensor of A with a zero-dim tensor of B: the
      // zero-dim operand only counts when its category is higher, and a
      // complex zero-dim keeps a floating tensor's precision
      // (combine_categories). The rule is the one DTypeTest spells out.
      c10::ScalarType RT =
          at::result_type(at::empty({2}, CA), at::empty({}, CB));
      tma::DType Rule = A;
      if (tma::typeCategory(B) > tma::typeCategory(A))
        Rule = tma::isComplex(B) && tma::isFloating(A)
                   ? tma::toComplex(A)
                   : tma::promoteTypes(A, B);
      ZeroDim.expect(toC10(Rule) == RT, [&] {
        return std::string(tma::dtypeName(A)) + "[2] + " + tma::dtypeName(B) +
               "[]: model " + tma::dtypeName(Rule) + " aten " +
               c10::toString(RT);
      });
    }
  }
  EXPECT_NO_MISMATCHES(Names);
  EXPECT_NO_MISMATCHES(Promote);
  EXPECT_NO_MISMATCHES(ZeroDim);
}

TEST(ModelVsATen, WrapDim) {
  Tally Wrap("wrapDim vs c10::maybe_wrap_dim");
  for (int64_t Rank = 0; Rank <= MaxRank; ++Rank)
    for (int64_t Dim = -MaxRank - 2; Dim <= MaxRank + 2; ++Dim) {
      std::optional<int64_t> Aten;
      try {
        Aten = c10::maybe_wrap_dim(Dim, Rank);
      } catch (const std::exception &) {
      }
      std::optional<int64_t> Model = tma::wrapDim(Dim, Rank);
      Wrap.expect(Model == Aten, [&] {
        return "dim " + std::to_string(Dim) + " rank " + std::to_string(Rank);
      });
    }
  EXPECT_NO_MISMATCHES(Wrap);
}

} // namespace
