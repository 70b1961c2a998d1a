// The first layer of a Sequential member, wherever the class builds it:
// the in-class initializer, a constructor's member initializer, or a
// statement of a constructor's body (`this->seq = Sequential(conv, ...)`,
// `this->seq->push_back(conv)`). Rank evidence (RankEvidence.cpp) reads it:
// the input of the Sequential's forward is the first layer's, with the
// rank that layer documents for a batch.
#include "frontend/FunctionEvaluator.h"
#include "frontend/ModuleTracker.h"
#include "frontend/ModuleUses.h"


using namespace clang;

namespace tma {

namespace {

/// The layer a constructor's body makes F's first, by a statement of the
/// body itself: `F = Sequential(first, ...)` (a register_module around it
/// looked through), or the first `F->push_back(first)` when no push_back
/// to F comes before it inside a branch or a loop. Null otherwise.
const Expr *firstBuiltInBody(const CompoundStmt *Body, const FieldDecl *F,
                             unsigned &Assignments) {
  const Expr *First = nullptr;
  for (const Stmt *S : Body->body()) {
    const auto *E = dyn_cast<Expr>(S);
    if (const Expr *RHS = E ? assignedLayer(E, F) : nullptr) {
      ++Assignments;
      const CXXConstructExpr *Made = holderConstruction(RHS);
      First = Made && Made->getNumArgs() > 0 && !isDefaultArg(Made->getArg(0))
                  ? Made->getArg(0)
                  : nullptr;
      continue;
    }
    CallsOn Pushes(F, {"push_back"});
    Pushes.TraverseStmt(const_cast<Stmt *>(S));
    if (Pushes.Calls.empty() || First || Assignments > 0)
      continue;
    // The statement is the push itself; a push_back to F inside a branch
    // or a loop before it means which layer is first depends on the path.
    const CXXMemberCallExpr *Push = Pushes.Calls.front();
    if (Pushes.Calls.size() == 1 && E && strip(E) == Push && Push->getNumArgs() == 1)
      return Push->getArg(0);
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
