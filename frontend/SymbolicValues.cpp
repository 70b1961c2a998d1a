// Symbolic values: integer expressions of a function as sizes, and the
// facts its checks state (frontend/Symbols.cpp's design, last points):
//  1. An integer expression is a SymSize when its leaves are: literals,
//     integer variables nothing changes, `x.size(k)` and friends of a
//     tensor whose sizes are known or are the caller's, std::max/min,
//     helpers of the file that compute an integer.
//  2. C++'s truncating division and narrowing conversions are modelled
//     exactly or stated as assumptions, never guessed.
//  3. Facts come from checks that run on every path (checkedStatement),
//     only for comparisons of sizes the analysis can express.
#include "frontend/SymbolScans.h"
#include "frontend/SymbolReader.h"
#include "frontend/ArgumentReader.h"
#include "model/Decide.h"
#include "model/ShapeEnv.h"

using namespace clang;

namespace tma {

/// V converted to the integer type To: the same value when To holds it
/// (stated as an assumption when only the facts could not show it).
const ParmVarDecl *FunctionEvaluator::callerTensorHeld(const Expr *E,
                                                       ValueId Held) const {
  if (const ParmVarDecl *P = unchangedTensorParameter(E, Mutated))
    return P;
  const ParmVarDecl *P = parameterNamed(E);
  auto Entry = P ? ParameterValues.find(P) : ParameterValues.end();
  if (!P || !OnlyReassigned.count(P) || Entry == ParameterValues.end() ||
      Entry->second != Held)
    return nullptr;
  return P;
}

std::optional<SymSize> SymbolReader::convertInteger(const SymSize &V,
                                                         QualType To) {
  if (V.isConstant() || !To->isIntegerType() || To->isBooleanType())
    return To->isBooleanType() ? std::nullopt : std::optional<SymSize>(V);
  unsigned Width = FE.Ctx.getIntWidth(To);
  bool Signed = To->isSignedIntegerType();
  if (Width > 64 || (Width == 64 && Signed))
    return V; // every SymSize fits
  int64_t Hi = Width == 64 ? (Signed ? INT64_MAX : INT64_MAX)
                           : static_cast<int64_t>((Signed ? (uint64_t(1) << (Width - 1))
                                                          : (uint64_t(1) << Width)) -
                                                  1);
  int64_t Lo = Signed ? (Width == 64 ? INT64_MIN : -Hi - 1) : 0;
  ShapeEnv::Range R = FE.Env->range(V);
  if (!R.Hi || *R.Hi > Hi)
    FE.Env->assume(SymRelation::le(V, Hi));
  if (!R.Lo || *R.Lo < Lo)
    FE.Env->assume(SymRelation::ge(V, Lo));
  return V;
}

std::optional<SymSize> SymbolReader::sizeValue(const Expr *E) {
  return sizeOf(E, /*Evaluate=*/true);
}

std::optional<SymSize> SymbolReader::sizeOf(const Expr *E, bool Evaluate) {
  if (!E)
    return std::nullopt;
  if (auto C = FE.args().foldInteger(E))
    return SymSize(*C);
  return symbolicValue(E, Evaluate);
}

std::optional<SymSize> SymbolReader::symbolicValue(const Expr *E,
                                                        bool Evaluate) {
  if (!E || E->isValueDependent() || ++FE.SizeDepth > 64) {
    if (E && !E->isValueDependent())
      --FE.SizeDepth;
    return std::nullopt;
  }
  struct Leave {
    int &D;
    ~Leave() { --D; }
  } L{FE.SizeDepth};
  auto operand = [&](const Expr *X) { return sizeOf(X, Evaluate); };
  E = E->IgnoreParens();
  if (const auto *FE = dyn_cast<FullExpr>(E))
    return symbolicValue(FE->getSubExpr(), Evaluate);
  if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(E))
    return symbolicValue(MT->getSubExpr(), Evaluate);
  if (const auto *CE = dyn_cast<CastExpr>(E)) {
    if (!CE->getSubExpr()->getType()->isIntegerType() ||
        !CE->getType()->isIntegerType())
      return std::nullopt;
    auto V = operand(CE->getSubExpr());
    if (!V)
      return std::nullopt;
    if (FE.Ctx.getIntWidth(CE->getType()) >=
            FE.Ctx.getIntWidth(CE->getSubExpr()->getType()) &&
        (CE->getType()->isSignedIntegerType() ||
         !CE->getSubExpr()->getType()->isSignedIntegerType()))
      return V; // widening: the same value
    return convertInteger(*V, CE->getType());
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (auto It = FE.IntVars.find(FE.key(DRE->getDecl())); It != FE.IntVars.end())
      return It->second;
    return std::nullopt;
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    if (UO->getOpcode() == UO_Minus)
      if (auto V = operand(UO->getSubExpr()))
        return -*V;
    if (UO->getOpcode() == UO_Plus)
      return operand(UO->getSubExpr());
    return std::nullopt;
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    BinaryOperatorKind Op = BO->getOpcode();
    if (Op != BO_Add && Op != BO_Sub && Op != BO_Mul && Op != BO_Div &&
        Op != BO_Rem)
      return std::nullopt;
    if (!BO->getType()->isIntegerType())
      return std::nullopt;
    auto A = operand(BO->getLHS());
    auto B = A ? operand(BO->getRHS()) : std::nullopt;
    if (!A || !B)
      return std::nullopt;
    SymSize R;
    switch (Op) {
    case BO_Add: R = *A + *B; break;
    case BO_Sub: R = *A - *B; break;
    case BO_Mul: R = *A * *B; break;
    default: {
      // C++ truncates; SymSize floors. They agree on a non-negative
      // dividend and a positive divisor. A divisor is stated positive when
      // the facts do not show it (one they show may be 0 or negative is no
      // size). A dividend that may be negative (`(x.size(0) - 3) / 2`, a
      // size that may be smaller than a kernel) is no reason to assume
      // anything: trunc(a / b) is max(a, 0) / b - max(-a, 0) / b exactly,
      // and a % b is a - b * trunc(a / b).
      if (FE.Env->decideFromFacts(SymRelation::gt(*B, 0)) == Tri::False)
        return std::nullopt;
      ShapeEnv::Range RB = FE.Env->range(*B);
      if (!RB.Lo || *RB.Lo < 1)
        FE.Env->assume(SymRelation::gt(*B, 0));
      if (FE.Env->decideFromFacts(SymRelation::ge(*A, 0)) == Tri::True) {
        R = Op == BO_Div ? SymSize::floorDiv(*A, *B) : SymSize::mod(*A, *B);
        break;
      }
      SymSize Quotient = SymSize::floorDiv(SymSize::max(*A, 0), *B);
      // The negative part only where it can be nonzero: a dividend of at
      // least 1 - b truncates to 0 below zero (max(x.size(0) - 1, 0) / 2).
      SymSize Negative = SymSize::floorDiv(SymSize::max(-*A, 0), *B);
      if (FE.Env->range(Negative).Hi != 0)
        Quotient = Quotient - Negative;
      R = Op == BO_Div ? Quotient : *A - *B * Quotient;
      break;
    }
    }
    if (R.isError())
      return std::nullopt;
    return FE.Env->simplify(R);
  }
  // `train ? kTrainSize : kTestSize` on a bool parameter nothing changes:
  // the bool is the integer 0 or 1 C++ promotes it to, so the value is
  // `b + (a - b) * train`, a size for either call.
  if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
    const Expr *Cond = CO->getCond()->IgnoreParenImpCasts();
    bool Negated = false;
    if (const auto *Not = dyn_cast<UnaryOperator>(Cond); Not && Not->getOpcode() == UO_LNot) {
      Negated = true;
      Cond = Not->getSubExpr()->IgnoreParenImpCasts();
    }
    const auto *DRE = dyn_cast<DeclRefExpr>(Cond);
    const auto *P = DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
    if (!P || FE.Caller || P->getDeclContext() != &FE.FD || !P->getType()->isBooleanType() ||
        FE.Mutated.count(cast<ValueDecl>(P->getCanonicalDecl())) || P->getName().empty())
      return std::nullopt;
    auto A = operand(CO->getTrueExpr());
    auto B = A ? operand(CO->getFalseExpr()) : std::nullopt;
    if (!A || !B)
      return std::nullopt;
    if (Negated)
      std::swap(A, B);
    SymSize R = *B + (*A - *B) * FE.Env->boolean(P->getName().str());
    if (R.isError())
      return std::nullopt;
    return FE.Env->simplify(R);
  }
  if (const auto *CE = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *Callee = CE->getDirectCallee();
    if (Callee && CE->getNumArgs() == 2 && !isa<CXXMemberCallExpr>(CE)) {
      std::string Q = Callee->getQualifiedNameAsString();
      if (Q == "std::max" || Q == "std::min") {
        auto A = operand(CE->getArg(0));
        auto B = A ? operand(CE->getArg(1)) : std::nullopt;
        if (!A || !B)
          return std::nullopt;
        return Q == "std::max" ? sizeMax(*A, *B) : sizeMin(*A, *B);
      }
    }
    // A helper of the file computing an integer (num_flat_features(x)).
    if (Evaluate)
      if (auto V = integerCall(CE))
        return V;
  }
  // x.size(k), x.dim(), x.numel(), x.stride(k), x.sizes()[k], x.sizes().size()
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E);
      OCE && OCE->getOperator() == OO_Subscript && OCE->getNumArgs() == 2) {
    if (!Evaluate)
      return std::nullopt;
    auto List = FE.args().intList(OCE->getArg(0));
    auto K = FE.args().foldInteger(OCE->getArg(1));
    if (List && K && *K >= 0 && *K < static_cast<int64_t>(List->size()))
      return (*List)[*K];
    // sizes[k] of the caller's tensor's sizes (`auto sizes = x.sizes()`),
    // its rank unknown: x.size(k), as x.size(k) itself reads.
    if (!List && K && *K >= 0 && !FE.Caller)
      if (const ParmVarDecl *P = parameterSizes(OCE->getArg(0), FE.Mutated))
        return FE.Env->tensorSize(P->getName().str(), *K);
    return std::nullopt;
  }
  const auto *MC = dyn_cast<CXXMemberCallExpr>(E);
  if (!MC || !MC->getMethodDecl() || !MC->getMethodDecl()->getIdentifier())
    return std::nullopt;
  StringRef N = MC->getMethodDecl()->getName();
  const Expr *Obj = MC->getImplicitObjectArgument();
  if (!Obj)
    return std::nullopt;
  if ((N == "size" || N == "length") && MC->getNumArgs() == 0) {
    // IntArrayRef::size(): a rank.
    if (!Evaluate)
      return std::nullopt;
    if (auto List = FE.args().intList(Obj))
      return SymSize(static_cast<int64_t>(List->size()));
    return std::nullopt;
  }
  if (!isTensorType(Obj->getType()) ||
      !(N == "size" || N == "stride" || N == "dim" || N == "ndimension" ||
        N == "numel" || N == "storage_offset" || N == "element_size" ||
        N == "nbytes"))
    return std::nullopt;
  // Outside an open statement only names are read: evaluating an
  // expression there would record its ops in no statement.
  if (!Evaluate && !isa<DeclRefExpr>(strip(Obj)))
    return std::nullopt;
  ValueId Held = FE.tensor(Obj);
  const TensorValue &V = FE.I.value(Held);
  if ((N == "size" || N == "stride") && MC->getNumArgs() == 1) {
    auto K = FE.args().foldInteger(MC->getArg(0));
    const std::optional<Shape> &Dims = N == "size" ? V.Sizes : V.Strides;
    // A parameter of unknown rank still has sizes: x.size(1) of the tensor
    // the caller passed, while x still holds it.
    if (K && *K >= 0 && !Dims && N == "size" && !FE.Caller)
      if (const ParmVarDecl *P = FE.callerTensorHeld(Obj, Held))
        return FE.Env->tensorSize(P->getName().str(), *K);
    if (!K || !Dims)
      return std::nullopt;
    int64_t Rank = static_cast<int64_t>(Dims->size());
    int64_t D = *K < 0 ? *K + Rank : *K;
    if (D < 0 || D >= Rank) {
      // LibTorch throws: not a value. On a rank that was only stated, the
      // statement says the rank is another one (analyzeFunction tries it).
      if (const ParmVarDecl *P = unchangedTensorParameter(Obj, FE.Mutated);
          P && !FE.Caller && FE.StatedRanks.count(P->getName().str()))
        FE.StatedRankRefuted.insert(P->getName().str());
      return std::nullopt;
    }
    return (*Dims)[D];
  }
  if ((N == "dim" || N == "ndimension") && MC->getNumArgs() == 0 && V.Sizes)
    return SymSize(static_cast<int64_t>(V.Sizes->size()));
  if (N == "numel" && MC->getNumArgs() == 0)
    return V.elementCount();
  if (N == "storage_offset" && MC->getNumArgs() == 0)
    return V.Offset;
  if (N == "element_size" && MC->getNumArgs() == 0)
    return V.itemBytes();
  if (N == "nbytes" && MC->getNumArgs() == 0)
    return V.logicalBytes();
  return std::nullopt;
}

