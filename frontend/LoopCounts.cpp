// What a loop's source says about how it runs (LoopCounts.h).
#include "frontend/LoopCounts.h"
#include "frontend/SymbolReader.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace tma {

static const VarDecl *namedVariable(const Expr *E) {
  if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreParenImpCasts() : nullptr))
    return dyn_cast<VarDecl>(DRE->getDecl());
  return nullptr;
}

/// Whether every mention of Var in S only reads its value (no ++, no
/// assignment, no reference or address taken).
static bool onlyReadIn(const Stmt *S, const VarDecl *Var) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const VarDecl *Var;
    unsigned Mentions = 0, Reads = 0;
    bool VisitDeclRefExpr(DeclRefExpr *DRE) {
      Mentions += DRE->getDecl() == Var;
      return true;
    }
    bool VisitImplicitCastExpr(ImplicitCastExpr *ICE) {
      if (ICE->getCastKind() == CK_LValueToRValue)
        if (const auto *DRE = dyn_cast<DeclRefExpr>(ICE->getSubExpr()->IgnoreParens()))
          Reads += DRE->getDecl() == Var;
      return true;
    }
  } Find;
  Find.Var = Var;
  Find.TraverseStmt(const_cast<Stmt *>(S));
  return Find.Mentions == Find.Reads;
}

/// Whether Inc adds one to Var: ++i, i++, i += 1, i = i + 1.
static bool incrementsByOne(const Expr *Inc, const VarDecl *Var,
                            FunctionEvaluator &FE) {
  Inc = Inc ? Inc->IgnoreParenImpCasts() : nullptr;
  if (const auto *UO = dyn_cast_or_null<UnaryOperator>(Inc))
    return UO->isIncrementOp() && namedVariable(UO->getSubExpr()) == Var;
  const auto *BO = dyn_cast_or_null<BinaryOperator>(Inc);
  if (!BO || namedVariable(BO->getLHS()) != Var)
    return false;
  auto IsOne = [&](const Expr *E) {
    auto V = FE.symbols().sizeOf(E, /*Evaluate=*/false);
    return V && V->constant() == 1;
  };
  if (BO->getOpcode() == BO_AddAssign)
    return IsOne(BO->getRHS());
  if (BO->getOpcode() == BO_Assign)
    if (const auto *Sum = dyn_cast<BinaryOperator>(BO->getRHS()->IgnoreParenImpCasts()))
      return Sum->getOpcode() == BO_Add &&
             ((namedVariable(Sum->getLHS()) == Var && IsOne(Sum->getRHS())) ||
              (namedVariable(Sum->getRHS()) == Var && IsOne(Sum->getLHS())));
  return false;
}

