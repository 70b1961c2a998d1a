// Scans of a function body for frontend/Symbols.cpp (see SymbolScans.h):
//  1. MutationScan: the declarations the body may change after their
//     declaration, and where (a torch::nn holder's call forwards to the
//     module's forward; Sequential copies its inputs).
//  2. TuplePartScan: tuples changed in part (`p.second = y`).
//  3. checkedCondition: what TORCH_CHECK, if-throw and assert check on
//     every path that goes on.
#include "frontend/SymbolScans.h"
#include "frontend/TrainingTracker.h"

#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/Builtins.h"

using namespace clang;

namespace tma {

namespace {

/// The module's one forward a torch::nn holder's `fc(x)` runs, or null.
const FunctionDecl *holderForward(const CallExpr *CE, const FunctionDecl *FD) {
  const auto *OC = dyn_cast<CXXOperatorCallExpr>(CE);
  const auto *MD = dyn_cast<CXXMethodDecl>(FD);
  if (!OC || OC->getOperator() != OO_Call || !MD)
    return nullptr;
  const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(MD->getParent());
  if (!Spec || Spec->getQualifiedNameAsString() != "torch::nn::ModuleHolder")
    return nullptr;
  const CXXRecordDecl *Impl =
      Spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
  if (!Impl || !Impl->hasDefinition())
    return nullptr;
  const FunctionDecl *Forward = nullptr;
  for (const CXXMethodDecl *M : Impl->getDefinition()->methods())
    if (M->getIdentifier() && M->getName() == "forward") {
      if (Forward)
        return nullptr; // overloaded: which one runs is not read here
      Forward = M;
    }
  return Forward;
}

/// The declarations a function body may change after their declaration.
struct MutationScan : RecursiveASTVisitor<MutationScan> {
  std::set<const ValueDecl *> &Out;
  /// Where each is changed (the changing expression or declaration), when
  /// asked: evidence from a use before every change is still evidence
  /// about the caller's tensor (originalParameter).
  std::map<const ValueDecl *, std::vector<const Stmt *>> *Sites = nullptr;
  const Stmt *Site = nullptr;
  explicit MutationScan(std::set<const ValueDecl *> &Out,
                        std::map<const ValueDecl *, std::vector<const Stmt *>> *Sites = nullptr)
      : Out(Out), Sites(Sites) {}

