// The Interpreter turns op outcomes into a FunctionTrace: it gives results
// their storages, binds names, and keeps the lifetime ledger.
//
// Lifetimes follow C++: a named tensor holds its storage until the name is
// reassigned or its scope ends; a temporary lives until the end of the full
// expression (the statement). A storage is released when nothing holds it.
// Live bytes are summed over storages this function allocated; a storage
// whose size is unknown makes the totals unknown rather than wrong.
#pragma once

#include "model/Autograd.h"
#include "model/AutogradSaves.h"
#include "model/Optimizers.h"
#include "model/Ops.h"
#include "model/Trace.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tma {

class Interpreter {
public:
  Interpreter(std::string File, std::string Function, SourceSpan Where);

  /// Opens a statement; ops and bindings until endStatement belong to it.
  void beginStatement(const Statement &S);
  /// Releases the statement's temporaries and records live bytes.
  void endStatement();

  void enterScope();
  /// Releases every name declared since the matching enterScope.
  void exitScope();

  /// A tensor that comes from outside the function (a parameter, a member,
  /// a global): its storage is not counted in this function's totals.
  /// Bytes: the storage's size when the caller knows it (a parameter
  /// assumed to own its storage exactly).
  ValueId external(const TensorValue &V,
                   std::optional<SymSize> Bytes = std::nullopt);

  /// Records an op and returns its result value. Inputs[Outcome.SharesInput]
  /// donates the storage for views; Alloc/Copy get a new storage.
  /// ArgWhere: the receiver and each written argument (for fix-its).
  ValueId apply(const std::string &Op, const SourceSpan &Where,
                const SourceSpan &NameWhere, const std::vector<ValueId> &Inputs,
                const OpOutcome &Outcome,
                std::vector<SourceSpan> ArgWhere = {});

  /// Where a value the frontend could not evaluate comes from: outside the
  /// function (a member, a global, a capture: nothing of ours allocated),
  /// or a computation we do not follow (it may have allocated, so the
  /// totals become unknown).
  enum class Provenance { External, Computed };
  /// A tensor value the frontend could not evaluate at all. Computed: what
  /// unfollowed code returned, which may be any tensor (MayBeAny) until
  /// mayBe() narrows it.
  ValueId unknown(const std::string &What, const std::string &Reason,
                  const SourceSpan &Where,
                  Provenance From = Provenance::Computed);
  /// A tensor known only in Layout's fields (commonLayout: one of several
  /// tensors of one shape), on storage S when that is known.
  ValueId unknownWith(const std::string &What, const TensorValue &Layout,
                      const SourceSpan &Where, StorageId S, Provenance From);

  /// Another tensor of Like's layout, dtype and device, made by the same
  /// op, on storage S (NoStorage: a storage of its own, of the bytes of
  /// Like's): what a later iteration of a loop appends where the iteration
  /// the analysis ran appended Like. Why: the reason its storage is not
  /// known, when Like's is not either.
  ValueId anotherLike(ValueId Like, StorageId S, const std::string &Why);

