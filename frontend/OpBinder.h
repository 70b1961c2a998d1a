// OpBinder: a call of an op of the table (model/ops/OpTable.def) bound to
// one of its overloads' schema, argument by argument (ArgBinder.cpp), and
// the rule's result recorded as ops (Expressions.cpp). A room of the
// evaluator: it keeps no state of its own and reads and writes the
// FunctionEvaluator's; FunctionEvaluator::binder() makes one.
#pragma once

#include "frontend/FunctionEvaluator.h"

namespace tma {

class OpBinder {
public:
  explicit OpBinder(FunctionEvaluator &FE) : FE(FE) {}
  using CallSite = FunctionEvaluator::CallSite;
  using OptDType = FunctionEvaluator::OptDType;
  using OptInt = FunctionEvaluator::OptInt;
  using OptTensor = FunctionEvaluator::OptTensor;

  /// Evaluates a call of a table op; nullopt when Name is not one.
  std::optional<ValueId> tableOp(const CallSite &S, const std::string &Name);
  /// The values of a table op that returns several tensors (a split's
  /// pieces, max(dim)'s values and indices); nullopt when they are not
  /// known.
  /// Entry is the table's name for the op in that role ("max.dim").
  std::optional<std::vector<ValueId>> tableOpValues(const CallSite &S,
                                                    const std::string &Name,
                                                    const std::string &Entry);
  /// The call bound to one of Op's overloads, or nullopt with the reason.
  std::optional<OpCall> bind(const OpInfo &Op, const CallSite &S,
                             const std::string &Name, std::string &Why);
  ArgValue bindArg(const Expr *E, ArgType T);
  ArgValue bindIndices(const Expr *IndexList);
  /// Records a rule's outcomes as ops; one value per outcome.
  std::vector<ValueId> applyResult(const CallSite &S, const OpCall &C,
                                   const RuleResult &R);
  /// The call's arguments by ATen name, for autograd (OpEvent::Args).
  std::vector<OpArgument> namedArguments(const CallSite &S, const OpCall &C);
  void expandOptionsArgument(const OpCall &C, std::vector<OpArgument> &Named);
  /// A's tensor or number from what was bound for it.
  static void setArgumentValue(OpArgument &A, const ArgValue &V);

private:
  FunctionEvaluator &FE;
};

inline OpBinder FunctionEvaluator::binder() { return OpBinder(*this); }

} // namespace tma
