// Symbols: what a function's inputs are, as sizes. Tensor parameters get
// one symbol per dimension (`x.size(0)`), integer parameters a symbol of
// their own (`n_heads`), integer locals the value they were initialised
// with; facts the code checks (TORCH_CHECK, TORCH_INTERNAL_ASSERT, assert,
// `if (...) throw`) go into the function's ShapeEnv.
//
// Design (../shared/design/symbolic.md):
// - A symbol names the parameter's value on entry: `x.size(0)` means the
//   size of the tensor the caller passed, whatever x holds later. So the
//   size of the name x at a later line is read from x's current value,
//   never from the symbol.
// - Rank comes from exact evidence: a top-level check (`TORCH_CHECK(x.dim()
//   == 4)`), or an op that throws on any other rank (permute, mm, bmm,
//   embedding's weight) applied to the parameter or to what rank-keeping
//   ops made of it (`x.unfold(2, 3, 1).permute({...})`). The largest
//   dimension the code reads is no rank (code that reads x.size(1) runs on
//   a 4-d x too); a parameter of unknown rank still has its sizes as
//   symbols (`x.size(1)`) while its name holds it, and its element count
//   `x.numel()`, so a view of it to a full shape is answered. A parameter
//   the code assigns to gets evidence from checks only: its later uses may
//   be of another tensor.
// - The defaults PyTorch itself makes are stated once per parameter: it is
//   contiguous and owns its storage exactly.
// - An integer variable has a value only when nothing in the function can
//   change it after its declaration (no assignment, increment, address or
//   non-const reference): then its initializer is its value everywhere it
//   is in scope, in every iteration of any loop. Anything else is unknown.
// - Facts are learned only from checks that run on every path (not inside
//   a branch or a loop), and only for comparisons of sizes the analysis
//   can express; anything else in a check is ignored, never guessed.
#include "frontend/FunctionEvaluator.h"
#include "model/Decide.h"
#include "model/ShapeEnv.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/Builtins.h"
#include "llvm/ADT/ScopeExit.h"

#include <functional>

using namespace clang;

namespace tma {

namespace {

/// The declarations a function body may change after their declaration.
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

/// The parameter a (stripped) expression names, or null.
const ParmVarDecl *parameterNamed(const Expr *E) {
  // The object of a TensorBase method is the name converted to its base.
  const auto *DRE =
      dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
  return DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
}

/// The tensor parameter E names, when the body never changes which tensor
/// it holds (so what the code says of it is said of the caller's tensor).
const ParmVarDecl *
unchangedTensorParameter(const Expr *E,
                         const std::set<const ValueDecl *> &Mutated) {
  const ParmVarDecl *P = parameterNamed(E);
  if (!P || !P->getIdentifier() || !isTensorType(P->getType()) ||
      Mutated.count(cast<ValueDecl>(P->getCanonicalDecl())))
    return nullptr;
  return P;
}

/// The unchanged tensor parameter whose sizes() the list E is: `x.sizes()`
/// itself, or a local IntArrayRef the body never changes, initialised with
/// it (`auto sizes = x.sizes();`). Null otherwise.
const ParmVarDecl *
parameterSizes(const Expr *E, const std::set<const ValueDecl *> &Mutated,
               int Depth = 0) {
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

/// `__builtin_expect(c, 0)` (C10_UNLIKELY) is c.
const Expr *unwrapExpect(const Expr *E) {
  E = ignoreCastsAndParens(E);
  if (const auto *CE = dyn_cast_or_null<CallExpr>(E))
    if (CE->getBuiltinCallee() == Builtin::BI__builtin_expect &&
        CE->getNumArgs() == 2)
      return unwrapExpect(CE->getArg(0));
  return E;
}

} // namespace

/// The condition a statement checks on every path that goes on, with
/// whether it must hold (true) or must fail (false) there: TORCH_CHECK and
/// if-throw (`if (!(c)) throw`), assert and AT_ASSERT's conditional.
static std::optional<std::pair<const Expr *, bool>>
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

namespace {

/// What the code says about a tensor parameter's rank and dtype.
struct ParameterEvidence {
  std::optional<int64_t> ExactRank; // a check, a permute, mm / bmm
  bool RankConflict = false;        // two uses need different ranks
  bool Transposed = false;          // x.t(): 2-d, or t() is the identity
  /// x is the input of a layer's forward: the rank the layer documents
  /// for a batch (Linear: (N, in_features)), and the layer.
  std::optional<int64_t> LayerRank;
  std::string Layer;
  std::optional<DType> Type;        // a top-level dtype check
  /// Bounds uses prove: `x.size(2)` throws unless x has at least 3 dims,
  /// an expand to 3 sizes of something with at least x's dims throws
  /// unless x has at most 3. Equal bounds are an exact rank.
  std::optional<int64_t> AtLeast, AtMost;
  /// Some of the exact evidence or bounds come from a use in an arm of a
  /// branch, which may not run: the rank is then stated, not proved.
  bool OnSomePaths = false;
};

/// The definition of a call the analysis follows into (a function of the
/// file), or null.
using FollowedCallee = std::function<const FunctionDecl *(const FunctionDecl *)>;

struct EvidenceScan : RecursiveASTVisitor<EvidenceScan> {
  ASTContext &Ctx;
  std::map<const ParmVarDecl *, ParameterEvidence> &Out;
  const std::set<const ValueDecl *> &Mutated;
  const std::map<const ValueDecl *, std::vector<const Stmt *>> &Sites;
  const FollowedCallee &Followed;
  /// The scans of helpers: those open (this function's included; a
  /// recursive call adds nothing) and those done (each helper is scanned
  /// once, however many calls reach it).
  struct Helpers {
    std::set<const FunctionDecl *> Open;
    std::map<const FunctionDecl *, std::map<const ParmVarDecl *, ParameterEvidence>> Done;
  };
  Helpers &Scans;
  /// Inside an arm of an if, a switch or a ?: (evidence there holds on
  /// the paths through it only).
  unsigned Conditional = 0;
  EvidenceScan(ASTContext &Ctx, std::map<const ParmVarDecl *, ParameterEvidence> &Out,
               const std::set<const ValueDecl *> &Mutated,
               const std::map<const ValueDecl *, std::vector<const Stmt *>> &Sites,
               const FollowedCallee &Followed, Helpers &Scans)
      : Ctx(Ctx), Out(Out), Mutated(Mutated), Sites(Sites), Followed(Followed),
        Scans(Scans) {}

