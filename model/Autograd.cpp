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

/// The trace's values that may require grad, followed op by op in order.
class GradFlow {
public:
  explicit GradFlow(const FunctionTrace &T)
      : T(T), From(T.Values.size(), NoValue) {}

  /// The tensor requiring grad that V's history starts from, or NoValue.
  ValueId source(ValueId V, int Depth = 0) const {
    if (V < 0 || V >= static_cast<ValueId>(From.size()) || Depth > 16)
      return NoValue;
    if (From[V] != NoValue)
      return From[V];
    const ValueInfo &VI = T.Values[V];
    if (VI.SameTensorAs != NoValue && From[VI.SameTensorAs] != NoValue)
      return From[VI.SameTensorAs];
    if (VI.Value.Storage != NoStorage) {
      auto It = WrittenWithGrad.find(VI.Value.Storage);
      if (It != WrittenWithGrad.end())
        return It->second;
    }
    for (ValueId M : VI.MayBe)
      if (ValueId S = source(M, Depth + 1); S != NoValue)
        return S;
    if (VI.MayBeAny && AnyLeaf != NoValue)
      return AnyLeaf;
    return NoValue;
  }

  void set(ValueId V, ValueId Source) {
    if (V < 0 || V >= static_cast<ValueId>(From.size()) || Source == NoValue)
      return;
    From[V] = Source;
    // The same C++ tensor under every name from now on
    // (`w.requires_grad_();` then `w.sigmoid()` reads w's first value).
    ValueId Same = T.Values[V].SameTensorAs;
    if (Same >= 0 && Same < static_cast<ValueId>(From.size()))
      From[Same] = Source;
    if (AnyLeaf == NoValue)
      AnyLeaf = Source;
  }

  void writtenWithGrad(StorageId S, ValueId Source) {
    if (S != NoStorage)
      WrittenWithGrad.emplace(S, Source);
  }

private:
  const FunctionTrace &T;
  std::vector<ValueId> From;
  std::map<StorageId, ValueId> WrittenWithGrad;
  ValueId AnyLeaf = NoValue;
};

bool mayCarryGradient(const TensorValue &V) {
  return !V.Type || isFloating(*V.Type) || isComplex(*V.Type);
}

/// The name a value requiring grad goes by in the report.
std::string gradSourceText(const FunctionTrace &T, ValueId Leaf) {
  for (const Binding &B : T.Bindings)
    if (B.Value == Leaf)
      return "'" + B.Name + "' requires grad";
  if (const OpEvent *Op = T.producer(Leaf))
    return "a tensor made at line " + std::to_string(Op->Where.Line) +
           " requires grad";
  return "a tensor requires grad";
}

/// The op's ATen name: the table's canonical one, else the name written.
std::string atenName(const OpEvent &Op) {
  return Op.Code == NoOpCode ? Op.Name : opInfo(Op.Code).Name;
}

/// What the op's backward nodes save: its own nodes', or, for a composite
/// op (no node of its own), those of the ops ATen implements it with
/// (CompositeImplicitAutograd in native_functions.yaml), by the table's
/// tags: a cast or device move is _to_copy; contiguous() is clone(); a
/// reshape is view, _reshape_alias or _unsafe_view of a clone.
std::optional<std::set<std::string>> savedByOp(const AutogradSaves &Saves,
                                               const OpEvent &Op) {
  if (!Saves.isComposite(atenName(Op)))
    return Saves.savedBy(atenName(Op));
  std::vector<std::string> Calls;
  if (hasTag(Op.Code, Cast) || hasTag(Op.Code, DeviceMove))
    Calls = {"_to_copy"};
  else if (hasTag(Op.Code, Compacting))
    Calls = {"clone"};
  else if (hasTag(Op.Code, Reshaping))
    Calls = {"view", "_reshape_alias", "_unsafe_view", "clone"};
  if (Calls.empty())
    return std::nullopt;
  std::set<std::string> All;
  for (const std::string &Called : Calls) {
    auto Saved = Saves.savedBy(Called);
    if (!Saved)
      return std::nullopt;
    All.insert(Saved->begin(), Saved->end());
  }
  return All;
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

bool isResultMember(const std::string &Member) {
  if (Member.compare(0, 6, "result") != 0)
    return false;
  for (size_t K = 6; K < Member.size(); ++K)
    if (!std::isdigit(static_cast<unsigned char>(Member[K])))
      return false;
  return true;
}

/// Whether V's storage is held to the function's end: the caller's, or
/// one the ledger releases only when the scopes close after the last
/// statement (or not at all yet).
bool heldToEnd(const FunctionTrace &T, ValueId V) {
  if (V < 0)
    return false;
  const StorageInfo *S = T.storageOf(V);
  if (!S)
    return false;
  return S->External || !S->ReleasedAfter ||
         (S->ReleasedAtScopeEnd && *S->ReleasedAfter + 1 >= T.Statements.size());
}

} // namespace

