// The first layer of a Sequential member, wherever the class builds it:
// the in-class initializer, a constructor's member initializer, or a
// statement of a constructor's body (`this->seq = Sequential(conv, ...)`,
// `this->seq->push_back(conv)`). Rank evidence (RankEvidence.cpp) reads it:
// the input of the Sequential's forward is the first layer's, with the
// rank that layer documents for a batch.
#include "frontend/FunctionEvaluator.h"
#include "frontend/ModuleTracker.h"

#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace tma {

namespace {

/// `F->push_back(layer)` (or `this->F->push_back`): the layer pushed.
const Expr *pushedOnto(const Stmt *S, const FieldDecl *F) {
  const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(S);
  const CXXMethodDecl *MD = MC ? MC->getMethodDecl() : nullptr;
  if (!MD || !MD->getIdentifier() || MD->getName() != "push_back" ||
      MC->getNumArgs() != 1)
    return nullptr;
  const auto *Arrow =
      dyn_cast_or_null<CXXOperatorCallExpr>(strip(MC->getImplicitObjectArgument()));
  if (!Arrow || Arrow->getOperator() != OO_Arrow || Arrow->getNumArgs() != 1 ||
      namedDecl(strip(Arrow->getArg(0))) != F)
    return nullptr;
  return MC->getArg(0);
}

/// The layer a constructor's body makes F's first, by a statement of the
/// body itself: `F = Sequential(first, ...)` (a register_module around it
/// looked through), or the first `F->push_back(first)` when no push_back
/// to F comes before it inside a branch or a loop. Null otherwise.
const Expr *firstBuiltInBody(const CompoundStmt *Body, const FieldDecl *F,
                             unsigned &Assignments) {
  const Expr *First = nullptr;
  for (const Stmt *S : Body->body()) {
    if (const auto *E = dyn_cast<Expr>(S))
      S = strip(E); // the full expression's cleanups
    if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S);
        OCE && OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2 &&
        namedDecl(strip(OCE->getArg(0))) == F) {
      ++Assignments;
      const Expr *RHS = throughCopies(OCE->getArg(1));
      if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(RHS);
          CE && CE->getNumArgs() == 1)
        if (const auto *Reg = dyn_cast<CXXMemberCallExpr>(strip(CE->getArg(0)));
            Reg && Reg->getNumArgs() == 2)
          RHS = throughCopies(Reg->getArg(1)); // register_module("m", Sequential(...))
      const CXXConstructExpr *Made = holderConstruction(RHS);
      First = Made && Made->getNumArgs() > 0 && !isDefaultArg(Made->getArg(0))
                  ? Made->getArg(0)
                  : nullptr;
      continue;
    }
    if (const Expr *Pushed = pushedOnto(S, F)) {
      if (!First && Assignments == 0)
        return Pushed;
      continue;
    }
    // A push_back to F inside a branch or a loop before the first one at
    // the top level: which layer is first depends on the path.
    struct PushScan : RecursiveASTVisitor<PushScan> {
      const FieldDecl *F;
      bool Found = false;
      bool VisitCXXMemberCallExpr(CXXMemberCallExpr *MC) {
        Found = Found || pushedOnto(MC, F);
        return true;
      }
    } Scan;
    Scan.F = F;
    Scan.TraverseStmt(const_cast<Stmt *>(S));
    if (Scan.Found && !First && Assignments == 0)
      return nullptr;
  }
  return First;
}

} // namespace

std::optional<std::string> sequentialFirstLayer(const Expr *Object) {
  const ValueDecl *D = namedDecl(strip(Object));
  const Expr *Init = nullptr;
  if (const auto *VD = dyn_cast_or_null<VarDecl>(D))
    Init = VD->getInit();
  else if (const auto *F = dyn_cast_or_null<FieldDecl>(D)) {
    Init = F->getInClassInitializer();
    // Or the member initialiser of the class's one constructor with one,
    // or what a statement of its body builds (`this->F = Sequential(...)`,
    // `this->F->push_back(layer)`).
    unsigned Found = 0, Assignments = 0;
    const Expr *FirstInBody = nullptr;
    for (const CXXConstructorDecl *C :
         cast<CXXRecordDecl>(F->getParent())->ctors()) {
      const FunctionDecl *Def = nullptr;
      if (C->isCopyOrMoveConstructor() || !C->hasBody(Def))
        continue;
      for (const CXXCtorInitializer *CI :
           cast<CXXConstructorDecl>(Def)->inits())
        if (CI->isWritten() && CI->getMember() == F) {
          Init = CI->getInit();
          ++Found;
        }
      if (const auto *Body = dyn_cast_or_null<CompoundStmt>(Def->getBody()))
        if (const Expr *First = firstBuiltInBody(Body, F, Assignments)) {
          FirstInBody = First;
          ++Found;
        }
    }
    if (Found > 1 || Assignments > 1)
      return std::nullopt;
    if (FirstInBody) {
      auto First = moduleLayer(FirstInBody->getType());
      if (First && isLayerKind(*First, LayerKind::Sequential))
        return std::nullopt;
      return First;
    }
  }
  const CXXConstructExpr *CE = holderConstruction(Init);
  if (!CE || CE->getNumArgs() == 0 || isDefaultArg(CE->getArg(0)))
    return std::nullopt;
  auto First = moduleLayer(CE->getArg(0)->getType());
  if (First && isLayerKind(*First, LayerKind::Sequential))
    return std::nullopt;
  return First;
}

} // namespace tma
