// What SymSize's files share beyond SymSize.h: checked int64 steps and the
// canonicalising constructor. Not part of the model's interface.
#pragma once

#include "model/SymSize.h"

#include <cstdint>
#include <vector>

namespace tma {
namespace detail {

/// Checked int64 arithmetic: true when the result overflowed.
bool addOverflows(int64_t A, int64_t B, int64_t &R);
bool mulOverflows(int64_t A, int64_t B, int64_t &R);
/// Floor division and modulo by a constant: false when C is 0 or the
/// quotient overflows.
bool floorDivConst(int64_t A, int64_t C, int64_t &Q);
int64_t floorModConst(int64_t A, int64_t C);
/// The canonical value of a sum of terms (sorted, merged, zero terms
/// dropped; a constant polynomial is a plain int64).
SymSize makePoly(std::vector<SymTerm> Terms);
/// Graded lex order of monomials: > 0 when A is the greater monomial.
int compareMonomials(const std::vector<SymFactor> &A,
                     const std::vector<SymFactor> &B);
/// The single atom S is, when S is exactly one atom with coefficient 1.
const SymAtom *soleAtom(const SymSize &S);

} // namespace detail
} // namespace tma
