// SymSize under concrete values and substitutions.
#include "model/SymSize.h"
#include "model/SymSizeImpl.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <functional>
#include <numeric>
#include <ostream>
#include <set>

namespace tma {

using namespace detail;

// ------------------------------------------------------------- evaluation --

namespace {

struct Evaluator {
  const SymBindings &Bindings;
  std::string Error;

  std::optional<int64_t> fail(std::string Why) {
    if (Error.empty())
      Error = std::move(Why);
    return std::nullopt;
  }

  std::optional<int64_t> atom(const SymAtom &A) {
    if (A.Kind == AtomKind::Symbol) {
      auto It = Bindings.find(A.Name);
      if (It == Bindings.end())
        return fail("no value for " + A.Name);
      return It->second;
    }
    std::vector<int64_t> Args;
    for (const SymSize &S : A.Args) {
      auto V = value(S);
      if (!V)
        return std::nullopt;
      Args.push_back(*V);
    }
    switch (A.Kind) {
    case AtomKind::FloorDiv: {
      if (Args[1] == 0)
        return fail("division by zero");
      int64_t Q;
      if (!floorDivConst(Args[0], Args[1], Q))
        return fail("integer overflow");
      return Q;
    }
    case AtomKind::Mod:
      if (Args[1] == 0)
        return fail("modulo by zero");
      return floorModConst(Args[0], Args[1]);
    case AtomKind::Max:
      return *std::max_element(Args.begin(), Args.end());
    case AtomKind::Min:
      return *std::min_element(Args.begin(), Args.end());
    case AtomKind::Symbol:
      break;
    }
    return std::nullopt;
  }

  std::optional<int64_t> value(const SymSize &S) {
    if (S.isError())
      return fail(S.errorReason());
    if (auto C = S.constant())
      return *C;
    int64_t Sum = 0;
    for (const SymTerm &T : S.expr()->Terms) {
      int64_t Prod = T.Coeff;
      for (const SymFactor &F : T.Factors) {
        auto V = atom(*F.Atom);
        if (!V)
          return std::nullopt;
        for (uint32_t E = 0; E < F.Exp; ++E)
          if (mulOverflows(Prod, *V, Prod))
            return fail("integer overflow");
      }
      if (addOverflows(Sum, Prod, Sum))
        return fail("integer overflow");
    }
    return Sum;
  }
};

using ReplaceFn = std::function<std::optional<SymSize>(const std::string &)>;

/// nullopt when nothing in S was replaced (the common case: no rebuild).
std::optional<SymSize> substituteImpl(const SymSize &S, const ReplaceFn &F);

std::optional<SymSize> substituteAtom(const SymAtom &A, const ReplaceFn &F) {
  if (A.Kind == AtomKind::Symbol)
    return F(A.Name);
  bool Changed = false;
  std::vector<SymSize> Args;
  for (const SymSize &X : A.Args) {
    auto N = substituteImpl(X, F);
    Changed |= N.has_value();
    Args.push_back(N ? *N : X);
  }
  if (!Changed)
    return std::nullopt;
  switch (A.Kind) {
  case AtomKind::FloorDiv:
    return SymSize::floorDiv(Args[0], Args[1]);
  case AtomKind::Mod:
    return SymSize::mod(Args[0], Args[1]);
  case AtomKind::Max:
  case AtomKind::Min: {
    SymSize R = Args[0];
    for (size_t I = 1; I < Args.size(); ++I)
      R = A.Kind == AtomKind::Max ? SymSize::max(R, Args[I])
                                  : SymSize::min(R, Args[I]);
    return R;
  }
  case AtomKind::Symbol:
    break;
  }
  return std::nullopt;
}

std::optional<SymSize> substituteImpl(const SymSize &S, const ReplaceFn &F) {
  if (!S.isSymbolic())
    return std::nullopt;
  bool Changed = false;
  SymSize Sum = 0;
  for (const SymTerm &T : S.expr()->Terms) {
    SymSize Prod = T.Coeff;
    std::vector<SymFactor> Kept;
    for (const SymFactor &Fa : T.Factors) {
      auto N = substituteAtom(*Fa.Atom, F);
      if (!N) {
        Kept.push_back(Fa);
        continue;
      }
      Changed = true;
      for (uint32_t E = 0; E < Fa.Exp; ++E)
        Prod = Prod * *N;
    }
    if (!Kept.empty())
      Prod = Prod * makePoly({SymTerm{std::move(Kept), 1}});
    Sum = Sum + Prod;
  }
  if (!Changed)
    return std::nullopt;
  return Sum;
}

void collectSymbols(const SymSize &S,
                    std::set<std::string, bool (*)(const std::string &,
                                                   const std::string &)> &Out) {
  if (!S.isSymbolic())
    return;
  for (const SymTerm &T : S.expr()->Terms)
    for (const SymFactor &F : T.Factors) {
      if (F.Atom->Kind == AtomKind::Symbol)
        Out.insert(F.Atom->Name);
      for (const SymSize &A : F.Atom->Args)
        collectSymbols(A, Out);
    }
}

} // namespace

SymSize::Evaluation SymSize::evaluate(const SymBindings &Bindings) const {
  Evaluator E{Bindings, {}};
  Evaluation R;
  R.Value = E.value(*this);
  if (!R.Value)
    R.Error = E.Error;
  return R;
}

SymSize SymSize::substitute(const ReplaceFn &Replace) const {
  auto R = substituteImpl(*this, Replace);
  return R ? *R : *this;
}

SymSize SymSize::substitute(const SymBindings &Values) const {
  return substitute([&](const std::string &Name) -> std::optional<SymSize> {
    auto It = Values.find(Name);
    if (It == Values.end())
      return std::nullopt;
    return SymSize(It->second);
  });
}

std::vector<std::string> SymSize::symbols() const {
  std::set<std::string, bool (*)(const std::string &, const std::string &)>
      Names([](const std::string &A, const std::string &B) {
        return compareSymbolNames(A, B) < 0;
      });
  collectSymbols(*this, Names);
  return {Names.begin(), Names.end()};
}


} // namespace tma