std::optional<int64_t> constantTripCount(const ForStmt *FS, FunctionEvaluator &FE) {
  // The counter and its first value.
  const VarDecl *Var = nullptr;
  const Expr *First = nullptr;
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(FS->getInit())) {
    if (!DS->isSingleDecl())
      return std::nullopt;
    Var = dyn_cast<VarDecl>(DS->getSingleDecl());
    First = Var ? Var->getInit() : nullptr;
  } else if (const auto *BO = dyn_cast_or_null<BinaryOperator>(FS->getInit());
             BO && BO->getOpcode() == BO_Assign) {
    Var = namedVariable(BO->getLHS());
    First = BO->getRHS();
  }
  if (!Var || !First || !Var->getType()->isIntegerType() || !FS->getCond() ||
      !incrementsByOne(FS->getInc(), Var, FE) || !onlyReadIn(FS->getBody(), Var) ||
      !onlyReadIn(FS->getCond(), Var))
    return std::nullopt;
  // The bound: i < B, i <= B, i != B, or the same written B > i.
  const auto *Cond = dyn_cast<BinaryOperator>(FS->getCond()->IgnoreParenImpCasts());
  if (!Cond)
    return std::nullopt;
  BinaryOperatorKind Op = Cond->getOpcode();
  const Expr *Bound = nullptr;
  if (namedVariable(Cond->getLHS()) == Var) {
    Bound = Cond->getRHS();
  } else if (namedVariable(Cond->getRHS()) == Var) {
    Bound = Cond->getLHS();
    Op = Op == BO_GT ? BO_LT : Op == BO_GE ? BO_LE : Op == BO_NE ? BO_NE : BO_Comma;
  }
  if (!Bound || (Op != BO_LT && Op != BO_LE && Op != BO_NE))
    return std::nullopt;
  // The bound is read once per iteration: it must not change in the body.
  if (const VarDecl *B = namedVariable(Bound); B && !onlyReadIn(FS->getBody(), B))
    return std::nullopt;
  auto A = FE.symbols().sizeOf(First, /*Evaluate=*/false);
  auto B = FE.symbols().sizeOf(Bound, /*Evaluate=*/false);
  std::optional<int64_t> From = A ? A->constant() : std::nullopt;
  std::optional<int64_t> To = B ? B->constant() : std::nullopt;
  if (!From || !To)
    return std::nullopt;
  // Constants the source states fit int64; their difference may not.
  __int128 Trips = static_cast<__int128>(*To) - *From + (Op == BO_LE ? 1 : 0);
  if (Op == BO_NE && Trips < 0)
    return std::nullopt; // wraps around: not a count
  if (Trips < 0)
    Trips = 0;
  if (Trips > INT64_MAX)
    return std::nullopt;
  return static_cast<int64_t>(Trips);
}

bool mayLeaveIterationEarly(const Stmt *Body) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Found = false;
    bool VisitBreakStmt(BreakStmt *) { return !(Found = true); }
    bool VisitContinueStmt(ContinueStmt *) { return !(Found = true); }
    bool VisitReturnStmt(ReturnStmt *) { return !(Found = true); }
    bool VisitGotoStmt(GotoStmt *) { return !(Found = true); }
    bool VisitIndirectGotoStmt(IndirectGotoStmt *) { return !(Found = true); }
    bool VisitCXXThrowExpr(CXXThrowExpr *) { return !(Found = true); }
    bool VisitCoreturnStmt(CoreturnStmt *) { return !(Found = true); }
    // A label or a case inside may be jumped to from outside the loop.
    bool VisitLabelStmt(LabelStmt *) { return !(Found = true); }
    bool VisitSwitchCase(SwitchCase *) { return !(Found = true); }
  } Find;
  Find.TraverseStmt(const_cast<Stmt *>(Body));
  return Find.Found;
}

bool onlyAppendedIn(const Stmt *Body, const ValueDecl *List) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const ValueDecl *List;
    unsigned Mentions = 0, Appends = 0;
    bool VisitDeclRefExpr(DeclRefExpr *DRE) {
      Mentions += DRE->getDecl() == List;
      return true;
    }
    bool VisitCXXMemberCallExpr(CXXMemberCallExpr *MC) {
      const CXXMethodDecl *MD = MC->getMethodDecl();
      if (!MD || !MD->getIdentifier() ||
          (MD->getName() != "push_back" && MD->getName() != "emplace_back") ||
          MC->getNumArgs() != 1)
        return true;
      if (const auto *DRE = dyn_cast<DeclRefExpr>(
              MC->getImplicitObjectArgument()->IgnoreParenImpCasts()))
        Appends += DRE->getDecl() == List;
      return true;
    }
  } Find;
  Find.List = List;
  Find.TraverseStmt(const_cast<Stmt *>(Body));
  return Find.Mentions == Find.Appends;
}

bool declaredIn(const Stmt *Body, const ValueDecl *D) {
  const SourceManager &SM = D->getASTContext().getSourceManager();
  SourceLocation Begin = SM.getExpansionLoc(Body->getBeginLoc());
  SourceLocation End = SM.getExpansionLoc(Body->getEndLoc());
  SourceLocation L = SM.getExpansionLoc(D->getLocation());
  return Begin.isValid() && End.isValid() && L.isValid() &&
         !SM.isBeforeInTranslationUnit(L, Begin) &&
         !SM.isBeforeInTranslationUnit(End, L);
}

} // namespace tma