void SymbolReader::learnFacts(const Expr *Cond, bool Holds) {
  Cond = unwrapExpect(Cond);
  if (!Cond)
    return;
  // After the check's statement: names only, nothing is evaluated again.
  auto value = [&](const Expr *X) { return sizeOf(X, /*Evaluate=*/false); };
  auto namedSizes = [&](const Expr *X) -> std::optional<Shape> {
    const auto *MC = dyn_cast<CXXMemberCallExpr>(strip(X));
    if (!MC || !MC->getMethodDecl() || !MC->getMethodDecl()->getIdentifier() ||
        MC->getMethodDecl()->getName() != "sizes" ||
        !MC->getImplicitObjectArgument() ||
        !isa<DeclRefExpr>(strip(MC->getImplicitObjectArgument())))
      return std::nullopt;
    return FE.args().intList(X);
  };
  if (const auto *UO = dyn_cast<UnaryOperator>(Cond);
      UO && UO->getOpcode() == UO_LNot)
    return learnFacts(UO->getSubExpr(), !Holds);
  const auto *BO = dyn_cast<BinaryOperator>(Cond);
  if (!BO) {
    // x.sizes() == y.sizes(): each pair of dimensions.
    const auto *OCE = dyn_cast<CXXOperatorCallExpr>(Cond);
    if (OCE && OCE->getNumArgs() == 2 && Holds &&
        OCE->getOperator() == OO_EqualEqual) {
      auto A = namedSizes(OCE->getArg(0)), B = namedSizes(OCE->getArg(1));
      if (A && B && A->size() == B->size())
        for (size_t K = 0; K < A->size(); ++K)
          FE.Env->addFact(SymRelation::eq((*A)[K], (*B)[K]));
    }
    return;
  }
  BinaryOperatorKind Op = BO->getOpcode();
  if ((Op == BO_LAnd && Holds) || (Op == BO_LOr && !Holds)) {
    learnFacts(BO->getLHS(), Holds);
    learnFacts(BO->getRHS(), Holds);
    return;
  }
  if (!BO->isComparisonOp())
    return;
  if (!Holds)
    Op = BinaryOperator::negateComparisonOp(Op);
  // `a % b == 0`: b divides a.
  if (Op == BO_EQ)
    for (auto [X, Y] : {std::pair(BO->getLHS(), BO->getRHS()),
                        std::pair(BO->getRHS(), BO->getLHS())})
      if (const auto *Rem = dyn_cast<BinaryOperator>(ignoreCastsAndParens(X));
          Rem && Rem->getOpcode() == BO_Rem && FE.args().foldInteger(Y) == 0) {
        auto A = value(Rem->getLHS());
        auto B = A ? value(Rem->getRHS()) : std::nullopt;
        if (A && B) {
          FE.Env->addFact(SymRelation::multiple(*A, *B));
          return;
        }
      }
  auto A = value(BO->getLHS());
  auto B = A ? value(BO->getRHS()) : std::nullopt;
  if (!A || !B || (A->isConstant() && B->isConstant()))
    return;
  switch (Op) {
  case BO_EQ: FE.Env->addFact(SymRelation::eq(*A, *B)); break;
  case BO_NE: FE.Env->addFact(SymRelation::ne(*A, *B)); break;
  case BO_LT: FE.Env->addFact(SymRelation::lt(*A, *B)); break;
  case BO_LE: FE.Env->addFact(SymRelation::le(*A, *B)); break;
  case BO_GT: FE.Env->addFact(SymRelation::gt(*A, *B)); break;
  case BO_GE: FE.Env->addFact(SymRelation::ge(*A, *B)); break;
  default: break;
  }
}