  /// A helper of the file called with a parameter (`encode(x)`, whose x
  /// goes into a Linear): what the helper's uses require of its parameter
  /// they require of the caller's tensor, which the call hands over.
  void calleeEvidence(const FunctionDecl *Callee,
                      llvm::ArrayRef<const Expr *> Args) {
    const FunctionDecl *Def = Followed(Callee);
    // Three helpers deep is as far as evidence is looked for.
    if (!Def || !Def->getBody() || Scans.Open.count(Def) || Scans.Open.size() > 3)
      return;
    auto Found = Scans.Done.find(Def);
    if (Found == Scans.Done.end()) {
      std::map<const ParmVarDecl *, ParameterEvidence> Inner;
      std::set<const ValueDecl *> InnerMutated;
      std::map<const ValueDecl *, std::vector<const Stmt *>> InnerSites;
      Stmt *Body = Def->getBody();
      MutationScan(InnerMutated, &InnerSites).TraverseStmt(Body);
      Scans.Open.insert(Def);
      EvidenceScan(Ctx, Inner, InnerMutated, InnerSites, Followed, Scans)
          .TraverseStmt(Body);
      Scans.Open.erase(Def);
      Found = Scans.Done.emplace(Def, std::move(Inner)).first;
    }
    const auto &Inner = Found->second;
    for (unsigned K = 0; K < Args.size() && K < Def->getNumParams(); ++K) {
      auto It = Inner.find(Def->getParamDecl(K));
      if (It == Inner.end() || isDefaultArg(Args[K]))
        continue;
      const ParameterEvidence &Ev = It->second;
      unsigned Outside = Conditional;
      Conditional += Ev.OnSomePaths;
      auto Restore = llvm::make_scope_exit([&] { Conditional = Outside; });
      if (Ev.ExactRank && !Ev.RankConflict) {
        exactRank(Args[K], *Ev.ExactRank);
        continue;
      }
      // Its bounds bound the argument.
      if (Ev.AtLeast)
        atLeast(Args[K], *Ev.AtLeast);
      if (Ev.AtMost)
        atMost(Args[K], *Ev.AtMost);
      // The parameter, its copy (a by-value argument) or a tensor of its
      // rank computed from it (`encode(x.to(kFloat))`).
      auto Root = rankRoot(Args[K]);
      if (!Root || Root->second != 0)
        continue;
      const ParmVarDecl *P = Root->first;
      if (Ev.LayerRank && !Out[P].LayerRank) {
        Out[P].LayerRank = Ev.LayerRank;
        Out[P].Layer = Ev.Layer;
      }
      if (Ev.Transposed)
        Out[P].Transposed = true;
    }
  }

