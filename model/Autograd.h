// Which tensors a backward() from a loss reaches (issue 13): the module
// summary's gradient bytes are the bytes of the parameters it reaches.
//
// LibTorch's autograd gives a parameter a .grad when the loss was computed
// from it by differentiable ops. The trace records, for each value, the op
// that made it and that op's tensor inputs, so the reach is the loss's
// ancestors in the trace, walked back through ops autograd differentiates:
//
//  1. an integer or bool tensor carries no gradient (autograd never makes
//     one require grad): the walk stops at it;
//  2. a factory (randn, zeros_like) makes a leaf that does not require
//     grad; detach() returns a tensor without history: the walk stops;
//  3. every other table op is differentiable in all its floating-point
//     tensor inputs (derivatives.yaml; ops whose derivative is zero, such
//     as sign or floor, still give a .grad, of zeros);
//  4. an op the analysis does not model, or a call it reports as one op
//     (a helper of the project, whose body may detach), is a value whose
//     history is not known: what lies behind it may or may not be reached,
//     so the walk says so (Uncertain) instead of guessing;
//  5. an in-place op on a storage the walk visited, that the walk did not
//     reach itself, may have rebased that tensor's history (autograd
//     rewrites a view's base on an in-place write): Uncertain too.
//
// Reached values are certain; values not reached are certainly not reached
// only when Uncertain is empty.
#pragma once

#include "model/Trace.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tma {

struct GradientReach {
  std::set<ValueId> Reached;
  /// Non-empty: why a value outside Reached may still be reached.
  std::string Uncertain;
};

GradientReach gradientReach(const FunctionTrace &T, ValueId Loss);

/// One element of what `torch::autograd::grad(outputs, inputs, ...)`
/// returns, for the input Input (one element per input, in order).
///
/// LibTorch's engine checks every gradient it hands back against the
/// input's metadata (validate_outputs in torch/csrc/autograd/engine.cpp):
/// a gradient of another shape is summed to the input's (sum_to) or
/// rejected, one of another dtype or device is converted. So the element
/// has the input's sizes, dtype and device, whatever the backward
/// formulas did. Its strides, offset and storage are what the last formula
/// made: d sum(x)/dx is a one-element tensor expanded to x's shape (stride
/// 0), the gradient through an addition is the grad_output handed in, so
/// they stay unknown, and so does which storage the element shares.
///
/// An input the outputs do not reach makes grad() throw, unless
/// allow_unused is set: then that element is undefined. MayBeUndefined
/// (allow_unused true or not known) answers nothing but the reason.
TensorValue autogradGradient(const TensorValue &Input, bool MayBeUndefined);

class AutogradSaves;

/// One event of a backward() pass (GradientTape::backward), in the order
/// LibTorch's engine runs them: the Interpreter replays them on its ledger.
struct BackwardStep {
  enum class Kind {
    /// A new buffer of Bytes: a gradient, a formula's temporary, the seed.
    Allocate,
    /// The last reference to Buffer went away.
    Free,
    /// Op's node released what it saved (retain_graph false).
    ReleaseSaved,
    /// Buffer is now Leaf's .grad: it lives as long as the leaf.
    KeepAsGrad,
    /// Buffer is an optimizer's state of parameter Of: it lives as long as
    /// the optimizer.
    KeepAsState,
  };
  Kind K = Kind::Allocate;
  int Buffer = -1;
  SymSize Bytes = 0;
  /// ReleaseSaved: the forward op whose node ran, and which of what it
  /// saved goes (its Recorded::Hold then Hidden, in order; -1: all).
  OpId Op = NoOp;
  int Member = -1;
  /// Allocate: the tensor the buffer is a gradient of (NoValue for a
  /// temporary); KeepAsGrad: the leaf.
  ValueId Of = NoValue;
};

/// The nodes of a composite op that keep its intermediates (GradientTape
/// rule 6), as GradientTape::nodeOf names them: cross_entropy's two,
/// recorded one after the other (their sequence numbers are adjacent),
/// dropout's input * noise, and layer_norm's native_layer_norm.
inline const char *const CrossEntropyNodes = "LogSoftmaxBackward0 and NllLossBackward0";
inline const char *const DropoutNode = "MulBackward0 (dropout's input * noise)";
/// layer_norm's node keeps its input, mean and rstd.
inline const char *const LayerNormNode = "NativeLayerNormBackward0";

struct BackwardRequest {
  ValueId Root = NoValue;
  /// retain_graph: the nodes keep what they saved.
  bool KeepGraph = false;
  /// The parsed headers' version: the rules of GradientTape::backward are
  /// LibTorch 1.13's.
  TorchVersion Version;
};

