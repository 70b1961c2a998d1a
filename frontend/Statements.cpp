// Statements in order and control flow, as C++ defines them: each returns
// how it completed (normally, break, continue, return, goto, throw).
// Constant conditions pick their branch; unknown ones evaluate every branch
// and make what they allocate uncertain; loops run their body once for its
// per-iteration shapes; try blocks, switches, labels and goto follow C++'s
// rules for which code runs. A loop whose carried tensors keep their
// shapes through one pass of its body is at a fixpoint (loopAtFixpoint):
// that pass's answers hold on every iteration.
#include "frontend/FunctionEvaluator.h"
#include "frontend/StatementWalker.h"
#include "frontend/Invalidation.h"
#include "frontend/LoopCounts.h"
#include "frontend/ModuleTracker.h"
#include "frontend/SymbolReader.h"
#include "frontend/ArgumentReader.h"

#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace tma {

FunctionEvaluator::Completion StatementWalker::compound(const CompoundStmt *CS, Flow F) {
  FE.I.enterScope();
  llvm::SmallVector<const Stmt *, 16> Body(CS->body_begin(), CS->body_end());
  Completion C = statementList(Body, F);
  FE.I.exitScope();
  return C;
}

/// The label a statement carries, looking through nested labels.
static const LabelStmt *labelOf(const Stmt *S) {
  return dyn_cast_or_null<LabelStmt>(S);
}

/// Whether S contains a goto to L.
static bool jumpsTo(const Stmt *S, const LabelDecl *L) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const LabelDecl *L;
    bool Found = false;
    bool VisitGotoStmt(GotoStmt *G) {
      Found |= G->getLabel() == L;
      return !Found;
    }
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
  } Find;
  Find.L = L;
  Find.TraverseStmt(const_cast<Stmt *>(S));
  return Find.Found;
}

/// Whether S contains the statement labelled L.
static bool containsLabel(const Stmt *S, const LabelDecl *L) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const LabelDecl *L;
    bool Found = false;
    bool VisitLabelStmt(LabelStmt *LS) {
      Found |= LS->getDecl() == L;
      return !Found;
    }
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
  } Find;
  Find.L = L;
  Find.TraverseStmt(const_cast<Stmt *>(S));
  return Find.Found;
}

/// Statements in order. A forward goto skips to its label when the label
/// is later in this list; a label that a later statement jumps back to
/// starts a loop that runs to the last statement jumping back.
FunctionEvaluator::Completion StatementWalker::statementList(llvm::ArrayRef<const Stmt *> Body,
                                            Flow F) {
  for (size_t K = 0; K < Body.size(); ++K) {
    if (const LabelStmt *L = labelOf(Body[K])) {
      size_t Last = K;
      for (size_t J = K; J < Body.size(); ++J)
        if (jumpsTo(Body[J], L->getDecl()))
          Last = J;
      if (Last > K || jumpsTo(L->getSubStmt(), L->getDecl())) {
        // Body[K..Last] runs a number of times the analysis does not know.
        SourceRange Region(Body[K]->getBeginLoc(), Body[Last]->getEndLoc());
        FE.BackEdges.insert(L->getDecl());
        std::vector<StorageSnapshot> Before;
        for (size_t J = K; J <= Last; ++J) {
          Before.push_back(FE.invalidation().snapshotAssignedIn(Body[J]));
          FE.invalidation().invalidateAssignedIn(Body[J], "assigned in a loop made with goto: "
                               "differs per iteration", Region);
        }
        Flow Inner = F;
        Inner.InLoop = true;
        Inner.Unrolled = false;
        size_t OpsBefore = FE.I.trace().Ops.size();
        Completion C;
        for (size_t J = K; J <= Last && !C.abrupt(); ++J)
          C = statement(J == K ? L->getSubStmt() : Body[J], Inner, true);
        FE.invalidation().allocationsAreUncertain(OpsBefore,
                                "allocates in a loop made with goto (line " +
                                    std::to_string(FE.span(Region).Line) + ")");
        for (size_t J = K; J <= Last; ++J)
          FE.invalidation().invalidateAssignedIn(Body[J], "assigned in a loop made with goto: "
                               "differs per iteration", Region,
                               &Before[J - K]);
        FE.BackEdges.erase(L->getDecl());
        if (C.K == Completion::Return || C.K == Completion::Throw ||
            C.K == Completion::Goto)
          return C;
        K = Last;
        continue;
      }
    }
    Completion C = statement(Body[K], F, /*Insertable=*/true);
    if (C.K == Completion::Goto && C.Label) {
      size_t Target = Body.size();
      for (size_t J = K + 1; J < Body.size(); ++J)
        if (const LabelStmt *L = labelOf(Body[J]); L && L->getDecl() == C.Label)
          Target = J;
      if (Target < Body.size()) {
        // Forward: what lies between is skipped. The label's statement
        // runs next.
        C = statement(labelOf(Body[Target])->getSubStmt(), F, true);
        if (C.abrupt())
          return C;
        K = Target;
        continue;
      }
      // Into a later statement (a loop's or a branch's body): what runs
      // from the label on is not followed.
      for (size_t J = K + 1; J < Body.size(); ++J)
        if (containsLabel(Body[J], C.Label)) {
          unsigned From = C.Where ? FE.span(C.Where->getSourceRange()).Line : 0;
          std::string Why = "the goto at line " + std::to_string(From) +
                            " jumps into the statement at line " +
                            std::to_string(FE.span(Body[J]->getSourceRange()).Line) +
                            ", which the analysis does not follow";
          StorageSnapshot Nothing;
          for (size_t After = J; After < Body.size(); ++After)
            FE.invalidation().invalidateAssignedIn(Body[After], "assigned after " + Why,
                                                   Body[After]->getSourceRange(), &Nothing);
          FE.I.totalsUnknown(Why);
          return {};
        }
    }
    if (C.abrupt())
      return C;
  }
  return {};
}

