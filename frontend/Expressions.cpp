// Expressions: a tensor-valued expression evaluated once per statement,
// through the op table: the callee's name finds the op (model/ops/
// OpTable.def), the binder reads its arguments, the op's rule gives the
// outcome, the Interpreter records it. Deep receiver chains are evaluated
// in bounded steps.
#include "frontend/FunctionEvaluator.h"
#include "frontend/OpBinder.h"
#include "frontend/CallFollower.h"
#include "frontend/Invalidation.h"
#include "frontend/ModuleTracker.h"
#include "frontend/ArgumentReader.h"
#include "frontend/TrainingTracker.h"
#include "frontend/GradMode.h"
#include "model/ops/OpCodes.h"

using namespace clang;

namespace tma {

/// K of a call to std::get<K>, when it is a number.
static std::optional<uint64_t> getIndex(const FunctionDecl *Get) {
  const TemplateArgumentList *TA = Get->getTemplateSpecializationArgs();
  if (!TA || TA->size() < 1 || TA->get(0).getKind() != TemplateArgument::Integral)
    return std::nullopt;
  return TA->get(0).getAsIntegral().getZExtValue();
}


ValueId FunctionEvaluator::apply(const std::string &Op, const Expr *E,
                                 const std::vector<ValueId> &Inputs,
                                 const OpOutcome &Out) {
  // Where the receiver and each written argument are: fix-its rewrite
  // around them.
  std::vector<SourceSpan> ArgWhere;
  const Expr *S = strip(E);
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S))
    ArgWhere.push_back(span(MCE->getImplicitObjectArgument()->getSourceRange()));
  if (const auto *CE = dyn_cast<CallExpr>(S))
    for (const Expr *A : CE->arguments())
      if (!isDefaultArg(A))
        ArgWhere.push_back(span(A->getSourceRange()));
  // What autograd records (model/Autograd.h reads it from the trace).
  OpOutcome Recorded = Out;
  if (!Parents && FD.getBody())
    Parents = std::make_unique<ParentMap>(FD.getBody());
  Recorded.GradModeOn = !Parents || gradModeOnAt(*Parents, E);
  Recorded.MakesGradLeaf = makesGradLeaf(E, Out);
  return I.apply(Op, span(E->getSourceRange()), nameSpan(E), Inputs, Recorded,
                 std::move(ArgWhere));
}

bool FunctionEvaluator::makesGradLeaf(const Expr *E, const OpOutcome &Out) {
  const auto *Call = dyn_cast<CallExpr>(strip(E));
  if (!Call)
    return false;
  if (Out.Code == OpCode::requires_grad_) {
    // requires_grad_(bool requires_grad=True): only a constant false clears.
    std::optional<int64_t> Flag =
        Call->getNumArgs() > 0 ? args().integer(Call->getArg(0)) : 1;
    return !Flag || *Flag != 0;
  }
  if (Out.Kind != OpKind::Alloc)
    return false;
  // A factory's options: requires_grad(true), or a flag not derivable.
  for (const Expr *A : Call->arguments())
    if (isOptionsType(A->getType()) && args().options(A).RequiresGrad != false)
      return true;
  return false;
}

ValueId FunctionEvaluator::unmodelledCall(const std::string &Op, const Expr *E,
                                          const std::vector<ValueId> &Inputs,
                                          const std::string &Reason) {
  OpOutcome Out = unmodelled(Op);
  Out.Value.UnknownReason = Reason;
  // What it returns is not known: it may be one of its inputs itself
  // (requires_grad_(), a layer that returns its input), so an in-place
  // change through it may be one to them.
  for (unsigned K = 0; K < Inputs.size(); ++K)
    Out.MayBeInputs.push_back(K);
  return apply(Op, E, Inputs, Out);
}

// ---- Evaluation order and depth ----------------------------------------------------
//
// tensor() evaluates each expression node once per statement (the memo in
// Evaluated), so any path that reads an operand twice reuses its value.
// Deep chains (`x.t().t()...`, `x + x + ... + x`) nest their receiver or
// first operand, the "spine"; evaluating a node recurses down it. To keep
// the stack bounded, a node whose spine is longer than SpineStep first
// evaluates the node SpineStep below it, which does the same: the
// recursion is then about n / SpineStep + 2 * SpineStep frames deep for a
// chain of n, in every front end (the CLI, clang-tidy's thread, the LSP).

constexpr int SpineStep = 32;

