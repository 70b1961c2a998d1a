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

/// Module methods that neither change the module nor run it on a
/// tensor the analysis does not see.
bool harmlessUse(StringRef Method) {
  return Method == "forward" || Method == "parameters" ||
         Method == "named_parameters" || Method == "pretty_print" ||
         Method == "eval" || Method == "is_training" || Method == "zero_grad";
}

/// Whether every mention of VD in Body is a call of a harmless method
/// (fc->forward(x), fc(x), fc->parameters()).
struct ModuleUses : RecursiveASTVisitor<ModuleUses> {
  const VarDecl *VD;
  unsigned Mentions = 0, Harmless = 0;
  explicit ModuleUses(const VarDecl *VD) : VD(VD) {}
  bool names(const Expr *E) const {
    E = strip(E);
    if (const auto *OCE = dyn_cast_or_null<CXXOperatorCallExpr>(E);
        OCE && OCE->getOperator() == OO_Arrow && OCE->getNumArgs() == 1)
      E = strip(OCE->getArg(0));
    const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E);
    return DRE && DRE->getDecl() == VD;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    Mentions += E->getDecl() == VD;
    return true;
  }
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *E) {
    const CXXMethodDecl *MD = E->getMethodDecl();
    if (MD && MD->getDeclName().isIdentifier() && harmlessUse(MD->getName()) &&
        names(E->getImplicitObjectArgument()))
      ++Harmless;
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
    if (E->getOperator() == OO_Call && E->getNumArgs() >= 1 &&
        names(E->getArg(0)))
      ++Harmless;
    return true;
  }
};

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

std::optional<std::string> moduleLayer(QualType T) {
  if (!moduleHolderBase(T))
    return std::nullopt;
  std::string Name = recordName(T);
  if (Name.rfind("torch::nn::", 0) != 0)
    return std::nullopt;
  return Name.substr(11);
}

void FunctionEvaluator::declareModule(const VarDecl *VD, const DeclStmt *DS,
                                      Flow F, bool Insertable) {
  ModuleValue M;
  M.Layer = *moduleLayer(VD->getType());
  std::string Name = VD->getName().str();
  auto Unknown = [&](const std::string &Why) {
    M.Why = "module '" + Name + "' (" + M.Layer + "): " + Why;
    Modules[key(VD)] = M;
  };
  if (!modelledLayer(M.Layer))
    return Unknown("this layer is not modelled yet");
  if (F.InLoop || F.InBranch)
    return Unknown("constructed in a loop or a branch");
  ModuleUses Uses(VD);
  Uses.TraverseStmt(const_cast<Stmt *>(FD.getBody()));
  if (Uses.Mentions != Uses.Harmless)
    return Unknown("used other than by forward(), so its parameters may "
                   "have changed");
  const auto *CE = dyn_cast_or_null<CXXConstructExpr>(
      strip(VD->hasInit() ? VD->getInit() : nullptr));
  if (!CE)
    return Unknown("not constructed here");
  llvm::SmallVector<const Expr *, 4> Args;
  for (const Expr *A : CE->arguments())
    if (!isDefaultArg(A))
      Args.push_back(A);
  // The options class: the type of the Impl's `options` member.
  const auto *Holder = moduleHolderBase(VD->getType());
  const CXXRecordDecl *Impl =
      Holder->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
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
  std::vector<std::pair<std::string, Shape>> Params;
  if (M.Layer == "Linear") {
    auto In = Int("in_features"), Out = Int("out_features");
    if (!In || !Out || !Bias)
      return Unknown("its features or bias could not be derived");
    Params.push_back({"weight", {*Out, *In}});
    if (*Bias)
      Params.push_back({"bias", {*Out}});
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
    Params.push_back({"weight", W});
    if (*Bias)
      Params.push_back({"bias", {*Out}});
  }
  openStatement(DS, F, Insertable);
  for (const auto &[PName, Sizes] : Params) {
    OpOutcome Out = factory(Sizes, DType::Float32, Device{}, FillKind::Filled);
    Out.Note = M.Layer + "'s " + PName + " (default dtype)";
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
  const auto *DRE = dyn_cast<DeclRefExpr>(O);
  if (!DRE)
    return std::nullopt;
  auto It = Modules.find(key(DRE->getDecl()));
  if (It == Modules.end())
    return std::nullopt;
  const ModuleValue &M = It->second;
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
                            "module '" + DRE->getDecl()->getName().str() +
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

} // namespace tma
