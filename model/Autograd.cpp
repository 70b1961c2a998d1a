// The gradient's reach from a loss through the trace (the numbered rules
// are in Autograd.h), and the elements torch::autograd::grad returns.
#include "model/Autograd.h"

#include "model/AutogradSaves.h"
#include "model/DType.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpCodes.h"

#include <cctype>
#include <map>
#include <vector>

namespace tma {

namespace {

std::string lineOf(const OpEvent &Op) {
  return " (line " + std::to_string(Op.Where.Line) + ")";
}

} // namespace

GradientReach gradientReach(const FunctionTrace &T, ValueId Loss) {
  GradientReach R;
  auto Uncertain = [&](const std::string &Why) {
    if (R.Uncertain.empty())
      R.Uncertain = Why;
  };
  if (Loss < 0 || Loss >= static_cast<ValueId>(T.Values.size())) {
    Uncertain("the loss is not a tensor the analysis follows");
    return R;
  }
  std::set<ValueId> Visited;
  std::set<StorageId> Storages;
  std::vector<ValueId> Work = {Loss};
  while (!Work.empty()) {
    ValueId V = Work.back();
    Work.pop_back();
    if (V < 0 || !Visited.insert(V).second)
      continue;
    const TensorValue &TV = T.value(V);
    if (TV.Storage != NoStorage)
      Storages.insert(TV.Storage);
    // 1. Only floating-point (and complex) tensors carry a gradient.
    if (!TV.Type) {
      Uncertain("the dtype of a tensor the loss is computed from is not "
                "known");
      continue;
    }
    if (!isFloating(*TV.Type) && !isComplex(*TV.Type))
      continue;
    R.Reached.insert(V);
    const OpEvent *Op = T.producer(V);
    if (!Op) {
      // A leaf: a parameter of the function, or a value the analysis lost.
      if (!TV.UnknownReason.empty())
        Uncertain("the loss is computed from a tensor the analysis does "
                  "not follow (" + TV.UnknownReason + ")");
      continue;
    }
    // 2. Leaves without history.
    if (Op->Kind == OpKind::Alloc || Op->Code == OpCode::detach)
      continue;
    // 4. History not known.
    if (Op->Kind == OpKind::Unknown || Op->Kind == OpKind::Throws ||
        (Op->Code == NoOpCode && Op->Kind != OpKind::Self &&
         Op->Name != "alias")) {
      Uncertain("the loss is computed by '" + Op->Name + "'" + lineOf(*Op) +
                ", whose gradient the analysis does not follow");
      continue;
    }
    // 3. Differentiable in its tensor inputs.
    for (ValueId In : Op->Inputs)
      Work.push_back(In);
  }
  // 5. In-place writes the walk did not pass through.
  for (const OpEvent &Op : T.Ops)
    if (Op.Kind == OpKind::InPlace && Op.Result >= 0 &&
        !Visited.count(Op.Result) &&
        Storages.count(T.value(Op.Result).Storage)) {
      Uncertain("'" + Op.Name + "'" + lineOf(Op) +
                " writes in place into a tensor the loss is computed from");
      break;
    }
  return R;
}

TensorValue autogradGradient(const TensorValue &Input, bool MayBeUndefined) {
  if (MayBeUndefined)
    return unknownTensor("autograd::grad with allow_unused: the gradient of an "
                         "input the outputs do not reach is undefined");
  TensorValue Out = unknownTensor(
      "the gradient's layout and storage depend on the backward formula; "
      "its shape, dtype and device are its input's");
  Out.Sizes = Input.Sizes;
  keepDType(Out, Input);
  Out.Dev = Input.Dev;
  if (!Input.Sizes && !Input.UnknownReason.empty())
    Out.UnknownReason = Input.UnknownReason;
  return Out;
}

namespace {

bool mayCarryGradient(const TensorValue &V) {
  return !V.Type || isFloating(*V.Type) || isComplex(*V.Type);
}

/// The name a value requiring grad goes by in the report.
std::string gradSourceText(const FunctionTrace &T, ValueId Leaf) {
  for (const Binding &B : T.Bindings)
    if (B.Value == Leaf)
      return "'" + B.Name + "' requires grad";
  if (const OpEvent *Op = T.producer(Leaf)) {
    // A module's parameter: its constructor's note names it ("Linear's
    // weight (default dtype)").
    size_t Own = Op->Note.find("'s ");
    if (Op->Kind == OpKind::Alloc && Own != std::string::npos &&
        Op->Note.compare(0, Own, Op->Name) == 0)
      return Op->Note.substr(0, Op->Note.find(" (")) + " (line " +
             std::to_string(Op->Where.Line) + ") requires grad";
    return "a tensor made at line " + std::to_string(Op->Where.Line) +
           " requires grad";
  }
  return "a tensor requires grad";
}

/// The op's ATen name: the table's canonical one, else the name written
/// without its overload ("max.dim": max).
std::string atenName(const OpEvent &Op) {
  // Tensor::operator-() runs the table's sub with one argument: ATen's neg.
  if (Op.Code == OpCode::sub && Op.Name == "neg")
    return "neg";
  const std::string &Name = Op.Code != NoOpCode ? opInfo(Op.Code).Name : Op.Name;
  return Name.substr(0, Name.find('.'));
}

/// What the op's node may save (any overload's, any decomposition's) and
/// what it saves certainly (every one's).
struct OpSaves {
  std::set<std::string> Possible, Certain;
};
/// The op's own nodes, or, for a composite op (no node of its own), those
/// of the ops ATen implements it with, by the table's tags: a cast or
/// device move is _to_copy; contiguous() is clone(); a reshape is view,
/// _reshape_alias or _unsafe_view of a clone.
std::optional<OpSaves> savedByOp(const AutogradSaves &Saves, const OpEvent &Op) {
  std::vector<std::string> Calls;
  if (!Saves.isComposite(atenName(Op)))
    Calls = {atenName(Op)};
  else if (hasTag(Op.Code, Cast) || hasTag(Op.Code, DeviceMove))
    Calls = {"_to_copy"};
  else if (hasTag(Op.Code, Compacting))
    Calls = {"clone"};
  else if (hasTag(Op.Code, Reshaping))
    Calls = {"view", "_reshape_alias", "_unsafe_view", "clone"};
  if (Calls.empty())
    return std::nullopt;
  OpSaves All;
  for (size_t K = 0; K < Calls.size(); ++K) {
    auto Possible = Saves.savedBy(Calls[K]);
    auto Certain = Saves.savedByEveryOverload(Calls[K]);
    if (!Possible || !Certain)
      return std::nullopt;
    All.Possible.insert(Possible->begin(), Possible->end());
    if (K == 0)
      All.Certain = *Certain;
    else
      for (auto It = All.Certain.begin(); It != All.Certain.end();)
        It = Certain->count(*It) ? std::next(It) : All.Certain.erase(It);
  }
  return All;
}

/// The op whose node a call records, with its arguments by that op's
/// schema names: the call itself, or for a composite op the one op ATen's
/// decomposition records with the same inputs and result (SoftMax.cpp:
/// softmax(x, dim) is _softmax(x, dim, false), after a cast when a dtype
/// is given, which saves nothing; LinearAlgebra.cpp: matmul of two
/// matrices is mm(self, other)).
struct RecordedCall {
  std::string Op;
  std::vector<OpArgument> Args;
};
std::optional<RecordedCall> recordedCall(const FunctionTrace &T, const OpEvent &Op,
                                         const AutogradSaves &Saves) {
  if (Op.Args.empty())
    return std::nullopt;
  std::string Name = atenName(Op);
  if (!Saves.isComposite(Name))
    return RecordedCall{Name, Op.Args};
  auto Arg = [&](const std::string &ArgName) -> const OpArgument * {
    for (const OpArgument &A : Op.Args)
      if (A.Name == ArgName)
        return &A;
    return nullptr;
  };
  const OpArgument *Self = Arg("self");
  if (Name == "softmax" || Name == "log_softmax") {
    if (!Self || Self->Tensor == NoValue)
      return std::nullopt;
    const OpArgument *Dim = Arg("dim");
    if (!Dim || Dim->IsTensor)
      return std::nullopt;
    return RecordedCall{"_" + Name,
                        {*Self, *Dim, OpArgument{"half_to_float", false, NoValue}}};
  }
  // Linear.cpp: a matrix input is addmm(bias, input, weight.t()) with a
  // bias, matmul(input, weight.t()) (mm) without; weight.t() is a view of
  // the weight, so saving it holds the weight's storage.
  if (Name == "linear") {
    const OpArgument *Input = Arg("input"), *Weight = Arg("weight"),
                     *Bias = Arg("bias");
    if (!Input || Input->Tensor == NoValue || !Weight ||
        Weight->Tensor == NoValue || !Bias ||
        T.value(Input->Tensor).rank() != 2)
      return std::nullopt;
    OpArgument Mat1 = *Input, Mat2 = *Weight;
    Mat1.Name = "mat1";
    Mat2.Name = "mat2";
    // A bias not derived is taken for none: mm and addmm save the same
    // two tensors (the input, the weight).
    if (Bias->Tensor == NoValue) {
      Mat1.Name = "self";
      return RecordedCall{"mm", {Mat1, Mat2}};
    }
    OpArgument Self = *Bias;
    Self.Name = "self";
    OpArgument One{"beta", false, NoValue, 1.0};
    OpArgument Alpha = One;
    Alpha.Name = "alpha";
    return RecordedCall{"addmm", {Self, Mat1, Mat2, One, Alpha}};
  }
  if (Name == "matmul") {
    const OpArgument *Other = Arg("other");
    if (!Self || Self->Tensor == NoValue || !Other || Other->Tensor == NoValue)
      return std::nullopt;
    auto Rank = [&](ValueId V) { return T.value(V).rank(); };
    if (Rank(Self->Tensor) != 2 || Rank(Other->Tensor) != 2)
      return std::nullopt;
    OpArgument Mat2 = *Other;
    Mat2.Name = "mat2";
    return RecordedCall{"mm", {*Self, Mat2}};
  }
  return std::nullopt;
}

/// Every argument name of the table op's schemas; `self`, ATen's name of
/// an op's first tensor argument, for every op with an input (the table
/// writes some schemas as "(...)").
std::set<std::string> schemaArgNames(const OpEvent &Op) {
  std::set<std::string> Names;
  if (!Op.Inputs.empty())
    Names.insert("self");
  if (Op.Code != NoOpCode)
    for (const Schema &S : opInfo(Op.Code).Overloads)
      for (const SchemaArg &A : S.Args)
        Names.insert(A.Name);
  return Names;
}

/// Rule 6: a composite op whose recorded nodes keep the intermediates its
/// rule gave (OpOutcome::Intermediates), with the inputs those nodes read;
/// nullopt for every other op.
std::optional<std::pair<std::string, std::vector<OpArgument>>>
keepsIntermediates(const OpEvent &Op) {
  if (Op.Intermediates.empty() || Op.Inputs.empty() || Op.Inputs[0] < 0)
    return std::nullopt;
  if (Op.Code == OpCode::cross_entropy_loss && Op.Intermediates.size() == 2 &&
      Op.Inputs.size() >= 2 && Op.Inputs[1] >= 0)
    return std::make_pair(
        std::string(CrossEntropyNodes),
        std::vector<OpArgument>{OpArgument{"self", true, Op.Inputs[0]},
                                OpArgument{"target", true, Op.Inputs[1]}});
  if (Op.Code == OpCode::dropout && Op.Intermediates.size() == 1)
    return std::make_pair(
        std::string(DropoutNode),
        std::vector<OpArgument>{OpArgument{"self", true, Op.Inputs[0]}});
  if (Op.Code == OpCode::layer_norm && Op.Intermediates.size() == 2) {
    // The input, and the weight and bias when the call passes tensors.
    std::vector<OpArgument> Saved;
    for (ValueId In : Op.Inputs)
      if (In >= 0)
        Saved.push_back(OpArgument{"input", true, In});
    return std::make_pair(std::string(LayerNormNode), Saved);
  }
  return std::nullopt;
}

/// The tensor of V (ValueInfo::SameTensorAs).
ValueId tensorOf(const FunctionTrace &T, ValueId V) {
  ValueId Same = T.Values.at(V).SameTensorAs;
  return Same == NoValue ? V : Same;
}

/// Whether B's name holds its value until the function's scopes close
/// after its last statement.
bool heldToEnd(const FunctionTrace &T, const Binding &B) {
  return B.HoldsValue && B.Value >= 0 && B.HeldToScopeEnd && B.HeldUntil &&
         *B.HeldUntil + 1 >= T.Statements.size();
}

/// Whether a name holds V's very tensor to the function's end, or the
/// function returns it: its grad_fn, and the graph behind it, live on.
bool tensorHeldToEnd(const FunctionTrace &T, ValueId V) {
  ValueId Tensor = tensorOf(T, V);
  for (ValueId R : T.Returned)
    if (R >= 0 && tensorOf(T, R) == Tensor)
      return true;
  for (const Binding &B : T.Bindings)
    if (heldToEnd(T, B) && tensorOf(T, B.Value) == Tensor)
      return true;
  return false;
}

/// Whether a name holds V's storage to the function's end (or the caller
/// does): it is alive then whatever autograd does.
bool storageNamedToEnd(const FunctionTrace &T, ValueId V) {
  const StorageInfo *S = V >= 0 ? T.storageOf(V) : nullptr;
  if (!S)
    return false;
  if (S->External)
    return true;
  for (const Binding &B : T.Bindings)
    if (heldToEnd(T, B) && T.value(B.Value).Storage == S->Id)
      return true;
  return false;
}

std::string lineText(const OpEvent &Op) {
  return "'" + Op.Name + "' (line " + std::to_string(Op.Where.Line) + ")";
}

} // namespace

ValueId GradientTape::source(const FunctionTrace &T, ValueId V, int Depth) const {
  if (V < 0 || V >= static_cast<ValueId>(T.Values.size()) || Depth > 16)
    return NoValue;
  auto Own = From.find(V);
  if (Own != From.end())
    return Own->second;
  const ValueInfo &VI = T.Values[V];
  if (VI.SameTensorAs != NoValue)
    if (auto Same = From.find(VI.SameTensorAs); Same != From.end())
      return Same->second;
  if (VI.Value.Storage != NoStorage)
    if (auto It = WrittenWithGrad.find(VI.Value.Storage); It != WrittenWithGrad.end())
      return It->second;
  for (ValueId M : VI.MayBe)
    if (ValueId S = source(T, M, Depth + 1); S != NoValue)
      return S;
  if (VI.MayBeAny && !From.empty())
    return From.begin()->second;
  return NoValue;
}

void GradientTape::set(const FunctionTrace &T, ValueId V, ValueId Source) {
  From[V] = Source;
  // The same C++ tensor under every name from now on
  // (`w.requires_grad_();` then `w.sigmoid()` reads w's first value).
  if (ValueId Same = T.Values.at(V).SameTensorAs; Same != NoValue)
    From[Same] = Source;
}

GradientTape::Recorded GradientTape::record(const FunctionTrace &T,
                                            const OpEvent &Op,
                                            const AutogradSaves *Saves) {
  Recorded R;
  if (Op.Result < 0)
    return R;
  const TensorValue &Result = T.value(Op.Result);
  if (Op.MakesGradLeaf) {
    set(T, Op.Result, Op.Result);
    return R;
  }
  ValueId Source = NoValue;
  for (ValueId In : Op.Inputs)
    if ((Source = source(T, In)) != NoValue)
      break;
  if (Source == NoValue)
    return R;
  if (Op.Kind == OpKind::Self) { // the input itself: no node
    set(T, Op.Result, Source);
    return R;
  }
  if (!Op.GradModeOn || Op.Code == OpCode::detach ||
      Op.Kind == OpKind::Alloc || Op.Kind == OpKind::Throws ||
      Op.Kind == OpKind::Use || Op.Kind == OpKind::Unknown)
    return R; // nothing recorded (Unknown: the totals are unknown already)
  // An integer or bool result (argmax, eq) has no grad_fn: no node.
  if (!mayCarryGradient(Result))
    return R;
  set(T, Op.Result, Source);
  bool EveryInputRecorded = true;
  for (ValueId In : Op.Inputs) {
    ValueId InSource = source(T, In);
    if (InSource != NoValue)
      Children[In].push_back(Op.Result);
    else
      EveryInputRecorded = false;
    // The node's edge to a leaf's AccumulateGrad holds the leaf itself.
    if (InSource != NoValue && InSource == tensorOf(T, In))
      LeafEdges.emplace_back(Op.Id, In);
  }
  if (Op.Kind == OpKind::InPlace && Result.Storage != NoStorage)
    WrittenWithGrad.emplace(Result.Storage, Source);

  std::string Runs = lineText(Op) + " runs with gradients on (" +
                     gradSourceText(T, Source) + "): ";
  auto InLoop = [&] { return !T.Statements.at(Op.Statement).runsOncePerCopy(); };
  const char *const EveryIteration =
      "autograd keeps what its backward saves from every iteration of the "
      "loop, which the totals do not follow";
  // Rule 6: the nodes keep what the op made inside, and cross_entropy's
  // NllLossBackward0 the target too (whatever requires grad).
  if (auto Composite = keepsIntermediates(Op)) {
    if (InLoop()) {
      R.Unknown = Runs + EveryIteration;
      return R;
    }
    Pending P;
    P.Op = Op.Id;
    P.Hidden = Op.Intermediates.size();
    // NllLossBackward0 keeps the target, NativeLayerNormBackward0 the
    // input, weight and bias.
    for (const OpArgument &A : Composite->second)
      if (A.Name == "target" || A.Name == "input") {
        P.SavedInputs.push_back(A.Tensor);
        P.InputsCertain = true;
        R.Hold.push_back(A.Tensor);
      }
    R.Hidden = Op.Intermediates;
    Saving.push_back(P);
    return R;
  }
  if (!Saves || Saves->nodeCount() == 0) {
    R.Unknown = Runs + "torch/csrc/autograd/generated/Functions.h, which says "
                       "what autograd saves for backward, was not found with "
                       "the parsed torch/version.h";
    return R;
  }
  std::optional<NodeSaves> Node = savedByCall(T, Op, *Saves);
  // Every overload's and decomposition's saves: only when the call's own
  // node is not known.
  std::optional<OpSaves> Saved =
      Node ? std::nullopt : savedByOp(*Saves, Op);
  if (!Node && !Saved) {
    R.Unknown = Runs + "what autograd saves for it is not known (" +
                (Saves->isComposite(atenName(Op))
                     ? "ATen implements '" + atenName(Op) +
                           "' with other ops, whose nodes are not followed)"
                     : "the LibTorch headers have no backward node named "
                       "after '" + atenName(Op) + "')");
    return R;
  }
  Pending P;
  P.Op = Op.Id;
  if (Node) {
    // The call's own node: what it saves is certain but for inputs whose
    // guard is not known (rule 2).
    if (!Node->Unknown.empty()) {
      R.Unknown = Runs + Node->Unknown;
      return R;
    }
    P.SavesResult = P.ResultCertain = Node->SavesResult;
    P.SavedInputs = Node->Possible;
    P.InputsCertain = Node->Possible.size() == Node->Certain.size();
    if (!P.SavesResult && P.SavedInputs.empty())
      return R;
  } else {
    if (Saved->Possible.empty())
      return R;
    std::set<std::string> Args = schemaArgNames(Op);
    bool SavesInputs = false;
    P.ResultCertain = P.InputsCertain = true;
    for (const std::string &Member : Saved->Possible) {
      bool Certain = Saved->Certain.count(Member) > 0;
      if (AutogradSaves::isResultMember(Member)) {
        P.SavesResult = true;
        P.ResultCertain = P.ResultCertain && Certain;
      } else if (Args.count(Member)) {
        SavesInputs = true;
        P.InputsCertain = P.InputsCertain && Certain;
      } else {
        R.Unknown = Runs + "its backward saves '" + Member +
                    "_', a tensor the analysis does not follow";
        return R;
      }
    }
    // A node saves an input to compute another input's gradient: certain
    // when every input requires grad (or there is one), conditional
    // otherwise, so then held only if names hold it anyway (finish()).
    if (SavesInputs)
      P.SavedInputs = Op.Inputs;
    P.InputsCertain =
        P.InputsCertain && (EveryInputRecorded || Op.Inputs.size() == 1);
  }
  if (InLoop()) {
    R.Unknown = Runs + EveryIteration;
    return R;
  }
  if (P.SavesResult && P.ResultCertain)
    R.Hold.push_back(Op.Result);
  if (P.InputsCertain)
    R.Hold.insert(R.Hold.end(), P.SavedInputs.begin(), P.SavedInputs.end());
  Saving.push_back(P);
  return R;
}

std::optional<std::pair<std::string, std::vector<OpArgument>>>
GradientTape::nodeOf(const FunctionTrace &T, const OpEvent &Op,
                     const AutogradSaves &Saves) const {
  // Rule 6: the op's rule gave the intermediates its nodes keep.
  if (auto Composite = keepsIntermediates(Op))
    return Composite;
  std::optional<RecordedCall> Call = recordedCall(T, Op, Saves);
  if (!Call)
    return std::nullopt;
  std::map<std::string, bool> ArgIsTensor;
  for (const OpArgument &A : Call->Args)
    ArgIsTensor.emplace(A.Name, A.IsTensor);
  std::optional<std::string> Node = Saves.nodeFor(Call->Op, ArgIsTensor);
  if (!Node)
    return std::nullopt;
  return std::make_pair(*Node, std::move(Call->Args));
}

const GradientTape::Pending *GradientTape::pendingOf(OpId Op) const {
  for (const Pending &P : Saving)
    if (P.Op == Op)
      return &P;
  return nullptr;
}

std::optional<GradientTape::NodeSaves>
GradientTape::savedByCall(const FunctionTrace &T, const OpEvent &Op,
                          const AutogradSaves &Saves) const {
  auto Call = nodeOf(T, Op, Saves);
  if (!Call)
    return std::nullopt;
  const std::vector<OpArgument> &Args = Call->second;
  std::map<std::string, bool> ArgIsTensor;
  for (const OpArgument &A : Args)
    ArgIsTensor.emplace(A.Name, A.IsTensor);
  const std::optional<std::string> Node = Call->first;
  auto Guards = AutogradSaves::inputGuards(*Node);
  auto ArgTensor = [&](const std::string &Name) {
    for (const OpArgument &A : Args)
      if (A.Name == Name)
        return A.Tensor;
    return NoValue;
  };
  size_t TensorArgs = 0;
  bool EveryTensorRequiresGrad = true;
  for (const OpArgument &A : Args)
    if (A.Tensor != NoValue) {
      ++TensorArgs;
      EveryTensorRequiresGrad =
          EveryTensorRequiresGrad && certainlyRequiresGrad(T, A.Tensor);
    }
  NodeSaves Out;
  for (const std::string &Member : Saves.savedByNode(*Node)) {
    if (AutogradSaves::isResultMember(Member)) {
      Out.SavesResult = true;
      continue;
    }
    ValueId Input = ArgTensor(Member);
    if (Input == NoValue && ArgIsTensor.count(Member))
      return std::nullopt; // a list of tensors, or one not derived
    if (Input == NoValue) {
      Out.Unknown = "its backward (" + *Node + ") saves '" + Member +
                    "_', a tensor the analysis does not follow";
      return Out;
    }
    // Rule 5 of AutogradSaves: saved when the input whose gradient needs
    // it requires grad ("": every gradient needs it).
    bool Saved = EveryTensorRequiresGrad || TensorArgs == 1;
    if (Guards && Guards->count(Member)) {
      const std::string &NeededBy = Guards->at(Member);
      ValueId Needing = NeededBy.empty() ? NoValue : ArgTensor(NeededBy);
      auto Kind = ArgIsTensor.find(NeededBy);
      bool NeedingIsTensor = Kind != ArgIsTensor.end() && Kind->second;
      // An input that is no tensor, or certainly needs no gradient: no
      // formula reads the member, so the node does not save it.
      if (!NeededBy.empty() &&
          (!NeedingIsTensor || (Needing != NoValue && certainlyNoGrad(T, Needing))))
        continue;
      Saved = NeededBy.empty() || certainlyRequiresGrad(T, Needing);
    }
    Out.Possible.push_back(Input);
    if (Saved)
      Out.Certain.push_back(Input);
  }
  return Out;
}

bool GradientTape::certainlyRequiresGrad(const FunctionTrace &T,
                                         ValueId V) const {
  if (V < 0 || V >= static_cast<ValueId>(T.Values.size()))
    return false;
  return From.count(V) || From.count(tensorOf(T, V));
}

bool GradientTape::certainlyNoGrad(const FunctionTrace &T, ValueId V) const {
  if (V < 0 || V >= static_cast<ValueId>(T.Values.size()))
    return false;
  const ValueInfo &VI = T.Values[V];
  return VI.Producer != NoOp && VI.MayBe.empty() && !VI.MayBeAny &&
         source(T, V) == NoValue;
}

bool GradientTape::graphOutlives(const FunctionTrace &T, ValueId V) const {
  std::set<ValueId> Seen;
  std::vector<ValueId> Work = {V};
  while (!Work.empty()) {
    ValueId W = Work.back();
    Work.pop_back();
    if (!Seen.insert(W).second)
      continue;
    if (tensorHeldToEnd(T, W))
      return true;
    if (auto It = Children.find(W); It != Children.end())
      Work.insert(Work.end(), It->second.begin(), It->second.end());
  }
  return false;
}

std::vector<OpId> GradientTape::savingAncestors(const FunctionTrace &T,
                                                ValueId Root) const {
  std::set<OpId> SavingOps;
  for (const Pending &P : Saving)
    SavingOps.insert(P.Op);
  std::vector<OpId> Found;
  std::set<ValueId> Seen;
  std::vector<ValueId> Work = {Root};
  while (!Work.empty()) {
    ValueId V = Work.back();
    Work.pop_back();
    if (V < 0 || !Seen.insert(V).second || source(T, V) == NoValue)
      continue;
    const OpEvent *Op = T.producer(V);
    if (!Op)
      continue;
    if (SavingOps.count(Op->Id))
      Found.push_back(Op->Id);
    Work.insert(Work.end(), Op->Inputs.begin(), Op->Inputs.end());
  }
  return Found;
}

bool GradientTape::aliveToEnd(const FunctionTrace &T, ValueId V) const {
  return storageNamedToEnd(T, V) ||
         (V >= 0 && (HeldLeaves.count(V) || HeldLeaves.count(tensorOf(T, V))));
}

std::vector<ValueId> GradientTape::leavesHeldBy(OpId Op) const {
  std::vector<ValueId> Out;
  for (const auto &[Id, Leaf] : LeafEdges)
    if (Id == Op)
      Out.push_back(Leaf);
  return Out;
}

std::vector<OpId>
GradientTape::droppedAtEnd(const FunctionTrace &T, unsigned S,
                           const std::set<ValueId> &HeldTensors) {
  std::set<OpId> Candidates;
  for (const Pending &P : Saving)
    Candidates.insert(P.Op);
  for (const auto &[Id, Leaf] : LeafEdges)
    Candidates.insert(Id);
  // A statement that runs on some paths (a branch, a loop that may run
  // no time) drops an earlier graph on those paths only: only what it made
  // itself goes there.
  const Statement &Now = T.Statements.at(S);
  bool EveryPath = Now.runsOncePerCopy() && !Now.InBranch;
  for (auto It = Candidates.begin(); It != Candidates.end();) {
    unsigned Made = T.Ops.at(*It).Statement;
    if (Dropped.count(*It) || Made > S || !T.Statements.at(Made).runsOncePerCopy() ||
        (Made != S && !EveryPath))
      It = Candidates.erase(It);
    else
      ++It;
  }
  std::vector<OpId> Out;
  if (Candidates.empty())
    return Out;
  // What may keep a tensor, and its grad_fn, alive: a name (HeldTensors),
  // the return, a reader the tape did not record (a call not followed, a
  // view made without gradients).
  // An op's edges are recorded with it, so each op is looked at once.
  for (; OpsReadOffTape < T.Ops.size(); ++OpsReadOffTape) {
    const OpEvent &Reader = T.Ops[OpsReadOffTape];
    for (ValueId In : Reader.Inputs) {
      if (In < 0)
        continue;
      auto It = Children.find(In);
      if (It == Children.end() ||
          std::find(It->second.begin(), It->second.end(), Reader.Result) ==
              It->second.end())
        ReadOffTape.insert(tensorOf(T, In));
    }
  }
  std::set<ValueId> Kept = HeldTensors;
  Kept.insert(ReadOffTape.begin(), ReadOffTape.end());
  for (ValueId R : T.Returned)
    Kept.insert(tensorOf(T, R));
  for (OpId Id : Candidates) {
    // Every tensor computed from the op's result through recorded ops.
    bool Held = false;
    std::set<ValueId> Graph;
    std::vector<ValueId> Work = {T.Ops.at(Id).Result};
    while (!Work.empty() && !Held) {
      ValueId V = Work.back();
      Work.pop_back();
      if (V < 0 || !Graph.insert(tensorOf(T, V)).second)
        continue;
      Held = Kept.count(tensorOf(T, V)) > 0;
      if (auto It = Children.find(V); It != Children.end())
        Work.insert(Work.end(), It->second.begin(), It->second.end());
    }
    if (Held)
      continue;
    Dropped.insert(Id);
    Out.push_back(Id);
  }
  return Out;
}

std::string GradientTape::finish(const FunctionTrace &T) const {
  for (const auto &[OpId, Leaf] : LeafEdges)
    if (!aliveToEnd(T, Leaf) &&
        !(LedgerHeldLeaves.count({OpId, Leaf}) &&
          (Dropped.count(OpId) || graphOutlives(T, T.Ops.at(OpId).Result))))
      return lineText(T.Ops.at(OpId)) + " runs with gradients on: its node "
             "holds the leaf tensor it reads (through AccumulateGrad) for as "
             "long as the graph lives, which the totals do not follow";
  for (ValueId Leaf : GradDefined)
    if (!aliveToEnd(T, Leaf))
      return "backward() gives a tensor a .grad that lives as long as the "
             "tensor, which may go before the function ends; the totals do "
             "not follow that";
  for (const Pending &P : Saving) {
    // Released by a followed backward() or with a dropped graph: the
    // ledger let them go there.
    if (Released.count(P.Op) || Dropped.count(P.Op))
      continue;
    const OpEvent &Op = T.Ops.at(P.Op);
    bool Outlives = graphOutlives(T, Op.Result);
    // Held to the return by the ledger: exact when the node lives that
    // long; otherwise only when names hold what it saves to the end
    // anyway.
    bool ResultAlive = !P.SavesResult || (Outlives && P.ResultCertain) ||
                       aliveToEnd(T, Op.Result);
    bool SavesInputs = !P.SavedInputs.empty();
    bool InputsAlive = !SavesInputs || (Outlives && P.InputsCertain);
    // The intermediates only the graph holds: held to the return exactly
    // when the graph lives that long.
    if (P.Hidden > 0 && !Outlives)
      return lineText(Op) + " runs with gradients on: its nodes keep the "
             "tensors it makes inside until the graph is dropped, which "
             "may be before the function ends; the totals do not follow that";
    if (SavesInputs && !InputsAlive) {
      InputsAlive = true;
      for (ValueId In : P.SavedInputs)
        InputsAlive = InputsAlive && aliveToEnd(T, In);
    }
    if (ResultAlive && InputsAlive)
      continue;
    return lineText(Op) + " runs with gradients on: its backward saves " +
           (P.SavesResult ? SavesInputs ? "its inputs and result" : "its result"
                          : "its inputs") +
           ", which autograd keeps " +
           (Outlives ? "or not, by the overload called and which inputs "
                       "require grad"
                     : "until the graph is dropped, which may be before "
                       "the function ends") +
           "; the totals do not follow that";
  }
  return "";
}

} // namespace tma
