// What a branch, a loop or a statement the analysis does not follow may have
// changed: the names it may assign become unknown after it, keeping their
// storage counted when every value they may hold is on that storage.
#include "frontend/FunctionEvaluator.h"

#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace tma {

/// What a statement may assign: tensor slots (`x = ...`, through
/// references, `std::tie`, `std::swap`) and option or device variables.
struct AssignedIn {
  std::vector<const Expr *> Targets;
  std::vector<const VarDecl *> Variables;
  std::vector<const ValueDecl *> Containers; // tensor vectors and tuples used
};

static AssignedIn assignedIn(const Stmt *Body) {
  struct Finder : RecursiveASTVisitor<Finder> {
    AssignedIn Out;
    bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *OCE) {
      if (OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2) {
        Out.Targets.push_back(OCE->getArg(0));
        if (const auto *DRE = dyn_cast<DeclRefExpr>(strip(OCE->getArg(0))))
          if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
            Out.Variables.push_back(VD);
        // std::tie(a, b) = ...
        if (const auto *Tie = dyn_cast<CallExpr>(strip(OCE->getArg(0))))
          for (const Expr *A : Tie->arguments())
            Out.Targets.push_back(A);
      }
      return true;
    }
    bool VisitCallExpr(CallExpr *CE) {
      if (const FunctionDecl *F = CE->getDirectCallee();
          F && F->getQualifiedNameAsString() == "std::swap")
        for (const Expr *A : CE->arguments())
          Out.Targets.push_back(A);
      return true;
    }
    bool VisitDeclRefExpr(DeclRefExpr *DRE) {
      if (isTensorVectorType(DRE->getType()) || isTensorTupleType(DRE->getType()))
        Out.Containers.push_back(DRE->getDecl());
      return true;
    }
  } Find;
  Find.TraverseStmt(const_cast<Stmt *>(Body));
  return Find.Out;
}

FunctionEvaluator::StorageSnapshot
FunctionEvaluator::snapshotAssignedIn(const Stmt *Body) {
  StorageSnapshot Out;
  for (const Expr *A : assignedIn(Body).Targets)
    if (auto Sl = slotOf(A))
      for (const std::string &K :
           Sl->Known ? std::vector<std::string>{Sl->Key} : Sl->Candidates)
        if (ValueId V = I.lookup(K); V != NoValue)
          Out[K] = I.value(V).Storage;
  return Out;
}

/// Names assigned inside Body that were declared outside it get an unknown
/// value: after a branch or a loop they hold one of several values. The
/// storage they hold stays counted when every value they may hold is on
/// the same storage (a view reassigned in a branch); otherwise which one is
/// held is unknown, and so are the totals. Before is what the names held
/// before Body ran; null when Body has not run yet.
void FunctionEvaluator::invalidateAssignedIn(const Stmt *Body,
                                             const std::string &Reason,
                                             SourceRange Where,
                                             const StorageSnapshot *Before) {
  AssignedIn Found = assignedIn(Body);
  // Tensor vectors and tuples used inside may have changed: forget their
  // elements.
  for (const ValueDecl *VD : Found.Containers) {
    TensorLists.erase(resolveKey(VD));
    TensorTuples.erase(resolveKey(VD));
  }
  for (const VarDecl *VD : Found.Variables) {
    if (isOptionsType(VD->getType()))
      OptionVars.erase(key(VD));
    DeviceVars.erase(key(VD));
  }
  for (const Expr *A : Found.Targets) {
    auto Sl = slotOf(A);
    if (!Sl)
      continue;
    std::vector<std::string> Keys =
        Sl->Known ? std::vector<std::string>{Sl->Key} : Sl->Candidates;
    for (const std::string &K : Keys) {
      ValueId Now = I.lookup(K);
      if (Now == NoValue)
        continue;
      StorageId Held = I.value(Now).Storage;
      StorageId Prior = Held;
      if (Before) {
        auto It = Before->find(K);
        Prior = It == Before->end() ? NoStorage : It->second;
      }
      if (Prior == Held) {
        I.rebind(K, I.unknownOn(Sl->Display, Reason, span(Where), Held));
        continue;
      }
      I.rebind(K, I.unknown(Sl->Display, Reason, span(Where),
                            Interpreter::Provenance::External));
      I.totalsUnknown("'" + Sl->Display + "' holds one of several tensors "
                      "after line " + std::to_string(span(Where).Line));
    }
  }
}

} // namespace tma