  void mark(const Expr *E) {
    if (!E)
      return;
    E = E->IgnoreParenImpCasts();
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const auto *D = cast<ValueDecl>(DRE->getDecl()->getCanonicalDecl());
      Out.insert(D);
      if (Sites)
        (*Sites)[D].push_back(Site ? Site : E);
    } else if (const auto *ME = dyn_cast<MemberExpr>(E))
      mark(ME->getBase());
    else if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
      mark(ASE->getBase());
  }
  void markAt(const Stmt *At, const Expr *E) {
    Site = At;
    mark(E);
    Site = nullptr;
  }
  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->isAssignmentOp())
      markAt(BO, BO->getLHS());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf)
      mark(UO->getSubExpr());
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *OCE) {
    if (OCE->isAssignmentOp() && OCE->getNumArgs() >= 1)
      markAt(OCE, OCE->getArg(0));
    return true;
  }
  // In-place ops that change a tensor's geometry (x.unsqueeze_(0),
  // x.t_()): what the code says of x after them is not said of the
  // caller's x.
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *MC) {
    const CXXMethodDecl *MD = MC->getMethodDecl();
    if (!MD || !MD->getIdentifier() || !isTensorType(MC->getObjectType()))
      return true;
    if (changesGeometryInPlace(MD->getName()))
      mark(MC->getImplicitObjectArgument());
    return true;
  }
  // Bound to a non-const reference: a call or a reference may change it.
  void byReference(QualType ParamType, const Expr *Arg) {
    if (ParamType->isReferenceType() &&
        !ParamType->getPointeeType().isConstQualified())
      mark(Arg);
  }
  bool VisitCallExpr(CallExpr *CE) {
    const FunctionDecl *FD = CE->getDirectCallee();
    if (!FD) {
      for (const Expr *A : CE->arguments())
        if (A->isLValue())
          mark(A);
      return true;
    }
    unsigned Shift = isa<CXXOperatorCallExpr>(CE) && isa<CXXMethodDecl>(FD);
    // torch::autograd::Function<D>::apply(Args&&...) hands its arguments
    // to D::forward after the context: what forward takes may change.
    if (const CXXMethodDecl *Forward = TrainingTracker::customFunctionForward(FD)) {
      for (unsigned K = 0; K < CE->getNumArgs(); ++K)
        if (K + 1 < Forward->getNumParams())
          byReference(Forward->getParamDecl(K + 1)->getType(), CE->getArg(K));
        else if (CE->getArg(K)->isLValue())
          mark(CE->getArg(K));
      return true;
    }
    // A torch::nn holder's operator() forwards its arguments (Args&&...) to
    // the module's forward: what forward takes is what may change.
    if (const FunctionDecl *Forward = holderForward(CE, FD))
      FD = Forward;
    // SequentialImpl::forward(InputTypes&&...) copies its inputs into
    // AnyValues for its first module: the caller's variables stay bound.
    if (const auto *MD = dyn_cast<CXXMethodDecl>(FD);
        MD && MD->getIdentifier() && MD->getName() == "forward" &&
        MD->getParent()->getQualifiedNameAsString() ==
            "torch::nn::SequentialImpl")
      return true;
    for (unsigned K = Shift; K < CE->getNumArgs(); ++K)
      if (K - Shift < FD->getNumParams())
        byReference(FD->getParamDecl(K - Shift)->getType(), CE->getArg(K));
      else if (CE->getArg(K)->isLValue())
        mark(CE->getArg(K)); // a variadic argument: not followed
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *CE) {
    // A torch::nn holder forwards its arguments (Head&&, Tail&&...) to the
    // layer's constructor, which takes sizes and options by value.
    if (moduleLayer(CE->getType()))
      return true;
    const CXXConstructorDecl *C = CE->getConstructor();
    // A user module's holder (TORCH_MODULE(Block): ModuleHolder's
    // forwarding constructor, inherited) passes them on to the Impl's
    // constructor: what that takes is what may change.
    if (C->isInheritingConstructor())
      C = C->getInheritedConstructor().getConstructor();
    if (const auto *Holder = dyn_cast<ClassTemplateSpecializationDecl>(C->getParent());
        Holder && Holder->getQualifiedNameAsString() == "torch::nn::ModuleHolder" &&
        !C->isCopyOrMoveConstructor() && CE->getNumArgs() > 0) {
      const CXXConstructorDecl *Impl = nullptr;
      unsigned Fits = 0;
      if (const CXXRecordDecl *RD =
              Holder->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl())
        for (const CXXConstructorDecl *IC : RD->ctors())
          if (!IC->isCopyOrMoveConstructor() && !IC->isDeleted() &&
              IC->getMinRequiredArguments() <= CE->getNumArgs() &&
              CE->getNumArgs() <= IC->getNumParams()) {
            Impl = IC;
            ++Fits;
          }
      if (Fits != 1) {
        for (const Expr *A : CE->arguments())
          if (A->isLValue())
            mark(A);
        return true;
      }
      C = Impl;
    }
    for (unsigned K = 0; K < CE->getNumArgs() && K < C->getNumParams(); ++K)
      byReference(C->getParamDecl(K)->getType(), CE->getArg(K));
    return true;
  }
  bool VisitVarDecl(VarDecl *VD) {
    if (VD->hasInit())
      byReference(VD->getType(), VD->getInit());
    return true;
  }
  bool VisitLambdaExpr(LambdaExpr *LE) {
    // A by-reference capture may be changed by the lambda, called anywhere.
    for (const LambdaCapture &C : LE->captures())
      if (C.capturesVariable() && C.getCaptureKind() == LCK_ByRef)
        if (const auto *V = dyn_cast<ValueDecl>(C.getCapturedVar()))
          Out.insert(cast<ValueDecl>(V->getCanonicalDecl()));
    return true;
  }
};

