// ShapeEnv's decisions: is an expression non-negative, zero, a multiple of
// another, does a relation hold, under the facts alone or with defaults.
//
// 1. RangeProver bounds an expression with saturating 128-bit interval
//    arithmetic (a bound that leaves the int64 range becomes "unbounded" in
//    the safe direction), so no decision rests on a wrapped number.
// 2. The decisions ask the prover for the range of a difference and answer
//    True, False or Unknown; weakestDefaults says which defaults an answer
//    needed.
#include "model/ShapeEnv.h"
#include "model/ShapeEnvImpl.h"

#include "model/Units.h"

#include <algorithm>
#include <functional>

namespace tma {

using namespace detail;

namespace {

using I128 = __int128;
constexpr I128 Lim = I128(1) << 62; // finite bounds stay within +-Lim
constexpr I128 Inf = I128(1) << 100;

/// An interval; Lo is never +Inf and Hi never -Inf.
struct Iv {
  I128 Lo = -Inf, Hi = Inf;
};

bool isInf(I128 V) { return V >= Inf || V <= -Inf; }
// A lower bound above Lim is still a lower bound at Lim; one below -Lim is
// no bound at all (and the mirror image for upper bounds).
I128 clampLo(I128 V) { return V < -Lim ? -Inf : (V > Lim ? Lim : V); }
I128 clampHi(I128 V) { return V > Lim ? Inf : (V < -Lim ? -Lim : V); }
Iv makeIv(I128 Lo, I128 Hi) { return {clampLo(Lo), clampHi(Hi)}; }

I128 mulExt(I128 A, I128 B) {
  if (A == 0 || B == 0)
    return 0;
  if (isInf(A) || isInf(B))
    return (A > 0) == (B > 0) ? Inf : -Inf;
  return A * B; // |A|, |B| <= 2^63: fits
}
I128 addExt(I128 A, I128 B) {
  if (isInf(A))
    return A;
  if (isInf(B))
    return B;
  return A + B;
}
I128 floorDiv128(I128 A, I128 B) {
  I128 Q = A / B;
  if (A % B != 0 && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}

Iv ivAdd(Iv A, Iv B) { return makeIv(addExt(A.Lo, B.Lo), addExt(A.Hi, B.Hi)); }
Iv ivMul(Iv A, Iv B) {
  I128 C[4] = {mulExt(A.Lo, B.Lo), mulExt(A.Lo, B.Hi), mulExt(A.Hi, B.Lo),
               mulExt(A.Hi, B.Hi)};
  return makeIv(*std::min_element(C, C + 4), *std::max_element(C, C + 4));
}
Iv ivConst(int64_t V) { return {I128(V), I128(V)}; }

std::optional<int64_t> toBound(I128 V) {
  if (isInf(V))
    return std::nullopt;
  return int64_t(V);
}

/// V is exactly the atom A.
bool isAtom(const SymSize &V, const SymAtom &A) {
  const SymExpr *E = V.expr();
  if (!E || E->Error != SymErrorKind::None || E->Terms.size() != 1)
    return false;
  const SymTerm &T = E->Terms[0];
  return T.Coeff == 1 && T.Factors.size() == 1 && T.Factors[0].Exp == 1 &&
         compareAtoms(*T.Factors[0].Atom, A) == 0;
}

int64_t gcdAbs(int64_t A, int64_t B) {
  uint64_t X = A < 0 ? 0 - uint64_t(A) : uint64_t(A);
  uint64_t Y = B < 0 ? 0 - uint64_t(B) : uint64_t(B);
  while (Y) {
    uint64_t T = X % Y;
    X = Y;
    Y = T;
  }
  return X > uint64_t(INT64_MAX) ? 1 : int64_t(X);
}

} // namespace

// ------------------------------------------------------------ RangeProver --

/// Bounds of expressions under one mode (facts only, or with defaults).
struct RangeProver {
  const ShapeEnv &Env;
  ShapeEnv::Mode M;
  /// Ranges of the fresh symbols the shift introduces.
  const std::map<std::string, Iv> *Fresh = nullptr;

  Iv symbol(const std::string &Name) const {
    if (Fresh) {
      auto It = Fresh->find(Name);
      if (It != Fresh->end())
        return It->second;
    }
    auto It = Env.Symbols.find(Name);
    if (It == Env.Symbols.end())
      return {};
    const SymbolInfo &S = It->second;
    Iv R;
    if (S.Lower)
      R.Lo = *S.Lower;
    if (S.Upper)
      R.Hi = *S.Upper;
    if (auto D = Env.defaultLower(S, M))
      R.Lo = std::max<I128>(R.Lo, *D);
    return R;
  }