/// The tensor operand evaluation recurses into first: a member call's
/// object, an operator's or a LibTorch function's first tensor argument.
const Expr *FunctionEvaluator::spineChild(const Expr *S) const {
  const Expr *Child = nullptr;
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S))
    Child = MCE->getImplicitObjectArgument();
  else if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S))
    Child = OCE->getNumArgs() >= 1 ? OCE->getArg(0) : nullptr;
  else if (const auto *CE = dyn_cast<CallExpr>(S))
    Child = CE->getNumArgs() >= 1 ? CE->getArg(0) : nullptr;
  if (!Child || !isTensorType(Child->getType()))
    return nullptr;
  return strip(Child);
}

ValueId FunctionEvaluator::tensor(const Expr *E) {
  const Expr *S = strip(E);
  if (!S)
    return NoValue;
  if (auto It = Evaluated.find(S); It != Evaluated.end())
    return It->second;
  // Names are looked up afresh each time: an assignment earlier in the
  // statement (`a = b = c`) may have changed them.
  if (isa<DeclRefExpr>(S))
    return evaluate(S);
  const Expr *Deep = S;
  int Length = 0;
  for (const Expr *C = spineChild(S); C && Length < 2 * SpineStep;
       C = spineChild(C)) {
    ++Length;
    if (Length == SpineStep)
      Deep = C;
  }
  if (Length >= 2 * SpineStep && !Evaluated.count(Deep))
    tensor(Deep);
  ValueId V = evaluate(S);
  Evaluated[S] = V;
  return V;
}