/// Whether S, run, always leaves by an exception or a call that does not
/// return: the body of TORCH_CHECK's `if`, or `{ throw ...; }`.
bool alwaysThrows(const Stmt *S) {
  if (!S)
    return false;
  if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
    for (const Stmt *Child : CS->body())
      if (alwaysThrows(Child))
        return true;
    return false;
  }
  const auto *E = dyn_cast<Expr>(S);
  if (!E)
    return false;
  E = E->IgnoreParenImpCasts();
  if (const auto *FE = dyn_cast<FullExpr>(E))
    E = FE->getSubExpr()->IgnoreParenImpCasts();
  if (isa<CXXThrowExpr>(E))
    return true;
  if (const auto *CE = dyn_cast<CallExpr>(E))
    if (const FunctionDecl *FD = CE->getDirectCallee())
      return FD->isNoReturn();
  return false;
}

/// Tuples, pairs and structs of tensors changed other than by a whole
/// assignment (`p = f(x)` is followed, holdElements): through a member
/// (`p.second = y`), std::get (`std::get<1>(q) = y`), a non-const
/// reference or pointer, a by-reference capture, or an in-place change of
/// an element's geometry. Reading std::get (which takes the tuple by
/// reference) is no change.
struct TuplePartScan : RecursiveASTVisitor<TuplePartScan> {
  const SourceManager &SM;
  std::map<const ValueDecl *, unsigned> &Out;
  TuplePartScan(const SourceManager &SM, std::map<const ValueDecl *, unsigned> &Out)
      : SM(SM), Out(Out) {}

