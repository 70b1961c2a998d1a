// StatementWalker: the function body in statement order (Statements.cpp):
// blocks, if / switch arms, loops (iterated to a fixpoint when they can
// be), try, and how each statement completes; declarations of tensors,
// lists, tuples, options and modules (Declarations.cpp); expression
// statements (ExpressionStatements.cpp). Each statement opens a statement
// of the Interpreter, so temporaries die at its end. A room of the
// evaluator: it keeps no state of its own and reads and writes the
// FunctionEvaluator's (changeableState() is what a loop's trial pass
// copies); FunctionEvaluator::statements() makes one.
#pragma once

#include "frontend/FunctionEvaluator.h"

namespace tma {

class StatementWalker {
public:
  explicit StatementWalker(FunctionEvaluator &FE) : FE(FE) {}
  using BranchState = FunctionEvaluator::BranchState;
  using Completion = FunctionEvaluator::Completion;
  using Flow = FunctionEvaluator::Flow;
  using Slot = FunctionEvaluator::Slot;
  using StorageSnapshot = FunctionEvaluator::StorageSnapshot;

  Completion statement(const Stmt *S, Flow F, bool Insertable);
  Completion compound(const CompoundStmt *CS, Flow F);
  Completion statementList(llvm::ArrayRef<const Stmt *> Body, Flow F);
  Completion loop(const Stmt *Body, const Stmt *Whole, Flow F);
  Completion branch(const Stmt *Body, Flow F);
  Completion ifStatement(const IfStmt *IS, Flow F);
  Completion switchStatement(const SwitchStmt *SS, Flow F);
  Completion tryStatement(const CXXTryStmt *TS, Flow F);
  void declaration(const DeclStmt *DS, Flow F, bool Insertable);
  void declareVariable(const VarDecl *VD, const DeclStmt *DS, Flow F,
                       bool Insertable);
  void staticLocal(const VarDecl *VD, const DeclStmt *DS, Flow F,
                   bool Insertable);
  Completion expressionStatement(const Expr *E, Flow F, bool Insertable);
  void openStatement(const Stmt *S, Flow F, bool Insertable);
  /// Statement At gives integer VD its value Init (a declaration, or the
  /// one assignment of one declared without a value): evaluates what
  /// tensor work Init does, in a statement of its own.
  void bindInteger(const Stmt *At, const VarDecl *VD, const Expr *Init, Flow F,
                   bool Insertable);
  /// An if's or a switch's initializer, condition variable and the tensor
  /// work in its condition, each its own statement.
  void conditionPrologue(const Stmt *Init, const DeclStmt *CondVar,
                         const Expr *Cond, Flow F);
  void mayHaveLeft(const Completion &C);
  /// A loop whose body leaves every tensor it carries from one iteration
  /// to the next as it found it (shape, strides, dtype, device, a storage
  /// of its own of the same bytes): the body's answers, computed from the
  /// values before the loop, hold on every iteration and the carried
  /// tensors keep them after it. nullopt (with nothing changed) otherwise.
  std::optional<Completion> loopAtFixpoint(const Stmt *Body, const Stmt *Whole,
                                           Flow F);
  /// A counted loop whose body assigns nothing declared outside it (a
  /// training step: forward, backward, step): its body is evaluated once
  /// per iteration, up to three, each a copy in the trace, so the ledger
  /// and autograd see the first iteration allocate the gradients and the
  /// optimizer's state and the later ones reuse them. Past three, the
  /// third stands for every later one when it ends with the storage the
  /// second ended with (the steady state); otherwise the totals are
  /// unknown, with the growth. nullopt (nothing evaluated) when it does not
  /// apply.
  std::optional<Completion> unrolledLoop(const Stmt *Body, const Stmt *Whole, Flow F);
  /// Runs a loop's condition, body and increment once (Inner: in a loop).
  Completion loopBodyOnce(const Stmt *Body, const Stmt *Whole, Flow Inner);

private:
  FunctionEvaluator &FE;
};

inline StatementWalker FunctionEvaluator::statements() { return StatementWalker(*this); }

} // namespace tma
