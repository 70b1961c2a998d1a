// SymbolReader: the function's integers as sizes (SymbolicValues.cpp,
// IntegerCalls.cpp) and its parameters as symbols, with the facts its
// checks state (Symbols.cpp). A room of the evaluator: it keeps no state
// of its own and reads and writes the FunctionEvaluator's (Env, IntVars,
// Mutated; FunctionEvaluator::symbols() makes one).
#pragma once

#include "frontend/FunctionEvaluator.h"
#include "frontend/SymbolScans.h"

namespace tma {

class SymbolReader {
public:
  explicit SymbolReader(FunctionEvaluator &FE) : FE(FE) {}
  using BoundArgument = FunctionEvaluator::BoundArgument;
  using Flow = FunctionEvaluator::Flow;

  void declareParameters();
  /// declareParameters for a followed call: the Bound values.
  void declareBoundParameters();
  /// An integer expression as a size: a constant, or an expression over
  /// the function's symbols (`x.size(0) * n`); nullopt when not derived.
  /// May evaluate the tensor expressions it reads (`x.t().size(0)`), so it
  /// is called inside an open statement.
  std::optional<SymSize> sizeValue(const Expr *E);
  /// An integer a helper of the file computes from its arguments' sizes
  /// and integers (`num_flat_features(x)`), read by IntegerCalls.cpp;
  /// nullopt when its body does more than integer arithmetic.
  std::optional<SymSize> integerCall(const CallExpr *CE);
  /// sizeValue; with Evaluate false only names are read (after the
  /// statement, or outside one).
  std::optional<SymSize> sizeOf(const Expr *E, bool Evaluate);
  /// Evaluate: whether tensor expressions other than names may be
  /// evaluated for their sizes.
  std::optional<SymSize> symbolicValue(const Expr *E, bool Evaluate);
  std::optional<SymSize> convertInteger(const SymSize &V, QualType To);
  /// The facts Cond gives when it is known to hold (Holds) or to fail.
  void learnFacts(const Expr *Cond, bool Holds);
  /// Learns the facts S checks, when it runs on every path.
  void checkedStatement(const Stmt *S, Flow F);
  /// An integer local nothing changes after its declaration: its
  /// initializer's value as a size; one the analysis cannot derive (`auto
  /// vocab = dict.size()`, `t.item<int64_t>()`) is a symbol named after the
  /// variable, as PyTorch names a size only a run knows (unbacked), when
  /// the name means one value: declared outside any loop, in an evaluation
  /// of its own (not a followed call), by a name no other declaration of
  /// the function has.
  void declareInteger(const VarDecl *VD, const Expr *Init, Flow F);
  /// What a top-level check At (`TORCH_CHECK(x.dim() == 4)`) says of the
  /// parameters that still hold the caller's tensors there: nothing
  /// changes them, or only statements after At do (Sites).
  struct CheckedFacts {
    std::optional<int64_t> Rank;
    std::optional<DType> Type;
    std::optional<DeviceKind> Dev;
  };
  void checkedParameterFacts(const Expr *Cond, bool Holds,
                             std::map<const clang::ParmVarDecl *, CheckedFacts> &Out,
                             const clang::Stmt *At = nullptr,
                             const MutationSites *Sites = nullptr);

private:
  FunctionEvaluator &FE;
};

inline SymbolReader FunctionEvaluator::symbols() { return SymbolReader(*this); }

} // namespace tma
