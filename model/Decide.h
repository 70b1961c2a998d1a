// The decisions ATen's rules make about sizes (is this dim 1? are these
// two sizes equal? is this stride smaller?), three-valued, so that one rule
// serves concrete and symbolic sizes alike.
//
// Design:
//  1. Constants are decided exactly: a rule over literal sizes behaves as
//     it always has.
//  2. Symbolic sizes are decided by the ShapeEnv of the function being
//     analysed: its facts (TORCH_CHECK, assert, earlier decisions), then
//     the default assumptions it records (a size is at least 2, PyTorch's
//     0/1 specialisation). The evaluator installs that ShapeEnv for the
//     duration of a function with a DecisionScope; rules need no extra
//     parameter for it.
//  3. Without a ShapeEnv, or when neither facts nor assumptions settle a
//     question, the answer is Unknown and the rule says unknown, with the
//     question in the reason (never a guess).
//  4. Some questions have only one answer on a path where the program goes
//     on: broadcasting two sizes that cannot be 1 requires them equal, or
//     LibTorch throws. requireEq states that as an assumption.
#pragma once

#include "model/SymSize.h"

#include <string>

namespace tma {

class ShapeEnv;

/// Installs Env as the one the decisions below consult, in this thread,
/// until the scope ends (scopes nest).
class DecisionScope {
public:
  explicit DecisionScope(ShapeEnv &Env);
  ~DecisionScope();
  DecisionScope(const DecisionScope &) = delete;
  DecisionScope &operator=(const DecisionScope &) = delete;

private:
  ShapeEnv *Previous;
};

/// The ShapeEnv in force, or null.
ShapeEnv *currentShapeEnv();

Tri sizeEq(const SymSize &A, const SymSize &B);
Tri sizeLt(const SymSize &A, const SymSize &B);
Tri sizeLe(const SymSize &A, const SymSize &B);
inline Tri sizeNe(const SymSize &A, const SymSize &B) { return !sizeEq(A, B); }
inline Tri sizeGt(const SymSize &A, const SymSize &B) { return sizeLt(B, A); }
inline Tri sizeGe(const SymSize &A, const SymSize &B) { return sizeLe(B, A); }
/// Whether B divides A.
Tri sizeDivides(const SymSize &B, const SymSize &A);
/// A > B and A >= B from the facts alone: never assumes, never records
/// (for questions whose undecided answer has a fallback that needs none).
Tri sizeGtFromFacts(const SymSize &A, const SymSize &B);
Tri sizeGeFromFacts(const SymSize &A, const SymSize &B);

/// A and B are equal on every path where the program goes on (LibTorch
/// throws otherwise): recorded as an assumption when the facts do not
/// already say so. False when they are known to differ; Unknown when there
/// is no ShapeEnv to record the assumption in.
Tri requireEq(const SymSize &A, const SymSize &B);
/// A < B on every path that goes on (an index within its dimension).
Tri requireLt(const SymSize &A, const SymSize &B);
/// A <= B likewise.
Tri requireLe(const SymSize &A, const SymSize &B);
/// Likewise for B dividing A (a view that infers a -1 dim).
Tri requireDivides(const SymSize &B, const SymSize &A);

/// A condition that is not about sizes (`x.is_floating_point()`,
/// `a.scalar_type() == b.scalar_type()`) that an answer needs: recorded as
/// an assumption. False when there is no ShapeEnv to record it in (the
/// answer is then unknown).
bool requireCondition(const std::string &Cpp);

/// Whether a tensor's dim of size S is 1, for the rules that treat size-1
/// dims apart (contiguity, computeStride, broadcasting). Decided by the
/// facts and defaults when they can; otherwise assumed not, stated as
/// `S >= 2`: PyTorch's 0/1 specialisation, applied to the sizes computed
/// from the inputs (`x.size(2) / n_head`) as to the inputs' own.
Tri dimIsOne(const SymSize &S);
/// Whether a tensor of these sizes has no elements, each undecided dim
/// assumed non-empty (`S >= 1`: a size of 1 decides nothing here).
Tri shapeIsEmpty(const std::vector<SymSize> &Sizes);

/// max / min, resolved when a decision settles which side is larger.
SymSize sizeMax(const SymSize &A, const SymSize &B);
SymSize sizeMin(const SymSize &A, const SymSize &B);

/// "x.size(1) == 1" as the reason a decision could not be made.
std::string undecided(const char *Relation, const SymSize &A, const SymSize &B);

} // namespace tma