ValueId FunctionEvaluator::evaluate(const Expr *S) {
  if (isa<DeclRefExpr>(S) || isa<MemberExpr>(S) ||
      (isa<UnaryOperator>(S) &&
       cast<UnaryOperator>(S)->getOpcode() == UO_Deref)) {
    if (auto Sl = slotOf(S))
      return readSlot(*Sl, S);
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    std::string Name = DRE->getDecl()->getName().str();
    bool Captured = DRE->refersToEnclosingVariableOrCapture() ||
                    (isa<VarDecl>(DRE->getDecl()) &&
                     DRE->getDecl()->getDeclContext() != &FD &&
                     DRE->getDecl()->getDeclContext()->isFunctionOrMethod() &&
                     FD.getParent() &&
                     isa<CXXRecordDecl>(FD.getParent()) &&
                     cast<CXXRecordDecl>(FD.getParent())->isLambda());
    return I.unknown(Name,
                     Captured ? "'" + Name + "' is captured by the lambda: its "
                                "value is not known here"
                              : "'" + Name +
                                    "' is not a tensor this function created",
                     span(S->getSourceRange()),
                     Interpreter::Provenance::External);
  }
  if (const auto *ME = dyn_cast<MemberExpr>(S)) {
    if (auto Batch = modules().loaderBatchMember(ME))
      return *Batch;
    std::string Name = ME->getMemberDecl()->getName().str();
    // A member of a tensor tuple local: `p.first`, `p.second` (std::pair's
    // fields 0 and 1), or a tensor struct's `out.mu`: its field's index.
    if (const auto *Base = dyn_cast<DeclRefExpr>(strip(ME->getBase()))) {
      if (auto Line = changedInPart(Base->getDecl()))
        return I.unknown(Name,
                         "'" + Base->getDecl()->getName().str() +
                             "' is changed member by member (line " +
                             std::to_string(*Line) + "), which is not followed",
                         span(S->getSourceRange()),
                         Interpreter::Provenance::External);
      const auto *Field = dyn_cast<FieldDecl>(ME->getMemberDecl());
      if (auto It = TensorTuples.find(resolveKey(Base->getDecl()));
          Field && It != TensorTuples.end() &&
          Field->getFieldIndex() < It->second.size())
        return It->second[Field->getFieldIndex()];
    }
    // `fc->weight` of a layer built here or by the constructor: the
    // parameter itself (ModuleUses judged that nothing changes it).
    if (auto P = modules().parameterRead(ME))
      return *P;
    return I.unknown(Name,
                     "member '" + Name + "': its value is not known here",
                     span(S->getSourceRange()),
                     Interpreter::Provenance::External);
  }
  if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S))
    return conditional(CO);
  if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isCommaOp()) {
    sideEffects(BO->getLHS());
    return tensor(BO->getRHS());
  }
  if (const auto *NE = dyn_cast<CXXNewExpr>(S)) {
    (void)NE;
    return I.unknown("new", "a heap tensor is not a value",
                     span(S->getSourceRange()));
  }
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S)) {
    // Copy or move of a Tensor handle: the same tensor.
    if (CE->getNumArgs() == 1 && isTensorType(CE->getArg(0)->getType()))
      return tensor(CE->getArg(0));
    // `torch::Tensor()`: an undefined tensor, no storage.
    if (CE->getNumArgs() == 0)
      return I.undefined("default-constructed");
    return I.unknown("tensor", "constructor not modelled",
                     span(S->getSourceRange()));
  }
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S)) {
    // Assignment is an expression: `a = b = c` assigns c to b, then b to a.
    if (OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2 &&
        isTensorType(OCE->getArg(0)->getType()))
      return assignment(S, OCE->getArg(0), OCE->getArg(1));
    // An element of a std::vector<Tensor>: parts[1], x.chunk(3)[1].
    if (OCE->getOperator() == OO_Subscript && OCE->getNumArgs() == 2 &&
        isTensorVectorType(OCE->getArg(0)->getType()))
      return listElement(S, OCE->getArg(0), OCE->getArg(1));
    const auto *Callee = dyn_cast_or_null<FunctionDecl>(OCE->getCalleeDecl());
    llvm::SmallVector<const Expr *, 4> Args(OCE->arguments());
    if (const auto *MD = dyn_cast_or_null<CXXMethodDecl>(Callee))
      return method(S, MD, Args[0], llvm::ArrayRef(Args).drop_front());
    return call(S, Callee, nullptr, Args);
  }
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S)) {
    const Expr *Obj = MCE->getImplicitObjectArgument();
    if (Obj && isTensorVectorType(Obj->getType())) {
      std::string Name = calleeName(MCE->getMethodDecl());
      if (Name == "at" && MCE->getNumArgs() == 1)
        return listElement(S, Obj, MCE->getArg(0));
      if (Name == "front" || Name == "back") {
        auto List = tensorList(Obj);
        if (List && !List->empty())
          return Name == "front" ? List->front() : List->back();
      }
      return I.unknown("tensor", "element of a tensor list not modelled",
                       span(S->getSourceRange()),
                       Interpreter::Provenance::External);
    }
    llvm::SmallVector<const Expr *, 4> Args(MCE->arguments());
    return method(S, MCE->getMethodDecl(), Obj, Args);
  }
  if (const auto *CE = dyn_cast<CallExpr>(S)) {
    const FunctionDecl *Callee = CE->getDirectCallee();
    std::string QName = Callee ? Callee->getQualifiedNameAsString() : "";
    // std::move / std::forward name the same tensor.
    if ((QName == "std::move" || QName == "std::forward") &&
        CE->getNumArgs() == 1)
      return tensor(CE->getArg(0));
    // std::get<K>(tuple) of a tensor tuple.
    if (QName == "std::get" && CE->getNumArgs() == 1) {
      std::optional<uint64_t> K = getIndex(Callee);
      // An LSTM's (output, (h_n, c_n)): its element 0 is the output; the
      // state pair is not a tensor tuple here.
      if (!isTensorTupleType(CE->getArg(0)->getType()))
        if (auto R = modules().recurrentValues(CE->getArg(0))) {
          if (K == 0u)
            return R->front();
          return I.unknown("std::get", "an LSTM's (h_n, c_n) is a pair: "
                           "read it with std::get<0> or std::get<1> of it",
                           span(S->getSourceRange()));
        }
      auto Tuple = tensorTuple(CE->getArg(0));
      if (Tuple && K && *K < Tuple->size())
        return (*Tuple)[*K];
      return I.unknown("std::get", "element of a tensor tuple not followed",
                       span(S->getSourceRange()));
    }
    llvm::SmallVector<const Expr *, 4> Args(CE->arguments());
    return call(S, Callee, nullptr, Args);
  }
  return I.unknown("tensor", "expression not modelled",
                   span(S->getSourceRange()));
}

