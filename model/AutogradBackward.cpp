// What backward() allocates and frees, node by node (issue 36), as LibTorch
// 1.13's engine runs a graph (torch/csrc/autograd/engine.cpp,
// input_buffer.cpp, functions/accumulate_grad.h) and its backward formulas
// (FunctionsManual.cpp, derivatives.yaml). Every rule below was measured
// byte for byte with a counting CPU allocator (../shared/design/training.md)
// and is checked by ctest training_differential_cpu:
//
//  1. The seed: without a gradient given, ones_like(root), held by the
//     graph's root until the pass ends.
//  2. Order: a node runs once every node that feeds it a gradient has run;
//     among those ready, the most recently recorded first (the ready queue
//     orders by sequence number, which grows with every recorded op), and a
//     leaf's AccumulateGrad before any other (its sequence number is the
//     largest). So nodes run in descending op order, each AccumulateGrad as
//     soon as its last gradient arrives.
//  3. A node receives the sum of the gradients sent to it: the first is
//     stored, each later one added out of place (1.13's
//     InputBuffer::accumulate: `old + new`, a new buffer, both freed).
//  4. A node computes a gradient for each input that requires grad (the
//     formulas of backwardFormula, with their temporaries). A gradient of
//     another shape than its input is summed to it (validate_outputs'
//     sum_to: a new buffer of the input's size). Then the node's own input
//     gradient goes (call_function's inputs), then what it saved
//     (release_variables, without retain_graph), then its gradients go to
//     the next nodes in its inputs' order.
//  5. AccumulateGrad: a leaf without .grad adopts the gradient when nothing
//     else holds that tensor and it is laid out as the leaf (dense, the
//     leaf's strides), else a copy (clone_obey_contract); a leaf with .grad
//     adds in place (gradient mode is off inside backward) and the gradient
//     goes.
//
// A node, layout or dtype outside these rules leaves the pass unknown with
// the reason: the rules are 1.13's (2.x accumulates in place and changed
// formulas), so other versions are not followed.
#include "model/Autograd.h"
#include "model/BackwardPass.h"

#include "model/AutogradSaves.h"
#include "model/DType.h"
#include "model/Geometry.h"
#include "model/ops/OpCodes.h"

#include <algorithm>
#include <functional>
#include <map>

