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

#include "model/AutogradSaves.h"
#include "model/DType.h"
#include "model/Geometry.h"
#include "model/ops/OpCodes.h"

#include <algorithm>
#include <functional>
#include <map>

namespace tma {

namespace {

/// How a gradient tensor lies in its buffer: what the BLAS calls of mm's
/// formulas and AccumulateGrad's layout contract look at.
enum class Layout { Dense, Transposed, Expanded };

/// The first value of V's C++ tensor (ValueInfo::SameTensorAs).
ValueId tensorOf(const FunctionTrace &T, ValueId V) {
  ValueId Same = T.Values.at(V).SameTensorAs;
  return Same == NoValue ? V : Same;
}

std::string lineOf(const OpEvent &Op) {
  return "'" + Op.Name + "' (line " + std::to_string(Op.Where.Line) + ")";
}

/// The gradient buffers and tensor handles of one pass, and the steps they
/// make. A handle is a C++ tensor (its use_count is Refs); a buffer is a
/// storage, freed when its last handle goes.
class PassLedger {
public:
  std::vector<BackwardStep> Steps;

  int allocate(const SymSize &Bytes, ValueId Of) {
    BackwardStep S;
    S.K = BackwardStep::Kind::Allocate;
    S.Buffer = static_cast<int>(Buffers.size());
    S.Bytes = Bytes;
    S.Of = Of;
    Steps.push_back(S);
    Buffers.push_back(0);
    return S.Buffer;
  }
  /// A new handle on Buffer, held once.
  int handle(int Buffer, Layout L, ValueId ShapeOf) {
    ++Buffers[Buffer];
    Handles.push_back({Buffer, L, ShapeOf, 1});
    return static_cast<int>(Handles.size() - 1);
  }
  int fresh(const SymSize &Bytes, ValueId Of, Layout L = Layout::Dense) {
    return handle(allocate(Bytes, Of), L, Of);
  }
  void retain(int H) { ++Handles[H].Refs; }
  void release(int H) {
    if (--Handles[H].Refs > 0)
      return;
    int B = Handles[H].Buffer;
    if (--Buffers[B] == 0) {
      BackwardStep S;
      S.K = BackwardStep::Kind::Free;
      S.Buffer = B;
      Steps.push_back(S);
    }
  }
  /// Buffer becomes Leaf's .grad: held for as long as the leaf.
  void keep(int Buffer, ValueId Leaf) {
    ++Buffers[Buffer];
    BackwardStep S;
    S.K = BackwardStep::Kind::KeepAsGrad;
    S.Buffer = Buffer;
    S.Of = Leaf;
    Steps.push_back(S);
  }
  void releaseSaved(OpId Op, int Member = -1) {
    BackwardStep S;
    S.K = BackwardStep::Kind::ReleaseSaved;
    S.Op = Op;
    S.Member = Member;
    Steps.push_back(S);
  }
  Layout layout(int H) const { return Handles[H].L; }
  ValueId shapeOf(int H) const { return Handles[H].ShapeOf; }
  int buffer(int H) const { return Handles[H].Buffer; }
  int refs(int H) const { return Handles[H].Refs; }
  /// Every buffer but the leaves' .grad was freed.
  bool balanced(const std::set<int> &Kept) const {
    for (size_t B = 0; B < Buffers.size(); ++B)
      if (Buffers[B] != (Kept.count(static_cast<int>(B)) ? 1 : 0))
        return false;
    return true;
  }

private:
  struct Handle {
    int Buffer;
    Layout L;
    ValueId ShapeOf; // the tensor whose shape the gradient has
    int Refs;
  };
  std::vector<int> Buffers; // references to each
  std::vector<Handle> Handles;
};

/// A tensor's layout as a gradient formula sees it; nullopt when it is
/// none of these or not known.
std::optional<Layout> layoutOf(const TensorValue &V) {
  if (!V.Sizes || !V.Strides)
    return std::nullopt;
  if (isContiguous(*V.Sizes, *V.Strides) == Tri::True)
    return Layout::Dense;
  if (V.Sizes->size() == 2) {
    Shape Sizes = {(*V.Sizes)[1], (*V.Sizes)[0]};
    Shape Strides = {(*V.Strides)[1], (*V.Strides)[0]};
    if (isContiguous(Sizes, Strides) == Tri::True)
      return Layout::Transposed;
  }
  return std::nullopt;
}

/// Whether two shapes are the same (nullopt: not decidable here).
std::optional<bool> sameShape(const TensorValue &A, const TensorValue &B) {
  if (!A.Sizes || !B.Sizes)
    return std::nullopt;
  if (A.Sizes->size() != B.Sizes->size())
    return false;
  bool Equal = true;
  for (size_t D = 0; D < A.Sizes->size(); ++D) {
    auto CA = (*A.Sizes)[D].constant(), CB = (*B.Sizes)[D].constant();
    if (CA && CB) {
      Equal = Equal && *CA == *CB;
      continue;
    }
    if (!((*A.Sizes)[D] == (*B.Sizes)[D]))
      return std::nullopt;
  }
  return Equal;
}

/// cross_entropy's two nodes (Autograd.h rule 6), run one after the
/// other: their sequence numbers are adjacent.
const char *const CrossEntropyNodes = "LogSoftmaxBackward0 and NllLossBackward0";
/// dropout's MulBackward0 (input * noise, the noise kept by the node).
const char *const DropoutNode = "MulBackward0 (dropout's input * noise)";

/// One node's call: what its formula reads.
struct NodeCall {
  const FunctionTrace &T;
  const OpEvent &Op;
  const std::string &Node;
  const std::vector<OpArgument> &Args;
  int Grad; // the handle of the gradient it receives
  /// Whether the argument's tensor requires grad (its gradient is computed).
  std::function<bool(const std::string &)> Needs;

