// SymSize: comparisons (the canonical order of symbols, atoms and
// expressions, equality, hashing) and the three-valued Tri helpers.
//
// 1. The order is total and deterministic: it sorts terms in canonical form
//    (SymSize.cpp builds that form) and makes printed output stable.
// 2. Equality is structural identity of canonical forms.
#include "model/SymSize.h"
#include "model/SymSizeImpl.h"

#include <cctype>
#include <cstring>

namespace tma {

using namespace detail;

// ------------------------------------------------------------ Tri helpers --

Tri triAnd(Tri A, Tri B) {
  if (A == Tri::False || B == Tri::False)
    return Tri::False;
  if (A == Tri::True && B == Tri::True)
    return Tri::True;
  return Tri::Unknown;
}

Tri triOr(Tri A, Tri B) { return !triAnd(!A, !B); }

const char *triName(Tri T) {
  switch (T) {
  case Tri::False:
    return "false";
  case Tri::True:
    return "true";
  case Tri::Unknown:
    return "unknown";
  }
  return "unknown";
}

// ------------------------------------------------------------ comparisons --

int compareSymbolNames(std::string_view A, std::string_view B) {
  size_t I = 0, J = 0;
  while (I < A.size() && J < B.size()) {
    if (std::isdigit((unsigned char)A[I]) &&
        std::isdigit((unsigned char)B[J])) {
      size_t I2 = I, J2 = J;
      while (I2 < A.size() && std::isdigit((unsigned char)A[I2]))
        ++I2;
      while (J2 < B.size() && std::isdigit((unsigned char)B[J2]))
        ++J2;
      std::string_view DA = A.substr(I, I2 - I), DB = B.substr(J, J2 - J);
      while (DA.size() > 1 && DA[0] == '0')
        DA.remove_prefix(1);
      while (DB.size() > 1 && DB[0] == '0')
        DB.remove_prefix(1);
      if (DA.size() != DB.size())
        return DA.size() < DB.size() ? -1 : 1;
      if (int C = DA.compare(DB))
        return C < 0 ? -1 : 1;
      I = I2;
      J = J2;
      continue;
    }
    if (A[I] != B[J])
      return (unsigned char)A[I] < (unsigned char)B[J] ? -1 : 1;
    ++I;
    ++J;
  }
  if (I < A.size())
    return 1;
  if (J < B.size())
    return -1;
  return A.compare(B) < 0 ? -1 : (A.compare(B) > 0 ? 1 : 0);
}

int detail::compareAtoms(const SymAtom &A, const SymAtom &B) {
  if (&A == &B)
    return 0;
  if (A.Kind != B.Kind)
    return A.Kind < B.Kind ? -1 : 1;
  if (A.Kind == AtomKind::Symbol)
    return compareSymbolNames(A.Name, B.Name);
  if (A.Args.size() != B.Args.size())
    return A.Args.size() < B.Args.size() ? -1 : 1;
  for (size_t I = 0; I < A.Args.size(); ++I)
    if (int C = A.Args[I].compare(B.Args[I]))
      return C;
  return 0;
}

int SymSize::compare(const SymSize &O) const {
  auto Rank = [](const SymSize &S) {
    return S.isError() ? 0 : (S.Expr ? 2 : 1);
  };
  int RA = Rank(*this), RB = Rank(O);
  if (RA != RB)
    return RA < RB ? -1 : 1;
  if (RA == 1)
    return Value < O.Value ? -1 : (Value > O.Value ? 1 : 0);
  if (Expr == O.Expr)
    return 0;
  if (RA == 0) {
    if (Expr->Error != O.Expr->Error)
      return Expr->Error < O.Expr->Error ? -1 : 1;
    int C = Expr->Reason.compare(O.Expr->Reason);
    return C < 0 ? -1 : (C > 0 ? 1 : 0);
  }
  const auto &TA = Expr->Terms, &TB = O.Expr->Terms;
  for (size_t I = 0; I < TA.size() && I < TB.size(); ++I) {
    if (int C = compareMonomials(TA[I].Factors, TB[I].Factors))
      return C > 0 ? -1 : 1;
    if (TA[I].Coeff != TB[I].Coeff)
      return TA[I].Coeff < TB[I].Coeff ? -1 : 1;
  }
  if (TA.size() != TB.size())
    return TA.size() < TB.size() ? -1 : 1;
  return 0;
}

bool SymSize::identical(const SymSize &O) const {
  if (!Expr || !O.Expr)
    return !Expr && !O.Expr && Value == O.Value;
  if (Expr == O.Expr)
    return true;
  return Expr->Hash == O.Expr->Hash && compare(O) == 0;
}

#ifndef TMA_FIND_SYMSIZE_EQUALITY
bool SymSize::operator==(const SymSize &O) const { return identical(O); }
#endif

size_t SymSize::hash() const {
  return Expr ? Expr->Hash : std::hash<int64_t>()(Value);
}

} // namespace tma
