// torch::nn layers a function constructs and calls (issue 13):
//
//     torch::nn::Linear fc(784, 500);
//     torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 16, 3).stride(2));
//     auto h = fc->forward(x);   // or fc(x)
//
// The layer's options are read from its constructor's arguments
// (OptionsChains.cpp: named by LibTorch's own headers, defaults from its
// TORCH_ARG fields); its parameters are storages the function allocates
// (default dtype, CPU, as reset() makes them) and holds while the module
// lives; forward is the functional op the layer runs (linear, conv2d)
// with those parameters, so the table's rule answers for it.
//
// A module the function uses in any other way (moved to another dtype or
// device, assigned, passed to a call) is not followed: its forward is
// unknown with that reason.
#include "frontend/FunctionEvaluator.h"
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

/// The layers whose parameters and forward are modelled, by holder name.
bool modelledLayer(const std::string &Layer) {
  return Layer == "Linear" || Layer == "Conv1d" || Layer == "Conv2d" ||
         Layer == "Conv3d";
}

ArgValue tensorArgument(ValueId Id, const TensorValue &V) {
  ArgValue A;
  A.K = ArgValue::Kind::Tensor;
  A.Type = ArgType::Tensor;
  A.Tensor = Id;
  A.TV = V;
  return A;
}