struct BackwardPlan {
  std::vector<BackwardStep> Steps;
  /// Non-empty: why the pass is not followed (Steps is then empty).
  std::string Unknown;
};

/// What autograd records and keeps in one function (issue 36), op by op as
/// the Interpreter applies them.
///
///  1. A tensor requires grad when it is made so (OpEvent::MakesGradLeaf)
///     or an op records it: gradient mode on, a floating-point (or
///     unknown) dtype, an input that may require grad. detach() and
///     factories record nothing; an in-place write that records makes
///     every tensor on its storage one that may. Only tensors the function
///     makes are followed: whether a parameter requires grad is the
///     caller's, not known here.
///  2. A recorded op's node saves what Functions.h lists (AutogradSaves):
///     the members of the node the call's arguments pick (AutogradSaves
///     rule 4: pow(x, 2) saves self, pow(x, y) its result too), else
///     certainly what every overload's node saves. An input saved to
///     compute another input's gradient is saved when that input requires
///     grad (rule 5: mm(x, w) saves x only if w requires grad); where the
///     header's nodes do not say which, certainly only when every input
///     requires grad (or there is one). A node that saves no tensor (sum,
///     add, clone, every view) changes nothing.
///  3. The ledger holds what a node certainly saves until the function
///     returns. That is exact when the node outlives the function: a
///     tensor computed from its result (through recorded ops) is named to
///     the end or returned, so its grad_fn chain holds the node. When the
///     graph is dropped earlier, or the save is not certain, it is exact
///     only if names hold what the node may save to the end anyway. A node's edge to a leaf holds the leaf
///     (AccumulateGrad), so a leaf must be named to the end too.
///  6. A composite op whose recorded nodes keep tensors it made inside:
///     cross_entropy over class indices is log_softmax then nll_loss, so
///     LogSoftmaxBackward0 keeps log_softmax's output and NllLossBackward0
///     that output, the target and total_weight (OpOutcome::Intermediates
///     gives their sizes where the op's rule knows them).
///  7. A graph nothing holds at the end of a statement (a discarded
///     full-expression, a loss assigned again) is dropped there: its
///     nodes' saves and the leaves they hold go then, not at the return.
///  4. Anything else is a reason the totals are unknown: an op in a loop
///     (one iteration's saves per iteration), a saved member that is no
///     input or result, an op with no node in the header, no header.
class GradientTape {
public:
  struct Recorded {
    /// Values whose storage the node certainly saves: the ledger holds
    /// them until the function returns (rule 3).
    std::vector<ValueId> Hold;
    /// Tensors the op made inside that its nodes keep (rule 6), by size:
    /// the ledger holds new storages of these sizes like Hold.
    std::vector<SymSize> Hidden;
    /// Non-empty: why the totals cannot follow this op (rule 4).
    std::string Unknown;
  };
  /// V requires grad by itself and its owner holds it to the function's
  /// end (a parameter of a module the function's own scope declares): a
  /// leaf whose storage is alive to the end whatever autograd does.
  void markHeldLeaf(const FunctionTrace &T, ValueId V) {
    if (V < 0 || V >= static_cast<ValueId>(T.Values.size()))
      return;
    set(T, V, V);
    HeldLeaves.insert(V);
  }
  /// Op has just been appended to T.
  Recorded record(const FunctionTrace &T, const OpEvent &Op,
                  const AutogradSaves *Saves);
  /// The leaves Op's node reads through AccumulateGrad, which hold them
  /// for as long as the graph lives (rule 3).
  std::vector<ValueId> leavesHeldBy(OpId Op) const;
  /// The ledger holds Leaf for Op's node (no name held it when the op
  /// ran): exact while the graph outlives the function or is dropped at a
  /// statement's end (droppedAtEnd).
  void noteLeafHeld(OpId Op, ValueId Leaf) { LedgerHeldLeaves.emplace(Op, Leaf); }
  /// Rule 7: the ops recorded up to statement S whose graph nothing holds
  /// at its end (`f(x).sum();`, `loss = ...` again): no name holds a tensor
  /// computed from them (HeldTensors: the tensors, by their first value,
  /// the function's names may hold), none is returned, and nothing the
  /// analysis does not follow read one. Their nodes, with what they save
  /// and the leaves they hold, go there; the ledger releases them.
  std::vector<OpId> droppedAtEnd(const FunctionTrace &T, unsigned S,
                                 const std::set<ValueId> &HeldTensors);
  /// Whether a node saves something or holds a leaf: else droppedAtEnd
  /// has nothing to drop.
  bool recordsGraphs() const { return !Saving.empty() || !LeafEdges.empty(); }
  /// After the function's scopes have closed (bindings know how long they
  /// held): why the holds of rule 3 are not exact, or empty.
  std::string finish(const FunctionTrace &T) const;
  /// The recorded ops Root is computed from whose nodes save something:
  /// backward() from Root releases what they saved (retain_graph false).
  std::vector<OpId> savingAncestors(const FunctionTrace &T, ValueId Root) const;
  /// What `Root.backward()` allocates and frees, node by node (rules in
  /// AutogradBackward.cpp); on success the leaves it reaches have a .grad
  /// and, without KeepGraph, the nodes' saves are released. Called right
  /// after the ops before it were recorded.
  BackwardPlan backward(const FunctionTrace &T, const BackwardRequest &R,
                        const AutogradSaves &Saves);
  /// A backward() the analysis did not follow ran: which leaves have a
  /// .grad is no longer known.
  void backwardNotFollowed() { GradsKnown = false; }
  /// Whether V (a leaf) has a .grad; nullopt: not known.
  std::optional<bool> hasGrad(const FunctionTrace &T, ValueId V) const {
    if (!GradsKnown || V < 0 || V >= static_cast<ValueId>(T.Values.size()))
      return std::nullopt;
    ValueId Same = T.Values[V].SameTensorAs;
    return GradDefined.count(Same == NoValue ? V : Same) > 0;
  }
  bool anyGrad() const { return !GradDefined.empty() || !GradsKnown; }

private:
  struct Pending {
    OpId Op = NoOp;
    /// Saves its result in some overload; Certain: in every overload
    /// (rule 2).
    bool SavesResult = false, ResultCertain = false;
    /// The inputs the node may save; Certain: it saves every one of them
    /// (rule 2).
    std::vector<ValueId> SavedInputs;
    bool InputsCertain = false;
    /// How many of the op's intermediates its nodes keep (rule 6).
    size_t Hidden = 0;
  };
  /// Which of the op's inputs its node saves, by the node the call records
  /// and which inputs require grad (AutogradSaves rules 4 and 5); nullopt:
  /// the call's node is not known.
  struct NodeSaves {
    bool SavesResult = false;
    std::vector<ValueId> Certain, Possible;
    std::string Unknown; // a saved member that is no argument or result
  };
  std::optional<NodeSaves> savedByCall(const FunctionTrace &T, const OpEvent &Op,
                                       const AutogradSaves &Saves) const;
  /// The value requiring grad that V's history starts from, or NoValue.
  ValueId source(const FunctionTrace &T, ValueId V, int Depth = 0) const;
  /// V certainly requires grad: a leaf made so or a recorded op's result.
  bool certainlyRequiresGrad(const FunctionTrace &T, ValueId V) const;
  /// V certainly does not: the function made it, and not from a tensor
  /// that requires grad (a parameter is the caller's, not known here).
  bool certainlyNoGrad(const FunctionTrace &T, ValueId V) const;
  void set(const FunctionTrace &T, ValueId V, ValueId Source);
  bool graphOutlives(const FunctionTrace &T, ValueId V) const;

