// Training code (issue 13): the gradients backward() leaves on a module's
// parameters and the state an optimizer over them keeps.
//
//     torch::nn::Linear fc(784, 10);
//     torch::optim::Adam opt(fc->parameters(), torch::optim::AdamOptions(1e-3));
//     auto loss = torch::mse_loss(fc(x), y);
//     opt.zero_grad();
//     loss.backward();   // fc's weight and bias get a .grad of their shape
//     opt.step();        // Adam's state: exp_avg, exp_avg_sq per parameter
//
// The body is followed in order, per parameter of each module the function
// builds (Modules.cpp): backward() defines the .grad of every parameter the
// loss reaches (model/Autograd.h); zero_grad() zeroes them or, with
// set_to_none (the default from LibTorch 2.0, read from the declaration
// Clang parsed), frees them; step() makes the optimizer's state for each
// parameter with a .grad, as LibTorch's optimizers do on their first step
// (torch/csrc/api/src/optim/*.cpp):
//
//   SGD      momentum_buffer (clone of the gradient) when momentum != 0
//   Adam     exp_avg, exp_avg_sq, and max_exp_avg_sq with amsgrad
//   AdamW    the same as Adam
//   RMSprop  square_avg; momentum_buffer when momentum > 0; grad_avg when
//            centered
//   Adagrad  sum, made by the constructor for every parameter
//
// each a tensor of the parameter's shape and dtype (zeros_like / clone /
// full_like with the Preserve format); the step counts are int64 fields,
// not tensors. A step in a loop is the state once it has run.
//
// Where it cannot tell (the loss's history is not followed, a branch, an
// optimizer used in another way, another optimizer), the bytes are unknown
// with the reason. backward() and step() allocate what the live and peak
// totals do not follow (backward's own temporaries included): the totals
// of a function that calls them are unknown, and the summary has the bytes.
#include "frontend/FunctionEvaluator.h"
#include "frontend/StatementWalker.h"
#include "frontend/TrainingTracker.h"
#include "frontend/ArgumentReader.h"
#include "frontend/OptionsChains.h"
#include "model/Autograd.h"

#include "clang/AST/RecursiveASTVisitor.h"

#include <algorithm>

using namespace clang;

namespace tma {

namespace {

bool derivesFrom(const CXXRecordDecl *RD, llvm::StringRef Base, int Depth = 0) {
  if (!RD || !RD->hasDefinition() || Depth > 8)
    return false;
  RD = RD->getDefinition();
  if (RD->getQualifiedNameAsString() == Base)
    return true;
  for (const CXXBaseSpecifier &B : RD->bases())
    if (derivesFrom(B.getType()->getAsCXXRecordDecl(), Base, Depth + 1))
      return true;
  return false;
}

/// The object of a member call, through a holder's operator->.
const Expr *callObject(const CXXMemberCallExpr *MC) {
  const Expr *O = strip(MC->getImplicitObjectArgument());
  if (const auto *OCE = dyn_cast_or_null<CXXOperatorCallExpr>(O);
      OCE && OCE->getOperator() == OO_Arrow && OCE->getNumArgs() == 1)
    O = strip(OCE->getArg(0));
  return O;
}

bool isTrainingCall(const CXXMemberCallExpr *MC) {
  const CXXMethodDecl *MD = MC->getMethodDecl();
  if (!MD || !MD->getIdentifier())
    return false;
  llvm::StringRef N = MD->getName();
  const CXXRecordDecl *RD = MD->getParent();
  if (N == "backward")
    return isTensorType(MC->getImplicitObjectArgument()->getType());
  if (N == "step" || N == "zero_grad")
    return derivesFrom(RD, "torch::optim::Optimizer") ||
           (N == "zero_grad" && derivesFrom(RD, "torch::nn::Module"));
  return false;
}

/// Every backward / step / zero_grad call in a body, and every
/// torch::autograd::backward call.
struct TrainingCallsIn : RecursiveASTVisitor<TrainingCallsIn> {
  std::vector<const Expr *> Calls;
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *E) {
    if (isTrainingCall(E))
      Calls.push_back(E);
    return true;
  }
  bool VisitCallExpr(CallExpr *E) {
    if (const FunctionDecl *F = E->getDirectCallee();
        F && !isa<CXXMethodDecl>(F) &&
        F->getQualifiedNameAsString() == "torch::autograd::backward")
      Calls.push_back(E);
    return true;
  }
};

/// Guards that change the gradient mode (NoGradGuard, AutoGradMode,
/// InferenceMode) anywhere in the body.
struct GradModeGuards : RecursiveASTVisitor<GradModeGuards> {
  std::string Found;
  bool VisitVarDecl(VarDecl *VD) {
    std::string R = recordName(VD->getType());
    for (const char *G : {"NoGradGuard", "AutoGradMode", "InferenceMode",
                          "AutoNonVariableTypeMode"})
      if (Found.empty() && R.find(G) != std::string::npos)
        Found = R;
    return true;
  }
};

/// Mentions of an optimizer variable, and those that are its step() and
/// zero_grad() calls.
struct OptimizerUses : RecursiveASTVisitor<OptimizerUses> {
  const ValueDecl *D;
  unsigned Mentions = 0, Harmless = 0;
  explicit OptimizerUses(const ValueDecl *D) : D(D) {}
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    Mentions += E->getDecl() == D;
    return true;
  }
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *E) {
    const CXXMethodDecl *MD = E->getMethodDecl();
    if (!MD || !MD->getIdentifier())
      return true;
    const auto *DRE = dyn_cast_or_null<DeclRefExpr>(callObject(E));
    if (!DRE || DRE->getDecl() != D)
      return true;
    // step(closure) runs a forward and backward the analysis does not see.
    if ((MD->getName() == "step" &&
         (E->getNumArgs() == 0 || isDefaultArg(E->getArg(0)))) ||
        MD->getName() == "zero_grad")
      ++Harmless;
    return true;
  }
};