  /// The tensor parameter E names, holding the caller's tensor there: the
  /// body never changes it, or E comes before every change in the source
  /// (`x = layer1->forward(x)`: the x read is the caller's, on the first
  /// run of any loop around it too). What a use then requires (a rank)
  /// the caller's tensor must have, or LibTorch throws.
  const ParmVarDecl *unchanged(const Expr *E) {
    if (const ParmVarDecl *P = unchangedTensorParameter(E, Mutated))
      return P;
    const ParmVarDecl *P = parameterNamed(E);
    if (!P || !P->getIdentifier() || !isTensorType(P->getType()))
      return nullptr;
    auto It = Sites.find(cast<ValueDecl>(P->getCanonicalDecl()));
    if (It == Sites.end())
      return nullptr;
    const SourceManager &SM = Ctx.getSourceManager();
    SourceLocation Use = E->getBeginLoc();
    if (Use.isMacroID())
      return nullptr;
    for (const Stmt *Site : It->second) {
      SourceLocation Begin = Site->getBeginLoc();
      if (Begin.isMacroID() || Site->getEndLoc().isMacroID())
        return nullptr;
      // The right-hand side of the assignment that changes it: read first.
      const Expr *RHS = nullptr;
      if (const auto *BO = dyn_cast<BinaryOperator>(Site);
          BO && BO->getOpcode() == BO_Assign)
        RHS = BO->getRHS();
      else if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(Site);
               OC && OC->getOperator() == OO_Equal && OC->getNumArgs() == 2)
        RHS = OC->getArg(1);
      if (RHS && !SM.isBeforeInTranslationUnit(Use, RHS->getBeginLoc()) &&
          !SM.isBeforeInTranslationUnit(RHS->getEndLoc(), Use))
        continue;
      if (!SM.isBeforeInTranslationUnit(Use, Begin))
        return nullptr;
    }
    return P;
  }
  /// The unchanged tensor parameter E is computed from by ops whose result
  /// rank is the input's plus a fixed amount (`a.to(kFloat)`: 0,
  /// `x.unfold(2, 3, 1)`: +1), through locals nothing changes after their
  /// initialiser; with that amount. So `auto a32 = a.to(kFloat); a32.mm(b)`
  /// fixes a's rank as `a.mm(b)` would.
  std::optional<std::pair<const ParmVarDecl *, int64_t>>
  rankRoot(const Expr *E, int Depth = 0) {
    if (!E || Depth > 16)
      return std::nullopt;
    E = strip(E);
    // A copy of a tensor (the copy constructor) is the tensor.
    if (const auto *CE = dyn_cast<CXXConstructExpr>(E);
        CE && CE->getNumArgs() == 1 && isTensorType(CE->getType()))
      return rankRoot(CE->getArg(0), Depth + 1);
    if (const ParmVarDecl *P = unchanged(E))
      return std::make_pair(P, int64_t(0));
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const Expr *Init = unchangedLocalInit(DRE);
      return Init ? rankRoot(Init, Depth + 1) : std::nullopt;
    }
    const auto *MC = dyn_cast<CXXMemberCallExpr>(E);
    const CXXMethodDecl *MD = MC ? MC->getMethodDecl() : nullptr;
    if (!MD || !MD->getIdentifier() || !isTensorType(MC->getType()))
      return std::nullopt;
    std::optional<int64_t> Delta = rankDelta(MD->getName());
    if (!Delta)
      return std::nullopt;
    auto Root = rankRoot(MC->getImplicitObjectArgument(), Depth + 1);
    if (!Root)
      return std::nullopt;
    Root->second += *Delta;
    return Root;
  }
  /// The initialiser of the tensor local DRE names, when nothing changes
  /// the local after it (so the local is its initialiser); else null.
  const Expr *unchangedLocalInit(const DeclRefExpr *DRE) const {
    const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
    if (!V || isa<ParmVarDecl>(V) || !V->hasLocalStorage() ||
        V->getType()->isReferenceType() || !isTensorType(V->getType()) ||
        Mutated.count(cast<ValueDecl>(V->getCanonicalDecl())))
      return nullptr;
    return V->getInit();
  }
  /// The dims a method's result has more than its input, for methods where
  /// that is a fixed amount.
  static std::optional<int64_t> rankDelta(StringRef N) {
    // Conversions, copies and views that keep every dimension.
    if (N == "to" || N == "contiguous" || N == "clone" || N == "detach" ||
        N == "float" || N == "double" || N == "half" || N == "bfloat16" ||
        N == "cpu" || N == "cuda" || N == "transpose" || N == "narrow" ||
        N == "abs" || N == "neg" || N == "exp" || N == "relu" ||
        N == "sigmoid" || N == "tanh" || N == "softmax" ||
        N == "log_softmax")
      return 0;
    if (N == "unfold" || N == "unsqueeze")
      return 1;
    return std::nullopt;
  }
  /// Parameters E has at least the dimensions of, plus an amount:
  /// rank(E) >= rank(P) + amount for each (P, amount). Exact chains
  /// (rankRoot) and, on top of them, broadcasting ops (their result has
  /// the most dims of their operands), one-dim reductions (one fewer) and
  /// unsqueeze (one more), through locals nothing changes.
  std::vector<std::pair<const ParmVarDecl *, int64_t>>
  lowerRoots(const Expr *E, int Depth = 0) {
    std::vector<std::pair<const ParmVarDecl *, int64_t>> Out;
    if (!E || Depth > 24 || !isTensorType(E->getType()))
      return Out;
    if (auto Root = rankRoot(E)) {
      Out.push_back(*Root);
      return Out;
    }
    E = strip(E);
    auto Add = [&](const Expr *X, int64_t Delta) {
      for (auto [P, D] : lowerRoots(X, Depth + 1))
        Out.push_back({P, D + Delta});
    };
    if (const auto *CE = dyn_cast<CXXConstructExpr>(E);
        CE && CE->getNumArgs() == 1) {
      Add(CE->getArg(0), 0);
      return Out;
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      if (const Expr *Init = unchangedLocalInit(DRE))
        Add(Init, 0);
      return Out;
    }
    if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(E)) {
      switch (OC->getOperator()) {
      case OO_Plus: case OO_Minus: case OO_Star: case OO_Slash:
      case OO_Less: case OO_Greater: case OO_LessEqual: case OO_GreaterEqual:
      case OO_EqualEqual: case OO_ExclaimEqual:
        for (const Expr *A : OC->arguments())
          Add(A, 0);
        break;
      default:
        break;
      }
      return Out;
    }
    const auto *MC = dyn_cast<CXXMemberCallExpr>(E);
    const CXXMethodDecl *MD = MC ? MC->getMethodDecl() : nullptr;
    if (!MD || !MD->getIdentifier() || !isLibTorchDecl(MD))
      return Out;
    StringRef N = MD->getName();
    const Expr *Object = MC->getImplicitObjectArgument();
    static const std::set<std::string> Broadcasting = {
        "add", "sub", "mul", "div", "lt", "gt", "le", "ge", "eq", "ne",
        "pow", "clamp_min", "clamp_max", "clamp", "masked_fill", "where",
        "minimum", "maximum", "rsqrt", "sqrt", "log", "float", "type_as"};
    if (auto Delta = rankDelta(N)) {
      Add(Object, *Delta);
    } else if (Broadcasting.count(N.str())) {
      Add(Object, 0);
      for (const Expr *A : MC->arguments())
        Add(A, 0);
    } else if ((N == "sum" || N == "mean" || N == "amax" || N == "amin") &&
               MC->getNumArgs() >= 1 && singleDim(MC->getArg(0))) {
      // One dim reduced; kept with keepdim.
      std::optional<int64_t> Keep =
          MC->getNumArgs() == 1 || isDefaultArg(MC->getArg(1))
              ? std::optional<int64_t>(0)
              : integer(MC->getArg(1));
      if (Keep)
        Add(Object, *Keep ? 0 : -1);
    }
    return Out;
  }
  /// A dims argument that names one dim: `sum(1)` (an int converted to
  /// the OptionalIntArrayRef sum takes) or `sum({1})`.
  static bool singleDim(const Expr *A) {
    for (int K = 0; K < 6 && A; ++K) {
      A = A->IgnoreParenImpCasts();
      if (A->getType()->isIntegerType())
        return true;
      if (auto Count = bracedCount(A))
        return *Count == 1;
      const auto *CE = dyn_cast<CXXConstructExpr>(A);
      if (!CE || CE->getNumArgs() != 1)
        return false;
      A = CE->getArg(0);
    }
    return false;
  }
  /// The number of entries of a braced list argument (`{B, T, C}`).
  static std::optional<int64_t> bracedCount(const Expr *L) {
    if (const InitListExpr *IL = bracedList(L))
      return IL->getNumInits();
    return std::nullopt;
  }
  /// rank(E) is at most Rank, or LibTorch throws: so is every parameter's
  /// E has at least the dims of.
  void atMost(const Expr *E, int64_t Rank) {
    for (auto [P, D] : lowerRoots(E)) {
      ParameterEvidence &Ev = Out[P];
      Ev.AtMost = std::min(Ev.AtMost.value_or(Rank - D), Rank - D);
      Ev.OnSomePaths |= Conditional > 0;
    }
  }
  /// rank(E) is at least Rank, or LibTorch throws.
  void atLeast(const Expr *E, int64_t Rank) {
    auto Root = rankRoot(E);
    if (!Root)
      return;
    ParameterEvidence &Ev = Out[Root->first];
    int64_t R = Rank - Root->second;
    Ev.AtLeast = std::max(Ev.AtLeast.value_or(R), R);
    Ev.OnSomePaths |= Conditional > 0;
  }
  /// A constant integer (a literal dim, `true` for keepdim).
  std::optional<int64_t> integer(const Expr *E) const {
    Expr::EvalResult R;
    if (!E || E->isValueDependent() || !E->EvaluateAsInt(R, Ctx))
      return std::nullopt;
    return R.Val.getInt().getExtValue();
  }
  /// The expression E has exactly Rank dimensions, or LibTorch throws.
  void exactRank(const Expr *E, int64_t Rank) {
    auto Root = rankRoot(E);
    if (!Root || Rank - Root->second < 0)
      return;
    ParameterEvidence &Ev = Out[Root->first];
    int64_t R = Rank - Root->second;
    // Two uses that disagree: one of them throws, on some path; which is
    // not read here, so neither is evidence.
    if (Ev.ExactRank && *Ev.ExactRank != R)
      Ev.RankConflict = true;
    Ev.ExactRank = R;
    Ev.OnSomePaths |= Conditional > 0;
  }
  /// `fc->forward(x)` / `fc(x)` of a layer on parameter x.
  void layerInput(const Expr *Object, const Expr *Input) {
    const ParmVarDecl *P = unchanged(Input);
    auto Layer = moduleLayer(Object->getType());
    if (!P || !Layer || Out[P].LayerRank)
      return;
    // A Sequential's input is its first layer's.
    if (isLayerKind(*Layer, LayerKind::Sequential))
      Layer = sequentialFirstLayer(Object);
    if (!Layer)
      return;
    if (auto R = batchedInputRank(*Layer)) {
      Out[P].LayerRank = R;
      Out[P].Layer = *Layer;
    }
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *OC) {
    if (OC->getOperator() == OO_Call && OC->getNumArgs() == 2)
      layerInput(OC->getArg(0), OC->getArg(1));
    return true;
  }
  /// The arms of a branch: what a use there requires holds on the paths
  /// through it only.
  bool conditionally(Stmt *S) {
    ++Conditional;
    bool Go = TraverseStmt(S);
    --Conditional;
    return Go;
  }
  bool TraverseIfStmt(IfStmt *IS) {
    return TraverseStmt(IS->getInit()) &&
           TraverseStmt(IS->getConditionVariableDeclStmt()) &&
           TraverseStmt(IS->getCond()) && conditionally(IS->getThen()) &&
           conditionally(IS->getElse());
  }
  bool TraverseSwitchStmt(SwitchStmt *SS) {
    return TraverseStmt(SS->getInit()) &&
           TraverseStmt(SS->getConditionVariableDeclStmt()) &&
           TraverseStmt(SS->getCond()) && conditionally(SS->getBody());
  }
  bool TraverseConditionalOperator(ConditionalOperator *CO) {
    return TraverseStmt(CO->getCond()) && conditionally(CO->getTrueExpr()) &&
           conditionally(CO->getFalseExpr());
  }
  /// at::mm / at::bmm (the same checks as the methods), and embedding,
  /// whose weight "must be 2-D" (Embedding.cpp).
  bool VisitCallExpr(CallExpr *CE) {
    if (isa<CXXMemberCallExpr>(CE) || isa<CXXOperatorCallExpr>(CE))
      return true;
    const FunctionDecl *FD = CE->getDirectCallee();
    if (FD && !isLibTorchDecl(FD)) {
      llvm::SmallVector<const Expr *, 4> Args(CE->arguments());
      calleeEvidence(FD, Args);
      return true;
    }
    if (!FD || !FD->getIdentifier())
      return true;
    StringRef N = FD->getName();
    bool Functional =
        FD->getQualifiedNameAsString().find("nn::functional") != std::string::npos;
    if ((N == "mm" || N == "bmm") && CE->getNumArgs() == 2) {
      int64_t R = N == "mm" ? 2 : 3;
      exactRank(CE->getArg(0), R);
      exactRank(CE->getArg(1), R);
    } else if (N == "embedding" && CE->getNumArgs() >= 2) {
      // at::embedding(weight, indices, ...); F::embedding(input, weight, ...).
      exactRank(CE->getArg(Functional ? 1 : 0), 2);
    }
    return true;
  }
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *MC) {
    const CXXMethodDecl *MD = MC->getMethodDecl();
    if (MD && !isLibTorchDecl(MD)) {
      llvm::SmallVector<const Expr *, 4> Args(MC->arguments());
      calleeEvidence(MD, Args);
    }
    if (MD && MD->getIdentifier() && MD->getName() == "forward" &&
        MC->getNumArgs() >= 1 &&
        std::all_of(MC->arg_begin() + 1, MC->arg_end(),
                    [](const Expr *A) { return isDefaultArg(A); })) {
      const Expr *O = strip(MC->getImplicitObjectArgument());
      if (const auto *Arrow = dyn_cast_or_null<CXXOperatorCallExpr>(O);
          Arrow && Arrow->getOperator() == OO_Arrow && Arrow->getNumArgs() == 1)
        layerInput(Arrow->getArg(0), MC->getArg(0));
    }
    if (!MD || !MD->getIdentifier())
      return true;
    StringRef N = MD->getName();
    const Expr *Object = MC->getImplicitObjectArgument();
    // mm and bmm throw unless both operands are matrices / batches.
    if ((N == "mm" || N == "bmm") && MC->getNumArgs() == 1) {
      int64_t R = N == "mm" ? 2 : 3;
      exactRank(Object, R);
      exactRank(MC->getArg(0), R);
    }
    if (const ParmVarDecl *P = unchanged(Object); P && N == "t" &&
                                                   MC->getNumArgs() == 0)
      Out[P].Transposed = true;
    // permute needs exactly one index per dimension, or LibTorch throws.
    if (N == "permute" && MC->getNumArgs() == 1)
      if (auto Count = bracedCount(MC->getArg(0)))
        exactRank(Object, *Count);
    if (!isTensorType(Object->getType()) || !isLibTorchDecl(MD))
      return true;
    // expand: "the number of sizes provided must be greater or equal to
    // the number of dimensions in the tensor".
    if (N == "expand" && MC->getNumArgs() >= 1)
      if (auto Count = bracedCount(MC->getArg(0)))
        atMost(Object, *Count);
    // size(k) and unsqueeze(k) throw for a dim out of range.
    if ((N == "size" || N == "unsqueeze") && MC->getNumArgs() == 1 &&
        MC->getArg(0)->getType()->isIntegerType())
      if (auto K = integer(MC->getArg(0)); K && *K > -64 && *K < 64) {
        if (N == "size")
          atLeast(Object, *K >= 0 ? *K + 1 : -*K);
        else
          atLeast(Object, *K >= 0 ? *K : -*K - 1);
      }
    return true;
  }
};

} // namespace

