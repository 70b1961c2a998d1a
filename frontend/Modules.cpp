// torch::nn layers a function constructs and calls (issue 13):
//
//     torch::nn::Linear fc(784, 500);
//     torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 16, 3).stride(2));
//     torch::nn::Sequential seq(torch::nn::Linear(4, 8), torch::nn::ReLU());
//     auto h = fc->forward(x);   // or fc(x)
//     auto p = torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2))->forward(h);
//
// The layer's options are read from its constructor's arguments
// (OptionsChains.cpp: named by LibTorch's own headers, defaults from its
// TORCH_ARG fields); its parameters are storages the function allocates
// (default dtype, CPU, as reset() makes them) and holds while the module
// lives; forward is the functional op the layer runs (Layers.cpp) with
// those parameters, so the table's rule answers for it. A Sequential is
// the list of layers its constructor is given, run in order; a layer
// constructed inside the expression that runs it is a temporary: its
// parameters live until the statement ends, and it is in training mode.
//
// A module the function uses in any other way (moved to another dtype,
// assigned, passed to a call, push_back) is not followed: its forward is
// unknown with that reason.
#include "frontend/LayerEvaluator.h"
#include "frontend/CallFollower.h"
#include "frontend/StatementWalker.h"
#include "frontend/ModuleTracker.h"
#include "frontend/TrainingTracker.h"
#include "frontend/SymbolReader.h"
#include "frontend/ArgumentReader.h"
#include "frontend/ModuleUses.h"
#include "frontend/OptionsChains.h"

#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace tma {

namespace {

/// The ModuleHolder<Impl> base of a torch::nn holder type, or null.
const ClassTemplateSpecializationDecl *moduleHolderBase(QualType T) {
  const CXXRecordDecl *RD = T.getNonReferenceType()->getAsCXXRecordDecl();
  for (int Depth = 0; RD && RD->hasDefinition() && Depth < 4; ++Depth) {
    RD = RD->getDefinition();
    if (const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD);
        Spec && Spec->getQualifiedNameAsString() == "torch::nn::ModuleHolder")
      return Spec;
    if (RD->getNumBases() != 1)
      return nullptr;
    RD = RD->bases_begin()->getType()->getAsCXXRecordDecl();
  }
  return nullptr;
}

} // namespace

const Expr *throughCopies(const Expr *E) {
  for (E = strip(E); E; E = strip(E)) {
    if (const auto *CE = dyn_cast<CXXConstructExpr>(E);
        CE && CE->getNumArgs() == 1 && CE->getConstructor() &&
        CE->getConstructor()->isCopyOrMoveConstructor())
      E = CE->getArg(0);
    else if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
      E = FC->getSubExpr();
    else
      break;
  }
  return E;
}

const CXXConstructExpr *holderConstruction(const Expr *E) {
  return dyn_cast_or_null<CXXConstructExpr>(throughCopies(E));
}

const ValueDecl *namedDecl(const Expr *E) {
  E = throughCopies(E);
  if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E))
    return DRE->getDecl();
  if (const auto *ME = dyn_cast_or_null<MemberExpr>(E);
      ME && isa<CXXThisExpr>(ME->getBase()->IgnoreParenImpCasts()))
    return ME->getMemberDecl();
  return nullptr;
}

bool derivesFromModule(const CXXRecordDecl *RD, int Depth) {
  if (!RD || !RD->hasDefinition() || Depth > 8)
    return false;
  for (const CXXBaseSpecifier &B : RD->getDefinition()->bases()) {
    const CXXRecordDecl *Base = B.getType()->getAsCXXRecordDecl();
    if (!Base)
      continue;
    if (Base->getQualifiedNameAsString() == "torch::nn::Module" ||
        derivesFromModule(Base, Depth + 1))
      return true;
  }
  return false;
}

std::string constructedModule(QualType T, const Expr *Init) {
  T = T.getNonReferenceType();
  // std::shared_ptr<NetImpl> from std::make_shared: a new module.
  if (const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(
          T->getAsCXXRecordDecl());
      Spec && Spec->getQualifiedNameAsString() == "std::shared_ptr") {
    const CXXRecordDecl *Pointee =
        Spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
    const auto *Call = dyn_cast_or_null<CallExpr>(throughCopies(Init));
    const FunctionDecl *Callee = Call ? Call->getDirectCallee() : nullptr;
    if (derivesFromModule(Pointee) && Callee && Callee->getIdentifier() &&
        Callee->getName() == "make_shared")
      return Pointee->getName().str();
    return "";
  }
  const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
  if (!RD || (!derivesFromModule(RD) && !moduleHolderBase(T)))
    return "";
  // A copy shares the module; an empty holder ({nullptr}) has none.
  const CXXConstructExpr *CE = holderConstruction(Init);
  if (!CE || CE->getConstructor()->isCopyOrMoveConstructor())
    return "";
  if (CE->getNumArgs() == 1 &&
      strip(CE->getArg(0))->getType()->isNullPtrType())
    return "";
  return RD->getName().str();
}