ArgValue listArgument(const Shape &L) {
  ArgValue A;
  A.K = ArgValue::Kind::IntList;
  A.Type = ArgType::IntList;
  A.List = L;
  return A;
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

std::optional<int64_t> batchedInputRank(const std::string &Layer) {
  if (Layer == "Linear")
    return 2;
  if (Layer == "Conv1d")
    return 3;
  if (Layer == "Conv2d")
    return 4;
  if (Layer == "Conv3d")
    return 5;
  return std::nullopt;
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
FunctionEvaluator::layerFromConstruction(QualType Holder, const Expr *Init,
                                         const std::string &Name) {
  ModuleValue M;
  M.Layer = *moduleLayer(Holder);
  M.Name = Name;
  auto Unknown = [&](const std::string &Why) {
    M.Why = "module '" + Name + "' (" + M.Layer + "): " + Why;
    return M;
  };
  if (!modelledLayer(M.Layer))
    return Unknown("this layer is not modelled yet");
  const CXXConstructExpr *CE = holderConstruction(Init);
  if (!CE)
    return Unknown("not constructed here");
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
  if (Args.size() == 1 && isNNOptionsType(Args[0]->getType()))
    Options = readOptionsChain(*this, Args[0]);
  else if (!OptionsType.isNull())
    Options = readOptionsFromArguments(*this, OptionsType, Args);
  if (!Options)
    return Unknown("its constructor's arguments are not read");
  if (!Options->Complete)
    return Unknown(Options->Why);
  M.Options = *Options;

  // Its parameters, as reset() creates them.
  auto Int = [&](const char *N) -> std::optional<SymSize> {
    auto It = M.Options.Values.find(N);
    return It == M.Options.Values.end() ? std::nullopt : It->second.size();
  };
  auto Flag = [&](const char *N) -> std::optional<bool> {
    auto It = M.Options.Values.find(N);
    if (It == M.Options.Values.end() || It->second.K != ArgValue::Kind::Bool)
      return std::nullopt;
    return It->second.Bool;
  };
  std::optional<bool> Bias = Flag("bias");
  if (M.Layer == "Linear") {
    auto In = Int("in_features"), Out = Int("out_features");
    if (!In || !Out || !Bias)
      return Unknown("its features or bias could not be derived");
    M.ParamShapes.push_back({"weight", {*Out, *In}});
    if (*Bias)
      M.ParamShapes.push_back({"bias", {*Out}});
  } else {
    auto In = Int("in_channels"), Out = Int("out_channels"),
         Groups = Int("groups");
    auto K = M.Options.Values.find("kernel_size");
    if (!In || !Out || !Groups || !Bias || K == M.Options.Values.end() ||
        K->second.K != ArgValue::Kind::IntList || !Groups->constant() ||
        *Groups->constant() < 1)
      return Unknown("its channels, kernel size, groups or bias could not "
                     "be derived");
    Shape W = {*Out, SymSize::floorDiv(*In, *Groups)};
    W.insert(W.end(), K->second.List.begin(), K->second.List.end());
    M.ParamShapes.push_back({"weight", W});
    if (*Bias)
      M.ParamShapes.push_back({"bias", {*Out}});
  }
  // reset() makes the parameters with torch::empty, which throws on a
  // negative size: an integer symbol that is a parameter's size is a size,
  // as a factory's is (ArgBinder).
  for (const auto &Param : M.ParamShapes)
    for (const SymSize &X : Param.second)
      if (auto N = X.symbolName();
          N && Env->info(*N) && Env->info(*N)->Kind == SymbolKind::Integer)
        Env->markSizeLike(*N);
  return M;
}

void FunctionEvaluator::declareModule(const VarDecl *VD, const DeclStmt *DS,
                                      Flow F, bool Insertable) {
  std::string Name = VD->getName().str();
  std::string Layer = *moduleLayer(VD->getType());
  ModuleOrder.push_back(key(VD));
  SourceSpan Where = span(VD->getSourceRange());
  // A layer not followed still allocates its parameters, in sizes not
  // known here.
  auto ParametersNotFollowed = [&] {
    if (!constructedModule(VD->getType(), VD->getInit()).empty())
      I.totalsUnknown("constructing '" + Name + "' (" + Layer +
                      ") allocates parameters that are not followed (line " +
                      std::to_string(Where.Line) + ")");
  };
  auto Unknown = [&](const std::string &Why) {
    ModuleValue M;
    M.Layer = Layer;
    M.Name = Name;
    M.Where = Where;
    M.Why = "module '" + Name + "' (" + Layer + "): " + Why;
    Modules[key(VD)] = M;
    ParametersNotFollowed();
  };
  if (F.InLoop || F.InBranch)
    return Unknown("constructed in a loop or a branch");
  ModuleUses Uses(VD);
  Uses.TraverseStmt(const_cast<Stmt *>(FD.getBody()));
  if (Uses.Mentions != Uses.Harmless)
    return Unknown("used other than by forward(), so its parameters may "
                   "have changed");
  ModuleValue M = layerFromConstruction(
      VD->getType(), VD->hasInit() ? VD->getInit() : nullptr, Name);
  M.Where = Where;
  if (!M.Why.empty()) {
    Modules[key(VD)] = M;
    ParametersNotFollowed();
    return;
  }
  openStatement(DS, F, Insertable);
  for (const auto &[PName, Sizes] : M.ParamShapes) {
    OpOutcome Out = factory(Sizes, DType::Float32, Device{}, FillKind::Filled);
    Out.Note = M.Layer + "'s " + PName + " (default dtype)";
    // A later to(device) moves it: its size stays, its device is unknown.
    if (Uses.DeviceMoves) {
      Out.Value.Dev.reset();
      Out.Value.markUnknown("module '" + Name +
                            "' is moved to a device (to(device))");
    }
    ValueId V = apply(M.Layer, VD->getInit(), {}, Out);
    I.hold(key(VD) + "." + PName, V);
    M.Params[PName] = V;
  }
  I.endStatement();
  Modules[key(VD)] = M;
}

std::optional<ValueId>
FunctionEvaluator::moduleForward(const Expr *E, const FunctionDecl *Callee,
                                 const Expr *Object,
                                 llvm::ArrayRef<const Expr *> Args) {
  if (!Callee || !Object || Args.size() != 1 ||
      !isTensorType(Args[0]->getType()))
    return std::nullopt;
  std::string Method = calleeName(Callee);
  if (Method != "forward" && Method != "operator()")
    return std::nullopt;
  const Expr *O = strip(Object);
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(O);
      OCE && OCE->getOperator() == OO_Arrow && OCE->getNumArgs() == 1)
    O = strip(OCE->getArg(0));
  const ValueDecl *D = namedDecl(O);
  if (!D)
    return std::nullopt;
  auto It = Modules.find(key(D));
  if (It == Modules.end())
    return std::nullopt;
  ModuleValue &Found = It->second;
  std::optional<ValueId> Out = layerForward(Found, E, Callee, Args);
  if (Out)
    Found.Forwards.push_back({span(E->getSourceRange()).Line, *Out});
  return Out;
}

std::optional<ValueId>
FunctionEvaluator::layerForward(const ModuleValue &M, const Expr *E,
                                const FunctionDecl *Callee,
                                llvm::ArrayRef<const Expr *> Args) {
  ValueId In = tensor(Args[0]);
  if (!M.Why.empty())
    return unmodelledCall(M.Layer, E, {In}, M.Why);
  OpCall C;
  C.Version = Opts.Version;
  auto Param = [&](const char *N) {
    auto P = M.Params.find(N);
    ArgValue A;
    if (P != M.Params.end())
      A = tensorArgument(P->second, I.value(P->second));
    A.Type = ArgType::OptTensor;
    return A;
  };
  C.Args.push_back(tensorArgument(In, I.value(In)));
  C.Args.push_back(Param("weight"));
  C.Args.push_back(Param("bias"));
  if (M.Layer == "Linear") {
    C.Op = lookupOp("linear");
    C.Written = "linear";
  } else {
    std::string Conv = M.Layer == "Conv1d"   ? "conv1d"
                       : M.Layer == "Conv2d" ? "conv2d"
                                             : "conv3d";
    C.Op = lookupOp(Conv);
    C.Written = Conv;
    auto Opt = [&](const char *N) -> const ArgValue * {
      auto V = M.Options.Values.find(N);
      return V == M.Options.Values.end() ? nullptr : &V->second;
    };
    const ArgValue *Stride = Opt("stride"), *Padding = Opt("padding"),
                   *Dilation = Opt("dilation"), *Groups = Opt("groups"),
                   *Mode = Opt("padding_mode");
    if (!Stride || !Padding || !Dilation || !Groups || !Mode ||
        Mode->Str != std::optional<std::string>("zeros") || Stride->K != ArgValue::Kind::IntList ||
        Dilation->K != ArgValue::Kind::IntList)
      return unmodelledCall(M.Layer, E, {In},
                            "module '" + M.Name +
                                "': its padding mode or strides are not "
                                "modelled");
    C.Args.push_back(listArgument(Stride->List));
    if (Padding->K == ArgValue::Kind::IntList) {
      C.Overload = 0;
      C.Args.push_back(listArgument(Padding->List));
    } else {
      C.Overload = 1;
      C.Args.push_back(*Padding); // "same" / "valid"
    }
    C.Args.push_back(listArgument(Dilation->List));
    C.Args.push_back(*Groups);
  }
  if (!C.Op)
    return std::nullopt;
  CallSite S;
  S.E = E;
  S.Callee = Callee;
  RuleResult R = applyRule(C);
  std::vector<ValueId> Values = applyResult(S, C, R);
  if (Values.empty())
    return unmodelledCall(M.Layer, E, {In}, "forward gave no result");
  return Values.front();
}

std::vector<ModuleSummary>
FunctionEvaluator::moduleSummaries() const {
  std::vector<ModuleSummary> Out;
  if (ObjectModule)
    Out.push_back(*ObjectModule);
  for (const std::string &K : ModuleOrder) {
    auto It = Modules.find(K);
    if (It == Modules.end())
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
      std::optional<SymSize> Elements = SymSize(0), Bytes = SymSize(0);
      for (const auto &[PName, Sizes] : M.ParamShapes) {
        S.Parameters.push_back({PName, Sizes, DType::Float32});
        Elements = addSizes(Elements, checkedNumel(Sizes));
        Bytes = addSizes(Bytes, denseBytes(Sizes, DType::Float32));
      }
      S.ParameterElements = Elements;
      S.ParameterBytes = Bytes;
      if (!Bytes)
        S.Why = "a parameter's size does not fit in int64";
    }
    Out.push_back(std::move(S));
  }
  return Out;
}

} // namespace tma