  Iv atom(const SymAtom &A) const {
    switch (A.Kind) {
    case AtomKind::Symbol:
      return symbol(A.Name);
    case AtomKind::FloorDiv: {
      Iv N = range(A.Args[0]), D = range(A.Args[1]);
      if (D.Lo < 1)
        return {}; // the divisor's sign is not known
      // A numerator a fact bounds below (a kernel that fits its padded
      // input: x.size(2) + 2 - w.size(2) >= 0), which the intervals of
      // its terms alone do not show.
      // One level deep: a fact's own quotients are not bounded by facts
      // in turn (two such quotients would bound each other forever).
      static thread_local bool InFactBound = false;
      if (N.Lo < 0 && !InFactBound) {
        InFactBound = true;
        for (const SymSize &F : Env.NonNegative)
          if (range(A.Args[0] - F).Lo >= 0) {
            N.Lo = 0;
            break;
          }
        InFactBound = false;
      }
      Iv R;
      if (N.Lo >= 0) {
        R.Lo = isInf(D.Hi) ? 0 : floorDiv128(N.Lo, D.Hi);
        R.Hi = isInf(N.Hi) ? Inf : floorDiv128(N.Hi, D.Lo);
      } else {
        R.Lo = isInf(N.Lo) ? -Inf : floorDiv128(N.Lo, D.Lo);
        R.Hi = isInf(N.Hi) ? Inf : (N.Hi >= 0 ? floorDiv128(N.Hi, D.Lo) : -1);
      }
      // A fact about the quotient itself (a computed size specialised as
      // `(x.size(2) / 2 + 1) / 2 - 2 >= 2`).
      SymSize Q = atomValue(A);
      for (const SymSize &F : Env.NonNegative)
        if (auto C = (Q - F).constant())
          R.Lo = std::max<I128>(R.Lo, *C);
      return makeIv(R.Lo, R.Hi);
    }
    case AtomKind::Mod: {
      Iv N = range(A.Args[0]), D = range(A.Args[1]);
      if (D.Lo >= 1) {
        Iv R{0, isInf(D.Hi) ? Inf : D.Hi - 1};
        if (N.Lo >= 0 && !isInf(N.Hi))
          R.Hi = std::min(R.Hi, N.Hi);
        return R;
      }
      if (D.Hi <= -1)
        return {isInf(D.Lo) ? -Inf : D.Lo + 1, 0};
      return {};
    }
    case AtomKind::Max:
    case AtomKind::Min: {
      bool IsMax = A.Kind == AtomKind::Max;
      Iv R = range(A.Args[0]);
      for (size_t I = 1; I < A.Args.size(); ++I) {
        Iv X = range(A.Args[I]);
        R.Lo = IsMax ? std::max(R.Lo, X.Lo) : std::min(R.Lo, X.Lo);
        R.Hi = IsMax ? std::max(R.Hi, X.Hi) : std::min(R.Hi, X.Hi);
      }
      return R;
    }
    }
    return {};
  }

  /// Interval arithmetic, term by term.
  Iv intervals(const SymSize &S) const {
    if (auto C = S.constant())
      return ivConst(*C);
    if (S.isError())
      return {};
    Iv Sum = ivConst(0);
    for (const SymTerm &T : S.expr()->Terms) {
      Iv Prod = ivConst(T.Coeff);
      for (const SymFactor &F : T.Factors) {
        Iv A = atom(*F.Atom);
        for (uint32_t E = 0; E < F.Exp; ++E)
          Prod = ivMul(Prod, A);
      }
      Sum = ivAdd(Sum, Prod);
    }
    return Sum;
  }

