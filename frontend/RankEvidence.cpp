// Rank evidence: what the uses of a tensor parameter require of its rank
// (frontend/Symbols.cpp's design, second point):
//  1. Exact: an op that throws on any other rank (mm, bmm, embedding's
//     weight, permute's index count) applied to the parameter or to what
//     rank-keeping ops made of it (`x.unfold(2, 3, 1).permute({...})`).
//  2. Bounds: `x.size(2)` needs at least 3 dims; an expand to 3 sizes of
//     what has at least x's dims needs at most 3. Equal bounds are exact.
//  3. The ops' rank behaviour comes from the op table (model/ops/OpTable.def):
//     KeepsRank (the result has self's rank), Broadcasts (the most dims of
//     its tensor operands), ReducesOneDim (`sum(dim, keepdim)`); an op
//     gets rank inference by its tag, never by a name list here.
//  4. Layers: the input of a layer's forward has the rank the layer
//     documents for a batch (stated, not proved); helpers of the file pass
//     their parameters' evidence to the caller's arguments.
#include "frontend/SymbolScans.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpCodes.h"
#include "model/modules/LayerTable.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "llvm/ADT/ScopeExit.h"

using namespace clang;

namespace tma {

namespace {

/// The table op a method or function name written in the source is, or
/// null (not a table op).
const OpInfo *rankOp(StringRef Name) { return lookupOp(Name.str()); }

/// Whether the call names the table op Code.
bool namesOp(StringRef Name, OpCode Code) {
  const OpInfo *Op = rankOp(Name);
  return Op && Op->Code == Code;
}

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
      scanMutations(Body, InnerMutated, &InnerSites);
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
    // Source order, with a macro argument at the place it is written
    // (`TORCH_CHECK(x.dim() == 4)` before `x = f(x)`).
    const SourceManager &SM = Ctx.getSourceManager();
    SourceLocation Use = SM.getFileLoc(E->getBeginLoc());
    if (!Use.isValid() || !SM.isMacroArgExpansion(E->getBeginLoc()) &&
                              E->getBeginLoc().isMacroID())
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
  /// that is a fixed amount: the op table's KeepsRank ops (conversions,
  /// copies and views that keep every dimension), unsqueeze and unfold.
  static std::optional<int64_t> rankDelta(StringRef N) {
    const OpInfo *Op = rankOp(N);
    if (!Op)
      return std::nullopt;
    if (hasTag(Op->Code, KeepsRank))
      return 0;
    if (Op->Code == OpCode::unfold || Op->Code == OpCode::unsqueeze)
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
    const OpInfo *Op = rankOp(N);
    if (auto Delta = rankDelta(N)) {
      Add(Object, *Delta);
    } else if (Op && hasTag(Op->Code, Broadcasts)) {
      Add(Object, 0);
      for (const Expr *A : MC->arguments())
        Add(A, 0);
    } else if (Op && hasTag(Op->Code, ReducesOneDim) && MC->getNumArgs() >= 1 &&
               singleDim(MC->getArg(0))) {
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
  /// `lstm->forward(x, std::make_tuple(h, c))`, `gru->forward(x, h)`, a
  /// cell's forward(x, hx): the input and each state tensor have the
  /// documented rank of a batch (LibTorch compares the state's sizes with
  /// (layers * directions, batch, hidden), a cell's with (batch, hidden)).
  void recurrentState(const Expr *Object, const Expr *Input, const Expr *State) {
    auto Layer = moduleLayer(Object->getType());
    if (!Layer || (!isLayerKind(*Layer, LayerKind::Recurrent) &&
                   !isLayerKind(*Layer, LayerKind::RecurrentCell)))
      return;
    layerInput(Object, Input);
    const Expr *S = strip(State);
    if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(S);
        CE && CE->getNumArgs() == 1)
      S = strip(CE->getArg(0)); // the optional an LSTM's hx converts to
    if (isTensorType(S->getType())) {
      layerInput(Object, S);
      return;
    }
    const auto *Make = dyn_cast_or_null<CallExpr>(S);
    const FunctionDecl *F = Make ? Make->getDirectCallee() : nullptr;
    if (F && F->getQualifiedNameAsString() == "std::make_tuple")
      for (const Expr *A : Make->arguments())
        layerInput(Object, A);
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
    bool MM = namesOp(N, OpCode::mm), BMM = namesOp(N, OpCode::bmm);
    if ((MM || BMM) && CE->getNumArgs() == 2) {
      int64_t R = MM ? 2 : 3;
      exactRank(CE->getArg(0), R);
      exactRank(CE->getArg(1), R);
    } else if (namesOp(N, OpCode::embedding) && CE->getNumArgs() >= 2) {
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
        MC->getNumArgs() >= 1) {
      const Expr *O = strip(MC->getImplicitObjectArgument());
      const auto *Arrow = dyn_cast_or_null<CXXOperatorCallExpr>(O);
      if (Arrow && (Arrow->getOperator() != OO_Arrow || Arrow->getNumArgs() != 1))
        Arrow = nullptr;
      if (Arrow && std::all_of(MC->arg_begin() + 1, MC->arg_end(),
                               [](const Expr *A) { return isDefaultArg(A); }))
        layerInput(Arrow->getArg(0), MC->getArg(0));
      else if (Arrow && MC->getNumArgs() == 2)
        recurrentState(Arrow->getArg(0), MC->getArg(0), MC->getArg(1));
    }
    if (!MD || !MD->getIdentifier())
      return true;
    StringRef N = MD->getName();
    const Expr *Object = MC->getImplicitObjectArgument();
    // mm and bmm throw unless both operands are matrices / batches.
    bool MM = namesOp(N, OpCode::mm), BMM = namesOp(N, OpCode::bmm);
    if ((MM || BMM) && MC->getNumArgs() == 1) {
      int64_t R = MM ? 2 : 3;
      exactRank(Object, R);
      exactRank(MC->getArg(0), R);
    }
    if (const ParmVarDecl *P = unchanged(Object);
        P && namesOp(N, OpCode::t) && MC->getNumArgs() == 0)
      Out[P].Transposed = true;
    // permute needs exactly one index per dimension, or LibTorch throws.
    if (namesOp(N, OpCode::permute) && MC->getNumArgs() == 1)
      if (auto Count = bracedCount(MC->getArg(0)))
        exactRank(Object, *Count);
    if (!isTensorType(Object->getType()) || !isLibTorchDecl(MD))
      return true;
    // expand: "the number of sizes provided must be greater or equal to
    // the number of dimensions in the tensor".
    if (namesOp(N, OpCode::expand) && MC->getNumArgs() >= 1)
      if (auto Count = bracedCount(MC->getArg(0)))
        atMost(Object, *Count);
    // size(k) and unsqueeze(k) throw for a dim out of range.
    bool Unsqueeze = namesOp(N, OpCode::unsqueeze);
    if ((N == "size" || Unsqueeze) && MC->getNumArgs() == 1 &&
        MC->getArg(0)->getType()->isIntegerType())
      if (auto K = integer(MC->getArg(0)); K && *K > -64 && *K < 64) {
        if (!Unsqueeze)
          atLeast(Object, *K >= 0 ? *K + 1 : -*K);
        else
          atLeast(Object, *K >= 0 ? *K : -*K - 1);
      }
    return true;
  }
};

} // namespace

std::map<const ParmVarDecl *, ParameterEvidence>
scanRankEvidence(ASTContext &Ctx, const FunctionDecl &FD, const Stmt *Body,
                 const std::set<const ValueDecl *> &Mutated,
                 const MutationSites &Sites, const FollowedCallee &Followed) {
  std::map<const ParmVarDecl *, ParameterEvidence> Evidence;
  EvidenceScan::Helpers Scans;
  Scans.Open.insert(&FD);
  EvidenceScan(Ctx, Evidence, Mutated, Sites, Followed, Scans)
      .TraverseStmt(const_cast<Stmt *>(Body));
  return Evidence;
}

} // namespace tma