/// The rank a top-level fact gives a parameter (`x.dim() == 4`), and its
/// dtype (`x.scalar_type() == at::kFloat`, `x.dtype() == torch::kHalf`).
void FunctionEvaluator::checkedParameterFacts(
    const Expr *Cond, bool Holds,
    std::map<const ParmVarDecl *, std::pair<std::optional<int64_t>,
                                            std::optional<DType>>> &Out) {
  Cond = unwrapExpect(Cond);
  if (const auto *UO = dyn_cast<UnaryOperator>(Cond);
      UO && UO->getOpcode() == UO_LNot)
    return checkedParameterFacts(UO->getSubExpr(), !Holds, Out);
  const Expr *L = nullptr, *R = nullptr;
  bool Equal = false;
  if (const auto *BO = dyn_cast<BinaryOperator>(Cond)) {
    if (BO->getOpcode() == BO_LAnd && Holds) {
      checkedParameterFacts(BO->getLHS(), true, Out);
      checkedParameterFacts(BO->getRHS(), true, Out);
      return;
    }
    if (BO->getOpcode() == BO_LOr && !Holds) {
      checkedParameterFacts(BO->getLHS(), false, Out);
      checkedParameterFacts(BO->getRHS(), false, Out);
      return;
    }
    if (BO->getOpcode() == BO_EQ || BO->getOpcode() == BO_NE) {
      L = BO->getLHS(), R = BO->getRHS();
      Equal = BO->getOpcode() == BO_EQ;
    }
  } else if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(Cond);
             OCE && OCE->getNumArgs() == 2 &&
             (OCE->getOperator() == OO_EqualEqual ||
              OCE->getOperator() == OO_ExclaimEqual)) {
    L = OCE->getArg(0), R = OCE->getArg(1);
    Equal = OCE->getOperator() == OO_EqualEqual;
  }
  if (!L || Equal != Holds)
    return; // only equalities that hold say what a parameter is
  // a.sizes() == b.sizes(): one rank.
  auto SizesOf = [&](const Expr *X) -> const ParmVarDecl * {
    const auto *MC = dyn_cast<CXXMemberCallExpr>(ignoreCastsAndParens(X));
    if (!MC || !MC->getMethodDecl() || !MC->getMethodDecl()->getIdentifier() ||
        MC->getMethodDecl()->getName() != "sizes")
      return nullptr;
    return unchangedTensorParameter(MC->getImplicitObjectArgument(), Mutated);
  };
  if (const ParmVarDecl *A = SizesOf(L))
    if (const ParmVarDecl *B = SizesOf(R)) {
      SameRank.push_back({A, B});
      return;
    }
  for (int Side = 0; Side < 2; ++Side, std::swap(L, R)) {
    const auto *MC = dyn_cast<CXXMemberCallExpr>(ignoreCastsAndParens(L));
    if (!MC || !MC->getMethodDecl() || !MC->getMethodDecl()->getIdentifier())
      continue;
    const ParmVarDecl *P =
        unchangedTensorParameter(MC->getImplicitObjectArgument(), Mutated);
    if (!P)
      continue;
    StringRef N = MC->getMethodDecl()->getName();
    if (N == "dim" || N == "ndimension") {
      if (auto K = integer(R); K && *K >= 0 && *K < 64)
        Out[P].first = *K;
    } else if (N == "scalar_type" || N == "dtype") {
      // dtype() is a caffe2::TypeMeta compared with a ScalarType; the
      // other side may also be torch::Dtype(kFloat) or a TypeMeta.
      const Expr *Other = ignoreCastsAndParens(R);
      while (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(Other)) {
        if (CE->getNumArgs() != 1)
          break;
        Other = ignoreCastsAndParens(CE->getArg(0));
      }
      if (auto T = Other ? scalarType(Other) : std::nullopt)
        Out[P].second = *T;
    }
  }
}

