//===- IntegerCalls.cpp - helpers that compute an integer from sizes --------===//
//
// `x.view({-1, num_flat_features(x)})`: PyTorch's own tutorial computes a
// size with a helper of the file that multiplies `x.sizes().slice(1)` in a
// range-for. Such a helper is read, not run: its body is interpreted over
// integers and size lists only (declarations, assignments, compound
// assignments, range-for over a list of known length, return), with its
// tensor parameters' sizes the caller's. Anything else in the body (a call,
// a branch, a tensor op, a member) leaves the value not derived, so the
// reading never needs to know what the helper does to tensors: it does
// nothing to them.
//
//===----------------------------------------------------------------------===//

#include "frontend/AstQueries.h"
#include "frontend/FunctionEvaluator.h"
#include "frontend/CallFollower.h"
#include "frontend/SymbolReader.h"
#include "frontend/ArgumentReader.h"

using namespace clang;

namespace tma {

namespace {

/// A value of the helper's integer world: an integer or a list of sizes.
struct IntOrList {
  std::optional<SymSize> Int;
  std::optional<Shape> List;
};

/// Loops longer than this (a size list has a tensor's rank) are not read.
constexpr size_t MaxIterations = 64;

struct HelperReader {
  FunctionEvaluator &FE;
  std::map<const ValueDecl *, IntOrList> Locals;
  /// Tensor parameters: their sizes (nullopt: not known).
  std::map<const ValueDecl *, std::optional<Shape>> Tensors;
  std::optional<SymSize> Returned;

  const ValueDecl *declOf(const Expr *E) const {
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
      return cast<ValueDecl>(DRE->getDecl()->getCanonicalDecl());
    return nullptr;
  }

  /// V as a value of the integer type T: a constant T cannot hold (signed
  /// overflow, undefined in C++) is no value; a symbolic one is stated to
  /// fit (convertInteger).
  std::optional<SymSize> as(const SymSize &V, QualType T) {
    if (V.isError())
      return std::nullopt;
    if (auto C = V.constant()) {
      ASTContext &Ctx = FE.Ctx;
      unsigned Width = Ctx.getIntWidth(T);
      if (Width < 64) {
        bool Signed = T->isSignedIntegerType();
        int64_t Hi = Signed ? (int64_t(1) << (Width - 1)) - 1 : (int64_t(1) << Width) - 1;
        int64_t Lo = Signed ? -Hi - 1 : 0;
        if (*C < Lo || *C > Hi)
          return std::nullopt;
      } else if (!T->isSignedIntegerType() && *C < 0) {
        return std::nullopt;
      }
      return V;
    }
    return FE.symbols().convertInteger(V, T);
  }

  /// An integer the reading has (a local, a parameter, a constant).
  std::optional<SymSize> integer(const Expr *E) {
    IntOrList V = value(E);
    return V.Int;
  }

