// SymSize: canonical integer expressions over named symbols.
//
// The canonical form (see SymSize.h) is built by every operation, so no
// caller ever holds a non-canonical value:
//   - makePoly sorts terms in graded-lex order, merges equal monomials with
//     checked additions and drops zero terms; a polynomial that is only a
//     constant becomes a plain int64.
//   - floorDiv/mod pull the part the divisor divides out of the dividend and
//     keep the rest as an opaque atom, after cancelling common factors;
//     max/min flatten, fold constants and drop operands another one
//     dominates by a constant.
// Every coefficient operation is checked; overflow produces an error value.
// SymSizeCompare.cpp holds the canonical order, equality and hashing.
#include "model/SymSize.h"
#include "model/SymSizeImpl.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <numeric>
#include <ostream>
#include <set>

namespace tma {

using namespace detail;

// Limits that keep hostile or degenerate input from exploding: beyond them a
// value is an error of kind TooComplex (the caller reports it unknown).
namespace detail {
constexpr size_t MaxTerms = 512;
constexpr uint32_t MaxDegree = 64;
constexpr int MaxDepth = 32;
constexpr size_t MaxMinMaxArgs = 16;

size_t mixHash(size_t H, size_t V) {
  return H ^ (V + 0x9e3779b97f4a7c15ULL + (H << 6) + (H >> 2));
}

bool addOverflows(int64_t A, int64_t B, int64_t &R) {
  return __builtin_add_overflow(A, B, &R);
}
bool mulOverflows(int64_t A, int64_t B, int64_t &R) {
  return __builtin_mul_overflow(A, B, &R);
}

int64_t gcd64(int64_t A, int64_t B) {
  // Magnitudes as unsigned so INT64_MIN does not overflow.
  uint64_t X = A < 0 ? 0 - uint64_t(A) : uint64_t(A);
  uint64_t Y = B < 0 ? 0 - uint64_t(B) : uint64_t(B);
  while (Y) {
    uint64_t T = X % Y;
    X = Y;
    Y = T;
  }
  return X > uint64_t(INT64_MAX) ? 0 : int64_t(X); // 0: "no common factor"
}

/// Floor division of constants; false on overflow (INT64_MIN / -1).
bool floorDivConst(int64_t A, int64_t C, int64_t &Q) {
  if (A == INT64_MIN && C == -1)
    return false;
  Q = A / C;
  if (A % C != 0 && ((A < 0) != (C < 0)))
    --Q;
  return true;
}

int64_t floorModConst(int64_t A, int64_t C) {
  if (C == -1)
    return 0;
  int64_t R = A % C;
  if (R != 0 && ((R < 0) != (C < 0)))
    R += C;
  return R;
}

uint32_t degreeOf(const std::vector<SymFactor> &F) {
  uint32_t D = 0;
  for (const SymFactor &X : F)
    D += X.Exp;
  return D;
}

/// Graded lex: > 0 when A is the greater monomial.
int compareMonomials(const std::vector<SymFactor> &A,
                     const std::vector<SymFactor> &B) {
  uint32_t DA = degreeOf(A), DB = degreeOf(B);
  if (DA != DB)
    return DA > DB ? 1 : -1;
  size_t I = 0, J = 0;
  while (I < A.size() && J < B.size()) {
    int C = compareAtoms(*A[I].Atom, *B[J].Atom);
    if (C < 0)
      return 1; // A has an earlier atom that B lacks
    if (C > 0)
      return -1;
    if (A[I].Exp != B[J].Exp)
      return A[I].Exp > B[J].Exp ? 1 : -1;
    ++I;
    ++J;
  }
  return 0;
}

size_t hashAtomRef(const AtomRef &A) { return A->Hash; }

size_t hashTerms(const std::vector<SymTerm> &Terms) {
  size_t H = 0x51ed270b;
  for (const SymTerm &T : Terms) {
    H = mixHash(H, std::hash<int64_t>()(T.Coeff));
    for (const SymFactor &F : T.Factors)
      H = mixHash(mixHash(H, hashAtomRef(F.Atom)), F.Exp);
    H = mixHash(H, 0xfe);
  }
  return H;
}

} // namespace detail

struct SymSizeAccess {
  static SymSize make(std::shared_ptr<const SymExpr> E) {
    return SymSize(std::move(E));
  }
};

namespace {

SymSize makeError(SymErrorKind K, std::string Reason) {
  auto E = std::make_shared<SymExpr>();
  E->Error = K;
  E->Reason = std::move(Reason);
  E->Hash = mixHash(std::hash<std::string>()(E->Reason), size_t(K));
  return SymSizeAccess::make(std::move(E));
}

SymSize overflow() {
  return makeError(SymErrorKind::Overflow, "integer overflow in a size");
}
SymSize tooComplex(const char *What) {
  return makeError(SymErrorKind::TooComplex,
                   std::string("size expression too complex: ") + What);
}

} // namespace

namespace detail {
/// Canonicalises a list of terms (any order, repeats, zeros allowed).
SymSize makePoly(std::vector<SymTerm> Terms) {
  std::stable_sort(Terms.begin(), Terms.end(),
                   [](const SymTerm &A, const SymTerm &B) {
                     return compareMonomials(A.Factors, B.Factors) > 0;
                   });
  std::vector<SymTerm> Out;
  Out.reserve(Terms.size());
  for (SymTerm &T : Terms) {
    if (!Out.empty() && compareMonomials(Out.back().Factors, T.Factors) == 0) {
      if (addOverflows(Out.back().Coeff, T.Coeff, Out.back().Coeff))
        return overflow();
      continue;
    }
    if (!Out.empty() && Out.back().Coeff == 0)
      Out.pop_back();
    Out.push_back(std::move(T));
  }
  if (!Out.empty() && Out.back().Coeff == 0)
    Out.pop_back();
  if (Out.empty())
    return SymSize(0);
  if (Out.size() == 1 && Out[0].Factors.empty())
    return SymSize(Out[0].Coeff);
  if (Out.size() > MaxTerms)
    return tooComplex("too many terms");
  auto E = std::make_shared<SymExpr>();
  E->Hash = hashTerms(Out);
  E->Terms = std::move(Out);
  return SymSizeAccess::make(std::move(E));
}
} // namespace detail

namespace {

std::vector<SymTerm> termsOf(const SymSize &S) {
  if (auto C = S.constant()) {
    if (*C == 0)
      return {};
    return {SymTerm{{}, *C}};
  }
  return S.expr()->Terms;
}

int depthOf(const SymSize &S) {
  if (!S.expr())
    return 0;
  int D = 0;
  for (const SymTerm &T : S.expr()->Terms)
    for (const SymFactor &F : T.Factors)
      D = std::max(D, F.Atom->Depth);
  return D;
}

SymSize atomValue(AtomRef A) {
  std::vector<SymTerm> T{SymTerm{{SymFactor{std::move(A), 1}}, 1}};
  return makePoly(std::move(T));
}

SymSize makeAtom(AtomKind K, std::string Name, std::vector<SymSize> Args) {
  auto A = std::make_shared<SymAtom>();
  A->Kind = K;
  A->Name = std::move(Name);
  size_t H = mixHash(size_t(K) + 0x77, std::hash<std::string>()(A->Name));
  int Depth = 0;
  for (const SymSize &S : Args) {
    H = mixHash(H, S.hash());
    Depth = std::max(Depth, depthOf(S) + 1);
  }
  if (Depth > MaxDepth)
    return tooComplex("operations nest too deeply");
  A->Args = std::move(Args);
  A->Hash = H;
  A->Depth = Depth;
  return atomValue(std::move(A));
}

} // namespace

namespace detail {
/// The single atom S is, when S is exactly one atom with coefficient 1.
const SymAtom *soleAtom(const SymSize &S) {
  const SymExpr *E = S.expr();
  if (!E || E->Error != SymErrorKind::None || E->Terms.size() != 1)
    return nullptr;
  const SymTerm &T = E->Terms[0];
  if (T.Coeff != 1 || T.Factors.size() != 1 || T.Factors[0].Exp != 1)
    return nullptr;
  return T.Factors[0].Atom.get();
}
} // namespace detail

namespace {

const SymSize *firstError(const SymSize &A, const SymSize &B) {
  if (A.isError())
    return &A;
  if (B.isError())
    return &B;
  return nullptr;
}

/// Multiplies monomials; false when the degree limit is passed.
bool mulMonomials(const std::vector<SymFactor> &A,
                  const std::vector<SymFactor> &B,
                  std::vector<SymFactor> &Out) {
  Out.clear();
  size_t I = 0, J = 0;
  while (I < A.size() || J < B.size()) {
    int C = I == A.size()   ? 1
            : J == B.size() ? -1
                            : compareAtoms(*A[I].Atom, *B[J].Atom);
    if (C < 0)
      Out.push_back(A[I++]);
    else if (C > 0)
      Out.push_back(B[J++]);
    else {
      Out.push_back(SymFactor{A[I].Atom, A[I].Exp + B[J].Exp});
      ++I;
      ++J;
    }
  }
  return degreeOf(Out) <= MaxDegree;
}

/// Out = A / M when the monomial M divides A.
bool divMonomial(const std::vector<SymFactor> &A,
                 const std::vector<SymFactor> &M, std::vector<SymFactor> &Out) {
  Out.clear();
  size_t J = 0;
  for (const SymFactor &F : A) {
    if (J < M.size() && compareAtoms(*F.Atom, *M[J].Atom) == 0) {
      if (M[J].Exp > F.Exp)
        return false;
      if (F.Exp > M[J].Exp)
        Out.push_back(SymFactor{F.Atom, F.Exp - M[J].Exp});
      ++J;
      continue;
    }
    if (J < M.size() && compareAtoms(*M[J].Atom, *F.Atom) < 0)
      return false; // M has an atom A lacks
    Out.push_back(F);
  }
  return J == M.size();
}

/// The greatest monomial dividing every term (the empty one when none).
std::vector<SymFactor> commonMonomial(const std::vector<SymTerm> &Terms) {
  if (Terms.empty())
    return {};
  std::vector<SymFactor> Common = Terms[0].Factors;
  for (size_t I = 1; I < Terms.size() && !Common.empty(); ++I) {
    std::vector<SymFactor> Next;
    for (const SymFactor &F : Common)
      for (const SymFactor &G : Terms[I].Factors)
        if (compareAtoms(*F.Atom, *G.Atom) == 0)
          Next.push_back(SymFactor{F.Atom, std::min(F.Exp, G.Exp)});
    Common = std::move(Next);
  }
  return Common;
}

int64_t contentOf(const std::vector<SymTerm> &Terms) {
  int64_t G = 0;
  for (const SymTerm &T : Terms)
    G = G == 0 ? gcd64(T.Coeff, 0) : gcd64(G, T.Coeff);
  return G;
}

/// Divides every term by Coeff * Mono (known to divide each one exactly).
SymSize divideTerms(const std::vector<SymTerm> &Terms, int64_t Coeff,
                    const std::vector<SymFactor> &Mono) {
  std::vector<SymTerm> Out;
  for (const SymTerm &T : Terms) {
    SymTerm N;
    divMonomial(T.Factors, Mono, N.Factors);
    N.Coeff = T.Coeff / Coeff;
    Out.push_back(std::move(N));
  }
  return makePoly(std::move(Out));
}

bool anyNegativeCoeff(const std::vector<SymTerm> &Terms) {
  for (const SymTerm &T : Terms)
    if (T.Coeff < 0)
      return true;
  return false;
}

/// A / B when B divides A exactly as polynomials (multivariate division in
/// graded-lex order with a zero remainder).
std::optional<SymSize> exactQuotient(const SymSize &A, const SymSize &B) {
  if (!B.expr())
    return std::nullopt;
  const SymTerm &Lead = B.expr()->Terms[0];
  SymSize Rem = A, Q = 0;
  for (size_t Step = 0; Step <= MaxTerms; ++Step) {
    if (Rem.isError() || Q.isError())
      return std::nullopt;
    std::vector<SymTerm> RT = termsOf(Rem);
    if (RT.empty())
      return Q;
    SymTerm QT;
    if (!divMonomial(RT[0].Factors, Lead.Factors, QT.Factors) ||
        RT[0].Coeff % Lead.Coeff != 0)
      return std::nullopt;
    QT.Coeff = RT[0].Coeff / Lead.Coeff;
    SymSize QS = makePoly({QT});
    Q = Q + QS;
    Rem = Rem - QS * B;
  }
  return std::nullopt;
}

/// Splits Dividend by a single-term divisor Coeff*Mono (Coeff > 0) into a
/// quotient of the terms it divides and the remainder, with floor
/// coefficients: term k*m*t -> floor(k/Coeff)*t, remainder (k mod Coeff)*m*t.
void splitBySingleTerm(const std::vector<SymTerm> &Dividend, int64_t Coeff,
                       const std::vector<SymFactor> &Mono,
                       std::vector<SymTerm> &Quot, std::vector<SymTerm> &Rem) {
  for (const SymTerm &T : Dividend) {
    SymTerm QT;
    if (!divMonomial(T.Factors, Mono, QT.Factors)) {
      Rem.push_back(T);
      continue;
    }
    int64_t Q = 0;
    floorDivConst(T.Coeff, Coeff, Q); // Coeff > 0: no overflow
    int64_t R = T.Coeff - Q * Coeff;
    if (Q != 0) {
      QT.Coeff = Q;
      Quot.push_back(std::move(QT));
    }
    if (R != 0)
      Rem.push_back(SymTerm{T.Factors, R});
  }
}

SymSize floorDivByConstant(const SymSize &A, int64_t C) {
  // C > 1, A symbolic.
  std::vector<SymTerm> Q, R;
  splitBySingleTerm(A.expr()->Terms, C, {}, Q, R);
  SymSize QS = makePoly(std::move(Q));
  SymSize RS = makePoly(R);
  if (RS.isConstant()) // 0 <= RS < C
    return QS;
  int64_t G = gcd64(contentOf(R), C);
  if (G > 1) {
    RS = divideTerms(R, G, {});
    C /= G;
  }
  // floor(floor(x / d) / c) = floor(x / (d*c)) for positive d and c.
  if (const SymAtom *In = soleAtom(RS))
    if (In->Kind == AtomKind::FloorDiv && In->Args[1].constant()) {
      int64_t D = *In->Args[1].constant(), DC;
      if (D > 0 && !mulOverflows(D, C, DC))
        return QS + SymSize::floorDiv(In->Args[0], DC);
    }
  return QS + makeAtom(AtomKind::FloorDiv, "", {RS, SymSize(C)});
}

/// The opaque quotient after cancelling the factors dividend and divisor
/// share: floor(g*r / (g*b)) = floor(r / b) for any g != 0.
SymSize opaqueQuotient(AtomKind K, const SymSize &R, const SymSize &B) {
  std::vector<SymTerm> RT = termsOf(R), BT = termsOf(B);
  if (K == AtomKind::FloorDiv) {
    std::vector<SymTerm> All = RT;
    All.insert(All.end(), BT.begin(), BT.end());
    int64_t G = contentOf(All);
    std::vector<SymFactor> M = commonMonomial(All);
    if (G > 1 || !M.empty()) {
      SymSize R2 = divideTerms(RT, G, M), B2 = divideTerms(BT, G, M);
      if (B2.constant())
        return SymSize::floorDiv(R2, B2);
      return opaqueQuotient(K, R2, B2);
    }
  } else {
    // (g*r) mod (g*b) = g * (r mod b) only for g > 0: constants only.
    std::vector<SymTerm> All = RT;
    All.insert(All.end(), BT.begin(), BT.end());
    int64_t G = contentOf(All);
    if (G > 1)
      return SymSize(G) *
             SymSize::mod(divideTerms(RT, G, {}), divideTerms(BT, G, {}));
  }
  if (R == B)
    return K == AtomKind::FloorDiv ? SymSize(1) : SymSize(0);
  // (x mod b) mod b = x mod b.
  if (const SymAtom *In = soleAtom(R))
    if (K == AtomKind::Mod && In->Kind == AtomKind::Mod && In->Args[1] == B)
      return R;
  return makeAtom(K, "", {R, B});
}

SymSize modByConstant(const SymSize &A, int64_t C) {
  // C > 1, A symbolic.
  std::vector<SymTerm> R;
  for (const SymTerm &T : A.expr()->Terms) {
    int64_t M = floorModConst(T.Coeff, C);
    if (M != 0)
      R.push_back(SymTerm{T.Factors, M});
  }
  SymSize RS = makePoly(R);
  if (RS.isConstant())
    return RS;
  int64_t G = gcd64(contentOf(R), C);
  if (G > 1)
    return SymSize(G) * SymSize::mod(divideTerms(R, G, {}), C / G);
  // (x mod d) mod c = x mod c when c divides d.
  if (const SymAtom *In = soleAtom(RS))
    if (In->Kind == AtomKind::Mod && In->Args[1].constant() &&
        *In->Args[1].constant() % C == 0)
      return *In->Args[1].constant() == C
                 ? RS
                 : SymSize::mod(In->Args[0], SymSize(C));
  return makeAtom(AtomKind::Mod, "", {RS, SymSize(C)});
}

SymSize minMax(AtomKind K, const SymSize &A, const SymSize &B) {
  if (const SymSize *E = firstError(A, B))
    return *E;
  bool IsMax = K == AtomKind::Max;
  if (A.constant() && B.constant())
    return IsMax ? std::max(*A.constant(), *B.constant())
                 : std::min(*A.constant(), *B.constant());
  std::vector<SymSize> Args;
  for (const SymSize *S : {&A, &B}) {
    const SymAtom *At = soleAtom(*S);
    if (At && At->Kind == K)
      Args.insert(Args.end(), At->Args.begin(), At->Args.end());
    else
      Args.push_back(*S);
  }
  std::sort(Args.begin(), Args.end(), SymSize::Less());
  Args.erase(std::unique(Args.begin(), Args.end()), Args.end());
  // Drop an operand another one dominates by a constant difference.
  std::vector<bool> Dropped(Args.size(), false);
  for (size_t I = 0; I < Args.size(); ++I)
    for (size_t J = I + 1; J < Args.size(); ++J) {
      if (Dropped[I] || Dropped[J])
        continue;
      SymSize D = Args[I] - Args[J];
      if (!D.constant())
        continue;
      bool IGreater = *D.constant() >= 0;
      Dropped[IGreater == IsMax ? J : I] = true;
    }
  std::vector<SymSize> Kept;
  for (size_t I = 0; I < Args.size(); ++I)
    if (!Dropped[I])
      Kept.push_back(Args[I]);
  if (Kept.size() == 1)
    return Kept[0];
  if (Kept.size() > MaxMinMaxArgs)
    return tooComplex("too many max/min operands");
  return makeAtom(K, "", std::move(Kept));
}

} // namespace

// ----------------------------------------------------------- construction --

SymSize::SymSize(std::shared_ptr<const SymExpr> E) : Expr(std::move(E)) {}

SymSize SymSize::symbol(std::string Name) {
  return makeAtom(AtomKind::Symbol, std::move(Name), {});
}

SymSize SymSize::error(SymErrorKind Kind, std::string Reason) {
  if (Kind == SymErrorKind::None)
    Kind = SymErrorKind::TooComplex;
  return makeError(Kind, std::move(Reason));
}

bool SymSize::isSymbolic() const {
  return Expr && Expr->Error == SymErrorKind::None;
}
bool SymSize::isError() const {
  return Expr && Expr->Error != SymErrorKind::None;
}
SymErrorKind SymSize::errorKind() const {
  return Expr ? Expr->Error : SymErrorKind::None;
}
std::string SymSize::errorReason() const {
  return isError() ? Expr->Reason : std::string();
}

std::optional<std::string> SymSize::symbolName() const {
  const SymAtom *A = soleAtom(*this);
  if (!A || A->Kind != AtomKind::Symbol)
    return std::nullopt;
  return A->Name;
}

size_t SymSize::termCount() const { return Expr ? Expr->Terms.size() : 1; }

// ------------------------------------------------------------- arithmetic --

SymSize operator+(const SymSize &A, const SymSize &B) {
  if (const SymSize *E = firstError(A, B))
    return *E;
  if (A.constant() && B.constant()) {
    int64_t R;
    if (addOverflows(*A.constant(), *B.constant(), R))
      return overflow();
    return R;
  }
  if (B.constant() == 0)
    return A;
  if (A.constant() == 0)
    return B;
  std::vector<SymTerm> T = termsOf(A), TB = termsOf(B);
  T.insert(T.end(), TB.begin(), TB.end());
  return makePoly(std::move(T));
}

SymSize SymSize::operator-() const { return *this * SymSize(-1); }

SymSize operator-(const SymSize &A, const SymSize &B) { return A + (-B); }

SymSize operator*(const SymSize &A, const SymSize &B) {
  if (const SymSize *E = firstError(A, B))
    return *E;
  if (A.constant() && B.constant()) {
    int64_t R;
    if (mulOverflows(*A.constant(), *B.constant(), R))
      return overflow();
    return R;
  }
  if (A.constant() == 0 || B.constant() == 0)
    return 0;
  if (A.constant() == 1)
    return B;
  if (B.constant() == 1)
    return A;
  std::vector<SymTerm> TA = termsOf(A), TB = termsOf(B);
  if (TA.size() * TB.size() > MaxTerms * 4)
    return tooComplex("too many terms");
  std::vector<SymTerm> Out;
  Out.reserve(TA.size() * TB.size());
  for (const SymTerm &X : TA)
    for (const SymTerm &Y : TB) {
      SymTerm T;
      if (mulOverflows(X.Coeff, Y.Coeff, T.Coeff))
        return overflow();
      if (!mulMonomials(X.Factors, Y.Factors, T.Factors))
        return tooComplex("degree too high");
      Out.push_back(std::move(T));
    }
  return makePoly(std::move(Out));
}

SymSize SymSize::floorDiv(const SymSize &A, const SymSize &B) {
  if (const SymSize *E = firstError(A, B))
    return *E;
  if (auto C = B.constant()) {
    if (*C == 0)
      return makeError(SymErrorKind::DivisionByZero, "division by zero");
    if (auto AC = A.constant()) {
      int64_t Q;
      if (!floorDivConst(*AC, *C, Q))
        return overflow();
      return Q;
    }
    if (*C < 0) {
      if (*C == INT64_MIN)
        return overflow();
      return floorDiv(-A, SymSize(-*C));
    }
    if (*C == 1)
      return A;
    return floorDivByConstant(A, *C);
  }
  if (A.constant() == 0)
    return 0;
  if (A == B)
    return 1; // B != 0, or the C++ expression itself is undefined
  const std::vector<SymTerm> &BT = B.expr()->Terms;
  if (BT.size() == 1) {
    if (BT[0].Coeff < 0)
      return floorDiv(-A, -B);
    std::vector<SymTerm> Q, R;
    splitBySingleTerm(termsOf(A), BT[0].Coeff, BT[0].Factors, Q, R);
    // A negative remainder would print as C++ that truncates where floor
    // rounds down: keep the whole quotient opaque instead.
    if (anyNegativeCoeff(R))
      return opaqueQuotient(AtomKind::FloorDiv, A, B);
    SymSize QS = makePoly(std::move(Q));
    if (R.empty())
      return QS;
    return QS + opaqueQuotient(AtomKind::FloorDiv, makePoly(R), B);
  }
  if (auto Q = exactQuotient(A, B))
    return *Q;
  return opaqueQuotient(AtomKind::FloorDiv, A, B);
}

SymSize SymSize::ceilDiv(const SymSize &A, const SymSize &B) {
  return floorDiv(A + B - SymSize(1), B);
}

SymSize SymSize::mod(const SymSize &A, const SymSize &B) {
  if (const SymSize *E = firstError(A, B))
    return *E;
  if (auto C = B.constant()) {
    if (*C == 0)
      return makeError(SymErrorKind::DivisionByZero, "modulo by zero");
    if (auto AC = A.constant())
      return floorModConst(*AC, *C);
    if (*C < 0) {
      if (*C == INT64_MIN)
        return overflow();
      return -mod(-A, SymSize(-*C));
    }
    if (*C == 1)
      return 0;
    return modByConstant(A, *C);
  }
  if (A.constant() == 0 || A == B)
    return 0;
  if (const SymAtom *In = soleAtom(A))
    if (In->Kind == AtomKind::Mod && In->Args[1] == B)
      return A;
  const std::vector<SymTerm> &BT = B.expr()->Terms;
  if (BT.size() == 1 && BT[0].Coeff > 0) {
    std::vector<SymTerm> Q, R;
    splitBySingleTerm(termsOf(A), BT[0].Coeff, BT[0].Factors, Q, R);
    if (anyNegativeCoeff(R))
      return opaqueQuotient(AtomKind::Mod, A, B);
    if (R.empty())
      return 0;
    return opaqueQuotient(AtomKind::Mod, makePoly(R), B);
  }
  if (BT.size() > 1 && exactQuotient(A, B))
    return 0;
  return opaqueQuotient(AtomKind::Mod, A, B);
}

SymSize SymSize::max(const SymSize &A, const SymSize &B) {
  return minMax(AtomKind::Max, A, B);
}
SymSize SymSize::min(const SymSize &A, const SymSize &B) {
  return minMax(AtomKind::Min, A, B);
}


} // namespace tma