// A followed call (Calls.cpp): the parameters hold the caller's values, and
// a value the caller does not know stays unknown (a symbol named after this
// parameter would mean nothing in the caller's terms).
void FunctionEvaluator::declareBoundParameters() {
  for (const ParmVarDecl *P : FD.parameters()) {
    const std::string Name = P->getName().str();
    const BoundArgument *B = nullptr;
    if (auto It = Bound.find(P); It != Bound.end())
      B = &It->second;
    if (isTensorType(P->getType())) {
      ValueId Id =
          B && B->Tensor
              ? I.external(*B->Tensor, B->StorageBytes)
              : I.unknown("parameter", "the caller's argument is not followed",
                          span(P->getSourceRange()),
                          Interpreter::Provenance::External);
      ParameterValues[P] = Id;
      I.bind(key(P), Name, Id, span(P->getSourceRange()),
             span(SourceRange(P->getLocation(), P->getLocation())), false,
             /*IsParameter=*/true);
    } else if (B && B->Integer &&
               !Mutated.count(cast<ValueDecl>(P->getCanonicalDecl()))) {
      IntVars[key(P)] = *B->Integer;
    }
  }
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
  bool VisitCallExpr(CallExpr *CE) {
    if (isStdGet(CE))
      return true;
    const auto *OCE = dyn_cast<CXXOperatorCallExpr>(CE);
    if (OCE && OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2) {
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

void collectMutations(const Stmt *Body, std::set<const ValueDecl *> &Out) {
  MutationScan(Out).TraverseStmt(const_cast<Stmt *>(Body));
}

void FunctionEvaluator::declareParameters() {
  const Stmt *Body = FD.getBody();
  std::map<const ValueDecl *, std::vector<const Stmt *>> MutationSites;
  if (Body) {
    MutationScan(Mutated, &MutationSites).TraverseStmt(const_cast<Stmt *>(Body));
    TuplePartScan(SM, TuplesChangedInPart).TraverseStmt(const_cast<Stmt *>(Body));
  }
  if (Caller)
    return declareBoundParameters();
  // Evidence: the uses, then the top-level checks (which win).
  std::map<const ParmVarDecl *, ParameterEvidence> Evidence;
  if (Body) {
    FollowedCallee Followed = [this](const FunctionDecl *Callee) {
      return followedDefinition(Callee);
    };
    EvidenceScan::Helpers Scans;
    Scans.Open.insert(&FD);
    EvidenceScan(Ctx, Evidence, Mutated, MutationSites, Followed, Scans)
        .TraverseStmt(const_cast<Stmt *>(Body));
  }
  std::map<const ParmVarDecl *,
           std::pair<std::optional<int64_t>, std::optional<DType>>>
      Checked;
  if (const auto *CS = dyn_cast_or_null<CompoundStmt>(Body))
    for (const Stmt *S : CS->body())
      if (auto C = checkedCondition(S))
        checkedParameterFacts(C->first, C->second, Checked);
  for (auto &[P, Ev] : Evidence) {
    if (Ev.RankConflict)
      Ev.ExactRank.reset();
    // At least as many dims as one use reads and at most as many as
    // another allows: exactly that many (`hidden.size(2)` and an expand of
    // what has hidden's dims to 3 sizes). Bounds that cross are no
    // evidence (one of the uses throws).
    if (!Ev.ExactRank && !Ev.RankConflict && Ev.AtLeast && Ev.AtMost &&
        *Ev.AtLeast == *Ev.AtMost)
      Ev.ExactRank = Ev.AtLeast;
  }
  for (const auto &[P, RT] : Checked) {
    if (RT.first) {
      Evidence[P].ExactRank = RT.first;
      Evidence[P].OnSomePaths = false;
    }
    if (RT.second)
      Evidence[P].Type = RT.second;
  }
  // A checked a.sizes() == b.sizes() gives a b's rank, and back.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (auto [A, B] : SameRank)
      for (int K = 0; K < 2; ++K, std::swap(A, B))
        if (!Evidence[A].ExactRank && Evidence[B].ExactRank) {
          Evidence[A].ExactRank = Evidence[B].ExactRank;
          Evidence[A].OnSomePaths = Evidence[B].OnSomePaths;
          Changed = true;
        }
  }

  for (const ParmVarDecl *P : FD.parameters()) {
    const std::string Name = P->getName().str();
    QualType PT = P->getType().getNonReferenceType();
    bool Unchanged = !Mutated.count(cast<ValueDecl>(P->getCanonicalDecl()));
    if (isTensorType(P->getType())) {
      const ParameterEvidence &Ev = Evidence[P];
      // Only exact evidence: code that reads x.size(1) works as well on
      // a 4-d x, so the largest index read is no rank (and no assumption
      // anyone would state). Such sizes are still symbols (symbolicValue).
      std::optional<int64_t> Rank = Ev.ExactRank;
      // From a use in a branch: the paths that skip it take any rank.
      bool AssumedOnSomePaths = Rank && Ev.OnSomePaths;
      // A rank an earlier run showed (a view to its sizes), or the next one
      // tried after a statement refuted the stated one: stated.
      bool AssumedFromView = false;
      if (auto Hint = RankHints.find(Name); !Rank && Hint != RankHints.end()) {
        Rank = Hint->second;
        AssumedFromView = true;
      }
      // x.t() of a tensor of unknown rank: a matrix, stated (t() of a
      // vector is the vector itself, of more dims it throws).
      bool AssumedMatrix = !Rank && Ev.Transposed;
      if (AssumedMatrix)
        Rank = 2;
      // The input of a layer: the rank the layer is documented for, stated
      // (Linear also takes (*, in_features), Conv2d an unbatched (C, H, W)).
      bool AssumedLayerRank = !Rank && Ev.LayerRank;
      if (AssumedLayerRank)
        Rank = Ev.LayerRank;
      TensorValue V;
      std::optional<SymSize> Bytes;
      // Without a check its dtype is the caller's: x.scalar_type(), whose
      // element size x.element_size() is a symbol (1 to 16).
      auto SetDType = [&] {
        V.Type = Ev.Type;
        if (!V.Type && !Name.empty()) {
          V.TypeOf = Name;
          Env->tensorElementSize(Name);
        }
      };
      SetDType();
      // Sizes and bytes do not depend on it; answers that do say so.
      V.markUnknown("parameter '" + Name + "': its device is the caller's");
      auto NoRank = RankUnknown.find(Name);
      if (NoRank != RankUnknown.end())
        Rank = std::nullopt;
      else if (Rank && (AssumedMatrix || AssumedLayerRank || AssumedFromView))
        StatedRanks[Name] = *Rank;
      if (Name.empty() || !Rank) {
        V = unknownTensor(
            NoRank != RankUnknown.end()
                ? "parameter '" + Name + "': " + NoRank->second
                : "parameter '" + Name +
                      "': its rank is not known (no dim() check, and no op "
                      "that fixes it)");
        SetDType();
        // Its element count is still a symbol and, like any parameter, it
        // is assumed packed: a view or reshape of it to a full shape
        // (`x.view({B, T, H, D})`) is answered without its rank.
        if (!Name.empty()) {
          if (Unchanged)
            UnknownRankParameters.push_back(Name);
          V.PackedNumel = Env->tensorNumel(Name);
          V.Offset = SymSize(0);
          Env->assume(Name + ".is_contiguous()");
          if (auto Item = V.itemBytes())
            Bytes = mulSizes(*V.PackedNumel, *Item);
          Env->assume(Name + ".storage().nbytes() == " + Name +
                      ".numel() * " + Name + ".element_size()");
        }
      } else {
        Shape Sizes;
        for (int64_t K = 0; K < *Rank; ++K)
          Sizes.push_back(Env->tensorSize(Name, K));
        V.Sizes = Sizes;
        V.Strides = contiguousStrides(Sizes);
        V.Offset = SymSize(0);
        if (AssumedMatrix || AssumedLayerRank || AssumedFromView ||
            AssumedOnSomePaths)
          Env->assume(Name + ".dim() == " + std::to_string(*Rank));
        Env->assume(Name + ".is_contiguous()");
        Bytes = V.logicalBytes();
        Env->assume(Name + ".storage().nbytes() == " + Name +
                    ".numel() * " + Name + ".element_size()");
      }
      ValueId Id = I.external(V, Bytes);
      ParameterValues[P] = Id;
      I.bind(key(P), Name, Id, span(P->getSourceRange()),
             span(SourceRange(P->getLocation(), P->getLocation())), false,
             /*IsParameter=*/true);
    } else if (PT->isIntegerType() && !PT->isBooleanType() &&
               !PT->isEnumeralType()) {
      if (Unchanged && !Name.empty() && !PT->isReferenceType())
        IntVars[key(P)] = Env->integer(Name);
    }
  }
}

std::map<std::string, int64_t> FunctionEvaluator::viewRankHints() const {
  std::map<std::string, int64_t> Hints;
  for (const std::string &Name : UnknownRankParameters) {
    SymSize Numel = Env->simplify(Env->tensorNumel(Name));
    if (Numel.isConstant())
      continue;
    // The product of the first k sizes, for the k that matches (a view
    // names each size at most once; 8 bounds the search).
    SymSize Product(1);
    for (int64_t K = 1; K <= 8; ++K) {
      Product = Product * Env->tensorSize(Name, K - 1);
      if (Env->simplify(Product) == Numel) {
        Hints[Name] = K;
        break;
      }
    }
  }
  return Hints;
}

/// V converted to the integer type To: the same value when To holds it
/// (stated as an assumption when only the facts could not show it).
std::optional<SymSize> FunctionEvaluator::convertInteger(const SymSize &V,
                                                         QualType To) {
  if (V.isConstant() || !To->isIntegerType() || To->isBooleanType())
    return To->isBooleanType() ? std::nullopt : std::optional<SymSize>(V);
  unsigned Width = Ctx.getIntWidth(To);
  bool Signed = To->isSignedIntegerType();
  if (Width > 64 || (Width == 64 && Signed))
    return V; // every SymSize fits
  int64_t Hi = Width == 64 ? (Signed ? INT64_MAX : INT64_MAX)
                           : static_cast<int64_t>((Signed ? (uint64_t(1) << (Width - 1))
                                                          : (uint64_t(1) << Width)) -
                                                  1);
  int64_t Lo = Signed ? (Width == 64 ? INT64_MIN : -Hi - 1) : 0;
  ShapeEnv::Range R = Env->range(V);
  if (!R.Hi || *R.Hi > Hi)
    Env->assume(SymRelation::le(V, Hi));
  if (!R.Lo || *R.Lo < Lo)
    Env->assume(SymRelation::ge(V, Lo));
  return V;
}

std::optional<SymSize> FunctionEvaluator::sizeValue(const Expr *E) {
  return sizeOf(E, /*Evaluate=*/true);
}

std::optional<SymSize> FunctionEvaluator::sizeOf(const Expr *E, bool Evaluate) {
  if (!E)
    return std::nullopt;
  if (auto C = foldInteger(E))
    return SymSize(*C);
  return symbolicValue(E, Evaluate);
}

std::optional<SymSize> FunctionEvaluator::symbolicValue(const Expr *E,
                                                        bool Evaluate) {
  if (!E || E->isValueDependent() || ++SizeDepth > 64) {
    if (E && !E->isValueDependent())
      --SizeDepth;
    return std::nullopt;
  }
  struct Leave {
    int &D;
    ~Leave() { --D; }
  } L{SizeDepth};
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
    if (Ctx.getIntWidth(CE->getType()) >=
            Ctx.getIntWidth(CE->getSubExpr()->getType()) &&
        (CE->getType()->isSignedIntegerType() ||
         !CE->getSubExpr()->getType()->isSignedIntegerType()))
      return V; // widening: the same value
    return convertInteger(*V, CE->getType());
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (auto It = IntVars.find(key(DRE->getDecl())); It != IntVars.end())
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
      if (Env->decideFromFacts(SymRelation::gt(*B, 0)) == Tri::False)
        return std::nullopt;
      ShapeEnv::Range RB = Env->range(*B);
      if (!RB.Lo || *RB.Lo < 1)
        Env->assume(SymRelation::gt(*B, 0));
      if (Env->decideFromFacts(SymRelation::ge(*A, 0)) == Tri::True) {
        R = Op == BO_Div ? SymSize::floorDiv(*A, *B) : SymSize::mod(*A, *B);
        break;
      }
      SymSize Quotient = SymSize::floorDiv(SymSize::max(*A, 0), *B);
      // The negative part only where it can be nonzero: a dividend of at
      // least 1 - b truncates to 0 below zero (max(x.size(0) - 1, 0) / 2).
      SymSize Negative = SymSize::floorDiv(SymSize::max(-*A, 0), *B);
      if (Env->range(Negative).Hi != 0)
        Quotient = Quotient - Negative;
      R = Op == BO_Div ? Quotient : *A - *B * Quotient;
      break;
    }
    }
    if (R.isError())
      return std::nullopt;
    return Env->simplify(R);
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
    if (!P || Caller || P->getDeclContext() != &FD || !P->getType()->isBooleanType() ||
        Mutated.count(cast<ValueDecl>(P->getCanonicalDecl())) || P->getName().empty())
      return std::nullopt;
    auto A = operand(CO->getTrueExpr());
    auto B = A ? operand(CO->getFalseExpr()) : std::nullopt;
    if (!A || !B)
      return std::nullopt;
    if (Negated)
      std::swap(A, B);
    SymSize R = *B + (*A - *B) * Env->boolean(P->getName().str());
    if (R.isError())
      return std::nullopt;
    return Env->simplify(R);
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
    auto List = intList(OCE->getArg(0));
    auto K = foldInteger(OCE->getArg(1));
    if (List && K && *K >= 0 && *K < static_cast<int64_t>(List->size()))
      return (*List)[*K];
    // sizes[k] of the caller's tensor's sizes (`auto sizes = x.sizes()`),
    // its rank unknown: x.size(k), as x.size(k) itself reads.
    if (!List && K && *K >= 0 && !Caller)
      if (const ParmVarDecl *P = parameterSizes(OCE->getArg(0), Mutated))
        return Env->tensorSize(P->getName().str(), *K);
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
    if (auto List = intList(Obj))
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
  const TensorValue &V = I.value(tensor(Obj));
  if ((N == "size" || N == "stride") && MC->getNumArgs() == 1) {
    auto K = foldInteger(MC->getArg(0));
    const std::optional<Shape> &Dims = N == "size" ? V.Sizes : V.Strides;
    // A parameter of unknown rank still has sizes: x.size(1) of the tensor
    // the caller passed, while x still holds it.
    if (K && *K >= 0 && !Dims && N == "size" && !Caller)
      if (const ParmVarDecl *P = unchangedTensorParameter(Obj, Mutated))
        return Env->tensorSize(P->getName().str(), *K);
    if (!K || !Dims)
      return std::nullopt;
    int64_t Rank = static_cast<int64_t>(Dims->size());
    int64_t D = *K < 0 ? *K + Rank : *K;
    if (D < 0 || D >= Rank) {
      // LibTorch throws: not a value. On a rank that was only stated, the
      // statement says the rank is another one (analyzeFunction tries it).
      if (const ParmVarDecl *P = unchangedTensorParameter(Obj, Mutated);
          P && !Caller && StatedRanks.count(P->getName().str()))
        StatedRankRefuted.insert(P->getName().str());
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

void FunctionEvaluator::learnFacts(const Expr *Cond, bool Holds) {
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
    return intList(X);
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
          Env->addFact(SymRelation::eq((*A)[K], (*B)[K]));
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
          Rem && Rem->getOpcode() == BO_Rem && foldInteger(Y) == 0) {
        auto A = value(Rem->getLHS());
        auto B = A ? value(Rem->getRHS()) : std::nullopt;
        if (A && B) {
          Env->addFact(SymRelation::multiple(*A, *B));
          return;
        }
      }
  auto A = value(BO->getLHS());
  auto B = A ? value(BO->getRHS()) : std::nullopt;
  if (!A || !B || (A->isConstant() && B->isConstant()))
    return;
  switch (Op) {
  case BO_EQ: Env->addFact(SymRelation::eq(*A, *B)); break;
  case BO_NE: Env->addFact(SymRelation::ne(*A, *B)); break;
  case BO_LT: Env->addFact(SymRelation::lt(*A, *B)); break;
  case BO_LE: Env->addFact(SymRelation::le(*A, *B)); break;
  case BO_GT: Env->addFact(SymRelation::gt(*A, *B)); break;
  case BO_GE: Env->addFact(SymRelation::ge(*A, *B)); break;
  default: break;
  }
}

void FunctionEvaluator::checkedStatement(const Stmt *S, Flow F) {
  if (F.InBranch || F.InLoop)
    return; // it holds on some paths only
  if (auto C = checkedCondition(S))
    learnFacts(C->first, C->second);
}

void FunctionEvaluator::declareInteger(const VarDecl *VD, const Expr *Init) {
  if (Mutated.count(cast<ValueDecl>(VD->getCanonicalDecl())))
    return;
  auto V = sizeValue(Init);
  if (!V)
    return;
  if (V->isSymbolic()) {
    V = convertInteger(*V, VD->getType());
    if (!V)
      return;
    if (auto Name = V->symbolName())
      Env->setDisplayName(*Name, VD->getName().str());
  }
  IntVars[key(VD)] = *V;
}

} // namespace tma