  /// Binds Key (unique per declaration) to Value; DisplayName is what the
  /// report shows.
  void bind(const std::string &Key, const std::string &DisplayName,
            ValueId Value, const SourceSpan &Where, const SourceSpan &NameWhere,
            bool Reassignment, bool IsParameter = false);
  /// Marks the binding row just made as a static local's.
  void markStatic();
  /// Gives an existing name a new value without a row in the report (a
  /// name that became unknown after a loop or a branch).
  void rebind(const std::string &Key, ValueId Value);
  /// Keeps Value's storage alive under Key until Key's scope ends, without
  /// a row in the report (the elements of a std::vector<Tensor> local).
  void hold(const std::string &Key, ValueId Value);
  /// Frees one of the open statement's temporaries before the statement
  /// ends: a result an op consumed that nothing else holds (a
  /// Sequential's intermediate results, dropped as its forward moves on,
  /// as its `input = module(input)` loop does). No effect on a storage
  /// that is not a temporary of the statement.
  void dropTemporary(StorageId S);
  /// The number of scopes open now (1: the function's own).
  size_t scopeDepth() const { return Scopes.size(); }
  /// Like hold, but in the Depth-th scope open now (scopeDepth() when it
  /// was declared): an element of a list declared there lives as long as
  /// the list, wherever it was appended.
  void holdInScope(const std::string &Key, ValueId Value, size_t Depth);
  /// Like hold, but the storage stays alive until the function returns
  /// (a heap handle made by `new`), whatever scope is open now.
  void holdUntilReturn(const std::string &Key, ValueId Value);
  /// Releases what Key holds and forgets the name (`delete p`).
  void drop(const std::string &Key);
  /// A binding row for a name that holds nothing of its own (a reference
  /// naming another variable's tensor).
  void note(const std::string &DisplayName, ValueId Value,
            const SourceSpan &Where, const SourceSpan &NameWhere);
  /// A value whose geometry is unknown but whose storage is S (a name
  /// reassigned in a branch to views of the same tensor).
  ValueId unknownOn(const std::string &What, const std::string &Reason,
                    const SourceSpan &Where, StorageId S);
  /// An undefined tensor (`t.defined()` is false): no storage, recorded as
  /// no unknown. How: "default-constructed", "moved from". An op on it is
  /// unknown with the reason "an undefined tensor (How)".
  ValueId undefined(const std::string &How);
  /// The value a name holds now, or NoValue.
  ValueId lookup(const std::string &Key) const;
  /// The first value of V's C++ tensor (ValueInfo::SameTensorAs).
  ValueId tensorOf(ValueId V) const;
  /// Every name (hidden holders included) whose value is V's tensor: the
  /// handles an in-place change of its geometry is seen through.
  std::vector<std::string> keysHoldingTensor(ValueId V) const;
  /// V is one of Candidates' tensors, chosen at run time (ValueInfo::MayBe),
  /// and no other.
  void mayBe(ValueId V, const std::vector<ValueId> &Candidates);
  /// V may be any tensor of the function (ValueInfo::MayBeAny).
  void mayBeAny(ValueId V);
  /// A and B may be one C++ tensor without being known to be: one of them
  /// is a run-time choice that includes the other's tensor, or both are
  /// choices that share a candidate.
  bool mayShareTensor(ValueId A, ValueId B) const;
  /// Every name and the value it holds now.
  const std::map<std::string, ValueId> &names() const { return Names; }
  /// The name the report shows for what Key holds now; empty for a hidden
  /// holder (a vector element, a member).
  std::string nameOf(const std::string &Key) const;
  /// The names currently held whose key starts with Prefix.
  std::vector<std::string> keysWithPrefix(const std::string &Prefix) const;

  const TensorValue &value(ValueId Id) const { return Trace.Values.at(Id).Value; }

  void mentionDevice(const SourceSpan &Where, bool IsStringLiteral,
                     const Device &Named);
  /// What the parsed LibTorch's autograd saves (model/Autograd.h's
  /// GradientTape reads it for every op; null: not known).
  /// V is a tensor that requires grad by itself, held to the function's
  /// end: a parameter of a module the function's own scope builds
  /// (model/Autograd.h rule 1).
  void markGradLeaf(ValueId V) { Tape.markHeldLeaf(Trace, V); }
  void setAutogradSaves(std::shared_ptr<const AutogradSaves> S) {
    Saves = std::move(S);
  }
  /// backward() from Root without retain_graph: what the nodes of Root's
  /// graph saved is released now.
  void releaseSavedForBackward(ValueId Root);
  /// backward() from R.Root, followed node by node (GradientTape::backward):
  /// its gradients, temporaries and releases go on the ledger of the
  /// current statement, the leaves' .grad held as long as the function.
  /// Returns why the pass is not followed (then nothing changed), or "".
  std::string runBackward(const BackwardRequest &R);
  /// optimizer.step() over ParamsWithState (each parameter, and whether
  /// the optimizer holds its state already), followed as model/Optimizers.h
  /// says; the state is held as long as the function, named StateName.
  /// Returns why not followed (then nothing changed), or "".
  std::string runOptimizerStep(const OptimizerKind &K, const std::string &StateName,
                               std::vector<std::pair<ValueId, bool>> ParamsWithState);
  /// Whether a backward() gave any tensor a .grad (or may have).
  bool anyGrad() const { return Tape.anyGrad(); }
  /// A backward() whose allocations are not followed ran.
  void backwardNotFollowed() { Tape.backwardNotFollowed(); }
  /// Notes that totals cannot be exact (an allocation inside a loop).
  void totalsUnknown(const std::string &Reason);
  void recordUnknown(const std::string &What, const std::string &Reason,
                     const SourceSpan &Where);
  void setThrows(const std::string &Message);
  FunctionTrace &trace() { return Trace; }

  /// Ends the function: exits every scope and fills the summary.
  FunctionTrace finish();