  static bool isStdGet(const CallExpr *CE) {
    const FunctionDecl *F = CE->getDirectCallee();
    return F && CE->getNumArgs() == 1 && F->getQualifiedNameAsString() == "std::get";
  }
  /// The tuple local E is or reaches into (p, p.first, std::get<1>(p)).
  static const ValueDecl *tupleOf(const Expr *E) {
    E = strip(E);
    if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E))
      return isTensorTupleType(DRE->getDecl()->getType())
                 ? cast<ValueDecl>(DRE->getDecl()->getCanonicalDecl())
                 : nullptr;
    if (const auto *ME = dyn_cast_or_null<MemberExpr>(E))
      return tupleOf(ME->getBase());
    if (const auto *CE = dyn_cast_or_null<CallExpr>(E); CE && isStdGet(CE))
      return tupleOf(CE->getArg(0));
    return nullptr;
  }
  /// D changes at Where; the first line is kept.
  void record(const ValueDecl *D, SourceLocation Where) {
    unsigned Line = SM.getExpansionLineNumber(Where);
    auto [It, New] = Out.emplace(D, Line);
    if (!New)
      It->second = std::min(It->second, Line);
  }
  void mark(const Stmt *At, const Expr *E) {
    if (const ValueDecl *D = tupleOf(E))
      record(D, At->getBeginLoc());
  }
  /// An assignment to Target: a change in part unless Target is the
  /// tuple itself.
  void assigned(const Stmt *At, const Expr *Target) {
    if (!isa_and_nonnull<DeclRefExpr>(strip(Target)))
      mark(At, Target);
  }
  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->isAssignmentOp())
      assigned(BO, BO->getLHS());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->getOpcode() == UO_AddrOf)
      mark(UO, UO->getSubExpr());
    return true;
  }
  bool VisitVarDecl(VarDecl *VD) {
    QualType T = VD->getType();
    if (VD->hasInit() && T->isReferenceType() && !T->getPointeeType().isConstQualified())
      mark(VD->getInit(), VD->getInit());
    return true;
  }
  /// `std::tie(out, state) = ...` assigns each named tuple as a whole.
  std::set<const Expr *> AssignedTies;
  bool VisitCallExpr(CallExpr *CE) {
    if (isStdGet(CE) || AssignedTies.count(CE))
      return true;
    const auto *OCE = dyn_cast<CXXOperatorCallExpr>(CE);
    if (OCE && OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2) {
      if (const auto *Tie = dyn_cast_or_null<CallExpr>(strip(OCE->getArg(0)));
          Tie && Tie->getDirectCallee() &&
          Tie->getDirectCallee()->getQualifiedNameAsString() == "std::tie")
        AssignedTies.insert(Tie);
      assigned(OCE, OCE->getArg(0));
      return true;
    }
    const FunctionDecl *FD = CE->getDirectCallee();
    unsigned Shift = OCE && FD && isa<CXXMethodDecl>(FD);
    for (unsigned K = Shift; K < CE->getNumArgs(); ++K) {
      const Expr *A = CE->getArg(K);
      if (!FD || K - Shift >= FD->getNumParams()) {
        if (A->isLValue())
          mark(CE, A);
        continue;
      }
      QualType PT = FD->getParamDecl(K - Shift)->getType();
      if ((PT->isReferenceType() && !PT->getPointeeType().isConstQualified()) ||
          PT->isPointerType())
        mark(CE, A);
    }
    return true;
  }
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *MC) {
    const CXXMethodDecl *MD = MC->getMethodDecl();
    const Expr *Obj = MC->getImplicitObjectArgument();
    if (!MD || !Obj || !tupleOf(Obj))
      return true;
    if (isTensorType(Obj->getType())
            ? MD->getIdentifier() && changesGeometryInPlace(MD->getName())
            : !MD->isConst())
      mark(MC, Obj);
    return true;
  }
  bool VisitLambdaExpr(LambdaExpr *LE) {
    for (const LambdaCapture &C : LE->captures())
      if (C.capturesVariable() && C.getCaptureKind() == LCK_ByRef)
        if (const auto *V = dyn_cast<VarDecl>(C.getCapturedVar());
            V && isTensorTupleType(V->getType()))
          record(cast<ValueDecl>(V->getCanonicalDecl()), LE->getBeginLoc());
    return true;
  }
};

} // namespace

const Expr *ignoreCastsAndParens(const Expr *E) {
  while (E) {
    E = E->IgnoreParens();
    if (const auto *FE = dyn_cast<FullExpr>(E)) {
      E = FE->getSubExpr();
      continue;
    }
    if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(E)) {
      E = MT->getSubExpr();
      continue;
    }
    if (const auto *CE = dyn_cast<CastExpr>(E);
        CE && (isa<ImplicitCastExpr>(CE) || isa<CXXStaticCastExpr>(CE) ||
               isa<CXXFunctionalCastExpr>(CE) || isa<CStyleCastExpr>(CE)) &&
        (CE->getType()->isIntegralOrEnumerationType() ||
         CE->getType()->isBooleanType())) {
      E = CE->getSubExpr();
      continue;
    }
    return E;
  }
  return E;
}

const ParmVarDecl *parameterNamed(const Expr *E) {
  // The object of a TensorBase method is the name converted to its base.
  const auto *DRE =
      dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
  return DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
}

const ParmVarDecl *
unchangedTensorParameter(const Expr *E,
                         const std::set<const ValueDecl *> &Mutated) {
  const ParmVarDecl *P = parameterNamed(E);
  if (!P || !P->getIdentifier() || !isTensorType(P->getType()) ||
      Mutated.count(cast<ValueDecl>(P->getCanonicalDecl())))
    return nullptr;
  return P;
}