const char *const OptimizerTypes[] = {"SGD", "Adam", "AdamW", "RMSprop",
                                      "Adagrad"};

} // namespace

bool TrainingTracker::isOptimizerType(QualType T) {
  return derivesFrom(T.getNonReferenceType()->getAsCXXRecordDecl(),
                     "torch::optim::Optimizer");
}

const ValueDecl *TrainingTracker::parametersOwner(FunctionEvaluator &FE,
                                                  const Expr *Arg) {
  const auto *PC = dyn_cast_or_null<CXXMemberCallExpr>(throughCopies(Arg));
  const CXXMethodDecl *PM = PC ? PC->getMethodDecl() : nullptr;
  if (PM && PM->getIdentifier() && PM->getName() == "parameters" &&
      derivesFrom(PM->getParent(), "torch::nn::Module") &&
      (PC->getNumArgs() == 0 ||
       FE.args().foldInteger(PC->getArg(0)) == std::optional<int64_t>(1)))
    return namedDecl(callObject(PC));
  return nullptr;
}

void TrainingTracker::declareOptimizer(const VarDecl *VD, const DeclStmt *DS,
                                         Flow F, bool Insertable) {
  OptimizerValue O;
  O.Name = VD->getName().str();
  O.Line = FE.span(DS->getSourceRange()).Line;
  std::string Record = recordName(VD->getType());
  O.Type = Record.rfind("torch::optim::", 0) == 0 ? Record.substr(14) : Record;
  FE.OptimizerOrder.push_back(FE.key(VD));
  auto Done = [&](const std::string &Why) {
    if (!Why.empty() && O.Why.empty())
      O.Why = "optimizer '" + O.Name + "' (" + O.Type + "): " + Why;
    FE.Optimizers[FE.key(VD)] = O;
  };
  // The parameters() of a module the function builds, and the options.
  const auto *CE = dyn_cast_or_null<CXXConstructExpr>(
      strip(VD->hasInit() ? VD->getInit() : nullptr));
  if (!CE || CE->getNumArgs() < 1)
    return Done("its constructor's arguments are not read");
  if (const ValueDecl *ModuleDecl = parametersOwner(FE, CE->getArg(0))) {
    O.ModuleKey = FE.key(ModuleDecl);
    auto It = FE.Modules.find(O.ModuleKey);
    if (It == FE.Modules.end())
      return Done("'" + ModuleDecl->getName().str() +
                  "' is not a module the analysis builds");
    if (!It->second.Why.empty())
      return Done(It->second.Why);
    if (!It->second.ParamsWhy.empty())
      return Done("module '" + It->second.Name + "' (" + It->second.Layer +
                  "): " + It->second.ParamsWhy);
  } else {
    Done("its parameters are not the parameters() of a module built here");
    // Its state is allocated by step() on tensors the analysis does not
    // know: the totals say so there.
    return;
  }
  OptimizerUses Uses(VD);
  Uses.TraverseStmt(const_cast<Stmt *>(FE.FD.getBody()));
  if (Uses.Mentions != Uses.Harmless)
    return Done("used other than by step() and zero_grad()");
  if (F.InLoop || F.InBranch)
    return Done("constructed in a loop or a branch");
  if (std::find(std::begin(OptimizerTypes), std::end(OptimizerTypes),
                O.Type) == std::end(OptimizerTypes))
    return Done("this optimizer is not modelled yet");
  // The options: the second argument, or the declaration's default.
  std::optional<NamedArgs> Options;
  if (CE->getNumArgs() < 2 || isDefaultArg(CE->getArg(1))) {
    const CXXConstructorDecl *Ctor = CE->getConstructor();
    if (Ctor->getNumParams() >= 2)
      Options = readOptionsFromArguments(
          FE, Ctor->getParamDecl(1)->getType().getNonReferenceType(), {});
  } else {
    Options = readOptionsChain(FE, CE->getArg(1));
  }
  if (!Options)
    return Done("its options are not read");
  if (!Options->Complete)
    return Done(Options->Why);
  auto Number = [&](const char *N) -> std::optional<double> {
    auto It = Options->Values.find(N);
    if (It == Options->Values.end() || !It->second.Number ||
        (It->second.K != ArgValue::Kind::Number &&
         It->second.K != ArgValue::Kind::Scalar))
      return std::nullopt;
    return *It->second.Number;
  };
  auto Flag = [&](const char *N) -> std::optional<bool> {
    auto It = Options->Values.find(N);
    if (It == Options->Values.end() || It->second.K != ArgValue::Kind::Bool)
      return std::nullopt;
    return It->second.Bool;
  };
  O.Kind.Type = O.Type;
  O.Kind.Version = FE.Opts.Version;
  O.Kind.Momentum = Number("momentum");
  O.Kind.WeightDecay = Number("weight_decay");
  O.Kind.Nesterov = Flag("nesterov");
  O.Kind.Amsgrad = Flag("amsgrad");
  if (const auto *Body = dyn_cast_or_null<CompoundStmt>(FE.FD.getBody()))
    O.LivesToReturn = std::find(Body->body_begin(), Body->body_end(), DS) !=
                      Body->body_end();
  if (O.Type == "SGD") {
    auto M = Number("momentum");
    if (!M)
      return Done("its momentum could not be derived");
    O.PerParameter = *M != 0;
  } else if (O.Type == "Adam" || O.Type == "AdamW") {
    auto A = Flag("amsgrad");
    if (!A)
      return Done("its amsgrad option could not be derived");
    O.PerParameter = 2 + *A;
  } else if (O.Type == "RMSprop") {
    auto M = Number("momentum");
    auto C = Flag("centered");
    if (!M || !C)
      return Done("its momentum or centered option could not be derived");
    O.PerParameter = 1 + (*M > 0) + *C;
  } else if (O.Type == "Adagrad") {
    O.PerParameter = 1;
    O.AtConstruction = true;
    FE.I.totalsUnknown("constructing '" + O.Name + "' (Adagrad) allocates its "
                    "state (line " + std::to_string(O.Line) + ")");
  }
  (void)Insertable;
  Done("");
}