  const OpArgument *arg(const std::string &Name) const {
    for (const OpArgument &A : Args)
      if (A.Name == Name)
        return &A;
    return nullptr;
  }
  ValueId tensor(const std::string &Name) const {
    const OpArgument *A = arg(Name);
    return A ? A->Tensor : NoValue;
  }
  const TensorValue &value(ValueId V) const { return T.value(V); }
};

using Gradients = std::vector<std::pair<ValueId, int>>;

/// The gradient formulas of 1.13 whose allocations are followed: each
/// computes the gradients of the node's inputs that require grad, with the
/// temporaries the formula makes, in order. Returns why not, or "".
std::string backwardFormula(PassLedger &L, const NodeCall &C, Gradients &Out) {
  auto Bytes = [&](ValueId V) { return C.value(V).logicalBytes(); };
  auto IsFloat = [&](ValueId V) {
    return C.value(V).Type == std::optional<DType>(DType::Float32);
  };
  Layout G = L.layout(C.Grad);
  bool GradElementwise = G == Layout::Dense || G == Layout::Expanded;
  ValueId Self = C.tensor("self"), Result = C.Op.Result;
  auto Dense = [&](ValueId V) { return layoutOf(C.value(V)) == Layout::Dense; };
  const std::string NotFollowed = "its backward (" + C.Node + ") ";

  // A gradient of the input's size, computed elementwise from the
  // gradient and saved tensors laid out densely (TensorIterator's output
  // is then dense).
  auto Elementwise = [&](ValueId Input, std::vector<ValueId> Reads) -> std::string {
    if (!GradElementwise)
      return NotFollowed + "reads a gradient laid out in a way not followed";
    for (ValueId R : Reads)
      if (R == NoValue || !Dense(R))
        return NotFollowed + "reads a tensor whose layout is not dense";
    auto B = Bytes(Input);
    if (!B)
      return NotFollowed + "makes a gradient of unknown size";
    Out.push_back({Input, L.fresh(*B, Input)});
    return "";
  };

  if (C.Node == "ReluBackward0" || C.Node == "SigmoidBackward0" ||
      C.Node == "TanhBackward0")
    return C.Needs("self") ? Elementwise(Self, {Result}) : "";
  if (C.Node == DropoutNode) // grad * noise
    return C.Needs("self") ? Elementwise(Self, {}) : "";
  if (C.Node == "GeluBackward0")
    return C.Needs("self") ? Elementwise(Self, {Self}) : "";
  if (C.Node == "NegBackward0")
    return C.Needs("self") ? Elementwise(Self, {}) : "";
  if (C.Node == "SoftmaxBackward0" || C.Node == "LogSoftmaxBackward0") {
    // _softmax_backward_data over the last dimension of dense tensors
    // makes its output and nothing else.
    const OpArgument *Dim = C.arg("dim");
    auto Rank = C.value(Result).rank();
    if (!Dim || !Dim->Number || !Rank ||
        (*Dim->Number != -1 && *Dim->Number != static_cast<double>(*Rank - 1)))
      return NotFollowed + "runs over a dimension other than the last";
    if (G != Layout::Dense)
      return NotFollowed + "reads a gradient that is not dense";
    return C.Needs("self") ? Elementwise(Self, {Result}) : "";
  }
  if (C.Node == "SumBackward0") {
    // grad.expand(self's sizes): a view of the gradient, every stride 0.
    if (!C.Needs("self"))
      return "";
    auto N = C.value(Self).elementCount();
    if (!N || !N->constant() || *N->constant() < 2)
      return NotFollowed + "expands to a tensor whose element count is not "
                           "known to be over 1";
    L.retain(C.Grad);
    int H = L.handle(L.buffer(C.Grad), Layout::Expanded, Self);
    L.release(C.Grad);
    Out.push_back({Self, H});
    return "";
  }
  if (C.Node == "EmbeddingBackward0") {
    // embedding_dense_backward: zeros(num_weights, dim), rows added from
    // the gradient made contiguous (a dense gradient: no copy).
    ValueId Weight = C.tensor("weight");
    if (!C.Needs("weight"))
      return "";
    for (const char *Flag : {"scale_grad_by_freq", "sparse"}) {
      const OpArgument *A = C.arg(Flag);
      if (!A || A->Number != std::optional<double>(0.0))
        return NotFollowed + "is followed without " + Flag + " only";
    }
    if (G != Layout::Dense)
      return NotFollowed + "copies a gradient that is not dense, which is "
                           "not measured";
    auto B = Bytes(Weight);
    if (!B)
      return NotFollowed + "makes a gradient of unknown size";
    Out.push_back({Weight, L.fresh(*B, Weight)});
    return "";
  }
  if (C.Node == "MeanBackward0" || C.Node == "MeanBackward1") {
    // grad.expand(sizes) / numel (over dim: grad unsqueezed and expanded,
    // divided by the dims' count): the count as a wrapped int64 scalar (8
    // bytes), converted to float (4), then the quotient.
    if (!C.Needs("self"))
      return "";
    if (!IsFloat(Self))
      return NotFollowed + "divides by a scalar converted to a dtype other "
                           "than float, which is not measured";
    auto B = Bytes(Self);
    if (!B)
      return NotFollowed + "makes a gradient of unknown size";
    int Count = L.fresh(SymSize(8), NoValue), AsFloat = L.fresh(SymSize(4), NoValue);
    int H = L.fresh(*B, Self);
    L.release(AsFloat);
    L.release(Count);
    Out.push_back({Self, H});
    return "";
  }
  if (C.Node == "PowBackward0") {
    // grad * (exponent * self.pow(exponent - 1)): two temporaries of
    // self's size, the exponent as a wrapped double converted to float.
    const OpArgument *Exponent = C.arg("exponent");
    if (!C.Needs("self"))
      return "";
    if (!Exponent || !Exponent->Number || *Exponent->Number == 0)
      return NotFollowed + "depends on an exponent not known to be non-zero";
    if (!IsFloat(Self) || !GradElementwise || !Dense(Self))
      return NotFollowed + "is followed for dense float tensors only";
    auto B = Bytes(Self);
    if (!B)
      return NotFollowed + "makes a gradient of unknown size";
    int Power = L.fresh(*B, NoValue);
    int Scalar = L.fresh(SymSize(8), NoValue), AsFloat = L.fresh(SymSize(4), NoValue);
    int Scaled = L.fresh(*B, NoValue);
    L.release(AsFloat);
    L.release(Scalar);
    int H = L.fresh(*B, Self);
    L.release(Scaled);
    L.release(Power);
    Out.push_back({Self, H});
    return "";
  }
  if (C.Node == "AddBackward0" || C.Node == "SubBackward0") {
    const OpArgument *Alpha = C.arg("alpha");
    if (Alpha && !Alpha->Absent && Alpha->Number != std::optional<double>(1.0))
      return NotFollowed + "scales by an alpha not known to be 1";
    // self's gradient is the gradient itself; other's too (add) or its
    // negation (sub).
    if (C.Needs("self")) {
      L.retain(C.Grad);
      Out.push_back({Self, C.Grad});
    }
    if (C.Needs("other")) {
      ValueId Other = C.tensor("other");
      if (C.Node == "AddBackward0") {
        L.retain(C.Grad);
        Out.push_back({Other, C.Grad});
      } else {
        if (!GradElementwise)
          return NotFollowed + "reads a gradient laid out in a way not followed";
        auto B = Bytes(Result);
        if (!B)
          return NotFollowed + "makes a gradient of unknown size";
        Out.push_back({Other, L.fresh(*B, Result)});
      }
    }
    return "";
  }
  if (C.Node == "MulBackward0") {
    // grad * other for self, grad * self for other: of the result's shape.
    ValueId Other = C.tensor("other");
    if (!GradElementwise)
      return NotFollowed + "reads a gradient laid out in a way not followed";
    auto B = Bytes(Result);
    if (!B)
      return NotFollowed + "makes a gradient of unknown size";
    if (C.Needs("self"))
      Out.push_back({Self, L.fresh(*B, Result)});
    if (C.Needs("other"))
      Out.push_back({Other, L.fresh(*B, Result)});
    return "";
  }
  if (C.Node == "MseLossBackward0") {
    // mse_loss_backward: zeros_like(self), written by one TensorIterator
    // (the norm is a double argument of the kernel, not a tensor).
    if (C.Needs("target"))
      return NotFollowed + "computes the target's gradient, which is not "
                           "measured";
    return C.Needs("self") ? Elementwise(Self, {}) : "";
  }
  if (C.Node == "MmBackward0" || C.Node == "AddmmBackward0") {
    // Each matrix's gradient is a product laid out as that matrix
    // (mm_mat1_backward, mm_mat2_backward); a gradient BLAS cannot read
    // (stride 0, from sum()) is first copied to a dense one, for each
    // product. mm computes mat2's then self's; addmm mat1's then mat2's,
    // then bias's: the gradient itself, summed to the bias's shape.
    //
    // Linear records addmm(bias, input, weight.t()) (mm without a bias):
    // mat2 is the weight's transpose, and TBackward0 hands its gradient,
    // laid out as the transpose, to the weight as a dense tensor.
    bool Addmm = C.Node == "AddmmBackward0";
    bool OfLinear = C.Op.Code == OpCode::linear;
    const char *First = Addmm ? "mat1" : "self";
    ValueId Mat1 = C.tensor(First), Mat2 = C.tensor("mat2");
    auto OperandLayout = [&](ValueId M) -> std::optional<Layout> {
      std::optional<Layout> Own = layoutOf(C.value(M));
      if (M != Mat2 || !OfLinear || !Own)
        return Own;
      return *Own == Layout::Dense ? std::optional<Layout>(Layout::Transposed)
                                   : std::nullopt;
    };
    for (ValueId M : {Mat1, Mat2}) {
      const TensorValue &V = C.value(M);
      if (M == NoValue || !OperandLayout(M) || !V.Sizes || V.Sizes->size() != 2)
        return NotFollowed + "reads a matrix whose layout is not followed";
      // BLAS reads a dense matrix or its transpose (a size of 1 too:
      // measured with Linear(16, 1)); an empty one takes other paths.
      for (const SymSize &D : *V.Sizes)
        if (!D.constant() || *D.constant() < 1)
          return NotFollowed + "multiplies matrices with a size not known "
                               "to be over 0";
    }
    if (Addmm)
      for (const char *Scale : {"beta", "alpha"}) {
        const OpArgument *A = C.arg(Scale);
        if (A && !A->Absent && A->Number != std::optional<double>(1.0))
          return NotFollowed + "scales by a " + Scale + " not known to be 1";
      }
    if (G == Layout::Transposed)
      return NotFollowed + "reads a gradient laid out in a way not followed";
    auto ResultBytes = Bytes(Result);
    if (!ResultBytes)
      return NotFollowed + "reads a gradient of unknown size";
    std::vector<ValueId> Order = Addmm ? std::vector<ValueId>{Mat1, Mat2}
                                       : std::vector<ValueId>{Mat2, Mat1};
    Gradients Products;
    for (ValueId In : Order) {
      if (!C.Needs(In == Mat1 ? First : "mat2"))
        continue;
      auto B = Bytes(In);
      if (!B)
        return NotFollowed + "makes a gradient of unknown size";
      Layout Laid = In == Mat2 && OfLinear ? Layout::Dense : *OperandLayout(In);
      int H = L.fresh(*B, In, Laid);
      if (G == Layout::Expanded)
        L.release(L.fresh(*ResultBytes, NoValue));
      Products.push_back({In, H});
    }
    // The gradients go in the inputs' order: self (the bias), mat1, mat2.
    if (Addmm && C.Needs("self")) {
      L.retain(C.Grad);
      Out.push_back({Self, C.Grad});
    }
    for (ValueId In : {Mat1, Mat2})
      for (const auto &P : Products)
        if (P.first == In)
          Out.push_back(P);
    return "";
  }
  if (C.Node == "TBackward0") {
    if (!C.Needs("self"))
      return "";
    Layout Swapped = G == Layout::Dense        ? Layout::Transposed
                     : G == Layout::Transposed ? Layout::Dense
                                               : Layout::Expanded;
    L.retain(C.Grad);
    int H = L.handle(L.buffer(C.Grad), Swapped, Self);
    L.release(C.Grad);
    Out.push_back({Self, H});
    return "";
  }
  return NotFollowed + "allocates what the analysis does not follow";
}

} // namespace

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
    if (const Pending *P = pendingOf(Id); P && P->Hidden == 2 &&
                                          Op.Intermediates.size() == 2)
      Node = std::make_pair(
          std::string(CrossEntropyNodes),
          std::vector<OpArgument>{OpArgument{"self", true, Op.Inputs[0]},
                                  OpArgument{"target", true, Op.Inputs[1]}});
    else if (P && P->Hidden == 1 && Op.Intermediates.size() == 1 &&
             !Op.Inputs.empty())
      Node = std::make_pair(std::string(DropoutNode),
                            std::vector<OpArgument>{
                                OpArgument{"self", true, Op.Inputs[0]}});
    if (!Node)
      return Fail(lineOf(Op) + " records a backward node that is not known");
    if (T.Statements.at(Op.Statement).InLoop)
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