std::optional<std::string> moduleLayer(QualType T) {
  const auto *Base = moduleHolderBase(T);
  if (!Base)
    return std::nullopt;
  std::string Name = recordName(T);
  // The holder seen through its base (the object of `fc->forward(x)` is
  // converted to ModuleHolder<LinearImpl>): named by its Impl.
  if (Name.rfind("torch::nn::ModuleHolder", 0) == 0) {
    Name = Base->getTemplateArgs()[0].getAsType()
               ->getAsCXXRecordDecl()
               ->getQualifiedNameAsString();
    if (Name.size() < 4 || Name.compare(Name.size() - 4, 4, "Impl") != 0)
      return std::nullopt;
    Name.resize(Name.size() - 4);
  }
  if (Name.rfind("torch::nn::", 0) != 0)
    return std::nullopt;
  return Name.substr(11);
}

FunctionEvaluator::ModuleValue
ModuleTracker::layerFromConstruction(QualType Holder, const Expr *Init,
                                         const std::string &Name) {
  ModuleValue M;
  M.Layer = *moduleLayer(Holder);
  M.Name = Name;
  auto Unknown = [&](const std::string &Why) {
    M.Why = "module '" + Name + "' (" + M.Layer + "): " + Why;
    return M;
  };
  if (!lookupLayer(M.Layer))
    return Unknown("this layer is not modelled yet");
  const CXXConstructExpr *CE = holderConstruction(Init);
  if (!CE) {
    if (std::optional<ModuleValue> Built = layerFromHelper(Holder, Init, Name))
      return *Built;
    return Unknown("not constructed here");
  }
  llvm::SmallVector<const Expr *, 4> Args;
  for (const Expr *A : CE->arguments())
    if (!isDefaultArg(A))
      Args.push_back(A);
  // The options class: the type of the Impl's `options` member.
  const auto *Base = moduleHolderBase(Holder);
  const CXXRecordDecl *Impl =
      Base->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
  QualType OptionsType;
  if (Impl && Impl->hasDefinition()) {
    for (const CXXRecordDecl *RD = Impl->getDefinition(); RD && OptionsType.isNull();) {
      for (const FieldDecl *Fd : RD->fields())
        if (Fd->getName() == "options")
          OptionsType = Fd->getType();
      RD = RD->getNumBases() == 1
               ? RD->bases_begin()->getType()->getAsCXXRecordDecl()
               : nullptr;
      if (RD)
        RD = RD->getDefinition();
    }
  }
  std::optional<NamedArgs> Options;
  if (Args.size() == 1 && Args[0]->getType()->isNullPtrType())
    return Unknown("an empty holder ({nullptr})");
  if (isLayerKind(M.Layer, LayerKind::Sequential)) {
    // SequentialImpl(Modules&&... modules): each argument a layer, named
    // "0", "1", ... as push_back names them; their parameters are the
    // Sequential's, under those names.
    for (size_t K = 0; K < Args.size(); ++K)
      if (std::string Why = appendSequentialLayer(
              M, Args[K],
              "its argument " + std::to_string(K) +
                  " is not a torch::nn layer the analysis reads (a named or "
                  "AnyModule list)");
          !Why.empty()) {
        M.Why = Why;
        return M;
      }
    return M;
  }
  if (OptionsType.isNull() && Args.empty())
    Options = NamedArgs(); // Sigmoid, Tanh, Identity: no options
  else if (Args.size() == 1 && isNNOptionsType(Args[0]->getType()))
    Options = readOptionsChain(FE, Args[0]);
  else if (!OptionsType.isNull())
    Options = readOptionsFromArguments(FE, OptionsType, Args);
  if (!Options)
    return Unknown("its constructor's arguments are not read");
  if (!Options->Complete)
    return Unknown(Options->Why);
  M.Options = *Options;
  if (std::string Why = layerParameters(M); !Why.empty())
    return Unknown(Why);
  // reset() makes the parameters with torch::empty, which throws on a
  // negative size: an integer symbol that is a parameter's size is a size,
  // as a factory's is (ArgBinder).
  // So are a recurrent layer's sizes when its parameters are not listed,
  // and its symbolic layer count: h_n has that many rows per direction
  // (and forward throws without a layer).
  std::vector<SymSize> Sizes;
  for (const auto &Param : M.ParamShapes)
    Sizes.insert(Sizes.end(), Param.second.begin(), Param.second.end());
  if (auto R = recurrentLayers(M))
    Sizes.insert(Sizes.end(), {R->InputSize, R->HiddenSize, R->NumLayers});
  for (const SymSize &X : Sizes)
    if (auto N = X.symbolName();
        N && FE.Env->info(*N) && FE.Env->info(*N)->Kind == SymbolKind::Integer)
      FE.Env->markSizeLike(*N);
  return M;
}