/// `c ? a : b`: a constant condition picks its arm; otherwise which tensor
/// results is decided at run time, and so is what it allocates.
ValueId FunctionEvaluator::conditional(const AbstractConditionalOperator *CO) {
  if (auto C = args().integer(CO->getCond()))
    return tensor(*C ? CO->getTrueExpr() : CO->getFalseExpr());
  sideEffects(CO->getCond());
  size_t OpsBefore = I.trace().Ops.size();
  ValueId A = tensor(CO->getTrueExpr());
  ValueId B = tensor(CO->getFalseExpr());
  invalidation().allocationsAreUncertain(OpsBefore, "allocates in an arm of '?:' (line " +
                                         std::to_string(span(CO->getSourceRange()).Line) +
                                         ")");
  std::string Why = "chosen at run time by the condition";
  // Arms of one layout (`train ? x.clone() : x`): which tensor is not known,
  // its shape and dtype are.
  std::optional<TensorValue> Common;
  if (A >= 0 && B >= 0)
    Common = commonLayout({I.value(A), I.value(B)}, Why);
  ValueId Chosen =
      Common ? I.unknownWith("?:", *Common, span(CO->getSourceRange()),
                             I.value(A).Storage == I.value(B).Storage
                                 ? I.value(A).Storage
                                 : NoStorage,
                             Interpreter::Provenance::Computed)
             : I.unknown("?:", Why, span(CO->getSourceRange()));
  I.mayBe(Chosen, {A, B});
  return Chosen;
}

namespace {

/// Why the tensors of List are not known, named by what List is: a
/// parameter (a custom Function's backward gets its grad_outputs so), a
/// call's result (ctx->get_saved_variables()), a local.
std::string listNotDerived(const Expr *List) {
  const Expr *S = strip(List);
  if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(S)) {
    std::string Name = DRE->getDecl()->getNameAsString();
    if (isa<ParmVarDecl>(DRE->getDecl()))
      return "parameter '" + Name +
             "' is a list of tensors the caller hands in: its elements are "
             "not known here";
    return "the tensor list '" + Name + "' could not be derived";
  }
  if (const auto *CE = dyn_cast_or_null<CallExpr>(S))
    if (const FunctionDecl *F = CE->getDirectCallee(); F && F->getIdentifier())
      return "the tensors '" + F->getName().str() + "' returns are not derived";
  return "the tensor list could not be derived";
}

} // namespace

ValueId FunctionEvaluator::listElement(const Expr *E, const Expr *List,
                                       const Expr *Index) {
  auto L = tensorList(List);
  auto K = args().integer(Index);
  if (!L)
    return I.unknown("tensor", listNotDerived(List), span(E->getSourceRange()));
  // A split or chunk of a tensor of unknown shape stands as one unknown
  // piece: how many there are is what is not known, not an index out of
  // range.
  if (L->size() == 1 && (*L)[0] >= 0 && !I.value((*L)[0]).Sizes &&
      (!K || *K != 0))
    return I.unknown("tensor",
                     "the number of tensors in the list is not known: " +
                         I.value((*L)[0]).UnknownReason,
                     span(E->getSourceRange()));
  if (!K || *K < 0 || *K >= static_cast<int64_t>(L->size()))
    return I.unknown("tensor",
                     K ? "index " + std::to_string(*K) +
                             " is out of range for a list of " +
                             std::to_string(L->size()) + " tensors"
                       : "list index could not be derived",
                     span(E->getSourceRange()));
  return (*L)[*K];
}

/// The tensors of a std::vector<Tensor> or TensorList expression: a local
/// vector, chunk/split/unbind results, or a braced list `{a, b}`.
std::optional<std::vector<ValueId>>
FunctionEvaluator::tensorList(const Expr *E) {
  const Expr *S = strip(E);
  if (!S)
    return std::nullopt;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    auto It = TensorLists.find(resolveKey(DRE->getDecl()));
    if (It == TensorLists.end())
      return std::nullopt;
    return It->second;
  }
  if (auto It = EvaluatedLists.find(S); It != EvaluatedLists.end())
    return It->second;
  auto L = evaluateList(S);
  EvaluatedLists[S] = L;
  return L;
}

