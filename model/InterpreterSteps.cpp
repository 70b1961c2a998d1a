// backward() and optimizer.step() on the Interpreter's ledger: the steps
// model/AutogradBackward.cpp and model/Optimizers.cpp plan, replayed as
// storages the function allocates and frees.
#include "model/Interpreter.h"

#include "model/Geometry.h"
#include "model/Optimizers.h"

#include <map>

namespace tma {

std::string Interpreter::runBackward(const BackwardRequest &R) {
  if (!Saves || Saves->nodeCount() == 0)
    return "torch/csrc/autograd/generated/Functions.h was not found with the "
           "parsed torch/version.h";
  BackwardPlan Plan = Tape.backward(Trace, R, *Saves);
  if (!Plan.Unknown.empty())
    return Plan.Unknown;
  replay(Plan, "");
  return "";
}

std::string Interpreter::runOptimizerStep(
    const OptimizerKind &K, const std::string &StateName,
    std::vector<std::pair<ValueId, bool>> ParamsWithState) {
  std::vector<OptimizerParameter> Params;
  for (const auto &[V, HasState] : ParamsWithState) {
    std::optional<bool> Grad = Tape.hasGrad(Trace, V);
    if (!Grad)
      return "which parameters have a .grad is not known";
    Params.push_back({V, *Grad, HasState});
  }
  BackwardPlan Plan = optimizerStep(Trace, K, Params);
  if (!Plan.Unknown.empty())
    return Plan.Unknown;
  replay(Plan, StateName);
  return "";
}

void Interpreter::replay(const BackwardPlan &Plan, const std::string &StateName) {
  OpId Producer = Trace.Ops.empty() ? NoOp : Trace.Ops.back().Id;
  std::map<int, std::string> Keys;
  std::map<int, SymSize> Sizes;
  // The op's figures: what stays (a .grad, the optimizer's state), what
  // came and went, and the most the steps' own buffers held at once above
  // what stays.
  std::optional<SymSize> Kept = SymSize(0), Freed = SymSize(0),
                         Live = SymSize(0), Peak = SymSize(0);
  for (const BackwardStep &S : Plan.Steps) {
    switch (S.K) {
    case BackwardStep::Kind::Allocate:
      Sizes[S.Buffer] = S.Bytes;
      Live = addSizes(Live, S.Bytes);
      if (Live && Peak)
        Peak = SymSize::max(*Peak, *Live);
      break;
    case BackwardStep::Kind::Free:
      Freed = addSizes(Freed, Sizes.at(S.Buffer));
      if (Live)
        Live = *Live - Sizes.at(S.Buffer);
      break;
    case BackwardStep::Kind::KeepAsGrad:
    case BackwardStep::Kind::KeepAsState:
      Kept = addSizes(Kept, Sizes.at(S.Buffer));
      break;
    case BackwardStep::Kind::ReleaseSaved:
      break;
    }
  }
  if (!Trace.Ops.empty()) {
    OpEvent &E = Trace.Ops.back();
    E.AllocatedBytes = Kept;
    E.TransientTotalBytes = Freed;
    E.TransientBytes = Peak && Kept ? std::optional<SymSize>(*Peak - *Kept) : std::nullopt;
  }
  // What each buffer is, for the peak's breakdown: known at its
  // allocation, which may be the peak, though the plan keeps it later.
  std::map<int, StorageRole> Roles;
  for (const BackwardStep &S : Plan.Steps)
    if (S.K == BackwardStep::Kind::KeepAsGrad)
      Roles[S.Buffer] = StorageRole::Gradient;
    else if (S.K == BackwardStep::Kind::KeepAsState)
      Roles[S.Buffer] = StorageRole::OptimizerState;
  auto NameOf = [&](ValueId Of) -> std::string {
    for (const Binding &B : Trace.Bindings)
      if (B.Value >= 0 && tensorOf(B.Value) == Of)
        return B.Name;
    if (const OpEvent *Op = Of >= 0 ? Trace.producer(Of) : nullptr)
      return Op->Note.substr(0, Op->Note.find(" ("));
    return "";
  };
  for (const BackwardStep &S : Plan.Steps) {
    switch (S.K) {
    case BackwardStep::Kind::Allocate: {
      ValueId V = storageOf(S.Bytes, Producer,
                            S.Of != NoValue ? &value(S.Of) : nullptr, std::nullopt);
      auto Role = Roles.find(S.Buffer);
      Trace.Storages[value(V).Storage].Role =
          Role != Roles.end()  ? Role->second
          : S.Of != NoValue    ? StorageRole::Gradient
                               : StorageRole::Scratch;
      std::string Key = "\x01step buffer " + std::to_string(value(V).Storage);
      holdUntilReturn(Key, V);
      Keys[S.Buffer] = Key;
      notePeak(SymSize(0));
      break;
    }
    case BackwardStep::Kind::Free:
      drop(Keys.at(S.Buffer));
      break;
    case BackwardStep::Kind::ReleaseSaved:
      releaseSavedBy(S.Op, S.Member);
      break;
    case BackwardStep::Kind::KeepAsGrad:
    case BackwardStep::Kind::KeepAsState: {
      // Its key holds it until the function returns; the timeline names
      // it after its tensor.
      StorageId Kept = value(Names.at(Keys.at(S.Buffer))).Storage;
      std::string Name = NameOf(S.Of);
      if (!Name.empty())
        Trace.Storages[Kept].FirstName =
            S.K == BackwardStep::Kind::KeepAsGrad ? Name + ".grad"
                                                  : StateName + " of " + Name;
      break;
    }
    }
  }
}

} // namespace tma