std::string ModuleTracker::appendSequentialLayer(ModuleValue &M,
                                                 const Expr *Layer,
                                                 const std::string &NotLayer) {
  std::string Index = std::to_string(M.Children.size());
  if (!moduleLayer(Layer->getType()))
    return "module '" + M.Name + "' (" + M.Layer + "): " + NotLayer;
  ModuleValue Child = layerFromConstruction(Layer->getType(), Layer,
                                            M.Name + "[" + Index + "]");
  if (!Child.Why.empty())
    return Child.Why;
  if (!Child.ParamsWhy.empty() && M.ParamsWhy.empty())
    M.ParamsWhy = "its layer " + Index + " (" + Child.Layer + "): " + Child.ParamsWhy;
  for (const auto &[P, Sizes] : Child.ParamShapes) {
    M.ParamShapes.push_back({Index + "." + P, Sizes});
    if (Child.Buffers.count(P))
      M.Buffers.insert(Index + "." + P);
    if (Child.paramType(P) != DType::Float32)
      M.ParamTypes[Index + "." + P] = Child.paramType(P);
  }
  M.Children.push_back(std::move(Child));
  return "";
}

std::optional<FunctionEvaluator::ModuleValue>
ModuleTracker::layerFromHelper(QualType Holder, const Expr *Init,
                                   const std::string &Name) {
  const auto *Call = dyn_cast_or_null<CallExpr>(throughCopies(Init));
  const FunctionDecl *Def =
      Call ? FE.calls().followedDefinition(Call->getDirectCallee()) : nullptr;
  if (!Def || isa<CXXMethodDecl>(Def) || Call->getNumArgs() != Def->getNumParams())
    return std::nullopt;
  // One statement, `return <layer>;`: anything else (locals, branches)
  // would need the helper run, not read.
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Def->getBody());
  const auto *Return = Body && Body->size() == 1
                           ? dyn_cast<ReturnStmt>(Body->body_front())
                           : nullptr;
  if (!Return || !Return->getRetValue() || FE.LayerHelperDepth >= 4)
    return std::nullopt;
  // The arguments in the caller's terms, bound to the helper's integer
  // parameters while its return expression is read; a parameter of
  // another type, or one not derived, leaves what reads it unknown.
  std::map<std::string, SymSize> Outer = FE.IntVars;
  for (unsigned K = 0; K < Def->getNumParams(); ++K) {
    const ParmVarDecl *P = Def->getParamDecl(K);
    QualType PT = P->getType().getNonReferenceType();
    if (!PT->isIntegerType() || PT->isBooleanType() || PT->isEnumeralType())
      continue;
    std::optional<SymSize> V = FE.symbols().sizeValue(Call->getArg(K));
    if (V)
      V = FE.symbols().convertInteger(*V, PT);
    if (V)
      FE.IntVars[FE.key(P)] = *V;
    else
      FE.IntVars.erase(FE.key(P));
  }
  ++FE.LayerHelperDepth;
  ModuleValue M = layerFromConstruction(Holder, Return->getRetValue(), Name);
  --FE.LayerHelperDepth;
  FE.IntVars = std::move(Outer);
  if (!M.Why.empty())
    M.Why += " (in '" + Def->getNameAsString() + "')";
  return M;
}