FunctionEvaluator::Completion StatementWalker::branch(const Stmt *Body, Flow F) {
  if (!Body)
    return {};
  FE.I.enterScope();
  Completion C = statement(Body, F, isa<CompoundStmt>(Body));
  FE.I.exitScope();
  return C;
}

FunctionEvaluator::Completion StatementWalker::loopBodyOnce(const Stmt *Body,
                                                             const Stmt *Whole,
                                                             Flow Inner) {
  FE.I.enterScope();
  if (const auto *RFS = dyn_cast<CXXForRangeStmt>(Whole))
    FE.modules().loaderBatchValues(RFS, Inner);
  // The condition runs on every iteration too.
  const Expr *Cond = nullptr;
  if (const auto *FS = dyn_cast<ForStmt>(Whole))
    Cond = FS->getCond();
  else if (const auto *WS = dyn_cast<WhileStmt>(Whole))
    Cond = WS->getCond();
  else if (const auto *DS = dyn_cast<DoStmt>(Whole))
    Cond = DS->getCond();
  if (Cond && hasTensorWork(Cond)) {
    openStatement(Cond, Inner, false);
    FE.sideEffects(Cond);
    FE.I.endStatement();
  }
  Completion C = statement(Body, Inner, isa<CompoundStmt>(Body));
  if (const auto *FS = dyn_cast<ForStmt>(Whole); FS && FS->getInc() &&
                                                 hasTensorWork(FS->getInc())) {
    openStatement(FS->getInc(), Inner, false);
    FE.sideEffects(FS->getInc());
    FE.I.endStatement();
  }
  FE.I.exitScope();
  return C;
}

FunctionEvaluator::Completion StatementWalker::loop(const Stmt *Body, const Stmt *Whole, Flow F) {
  // `for (int i = 0; i < 0; ++i)`: the body never runs.
  if (const auto *FS = dyn_cast<ForStmt>(Whole))
    if (auto Trips = constantTripCount(FS, FE);
        Trips && *Trips == 0 && !mayLeaveIterationEarly(Body))
      return {};
  if (auto Done = unrolledLoop(Body, Whole, F))
    return *Done;
  if (auto Done = loopAtFixpoint(Body, Whole, F))
    return *Done;
  // Values carried around the loop change per iteration: forget them
  // before evaluating the body once for its per-iteration shapes.
  StorageSnapshot Before = FE.invalidation().snapshotAssignedIn(Body);
  FE.invalidation().invalidateAssignedIn(Body, "assigned inside a loop: differs per iteration",
                       Whole->getSourceRange());
  size_t OpsBefore = FE.I.trace().Ops.size();
  Flow Inner = F;
  Inner.InLoop = true;
  Inner.Unrolled = false;
  Completion C = loopBodyOnce(Body, Whole, Inner);
  FE.invalidation().allocationsAreUncertain(OpsBefore, "allocates inside a loop", true);
  FE.invalidation().invalidateAssignedIn(Body, "assigned inside a loop: differs per iteration",
                       Whole->getSourceRange(), &Before);
  // A loop body leaving the function or jumping out runs on some
  // iterations only.
  if (C.K == Completion::Return || C.K == Completion::Goto)
    mayHaveLeft(C);
  return {};
}