std::optional<std::vector<ValueId>>
FunctionEvaluator::evaluateList(const Expr *S) {
  // `std::vector<torch::Tensor> v;` starts empty.
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S); CE && CE->getNumArgs() == 0)
    return std::vector<ValueId>{};
  // Braced lists reach a TensorList parameter through ArrayRef and
  // std::initializer_list constructors.
  const Expr *Cur = S;
  for (int Depth = 0; Depth < 6 && Cur; ++Depth) {
    Cur = strip(Cur);
    if (const auto *IL = dyn_cast<InitListExpr>(Cur)) {
      std::vector<ValueId> Out;
      for (const Expr *Elem : IL->inits())
        Out.push_back(tensor(Elem));
      return Out;
    }
    if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(Cur)) {
      Cur = SIL->getSubExpr();
      continue;
    }
    if (const auto *CE = dyn_cast<CXXConstructExpr>(Cur)) {
      // `std::vector<Tensor>{a, b}` and a braced list handed to a `const
      // std::vector<Tensor> &` parameter (autograd::grad's) construct from
      // the initializer list with the allocator left to its default.
      unsigned Written = CE->getNumArgs();
      while (Written > 1 && isDefaultArg(CE->getArg(Written - 1)))
        --Written;
      if (Written == 1 &&
          (isTensorVectorType(CE->getArg(0)->getType()) ||
           isa<InitListExpr>(strip(CE->getArg(0))) ||
           isa<CXXStdInitializerListExpr>(strip(CE->getArg(0))) ||
           isa<CXXConstructExpr>(strip(CE->getArg(0))))) {
        Cur = CE->getArg(0);
        continue;
      }
      if (Written == 1 && isTensorType(CE->getArg(0)->getType()))
        return std::vector<ValueId>{tensor(CE->getArg(0))};
      break;
    }
    if (isTensorVectorType(Cur->getType()) && Cur != S)
      return tensorList(Cur);
    break;
  }
  // torch::autograd::grad: one gradient per input (AutogradCalls.cpp).
  if (const auto *CE = dyn_cast<CallExpr>(S);
      CE && TrainingTracker::isAutogradGrad(CE->getDirectCallee()))
    return training().autogradGradients(CE);
  // chunk / split / split_with_sizes / unbind, as methods or functions.
  const Expr *Object = nullptr;
  const FunctionDecl *Callee = nullptr;
  llvm::SmallVector<const Expr *, 4> Args;
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S)) {
    Object = MCE->getImplicitObjectArgument();
    Callee = MCE->getMethodDecl();
    Args.append(MCE->arg_begin(), MCE->arg_end());
  } else if (const auto *CE = dyn_cast<CallExpr>(S)) {
    Callee = CE->getDirectCallee();
    if (CE->getNumArgs() >= 1 && isTensorType(CE->getArg(0)->getType())) {
      Object = CE->getArg(0);
      Args.append(CE->arg_begin() + 1, CE->arg_end());
    }
  }
  if (!Object || !Callee || !isTensorType(Object->getType()) ||
      !isLibTorchDecl(Callee))
    return std::nullopt;
  CallSite Site;
  Site.E = S;
  Site.Callee = Callee;
  if (isa<CXXMemberCallExpr>(S)) {
    Site.Receiver = Object;
    Site.Args.append(Args.begin(), Args.end());
  } else {
    const auto *CE = cast<CallExpr>(S);
    Site.Args.append(CE->arg_begin(), CE->arg_end());
  }
  std::string Name = calleeName(Callee);
  if (!lookupOp(Name))
    if (auto Views = schemaViews(S, Callee, Site.Receiver, Site.Args))
      return Views;
  return binder().tableOpValues(Site, Name, Name);
}

/// The tensors of a std::tuple / std::pair of tensors: a local, a LibTorch
/// op returning values and indices (max(dim), min(dim)), or one built
/// from tensors (std::make_pair, std::make_tuple, the constructors).
std::optional<std::vector<ValueId>>
FunctionEvaluator::tensorTuple(const Expr *E) {
  const Expr *S = strip(E);
  if (!S)
    return std::nullopt;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    auto It = TensorTuples.find(resolveKey(DRE->getDecl()));
    if (It == TensorTuples.end() || changedInPart(DRE->getDecl()))
      return std::nullopt;
    return It->second;
  }
  if (auto It = EvaluatedTuples.find(S); It != EvaluatedTuples.end())
    return It->second;
  auto T = evaluateTuple(S);
  EvaluatedTuples[S] = T;
  return T;
}