std::optional<ValueId> ModuleTracker::parameterRead(const MemberExpr *ME) {
  const auto *Arrow = dyn_cast_or_null<CXXOperatorCallExpr>(strip(ME->getBase()));
  if (!Arrow || Arrow->getOperator() != OO_Arrow || Arrow->getNumArgs() != 1 ||
      !ME->getMemberDecl()->getIdentifier())
    return std::nullopt;
  const ValueDecl *D = namedDecl(Arrow->getArg(0));
  auto It = D ? FE.Modules.find(FE.key(D)) : FE.Modules.end();
  if (It == FE.Modules.end() || !It->second.Why.empty())
    return std::nullopt;
  auto P = It->second.Params.find(ME->getMemberDecl()->getName().str());
  if (P == It->second.Params.end())
    return std::nullopt;
  return P->second;
}

void ModuleTracker::declareModule(const VarDecl *VD, const DeclStmt *DS,
                                      Flow F, bool Insertable) {
  std::string Name = VD->getName().str();
  std::string Layer = *moduleLayer(VD->getType());
  FE.ModuleOrder.push_back(FE.key(VD));
  SourceSpan Where = FE.span(VD->getSourceRange());
  // A layer not followed still allocates its parameters, in sizes not
  // known here.
  auto ParametersNotFollowed = [&] {
    if (!constructedModule(VD->getType(), VD->getInit()).empty())
      FE.I.totalsUnknown("constructing '" + Name + "' (" + Layer +
                      ") allocates parameters that are not followed (line " +
                      std::to_string(Where.Line) + ")");
  };
  auto Unknown = [&](const std::string &Why) {
    ModuleValue M;
    M.Layer = Layer;
    M.Name = Name;
    M.Where = Where;
    M.Why = "module '" + Name + "' (" + Layer + "): " + Why;
    FE.Modules[FE.key(VD)] = M;
    ParametersNotFollowed();
  };
  if (F.InLoop || F.InBranch)
    return Unknown("constructed in a loop or a branch");
  ModuleUses Uses(VD);
  Uses.body(FE.FD.getBody());
  if (Uses.Mentions != Uses.Harmless) {
    CallsOn PushBacks(VD, {"push_back", "extend", "insert"});
    PushBacks.TraverseStmt(const_cast<Stmt *>(FE.FD.getBody()));
    if (!PushBacks.Calls.empty())
      return Unknown("layers added to it after its construction (push_back) "
                     "are not followed yet");
    return Unknown("used other than by forward(), so its parameters may "
                   "have changed");
  }
  ModuleValue M = layerFromConstruction(
      VD->getType(), VD->hasInit() ? VD->getInit() : nullptr, Name);
  M.Where = Where;
  M.Local = VD;
  if (!M.Why.empty()) {
    FE.Modules[FE.key(VD)] = M;
    ParametersNotFollowed();
    return;
  }
  // to(device) to the CPU, where the parameters are made, moves nothing
  // (`model->to(device)` after --cuda-available=no picked the CPU).
  bool StaysOnCpu = true;
  for (const CXXMemberCallExpr *To : Uses.DeviceMoveCalls) {
    auto D = To->getNumArgs() ? FE.args().device(To->getArg(0)) : std::nullopt;
    StaysOnCpu = StaysOnCpu && D && D->Kind == DeviceKind::CPU;
  }
  FE.statements().openStatement(DS, F, Insertable);
  allocateParameters(M, VD->getInit(), FE.key(VD),
                     Uses.DeviceMoves && !StaysOnCpu
                         ? "module '" + Name + "' is moved to a device (to(device))"
                         : "");
  FE.I.endStatement();
  // Its parameters require grad (register_parameter), whatever the mode:
  // followed as autograd leaves while the code only runs the module, so
  // nothing else (parameters(), a read of fc->weight) may have turned that
  // off, and the function's own scope holds it (a graph that outlives an
  // inner block would keep the parameters through AccumulateGrad).
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FE.FD.getBody());
  bool FunctionScope =
      Body && std::find(Body->body_begin(), Body->body_end(), DS) != Body->body_end();
  if (FunctionScope && onlyRun(VD, StaysOnCpu ? Uses.DeviceMoves : 0)) {
    for (const auto &[PName, V] : M.Params)
      if (!M.Buffers.count(PName))
        FE.I.markGradLeaf(V);
    M.ParamsOnTape = true;
  }
  FE.Modules[FE.key(VD)] = M;
}