namespace tma {

using namespace backward_pass;

BackwardPlan GradientTape::backward(const FunctionTrace &T,
                                    const BackwardRequest &R,
                                    const AutogradSaves &Saves) {
  BackwardPlan Plan;
  auto Fail = [&](const std::string &Why) {
    Plan.Steps.clear();
    Plan.Unknown = Why;
    return Plan;
  };
  if (!(R.Version.Major == 1 && R.Version.Minor == 13))
    return Fail("what backward() allocates follows LibTorch 1.13's engine and "
                "formulas; the parsed headers are " +
                std::to_string(R.Version.Major) + "." +
                std::to_string(R.Version.Minor));
  if (!GradsKnown)
    return Fail("an earlier backward() was not followed, so which tensors "
                "have a .grad is not known");
  if (R.Root < 0 || R.Root >= static_cast<ValueId>(T.Values.size()))
    return Fail("the loss is not a tensor the analysis follows");

  auto IsLeaf = [&](ValueId V) {
    ValueId S = source(T, V);
    return S != NoValue && (S == V || S == tensorOf(T, V));
  };
  // Where a gradient for V goes: a leaf's AccumulateGrad (the leaf's
  // tensor) or the node of the op that made V.
  struct Target {
    bool Leaf = false;
    ValueId Tensor = NoValue;
    OpId Op = NoOp;
  };
  std::string Why;
  auto TargetOf = [&](ValueId V) -> std::optional<Target> {
    for (int Depth = 0; Depth < 16; ++Depth) {
      if (IsLeaf(V))
        return Target{true, tensorOf(T, V), NoOp};
      const ValueInfo &VI = T.Values.at(V);
      const OpEvent *P = T.producer(V);
      if (!VI.MayBe.empty() || VI.MayBeAny || !P) {
        Why = "the loss is computed from a tensor whose history is not known";
        return std::nullopt;
      }
      if (P->Kind == OpKind::Self && P->Inputs.size() == 1) {
        V = P->Inputs[0];
        continue;
      }
      if (P->Kind == OpKind::InPlace) {
        Why = lineOf(*P) + " writes in place into a tensor the loss is "
                           "computed from; the node it records is not followed";
        return std::nullopt;
      }
      if (P->Result != V || !From.count(V)) {
        Why = "the loss is computed from a tensor whose node is not known";
        return std::nullopt;
      }
      return Target{false, NoValue, P->Id};
    }
    Why = "the loss's history is too deep to follow";
    return std::nullopt;
  };

  // The graph: nodes from the root, each argument that requires grad an
  // edge (engine.cpp's compute_dependencies).
  struct GraphNode {
    std::string Node;
    std::vector<OpArgument> Args;
    int Deps = 0;
    int Input = -1;
  };
  std::map<OpId, GraphNode> Nodes;
  std::map<ValueId, GraphNode> Leaves; // Args unused
  auto Requires = [&](ValueId V) -> std::optional<bool> {
    if (certainlyRequiresGrad(T, V))
      return true;
    // An integer or bool tensor never requires grad (autograd refuses it).
    if (const auto &Type = T.value(V).Type;
        Type && !isFloating(*Type) && !isComplex(*Type))
      return false;
    if (certainlyNoGrad(T, V))
      return false;
    return std::nullopt;
  };
  if (!certainlyRequiresGrad(T, R.Root))
    return Fail("the loss is not known to require grad");
  std::optional<Target> RootTarget = TargetOf(R.Root);
  if (!RootTarget)
    return Fail(Why);
  if (RootTarget->Leaf)
    return Fail("backward() from a leaf is not followed");
  std::vector<OpId> Work = {RootTarget->Op};
  std::set<OpId> Visited;
  while (!Work.empty()) {
    OpId Id = Work.back();
    Work.pop_back();
    if (!Visited.insert(Id).second)
      continue;
    const OpEvent &Op = T.Ops.at(Id);
    auto Node = nodeOf(T, Op, Saves);
    if (!Node)
      return Fail(lineOf(Op) + " records a backward node that is not known");
    if (!T.Statements.at(Op.Statement).runsOncePerCopy())
      return Fail(lineOf(Op) + " records a node in every iteration of a loop, "
                               "which the backward pass does not follow");
    if (const Pending *P = pendingOf(Id)) {
      if (Released.count(Id))
        return Fail(lineOf(Op) + "'s node already released what it saved "
                                 "(LibTorch throws on a second backward)");
      if ((P->SavesResult && !P->ResultCertain) ||
          (!P->SavedInputs.empty() && !P->InputsCertain))
        return Fail(lineOf(Op) + "'s node may or may not save its inputs");
    }
    GraphNode &GN = Nodes[Id];
    GN.Node = Node->first;
    GN.Args = Node->second;
    for (const OpArgument &A : GN.Args) {
      if (!A.IsTensor)
        continue;
      if (A.Tensor == NoValue)
        return Fail(lineOf(Op) + "'s argument '" + A.Name +
                    "' is a tensor the analysis does not follow");
      std::optional<bool> Needs = Requires(A.Tensor);
      if (!Needs)
        return Fail("whether " + lineOf(Op) + "'s argument '" + A.Name +
                    "' requires grad is not known here");
      if (!*Needs)
        continue;
      std::optional<Target> To = TargetOf(A.Tensor);
      if (!To)
        return Fail(Why);
      if (To->Leaf) {
        // Its .grad is held to the return: finish() checks the leaf lives
        // that long.
        ++Leaves[To->Tensor].Deps;
      } else {
        ++Nodes[To->Op].Deps; // counted before the node is visited
        Work.push_back(To->Op);
      }
    }
  }

  PassLedger L;
  std::set<int> Kept;
  std::set<ValueId> NewGrads;
  const TensorValue &RootValue = T.value(R.Root);
  auto SeedBytes = RootValue.itemBytes();
  if (!SeedBytes)
    return Fail("the loss's dtype is not known");
  // The seed has the root's shape: a node that hands it on as it is
  // (add) passes that shape to its inputs.
  int Seed = L.handle(L.allocate(*SeedBytes, NoValue), Layout::Dense, R.Root);
  L.retain(Seed); // the graph root's copy
  Nodes[RootTarget->Op].Input = Seed;

  // Delivers gradient H of input In: stored, or added out of place.
  auto Deliver = [&](GraphNode &To, ValueId In, int H) -> std::string {
    --To.Deps;
    if (To.Input < 0) {
      To.Input = H;
      return "";
    }
    auto B = T.value(In).logicalBytes();
    if (!B)
      return "a gradient of unknown size is accumulated";
    int Sum = L.fresh(*B, In);
    L.release(To.Input);
    L.release(H);
    To.Input = Sum;
    return "";
  };
  // AccumulateGrad (rule 5). Adopt: what it would do now, without doing it.
  enum class Action { Add, Adopt, Copy };
  auto ActionFor = [&](ValueId Leaf, int H) {
    if (GradDefined.count(Leaf) || NewGrads.count(Leaf))
      return Action::Add;
    const TensorValue &LV = T.value(Leaf);
    bool Adopt = L.refs(H) == 1 && L.layout(H) == Layout::Dense &&
                 layoutOf(LV) == Layout::Dense && L.shapeOf(H) != NoValue &&
                 sameShape(T.value(L.shapeOf(H)), LV) == std::optional<bool>(true);
    return Adopt ? Action::Adopt : Action::Copy;
  };
  auto Accumulate = [&](ValueId Leaf, GraphNode &GN) -> std::string {
    int H = GN.Input;
    GN.Input = -1;
    switch (ActionFor(Leaf, H)) {
    case Action::Add: // .grad += gradient, in place
      break;
    case Action::Adopt:
      L.keep(L.buffer(H), Leaf);
      Kept.insert(L.buffer(H));
      break;
    case Action::Copy: {
      auto B = T.value(Leaf).logicalBytes();
      if (!B)
        return "the .grad of a leaf of unknown size";
      int Copy = L.allocate(*B, Leaf);
      L.keep(Copy, Leaf);
      Kept.insert(Copy);
      break;
    }
    }
    NewGrads.insert(Leaf);
    L.release(H);
    return "";
  };
  // The AccumulateGrads whose last gradient arrived run now, before any
  // other node; among themselves their order is not fixed, so a copy
  // beside an addition (one allocates, the other frees) is not followed.
  auto RunReadyLeaves = [&]() -> std::string {
    std::vector<ValueId> Ready;
    for (auto &[Leaf, GN] : Leaves)
      if (GN.Deps == 0 && GN.Input >= 0)
        Ready.push_back(Leaf);
    bool Adds = false, Copies = false;
    for (ValueId Leaf : Ready) {
      Action A = ActionFor(Leaf, Leaves[Leaf].Input);
      Adds |= A == Action::Add;
      Copies |= A == Action::Copy;
    }
    if (Adds && Copies)
      return "two leaves' gradients are accumulated in an order LibTorch "
             "does not fix, one copying and one freeing";
    for (ValueId Leaf : Ready)
      if (std::string Why = Accumulate(Leaf, Leaves[Leaf]); !Why.empty())
        return Why;
    return "";
  };

  // A node's gradients go to the next nodes in its inputs' order; the
  // AccumulateGrads that became ready run next.
  auto DeliverAll = [&](const OpEvent &Op, const Gradients &Out) -> std::string {
    for (const auto &[In, H] : Out) {
      std::optional<Target> To = TargetOf(In);
      if (!To)
        return Why;
      std::string Err = To->Leaf ? Deliver(Leaves[To->Tensor], In, H)
                                 : Deliver(Nodes[To->Op], In, H);
      if (!Err.empty())
        return lineOf(Op) + ": " + Err;
    }
    return RunReadyLeaves();
  };

  // Rule 2: descending op order.
  for (auto It = Nodes.rbegin(); It != Nodes.rend(); ++It) {
    OpId Id = It->first;
    GraphNode &GN = It->second;
    const OpEvent &Op = T.Ops.at(Id);
    if (GN.Deps != 0 || GN.Input < 0)
      return Fail(lineOf(Op) + "'s node would run in an order the analysis "
                               "does not follow");
    NodeCall C{T, Op, GN.Node, GN.Args, GN.Input, [&](const std::string &Name) {
                 for (const OpArgument &A : GN.Args)
                   if (A.Name == Name)
                     return A.Tensor != NoValue && certainlyRequiresGrad(T, A.Tensor);
                 return false;
               }};
    Gradients Out;
    if (GN.Node == CrossEntropyNodes) {
      // NllLossBackward0: zeros_like(log_softmax) written; then its
      // gradient, the target and total_weight go. LogSoftmaxBackward0:
      // the input's gradient; then nll's gradient and log_softmax's
      // output go.
      ValueId Self = GN.Args[0].Tensor;
      auto B = T.value(Self).logicalBytes();
      if (!B || layoutOf(T.value(Self)) != Layout::Dense)
        return Fail(lineOf(Op) + " runs with gradients on: its backward reads "
                                 "an input whose size or layout is not known");
      int Nll = L.fresh(*B, Self);
      L.release(GN.Input);
      GN.Input = -1;
      if (!R.KeepGraph) {
        L.releaseSaved(Id, 0);
        L.releaseSaved(Id, 2);
      }
      int H = L.fresh(*B, Self);
      L.release(Nll);
      if (!R.KeepGraph)
        L.releaseSaved(Id, 1);
      if (certainlyRequiresGrad(T, Self))
        Out.push_back({Self, H});
      else
        L.release(H);
      if (std::string Err = DeliverAll(Op, Out); !Err.empty())
        return Fail(Err);
      continue;
    }
    if (std::string Why = backwardFormula(L, C, Out); !Why.empty())
      return Fail(lineOf(Op) + " runs with gradients on: " + Why);
    // validate_outputs: a broadcast input gets its gradient summed to it.
    for (auto &[In, H] : Out) {
      if (L.shapeOf(H) == NoValue || In == NoValue)
        return Fail(lineOf(Op) + "'s gradient has a shape the analysis does "
                                 "not follow");
      std::optional<bool> Same = sameShape(T.value(L.shapeOf(H)), T.value(In));
      if (!Same)
        return Fail(lineOf(Op) + "'s gradient for an input may need summing "
                                 "to its shape, which is not known");
      if (*Same)
        continue;
      auto B = T.value(In).logicalBytes();
      if (!B)
        return Fail(lineOf(Op) + "'s gradient is summed to an input of "
                                 "unknown size");
      int Summed = L.fresh(*B, In);
      L.release(H);
      H = Summed;
    }
    L.release(GN.Input);
    GN.Input = -1;
    if (!R.KeepGraph && pendingOf(Id))
      L.releaseSaved(Id);
    if (std::string Err = DeliverAll(Op, Out); !Err.empty())
      return Fail(Err);
  }
  for (auto &[Leaf, GN] : Leaves)
    if (GN.Deps != 0 || GN.Input >= 0)
      return Fail("a leaf's gradient would arrive in an order the analysis "
                  "does not follow");
  L.release(Seed); // the graph root goes with the pass
  if (!L.balanced(Kept))
    return Fail("a gradient of the pass would outlive it, which the "
                "analysis does not follow");

  // Commit: the pass is followed.
  GradDefined.insert(NewGrads.begin(), NewGrads.end());
  if (!R.KeepGraph)
    for (const auto &[Id, GN] : Nodes)
      if (pendingOf(Id))
        Released.insert(Id);
  Plan.Steps = std::move(L.Steps);
  return Plan;
}

} // namespace tma