  std::map<ValueId, ValueId> From;
  std::map<StorageId, ValueId> WrittenWithGrad;
  /// Recorded edges: an input to the results computed from it.
  std::map<ValueId, std::vector<ValueId>> Children;
  std::vector<Pending> Saving;
  std::vector<std::pair<OpId, ValueId>> LeafEdges;
  std::set<ValueId> HeldLeaves;
  /// Leaves (their tensors) a followed backward() gave a .grad.
  std::set<ValueId> GradDefined;
  bool GradsKnown = true;
  /// Ops whose node released what it saved in a followed backward().
  std::set<OpId> Released;
  /// Ops whose graph was dropped at the end of their statement (rule 7).
  std::set<OpId> Dropped;
  /// Leaf edges whose leaf the ledger holds (noteLeafHeld).
  std::set<std::pair<OpId, ValueId>> LedgerHeldLeaves;
  /// The tensors an op read without the tape recording an edge from them
  /// (rule 7: they may be kept off the tape), from the first
  /// OpsReadOffTape ops of the trace.
  std::set<ValueId> ReadOffTape;
  size_t OpsReadOffTape = 0;
  /// The backward node Op records and the call's arguments by that node's
  /// schema (Autograd.cpp's recordedCall; rule 6's composites by the names
  /// above); nullopt: not known.
  std::optional<std::pair<std::string, std::vector<OpArgument>>>
  nodeOf(const FunctionTrace &T, const OpEvent &Op,
         const AutogradSaves &Saves) const;
  /// The pending saves of Op, or null when its node saves nothing.
  const Pending *pendingOf(OpId Op) const;
  /// V's storage is alive at the function's end whatever autograd does: a
  /// name holds it to the end, the caller owns it, or a held leaf.
  bool aliveToEnd(const FunctionTrace &T, ValueId V) const;
};

} // namespace tma