void StatementWalker::mayHaveLeft(const Completion &C) {
  if (!FE.MayHaveLeft.empty())
    return;
  unsigned Line = C.Where ? FE.span(C.Where->getSourceRange()).Line : 0;
  FE.MayHaveLeft = std::string(C.K == Completion::Goto ? "jumps" : "returns") +
                " on some paths at line " + std::to_string(Line) +
                ", so what follows runs on some paths only";
  FE.MayHaveLeftOps = FE.I.trace().Ops.size();
}

/// Both arms of a branch whose condition is not known: each is evaluated
/// (their allocations make the totals unknown), names assigned in either
/// are unknown after it.
FunctionEvaluator::Completion StatementWalker::ifStatement(const IfStmt *IS, Flow F) {
  FE.I.enterScope();
  conditionPrologue(IS->getInit(), IS->getConditionVariableDeclStmt(),
                    IS->getCond(), F);
  std::optional<int64_t> Known;
  if (IS->isConstexpr() || !IS->getConditionVariable())
    Known = FE.args().integer(IS->getCond());
  if (Known) {
    Completion C = branch(*Known ? IS->getThen() : IS->getElse(), F);
    FE.I.exitScope();
    return C;
  }
  size_t OpsBefore = FE.I.trace().Ops.size();
  Flow Inner = F;
  Inner.InBranch = true;
  // The else arm starts from the state before the then arm, not after it.
  BranchState Start = FE.invalidation().saveBranchState();
  std::vector<BranchState> Ends;
  Completion Then = branch(IS->getThen(), Inner);
  Completion Else;
  if (IS->getElse()) {
    Ends.push_back(FE.invalidation().saveBranchState());
    FE.invalidation().restoreBranchState(Start);
    Else = branch(IS->getElse(), Inner);
  } else {
    Ends.push_back(Start); // the condition was false: nothing ran
  }
  FE.invalidation().allocationsAreUncertain(OpsBefore, "allocates in a branch", true);
  FE.invalidation().mergeBranchStates(IS, Start, Ends, "branch");
  FE.invalidation().invalidateAssignedIn(IS, "assigned in a branch: depends on the condition",
                       IS->getSourceRange(), nullptr, /*Names=*/false);
  FE.I.exitScope();
  if (Then.abrupt() && Else.abrupt() && Then.K == Else.K)
    return Then;
  for (const Completion &C : {Then, Else})
    if (C.K == Completion::Return || C.K == Completion::Goto)
      mayHaveLeft(C);
  return {};
}

void StatementWalker::conditionPrologue(const Stmt *Init,
                                          const DeclStmt *CondVar,
                                          const Expr *Cond, Flow F) {
  if (Init)
    statement(Init, F, false);
  if (CondVar) {
    declaration(CondVar, F, false);
  } else if (Cond && hasTensorWork(Cond)) {
    openStatement(Cond, F, false);
    FE.sideEffects(Cond);
    FE.I.endStatement();
  }
}

/// A case label's statement, looking through the labels stacked on it.
static const Stmt *caseBody(const Stmt *S) {
  while (const auto *SC = dyn_cast_or_null<SwitchCase>(S))
    S = SC->getSubStmt();
  return S;
}