  /// Intervals, and intervals again after shifting each atom with a finite
  /// lower bound lo to lo + a' (a' >= 0); the tighter bounds win.
  Iv range(const SymSize &S) const {
    Iv R = intervals(S);
    if (!S.isSymbolic() || S.expr()->Terms.size() < 2)
      return R;
    // The shifted symbols, next to the fresh ones already in use.
    std::map<std::string, Iv> Shifted = Fresh ? *Fresh : std::map<std::string, Iv>();
    size_t FreshCount = Shifted.size();
    std::vector<std::pair<const SymAtom *, SymSize>> Replacement;
    auto Replace = [&](const SymAtom &A) -> SymSize {
      for (auto &P : Replacement)
        if (compareAtoms(*P.first, A) == 0)
          return P.second;
      Iv B = atom(A);
      SymSize V = atomValue(A);
      if (!isInf(B.Lo) && B.Lo != 0) {
        std::string Name = "\x01shift" + std::to_string(Replacement.size());
        Shifted[Name] = {0, isInf(B.Hi) ? Inf : B.Hi - B.Lo};
        V = SymSize(int64_t(B.Lo)) + SymSize::symbol(Name);
      }
      Replacement.push_back({&A, V});
      return V;
    };
    SymSize Sum = 0;
    for (const SymTerm &T : S.expr()->Terms) {
      SymSize Prod = T.Coeff;
      for (const SymFactor &F : T.Factors) {
        SymSize A = Replace(*F.Atom);
        for (uint32_t E = 0; E < F.Exp; ++E)
          Prod = Prod * A;
      }
      Sum = Sum + Prod;
    }
    if (Shifted.size() > FreshCount && !Sum.isError()) {
      RangeProver Inner{Env, M, &Shifted};
      Iv R2 = Inner.intervals(Sum);
      R = {std::max(R.Lo, R2.Lo), std::min(R.Hi, R2.Hi)};
    }
    Iv R3 = quotients(S);
    return {std::max(R.Lo, R3.Lo), std::min(R.Hi, R3.Hi)};
  }