/// Why a statement does not run exactly once per call (then its
/// allocations are not counted as one pass), or "".
static std::string notOncePerCall(const FunctionEvaluator::Flow &F) {
  if (!F.oncePerCopy())
    return "it runs in a loop, once per iteration";
  if (F.InBranch)
    return "it runs in a branch";
  return "";
}

/// `{}` or `torch::Tensor()`: an undefined tensor, as if the argument
/// were left out (backward({}, true) keeps the graph, gives no gradient).
static bool isUndefinedTensorLiteral(const Expr *E) {
  E = E->IgnoreImplicit();
  if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(E))
    E = MT->getSubExpr()->IgnoreImplicit();
  if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(E))
    E = BT->getSubExpr()->IgnoreImplicit();
  if (const auto *IL = dyn_cast<InitListExpr>(E))
    return IL->getNumInits() == 0;
  if (const auto *CE = dyn_cast<CXXConstructExpr>(E))
    return CE->getNumArgs() == 0 ||
           (CE->getNumArgs() == 1 && isUndefinedTensorLiteral(CE->getArg(0)));
  return false;
}

bool TrainingTracker::trainingStatement(const Expr *E, const Expr *S, Flow F,
                                          bool Insertable) {
  const auto *MC = dyn_cast<CXXMemberCallExpr>(S);
  if (!MC || !isTrainingCall(MC))
    return false;
  FE.TrainingCalls.insert(MC);
  std::string Method = MC->getMethodDecl()->getName().str();
  unsigned Line = FE.span(E->getSourceRange()).Line;
  std::string At = " (line " + std::to_string(Line) + ")";
  const Expr *Object = callObject(MC);
  // Each parameter's holding, changed by a statement that may not run.
  auto Set = [&](Holding &H, Holding::State To, const std::string &Why) {
    if (F.InBranch && H.H != To) {
      H.H = Holding::Maybe;
      H.Why = Method + "() runs in a branch" + At;
    } else {
      H.H = To;
      H.Why = Why;
    }
  };
  if (Method == "backward") {
    FE.BackwardSeen = true;
    FE.statements().openStatement(E, F, Insertable);
    ValueId Loss = FE.tensor(MC->getImplicitObjectArgument());
    std::vector<ValueId> Inputs = {Loss};
    // backward(gradient, retain_graph, create_graph, inputs).
    bool GradientGiven = MC->getNumArgs() > 0 && !isDefaultArg(MC->getArg(0)) &&
                         !isUndefinedTensorLiteral(MC->getArg(0));
    if (GradientGiven && isTensorType(MC->getArg(0)->getType()))
      Inputs.push_back(FE.tensor(MC->getArg(0)));
    OpOutcome Use;
    Use.Kind = OpKind::Use;
    Use.ReadBytes = Use.WrittenBytes = 0;
    FE.apply("backward", S, Inputs, Use);
    // backward(gradient, retain_graph = create_graph, create_graph): the
    // graph's saved tensors go unless it is kept.
    const Expr *RetainArg = MC->getNumArgs() > 1 ? MC->getArg(1) : nullptr;
    const Expr *CreateArg = MC->getNumArgs() > 2 ? MC->getArg(2) : nullptr;
    bool KeepGraph = keepsGraph(FE, RetainArg, CreateArg);
    bool InputsGiven = MC->getNumArgs() > 3 && !isDefaultArg(MC->getArg(3));
    // The pass is followed node by node (model/AutogradBackward.cpp) when
    // it starts from the loss alone and builds no graph of its own.
    bool CreatesGraph = CreateArg && !isDefaultArg(CreateArg) &&
                        keepsGraph(FE, nullptr, CreateArg);
    std::string NotFollowed = notOncePerCall(F);
    if (NotFollowed.empty())
      NotFollowed = GradientGiven ? "it is given the loss's gradient"
                    : InputsGiven ? "it is given its inputs"
                    : CreatesGraph
                        ? "it may build a graph of the gradients (create_graph)"
                        : FE.I.runBackward({Loss, KeepGraph, FE.Opts.Version});
    if (!NotFollowed.empty()) {
      FE.I.backwardNotFollowed();
      if (!KeepGraph)
        FE.I.releaseSavedForBackward(Loss);
      FE.I.totalsUnknown("backward()" + At + " allocates the gradients and "
                         "its own temporaries, which the totals do not "
                         "follow here: " + NotFollowed);
    }
    FE.I.endStatement();
    std::string Why;
    if (InputsGiven)
      Why = "backward() is given its inputs" + At;
    const TensorValue &LV = FE.I.value(Loss);
    // Without a gradient the loss must have one element (LibTorch throws
    // "grad can be implicitly created only for scalar outputs").
    if (Why.empty() && !GradientGiven) {
      bool One = LV.Sizes.has_value();
      for (const SymSize &D : LV.Sizes ? *LV.Sizes : Shape())
        One &= D.constant() == std::optional<int64_t>(1);
      if (!One)
        Why = "the loss of backward()" + At + " is not known to have one "
              "element";
    }
    GradientReach R;
    if (Why.empty()) {
      R = gradientReach(FE.I.trace(), Loss);
      if (!R.Uncertain.empty())
        Why = R.Uncertain;
    }
    for (const std::string &K : FE.ModuleOrder) {
      auto MIt = FE.Modules.find(K);
      if (MIt == FE.Modules.end())
        continue;
      const ModuleValue &M = MIt->second;
      if (!M.Why.empty() || !M.Local)
        continue;
      for (const auto &[P, V] : M.Params) {
        if (M.Buffers.count(P))
          continue;
        Holding &H = FE.Grads[K][P];
        if (R.Reached.count(V))
          Set(H, Holding::Yes, "");
        else if (Why.empty())
          continue; // certainly not reached: unchanged
        else if (H.H != Holding::Yes) {
          H.H = Holding::Maybe;
          H.Why = Why;
        }
      }
    }
    return true;
  }
  const ValueDecl *D = namedDecl(Object);
  if (Method == "zero_grad") {
    // Optimizer::zero_grad() (LibTorch 1.x: no parameter, zeroes each
    // .grad) or zero_grad(bool set_to_none) (its default read from the
    // declaration); Module::zero_grad(bool set_to_none) alike.
    std::optional<bool> ToNone = false;
    if (MC->getNumArgs() > 0) {
      const Expr *A = MC->getArg(0);
      if (const auto *DA = dyn_cast<CXXDefaultArgExpr>(A))
        A = DA->getExpr();
      auto V = FE.args().foldInteger(A);
      ToNone = V ? std::optional<bool>(*V != 0) : std::nullopt;
    }
    std::string ModuleKey;
    if (D && FE.Optimizers.count(FE.key(D)))
      ModuleKey = FE.Optimizers.at(FE.key(D)).ModuleKey;
    else if (D && FE.Modules.count(FE.key(D)))
      ModuleKey = FE.key(D);
    if (!ToNone) {
      // Which gradients this clears is known; whether it frees them not.
      for (auto &[P, H] : FE.Grads[ModuleKey])
        if (H.H != Holding::No) {
          H.H = Holding::Maybe;
          H.Why = "zero_grad()" + At + ": whether it frees the gradients "
                  "is not known";
        }
    } else if (*ToNone) {
      for (auto &[P, H] : FE.Grads[ModuleKey])
        Set(H, Holding::No, "");
    }
    // zero_grad(false) zeroes each .grad in place (1.13's default);
    // otherwise the gradients backward() left may be freed here.
    if (ToNone != std::optional<bool>(false) && FE.I.anyGrad()) {
      FE.I.backwardNotFollowed();
      FE.I.totalsUnknown("zero_grad()" + At + " may free the gradients, "
                         "which the totals do not follow");
    }
    if (ModuleKey.empty())
      FE.GradsWhy = "zero_grad()" + At + " on an object the analysis does not "
                 "follow";
    return true;
  }
  // step(): the first step makes the state of each parameter with a .grad.
  if (!D || !FE.Optimizers.count(FE.key(D))) {
    FE.I.totalsUnknown("step()" + At + " of an optimizer the analysis does not "
                    "follow allocates its state");
    return true;
  }
  OptimizerValue &O = FE.Optimizers.at(FE.key(D));
  auto MIt = FE.Modules.find(O.ModuleKey);
  // Its allocations, parameter by parameter (model/Optimizers.h), where the
  // parameters' gradients are the tape's and the state lives to the end.
  std::string StepWhy = O.Why;
  if (StepWhy.empty() && MIt == FE.Modules.end())
    StepWhy = "its parameters are not a module built here";
  else if (StepWhy.empty() && !MIt->second.ParamsOnTape)
    StepWhy = "the gradients of '" + MIt->second.Name + "' are not followed "
              "(it is used other than by running it and handing its "
              "parameters() to an optimizer, or is not built in the "
              "function's own scope)";
  else if (StepWhy.empty() && !O.LivesToReturn)
    StepWhy = "the optimizer is declared in an inner block";
  else if (StepWhy.empty())
    StepWhy = notOncePerCall(F);
  FE.statements().openStatement(E, F, Insertable);
  OpOutcome Use;
  Use.Kind = OpKind::Use;
  Use.ReadBytes = Use.WrittenBytes = 0;
  FE.apply("step", S, {}, Use);
  if (StepWhy.empty()) {
    std::vector<std::pair<ValueId, bool>> Params;
    for (const auto &[P, Shape] : MIt->second.ParamShapes) {
      if (MIt->second.Buffers.count(P))
        continue;
      auto V = MIt->second.Params.find(P);
      if (V == MIt->second.Params.end()) {
        StepWhy = "parameter '" + P + "' is not followed";
        break;
      }
      Params.push_back({V->second, O.State[P].H == Holding::Yes});
    }
    if (StepWhy.empty())
      StepWhy = FE.I.runOptimizerStep(O.Kind, O.Name + "'s state", Params);
  }
  if (!StepWhy.empty())
    FE.I.totalsUnknown("step()" + At + " allocates the optimizer's state, "
                       "which the totals do not follow here: " + StepWhy);
  FE.I.endStatement();
  if (!O.Why.empty() || O.AtConstruction)
    return true;
  if (MIt == FE.Modules.end())
    return true;
  for (const auto &[P, V] : MIt->second.Params) {
    if (MIt->second.Buffers.count(P))
      continue;
    Holding &S = O.State[P];
    if (S.H == Holding::Yes)
      continue; // made by an earlier step; kept
    const Holding &G = FE.Grads[O.ModuleKey][P];
    if (G.H == Holding::Yes)
      Set(S, Holding::Yes, "");
    else if (G.H == Holding::Maybe) {
      S.H = Holding::Maybe;
      S.Why = "whether '" + P + "' has a gradient at step()" + At +
              " is not known: " + G.Why;
    }
  }
  return true;
}

