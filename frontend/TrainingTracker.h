// TrainingTracker: backward()'s gradients, optimizers over a module's
// parameters and their state after step() (Training.cpp), and the list
// torch::autograd::grad returns (AutogradCalls.cpp). A room of the
// evaluator: it keeps no state of its own and reads and writes the
// FunctionEvaluator's (Grads, Optimizers, TrainingCalls, ...; they are
// part of changeableState(), so loops and branches see them);
// FunctionEvaluator::training() makes one.
#pragma once

#include "frontend/FunctionEvaluator.h"

namespace tma {

class TrainingTracker {
public:
  explicit TrainingTracker(FunctionEvaluator &FE) : FE(FE) {}
  using Flow = FunctionEvaluator::Flow;
  using Holding = FunctionEvaluator::Holding;
  using ModuleValue = FunctionEvaluator::ModuleValue;
  using Number = FunctionEvaluator::Number;
  using OptimizerValue = FunctionEvaluator::OptimizerValue;

  /// Whether T is a torch::optim optimizer (derives from Optimizer).
  static bool isOptimizerType(QualType T);
  /// The module whose parameters an optimizer's first constructor argument
  /// is: `fc->parameters()` (recurse true, the default), else null.
  static const ValueDecl *parametersOwner(FunctionEvaluator &FE, const Expr *Arg);
  void declareOptimizer(const VarDecl *VD, const DeclStmt *DS, Flow F,
                        bool Insertable);
  /// `loss.backward()`, `opt.step()`, `opt.zero_grad()`,
  /// `fc->zero_grad()` as a statement: true when handled.
  bool trainingStatement(const Expr *E, const Expr *S, Flow F,
                         bool Insertable);
  /// Whether Callee is torch::autograd::grad (however it is spelled:
  /// qualified, through a using-declaration or using-directive).
  static bool isAutogradGrad(const FunctionDecl *Callee);
  /// The gradients `torch::autograd::grad(outputs, inputs, ...)` returns,
  /// one per input; nullopt when the inputs list is not known.
  std::optional<std::vector<ValueId>> autogradGradients(const CallExpr *CE);
  /// Derived::forward when Callee is `torch::autograd::Function<Derived>::
  /// apply` and Derived has one static forward(); null otherwise.
  static const CXXMethodDecl *customFunctionForward(const FunctionDecl *Callee);
  /// `Derived::apply(args...)` of a torch::autograd::Function<Derived>:
  /// Derived::forward(ctx, args...) followed as a call (AutogradCalls.cpp);
  /// nullopt when Callee is no such apply.
  std::optional<ValueId> customFunctionApply(const Expr *E,
                                             const FunctionDecl *Callee,
                                             llvm::ArrayRef<const Expr *> Args);
  /// Whether the function has training code (a backward(), an
  /// optimizer); then why no gradient is known in it, or "".
  std::optional<std::string> trainingScope() const;
  /// Fills the training columns of the summary row S of the module built
  /// here under Key; Why: trainingScope()'s.
  void summarizeTraining(const std::string &Key, ModuleSummary &S,
                         const std::string &Why) const;

private:
  FunctionEvaluator &FE;
};

inline TrainingTracker FunctionEvaluator::training() { return TrainingTracker(*this); }

/// Whether backward() or autograd::grad keeps the graph (retain_graph,
/// which defaults to create_graph): then what its nodes saved stays.
/// Arguments not given are null; a flag not derivable counts as keeping.
bool keepsGraph(FunctionEvaluator &FE, const clang::Expr *RetainGraph,
                const clang::Expr *CreateGraph);

} // namespace tma