  IntOrList value(const Expr *E) {
    IntOrList Out;
    if (!E)
      return Out;
    E = E->IgnoreParens();
    if (const auto *FE_ = dyn_cast<FullExpr>(E))
      return value(FE_->getSubExpr());
    if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(E))
      return value(MT->getSubExpr());
    if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(E))
      return value(BT->getSubExpr());
    if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
      // A copy of a size list (`auto sz = x.sizes().slice(1)`).
      if (CE->getNumArgs() == 1 && CE->getConstructor() &&
          CE->getConstructor()->isCopyOrMoveConstructor())
        return value(CE->getArg(0));
      return Out;
    }
    if (E->getType()->isIntegerType() && !E->getType()->isBooleanType()) {
      if (auto C = FE.args().foldInteger(E)) {
        Out.Int = SymSize(*C);
        return Out;
      }
    }
    if (const auto *Cast = dyn_cast<CastExpr>(E)) {
      IntOrList V = value(Cast->getSubExpr());
      if (V.Int && E->getType()->isIntegerType()) {
        V.Int = as(*V.Int, E->getType());
        return V;
      }
      // Lvalue-to-rvalue and no-op casts of lists.
      if (Cast->getCastKind() == CK_LValueToRValue || Cast->getCastKind() == CK_NoOp)
        return V;
      return Out;
    }
    if (const ValueDecl *D = declOf(E)) {
      auto It = Locals.find(D);
      if (It != Locals.end())
        return It->second;
      return Out;
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      BinaryOperatorKind Op = BO->getOpcode();
      if (Op != BO_Add && Op != BO_Sub && Op != BO_Mul)
        return Out;
      auto A = integer(BO->getLHS());
      auto B = A ? integer(BO->getRHS()) : std::nullopt;
      if (!A || !B)
        return Out;
      SymSize R = Op == BO_Add ? *A + *B : Op == BO_Sub ? *A - *B : *A * *B;
      Out.Int = as(R, BO->getType());
      return Out;
    }
    if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(E)) {
      // sizes[k]
      if (OC->getOperator() != OO_Subscript || OC->getNumArgs() != 2)
        return Out;
      IntOrList L = value(OC->getArg(0));
      auto K = integer(OC->getArg(1));
      auto C = K ? K->constant() : std::nullopt;
      if (L.List && C && *C >= 0 && *C < static_cast<int64_t>(L.List->size()))
        Out.Int = (*L.List)[*C];
      return Out;
    }
    const auto *MC = dyn_cast<CXXMemberCallExpr>(E);
    if (!MC || !MC->getMethodDecl() || !MC->getMethodDecl()->getIdentifier())
      return Out;
    StringRef N = MC->getMethodDecl()->getName();
    const Expr *Obj = MC->getImplicitObjectArgument();
    if (!Obj)
      return Out;
    if (isTensorType(Obj->getType())) {
      const ValueDecl *D = declOf(Obj);
      auto It = D ? Tensors.find(D) : Tensors.end();
      if (It == Tensors.end() || !It->second)
        return Out;
      const Shape &S = *It->second;
      if (N == "sizes" && MC->getNumArgs() == 0) {
        Out.List = S;
      } else if ((N == "dim" || N == "ndimension") && MC->getNumArgs() == 0) {
        Out.Int = SymSize(static_cast<int64_t>(S.size()));
      } else if (N == "numel" && MC->getNumArgs() == 0) {
        SymSize P = 1;
        for (const SymSize &X : S)
          P = P * X;
        if (!P.isError())
          Out.Int = P;
      } else if (N == "size" && MC->getNumArgs() == 1) {
        auto K = integer(MC->getArg(0));
        auto C = K ? K->constant() : std::nullopt;
        int64_t Rank = static_cast<int64_t>(S.size());
        if (C && *C >= -Rank && *C < Rank)
          Out.Int = S[*C < 0 ? *C + Rank : *C];
      }
      return Out;
    }
    // IntArrayRef: slice(k), slice(k, n), size().
    IntOrList L = value(Obj);
    if (!L.List)
      return Out;
    int64_t Len = static_cast<int64_t>(L.List->size());
    if ((N == "size" || N == "length") && MC->getNumArgs() == 0) {
      Out.Int = SymSize(Len);
    } else if (N == "slice" && (MC->getNumArgs() == 1 || MC->getNumArgs() == 2)) {
      auto From = integer(MC->getArg(0));
      auto F = From ? From->constant() : std::nullopt;
      std::optional<int64_t> Count = Len - F.value_or(0);
      if (MC->getNumArgs() == 2) {
        auto C = integer(MC->getArg(1));
        Count = C ? C->constant() : std::nullopt;
      }
      // ArrayRef::slice asserts N + M <= size(): out of range is no value.
      if (F && Count && *F >= 0 && *Count >= 0 && *F + *Count <= Len)
        Out.List = Shape(L.List->begin() + *F, L.List->begin() + *F + *Count);
    }
    return Out;
  }

  /// Assigns to a local integer; false when the target is not one.
  bool assign(const Expr *Target, std::optional<SymSize> V) {
    const ValueDecl *D = declOf(Target);
    auto It = D ? Locals.find(D) : Locals.end();
    if (It == Locals.end() || !It->second.Int || !V)
      return false;
    auto Converted = as(*V, D->getType().getNonReferenceType());
    if (!Converted)
      return false;
    It->second.Int = FE.Env->simplify(*Converted);
    return true;
  }

  /// Runs S: false when it holds something the reading does not follow.
  bool run(const Stmt *S) {
    if (Returned)
      return true;
    if (!S || isa<NullStmt>(S))
      return true;
    if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
      for (const Stmt *Sub : CS->body())
        if (!run(Sub))
          return false;
      return true;
    }
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls()) {
        const auto *VD = dyn_cast<VarDecl>(D);
        if (!VD || !VD->hasInit() || VD->getType()->isReferenceType())
          return false;
        IntOrList V = value(VD->getInit());
        if (!V.Int && !V.List)
          return false;
        if (V.Int) {
          V.Int = as(*V.Int, VD->getType());
          if (!V.Int)
            return false;
        }
        Locals[cast<ValueDecl>(VD->getCanonicalDecl())] = V;
      }
      return true;
    }
    if (const auto *RS = dyn_cast<ReturnStmt>(S)) {
      Returned = integer(RS->getRetValue());
      return Returned.has_value();
    }
    if (const auto *FR = dyn_cast<CXXForRangeStmt>(S)) {
      IntOrList Range = value(FR->getRangeInit());
      const VarDecl *Var = FR->getLoopVariable();
      if (!Range.List || !Var || Var->getType()->isReferenceType() ||
          Range.List->size() > MaxIterations)
        return false;
      const ValueDecl *Key = cast<ValueDecl>(Var->getCanonicalDecl());
      for (const SymSize &Elem : *Range.List) {
        auto V = as(Elem, Var->getType());
        if (!V)
          return false;
        Locals[Key] = IntOrList{V, std::nullopt};
        if (!run(FR->getBody()))
          return false;
        if (Returned)
          return true;
      }
      return true;
    }
    if (const auto *CA = dyn_cast<CompoundAssignOperator>(S)) {
      auto Old = integer(CA->getLHS());
      auto R = Old ? integer(CA->getRHS()) : std::nullopt;
      if (!R)
        return false;
      switch (CA->getOpcode()) {
      case BO_MulAssign: return assign(CA->getLHS(), *Old * *R);
      case BO_AddAssign: return assign(CA->getLHS(), *Old + *R);
      case BO_SubAssign: return assign(CA->getLHS(), *Old - *R);
      default: return false;
      }
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(S);
        BO && BO->getOpcode() == BO_Assign)
      return assign(BO->getLHS(), integer(BO->getRHS()));
    if (const auto *UO = dyn_cast<UnaryOperator>(S);
        UO && UO->isIncrementDecrementOp()) {
      auto Old = integer(UO->getSubExpr());
      return Old && assign(UO->getSubExpr(), *Old + (UO->isIncrementOp() ? 1 : -1));
    }
    if (const auto *E = dyn_cast<Expr>(S)) {
      if (const auto *FE_ = dyn_cast<FullExpr>(E))
        return run(FE_->getSubExpr());
      if (const auto *P = dyn_cast<ParenExpr>(E))
        return run(P->getSubExpr());
    }
    return false;
  }
};

} // namespace