void ModuleTracker::allocateParameters(ModuleValue &M, const Expr *Init,
                                           const std::string &HoldKey,
                                           const std::string &DeviceMoved) {
  if (!M.ParamsWhy.empty())
    FE.I.totalsUnknown("module '" + M.Name + "' (" + M.Layer + ") allocates " +
                    "parameters the analysis does not list: " + M.ParamsWhy);
  for (const auto &[PName, Sizes] : M.ParamShapes) {
    OpOutcome Out =
        factory(Sizes, M.paramType(PName), Device{}, FillKind::Filled);
    Out.Note = M.Layer + "'s " + PName +
               (M.Buffers.count(PName) ? " (buffer)" : " (default dtype)");
    Out.MakesParameter = !M.Buffers.count(PName);
    // A later to(device) moves it: its size stays, its device is unknown.
    if (!DeviceMoved.empty()) {
      Out.Value.Dev.reset();
      Out.Value.markUnknown(DeviceMoved);
    }
    ValueId V = FE.apply(M.Layer, Init, {}, Out);
    if (!HoldKey.empty())
      FE.I.hold(HoldKey + "." + PName, V);
    M.Params[PName] = V;
  }
}

std::optional<bool> ModuleTracker::trainingMode(const ModuleValue &M,
                                                    const Expr *Use,
                                                    std::string &Why) {
  if (M.Temporary)
    return true;
  if (!M.Local) {
    Why = "its training mode is set outside this function";
    return std::nullopt;
  }
  // Constructed in training mode; a mode call counts when it is a
  // statement of the body itself (so it runs on every path) before Use.
  CallsOn Calls(M.Local, {"eval", "train"});
  Calls.TraverseStmt(const_cast<Stmt *>(FE.FD.getBody()));
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FE.FD.getBody());
  bool Training = true;
  for (const CXXMemberCallExpr *C : Calls.Calls) {
    bool TopLevel = false;
    for (const Stmt *St : Body ? Body->body() : llvm::ArrayRef<Stmt *>())
      if (const auto *SE = dyn_cast<Expr>(St); SE && strip(SE) == C)
        TopLevel = true;
    if (!TopLevel) {
      Why = "its mode is set in a branch, a loop or an expression";
      return std::nullopt;
    }
    if (!FE.SM.isBeforeInTranslationUnit(C->getBeginLoc(), Use->getBeginLoc()))
      continue;
    if (C->getMethodDecl()->getName() == "eval") {
      Training = false;
    } else if (C->getNumArgs() == 0 || isDefaultArg(C->getArg(0))) {
      Training = true;
    } else {
      auto B = FE.args().foldInteger(C->getArg(0));
      if (!B) {
        Why = "the mode train() is given could not be derived";
        return std::nullopt;
      }
      Training = *B != 0;
    }
  }
  return Training;
}

std::optional<ValueId>
ModuleTracker::moduleForward(const Expr *E, const FunctionDecl *Callee,
                                 const Expr *Object,
                                 llvm::ArrayRef<const Expr *> Args) {
  // forward(input) and ConvTranspose's forward(input, output_size = {})
  // with the default; a loss's forward(input, target).
  bool InputAndTarget = Args.size() == 2 && isTensorType(Args[1]->getType()) &&
                        !isDefaultArg(Args[1]);
  if (!Callee || !Object || Args.empty() ||
      !isTensorType(Args[0]->getType()) ||
      (!InputAndTarget &&
       !std::all_of(Args.begin() + 1, Args.end(),
                    [](const Expr *A) { return isDefaultArg(A); })))
    return std::nullopt;
  std::string Method = calleeName(Callee);
  if (Method != "forward" && Method != "operator()")
    return std::nullopt;
  const Expr *O = strip(Object);
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(O);
      OCE && OCE->getOperator() == OO_Arrow && OCE->getNumArgs() == 1)
    O = strip(OCE->getArg(0));
  ModuleValue Temporary;
  const ModuleValue *Found = nullptr;
  if (const ValueDecl *D = namedDecl(O)) {
    auto It = FE.Modules.find(FE.key(D));
    if (It == FE.Modules.end())
      return std::nullopt;
    Found = &It->second;
  } else if (holderConstruction(O) && moduleLayer(O->getType())) {
    // `torch::nn::ReLU()(x)`, `torch::nn::MaxPool2d(opts)->forward(x)`: a
    // layer built for this call; its parameters are temporaries of the
    // statement.
    Temporary = layerFromConstruction(O->getType(), O,
                                      "torch::nn::" + *moduleLayer(O->getType()));
    Temporary.Temporary = true;
    if (Temporary.Why.empty())
      allocateParameters(Temporary, O, "", "");
    Found = &Temporary;
  } else {
    return std::nullopt;
  }
  const ModuleValue &M = *Found;
  // GRUCell's forward(input[, hx]): one tensor (recurrentValues).
  if (isLayerKind(M.Layer, LayerKind::RecurrentCell)) {
    if (auto V = recurrentValues(E); V && V->size() == 1)
      return V->front();
    return std::nullopt;
  }
  if (InputAndTarget != isLayerKind(M.Layer, LayerKind::Loss))
    return std::nullopt;
  ValueId In = FE.tensor(Args[0]);
  if (InputAndTarget) {
    ValueId Target = FE.tensor(Args[1]);
    if (!M.Why.empty())
      return FE.unmodelledCall(M.Layer, E, {In, Target}, M.Why);
    return LayerEvaluator(FE, E, Callee).loss(M, In, Target);
  }
  if (!M.Why.empty())
    return FE.unmodelledCall(M.Layer, E, {In}, M.Why);
  std::string Why;
  std::optional<bool> Training = trainingMode(M, E, Why);
  size_t OpsBefore = FE.I.trace().Ops.size();
  ValueId Out =
      LayerEvaluator(FE, E, Callee).forward(M, M.Params, "", In, Training, Why);
  gradientsKeepIntermediates(M, E, OpsBefore);
  // The summary's forward outputs, per module the function names.
  if (const ValueDecl *D = namedDecl(O))
    FE.Modules[FE.key(D)].Forwards.push_back({FE.span(E->getSourceRange()).Line, Out});
  return Out;
}

