// Expression statements: assignments (std::tie, vectors, tuples, options),
// vector mutators, pointer retargeting, delete, std::swap, calls returning
// no tensor (recorded as uses), throws and calls that never return.
#include "frontend/FunctionEvaluator.h"
#include "frontend/TrainingTracker.h"
#include "frontend/ArgumentReader.h"

using namespace clang;

namespace tma {

FunctionEvaluator::Completion FunctionEvaluator::expressionStatement(const Expr *E, Flow F,
                                                  bool Insertable) {
  const Expr *S = strip(E);
  Completion Done;
  // `(void)expr;` and `static_cast<void>(expr);` evaluate expr.
  while (const auto *Cast = dyn_cast<ExplicitCastExpr>(S)) {
    if (Cast->getCastKind() != CK_ToVoid)
      break;
    S = strip(Cast->getSubExpr());
  }
  if (const auto *TE = dyn_cast<CXXThrowExpr>(S)) {
    if (TE->getSubExpr() && hasTensorWork(TE->getSubExpr())) {
      openStatement(E, F, Insertable);
      sideEffects(TE->getSubExpr());
      I.endStatement();
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
      auto Tuple = tensorTuple(OCE->getArg(1));
      for (unsigned K = 0; K < Tie->getNumArgs(); ++K) {
        const Expr *Target = strip(Tie->getArg(K));
        ValueId V = Tuple && K < Tuple->size()
                        ? (*Tuple)[K]
                        : I.unknown("std::tie", "element not followed",
                                    span(E->getSourceRange()));
        std::optional<Slot> Sl = slotOf(Target);
        if (!Sl)
          if (const auto *DRE = dyn_cast<DeclRefExpr>(Target)) {
            Sl = Slot{};
            Sl->Key = resolveKey(DRE->getDecl());
            Sl->Display = DRE->getDecl()->getName().str();
          }
        if (Sl)
          assignSlot(*Sl, V, span(E->getSourceRange()),
                     span(Target->getSourceRange()));
      }
      I.endStatement();
      return Done;
    }
    if (isTensorVectorType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS)) {
        openStatement(E, F, Insertable);
        holdElements(resolveKey(DRE->getDecl()), tensorList(OCE->getArg(1)),
                     TensorLists);
        I.endStatement();
      }
      return Done;
    }
    if (isTensorTupleType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS)) {
        openStatement(E, F, Insertable);
        holdElements(resolveKey(DRE->getDecl()), tensorTuple(OCE->getArg(1)),
                     TensorTuples);
        I.endStatement();
      }
      return Done;
    }
    if (isOptionsType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS))
        OptionVars[key(DRE->getDecl())] = args().options(OCE->getArg(1));
      return Done;
    }
    if (recordName(LHS->getType()) == "c10::Device") {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS))
        DeviceVars[key(DRE->getDecl())] = args().device(OCE->getArg(1));
      return Done;
    }
  }
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S)) {
    const Expr *Obj = MCE->getImplicitObjectArgument();
    if (Obj && isTensorVectorType(Obj->getType())) {
      const auto *DRE = dyn_cast<DeclRefExpr>(strip(Obj));
      std::string Method = calleeName(MCE->getMethodDecl());
      std::string K = DRE ? resolveKey(DRE->getDecl()) : "";
      auto It = DRE ? TensorLists.find(K) : TensorLists.end();
      // push_back / emplace_back of one tensor appends it; the vector
      // holds it from here on.
      if (It != TensorLists.end() &&
          (Method == "push_back" || Method == "emplace_back") &&
          MCE->getNumArgs() == 1 && isTensorType(MCE->getArg(0)->getType())) {
        openStatement(E, F, Insertable);
        ValueId V = tensor(MCE->getArg(0));
        size_t N = It->second.size();
        It->second.push_back(V);
        I.hold(K + "#" + std::to_string(N), V);
        I.endStatement();
        return Done;
      }
      if (It != TensorLists.end() && Method == "reserve")
        return Done;
      // Anything else that changes the vector: its elements are no longer
      // the ones we recorded.
      if (DRE && (!MCE->getMethodDecl() || !MCE->getMethodDecl()->isConst()))
        TensorLists.erase(K);
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
        if (auto Sl = slotOf(UO->getSubExpr()); Sl && Sl->Known) {
          Target = *Sl;
          AddressTaken[Sl->Key] = Sl->Display;
        }
      if (const auto *Q = dyn_cast<DeclRefExpr>(strip(BO->getRHS())))
        if (auto It = Pointers.find(key(Q->getDecl())); It != Pointers.end())
          Target = It->second;
      Pointers[key(P->getDecl())] = Target;
    }
    return Done;
  }
  if (const auto *DE = dyn_cast<CXXDeleteExpr>(S)) {
    // `delete p;` releases the heap handle p points to.
    if (const auto *P = dyn_cast<DeclRefExpr>(strip(DE->getArgument())))
      if (auto It = Pointers.find(key(P->getDecl()));
          It != Pointers.end() && It->second.Known &&
          It->second.Key.rfind("heap@", 0) == 0) {
        openStatement(E, F, Insertable);
        I.drop(It->second.Key);
        I.endStatement();
        Pointers.erase(It);
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
      auto A = slotOf(CE->getArg(0)), B = slotOf(CE->getArg(1));
      openStatement(E, F, Insertable);
      if (A && B && A->Known && B->Known) {
        ValueId VA = readSlot(*A, CE->getArg(0)), VB = readSlot(*B, CE->getArg(1));
        assignSlot(*A, VB, span(E->getSourceRange()),
                   span(CE->getArg(0)->getSourceRange()));
        assignSlot(*B, VA, span(E->getSourceRange()),
                   span(CE->getArg(1)->getSourceRange()));
      } else {
        for (auto *Sl : {&A, &B})
          if (*Sl && (*Sl)->Known)
            forgetSlot((*Sl)->Key, (*Sl)->Display, "is swapped with a tensor "
                       "the analysis does not follow", span(E->getSourceRange()));
      }
      I.endStatement();
      return Done;
    }
  }
  // loss.backward(), opt.step(), opt.zero_grad() (Training.cpp).
  if (training().trainingStatement(E, S, F, Insertable))
    return Done;
  if (isTensorType(S->getType())) {
    openStatement(E, F, Insertable);
    tensor(S);
    I.endStatement();
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
    if (!OnTensor && followedDefinition(CE->getDirectCallee())) {
      openStatement(E, F, Insertable);
      Followed = followedEffects(CE);
      I.endStatement();
    }
    if (!Followed && (HasTensorArgs || OnTensor || hasTensorWork(S))) {
      openStatement(E, F, Insertable);
      if (OnTensor)
        Inputs.push_back(tensor(MCE->getImplicitObjectArgument()));
      for (const Expr *A : CE->arguments()) {
        if (isTensorType(A->getType()))
          Inputs.push_back(tensor(A));
        else
          sideEffects(A);
      }
      opaqueCallEffects(CE);
      OpOutcome Use;
      Use.Kind = OpKind::Use;
      Use.ReadBytes = Use.WrittenBytes = 0;
      const FunctionDecl *Callee = CE->getDirectCallee();
      apply(Callee ? calleeName(Callee) : "call", S, Inputs, Use);
      I.endStatement();
    } else if (!Followed) {
      opaqueCallEffects(CE);
    }
  } else if (hasTensorWork(S)) {
    openStatement(E, F, Insertable);
    sideEffects(S);
    I.endStatement();
  } else if (const auto *CE = dyn_cast<CallExpr>(S)) {
    opaqueCallEffects(CE);
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