std::string autogradKeepsUnfollowed(const FunctionTrace &T,
                                    const AutogradSaves *Saves) {
  GradFlow Flow(T);
  for (const OpEvent &Op : T.Ops) {
    if (Op.Result < 0)
      continue;
    const TensorValue &Result = T.value(Op.Result);
    if (Op.MakesGradLeaf) {
      Flow.set(Op.Result, Op.Result);
      continue;
    }
    ValueId Source = NoValue;
    for (ValueId In : Op.Inputs)
      if ((Source = Flow.source(In)) != NoValue)
        break;
    if (Source == NoValue)
      continue;
    if (Op.Kind == OpKind::Self) { // the input itself: no node
      Flow.set(Op.Result, Source);
      continue;
    }
    if (!Op.GradModeOn || Op.Code == OpCode::detach ||
        Op.Kind == OpKind::Alloc || Op.Kind == OpKind::Throws ||
        Op.Kind == OpKind::Use || Op.Kind == OpKind::Unknown)
      continue; // nothing recorded (Unknown: the totals are unknown already)
    if (mayCarryGradient(Result))
      Flow.set(Op.Result, Source);
    if (Op.Kind == OpKind::InPlace)
      Flow.writtenWithGrad(Result.Storage, Source);

    std::string Op_ = "'" + Op.Name + "' (line " + std::to_string(Op.Where.Line) +
                      ") runs with gradients on (" + gradSourceText(T, Source) +
                      "): ";
    if (!Saves || Saves->nodeCount() == 0)
      return Op_ + "torch/csrc/autograd/generated/Functions.h, which says "
                   "what autograd saves for backward, was not found with "
                   "the parsed torch/version.h";
    std::optional<std::set<std::string>> Saved = savedByOp(*Saves, Op);
    if (!Saved)
      return Op_ + "the LibTorch headers have no backward node for '" +
             atenName(Op) + "', so what autograd saves for it is not known";
    if (Saved->empty())
      continue;
    std::set<std::string> Args = schemaArgNames(Op);
    bool SavesInputs = false, SavesResult = false;
    for (const std::string &Member : *Saved) {
      if (isResultMember(Member))
        SavesResult = true;
      else if (Args.count(Member))
        SavesInputs = true;
      else
        return Op_ + "its backward saves '" + Member +
               "_', a tensor the analysis does not follow";
    }
    const Statement &Where = T.Statements.at(Op.Statement);
    if (Where.InLoop)
      return Op_ + "autograd keeps what its backward saves from every "
                   "iteration of the loop, which the totals do not follow";
    bool Held = !SavesResult || heldToEnd(T, Op.Result);
    for (ValueId In : Op.Inputs)
      Held = Held && (!SavesInputs || heldToEnd(T, In));
    if (!Held)
      return Op_ + "its backward saves " +
             (SavesResult ? SavesInputs ? "its inputs and result" : "its result"
                          : "its inputs") +
             " and autograd keeps them alive past their C++ lifetime, which "
             "the totals do not follow";
  }
  return "";
}

} // namespace tma