std::optional<std::vector<ValueId>>
FunctionEvaluator::evaluateTuple(const Expr *S) {
  // Built from tensors: each element is the tensor handed in.
  auto Elements = [&](llvm::ArrayRef<const Expr *> Args)
      -> std::optional<std::vector<ValueId>> {
    std::vector<ValueId> Out;
    for (const Expr *A : Args) {
      if (!isTensorType(A->getType()))
        return std::nullopt;
      Out.push_back(tensor(A));
    }
    return Out;
  };
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S)) {
    llvm::SmallVector<const Expr *, 4> Args(CE->arguments());
    if (Args.size() == 1 && isTensorTupleType(Args[0]->getType()))
      return tensorTuple(Args[0]); // a copy or a move
    if (tensorRecord(CE->getType()))
      return std::nullopt; // a struct is built by aggregate initialisation
    return Elements(Args);
  }
  // A struct of tensors initialised member by member (`return {y, mu,
  // log_var};`): a member left out is an undefined tensor.
  if (const auto *IL = dyn_cast<InitListExpr>(S)) {
    const clang::CXXRecordDecl *RD = tensorRecord(IL->getType());
    if (!RD)
      return std::nullopt;
    size_t Fields = std::distance(RD->field_begin(), RD->field_end());
    if (IL->getNumInits() != Fields)
      return std::nullopt;
    llvm::SmallVector<const Expr *, 4> Inits(IL->inits());
    return Elements(Inits);
  }
  const auto *CE = dyn_cast<CallExpr>(S);
  if (!CE)
    return std::nullopt;
  const FunctionDecl *Callee = CE->getDirectCallee();
  if (!Callee)
    return std::nullopt;
  std::string QName = Callee->getQualifiedNameAsString();
  if (QName == "std::make_pair" || QName == "std::make_tuple") {
    llvm::SmallVector<const Expr *, 4> Args(CE->arguments());
    return Elements(Args);
  }
  if (QName == "std::move" && CE->getNumArgs() == 1)
    return tensorTuple(CE->getArg(0));
  // gru->forward(x): (output, h_n).
  if (auto R = modules().recurrentValues(S))
    return R;
  // std::get<1>(lstm->forward(x)): the LSTM's (h_n, c_n).
  if (QName == "std::get" && CE->getNumArgs() == 1 && getIndex(Callee) == 1u &&
      !isTensorTupleType(CE->getArg(0)->getType()))
    if (auto R = modules().recurrentValues(CE->getArg(0)); R && R->size() == 3)
      return std::vector<ValueId>{(*R)[1], (*R)[2]};
  // A function of the project returning a pair or tuple of tensors
  // (`auto [mu, log_var] = encode(x)`, `std::tie(h, c) = step(x, h, c)`),
  // followed into its body.
  if (!isLibTorchDecl(Callee)) {
    if (calls().followedEffects(CE))
      if (auto It = CallTuples.find(CE); It != CallTuples.end())
        return It->second;
    return std::nullopt;
  }
  // max(dim, keepdim) / min(dim, keepdim), as methods or functions: the
  // table's "max.dim".
  CallSite Site;
  Site.E = S;
  Site.Callee = Callee;
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(CE)) {
    Site.Receiver = MCE->getImplicitObjectArgument();
    Site.Args.append(MCE->arg_begin(), MCE->arg_end());
    if (!isTensorType(Site.Receiver->getType()))
      return std::nullopt;
  } else {
    Site.Args.append(CE->arg_begin(), CE->arg_end());
    if (Site.Args.empty() || !isTensorType(Site.Args[0]->getType()))
      return std::nullopt;
  }
  std::string Name = calleeName(Callee);
  // The table's tuple entry: "max.dim" beside the reduction "max", or the
  // op itself where it always returns a tuple (topk, sort).
  std::string Entry = Name + ".dim";
  if (!lookupOp(Entry))
    if (const OpInfo *Op = lookupOp(Name); Op && Op->Result == ResultKind::Tuple)
      Entry = Name;
  auto Values = binder().tableOpValues(Site, Name, Entry);
  libTorchWrites(CE, Callee); // max_out(values, indices, x, 1)
  return Values;
}

ValueId FunctionEvaluator::call(const Expr *E, const FunctionDecl *Callee,
                                const Expr *Object,
                                llvm::ArrayRef<const Expr *> Args) {
  if (!Callee)
    return I.unknown("call", "callee could not be resolved",
                     span(E->getSourceRange()));
  if (!isLibTorchDecl(Callee)) {
    if (auto V = calls().userCall(E, Callee, nullptr, Args))
      return *V;
    std::string Name = Callee->getQualifiedNameAsString();
    std::vector<ValueId> Inputs;
    for (const Expr *A : Args)
      if (isTensorType(A->getType()))
        Inputs.push_back(tensor(A));
    if (const auto *CE = dyn_cast<CallExpr>(E))
      opaqueCallEffects(CE);
    return unmodelledCall(Name, E, Inputs,
                          NotFollowedWhy.empty()
                              ? "call to '" + Name + "' is not analysed"
                              : NotFollowedWhy);
  }
  if (auto V = training().customFunctionApply(E, Callee, Args))
    return *V;
  return freeFunction(E, Callee, Args);
}