  // Unrolled loops (StatementWalker::unrolledLoop; model/UnrolledLoops.cpp).
  /// The bytes live now; nullopt when one of them is of unknown size.
  std::optional<SymSize> liveNow() const;
  /// Opens a window on the ledger: closePeakWindow() gives the most
  /// storage live while it was open, nullopt when that is unknown.
  void openPeakWindow();
  std::optional<SymSize> closePeakWindow();
  /// Statements [From, From + Count) are a later iteration's copies of
  /// [Of, Of + Count), one for one.
  void markRepeats(unsigned From, unsigned Of, unsigned Count);
  /// Ends an unrolled loop: its summary, and what the iterations the
  /// trace does not hold (its fourth onwards, each as its third) allocate
  /// more, in storages ("nothing freed" counts them) and with their ops'
  /// transients.
  void endUnrolledLoop(UnrolledLoopSummary L, std::optional<SymSize> UnheldStorageBytes,
                       std::optional<SymSize> UnheldOpBytes);

private:
  struct NameSlot {
    std::string Key;
    ValueId Value = NoValue;
  };
  void retain(StorageId S);
  void place(const std::string &Key, ValueId Value,
             std::vector<std::string> &Scope);
  /// AtScopeEnd: the holder went out of scope (recorded in the storage's
  /// ReleasedAtScopeEnd when this was the last reference).
  void release(StorageId S, bool AtScopeEnd = false);
  /// Index of the current (or last) statement.
  unsigned currentStatement() const;
  /// Ends the binding Key holds now, if it has a report row.
  void endBinding(const std::string &Key, bool AtScopeEnd);
  void notePeak(std::optional<SymSize> ExtraBytes);
  /// A new storage of Bytes, not yet held, and a value on it: dense in
  /// Like's shape and dtype, or unknown (an op's intermediate, a
  /// temporary of a formula).
  ValueId storageOf(const SymSize &Bytes, OpId Producer, const TensorValue *Like,
                    std::optional<Device> Dev);
  /// Puts a backward pass's or a step's buffers on the ledger.
  void replay(const BackwardPlan &Plan, const std::string &StateName);
  /// Op's node lets go of what it saved: the Member-th hold, or all (-1).
  void releaseSavedBy(OpId Op, int Member = -1);
  /// GradientTape rule 7: the graphs the ending statement made and
  /// dropped take what their nodes hold with them.
  void dropGraphsOfStatement();

  FunctionTrace Trace;
  std::map<std::string, ValueId> Names;
  /// Key -> index in Trace.Bindings of the binding it holds now.
  std::map<std::string, size_t> CurrentBinding;
  std::vector<std::vector<std::string>> Scopes;
  std::vector<int> RefCount;
  std::vector<StorageId> Temporaries;
  SymSize LiveBytes = 0;
  int UnknownLive = 0;
  SymSize PeakBytes = 0;
  bool PeakKnown = true;
  /// Open peak windows, innermost last (nullopt: unknown).
  std::vector<std::optional<SymSize>> PeakWindows;
  /// allocatesUnheldIterations' sum; nullopt when unknown.
  std::optional<SymSize> UnheldAllocations = SymSize(0);
  std::optional<SymSize> UnheldOpAllocations = SymSize(0);
  /// The first op whose transient bytes are unknown, and why.
  std::string UnknownTransientWhy;
  bool InStatement = false;
  std::string TotalsUnknownReason;
  std::shared_ptr<const AutogradSaves> Saves;
  GradientTape Tape;
  /// The hidden holds of what each op's node saved, by op, and how many
  /// of a storage's references they are.
  std::map<OpId, std::vector<std::string>> SavedHolds;
  /// The ledger's keys for the temporary leaves each op's node holds.
  std::map<OpId, std::vector<std::string>> LeafHolds;
  static constexpr const char *SavedPrefix = "\x01saved for backward by op ";
  static constexpr const char *LeafHoldPrefix = "\x01leaf held by the node of op ";
  std::map<StorageId, int> SavedRefs;
};

/// Every size in T in the canonical form its ShapeEnv's facts give
/// (`w.size(0)` printed as `x.size(1)` after a check made them equal);
/// done once, when the function's facts are all in.
void simplifySizes(FunctionTrace &T);

/// Folds the copies of an unrolled loop's later iterations into their
/// first iteration's statements (Statement::RepeatOf): one row per source
/// statement, each statement's live bytes the most over its copies; the
/// totals stay those of the whole run.
void foldRepeatedIterations(FunctionTrace &T);

/// Raises each open peak window (Interpreter::openPeakWindow) to Now;
/// nullopt makes them unknown.
void notePeakInWindows(std::vector<std::optional<SymSize>> &PeakWindows,
                       const std::optional<SymSize> &Now);

} // namespace tma