std::optional<std::string> TrainingTracker::trainingScope() const {
  // Any backward / step / zero_grad the statements did not evaluate (in an
  // expression, a lambda, torch::autograd::backward) may have changed
  // every gradient.
  std::string Why = FE.GradsWhy;
  TrainingCallsIn All;
  All.TraverseStmt(const_cast<Stmt *>(FE.FD.getBody()));
  bool Any = FE.BackwardSeen || !FE.Optimizers.empty();
  for (const Expr *C : All.Calls)
    if (!FE.TrainingCalls.count(C)) {
      Any = true;
      if (Why.empty())
        Why = "a backward(), step() or zero_grad() the analysis does not "
              "follow (line " + std::to_string(FE.span(C->getSourceRange()).Line) +
              ")";
    }
  if (!Any)
    return std::nullopt;
  GradModeGuards Guards;
  Guards.TraverseStmt(const_cast<Stmt *>(FE.FD.getBody()));
  if (Why.empty() && !Guards.Found.empty())
    Why = "the function changes the gradient mode (" + Guards.Found + ")";
  return Why;
}

void TrainingTracker::summarizeTraining(const std::string &Key,
                                          ModuleSummary &S,
                                          const std::string &Why) const {
  const ModuleValue &M = FE.Modules.at(Key);
  S.HasGradients = true;
  // The bytes of the parameters that hold a tensor per Held.
  auto Sum = [&](auto Held, std::string &Reason) -> std::optional<SymSize> {
    std::optional<SymSize> Bytes = SymSize(0);
    for (const auto &[P, Sizes] : M.ParamShapes) {
      if (M.Buffers.count(P))
        continue;
      Holding H = Held(P);
      if (H.H == Holding::Maybe) {
        Reason = H.Why;
        return std::nullopt;
      }
      if (H.H == Holding::Yes)
        Bytes = addSizes(Bytes, denseBytes(Sizes, M.paramType(P)));
    }
    if (!Bytes)
      Reason = "a parameter's size does not fit in int64";
    return Bytes;
  };
  auto GradOf = [&](const std::string &P) {
    auto It = FE.Grads.find(Key);
    if (It == FE.Grads.end() || !It->second.count(P))
      return Holding{};
    return It->second.at(P);
  };
  if (!M.Why.empty())
    S.GradientWhy = M.Why;
  else if (!M.ParamsWhy.empty())
    S.GradientWhy = M.ParamsWhy;
  else if (!Why.empty())
    S.GradientWhy = Why;
  else
    S.GradientBytes = Sum(GradOf, S.GradientWhy);
  for (const std::string &K : FE.OptimizerOrder) {
    const OptimizerValue &O = FE.Optimizers.at(K);
    if (O.ModuleKey != Key)
      continue;
    ModuleSummary::Optimizer Row;
    Row.Name = O.Name;
    Row.Type = O.Type;
    Row.Line = O.Line;
    if (!O.Why.empty()) {
      Row.Why = O.Why;
    } else if (O.AtConstruction) {
      Row.StateBytes = Sum([](const std::string &) {
        return Holding{Holding::Yes, ""};
      }, Row.Why);
    } else if (!Why.empty() && O.PerParameter) {
      Row.Why = Why;
    } else {
      auto One = Sum([&](const std::string &P) {
        auto It = O.State.find(P);
        return It == O.State.end() ? Holding{} : It->second;
      }, Row.Why);
      if (One)
        Row.StateBytes = *One * SymSize(int64_t(O.PerParameter));
    }
    S.Optimizers.push_back(std::move(Row));
  }
}

} // namespace tma
