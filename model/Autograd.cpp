// The gradient's reach from a loss through the trace (the numbered rules
// are in Autograd.h), and the elements torch::autograd::grad returns.
#include "model/Autograd.h"

#include "model/DType.h"
#include "model/ops/OpCodes.h"

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

} // namespace tma
