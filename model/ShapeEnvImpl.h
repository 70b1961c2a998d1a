// What ShapeEnv's files share beyond ShapeEnv.h: the value of an atom and
// monomial division. Not part of the model's interface.
#pragma once

#include "model/SymSize.h"

#include <vector>

namespace tma {
namespace detail {

/// The value of one atom, rebuilt from its parts (same canonical atom).
SymSize atomValue(const SymAtom &A);
/// Out = A / M for monomials, when M divides A.
bool divideMonomial(const std::vector<SymFactor> &A,
                    const std::vector<SymFactor> &M,
                    std::vector<SymFactor> &Out);

} // namespace detail
} // namespace tma
