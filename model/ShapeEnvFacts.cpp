// ShapeEnv: facts from the code, assumptions, bindings (--assume) and
// printing with display names.
#include "model/ShapeEnv.h"

#include "model/Units.h"

#include <algorithm>
#include <functional>
#include <set>

namespace tma {

using namespace detail;

// ------------------------------------------------------------------ facts --

void ShapeEnv::addSubstitution(const std::string &Name, const SymSize &Value) {
  auto Replace = [&](const std::string &N) -> std::optional<SymSize> {
    if (N == Name)
      return Value;
    return std::nullopt;
  };
  for (auto &KV : Substitutions)
    KV.second = KV.second.substitute(Replace);
  Substitutions[Name] = Value;
  for (SymSize &F : NonNegative)
    F = F.substitute(Replace);
  for (SymSize &F : NonZero)
    F = F.substitute(Replace);
  for (auto &F : Multiples) {
    F.first = F.first.substitute(Replace);
    F.second = F.second.substitute(Replace);
  }
  invalidate();
  // What was known of the replaced symbol is now known of its value.
  auto It = Symbols.find(Name);
  if (It == Symbols.end())
    return;
  SymbolInfo Old = It->second;
  if (auto Other = Value.symbolName()) {
    declare(*Other, Old.Kind);
    if (Old.SizeLike)
      Symbols[*Other].SizeLike = true;
  }
  if (Old.Lower)
    addFactImpl(SymRelation::ge(Value, *Old.Lower), /*Log=*/false);
  if (Old.Upper)
    addFactImpl(SymRelation::le(Value, *Old.Upper), /*Log=*/false);
}

namespace {
/// (s, d) when D is +-(d * (s / d) - s).
std::optional<std::pair<SymSize, SymSize>> exactQuotientDivisor(const SymSize &D) {
  if (!D.isSymbolic())
    return std::nullopt;
  for (const SymTerm &T : D.expr()->Terms)
    for (const SymFactor &F : T.Factors) {
      const SymAtom &A = *F.Atom;
      if (A.Kind != AtomKind::FloorDiv)
        continue;
      SymSize Candidate = A.Args[1] * SymSize::floorDiv(A.Args[0], A.Args[1]) - A.Args[0];
      if (Candidate.isError())
        continue;
      if ((D - Candidate).constant() == 0 || (D + Candidate).constant() == 0)
        return std::make_pair(A.Args[0], A.Args[1]);
    }
  return std::nullopt;
}
} // namespace

ShapeEnv::FactResult ShapeEnv::addFact(const SymRelation &R) {
  return addFactImpl(R, /*Log=*/true);
}

ShapeEnv::FactResult ShapeEnv::addFactImpl(const SymRelation &R, bool Log) {
  SymSize L = reduce(R.L), Rt = reduce(R.R);
  if (L.isError() || Rt.isError())
    return FactResult::AlreadyKnown; // nothing can be learnt from it
  SymRelation N{R.Kind, L, Rt};
  Tri Known = decideWith(N, Mode{});
  if (Known == Tri::False)
    return FactResult::Contradicts;
  if (Log)
    FactLog.push_back(R);
  if (Known == Tri::True)
    return FactResult::AlreadyKnown;

  auto AddNonNegative = [&](const SymSize &P) {
    // p = +-s + k >= 0 bounds the symbol s itself.
    if (P.isSymbolic() && P.expr()->Terms.size() <= 2) {
      const auto &Terms = P.expr()->Terms;
      const SymTerm &Lead = Terms[0];
      int64_t K = Terms.size() == 2 ? Terms[1].Coeff : 0;
      bool Linear = Lead.Factors.size() == 1 && Lead.Factors[0].Exp == 1 &&
                    Lead.Factors[0].Atom->Kind == AtomKind::Symbol &&
                    (Lead.Coeff == 1 || Lead.Coeff == -1) &&
                    (Terms.size() == 1 || Terms[1].Factors.empty());
      if (Linear && K != INT64_MIN) {
        const std::string &S = Lead.Factors[0].Atom->Name;
        declare(S, SymbolKind::Integer);
        SymbolInfo &I = Symbols[S];
        if (Lead.Coeff == 1)
          I.Lower = std::max(I.Lower.value_or(INT64_MIN), -K);
        else
          I.Upper = std::min(I.Upper.value_or(INT64_MAX), K);
        return;
      }
    }
    NonNegative.push_back(P);
  };

  SymSize D = reduce(L - Rt);
  switch (R.Kind) {
  case SymRelation::Eq: {
    // d * (s / d) == s says d divides s (a reshape of a view to heads
    // back to its input's size): kept as that, which simplify and the
    // range prover use, where an equality over s / d is no substitution.
    if (auto Divisor = exactQuotientDivisor(D)) {
      Multiples.push_back(*Divisor);
      break;
    }
    // Solve for the latest-declared symbol that occurs once, linearly, with
    // coefficient +-1; otherwise keep D >= 0 and -D >= 0.
    const SymTerm *Best = nullptr;
    int BestOrder = -1;
    if (D.isSymbolic())
      for (const SymTerm &T : D.expr()->Terms) {
        if (T.Factors.size() != 1 || T.Factors[0].Exp != 1 ||
            T.Factors[0].Atom->Kind != AtomKind::Symbol ||
            (T.Coeff != 1 && T.Coeff != -1))
          continue;
        const std::string &S = T.Factors[0].Atom->Name;
        SymSize Rest = D - SymSize(T.Coeff) * SymSize::symbol(S);
        std::vector<std::string> Used = Rest.symbols();
        if (std::find(Used.begin(), Used.end(), S) != Used.end())
          continue;
        const SymbolInfo *I = info(S);
        int Order = I ? I->Order : NextOrder;
        if (Order > BestOrder) {
          Best = &T;
          BestOrder = Order;
        }
      }
    if (Best) {
      const std::string S = Best->Factors[0].Atom->Name;
      SymSize Sym = SymSize::symbol(S);
      // D = c*s + rest = 0  =>  s = -rest / c, with c = +-1.
      SymSize Rest = D - SymSize(Best->Coeff) * Sym;
      addSubstitution(S, Best->Coeff == 1 ? -Rest : Rest);
    } else {
      AddNonNegative(D);
      AddNonNegative(-D);
    }
    break;
  }
  case SymRelation::Ne:
    NonZero.push_back(D);
    break;
  case SymRelation::Ge:
    AddNonNegative(D);
    break;
  case SymRelation::Gt:
    AddNonNegative(D - SymSize(1));
    break;
  case SymRelation::Le:
    AddNonNegative(-D);
    break;
  case SymRelation::Lt:
    AddNonNegative(-D - SymSize(1));
    break;
  case SymRelation::Multiple:
    Multiples.push_back({L, Rt});
    break;
  }
  invalidate();
  for (const Assumption &A : Assumptions)
    if (A.Rel && decideWith(*A.Rel, Mode{}) == Tri::False) {
      FactAgainstAssumption |= Log;
      return FactResult::ContradictsAssumption;
    }
  return FactResult::Added;
}

void ShapeEnv::seedFacts(const ShapeEnv &From) {
  std::set<std::string> Used;
  for (const SymRelation &F : From.FactLog)
    for (const SymSize *Side : {&F.L, &F.R})
      for (const std::string &Name : Side->symbols())
        Used.insert(Name);
  for (const SymbolInfo *S : From.symbolsInOrder())
    if (Used.count(S->Name)) {
      declare(S->Name, S->Kind);
      if (S->SizeLike)
        markSizeLike(S->Name);
    }
  // The sizes only a run knows keep their names: the code's facts about
  // them name them.
  for (const DataDependentSize &D : From.DataDependent)
    if (Used.count(D.Name)) {
      declare(D.Name, SymbolKind::Size);
      DataDependent.push_back(D);
    }
  for (const SymRelation &F : From.FactLog)
    addFactImpl(F, /*Log=*/false);
}

namespace {
/// (s, c) when R is `s >= c` for a symbol s.
std::optional<std::pair<std::string, int64_t>> symbolFloor(const SymRelation &R) {
  if (R.Kind != SymRelation::Ge)
    return std::nullopt;
  auto Name = R.L.symbolName();
  auto C = R.R.constant();
  if (!Name || !C)
    return std::nullopt;
  return std::make_pair(*Name, *C);
}
} // namespace

void ShapeEnv::recordAssumption(Assumption A) {
  // One bound per symbol, the strongest: `s >= 2` replaces an earlier
  // `s >= 1` where it was listed, and makes a later one redundant.
  auto Floor = A.Rel ? symbolFloor(*A.Rel) : std::nullopt;
  for (Assumption &Old : Assumptions) {
    if (Old.Cpp == A.Cpp)
      return;
    auto OldFloor = Old.Rel ? symbolFloor(*Old.Rel) : std::nullopt;
    if (Floor && OldFloor && OldFloor->first == Floor->first) {
      if (OldFloor->second < Floor->second)
        Old = std::move(A);
      return;
    }
  }
  Assumptions.push_back(std::move(A));
}

void ShapeEnv::assume(const SymRelation &R) {
  recordAssumption({R.toCpp(), R});
  // Used as a fact from here on, but not logged as one: the code did not
  // state it, the report's assumptions do.
  addFactImpl(R, /*Log=*/false);
}

void ShapeEnv::assume(const std::string &CppCondition) {
  recordAssumption({CppCondition, std::nullopt});
}

bool ShapeEnv::listed(const Assumption &A) const {
  return !A.FromDefaults || !A.Rel || decideWith(*A.Rel, Mode{}) != Tri::True;
}

std::vector<std::string> ShapeEnv::assumptions() const {
  std::vector<std::string> Out;
  for (const Assumption &A : Assumptions)
    if (listed(A))
      Out.push_back(A.Cpp);
  return Out;
}

std::vector<std::string> ShapeEnv::symbolsAssumedNotOne() const {
  std::vector<std::string> Out;
  for (const Assumption &A : Assumptions) {
    auto Floor = A.Rel ? symbolFloor(*A.Rel) : std::nullopt;
    if (Floor && Floor->second >= 2 && listed(A))
      Out.push_back(Floor->first);
  }
  return Out;
}

ShapeEnv factsOnly(const ShapeEnv &Env) {
  ShapeEnv Out;
  for (const SymbolInfo *S : Env.symbolsInOrder()) {
    Out.declare(S->Name, S->Kind);
    if (S->SizeLike)
      Out.markSizeLike(S->Name);
    if (!S->Display.empty())
      Out.setDisplayName(S->Name, S->Display);
  }
  for (const SymRelation &F : Env.facts())
    Out.addFact(F);
  return Out;
}

// --------------------------------------------------------------- bindings --

bool ShapeEnv::bind(const std::string &NameOrDisplay, int64_t Value,
                    std::string *Error) {
  std::string Name;
  if (Symbols.count(NameOrDisplay))
    Name = NameOrDisplay;
  else
    for (const SymbolInfo *S : symbolsInOrder())
      if (S->Display == NameOrDisplay) {
        Name = S->Name;
        break;
      }
  if (Name.empty()) {
    if (Error)
      *Error = "no symbol named '" + NameOrDisplay + "'";
    return false;
  }
  Bound[Name] = Value;
  return true;
}

SymBindings ShapeEnv::bindings() const {
  SymBindings B = Bound;
  // Equalities carry values both ways: a substituted symbol gets its
  // value's value, and binding a symbol replaced by another one binds that.
  for (size_t Round = 0; Round <= Substitutions.size(); ++Round) {
    bool Changed = false;
    for (const auto &KV : Substitutions) {
      auto Have = B.find(KV.first);
      if (Have == B.end()) {
        auto V = KV.second.evaluate(B);
        if (V.Value) {
          B[KV.first] = *V.Value;
          Changed = true;
        }
      } else if (auto Other = KV.second.symbolName()) {
        if (!B.count(*Other)) {
          B[*Other] = Have->second;
          Changed = true;
        }
      }
    }
    if (!Changed)
      break;
  }
  return B;
}

SymSize::Evaluation ShapeEnv::evaluate(const SymSize &E) const {
  return reduce(E).evaluate(bindings());
}

std::vector<std::string> ShapeEnv::violations() const {
  SymBindings B = bindings();
  std::vector<std::string> Out;
  for (const SymRelation &F : FactLog)
    if (F.evaluate(B) == Tri::False)
      Out.push_back(F.toCpp());
  for (const Assumption &A : Assumptions)
    if (listed(A) && A.Rel && A.Rel->evaluate(B) == Tri::False)
      Out.push_back(A.Cpp);
  return Out;
}

std::vector<ShapeEnv::Violation> ShapeEnv::violationDetails() const {
  SymBindings B = bindings();
  std::vector<Violation> Out;
  for (const SymRelation &F : FactLog)
    if (F.evaluate(B) == Tri::False)
      Out.push_back({F.toCpp(), true});
  for (const Assumption &A : Assumptions)
    if (listed(A) && A.Rel && A.Rel->evaluate(B) == Tri::False)
      Out.push_back({A.Cpp, false});
  return Out;
}

bool ShapeEnv::bindingsUsable() const {
  return !Bound.empty() && violations().empty();
}

namespace {
/// E's value and the symbols it was computed from, under B.
std::optional<int64_t> valueUnder(const SymSize &E, const SymBindings &B,
                                  std::vector<std::string> &Names) {
  auto V = E.evaluate(B);
  if (!V.Value)
    return std::nullopt;
  Names = E.symbols();
  return V.Value;
}
} // namespace

std::optional<int64_t> ShapeEnv::boundValue(const SymSize &E) const {
  if (auto C = E.constant())
    return *C;
  if (E.isError() || !bindingsUsable())
    return std::nullopt;
  SymBindings B = bindings();
  std::vector<std::string> Names;
  if (auto V = valueUnder(E, B, Names))
    return V;
  // A fact may remove what is unbound (x % n with n dividing x).
  return valueUnder(reduce(E), B, Names);
}

std::string ShapeEnv::boundSuffix(const SymSize &E, bool DisplayNames) const {
  if (!E.isSymbolic() || !bindingsUsable())
    return "";
  SymBindings B = bindings();
  std::vector<std::string> Names;
  std::optional<int64_t> V = valueUnder(E, B, Names);
  if (!V)
    V = valueUnder(reduce(E), B, Names);
  if (!V)
    return "";
  std::string At;
  for (const std::string &N : Names) {
    const SymbolInfo *I = info(N);
    std::string Shown =
        DisplayNames && I && !I->Display.empty() ? I->Display : N;
    At += (At.empty() ? "" : ", ") + Shown + "=" + std::to_string(B.at(N));
  }
  return " (" + tma::formatBytes(*V) + " at " + At + ")";
}

// --------------------------------------------------------------- printing --

std::string ShapeEnv::toTable(const SymSize &E) const {
  return E.toTable([&](const std::string &Name) {
    const SymbolInfo *I = info(Name);
    return I ? I->Display : std::string();
  });
}

std::string ShapeEnv::formatBytes(const SymSize &E) const {
  if (auto C = E.constant())
    return tma::formatBytes(*C);
  if (E.isError())
    return "?";
  return toTable(E) + " B" + boundSuffix(E);
}

} // namespace tma