/// E without the c10::optional (std::optional in 2.x) it is converted to
/// (an LSTM's hx: `lstm->forward(x, std::make_tuple(h, c))`).
static const Expr *throughOptional(const Expr *E) {
  E = strip(E);
  if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(E);
      CE && CE->getNumArgs() == 1) {
    std::string R = recordName(CE->getType());
    if (R == "c10::optional" || R == "std::optional")
      return strip(CE->getArg(0));
  }
  return E;
}

FunctionEvaluator::ModuleValue *
ModuleTracker::recurrentModule(const Expr *S) {
  const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(strip(S));
  const CXXMethodDecl *MD = MC ? MC->getMethodDecl() : nullptr;
  if (!MD || calleeName(MD) != "forward" || MC->getNumArgs() < 1)
    return nullptr;
  const Expr *O = strip(MC->getImplicitObjectArgument());
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(O);
      OCE && OCE->getOperator() == OO_Arrow && OCE->getNumArgs() == 1)
    O = strip(OCE->getArg(0));
  const ValueDecl *D = namedDecl(O);
  auto It = D ? FE.Modules.find(FE.key(D)) : FE.Modules.end();
  if (It == FE.Modules.end() ||
      (!isLayerKind(It->second.Layer, LayerKind::Recurrent) &&
       !isLayerKind(It->second.Layer, LayerKind::RecurrentCell)))
    return nullptr;
  return &It->second;
}