FunctionEvaluator::Completion StatementWalker::switchStatement(const SwitchStmt *SS, Flow F) {
  FE.I.enterScope();
  conditionPrologue(SS->getInit(), SS->getConditionVariableDeclStmt(),
                    SS->getCond(), F);
  llvm::SmallVector<const Stmt *, 16> Body;
  if (const auto *CS = dyn_cast_or_null<CompoundStmt>(SS->getBody()))
    Body.append(CS->body_begin(), CS->body_end());
  else if (SS->getBody())
    Body.push_back(SS->getBody());
  // The value, when the condition is a constant or a const local.
  std::optional<int64_t> Value = FE.args().integer(SS->getCond());
  if (!Value)
    if (const VarDecl *CV = SS->getConditionVariable())
      if (CV->getInit())
        Value = FE.args().integer(CV->getInit());
  auto Matches = [&](const Stmt *S, bool Default) {
    for (const auto *SC = dyn_cast_or_null<SwitchCase>(S); SC;
         SC = dyn_cast_or_null<SwitchCase>(SC->getSubStmt())) {
      if (Default && isa<DefaultStmt>(SC))
        return true;
      if (const auto *C = dyn_cast<CaseStmt>(SC); C && !Default) {
        auto Lo = FE.args().integer(C->getLHS());
        auto Hi = C->getRHS() ? FE.args().integer(C->getRHS()) : Lo;
        if (Lo && Hi && *Value >= *Lo && *Value <= *Hi)
          return true;
      }
    }
    return false;
  };
  FE.I.enterScope();
  Completion Result;
  if (Value) {
    size_t Start = Body.size();
    for (size_t K = 0; K < Body.size() && Start == Body.size(); ++K)
      if (Matches(Body[K], false))
        Start = K;
    for (size_t K = 0; K < Body.size() && Start == Body.size(); ++K)
      if (Matches(Body[K], true))
        Start = K;
    // From the matching label on, falling through the labels that follow,
    // until a break.
    for (size_t K = Start; K < Body.size(); ++K) {
      Completion C = statement(caseBody(Body[K]), F, true);
      if (C.K == Completion::Break)
        break;
      if (C.abrupt()) {
        Result = C;
        break;
      }
    }
  } else {
    size_t OpsBefore = FE.I.trace().Ops.size();
    Flow Inner = F;
    Inner.InBranch = true;
    // Each case entered by its label starts from the state before the
    // switch; one entered by falling through may also carry the cases
    // above it, so what they changed is unknown there.
    BranchState Start = FE.invalidation().saveBranchState();
    std::vector<BranchState> Ends;
    bool Live = false, Entered = false;
    for (const Stmt *S : Body) {
      if (isa<SwitchCase>(S)) {
        if (Entered && !Live) {
          Ends.push_back(FE.invalidation().saveBranchState());
          FE.invalidation().restoreBranchState(Start);
        } else if (Entered) {
          // Entered by this label, or fallen into from the case above.
          FE.invalidation().mergeBranchStates(SS, Start, {Start}, "switch");
        }
        Live = Entered = true;
      }
      if (!Live)
        continue;
      Completion C = statement(caseBody(S), Inner, true);
      if (C.abrupt()) {
        Live = false;
        if (C.K == Completion::Return || C.K == Completion::Goto)
          mayHaveLeft(C);
      }
    }
    FE.invalidation().allocationsAreUncertain(OpsBefore,
                            "allocates in a switch case (line " +
                                std::to_string(FE.span(SS->getSourceRange()).Line) +
                                ")");
    // Without a default label, no case may run at all.
    bool HasDefault = false;
    for (const SwitchCase *SC = SS->getSwitchCaseList(); SC;
         SC = SC->getNextSwitchCase())
      HasDefault |= isa<DefaultStmt>(SC);
    if (!HasDefault)
      Ends.push_back(Start);
    FE.invalidation().mergeBranchStates(SS, Start, Ends, "switch");
    FE.invalidation().invalidateAssignedIn(SS, "assigned in a switch: depends on the condition",
                         SS->getSourceRange(), nullptr, /*Names=*/false);
  }
  FE.I.exitScope();
  FE.I.exitScope();
  return Result;
}

/// Whether a handler for Caught catches an exception of type Thrown
/// (both known): the same class, or a public base of it, or catch (...).
static bool catches(QualType Caught, QualType Thrown) {
  if (Caught.isNull())
    return true;
  const CXXRecordDecl *C =
      Caught.getNonReferenceType()->getAsCXXRecordDecl();
  const CXXRecordDecl *T = Thrown.getNonReferenceType()->getAsCXXRecordDecl();
  if (!C || !T || !T->hasDefinition())
    return false;
  C = C->getCanonicalDecl();
  return T->getCanonicalDecl() == C || T->isDerivedFrom(C);
}