const ParmVarDecl *
parameterSizes(const Expr *E, const std::set<const ValueDecl *> &Mutated,
               int Depth) {
  auto Strip = [](const Expr *X) {
    X = ignoreCastsAndParens(X);
    return X ? X->IgnoreParenImpCasts() : nullptr;
  };
  E = E ? Strip(E) : nullptr;
  while (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(E)) {
    if (CE->getNumArgs() != 1) // the ArrayRef's copy
      return nullptr;
    E = Strip(CE->getArg(0));
  }
  if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(E)) {
    if (!MC->getMethodDecl() || !MC->getMethodDecl()->getIdentifier() ||
        MC->getMethodDecl()->getName() != "sizes" || MC->getNumArgs() != 0)
      return nullptr;
    return unchangedTensorParameter(MC->getImplicitObjectArgument(), Mutated);
  }
  const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || isa<ParmVarDecl>(VD) || Depth > 0 ||
      Mutated.count(cast<ValueDecl>(VD->getCanonicalDecl())) ||
      recordName(VD->getType().getNonReferenceType()) != "c10::ArrayRef")
    return nullptr;
  return parameterSizes(VD->getInit(), Mutated, Depth + 1);
}

const Expr *unwrapExpect(const Expr *E) {
  E = ignoreCastsAndParens(E);
  if (const auto *CE = dyn_cast_or_null<CallExpr>(E))
    if (CE->getBuiltinCallee() == Builtin::BI__builtin_expect &&
        CE->getNumArgs() == 2)
      return unwrapExpect(CE->getArg(0));
  return E;
}

std::optional<std::pair<const Expr *, bool>>
checkedCondition(const Stmt *S) {
  if (const auto *IS = dyn_cast<IfStmt>(S)) {
    if (IS->getInit() || IS->getConditionVariable() || IS->isConstexpr())
      return std::nullopt;
    if (alwaysThrows(IS->getThen()) && !IS->getElse())
      return std::make_pair(IS->getCond(), false);
    return std::nullopt;
  }
  const auto *E = dyn_cast<Expr>(S);
  if (!E)
    return std::nullopt;
  E = ignoreCastsAndParens(E);
  if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
    // assert(c): `static_cast<bool>(c) ? void(0) : __assert_fail(...)`.
    if (alwaysThrows(CO->getFalseExpr()) && !alwaysThrows(CO->getTrueExpr()))
      return std::make_pair(CO->getCond(), true);
    if (alwaysThrows(CO->getTrueExpr()) && !alwaysThrows(CO->getFalseExpr()))
      return std::make_pair(CO->getCond(), false);
  }
  return std::nullopt;
}

void scanMutations(const Stmt *Body, std::set<const ValueDecl *> &Out,
                   MutationSites *Sites) {
  MutationScan(Out, Sites).TraverseStmt(const_cast<Stmt *>(Body));
}

/// Whether Body has a label (a goto may run what follows it again).
static bool hasLabel(const Stmt *Body) {
  struct Labels : RecursiveASTVisitor<Labels> {
    bool Found = false;
    bool VisitLabelStmt(LabelStmt *) {
      Found = true;
      return false;
    }
  } L;
  L.TraverseStmt(const_cast<Stmt *>(Body));
  return L.Found;
}

std::set<const ParmVarDecl *>
parametersOnlyReassigned(const Stmt *Body, const MutationSites &Sites) {
  std::set<const ParmVarDecl *> Out;
  if (!Body)
    return Out;
  // A goto back to a label is a loop the parent chain does not show.
  if (hasLabel(Body))
    return Out;
  ParentMap Parents(const_cast<Stmt *>(Body));
  auto InLoop = [&](const Stmt *S) {
    for (const Stmt *P = Parents.getParent(S); P; P = Parents.getParent(P))
      if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt, LambdaExpr>(P))
        return true;
    return false;
  };
  for (const auto &[D, Where] : Sites) {
    const auto *P = dyn_cast<ParmVarDecl>(D);
    if (!P || !isTensorType(P->getType()) || P->getType()->isReferenceType())
      continue;
    bool Whole = !Where.empty();
    for (const Stmt *S : Where) {
      const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S);
      Whole = Whole && OCE && OCE->getOperator() == OO_Equal &&
              OCE->getNumArgs() == 2 &&
              parameterNamed(OCE->getArg(0)) == P && !InLoop(S);
    }
    if (Whole)
      Out.insert(P);
  }
  return Out;
}