std::optional<std::vector<ValueId>>
ModuleTracker::recurrentValues(const Expr *S) {
  // A local holding an LSTM's (output, (h_n, c_n)) (declareVariable keeps
  // its three tensors as a tuple's).
  if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(strip(S))) {
    auto It = FE.TensorTuples.find(FE.resolveKey(DRE->getDecl()));
    if (isTensorTupleType(DRE->getType()) || It == FE.TensorTuples.end() ||
        It->second.size() != 3 || FE.changedInPart(DRE->getDecl()))
      return std::nullopt;
    return It->second;
  }
  ModuleValue *Layer = recurrentModule(S);
  if (!Layer)
    return std::nullopt;
  const auto *MC = cast<CXXMemberCallExpr>(strip(S));
  if (auto Done = FE.EvaluatedTuples.find(MC); Done != FE.EvaluatedTuples.end())
    return Done->second;
  const ModuleValue &M = *Layer;
  // (output, (h_n, c_n)) or (output, h_n); a cell's (h_1, c_1) or h_1.
  const LayerSpec &Spec = *lookupLayer(M.Layer);
  size_t Count = recurrentOutputs(Spec);
  ValueId In = FE.tensor(MC->getArg(0));
  std::string Module = "module '" + M.Name + "' (" + M.Layer + "): ";
  // forward(input, hx): an LSTM's (h_0, c_0) as a std::tuple (through the
  // optional it converts to), a GRU's h_0 as a tensor.
  std::vector<ValueId> State;
  std::string StateWhy;
  if (MC->getNumArgs() > 1 && !isDefaultArg(MC->getArg(1))) {
    const Expr *H = throughOptional(MC->getArg(1));
    std::optional<std::vector<ValueId>> Tuple;
    if (isTensorType(H->getType()))
      Tuple = std::vector<ValueId>{FE.tensor(H)};
    else if (isTensorTupleType(H->getType()))
      Tuple = FE.tensorTuple(H);
    if (Tuple && std::all_of(Tuple->begin(), Tuple->end(),
                             [](ValueId V) { return V >= 0; }))
      State = *Tuple;
    else
      StateWhy = Module + "its initial state (hx) is not followed";
  }
  std::vector<ValueId> Inputs = {In};
  Inputs.insert(Inputs.end(), State.begin(), State.end());
  std::vector<TensorValue> StateValues;
  for (ValueId V : State)
    StateValues.push_back(FE.I.value(V));
  // Output, h_n and c_n are distinct tensors whatever is unknown of them:
  // one op, then a value of its own for each other element.
  auto Others = [&](std::vector<ValueId> &Values, const std::string &Why) {
    while (Values.size() < Count)
      Values.push_back(FE.I.unknown(M.Layer + " element " + std::to_string(Values.size()),
                                 Why, FE.span(MC->getSourceRange())));
  };
  auto AllUnknown = [&](const std::string &Why) {
    std::vector<ValueId> Values = {FE.unmodelledCall(M.Layer, MC, Inputs, Why)};
    Others(Values, Why);
    return Values;
  };
  std::optional<RecurrentLayers> R = recurrentLayers(M);
  std::optional<RecurrentCell> Cell = recurrentCell(Spec, M.Options);
  std::vector<ValueId> Values;
  if (!M.Why.empty()) {
    Values = AllUnknown(M.Why);
  } else if (!StateWhy.empty()) {
    Values = AllUnknown(StateWhy);
  } else if (!R && !Cell) {
    Values = AllUnknown(Module + "its options could not be derived");
  } else {
    std::vector<OpOutcome> Outs =
        R ? recurrentForward(FE.I.value(In), *R, FE.Opts.Version, StateValues)
          : cellForward(FE.I.value(In), *Cell, FE.Opts.Version, StateValues);
    for (const OpOutcome &Out : Outs)
      Values.push_back(FE.apply(M.Layer, MC, Inputs, Out));
    if (Values.size() != Count) { // one Throws or Unknown outcome
      if (Outs.front().Kind == OpKind::Throws)
        Values.assign(Count, Values.front()); // nothing runs after it
      else
        Others(Values, Outs.front().Value.UnknownReason);
    }
    gradientsKeepIntermediates(M, MC, FE.I.trace().Ops.size());
  }
  Layer->Forwards.push_back({FE.span(MC->getSourceRange()).Line, Values.front()});
  FE.EvaluatedTuples[MC] = Values;
  return Values;
}

bool ModuleTracker::onlyRun(const VarDecl *VD, unsigned StayingMoves) const {
  struct Uses : RecursiveASTVisitor<Uses> {
    const VarDecl *VD;
    FunctionEvaluator *FE;
    unsigned Mentions = 0, Runs = 0;
    bool VisitDeclRefExpr(DeclRefExpr *E) {
      Mentions += E->getDecl() == VD;
      return true;
    }
    // fc(x), fc->forward(x), fc->train(), fc->eval().
    bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
      if (E->getOperator() == OO_Call && E->getNumArgs() >= 1 &&
          namedDecl(E->getArg(0)) == VD)
        ++Runs;
      return true;
    }
    // torch::optim::SGD opt(fc->parameters(), ...): the optimizer holds
    // handles to the parameters; step() and zero_grad() change them in
    // place, which the tape's leaves follow (Training.cpp).
    bool VisitCXXConstructExpr(CXXConstructExpr *E) {
      if (E->getNumArgs() >= 1 && TrainingTracker::isOptimizerType(E->getType()) &&
          TrainingTracker::parametersOwner(*FE, E->getArg(0)) == VD)
        ++Runs;
      return true;
    }
  } U;
  U.VD = VD;
  U.FE = &FE;
  U.TraverseStmt(const_cast<Stmt *>(FE.FD.getBody()));
  CallsOn Methods(VD, {"forward", "train", "eval"});
  Methods.TraverseStmt(const_cast<Stmt *>(FE.FD.getBody()));
  return U.Mentions == U.Runs + Methods.Calls.size() + StayingMoves;
}