FunctionEvaluator::Completion StatementWalker::tryStatement(const CXXTryStmt *TS, Flow F) {
  std::string ThrowsBefore = FE.I.trace().Throws;
  size_t OpsBefore = FE.I.trace().Ops.size();
  Completion C = compound(TS->getTryBlock(), F);
  // A LibTorch op that throws inside the block is caught, not the
  // function's fate; where the block stopped is not followed.
  bool LibTorchThrew = ThrowsBefore.empty() && !FE.I.trace().Throws.empty();
  if (LibTorchThrew) {
    std::string Message = FE.I.trace().Throws;
    FE.I.trace().Throws.clear();
    FE.I.totalsUnknown("LibTorch throws inside a try block (" + Message.substr(0, 80) +
                    "): where the block stops is not followed");
  }
  auto Handler = [&](const CXXCatchStmt *H, Flow HF) {
    FE.I.enterScope();
    Completion HC = statement(H->getHandlerBlock(), HF, true);
    FE.I.exitScope();
    return HC;
  };
  if (C.K == Completion::Throw && !C.Thrown.isNull() && !LibTorchThrew) {
    // The block certainly throws: the first handler that catches it runs.
    for (unsigned K = 0; K < TS->getNumHandlers(); ++K)
      if (catches(TS->getHandler(K)->getCaughtType(), C.Thrown))
        return Handler(TS->getHandler(K), F);
    bool Undecided = false;
    for (unsigned K = 0; K < TS->getNumHandlers(); ++K)
      Undecided |= !TS->getHandler(K)->getCaughtType()
                        .getNonReferenceType()->getAsCXXRecordDecl();
    if (!Undecided)
      return C; // no handler catches it: it propagates
  }
  // Handlers may run when something in the block may throw: a throw,
  // a call the analysis does not follow, a LibTorch error.
  bool MayThrow = LibTorchThrew || C.K == Completion::Throw;
  for (size_t K = OpsBefore; K < FE.I.trace().Ops.size() && !MayThrow; ++K)
    MayThrow = FE.I.trace().Ops[K].Kind == OpKind::Unknown ||
               FE.I.trace().Ops[K].Kind == OpKind::Use;
  if (!MayThrow) {
    struct Finder : RecursiveASTVisitor<Finder> {
      bool Found = false;
      bool VisitCXXThrowExpr(CXXThrowExpr *) { return !(Found = true); }
      bool VisitCallExpr(CallExpr *CE) {
        const FunctionDecl *F = CE->getDirectCallee();
        if (!F || !isLibTorchDecl(F))
          Found = true;
        return !Found;
      }
      bool TraverseLambdaExpr(LambdaExpr *) { return true; }
    } Find;
    Find.TraverseStmt(const_cast<CompoundStmt *>(TS->getTryBlock()));
    MayThrow = Find.Found;
  }
  if (!MayThrow)
    return C; // nothing in the block throws as far as the model knows
  size_t HandlerOps = FE.I.trace().Ops.size();
  std::vector<StorageSnapshot> Before;
  for (unsigned K = 0; K < TS->getNumHandlers(); ++K)
    Before.push_back(FE.invalidation().snapshotAssignedIn(TS->getHandler(K)));
  Flow Inner = F;
  Inner.InBranch = true;
  for (unsigned K = 0; K < TS->getNumHandlers(); ++K) {
    Completion HC = Handler(TS->getHandler(K), Inner);
    if (HC.K == Completion::Return || HC.K == Completion::Goto)
      mayHaveLeft(HC);
  }
  FE.invalidation().allocationsAreUncertain(HandlerOps,
                          "allocates in a catch handler that may run (line " +
                              std::to_string(FE.span(TS->getSourceRange()).Line) +
                              ")");
  for (unsigned K = 0; K < TS->getNumHandlers(); ++K)
    FE.invalidation().invalidateAssignedIn(TS->getHandler(K), "assigned in a catch handler that "
                         "may run", TS->getSourceRange(), &Before[K]);
  if (C.K == Completion::Throw)
    return {}; // caught, probably; what follows runs when it is
  return C;
}

