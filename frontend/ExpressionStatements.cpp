// Expression statements: assignments (std::tie, vectors, tuples, options),
// vector mutators, pointer retargeting, delete, std::swap, calls returning
// no tensor (recorded as uses), throws and calls that never return.
#include "frontend/FunctionEvaluator.h"
#include "frontend/CallFollower.h"
#include "frontend/StatementWalker.h"
#include "frontend/TrainingTracker.h"
#include "frontend/ArgumentReader.h"

using namespace clang;

namespace tma {

void StatementWalker::bindInteger(const Stmt *At, const VarDecl *VD,
                                  const Expr *Init, Flow F, bool Insertable) {
  bool Work = Init && hasTensorWork(Init);
  if (Work)
    openStatement(At, F, Insertable);
  FE.symbols().declareInteger(VD, Init, F);
  if (Work) {
    FE.sideEffects(Init);
    FE.I.endStatement();
  }
}

FunctionEvaluator::Completion StatementWalker::expressionStatement(const Expr *E, Flow F,
                                                  bool Insertable) {
  const Expr *S = strip(E);
  Completion Done;
  // `(void)expr;` and `static_cast<void>(expr);` evaluate expr.
  while (const auto *Cast = dyn_cast<ExplicitCastExpr>(S)) {
    if (Cast->getCastKind() != CK_ToVoid)
      break;
    S = strip(Cast->getSubExpr());
  }
  // `N = x.size(0);`, the one assignment of an integer declared without a
  // value: its value from here on, as an initializer's.
  if (const auto *BO = dyn_cast<BinaryOperator>(S);
      BO && BO->getOpcode() == BO_Assign && !F.InLoop && !F.InBranch)
    if (const auto *DRE = dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
          VD && FE.AssignedOnce.count(cast<VarDecl>(VD->getCanonicalDecl()))) {
        bindInteger(E, VD, BO->getRHS(), F, Insertable);
        return Done;
      }
  if (const auto *TE = dyn_cast<CXXThrowExpr>(S)) {
    if (TE->getSubExpr() && hasTensorWork(TE->getSubExpr())) {
      openStatement(E, F, Insertable);
      FE.sideEffects(TE->getSubExpr());
      FE.I.endStatement();
    }
    Done.K = Completion::Throw;
    Done.Where = E;
    if (TE->getSubExpr())
      Done.Thrown = TE->getSubExpr()->getType();
    return Done;
  }
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S);
      OCE && OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2) {
    const Expr *LHS = strip(OCE->getArg(0));
    // `std::tie(a, b) = tuple;` assigns each element to its name.
    if (const auto *Tie = dyn_cast<CallExpr>(LHS);
        Tie && Tie->getDirectCallee() &&
        Tie->getDirectCallee()->getQualifiedNameAsString() == "std::tie" &&
        isTensorTupleType(LHS->getType())) {
      openStatement(E, F, Insertable);
      auto Tuple = FE.tensorTuple(OCE->getArg(1));
      for (unsigned K = 0; K < Tie->getNumArgs(); ++K) {
        const Expr *Target = strip(Tie->getArg(K));
        ValueId V = Tuple && K < Tuple->size()
                        ? (*Tuple)[K]
                        : FE.I.unknown("std::tie", "element not followed",
                                    FE.span(E->getSourceRange()));
        std::optional<Slot> Sl = FE.slotOf(Target);
        if (!Sl)
          if (const auto *DRE = dyn_cast<DeclRefExpr>(Target)) {
            Sl = Slot{};
            Sl->Key = FE.resolveKey(DRE->getDecl());
            Sl->Display = DRE->getDecl()->getName().str();
          }
        if (Sl)
          FE.assignSlot(*Sl, V, FE.span(E->getSourceRange()),
                     FE.span(Target->getSourceRange()));
      }
      FE.I.endStatement();
      return Done;
    }
    // `std::tie(output, state) = lstm->forward(x, state);`: the output,
    // and the (h_n, c_n) pair into a std::tuple local.
    if (const auto *Tie = dyn_cast<CallExpr>(LHS);
        Tie && Tie->getDirectCallee() &&
        Tie->getDirectCallee()->getQualifiedNameAsString() == "std::tie" &&
        Tie->getNumArgs() == 2 && isTensorType(Tie->getArg(0)->getType()) &&
        isTensorTupleType(Tie->getArg(1)->getType()) &&
        FE.modules().recurrentModule(OCE->getArg(1))) {
      openStatement(E, F, Insertable);
      auto Values = FE.modules().recurrentValues(OCE->getArg(1));
      const Expr *Output = strip(Tie->getArg(0));
      std::optional<Slot> Sl = FE.slotOf(Output);
      if (!Sl)
        if (const auto *DRE = dyn_cast<DeclRefExpr>(Output)) {
          Sl = Slot{};
          Sl->Key = FE.resolveKey(DRE->getDecl());
          Sl->Display = DRE->getDecl()->getName().str();
        }
      bool Three = Values && Values->size() == 3;
      if (Sl)
        FE.assignSlot(*Sl, Three ? Values->front()
                                 : FE.I.unknown("std::tie", "element not followed",
                                                FE.span(E->getSourceRange())),
                      FE.span(E->getSourceRange()),
                      FE.span(Output->getSourceRange()));
      const auto *State = dyn_cast<DeclRefExpr>(strip(Tie->getArg(1)));
      if (State)
        FE.holdElements(FE.resolveKey(State->getDecl()),
                        Three ? std::optional<std::vector<ValueId>>(
                                    std::vector<ValueId>{(*Values)[1], (*Values)[2]})
                              : std::nullopt,
                        FE.TensorTuples);
      FE.I.endStatement();
      return Done;
    }
    if (isTensorVectorType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS)) {
        openStatement(E, F, Insertable);
        FE.holdElements(FE.resolveKey(DRE->getDecl()), FE.tensorList(OCE->getArg(1)),
                     FE.TensorLists);
        FE.I.endStatement();
      }
      return Done;
    }
    if (isTensorTupleType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS)) {
        openStatement(E, F, Insertable);
        FE.holdElements(FE.resolveKey(DRE->getDecl()), FE.tensorTuple(OCE->getArg(1)),
                     FE.TensorTuples);
        FE.I.endStatement();
      }
      return Done;
    }
    if (isOptionsType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS))
        FE.OptionVars[FE.key(DRE->getDecl())] = FE.args().options(OCE->getArg(1));
      return Done;
    }
    if (recordName(LHS->getType()) == "c10::Device") {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS))
        FE.DeviceVars[FE.key(DRE->getDecl())] = FE.args().device(OCE->getArg(1));
      return Done;
    }
    // Any other object that can hold a tensor (a tuple with an int, a
    // c10::optional, a struct) keeps what it is assigned, which the
    // analysis does not follow.
    if (!isTensorType(LHS->getType()) && mayHoldTensor(LHS->getType())) {
      const auto *DRE = dyn_cast<DeclRefExpr>(LHS);
      FE.I.totalsUnknown((DRE ? "'" + DRE->getDecl()->getName().str() + "'"
                              : std::string("an object")) +
                         " may keep the tensors it is assigned (line " +
                         std::to_string(FE.span(E->getSourceRange()).Line) + ")");
    }
  }
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S)) {
    const Expr *Obj = MCE->getImplicitObjectArgument();
    if (Obj && isTensorVectorType(Obj->getType())) {
      const auto *DRE = dyn_cast<DeclRefExpr>(strip(Obj));
      std::string Method = calleeName(MCE->getMethodDecl());
      std::string K = DRE ? FE.resolveKey(DRE->getDecl()) : "";
      auto It = DRE ? FE.TensorLists.find(K) : FE.TensorLists.end();
      // push_back / emplace_back of one tensor appends it; the vector
      // holds it from here on.
      if (It != FE.TensorLists.end() &&
          (Method == "push_back" || Method == "emplace_back") &&
          MCE->getNumArgs() == 1 && isTensorType(MCE->getArg(0)->getType())) {
        openStatement(E, F, Insertable);
        ValueId V = FE.tensor(MCE->getArg(0));
        size_t N = It->second.size();
        It->second.push_back(V);
        FE.holdElement(K, N, V);
        FE.I.endStatement();
        return Done;
      }
      if (It != FE.TensorLists.end() && Method == "reserve")
        return Done;
      // Anything else that changes the vector: its elements are no longer
      // the ones we recorded.
      if (DRE && (!MCE->getMethodDecl() || !MCE->getMethodDecl()->isConst()))
        FE.TensorLists.erase(K);
    }
  }
  // `p = &b;` retargets a pointer to a tensor.
  if (const auto *BO = dyn_cast<BinaryOperator>(S);
      BO && BO->getOpcode() == BO_Assign && BO->getType()->isPointerType() &&
      isTensorType(BO->getType()->getPointeeType())) {
    if (const auto *P = dyn_cast<DeclRefExpr>(strip(BO->getLHS()))) {
      Slot Target;
      Target.Known = false;
      Target.Display = "'*" + P->getDecl()->getName().str() + "'";
      Target.Why = "a tensor the analysis does not follow";
      if (const auto *UO = dyn_cast<UnaryOperator>(strip(BO->getRHS()));
          UO && UO->getOpcode() == UO_AddrOf)
        if (auto Sl = FE.slotOf(UO->getSubExpr()); Sl && Sl->Known) {
          Target = *Sl;
          FE.AddressTaken[Sl->Key] = Sl->Display;
        }
      if (const auto *Q = dyn_cast<DeclRefExpr>(strip(BO->getRHS())))
        if (auto It = FE.Pointers.find(FE.key(Q->getDecl())); It != FE.Pointers.end())
          Target = It->second;
      FE.Pointers[FE.key(P->getDecl())] = Target;
    }
    return Done;
  }
  if (const auto *DE = dyn_cast<CXXDeleteExpr>(S)) {
    // `delete p;` releases the heap handle p points to.
    if (const auto *P = dyn_cast<DeclRefExpr>(strip(DE->getArgument())))
      if (auto It = FE.Pointers.find(FE.key(P->getDecl()));
          It != FE.Pointers.end() && It->second.Known &&
          It->second.Key.rfind("heap@", 0) == 0) {
        openStatement(E, F, Insertable);
        FE.I.drop(It->second.Key);
        FE.I.endStatement();
        FE.Pointers.erase(It);
        return Done;
      }
    return Done;
  }
  if (const auto *CE = dyn_cast<CallExpr>(S)) {
    const FunctionDecl *Callee = CE->getDirectCallee();
    std::string QName = Callee ? Callee->getQualifiedNameAsString() : "";
    // std::swap(a, b) of two tensors swaps the handles.
    if (QName == "std::swap" && CE->getNumArgs() == 2 &&
        isTensorType(CE->getArg(0)->getType())) {
      auto A = FE.slotOf(CE->getArg(0)), B = FE.slotOf(CE->getArg(1));
      openStatement(E, F, Insertable);
      if (A && B && A->Known && B->Known) {
        ValueId VA = FE.readSlot(*A, CE->getArg(0)), VB = FE.readSlot(*B, CE->getArg(1));
        FE.assignSlot(*A, VB, FE.span(E->getSourceRange()),
                   FE.span(CE->getArg(0)->getSourceRange()));
        FE.assignSlot(*B, VA, FE.span(E->getSourceRange()),
                   FE.span(CE->getArg(1)->getSourceRange()));
      } else {
        for (auto *Sl : {&A, &B})
          if (*Sl && (*Sl)->Known)
            FE.forgetSlot((*Sl)->Key, (*Sl)->Display, "is swapped with a tensor "
                       "the analysis does not follow", FE.span(E->getSourceRange()));
      }
      FE.I.endStatement();
      return Done;
    }
  }
  // loss.backward(), opt.step(), opt.zero_grad() (Training.cpp).
  if (FE.training().trainingStatement(E, S, F, Insertable))
    return Done;
  if (isTensorType(S->getType())) {
    openStatement(E, F, Insertable);
    FE.tensor(S);
    FE.I.endStatement();
  } else if (isa<CUDAKernelCallExpr>(S)) {
    // A kernel launch: recorded by sideEffects (Effects.cpp), with the
    // tensors whose memory it is handed.
    openStatement(E, F, Insertable);
    FE.sideEffects(S);
    FE.I.endStatement();
  } else if (const auto *CE = dyn_cast<CallExpr>(S);
             CE && !isTensorVectorType(S->getType()) &&
             !isTensorTupleType(S->getType())) {
    // A call that returns no tensor (consume(a), std::cout << a): record
    // the use so checks know the tensors are still needed here.
    std::vector<ValueId> Inputs;
    bool HasTensorArgs = false;
    for (const Expr *A : CE->arguments())
      HasTensorArgs |= isTensorType(A->getType());
    const auto *MCE = dyn_cast<CXXMemberCallExpr>(CE);
    bool OnTensor = MCE && isTensorType(MCE->getImplicitObjectArgument()->getType());
    // A function of the project's own: its body says what it does.
    bool Followed = false;
    if (!OnTensor && FE.calls().followedDefinition(CE->getDirectCallee())) {
      openStatement(E, F, Insertable);
      Followed = FE.calls().followedEffects(CE);
      FE.I.endStatement();
    }
    if (!Followed && (HasTensorArgs || OnTensor || hasTensorWork(S))) {
      openStatement(E, F, Insertable);
      if (OnTensor)
        Inputs.push_back(FE.tensor(MCE->getImplicitObjectArgument()));
      for (const Expr *A : CE->arguments()) {
        if (isTensorType(A->getType()))
          Inputs.push_back(FE.tensor(A));
        else
          FE.sideEffects(A);
      }
      FE.opaqueCallEffects(CE);
      OpOutcome Use;
      Use.Kind = OpKind::Use;
      Use.ReadBytes = Use.WrittenBytes = 0;
      const FunctionDecl *Callee = CE->getDirectCallee();
      FE.apply(Callee ? calleeName(Callee) : "call", S, Inputs, Use);
      FE.I.endStatement();
    } else if (!Followed) {
      FE.opaqueCallEffects(CE);
    }
  } else if (hasTensorWork(S)) {
    openStatement(E, F, Insertable);
    FE.sideEffects(S);
    FE.I.endStatement();
  } else if (const auto *CE = dyn_cast<CallExpr>(S)) {
    FE.opaqueCallEffects(CE);
  }
  // A call that never returns: a throw (TORCH_CHECK's torchCheckFail,
  // a user's [[noreturn]] error helper) or the end of the program.
  if (const auto *CE = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *Callee = CE->getDirectCallee();
        Callee && Callee->isNoReturn()) {
      std::string QName = Callee->getQualifiedNameAsString();
      bool Exits = QName == "exit" || QName == "std::exit" ||
                   QName == "abort" || QName == "std::abort" ||
                   QName == "_Exit" || QName == "std::_Exit" ||
                   QName == "quick_exit" || QName == "std::quick_exit" ||
                   QName == "std::terminate";
      Done.K = Exits ? Completion::Return : Completion::Throw;
      Done.Where = E;
    }
  return Done;
}

/// Names assigned inside Body that were declared outside it get an unknown
/// value: after a branch or a loop they hold one of several values.

} // namespace tma