ValueId FunctionEvaluator::freeFunction(const Expr *E, const FunctionDecl *FD,
                                        llvm::ArrayRef<const Expr *> Args) {
  std::string Name = calleeName(FD);
  if (Name == "tensor")
    return tensorLiteral(E, FD, Args);
  // Functions and methods are the same ops (torch::transpose(x, 0, 1) is
  // x.transpose(0, 1)); so are the operators, with a C++ scalar on the
  // left too (ATen/TensorOperators.h).
  CallSite S;
  S.E = E;
  S.Callee = FD;
  S.Args.append(Args.begin(), Args.end());
  S.Functional = FD->getQualifiedNameAsString().find("nn::functional") !=
                 std::string::npos;
  if (auto V = binder().tableOp(S, Name))
    return *V;
  std::vector<ValueId> Inputs;
  for (const Expr *A : Args)
    if (isTensorType(A->getType()))
      Inputs.push_back(tensor(A));
  if (auto V = schemaOp(E, FD, nullptr, Args, Inputs))
    return *V;
  ValueId Result = unmodelledCall(Name, E, Inputs, "'" + Name + "' is not modelled");
  if (const auto *CE = dyn_cast<CallExpr>(E))
    libTorchWrites(CE, FD);
  return writtenResult(FD, nullptr, Args).value_or(Result);
}

ValueId FunctionEvaluator::method(const Expr *E, const CXXMethodDecl *MD,
                                  const Expr *Object,
                                  llvm::ArrayRef<const Expr *> Args) {
  if (!MD || !Object || !isTensorType(Object->getType())) {
    if (auto V = modules().moduleForward(E, MD, Object, Args))
      return *V;
    if (auto V = calls().userCall(E, MD, Object, Args))
      return *V;
    if (const auto *CE = dyn_cast<CallExpr>(E))
      opaqueCallEffects(CE);
    std::string Why = NotFollowedWhy;
    if (Why.empty() && MD && MD->getParent() && MD->getParent()->isLambda())
      Why = lambdaNotFollowed(MD->getParent());
    if (Why.empty())
      Why = MD && MD->getParent() && MD->getParent()->isLambda()
                ? "call to a lambda is not analysed"
                : "method of a non-tensor object";
    return I.unknown("call", Why, span(E->getSourceRange()));
  }
  std::string Name = calleeName(MD);
  CallSite S;
  S.E = E;
  S.Callee = MD;
  S.Receiver = Object;
  S.Args.append(Args.begin(), Args.end());
  if (auto V = binder().tableOp(S, Name))
    return *V;
  ValueId Self = tensor(Object);
  std::vector<ValueId> Inputs = {Self};
  for (const Expr *A : Args)
    if (isTensorType(A->getType()))
      Inputs.push_back(tensor(A));
  if (auto V = schemaOp(E, MD, Object, Args, Inputs))
    return *V;
  ValueId V = unmodelledCall(Name, E, Inputs, "'" + Name + "' is not modelled");
  // An in-place method we do not model (resize_, unsqueeze_, t_, set_...)
  // may change the tensor's shape or storage: forget what we knew.
  if (!Name.empty() && Name.back() == '_')
    forgetObject(Object, "is changed in place by '" + Name + "'");
  return writtenResult(MD, Object, Args).value_or(V);
}

// ---- Table ops ---------------------------------------------------------------------

std::vector<ValueId> OpBinder::applyResult(const CallSite &S,
                                                    const OpCall &C,
                                                    const RuleResult &R) {
  // The inputs: the arguments the rule names, else every tensor argument
  // in schema order (a list's or an index list's tensors included).
  std::vector<ValueId> Inputs;
  auto Add = [&](const ArgValue &A) {
    if (A.K == ArgValue::Kind::Tensor)
      Inputs.push_back(A.Tensor);
    else if (A.K == ArgValue::Kind::TensorList ||
             A.K == ArgValue::Kind::Indices)
      Inputs.insert(Inputs.end(), A.Tensors.begin(), A.Tensors.end());
  };
  if (R.Inputs)
    for (size_t K : *R.Inputs)
      Add(C.arg(K));
  else
    for (const ArgValue &A : C.Args)
      Add(A);
  std::string Name = R.Name.empty() ? C.Written : R.Name;
  std::vector<OpArgument> Named = namedArguments(S, C);
  std::vector<ValueId> Values;
  for (OpOutcome Out : R.Outcomes) {
    Out.Args = Named;
    Values.push_back(FE.apply(Name, S.E, Inputs, Out));
  }
  if (R.ForgetSelf && S.Receiver)
    FE.forgetObject(S.Receiver, "is changed in place by '" + C.Written + "'");
  if (R.SelfTakesResult && !Values.empty() &&
      C.arg(0).K == ArgValue::Kind::Tensor)
    FE.invalidation().tensorChangedInPlace(C.arg(0).Tensor, Values.front(),
                         "is reshaped in place by '" + C.Written + "'",
                         FE.span(S.E->getSourceRange()));
  return Values;
}