FunctionEvaluator::Completion StatementWalker::statement(const Stmt *S, Flow F, bool Insertable) {
  Completion Done;
  if (!S || isa<NullStmt>(S))
    return Done;
  if (const auto *CS = dyn_cast<CompoundStmt>(S))
    return compound(CS, F);
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    declaration(DS, F, Insertable);
    return Done;
  }
  if (const auto *E = dyn_cast<Expr>(S)) {
    Completion C = expressionStatement(E, F, Insertable);
    if (!C.abrupt())
      FE.symbols().checkedStatement(S, F); // assert(c): c holds from here on
    return C;
  }
  if (const auto *RS = dyn_cast<ReturnStmt>(S)) {
    Done.K = Completion::Return;
    Done.Where = S;
    const Expr *R = RS->getRetValue();
    if (!R)
      return Done;
    if (isTensorType(R->getType())) {
      openStatement(S, F, false);
      FE.I.trace().Returned.push_back(FE.tensor(R));
      FE.Returns.push_back(std::vector<ValueId>{FE.I.trace().Returned.back()});
      FE.I.endStatement();
    } else if (isTensorVectorType(R->getType()) ||
               isTensorTupleType(R->getType())) {
      openStatement(S, F, false);
      auto Elements = isTensorVectorType(R->getType()) ? FE.tensorList(R)
                                                        : FE.tensorTuple(R);
      FE.Returns.push_back(Elements);
      if (Elements)
        for (ValueId V : *Elements)
          FE.I.trace().Returned.push_back(V);
      else
        FE.I.totalsUnknown("returns tensors the analysis does not follow");
      FE.I.endStatement();
    } else if (hasTensorWork(R)) {
      openStatement(S, F, false);
      FE.sideEffects(R);
      FE.I.endStatement();
    }
    return Done;
  }
  if (isa<BreakStmt>(S)) {
    Done.K = Completion::Break;
    Done.Where = S;
    return Done;
  }
  if (isa<ContinueStmt>(S)) {
    Done.K = Completion::Continue;
    Done.Where = S;
    return Done;
  }
  if (const auto *GS = dyn_cast<GotoStmt>(S)) {
    Done.K = FE.BackEdges.count(GS->getLabel()) ? Completion::Continue
                                             : Completion::Goto;
    Done.Label = GS->getLabel();
    Done.Where = S;
    return Done;
  }
  if (const auto *LS = dyn_cast<LabelStmt>(S))
    return statement(LS->getSubStmt(), F, Insertable);
  if (const auto *AS = dyn_cast<AttributedStmt>(S))
    return statement(AS->getSubStmt(), F, Insertable);
  if (const auto *FS = dyn_cast<ForStmt>(S)) {
    FE.I.enterScope();
    statement(FS->getInit(), F, false);
    if (const DeclStmt *CV = FS->getConditionVariableDeclStmt())
      declaration(CV, F, false);
    loop(FS->getBody(), S, F);
    FE.I.exitScope();
    return Done;
  }
  if (const auto *RFS = dyn_cast<CXXForRangeStmt>(S)) {
    FE.I.enterScope();
    if (RFS->getInit())
      statement(RFS->getInit(), F, false);
    if (const Expr *Range = RFS->getRangeInit(); Range && hasTensorWork(Range)) {
      openStatement(Range, F, false);
      FE.sideEffects(Range);
      FE.I.endStatement();
    }
    loop(RFS->getBody(), S, F);
    FE.I.exitScope();
    return Done;
  }
  if (const auto *WS = dyn_cast<WhileStmt>(S)) {
    FE.I.enterScope();
    if (const DeclStmt *CV = WS->getConditionVariableDeclStmt())
      declaration(CV, F, false);
    loop(WS->getBody(), S, F);
    FE.I.exitScope();
    return Done;
  }
  if (const auto *DS = dyn_cast<DoStmt>(S)) {
    loop(DS->getBody(), S, F);
    return Done;
  }
  if (const auto *IS = dyn_cast<IfStmt>(S)) {
    Completion C = ifStatement(IS, F);
    if (!C.abrupt())
      FE.symbols().checkedStatement(S, F); // TORCH_CHECK(c): c holds from here on
    return C;
  }
  if (const auto *SS = dyn_cast<SwitchStmt>(S))
    return switchStatement(SS, F);
  if (const auto *TS = dyn_cast<CXXTryStmt>(S))
    return tryStatement(TS, F);
  if (const auto *SC = dyn_cast<SwitchCase>(S))
    return statement(SC->getSubStmt(), F, Insertable);
  // Anything else (inline assembly, coroutines, SEH): not followed.
  StorageSnapshot Nothing; // nothing was evaluated: every name may differ
  FE.invalidation().invalidateAssignedIn(S, "assigned in a statement the analysis does not follow",
                       S->getSourceRange(), &Nothing);
  FE.I.totalsUnknown("a statement the analysis does not follow (line " +
                  std::to_string(FE.span(S->getSourceRange()).Line) + ")");
  return Done;
}

} // namespace tma