  /// Intervals after writing a symbol s that occurs next to its quotient
  /// q = s / c (c >= 1, constant or not) as c * q + r, 0 <= r < c (r = 0
  /// where the facts say c divides s), so that s - s / 3 >= 0 and
  /// s - 2 * (s / 3) >= 0 are proven: plain intervals lose the link
  /// between s and s / 3. q's lower bound comes from s's.
  Iv quotients(const SymSize &S) const {
    if (Fresh || !S.isSymbolic())
      return {};
    struct Split {
      std::string Sym, Q, R;
      SymSize C; ///< the divisor
    };
    std::vector<Split> Splits;
    std::map<std::string, Iv> Ranges;
    for (const SymTerm &T : S.expr()->Terms)
      for (const SymFactor &F : T.Factors) {
        const SymAtom &A = *F.Atom;
        if (A.Kind != AtomKind::FloorDiv)
          continue;
        auto Name = A.Args[0].symbolName();
        if (!Name || std::any_of(Splits.begin(), Splits.end(),
                                 [&](const Split &P) { return P.Sym == *Name; }))
          continue;
        // A symbolic divisor d >= 1: s = d * q + r, 0 <= r < d (r = 0
        // where the facts say d divides s), so s >= q shows after the
        // shift d = 1 + d'.
        bool Divides = Env.knownMultiple(A.Args[0], A.Args[1]) == Tri::True;
        Iv D = intervals(A.Args[1]);
        auto C = A.Args[1].constant();
        if (C ? *C < 1 : D.Lo < 1)
          continue;
        std::string Tag = std::to_string(Splits.size());
        Split P{*Name, "\x01q" + Tag, "\x01r" + Tag, A.Args[1]};
        Iv Sym = symbol(*Name);
        Iv Q = atom(A);
        // s >= 1 and s = d * q: q >= 1 (and q >= ceil(lo / c)).
        if (Divides && !isInf(Sym.Lo) && Sym.Lo > 0)
          Q.Lo = std::max<I128>(Q.Lo, C ? (Sym.Lo + *C - 1) / *C : 1);
        else if (C && !isInf(Sym.Lo) && Sym.Lo > 0)
          Q.Lo = std::max<I128>(Q.Lo, Sym.Lo / *C);
        Ranges[P.Q] = Q;
        Ranges[P.R] = {0, Divides ? 0
                                  : C ? I128(*C - 1)
                                      : (isInf(D.Hi) ? Inf : D.Hi - 1)};
        Splits.push_back(P);
      }
    // A symbol the facts say d divides, where the quotient was simplified
    // away (d * (s / d) is s): s = d * q, q >= 1 where s >= 1, so that
    // s >= d shows (x.size(1) == C * r * r: x.size(1) >= r).
    const std::vector<std::string> Used = S.symbols();
    for (const auto &[Multiple, Divisor] : Env.Multiples) {
      auto Name = Multiple.symbolName();
      if (!Name || Divisor.constant() ||
          std::any_of(Splits.begin(), Splits.end(),
                      [&](const Split &P) { return P.Sym == *Name; }))
        continue;
      if (std::find(Used.begin(), Used.end(), *Name) == Used.end())
        continue;
      std::vector<std::string> InDivisor = Divisor.symbols();
      Iv Sym = symbol(*Name);
      if (std::find(InDivisor.begin(), InDivisor.end(), *Name) != InDivisor.end() ||
          intervals(Divisor).Lo < 1 || isInf(Sym.Lo) || Sym.Lo < 1)
        continue;
      std::string Tag = std::to_string(Splits.size());
      Split P{*Name, "\x01q" + Tag, "\x01r" + Tag, Divisor};
      Ranges[P.Q] = {1, Inf};
      Ranges[P.R] = {0, 0};
      Splits.push_back(P);
    }
    if (Splits.empty())
      return {};
    SymSize Sum = 0;
    for (const SymTerm &T : S.expr()->Terms) {
      SymSize Prod = T.Coeff;
      for (const SymFactor &F : T.Factors) {
        const SymAtom &A = *F.Atom;
        SymSize V = atomValue(A);
        for (const Split &P : Splits) {
          if (A.Kind == AtomKind::Symbol && A.Name == P.Sym)
            V = P.C * SymSize::symbol(P.Q) + SymSize::symbol(P.R);
          else if (A.Kind == AtomKind::FloorDiv && A.Args[0].symbolName() == P.Sym &&
                   A.Args[1].identical(P.C))
            V = SymSize::symbol(P.Q);
        }
        for (uint32_t E = 0; E < F.Exp; ++E)
          Prod = Prod * V;
      }
      Sum = Sum + Prod;
    }
    if (Sum.isError())
      return {};
    RangeProver Inner{Env, M, &Ranges};
    return Inner.range(Sum);
  }
};

// ------------------------------------------------------------- decisions --

ShapeEnv::Range ShapeEnv::range(const SymSize &E, bool Defaults) const {
  Mode M;
  M.Defaults = Defaults;
  Iv R = RangeProver{*this, M, nullptr}.range(reduce(E));
  return {toBound(R.Lo), toBound(R.Hi)};
}

Tri ShapeEnv::nonNegative(const SymSize &P, const Mode &M) const {
  if (auto C = P.constant())
    return triOf(*C >= 0);
  if (P.isError())
    return Tri::Unknown;
  RangeProver Prover{*this, M, nullptr};
  Iv R = Prover.range(P);
  if (R.Lo >= 0)
    return Tri::True;
  if (R.Hi < 0)
    return Tri::False;
  for (const SymSize &F : NonNegative) {
    if (Prover.range(P - F).Lo >= 0)
      return Tri::True; // P >= F >= 0
    if (Prover.range(-P - SymSize(1) - F).Lo >= 0)
      return Tri::False; // -P - 1 >= F >= 0
  }
  return Tri::Unknown;
}

Tri ShapeEnv::isZero(const SymSize &D, const Mode &M) const {
  if (auto C = D.constant())
    return triOf(*C == 0);
  if (D.isError())
    return Tri::Unknown;
  for (const SymSize &Z : NonZero)
    if (D == Z || D == -Z)
      return Tri::False;
  if (nonNegative(D - SymSize(1), M) == Tri::True ||
      nonNegative(-D - SymSize(1), M) == Tri::True)
    return Tri::False;
  if (nonNegative(D, M) == Tri::True && nonNegative(-D, M) == Tri::True)
    return Tri::True;
  return Tri::Unknown;
}

Tri ShapeEnv::knownMultiple(const SymSize &A, const SymSize &B) const {
  if (A.isError() || B.isError() || B.constant() == 0)
    return Tri::Unknown;
  SymSize M = SymSize::mod(A, B);
  if (auto C = M.constant())
    return triOf(*C == 0);
  for (const auto &F : Multiples)
    if (F.first == A && F.second == B)
      return Tri::True;
  if (!A.isSymbolic())
    return Tri::Unknown;
  // Term by term: each term a multiple of B by its own coefficient and
  // monomial, or through an atom the facts say B divides.
  auto AtomMultipleOf = [&](const SymAtom &At, const SymSize &D) {
    for (const auto &F : Multiples)
      if (F.second == D && isAtom(F.first, At))
        return true;
    return false;
  };
  for (const SymTerm &T : A.expr()->Terms) {
    bool Ok = false;
    if (auto C = B.constant()) {
      // What is left of C after the coefficient and each atom's known
      // constant divisors take their share.
      int64_t Left = *C < 0 ? -*C : *C;
      Left /= gcdAbs(Left, T.Coeff);
      for (const SymFactor &F : T.Factors)
        for (const auto &Fact : Multiples)
          if (Fact.second.constant() && isAtom(Fact.first, *F.Atom))
            for (uint32_t E = 0; E < F.Exp && Left > 1; ++E)
              Left /= gcdAbs(Left, *Fact.second.constant());
      Ok = Left == 1;
    } else if (B.expr()->Terms.size() == 1) {
      const SymTerm &D = B.expr()->Terms[0];
      std::vector<SymFactor> Q;
      Ok = D.Coeff != 0 && T.Coeff % D.Coeff == 0 &&
           divideMonomial(T.Factors, D.Factors, Q);
      for (const SymFactor &F : T.Factors)
        Ok = Ok || AtomMultipleOf(*F.Atom, B);
    }
    if (!Ok)
      return Tri::Unknown;
  }
  return Tri::True;
}

Tri ShapeEnv::decideWith(const SymRelation &R, const Mode &M) const {
  SymSize L = reduce(R.L), Rt = reduce(R.R);
  switch (R.Kind) {
  case SymRelation::Eq:
    return isZero(reduce(L - Rt), M);
  case SymRelation::Ne:
    return !isZero(reduce(L - Rt), M);
  case SymRelation::Ge:
    return nonNegative(reduce(L - Rt), M);
  case SymRelation::Gt:
    return nonNegative(reduce(L - Rt - SymSize(1)), M);
  case SymRelation::Le:
    return nonNegative(reduce(Rt - L), M);
  case SymRelation::Lt:
    return nonNegative(reduce(Rt - L - SymSize(1)), M);
  case SymRelation::Multiple: {
    Tri T = knownMultiple(L, Rt);
    // A remainder the facts show is not 0 (`TORCH_CHECK(n % 3 == 1)`):
    // not a multiple, so that nothing assumes it is.
    if (T == Tri::Unknown && !Rt.isError() && Rt.constant() != 0 &&
        isZero(reduce(SymSize::mod(L, Rt)), M) == Tri::False)
      return Tri::False;
    return T;
  }
  }
  return Tri::Unknown;
}

Tri ShapeEnv::decideFromFacts(const SymRelation &R) const {
  return decideWith(R, Mode{});
}

Tri ShapeEnv::decideWithDefaults(const SymRelation &R) const {
  Mode All;
  All.Defaults = true;
  return decideWith(R, All);
}

/// The weakest defaults that still give R the answer Answer: only the
/// symbols whose default is needed (dropped one at a time while the answer
/// stands), each assumed non-empty (>= 1) where that suffices and >= 2
/// only where the decision needs a size that is not 1 either. nullopt when
/// not even every symbol at 2 gives Answer.
std::optional<std::map<std::string, int64_t>>
ShapeEnv::weakestDefaults(const SymRelation &R, Tri Answer) const {
  Mode All;
  All.Defaults = true;
  std::map<std::string, int64_t> Floors;
  for (const std::string &S : reduce(reduce(R.L) - reduce(R.R)).symbols()) {
    const SymbolInfo *I = info(S);
    if (I && defaultLower(*I, All))
      Floors[S] = 2;
  }
  Mode Some;
  Some.Defaults = true;
  Some.Only = &Floors;
  if (decideWith(R, Some) != Answer)
    return std::nullopt;
  std::vector<std::string> Candidates;
  for (const auto &KV : Floors)
    Candidates.push_back(KV.first);
  for (const std::string &S : Candidates) {
    Floors.erase(S);
    if (decideWith(R, Some) != Answer)
      Floors[S] = 2;
  }
  for (auto &KV : Floors) {
    KV.second = 1;
    if (decideWith(R, Some) != Answer)
      KV.second = 2;
  }
  return Floors;
}

Tri ShapeEnv::decide(const SymRelation &R) {
  Tri T = decideWith(R, Mode{});
  if (T != Tri::Unknown)
    return T;
  // Non-empty sizes first: a decision that needs no more (max(s, 1) is s)
  // must not exclude the sizes of 1 a caller may pass (a checked
  // x.size(1) == 1, a --assume x.size(1)=1).
  Mode NonEmpty;
  NonEmpty.Defaults = true;
  NonEmpty.Floor = 1;
  T = decideWith(R, NonEmpty);
  if (T == Tri::Unknown)
    T = decideWithDefaults(R);
  if (T == Tri::Unknown)
    return T;
  auto Floors = weakestDefaults(R, T);
  if (!Floors)
    return Tri::Unknown;
  std::vector<const SymbolInfo *> Ordered;
  for (const auto &KV : *Floors)
    Ordered.push_back(info(KV.first));
  std::sort(Ordered.begin(), Ordered.end(),
            [](const SymbolInfo *A, const SymbolInfo *B) {
              return A->Order < B->Order;
            });
  for (const SymbolInfo *S : Ordered) {
    SymRelation A = SymRelation::ge(SymSize::symbol(S->Name), Floors->at(S->Name));
    recordAssumption({A.toCpp(), A, /*FromDefaults=*/true});
  }
  return T;
}

} // namespace tma
