// torch::autograd::grad in the code being analysed (issue 35):
//
//     auto out = torch::mm(x, w.t());
//     auto g = torch::autograd::grad({out}, {x}, {torch::ones_like(out)},
//                                    /*retain_graph=*/true,
//                                    /*create_graph=*/true)[0];
//
// 1. The call returns one gradient per input, in order: a tensor list
//    whose element i has the sizes, dtype and device of inputs[i]
//    (model/Autograd.h, autogradGradient: the engine holds every gradient
//    to its input's metadata). Its strides and storage are left unknown:
//    the last backward formula made them.
// 2. The outputs and grad_outputs lists are evaluated for what they
//    compute (`torch::ones_like(out)` allocates); the backward pass itself
//    allocates what the analysis does not follow, so the function's totals
//    become unknown, and each element may be any tensor (the grad_output
//    handed in, a view of it), as for any call not followed.
// 3. allow_unused (the sixth argument) true, or not read as a constant:
//    an element may be undefined, so none is answered. Otherwise an input
//    the outputs do not reach makes grad() throw, and the elements the
//    function goes on with are all defined.
// 4. grad() accumulates into no .grad (it runs the engine with
//    accumulate_grad false), so the gradients backward() leaves
//    (Training.cpp) are not touched.
//
// A custom function (torch/csrc/autograd/custom_function.h):
//
//     struct Cube : torch::autograd::Function<Cube> {
//       static torch::Tensor forward(AutogradContext *ctx, torch::Tensor x);
//       static tensor_list backward(AutogradContext *ctx, tensor_list g);
//     };
//     auto y = Cube::apply(x);
//
// 5. Function<Cube>::apply(args...) calls Cube::forward(&ctx, args...)
//    with grad mode off and returns what it returned: forward is followed
//    as a call of the project's own (Calls.cpp) with the context as a
//    value the body cannot know and forward's defaults for the arguments
//    apply was not given. Only a forward returning one tensor is followed.
// 6. An input forward returns unchanged comes back from apply as
//    view_as(input) (_wrap_outputs), or the input itself when forward
//    marked it dirty: the same storage and geometry, but which of the two
//    is not read, so its kind is unknown and it may be the input's tensor.
// 7. The context keeps what forward saved for backward alive with the
//    result's graph, which the live and peak totals do not follow.
// 8. backward() runs inside LibTorch's engine: its grad_outputs and saved
//    variables are a summary of forward the analysis does not make, so
//    backward's own table leaves them unknown.
#include "frontend/FunctionEvaluator.h"
#include "frontend/TrainingTracker.h"
#include "frontend/ArgumentReader.h"
#include "frontend/CallFollower.h"
#include "model/Autograd.h"

using namespace clang;

