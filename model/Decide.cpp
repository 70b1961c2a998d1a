#include "model/Decide.h"
#include "model/ShapeEnv.h"

namespace tma {

namespace {
thread_local ShapeEnv *Current = nullptr;

/// What needs no facts: constants, and sizes whose difference is one.
Tri structural(SymRelation::Op Op, const SymSize &A, const SymSize &B) {
  SymSize D = A - B;
  auto C = D.constant();
  if (!C)
    return Tri::Unknown;
  switch (Op) {
  case SymRelation::Eq: return triOf(*C == 0);
  case SymRelation::Ne: return triOf(*C != 0);
  case SymRelation::Lt: return triOf(*C < 0);
  case SymRelation::Le: return triOf(*C <= 0);
  case SymRelation::Gt: return triOf(*C > 0);
  case SymRelation::Ge: return triOf(*C >= 0);
  case SymRelation::Multiple: break;
  }
  return Tri::Unknown;
}

Tri decide(SymRelation::Op Op, const SymSize &A, const SymSize &B) {
  if (A.isError() || B.isError())
    return Tri::Unknown;
  Tri T = structural(Op, A, B);
  if (T != Tri::Unknown || !Current)
    return T;
  return Current->decide(SymRelation{Op, A, B});
}
} // namespace

DecisionScope::DecisionScope(ShapeEnv &Env) : Previous(Current) {
  Current = &Env;
}
DecisionScope::~DecisionScope() { Current = Previous; }

ShapeEnv *currentShapeEnv() { return Current; }

Tri sizeEq(const SymSize &A, const SymSize &B) {
  return decide(SymRelation::Eq, A, B);
}
Tri sizeLt(const SymSize &A, const SymSize &B) {
  return decide(SymRelation::Lt, A, B);
}
Tri sizeLe(const SymSize &A, const SymSize &B) {
  return decide(SymRelation::Le, A, B);
}

static Tri fromFacts(SymRelation::Op Op, const SymSize &A, const SymSize &B) {
  if (A.isError() || B.isError())
    return Tri::Unknown;
  Tri T = structural(Op, A, B);
  if (T != Tri::Unknown || !Current)
    return T;
  return Current->decideFromFacts(SymRelation{Op, A, B});
}

Tri sizeGtFromFacts(const SymSize &A, const SymSize &B) {
  return fromFacts(SymRelation::Gt, A, B);
}
Tri sizeGeFromFacts(const SymSize &A, const SymSize &B) {
  return fromFacts(SymRelation::Ge, A, B);
}

Tri sizeDivides(const SymSize &B, const SymSize &A) {
  if (A.isError() || B.isError())
    return Tri::Unknown;
  auto CA = A.constant(), CB = B.constant();
  if (CA && CB)
    return *CB == 0 ? triOf(*CA == 0) : triOf(*CA % *CB == 0);
  if (!Current)
    return Tri::Unknown;
  return Current->decide(SymRelation::multiple(A, B));
}

/// A == B with the symbols both sides are multiples of divided out, where
/// the symbol is not 0 (facts, or the 0/1 specialisation, recorded): the
/// same condition there, stated the way the code reads. `B * T * (w / 3)
/// == B * T * C` (a view of a chunk as heads) is stated `w / 3 == C`.
static SymRelation withoutCommonFactors(const SymSize &A, const SymSize &B) {
  SymSize L = Current->simplify(A), R = Current->simplify(B);
  for (const std::string &Name : L.symbols()) {
    SymSize F = SymSize::symbol(Name);
    SymSize QL = SymSize::floorDiv(L, F), QR = SymSize::floorDiv(R, F);
    if (QL.isError() || QR.isError() || !(QL * F).identical(L) ||
        !(QR * F).identical(R) || QL.constant() || QR.constant())
      continue;
    if (Current->decide(SymRelation::ne(F, 0)) != Tri::True)
      continue;
    L = QL;
    R = QR;
  }
  // An exact quotient (the facts say c divides s) stated multiplied out:
  // `w / 3 == C` is `w == 3 * C`, which the ShapeEnv can use as a
  // substitution (w becomes 3 * C, and w / 3 then C), where it cannot
  // substitute the quotient.
  auto MultiplyOut = [](SymSize &Q, SymSize &Other) {
    const detail::SymExpr *E = Q.expr();
    if (!E || E->Error != SymErrorKind::None || E->Terms.size() != 1)
      return false;
    const detail::SymTerm &T = E->Terms[0];
    if (T.Coeff != 1 || T.Factors.size() != 1 || T.Factors[0].Exp != 1)
      return false;
    const detail::SymAtom &A = *T.Factors[0].Atom;
    if (A.Kind != detail::AtomKind::FloorDiv ||
        Current->decideFromFacts(SymRelation::ne(A.Args[1], 0)) != Tri::True ||
        Current->decideFromFacts(SymRelation::multiple(A.Args[0], A.Args[1])) !=
            Tri::True)
      return false;
    Q = A.Args[0];
    Other = Other * A.Args[1];
    return true;
  };
  if (!MultiplyOut(L, R))
    MultiplyOut(R, L);
  return SymRelation::eq(L, R);
}

/// A relation the code requires (LibTorch throws otherwise): what the
/// facts settle, else holds on every path that goes on, stated as Stated.
/// The default sizes >= 2 settle it only when they make it true: one that
/// contradicts them (a Conv2d of one input channel needs x.size(1) == 1)
/// is stated, not a throw (a default is no fact about the caller).
Tri require(SymRelation::Op Op, const SymSize &A, const SymSize &B,
            const SymRelation &Stated) {
  if (A.isError() || B.isError())
    return Tri::Unknown;
  Tri T = structural(Op, A, B);
  if (T != Tri::Unknown || !Current)
    return T;
  SymRelation R{Op, A, B};
  T = Current->decideFromFacts(R);
  if (T != Tri::Unknown)
    return T;
  if (Current->decideWithDefaults(R) == Tri::True)
    return Current->decide(R); // records the defaults it needed
  Current->assume(Stated);
  return Tri::True;
}

Tri requireEq(const SymSize &A, const SymSize &B) {
  return require(SymRelation::Eq, A, B, withoutCommonFactors(A, B));
}

Tri requireLt(const SymSize &A, const SymSize &B) {
  return require(SymRelation::Lt, A, B, SymRelation::lt(A, B));
}

Tri requireLe(const SymSize &A, const SymSize &B) {
  return require(SymRelation::Le, A, B, SymRelation::le(A, B));
}

Tri requireDivides(const SymSize &B, const SymSize &A) {
  Tri T = sizeDivides(B, A);
  if (T != Tri::Unknown || !Current)
    return T;
  Current->assume(SymRelation::multiple(A, B));
  return Tri::True;
}

Tri dimIsOne(const SymSize &S) {
  Tri T = sizeEq(S, 1);
  if (T != Tri::Unknown || !Current || S.isError())
    return T;
  Current->assume(SymRelation::ge(S, 2));
  return Tri::False;
}

Tri shapeIsEmpty(const std::vector<SymSize> &Sizes) {
  SymSize N = 1;
  for (const SymSize &S : Sizes)
    N = N * S;
  Tri T = sizeEq(N, 0);
  if (T != Tri::Unknown || !Current)
    return T;
  for (const SymSize &S : Sizes) {
    Tri Zero = sizeEq(S, 0);
    if (Zero == Tri::True)
      return Tri::True;
    if (Zero == Tri::Unknown) {
      if (S.isError())
        return Tri::Unknown;
      Current->assume(SymRelation::ge(S, 1));
    }
  }
  return Tri::False;
}

SymSize sizeMax(const SymSize &A, const SymSize &B) {
  if (Current)
    return Current->max(A, B);
  Tri T = sizeLe(A, B);
  if (T != Tri::Unknown)
    return T == Tri::True ? B : A;
  return SymSize::max(A, B);
}

SymSize sizeMin(const SymSize &A, const SymSize &B) {
  if (Current)
    return Current->min(A, B);
  Tri T = sizeLe(A, B);
  if (T != Tri::Unknown)
    return T == Tri::True ? A : B;
  return SymSize::min(A, B);
}

bool requireCondition(const std::string &Cpp) {
  ShapeEnv *Env = currentShapeEnv();
  if (!Env)
    return false;
  Env->assume(Cpp);
  return true;
}

std::string undecided(const char *Relation, const SymSize &A, const SymSize &B) {
  return "whether " + A.toCpp() + " " + Relation + " " + B.toCpp() +
         " is not known";
}

} // namespace tma
