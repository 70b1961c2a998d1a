// ShapeEnv: facts, decisions and assumptions over one function's symbols.
//
// 1. This file: the symbols (declare, sizes of tensors, display names) and
//    the reductions (substitutions, quotient facts, min/max pruning).
// 2. ShapeEnvDecide.cpp: the range prover and the decisions built on it;
//    ShapeEnvFacts.cpp: facts, assumptions, bindings and printing.
// 3. Everything here is sound or Unknown. Ranges are computed with
//    saturating 128-bit interval arithmetic (a bound that leaves the int64
//    range becomes "unbounded" in the safe direction), so no decision rests
//    on a wrapped number.
#include "model/ShapeEnv.h"
#include "model/ShapeEnvImpl.h"

#include "model/Units.h"

#include <algorithm>
#include <functional>

namespace tma {

using namespace detail;

namespace detail {

/// The value of one atom, rebuilt from its parts (same canonical atom).
SymSize atomValue(const SymAtom &A) {
  switch (A.Kind) {
  case AtomKind::Symbol:
    return SymSize::symbol(A.Name);
  case AtomKind::FloorDiv:
    return SymSize::floorDiv(A.Args[0], A.Args[1]);
  case AtomKind::Mod:
    return SymSize::mod(A.Args[0], A.Args[1]);
  case AtomKind::Max:
  case AtomKind::Min: {
    SymSize R = A.Args[0];
    for (size_t I = 1; I < A.Args.size(); ++I)
      R = A.Kind == AtomKind::Max ? SymSize::max(R, A.Args[I])
                                  : SymSize::min(R, A.Args[I]);
    return R;
  }
  }
  return SymSize::error(SymErrorKind::TooComplex, "unknown atom");
}

/// Out = A / M for monomials, when M divides A.
bool divideMonomial(const std::vector<SymFactor> &A,
                    const std::vector<SymFactor> &M,
                    std::vector<SymFactor> &Out) {
  Out.clear();
  std::vector<bool> Used(M.size(), false);
  for (const SymFactor &F : A) {
    SymFactor Left = F;
    for (size_t J = 0; J < M.size(); ++J)
      if (!Used[J] && compareAtoms(*F.Atom, *M[J].Atom) == 0) {
        if (M[J].Exp > F.Exp)
          return false;
        Used[J] = true;
        Left.Exp -= M[J].Exp;
      }
    if (Left.Exp > 0)
      Out.push_back(Left);
  }
  return std::all_of(Used.begin(), Used.end(), [](bool U) { return U; });
}

} // namespace detail

namespace {

bool hasCompoundAtom(const SymSize &E) {
  if (!E.isSymbolic())
    return false;
  for (const SymTerm &T : E.expr()->Terms)
    for (const SymFactor &F : T.Factors)
      if (F.Atom->Kind != AtomKind::Symbol)
        return true;
  return false;
}

SymSize termValue(int64_t Coeff, const std::vector<SymFactor> &Factors) {
  SymSize R = Coeff;
  for (const SymFactor &F : Factors) {
    SymSize A = atomValue(*F.Atom);
    for (uint32_t E = 0; E < F.Exp; ++E)
      R = R * A;
  }
  return R;
}

const char *opText(SymRelation::Op K) {
  switch (K) {
  case SymRelation::Eq:
    return " == ";
  case SymRelation::Ne:
    return " != ";
  case SymRelation::Lt:
    return " < ";
  case SymRelation::Le:
    return " <= ";
  case SymRelation::Gt:
    return " > ";
  case SymRelation::Ge:
    return " >= ";
  case SymRelation::Multiple:
    return " % ";
  }
  return " ? ";
}

} // namespace

// ------------------------------------------------------------ SymRelation --

std::string SymRelation::toCpp() const {
  if (Kind != Multiple)
    return L.toCpp() + opText(Kind) + R.toCpp();
  auto Operand = [](const SymSize &S) {
    std::string T = S.toCpp();
    bool Plain = S.constant() ? *S.constant() >= 0 : S.symbolName().has_value();
    return Plain ? T : "(" + T + ")";
  };
  return Operand(L) + " % " + Operand(R) + " == 0";
}

Tri SymRelation::evaluate(const SymBindings &Values) const {
  auto A = L.evaluate(Values), B = R.evaluate(Values);
  if (!A.Value || !B.Value)
    return Tri::Unknown;
  int64_t X = *A.Value, Y = *B.Value;
  switch (Kind) {
  case Eq:
    return triOf(X == Y);
  case Ne:
    return triOf(X != Y);
  case Lt:
    return triOf(X < Y);
  case Le:
    return triOf(X <= Y);
  case Gt:
    return triOf(X > Y);
  case Ge:
    return triOf(X >= Y);
  case Multiple:
    if (Y == 0)
      return Tri::Unknown;
    return triOf(Y == -1 || X % Y == 0);
  }
  return Tri::Unknown;
}

// ---------------------------------------------------------------- symbols --

SymSize ShapeEnv::declare(const std::string &Name, SymbolKind Kind) {
  auto It = Symbols.find(Name);
  if (It == Symbols.end()) {
    SymbolInfo S;
    S.Name = Name;
    S.Kind = Kind;
    S.Order = NextOrder++;
    switch (Kind) {
    case SymbolKind::Size:
      S.Lower = 0;
      S.SizeLike = true;
      break;
    case SymbolKind::Rank:
    case SymbolKind::Bytes:
      S.Lower = 0;
      break;
    case SymbolKind::ElementSize:
      S.Lower = 1;
      S.Upper = 16;
      break;
    case SymbolKind::Integer:
      break;
    }
    Symbols.emplace(Name, std::move(S));
    invalidate();
  }
  return SymSize::symbol(Name);
}

SymSize ShapeEnv::tensorSize(const std::string &Tensor, int64_t Dim) {
  return declare(Tensor + ".size(" + std::to_string(Dim) + ")",
                 SymbolKind::Size);
}
SymSize ShapeEnv::tensorNumel(const std::string &Tensor) {
  return declare(Tensor + ".numel()", SymbolKind::Size);
}
SymSize ShapeEnv::tensorDim(const std::string &Tensor) {
  return declare(Tensor + ".dim()", SymbolKind::Rank);
}
SymSize ShapeEnv::tensorElementSize(const std::string &Tensor) {
  return declare(Tensor + ".element_size()", SymbolKind::ElementSize);
}
SymSize ShapeEnv::tensorStorageBytes(const std::string &Tensor) {
  return declare(Tensor + ".storage().nbytes()", SymbolKind::Bytes);
}
SymSize ShapeEnv::dataDependentSize(const std::string &Op,
                                    const SymSize &AtMost) {
  auto Ours = [&](const std::string &Name) {
    return std::find_if(DataDependent.begin(), DataDependent.end(),
                        [&](const DataDependentSize &D) {
                          return D.Name == Name;
                        });
  };
  std::string Name;
  for (;; ++DataDependentMade) {
    Name = "u" + std::to_string(DataDependentMade);
    // A parameter of that name is the caller's value, not this count.
    if (!Symbols.count(Name) || Ours(Name) != DataDependent.end())
      break;
  }
  ++DataDependentMade;
  SymSize U = declare(Name, SymbolKind::Size);
  if (Ours(Name) == DataDependent.end())
    DataDependent.push_back({Name, Op, AtMost});
  addFactImpl(SymRelation::le(U, AtMost), /*Log=*/false);
  return U;
}

SymSize ShapeEnv::integer(const std::string &Name) {
  return declare(Name, SymbolKind::Integer);
}
SymSize ShapeEnv::boolean(const std::string &Name) {
  SymSize S = declare(Name, SymbolKind::Integer);
  SymbolInfo &I = Symbols[Name];
  I.Lower = std::max<int64_t>(I.Lower.value_or(0), 0);
  I.Upper = std::min<int64_t>(I.Upper.value_or(1), 1);
  return S;
}

void ShapeEnv::markSizeLike(const std::string &Name) {
  auto Sub = Substitutions.find(Name);
  if (Sub != Substitutions.end()) {
    if (auto Other = Sub->second.symbolName())
      markSizeLike(*Other);
    else
      addFactImpl(SymRelation::ge(Sub->second, 0), /*Log=*/false);
    return;
  }
  declare(Name, SymbolKind::Integer);
  SymbolInfo &S = Symbols[Name];
  S.SizeLike = true;
  S.Lower = std::max<int64_t>(S.Lower.value_or(0), 0);
  invalidate();
}

void ShapeEnv::setDisplayName(const std::string &Name,
                              const std::string &Display) {
  auto It = Symbols.find(Name);
  if (It != Symbols.end() && It->second.Display.empty())
    It->second.Display = Display;
}

const SymbolInfo *ShapeEnv::info(const std::string &Name) const {
  auto It = Symbols.find(Name);
  return It == Symbols.end() ? nullptr : &It->second;
}

std::vector<const SymbolInfo *> ShapeEnv::symbolsInOrder() const {
  std::vector<const SymbolInfo *> Out;
  for (const auto &KV : Symbols)
    Out.push_back(&KV.second);
  std::sort(Out.begin(), Out.end(),
            [](const SymbolInfo *A, const SymbolInfo *B) {
              return A->Order < B->Order;
            });
  return Out;
}

std::optional<int64_t> ShapeEnv::defaultLower(const SymbolInfo &S,
                                              const Mode &M) const {
  if (!M.Defaults || !S.SizeLike)
    return std::nullopt;
  int64_t Floor = M.Floor;
  if (M.Only) {
    auto It = M.Only->find(S.Name);
    if (It == M.Only->end())
      return std::nullopt;
    Floor = It->second;
  }
  // A fact that says less (n <= 1 against the floor 2) wins over the
  // default; one that says as much makes it no assumption.
  if ((S.Upper && *S.Upper < Floor) || (S.Lower && *S.Lower >= Floor))
    return std::nullopt;
  return Floor;
}

// ------------------------------------------------------------- reduction --

SymSize ShapeEnv::reduce(const SymSize &E) const {
  if (!E.isSymbolic())
    return E;
  auto Hit = ReduceCache.find(E);
  if (Hit != ReduceCache.end())
    return Hit->second;
  SymSize R = E;
  if (!Substitutions.empty())
    R = R.substitute([&](const std::string &Name) -> std::optional<SymSize> {
      auto It = Substitutions.find(Name);
      if (It == Substitutions.end())
        return std::nullopt;
      return It->second;
    });
  R = reduceAtoms(R);
  R = applyQuotientFacts(R);
  if (ReduceCache.size() > 4096)
    ReduceCache.clear();
  ReduceCache.emplace(E, R);
  return R;
}

/// Rebuilds the compound atoms of E with reduced arguments: modulo by a known
/// divisor is 0, max/min operands the facts order are dropped.
SymSize ShapeEnv::reduceAtoms(const SymSize &E) const {
  if (!hasCompoundAtom(E))
    return E;
  SymSize Sum = 0;
  for (const SymTerm &T : E.expr()->Terms) {
    SymSize Prod = T.Coeff;
    for (const SymFactor &F : T.Factors) {
      const SymAtom &A = *F.Atom;
      SymSize V;
      switch (A.Kind) {
      case AtomKind::Symbol:
        V = SymSize::symbol(A.Name);
        break;
      case AtomKind::FloorDiv:
        V = SymSize::floorDiv(reduce(A.Args[0]), reduce(A.Args[1]));
        break;
      case AtomKind::Mod: {
        SymSize X = reduce(A.Args[0]), Y = reduce(A.Args[1]);
        V = knownMultiple(X, Y) == Tri::True ? SymSize(0) : SymSize::mod(X, Y);
        break;
      }
      case AtomKind::Max:
      case AtomKind::Min: {
        std::vector<SymSize> Args;
        for (const SymSize &X : A.Args)
          Args.push_back(reduce(X));
        bool IsMax = A.Kind == AtomKind::Max;
        std::vector<bool> Dropped(Args.size(), false);
        for (size_t I = 0; I < Args.size(); ++I)
          for (size_t J = 0; J < Args.size(); ++J)
            if (I != J && !Dropped[I] && !Dropped[J] &&
                decideWith(SymRelation::ge(Args[I], Args[J]), Mode{}) ==
                    Tri::True)
              Dropped[IsMax ? J : I] = true;
        bool First = true;
        for (size_t I = 0; I < Args.size(); ++I) {
          if (Dropped[I])
            continue;
          V = First ? Args[I]
                    : (IsMax ? SymSize::max(V, Args[I])
                             : SymSize::min(V, Args[I]));
          First = false;
        }
        break;
      }
      }
      for (uint32_t K = 0; K < F.Exp; ++K)
        Prod = Prod * V;
    }
    Sum = Sum + Prod;
  }
  return Sum;
}

/// n * (x / n) -> x when the facts say n divides x: the exact quotient times
/// its divisor is the dividend.
SymSize ShapeEnv::applyQuotientFacts(const SymSize &E) const {
  if (Multiples.empty() || !hasCompoundAtom(E))
    return E;
  SymSize Cur = E;
  for (int Pass = 0; Pass < 8 && Cur.isSymbolic(); ++Pass) {
    bool Changed = false;
    SymSize Sum = 0;
    for (const SymTerm &T : Cur.expr()->Terms) {
      SymSize Term;
      bool Done = false;
      for (size_t I = 0; I < T.Factors.size() && !Done; ++I) {
        const SymAtom &A = *T.Factors[I].Atom;
        if (A.Kind != AtomKind::FloorDiv || A.Args[1].termCount() != 1)
          continue;
        // The divisor as one term: a constant, or coefficient * monomial.
        SymTerm D;
        if (auto C = A.Args[1].constant())
          D.Coeff = *C;
        else
          D = A.Args[1].expr()->Terms[0];
        if (D.Coeff <= 0 || T.Coeff % D.Coeff != 0)
          continue;
        std::vector<SymFactor> Rest = T.Factors, Left;
        if (--Rest[I].Exp == 0)
          Rest.erase(Rest.begin() + I);
        if (!divideMonomial(Rest, D.Factors, Left))
          continue;
        if (knownMultiple(A.Args[0], A.Args[1]) != Tri::True)
          continue;
        Term = termValue(T.Coeff / D.Coeff, Left) * A.Args[0];
        Done = true;
      }
      if (!Done)
        Term = termValue(T.Coeff, T.Factors);
      Changed |= Done;
      Sum = Sum + Term;
    }
    if (!Changed)
      break;
    Cur = Sum;
  }
  return Cur;
}

SymSize ShapeEnv::pruneMinMax(const SymSize &E, bool Record) {
  if (!hasCompoundAtom(E))
    return E;
  SymSize Sum = 0;
  for (const SymTerm &T : E.expr()->Terms) {
    SymSize Prod = T.Coeff;
    for (const SymFactor &F : T.Factors) {
      const SymAtom &A = *F.Atom;
      SymSize V = atomValue(A);
      if (A.Kind == AtomKind::Max || A.Kind == AtomKind::Min) {
        std::vector<SymSize> Args;
        for (const SymSize &X : A.Args)
          Args.push_back(pruneMinMax(X, Record));
        bool IsMax = A.Kind == AtomKind::Max;
        std::vector<bool> Dropped(Args.size(), false);
        for (size_t I = 0; I < Args.size(); ++I)
          for (size_t J = 0; J < Args.size(); ++J) {
            if (I == J || Dropped[I] || Dropped[J])
              continue;
            // Only an operand dropped needs an assumption: a default that
            // merely shows the other order (1 >= n is false for n >= 2)
            // is not recorded.
            SymRelation Ge = SymRelation::ge(Args[I], Args[J]);
            Tri T = decideWith(Ge, Mode{});
            if (T == Tri::Unknown && Record && decideWithDefaults(Ge) == Tri::True)
              T = decide(Ge);
            if (T == Tri::True)
              Dropped[IsMax ? J : I] = true;
          }
        bool First = true;
        for (size_t I = 0; I < Args.size(); ++I) {
          if (Dropped[I])
            continue;
          V = First ? Args[I]
                    : (IsMax ? SymSize::max(V, Args[I])
                             : SymSize::min(V, Args[I]));
          First = false;
        }
      } else if (A.Kind != AtomKind::Symbol) {
        SymSize X = pruneMinMax(A.Args[0], Record),
                Y = pruneMinMax(A.Args[1], Record);
        V = A.Kind == AtomKind::FloorDiv ? SymSize::floorDiv(X, Y)
                                         : SymSize::mod(X, Y);
      }
      for (uint32_t K = 0; K < F.Exp; ++K)
        Prod = Prod * V;
    }
    Sum = Sum + Prod;
  }
  return Sum;
}

SymSize ShapeEnv::simplify(const SymSize &E) {
  SymSize R = reduce(E);
  R = pruneMinMax(R, /*Record=*/true);
  return reduce(R);
}

SymSize ShapeEnv::max(const SymSize &A, const SymSize &B) {
  return simplify(SymSize::max(A, B));
}
SymSize ShapeEnv::min(const SymSize &A, const SymSize &B) {
  return simplify(SymSize::min(A, B));
}

} // namespace tma
