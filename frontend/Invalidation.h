// Invalidation: what a branch or a loop may have changed becomes unknown
// after it; the arms of an if or a switch each start from the state
// before it and are joined after the last (Invalidation.cpp); allocations
// that ran an unknown number of times make the totals unknown
// (Effects.cpp). A room of the evaluator: it keeps no state of its own
// and reads and writes the FunctionEvaluator's;
// FunctionEvaluator::invalidation() makes one.
#pragma once

#include "frontend/FunctionEvaluator.h"

namespace tma {

class Invalidation {
public:
  explicit Invalidation(FunctionEvaluator &FE) : FE(FE) {}
  using BranchState = FunctionEvaluator::BranchState;
  using Holding = FunctionEvaluator::Holding;
  using StorageSnapshot = FunctionEvaluator::StorageSnapshot;

  StorageSnapshot snapshotAssignedIn(const Stmt *Body);
  void invalidateAssignedIn(const Stmt *Body, const std::string &Reason,
                            SourceRange Where,
                            const StorageSnapshot *Before = nullptr,
                            bool Names = true);
  BranchState saveBranchState() const;
  /// Puts back what the names held at Start (each name still in scope),
  /// and the lists, tuples and variables.
  void restoreBranchState(const BranchState &Start);
  /// After the last arm: a name whose value any arm's end (Ends, and the
  /// state now) differs from Start's is unknown; it stays counted on its
  /// storage when every arm left it on the same one.
  void mergeBranchStates(const Stmt *Whole, const BranchState &Start,
                         const std::vector<BranchState> &Ends,
                         const std::string &Context);
  /// A tensor's geometry changed in place (`x.unsqueeze_(0)`): every name,
  /// list element and tuple element holding Old's tensor holds New.
  void tensorChangedInPlace(ValueId Old, ValueId New, const std::string &Why,
                            const SourceSpan &Where);
  /// Allocations among the ops since OpsBefore make the totals unknown
  /// (they ran a number of times the analysis does not know). AtOpLine:
  /// Why names the first such op's line.
  void allocationsAreUncertain(size_t OpsBefore, const std::string &Why,
                               bool AtOpLine = false);

private:
  FunctionEvaluator &FE;
};

inline Invalidation FunctionEvaluator::invalidation() { return Invalidation(*this); }

} // namespace tma
