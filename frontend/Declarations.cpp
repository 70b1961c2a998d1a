// Declarations: a tensor, a reference to one, a std::vector or std::tuple
// of them, a pointer, an aggregate holding them, a closure capturing them,
// options and devices; each statement opened for the Interpreter with its
// probe position.
#include "frontend/FunctionEvaluator.h"
#include "frontend/StatementWalker.h"
#include "frontend/ModuleTracker.h"
#include "frontend/TrainingTracker.h"
#include "frontend/SymbolReader.h"
#include "frontend/ArgumentReader.h"
#include "frontend/ModuleUses.h"
#include "model/ops/OpCodes.h"
#include "model/ops/OpTable.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"

using namespace clang;

namespace tma {

void StatementWalker::openStatement(const Stmt *S, Flow F, bool Insertable) {
  FE.CurrentStatement = S->getSourceRange();
  FE.Evaluated.clear();
  FE.EvaluatedLists.clear();
  FE.EvaluatedTuples.clear();
  Statement St;
  St.Where = FE.span(S->getSourceRange());
  St.InLoop = F.InLoop;
  St.InBranch = F.InBranch;
  St.Unrolled = F.InLoop && F.Unrolled;
  St.Insertable = Insertable && !St.Where.InMacro;
  // The probe position: right after the statement's ';'.
  SourceLocation End = S->getEndLoc();
  if (!isa<DeclStmt>(S)) {
    SourceLocation Semi = Lexer::findLocationAfterToken(
        End, tok::semi, FE.SM, FE.Ctx.getLangOpts(), /*SkipTrailingWhitespaceAndNewLine=*/false);
    End = Semi.isValid() ? Semi.getLocWithOffset(-1) : SourceLocation();
  }
  if (End.isValid() && End.isFileID() && FE.SM.isWrittenInMainFile(End))
    St.EndOffset = FE.SM.getFileOffset(End) + 1;
  else
    St.Insertable = false;
  FE.I.beginStatement(St);
}

void StatementWalker::declaration(const DeclStmt *DS, Flow F, bool Insertable) {
  for (const Decl *D : DS->decls()) {
    if (const auto *DD = dyn_cast<DecompositionDecl>(D)) {
      // `auto [values, indices] = torch::max(x, 1);`: the hidden variable
      // holds the tuple, each binding names one element.
      if (!DD->hasInit())
        continue;
      openStatement(DS, F, Insertable);
      auto Tuple = isTensorTupleType(DD->getType())
                       ? FE.tensorTuple(DD->getInit())
                       : std::nullopt;
      auto Bindings = DD->bindings();
      // `auto [out, state] = lstm->forward(x, hx)`: the output, and the
      // (h_n, c_n) pair as a tuple of the binding's.
      std::optional<std::vector<ValueId>> Lstm;
      if (!Tuple && Bindings.size() == 2)
        Lstm = FE.modules().recurrentValues(DD->getInit());
      if (Lstm && Lstm->size() == 3) {
        Tuple = {(*Lstm)[0]};
        FE.holdElements(FE.key(Bindings[1]),
                        std::vector<ValueId>{(*Lstm)[1], (*Lstm)[2]},
                        FE.TensorTuples);
      }
      for (size_t K = 0; K < Bindings.size(); ++K) {
        const BindingDecl *B = Bindings[K];
        ValueId V = NoValue;
        if (Tuple && K < Tuple->size())
          V = (*Tuple)[K];
        else if (isTensorType(B->getType()))
          V = FE.I.unknown(B->getName().str(),
                        "structured binding of a value not followed",
                        FE.span(DS->getSourceRange()));
        else
          continue;
        FE.I.bind(FE.key(B), B->getName().str(), V, FE.span(DS->getSourceRange()),
               FE.span(SourceRange(B->getLocation(), B->getLocation())), false);
      }
      if (!Tuple && !Lstm)
        FE.sideEffects(DD->getInit());
      FE.I.endStatement();
      continue;
    }
    if (const auto *VD = dyn_cast<VarDecl>(D))
      declareVariable(VD, DS, F, Insertable);
  }
}

void FunctionEvaluator::holdElements(
    const std::string &Key, const std::optional<std::vector<ValueId>> &Elements,
    std::map<std::string, std::vector<ValueId>> &Into) {
  if (!Elements) {
    Into.erase(Key);
    return;
  }
  Into[Key] = *Elements;
  for (size_t K = 0; K < Elements->size(); ++K)
    holdElement(Key, K, (*Elements)[K]);
}

void FunctionEvaluator::holdElement(const std::string &Key, size_t Index,
                                    ValueId Element) {
  auto It = ListScopes.find(Key);
  I.holdInScope(Key + "#" + std::to_string(Index), Element,
                It == ListScopes.end() ? I.scopeDepth() : It->second);
}

/// A function-`static` (or `thread_local`) tensor is initialised on the
/// first call only, which may be an earlier one, and lives until the
/// program ends; later calls see whatever an earlier one left in it. Its
/// storage comes from outside the call, as a global's does, and whether
/// this call allocates it is not known: the totals are unknown.
void StatementWalker::staticLocal(const VarDecl *VD, const DeclStmt *DS,
                                    Flow F, bool Insertable) {
  std::string Name = VD->getName().str();
  SourceSpan Where = FE.span(DS->getSourceRange());
  std::string Why = "'" + Name + "' is a static local: initialised on the "
                    "first call only, it outlives the call";
  FE.I.totalsUnknown(Why + " (line " + std::to_string(Where.Line) +
                  "), so whether this call allocates it is not known");
  if (!isTensorType(VD->getType())) {
    FE.TensorLists.erase(FE.key(VD));
    FE.TensorTuples.erase(FE.key(VD));
    return;
  }
  openStatement(DS, F, Insertable);
  ValueId V = FE.I.unknown(Name, Why, Where, Interpreter::Provenance::External);
  FE.I.bind(FE.key(VD), Name, V, Where,
         FE.span(SourceRange(VD->getLocation(), VD->getLocation())), false);
  FE.I.markStatic();
  FE.I.endStatement();
}

void StatementWalker::declareVariable(const VarDecl *VD, const DeclStmt *DS,
                                        Flow F, bool Insertable) {
  QualType T = VD->getType();
  SourceSpan Where = FE.span(DS->getSourceRange());
  SourceSpan NameWhere = FE.span(SourceRange(VD->getLocation(), VD->getLocation()));
  std::string Name = VD->getName().str();
  const Expr *Init = VD->hasInit() ? VD->getInit() : nullptr;
  if (VD->isStaticLocal() && !T->isReferenceType() &&
      (isTensorType(T) || isTensorVectorType(T) || isTensorTupleType(T))) {
    staticLocal(VD, DS, F, Insertable);
    return;
  }
  if (!Init) {
    // `torch::Tensor a;` is an undefined tensor until assigned; the name
    // lives in this scope. `std::vector<torch::Tensor> v;` is empty.
    if (isTensorType(T) && !T->isReferenceType())
      FE.I.hold(FE.key(VD), FE.I.undefined("declared without a value"));
    else if (isTensorVectorType(T) && !T->isReferenceType()) {
      FE.TensorLists[FE.key(VD)] = {};
      FE.ListScopes[FE.key(VD)] = FE.I.scopeDepth();
    }
    return;
  }
  if (!T->isReferenceType() && moduleLayer(T)) {
    FE.modules().declareModule(VD, DS, F, Insertable);
    return;
  }
  if (!T->isReferenceType() && FE.modules().isDataLoaderCall(Init)) {
    FE.Loaders[FE.key(VD)] = FE.modules().dataLoader(Init);
    return;
  }
  // A dataset holds storage of its own (MNIST reads all its images when
  // constructed), which the totals do not follow.
  if (!T->isReferenceType() &&
      llvm::StringRef(recordName(T)).startswith("torch::data::datasets::"))
    FE.I.totalsUnknown("the dataset '" + Name + "' (line " +
                    std::to_string(Where.Line) +
                    ") holds storage the totals do not follow");
  if (!T->isReferenceType() && FE.training().isOptimizerType(T)) {
    FE.training().declareOptimizer(VD, DS, F, Insertable);
    return;
  }
  if (isOptionsType(T)) {
    FE.OptionVars[FE.key(VD)] = FE.args().options(Init);
    return;
  }
  if (recordName(T) == "c10::Device" && !T->isReferenceType()) {
    FE.DeviceVars[FE.key(VD)] = FE.args().device(Init);
    return;
  }
  if (isTensorType(T) && !T->isReferenceType()) {
    openStatement(DS, F, Insertable);
    ValueId V = FE.tensor(Init);
    const Expr *S = strip(Init);
    // `auto y = x;` binds another handle to the same tensor.
    if (auto Sl = isa<DeclRefExpr>(S) ? FE.slotOf(S) : std::nullopt;
        Sl && Sl->Known && V >= 0 && FE.readSlot(*Sl, S) == V) {
      OpOutcome Same;
      Same.Kind = OpKind::Self;
      Same.Value = FE.I.value(V);
      Same.ReadBytes = Same.WrittenBytes = 0;
      Same.Note = "another handle to the same tensor";
      V = FE.apply(opInfo(OpCode::alias).Name, Init, {V}, Same);
    }
    FE.I.bind(FE.key(VD), Name, V, Where, NameWhere, false);
    if (VD->isStaticLocal())
      FE.I.markStatic();
    // `auto b = std::move(a);` leaves a an undefined tensor. From C++17 on
    // the initializer is Tensor's move constructor around the call.
    const Expr *Moving = S;
    if (const auto *CCE = dyn_cast<CXXConstructExpr>(S);
        CCE && CCE->getNumArgs() == 1 && CCE->getConstructor()->isMoveConstructor())
      Moving = strip(CCE->getArg(0));
    if (const auto *CE = dyn_cast<CallExpr>(Moving))
      if (const FunctionDecl *C = CE->getDirectCallee();
          C && C->getQualifiedNameAsString() == "std::move" &&
          CE->getNumArgs() == 1)
        if (auto From = FE.slotOf(CE->getArg(0)); From && From->Known)
          FE.I.rebind(From->Key, FE.I.undefined("moved from"));
    FE.I.endStatement();
    return;
  }
  if (isTensorType(T) && T->isReferenceType()) {
    openStatement(DS, F, Insertable);
    const Expr *S = strip(Init);
    if (S->isPRValue() || isa<MaterializeTemporaryExpr>(Init->IgnoreParens()) ||
        !Init->isGLValue()) {
      // A reference to a temporary extends its life to the reference's.
      ValueId V = FE.tensor(Init);
      FE.I.bind(FE.key(VD), Name, V, Where, NameWhere, false);
      FE.I.endStatement();
      return;
    }
    std::optional<Slot> Target;
    if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S)) {
      if (auto C = FE.args().integer(CO->getCond())) {
        Target = FE.slotOf(*C ? CO->getTrueExpr() : CO->getFalseExpr());
      } else {
        FE.sideEffects(CO->getCond());
        Slot Either;
        Either.Known = false;
        Either.Display = "'" + Name + "'";
        Either.Why = "one of two tensors, chosen at run time";
        for (const Expr *Arm : {CO->getTrueExpr(), CO->getFalseExpr()})
          if (auto A = FE.slotOf(Arm); A && A->Known)
            Either.Candidates.push_back(A->Key);
        Target = Either;
      }
    } else if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S);
               OCE && OCE->getOperator() == OO_Subscript &&
               OCE->getNumArgs() == 2 &&
               isTensorVectorType(OCE->getArg(0)->getType())) {
      // `torch::Tensor &e = v[0];` names the vector's element.
      const auto *V = dyn_cast<DeclRefExpr>(strip(OCE->getArg(0)));
      auto K = FE.args().integer(OCE->getArg(1));
      if (V && K && *K >= 0) {
        Slot El;
        El.Vector = FE.resolveKey(V->getDecl());
        El.Index = static_cast<size_t>(*K);
        El.Key = El.Vector + "#" + std::to_string(*K);
        El.Display = V->getDecl()->getName().str() + "[" + std::to_string(*K) + "]";
        Target = El;
      }
    } else {
      Target = FE.slotOf(S);
    }
    if (!Target) {
      Slot Unknown;
      Unknown.Known = false;
      Unknown.Display = "'" + Name + "'";
      Unknown.Why = "a tensor the analysis does not follow";
      // A reference returned by a method may name any member of its object.
      if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S))
        if (const auto *Obj =
                dyn_cast<DeclRefExpr>(strip(MCE->getImplicitObjectArgument()))) {
          std::string Prefix = FE.resolveKey(Obj->getDecl()) + ".";
          for (const std::string &K : FE.I.keysWithPrefix(Prefix))
            Unknown.Candidates.push_back(K);
        }
      Target = Unknown;
    }
    FE.References[FE.key(VD)] = *Target;
    ValueId V = FE.readSlot(*Target, S);
    FE.I.note(Name, V, Where, NameWhere);
    FE.I.endStatement();
    return;
  }
  if (isTensorVectorType(T) && !T->isReferenceType()) {
    // A std::vector<Tensor> local (chunk/split/unbind results, a braced
    // list): its elements stay alive with it, under hidden names.
    openStatement(DS, F, Insertable);
    FE.ListScopes[FE.key(VD)] = FE.I.scopeDepth();
    FE.holdElements(FE.key(VD), FE.tensorList(Init), FE.TensorLists);
    FE.I.endStatement();
    return;
  }
  if (isTensorTupleType(T) && !T->isReferenceType()) {
    openStatement(DS, F, Insertable);
    FE.ListScopes[FE.key(VD)] = FE.I.scopeDepth();
    auto Tuple = FE.tensorTuple(Init);
    FE.holdElements(FE.key(VD), Tuple, FE.TensorTuples);
    if (!Tuple) {
      FE.sideEffects(Init);
      FE.I.totalsUnknown("the tensors of '" + Name + "' are not followed");
    }
    FE.I.endStatement();
    return;
  }
  // `auto result = lstm->forward(x)`: (output, (h_n, c_n)), kept as its
  // three tensors (recurrentValues reads them through the name).
  if (!T->isReferenceType() && !isTensorTupleType(T) && FE.modules().recurrentModule(Init)) {
    openStatement(DS, F, Insertable);
    FE.ListScopes[FE.key(VD)] = FE.I.scopeDepth();
    FE.holdElements(FE.key(VD), FE.modules().recurrentValues(Init), FE.TensorTuples);
    FE.I.endStatement();
    return;
  }
  if (T->isPointerType() && isTensorType(T->getPointeeType())) {
    openStatement(DS, F, Insertable);
    const Expr *S = strip(Init);
    Slot Target;
    Target.Known = false;
    Target.Display = "'*" + Name + "'";
    Target.Why = "a tensor the analysis does not follow";
    if (const auto *UO = dyn_cast<UnaryOperator>(S);
        UO && UO->getOpcode() == UO_AddrOf) {
      if (auto Sl = FE.slotOf(UO->getSubExpr()); Sl && Sl->Known) {
        Target = *Sl;
        FE.AddressTaken[Sl->Key] = Sl->Display;
      }
    } else if (const auto *NE = dyn_cast<CXXNewExpr>(S);
               NE && !NE->isArray() && NE->getConstructExpr() &&
               NE->getConstructExpr()->getNumArgs() == 1) {
      // `new torch::Tensor(...)`: a heap handle that holds its tensor until
      // deleted, whatever scope the pointer is in.
      ValueId V = FE.tensor(NE->getConstructExpr()->getArg(0));
      Target = Slot{};
      Target.Key = "heap@" + std::to_string(reinterpret_cast<uintptr_t>(NE));
      Target.Display = "*" + Name;
      FE.I.holdUntilReturn(Target.Key, V);
    } else {
      FE.sideEffects(Init);
    }
    FE.Pointers[FE.key(VD)] = Target;
    FE.I.endStatement();
    return;
  }
  if (const auto *LE = dyn_cast<LambdaExpr>(strip(Init))) {
    // The closure holds what it captures by copy, and what its init
    // captures compute, for as long as it lives.
    openStatement(DS, F, Insertable);
    unsigned K = 0;
    for (const LambdaCapture &C : LE->captures()) {
      ++K;
      if (!C.capturesVariable() || C.getCaptureKind() != LCK_ByCopy)
        continue;
      const auto *CV = dyn_cast<VarDecl>(C.getCapturedVar());
      if (!CV || !isTensorType(CV->getType()))
        continue;
      ValueId V = NoValue;
      if (CV->isInitCapture())
        V = FE.tensor(CV->getInit());
      else if (auto It = FE.I.lookup(FE.resolveKey(CV)); It != NoValue)
        V = It;
      if (V != NoValue)
        FE.I.hold(FE.key(VD) + ".capture" + std::to_string(K), V);
    }
    FE.I.endStatement();
    return;
  }
  const auto *RD = T->getAsCXXRecordDecl();
  if (const auto *IL = dyn_cast<InitListExpr>(strip(Init));
      IL && RD && RD->isAggregate() && !T->isReferenceType()) {
    // `Holder h{torch::randn(...)}`: each tensor member holds its tensor
    // as long as h lives.
    if (!hasTensorWork(Init))
      return;
    openStatement(DS, F, Insertable);
    unsigned K = 0;
    for (const FieldDecl *Field : RD->fields()) {
      if (K >= IL->getNumInits())
        break;
      const Expr *FI = IL->getInit(K++);
      if (isTensorType(Field->getType()) && !Field->getType()->isReferenceType())
        FE.I.hold(FE.key(VD) + "." + Field->getName().str(), FE.tensor(FI));
      else
        FE.sideEffects(FI);
    }
    FE.I.endStatement();
    return;
  }
  // An integer: its value as a size when nothing changes it later
  // (`auto B = x.size(0)`, `int64_t hd = C / n_heads`).
  if (T->isIntegerType() && !T->isBooleanType() && !T->isReferenceType()) {
    bindInteger(DS, VD, Init, F, Insertable);
    return;
  }
  // A module the analysis does not build (a user module, a layer holder
  // of a user Impl, std::make_shared<NetImpl>()) allocates its parameters
  // when constructed: the function's totals cannot leave them out.
  if (!T->isReferenceType())
    if (std::string Module = constructedModule(T, Init); !Module.empty()) {
      FE.I.totalsUnknown("constructing '" + Name + "' (" + Module +
                      ") allocates its parameters, which are not followed "
                      "(line " + std::to_string(Where.Line) + ")");
      // Methods called on it are followed with its constructor's
      // arguments, when every use leaves it as constructed (forward,
      // parameters(), train(), to(device)): a name rebound, a module
      // converted to another dtype or loaded from disk is not this one.
      ModuleUses Uses(VD);
      Uses.body(FE.FD.getBody());
      if (auto Obj = FE.modules().userObject(T, Init)) {
        // Not followed, and the callee says why rather than only that its
        // object's construction is unknown.
        if (FE.Mutated.count(cast<ValueDecl>(VD->getCanonicalDecl()))) {
          Obj->Ctor = nullptr;
          // The line is the declaration's: say so, so it does not read
          // as the assignment's.
          Obj->Why = "'" + Name + "' (constructed at line " +
                     std::to_string(Where.Line) +
                     ") is assigned again later, so which module it holds "
                     "is not followed";
        } else if (Uses.Mentions != Uses.Harmless) {
          Obj->Ctor = nullptr;
          Obj->Why = "'" + Name + "' (line " + std::to_string(Where.Line) +
                     ") is also used other than by forward(), parameters(), "
                     "train(), eval() or to(device) (passed to a function, "
                     "loaded from a file), so its parameters may not be the "
                     "ones its construction made";
        }
        FE.UserObjects[FE.key(VD)] = *Obj;
      }
    }
  // A list of sizes nothing changes later: its sizes, as a literal list's.
  // A c10::ArrayRef views the tensor's own sizes: only one whose tensor
  // no statement changes holds them.
  auto BindList = [&] {
    if (T->isReferenceType() || !isIntegerListType(T) || !VD->hasLocalStorage() ||
        !listNeverChanged(FE.FD.getBody(), VD))
      return;
    if (recordName(T) == "c10::ArrayRef") {
      const auto *MC = dyn_cast<CXXMemberCallExpr>(strip(Init));
      const auto *Of = MC ? dyn_cast<DeclRefExpr>(strip(MC->getImplicitObjectArgument()))
                          : nullptr;
      if (!Of || FE.Mutated.count(cast<ValueDecl>(Of->getDecl()->getCanonicalDecl())))
        return;
    }
    if (auto Sizes = FE.args().intList(Init))
      FE.ListVars[FE.key(VD)] = *Sizes;
  };
  // Other declarations may still run tensor ops (int64_t n = x.sum().item()).
  // Their temporaries matter for the peak, so evaluate tensor subexprs.
  // An object whose type can hold a tensor keeps what it is made from,
  // however it is made: `auto t = std::make_tuple(torch::sigmoid(x), 1);`,
  // `c10::optional<torch::Tensor> o = y;` (past y), a struct a helper
  // returns; the analysis does not follow it.
  auto MayKeepTensors = [&] {
    if (!T->isReferenceType() && mayHoldTensor(T) && mentionsTensor(Init))
      FE.I.totalsUnknown("'" + Name + "' may keep the tensors its initializer "
                         "makes or is given (line " +
                         std::to_string(Where.Line) + ")");
  };
  if (!hasTensorWork(Init)) {
    BindList();
    MayKeepTensors();
    return;
  }
  openStatement(DS, F, Insertable);
  size_t OpsBefore = FE.I.trace().Ops.size();
  FE.sideEffects(Init);
  BindList();
  // An object built by a constructor the analysis does not follow may
  // keep the tensors it was given.
  const auto *CE = dyn_cast<CXXConstructExpr>(strip(Init));
  bool TakesTensor = false;
  if (CE && RD && !isLibTorchDecl(RD) && !T->isReferenceType())
    for (const Expr *A : CE->arguments())
      TakesTensor |= isTensorType(A->getType());
  if (TakesTensor)
    FE.I.totalsUnknown("'" + Name + "' may keep the tensors its constructor "
                       "is given (line " + std::to_string(Where.Line) + ")");
  else
    MayKeepTensors();
  (void)OpsBefore;
  FE.I.endStatement();
}

} // namespace tma