std::vector<OpArgument> OpBinder::namedArguments(const CallSite &S,
                                                 const OpCall &C) {
  const Schema *Sch = C.Op && C.Overload < C.Op->Overloads.size()
                          ? &C.Op->Overloads[C.Overload]
                          : nullptr;
  if (!Sch)
    return {};
  // A schema the table writes as "(...)" binds by the C++ types alone:
  // its names are the declaration's, which ATen's generated headers take
  // from the schema.
  auto ParamName = [&](size_t K) -> std::string {
    if (!S.Callee || K >= S.Callee->getNumParams())
      return "";
    return S.Callee->getParamDecl(K)->getName().str();
  };
  std::vector<OpArgument> Named;
  for (size_t K = 0; K < C.Args.size(); ++K) {
    OpArgument A;
    if (!Sch->Variadic)
      A.Name = C.argName(K);
    else if (S.Receiver)
      A.Name = K == 0 ? "self" : ParamName(K - 1);
    else
      A.Name = ParamName(K);
    if (A.Name.empty())
      return {}; // a name not known: no argument is matched by name
    const ArgValue &V = C.Args[K];
    A.IsTensor = V.K == ArgValue::Kind::Tensor ||
                 V.K == ArgValue::Kind::TensorList ||
                 V.Type == ArgType::Tensor || V.Type == ArgType::OptTensor ||
                 V.Type == ArgType::TensorList;
    setArgumentValue(A, V);
    A.Absent = V.K == ArgValue::Kind::Absent;
    Named.push_back(std::move(A));
  }
  expandOptionsArgument(C, Named);
  return Named;
}

std::optional<ValueId> OpBinder::tableOp(const CallSite &S,
                                                  const std::string &Name) {
  const OpInfo *Op = lookupOp(Name);
  if (!Op || Op->Result == ResultKind::Views || Op->Result == ResultKind::Tuple)
    return std::nullopt;
  std::string Why;
  std::optional<OpCall> C = bind(*Op, S, Name, Why);
  if (!C) {
    std::vector<ValueId> Inputs;
    if (S.Receiver)
      Inputs.push_back(FE.tensor(S.Receiver));
    for (const Expr *A : S.Args)
      if (isTensorType(A->getType()))
        Inputs.push_back(FE.tensor(A));
    return FE.unmodelledCall(Name, S.E, Inputs, Why);
  }
  std::vector<ValueId> Values = applyResult(S, *C, applyRule(*C));
  if (Values.empty())
    return FE.I.unknown(Name, "the rule gave no result", FE.span(S.E->getSourceRange()));
  return Values.front();
}

std::optional<std::vector<ValueId>>
OpBinder::tableOpValues(const CallSite &S, const std::string &Name,
                                 const std::string &Entry) {
  const OpInfo *Op = lookupOp(Entry);
  std::string Why = Op ? "" : "'" + Name + "' " +
                                  (Entry == Name ? "with these arguments is not "
                                                   "modelled"
                                                 : "returning a tuple is not "
                                                   "modelled here");
  std::optional<OpCall> C;
  if (Op)
    C = bind(*Op, S, Name, Why);
  if (!C) {
    const Expr *SelfE = S.Receiver ? S.Receiver : S.Args.front();
    FE.unmodelledCall(Name, S.E, {FE.tensor(SelfE)}, Why);
    return std::nullopt;
  }
  RuleResult R = applyRule(*C);
  std::vector<ValueId> Values = applyResult(S, *C, R);
  // One outcome that is not a view: it throws, or the input is unknown.
  bool Single = R.Outcomes.size() == 1;
  if (Single && (Op->Result == ResultKind::Tuple ||
                 R.Outcomes[0].Kind != OpKind::View))
    return std::nullopt;
  return Values;
}

} // namespace tma