std::set<const VarDecl *> integersAssignedOnce(const Stmt *Body,
                                               const MutationSites &Sites) {
  std::set<const VarDecl *> Out;
  const auto *CS = dyn_cast_or_null<CompoundStmt>(Body);
  if (!CS)
    return Out;
  std::set<const Stmt *> TopLevel(CS->body_begin(), CS->body_end());
  for (const auto &[D, Where] : Sites) {
    const auto *VD = dyn_cast<VarDecl>(D);
    if (!VD || isa<ParmVarDecl>(VD) || VD->hasInit() || !VD->hasLocalStorage() ||
        !VD->getType()->isIntegerType() || VD->getType()->isBooleanType() ||
        Where.size() != 1)
      continue;
    const auto *BO = dyn_cast<BinaryOperator>(Where.front());
    if (BO && BO->getOpcode() == BO_Assign && TopLevel.count(BO))
      if (const auto *DRE = dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts());
          DRE && DRE->getDecl()->getCanonicalDecl() == VD->getCanonicalDecl())
        Out.insert(cast<VarDecl>(VD->getCanonicalDecl()));
  }
  return Out;
}

bool namesOneValue(const FunctionDecl &FD, const VarDecl *VD) {
  struct Others : RecursiveASTVisitor<Others> {
    const VarDecl *VD;
    bool Found = false;
    bool VisitVarDecl(VarDecl *D) {
      if (D != VD && D->getIdentifier() && D->getName() == VD->getName())
        Found = true;
      return !Found;
    }
    bool VisitBindingDecl(BindingDecl *D) {
      if (D->getIdentifier() && D->getName() == VD->getName())
        Found = true;
      return !Found;
    }
  } Scan;
  Scan.VD = VD;
  for (const ParmVarDecl *P : FD.parameters())
    if (P != VD && P->getIdentifier() && P->getName() == VD->getName())
      return false;
  if (!FD.getBody())
    return true;
  Scan.TraverseStmt(FD.getBody());
  return !Scan.Found && !hasLabel(FD.getBody());
}

bool isIntegerListType(QualType T) {
  T = T.getNonReferenceType().getCanonicalType();
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(
      T->getAsCXXRecordDecl());
  if (!Spec || Spec->getTemplateArgs().size() < 1 ||
      Spec->getTemplateArgs()[0].getKind() != TemplateArgument::Type)
    return false;
  std::string Name = Spec->getQualifiedNameAsString();
  if (Name != "std::vector" && Name != "c10::ArrayRef" && Name != "c10::SmallVector")
    return false;
  QualType Elem = Spec->getTemplateArgs()[0].getAsType();
  return Elem->isIntegerType() && !Elem->isBooleanType();
}