void SymbolReader::checkedStatement(const Stmt *S, Flow F) {
  if (F.InBranch || F.InLoop)
    return; // it holds on some paths only
  if (auto C = checkedCondition(S))
    learnFacts(C->first, C->second);
}

void SymbolReader::declareInteger(const VarDecl *VD, const Expr *Init, Flow F) {
  if (!Init || (FE.Mutated.count(cast<ValueDecl>(VD->getCanonicalDecl())) &&
                !FE.AssignedOnce.count(cast<VarDecl>(VD->getCanonicalDecl()))))
    return;
  auto V = sizeValue(Init);
  if (!V) {
    if (F.InLoop || FE.Caller || !VD->getIdentifier() ||
        !namesOneValue(FE.FD, VD))
      return;
    // A run-time value: its own symbol, >= 0 when its type is unsigned;
    // never one the function already has (a module constructor's `width`).
    std::string Name = VD->getName().str();
    if (FE.Env->info(Name))
      return;
    V = FE.Env->integer(Name);
    if (VD->getType()->isUnsignedIntegerType())
      FE.Env->addFact(SymRelation::ge(*V, SymSize(0)));
    FE.IntVars[FE.key(VD)] = *V;
    return;
  }
  if (V->isSymbolic()) {
    V = convertInteger(*V, VD->getType());
    if (!V)
      return;
    if (auto Name = V->symbolName())
      FE.Env->setDisplayName(*Name, VD->getName().str());
  }
  FE.IntVars[FE.key(VD)] = *V;
}

} // namespace tma