namespace tma {

bool keepsGraph(FunctionEvaluator &FE, const Expr *RetainGraph,
                const Expr *CreateGraph) {
  auto Flag = [&](const Expr *A) -> std::optional<bool> {
    const Expr *Given = presentOptional(
        A, [](const Expr *X) { return X->getType()->isBooleanType(); });
    if (!Given || isDefaultArg(A))
      return std::nullopt;
    return FE.args().integer(Given).value_or(1) != 0; // not derivable: kept
  };
  if (auto Retain = RetainGraph ? Flag(RetainGraph) : std::nullopt)
    return *Retain;
  if (auto Create = CreateGraph ? Flag(CreateGraph) : std::nullopt)
    return *Create;
  return false;
}

bool TrainingTracker::isAutogradGrad(const FunctionDecl *Callee) {
  return Callee && isLibTorchDecl(Callee) &&
         Callee->getQualifiedNameAsString() == "torch::autograd::grad";
}

std::optional<std::vector<ValueId>>
TrainingTracker::autogradGradients(const CallExpr *CE) {
  if (CE->getNumArgs() < 2)
    return std::nullopt;
  auto Outputs = FE.tensorList(CE->getArg(0));
  auto Inputs = FE.tensorList(CE->getArg(1));
  if (CE->getNumArgs() > 2)
    (void)FE.tensorList(CE->getArg(2)); // grad_outputs
  if (!Inputs)
    return std::nullopt;
  std::optional<int64_t> AllowUnused =
      CE->getNumArgs() > 5 ? FE.args().integer(CE->getArg(5)) : 0;
  bool MayBeUndefined = !AllowUnused || *AllowUnused != 0;
  // grad(outputs, inputs, grad_outputs, retain_graph = create_graph,
  // create_graph): the outputs' graphs release what they saved unless
  // kept (a flag not derivable: taken as kept).
  bool Retains = keepsGraph(FE, CE->getNumArgs() > 3 ? CE->getArg(3) : nullptr,
                            CE->getNumArgs() > 4 ? CE->getArg(4) : nullptr);
  if (Outputs && !Retains)
    for (ValueId Output : *Outputs)
      FE.I.releaseSavedForBackward(Output);
  SourceSpan Where = FE.span(CE->getSourceRange());
  std::vector<ValueId> Gradients;
  for (ValueId Input : *Inputs) {
    TensorValue Known =
        Input >= 0 ? FE.I.value(Input)
                   : unknownTensor("the input of autograd::grad is not known");
    Gradients.push_back(FE.I.unknownWith(
        "autograd::grad", autogradGradient(Known, MayBeUndefined), Where,
        NoStorage, Interpreter::Provenance::Computed));
  }
  return Gradients;
}

namespace {

/// The Derived of `torch::autograd::Function<Derived>::apply`, or null.
const CXXRecordDecl *customFunctionOf(const FunctionDecl *Callee) {
  const auto *Apply = dyn_cast_or_null<CXXMethodDecl>(Callee);
  if (!Apply || !Apply->isStatic() || !Apply->getIdentifier() ||
      Apply->getName() != "apply")
    return nullptr;
  const auto *Base = dyn_cast<ClassTemplateSpecializationDecl>(Apply->getParent());
  if (!Base || Base->getQualifiedNameAsString() != "torch::autograd::Function" ||
      Base->getTemplateArgs().size() != 1 ||
      Base->getTemplateArgs()[0].getKind() != TemplateArgument::Type)
    return nullptr;
  const CXXRecordDecl *Derived =
      Base->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
  return Derived && Derived->hasDefinition() ? Derived->getDefinition() : nullptr;
}

/// Whether Body may mark an input dirty: it calls mark_dirty, or hands
/// the context Ctx to a call (a helper that may).
bool mayMarkDirty(const Stmt *Body, const ParmVarDecl *Ctx) {
  if (!Body)
    return true;
  if (const auto *ME = dyn_cast<MemberExpr>(Body);
      ME && ME->getMemberDecl()->getIdentifier() &&
      ME->getMemberDecl()->getName() == "mark_dirty")
    return true;
  if (const auto *CE = dyn_cast<CallExpr>(Body))
    for (const Expr *A : CE->arguments())
      if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(strip(A));
          DRE && DRE->getDecl() == Ctx)
        return true;
  for (const Stmt *Child : Body->children())
    if (Child && mayMarkDirty(Child, Ctx))
      return true;
  return false;
}

} // namespace

const CXXMethodDecl *TrainingTracker::customFunctionForward(const FunctionDecl *Callee) {
  const CXXRecordDecl *Derived = customFunctionOf(Callee);
  if (!Derived)
    return nullptr;
  const CXXMethodDecl *Forward = nullptr;
  for (const CXXMethodDecl *M : Derived->methods())
    if (M->isStatic() && M->getIdentifier() && M->getName() == "forward") {
      if (Forward)
        return nullptr; // overloads: which one runs is not read
      Forward = M;
    }
  return Forward;
}