void ModuleTracker::gradientsKeepIntermediates(const ModuleValue &M,
                                                   const Expr *E,
                                                   size_t OpsBefore) {
  // The tape follows what the forward's ops save when each parameter is
  // an input of one of them (a layer run as its table op); a forward
  // that uses them inside one outcome (a recurrent layer) it cannot see.
  if (M.ParamsOnTape) {
    const auto &Ops = FE.I.trace().Ops;
    bool EveryParameterRead = true;
    for (const auto &[PName, V] : M.Params) {
      if (M.Buffers.count(PName))
        continue;
      bool Read = false;
      for (size_t K = OpsBefore; K < Ops.size() && !Read; ++K)
        Read = std::count(Ops[K].Inputs.begin(), Ops[K].Inputs.end(), V) > 0;
      EveryParameterRead = EveryParameterRead && Read;
    }
    if (EveryParameterRead)
      return;
  }
  bool Trainable = !M.ParamsWhy.empty() ||
                   std::any_of(M.ParamShapes.begin(), M.ParamShapes.end(),
                               [&](const auto &P) { return !M.Buffers.count(P.first); });
  if (Trainable && !gradModeOffAt(E))
    FE.I.totalsUnknown("'" + M.Name + "' (line " +
                    std::to_string(FE.span(E->getSourceRange()).Line) +
                    ") runs with gradients on: autograd keeps the tensors its "
                    "backward needs, which the totals do not follow");
}

bool ModuleTracker::gradModeOffAt(const Expr *E) const {
  const auto *MD = dyn_cast<CXXMethodDecl>(&FE.FD);
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FE.FD.getBody());
  if ((MD && !MD->isStatic()) || !Body || !E)
    return false;
  for (const Stmt *S : Body->body()) {
    if (!FE.SM.isBeforeInTranslationUnit(S->getEndLoc(), E->getBeginLoc()))
      return false;
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<VarDecl>(D)) {
          std::string R = recordName(VD->getType());
          if (R == "c10::NoGradGuard" || R == "c10::InferenceMode")
            return true;
        }
  }
  return false;
}

void FunctionEvaluator::ModuleValue::addParameters(const std::string &Prefix,
                                                  ModuleSummary &S) const {
  if (!ParamsWhy.empty()) {
    if (ParamElements) {
      S.ParameterElements = addSizes(S.ParameterElements, *ParamElements);
      S.ParameterBytes = addSizes(
          S.ParameterBytes, mulSizes(*ParamElements, SymSize(itemSize(DType::Float32))));
      return;
    }
    S.ParameterElements.reset();
    S.ParameterBytes.reset();
    if (S.Why.empty())
      S.Why = (Prefix.empty() ? "" : "'" + Prefix.substr(0, Prefix.size() - 1) + "': ") +
              ParamsWhy;
    return;
  }
  for (const auto &[PName, Sizes] : ParamShapes) {
    if (Buffers.count(PName))
      continue; // buffers() holds it, not parameters()
    DType Type = paramType(PName);
    S.Parameters.push_back({Prefix + PName, Sizes, Type});
    S.ParameterElements = addSizes(S.ParameterElements, checkedNumel(Sizes));
    S.ParameterBytes = addSizes(S.ParameterBytes, denseBytes(Sizes, Type));
  }
}

std::vector<ModuleSummary>
ModuleTracker::moduleSummaries() const {
  std::vector<ModuleSummary> Out;
  if (FE.ObjectModule)
    Out.push_back(*FE.ObjectModule);
  std::optional<std::string> Training = FE.training().trainingScope();
  for (const std::string &K : FE.ModuleOrder) {
    auto It = FE.Modules.find(K);
    if (It == FE.Modules.end())
      continue;
    const ModuleValue &M = It->second;
    ModuleSummary S;
    S.Name = M.Name;
    S.Layer = M.Layer;
    S.Parent = M.Member ? "this" : "";
    S.Where = M.Where;
    S.Forwards = M.Forwards;
    S.Why = M.Why;
    if (M.Why.empty()) {
      S.ParameterElements = S.ParameterBytes = SymSize(0);
      M.addParameters("", S);
      if (!S.ParameterBytes && S.Why.empty())
        S.Why = "a parameter's size does not fit in int64";
    }
    if (Training && M.Local)
      FE.training().summarizeTraining(K, S, *Training);
    Out.push_back(std::move(S));
  }
  return Out;
}

} // namespace tma
