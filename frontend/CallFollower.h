// CallFollower: calls into functions the translation unit defines
// (Calls.cpp), evaluated by a FunctionEvaluator of their own with the
// caller's argument values, and summarised in the caller's terms
// (docs/calls.md). A room of the evaluator: it keeps no state of its own
// and reads and writes the FunctionEvaluator's (Caller, CallMemo,
// CallTuples, NotFollowedWhy); FunctionEvaluator::calls() makes one.
#pragma once

#include "frontend/FunctionEvaluator.h"

namespace tma {

class CallFollower {
public:
  explicit CallFollower(FunctionEvaluator &FE) : FE(FE) {}
  using BoundArgument = FunctionEvaluator::BoundArgument;
  using CallSummary = FunctionEvaluator::CallSummary;
  using UserObject = FunctionEvaluator::UserObject;

  /// The body Callee runs when it is the project's own code (not
  /// LibTorch's, not the standard library's), or null.
  const FunctionDecl *followedDefinition(const FunctionDecl *Callee) const;
  /// A call of such a function, evaluated with the arguments' values:
  /// its result (NoValue for a function returning no tensor), or nullopt
  /// when Callee is not followed. Object: a method's object, if any.
  /// An Args entry may be null: a parameter no argument is written for
  /// (the context autograd hands a custom Function's forward), unknown
  /// to the body.
  std::optional<ValueId> userCall(const Expr *E, const FunctionDecl *Callee,
                                  const Expr *Object,
                                  llvm::ArrayRef<const Expr *> Args);
  /// A call in an expression statement or operand that returns no tensor
  /// (`init_weights(w)`): followed when it can be; false otherwise.
  bool followedEffects(const CallExpr *CE);
  CallSummary summarizeCall(const FunctionDecl &Def, const std::string &Name,
                            FunctionEvaluator &Callee, const FunctionTrace &T,
                            const std::vector<int> &TensorArgument);
  /// What the caller gets for element K of what every return statement
  /// of Callee returns: Out (holding the call's bytes) completed with the
  /// value and kind, or unknown with the reason. Peak: the callee's peak,
  /// when its returned storage is to be taken out of it.
  void returnedElement(const FunctionDecl &Def, const std::string &Name,
                       FunctionEvaluator &Callee, const FunctionTrace &T,
                       const std::vector<int> &TensorArgument, size_t K,
                       const std::optional<SymSize> &Peak,
                       const std::optional<SymSize> &Allocated, OpOutcome &Out);

private:
  FunctionEvaluator &FE;
};

inline CallFollower FunctionEvaluator::calls() { return CallFollower(*this); }

} // namespace tma