std::optional<ValueId>
TrainingTracker::customFunctionApply(const Expr *E, const FunctionDecl *Callee,
                                     llvm::ArrayRef<const Expr *> Args) {
  const CXXRecordDecl *Derived = customFunctionOf(Callee);
  if (!Derived)
    return std::nullopt;
  SourceSpan Where = FE.span(E->getSourceRange());
  std::string Name = Derived->getQualifiedNameAsString();
  auto NotFollowed = [&](const std::string &Why) {
    return FE.unmodelledCall(Name + "::apply", E, {},
                             "'" + Name + "::apply' is not followed: " + Why);
  };
  const CXXMethodDecl *Forward = customFunctionForward(Callee);
  if (!Forward || Forward->getNumParams() < Args.size() + 1)
    return NotFollowed("no one static forward() takes its arguments");
  if (!isTensorType(Forward->getReturnType()))
    return NotFollowed("its forward() returns no single tensor");
  // forward(ctx, args..., defaults for the rest).
  std::vector<const Expr *> ForwardArgs{nullptr};
  ForwardArgs.insert(ForwardArgs.end(), Args.begin(), Args.end());
  for (unsigned K = ForwardArgs.size(); K < Forward->getNumParams(); ++K) {
    const ParmVarDecl *P = Forward->getParamDecl(K);
    if (!P->hasDefaultArg() || P->hasUnparsedDefaultArg() ||
        P->hasUninstantiatedDefaultArg())
      return NotFollowed("forward()'s parameter '" + P->getNameAsString() +
                         "' has no argument");
    ForwardArgs.push_back(P->getDefaultArg());
  }
  auto Result = FE.calls().userCall(E, Forward, nullptr, ForwardArgs);
  if (!Result)
    return NotFollowed(FE.NotFollowedWhy.empty() ? "its forward() is not followed"
                                                 : FE.NotFollowedWhy);
  FE.I.totalsUnknown("'" + Name + "::apply' (line " + std::to_string(Where.Line) +
                     "): autograd keeps what forward() saved for backward "
                     "alive with the result, which the totals do not follow");
  if (*Result < 0)
    return *Result;
  const ValueInfo Info = // a copy: unknownWith below grows the trace
      FE.I.trace().Values.at(*Result);
  bool ReturnsAnInput = FE.I.tensorOf(*Result) != *Result || !Info.MayBe.empty();
  if (!ReturnsAnInput || Info.MayBeAny)
    return *Result;
  // forward() returned input In itself, and marks nothing dirty: apply
  // returns In.view_as(In), a view of In's geometry (rule 6).
  const FunctionDecl *ForwardDef = nullptr;
  Forward->hasBody(ForwardDef);
  if (Info.MayBe.empty() && ForwardDef && Forward->getNumParams() > 0 &&
      !mayMarkDirty(ForwardDef->getBody(), ForwardDef->getParamDecl(0))) {
    OpOutcome ViewAs;
    ViewAs.Kind = OpKind::View;
    ViewAs.Value = Info.Value;
    ViewAs.Value.Storage = NoStorage;
    ViewAs.ReadBytes = SymSize(0);
    ViewAs.WrittenBytes = SymSize(0);
    ViewAs.Note = "apply returns an input forward() returned as view_as(input)";
    return FE.apply(Name + "::apply", E, {FE.I.tensorOf(*Result)}, ViewAs);
  }
  TensorValue Layout = Info.Value;
  Layout.UnknownReason =
      "forward() may return an input, which apply returns as a view of it "
      "(view_as), or itself when forward() marked it dirty";
  ValueId Returned = FE.I.unknownWith(Name + "::apply", Layout, Where,
                                      Layout.Storage, Interpreter::Provenance::External);
  std::vector<ValueId> Candidates = Info.MayBe;
  if (Candidates.empty())
    Candidates.push_back(FE.I.tensorOf(*Result));
  FE.I.mayBe(Returned, Candidates);
  return Returned;
}

} // namespace tma