std::optional<SymSize> SymbolReader::integerCall(const CallExpr *CE) {
  // The reading interprets no call, so it cannot recurse.
  if (isa<CXXOperatorCallExpr>(CE))
    return std::nullopt;
  const FunctionDecl *Def = FE.calls().followedDefinition(CE->getDirectCallee());
  QualType Ret = Def ? Def->getReturnType() : QualType();
  if (!Def || !Ret->isIntegerType() || Ret->isBooleanType() ||
      CE->getNumArgs() != Def->getNumParams())
    return std::nullopt;
  HelperReader R{FE, {}, {}, std::nullopt};
  for (unsigned K = 0; K < Def->getNumParams(); ++K) {
    const ParmVarDecl *P = Def->getParamDecl(K);
    const ValueDecl *Key = cast<ValueDecl>(P->getCanonicalDecl());
    QualType PT = P->getType().getNonReferenceType();
    const Expr *Arg = strip(CE->getArg(K));
    // A tensor passed by value: the copy of the caller's.
    if (const auto *Copy = dyn_cast_or_null<CXXConstructExpr>(Arg);
        Copy && Copy->getNumArgs() == 1 && Copy->getConstructor()->isCopyOrMoveConstructor())
      Arg = strip(Copy->getArg(0));
    if (isTensorType(PT)) {
      // Only a named tensor: reading its sizes records no op.
      if (!isa_and_nonnull<DeclRefExpr>(Arg) || !isTensorType(Arg->getType()))
        return std::nullopt;
      R.Tensors[Key] = FE.I.value(FE.tensor(Arg)).Sizes;
    } else if (PT->isIntegerType() && !PT->isBooleanType()) {
      auto V = sizeValue(Arg);
      if (V)
        V = R.as(*V, PT);
      if (V)
        R.Locals[Key] = IntOrList{V, std::nullopt};
    }
  }
  if (!R.run(Def->getBody()) || !R.Returned)
    return std::nullopt;
  return convertInteger(*R.Returned, Ret);
}

} // namespace tma