bool listNeverChanged(const Stmt *Body, const VarDecl *VD) {
  if (!Body || !VD)
    return false;
  struct Uses : RecursiveASTVisitor<Uses> {
    const VarDecl *VD;
    std::vector<const DeclRefExpr *> Found;
    bool VisitDeclRefExpr(DeclRefExpr *DRE) {
      if (DRE->getDecl()->getCanonicalDecl() == VD->getCanonicalDecl())
        Found.push_back(DRE);
      return true;
    }
  } U;
  U.VD = VD;
  U.TraverseStmt(const_cast<Stmt *>(Body));
  ParentMap Parents(const_cast<Stmt *>(Body));
  auto Up = [&](const Stmt *S) {
    const Stmt *P = Parents.getParent(S);
    while (P && (isa<ImplicitCastExpr>(P) || isa<ParenExpr>(P)))
      P = Parents.getParent(P);
    return P;
  };
  auto Same = [](const Expr *A, const Stmt *B) {
    return A->IgnoreParenImpCasts() == B;
  };
  // Bound to parameter type T: a read unless T is a non-const reference.
  auto ReadsAs = [](QualType T) {
    return !T->isReferenceType() || T->getPointeeType().isConstQualified();
  };
  // A read of E (the list, or an element of it) in its parent P.
  auto Reads = [&](const Stmt *E, const Stmt *P) -> bool {
    if (!P)
      return false;
    if (isa<ReturnStmt>(P))
      return true;
    if (const auto *CE = dyn_cast<CXXConstructExpr>(P)) {
      const CXXConstructorDecl *C = CE->getConstructor();
      for (unsigned K = 0; K < CE->getNumArgs(); ++K)
        if (Same(CE->getArg(K), E))
          return K < C->getNumParams() && ReadsAs(C->getParamDecl(K)->getType());
      return false;
    }
    if (const auto *Call = dyn_cast<CallExpr>(P)) {
      const FunctionDecl *F = Call->getDirectCallee();
      if (!F)
        return false;
      unsigned Shift = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(F);
      for (unsigned K = 0; K < Call->getNumArgs(); ++K) {
        if (!Same(Call->getArg(K), E))
          continue;
        if (K < Shift) // the object of a member operator
          return cast<CXXMethodDecl>(F)->isConst();
        return K - Shift < F->getNumParams() &&
               ReadsAs(F->getParamDecl(K - Shift)->getType());
      }
      return false;
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(P))
      return !BO->isAssignmentOp() || BO->getRHS()->IgnoreParenImpCasts() == E;
    if (const auto *UO = dyn_cast<UnaryOperator>(P))
      return !UO->isIncrementDecrementOp() && UO->getOpcode() != UO_AddrOf;
    return false;
  };
  for (const DeclRefExpr *DRE : U.Found) {
    const Stmt *P = Up(DRE);
    // s.size(): a const method; s[k]: an element, read or written.
    if (const auto *ME = dyn_cast_or_null<MemberExpr>(P)) {
      const auto *MD = dyn_cast<CXXMethodDecl>(ME->getMemberDecl());
      const auto *Call = dyn_cast_or_null<CXXMemberCallExpr>(Up(ME));
      if (!MD || !Call || !MD->isConst())
        return false;
      continue;
    }
    if (const auto *OCE = dyn_cast_or_null<CXXOperatorCallExpr>(P);
        OCE && OCE->getOperator() == OO_Subscript && OCE->getNumArgs() == 2 &&
        Same(OCE->getArg(0), DRE)) {
      const Stmt *Outer = Up(OCE);
      // An element converted to a value is read; one bound elsewhere may
      // be written.
      const Stmt *Direct = Parents.getParent(OCE);
      if (const auto *IC = dyn_cast_or_null<ImplicitCastExpr>(Direct);
          IC && IC->getCastKind() == CK_LValueToRValue)
        continue;
      if (!Reads(OCE, Outer))
        return false;
      continue;
    }
    if (!Reads(DRE, P))
      return false;
  }
  return true;
}

void scanTuplesChangedInPart(const SourceManager &SM, const Stmt *Body,
                             std::map<const ValueDecl *, unsigned> &Out) {
  TuplePartScan(SM, Out).TraverseStmt(const_cast<Stmt *>(Body));
}

void collectMutations(const Stmt *Body, std::set<const ValueDecl *> &Out) {
  MutationScan(Out).TraverseStmt(const_cast<Stmt *>(Body));
}

} // namespace tma
