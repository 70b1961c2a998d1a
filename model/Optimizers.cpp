// step()'s allocations, per optimizer (the rules are in Optimizers.h).
#include "model/Optimizers.h"

#include "model/DType.h"

namespace tma {

namespace {

class StepLedger {
public:
  std::vector<BackwardStep> Steps;
  int allocate(const SymSize &Bytes, ValueId Of) {
    BackwardStep S;
    S.K = BackwardStep::Kind::Allocate;
    S.Buffer = Next++;
    S.Bytes = Bytes;
    S.Of = Of;
    Steps.push_back(S);
    return S.Buffer;
  }
  void free(int Buffer) {
    BackwardStep S;
    S.K = BackwardStep::Kind::Free;
    S.Buffer = Buffer;
    Steps.push_back(S);
  }
  void keepAsState(int Buffer, ValueId Of) {
    BackwardStep S;
    S.K = BackwardStep::Kind::KeepAsState;
    S.Buffer = Buffer;
    S.Of = Of;
    Steps.push_back(S);
  }
  /// An in-place op with a Scalar: the wrapped double and its float copy.
  void scalarOperand() {
    int Wrapped = allocate(SymSize(8), NoValue);
    int AsFloat = allocate(SymSize(4), NoValue);
    free(AsFloat);
    free(Wrapped);
  }

private:
  int Next = 0;
};

} // namespace

BackwardPlan optimizerStep(const FunctionTrace &T, const OptimizerKind &K,
                           const std::vector<OptimizerParameter> &Params) {
  BackwardPlan Plan;
  auto Fail = [&](const std::string &Why) {
    Plan.Steps.clear();
    Plan.Unknown = Why;
    return Plan;
  };
  if (!(K.Version.Major == 1 && K.Version.Minor == 13))
    return Fail("what step() allocates follows LibTorch 1.13's optimizers; "
                "the parsed headers are " + std::to_string(K.Version.Major) +
                "." + std::to_string(K.Version.Minor));
  bool SGD = K.Type == "SGD", Adam = K.Type == "Adam";
  if (!SGD && !Adam)
    return Fail("what " + K.Type + "'s step() allocates is not measured");
  if (K.WeightDecay != std::optional<double>(0.0))
    return Fail("its weight decay is not known to be 0 (a decayed gradient "
                "is a temporary not followed)");
  if (SGD && (!K.Momentum || K.Nesterov != std::optional<bool>(false)))
    return Fail("its momentum or nesterov option is not known");
  if (Adam && K.Amsgrad != std::optional<bool>(false))
    return Fail("amsgrad is not known to be off");
  StepLedger L;
  for (const OptimizerParameter &P : Params) {
    if (!P.HasGrad)
      continue; // `if (!p.grad().defined()) continue;`
    const TensorValue &V = T.value(P.Param);
    auto Bytes = V.logicalBytes();
    if (!Bytes || V.Type != std::optional<DType>(DType::Float32))
      return Fail("a parameter's size or dtype (float32 is measured) is not "
                  "known");
    if (SGD) {
      if (*K.Momentum == 0)
        continue;
      if (!P.HasState)
        L.keepAsState(L.allocate(*Bytes, P.Param), P.Param); // clone(d_p)
      else
        L.scalarOperand(); // buf.mul_(momentum)
      continue;
    }
    if (!P.HasState) {
      L.keepAsState(L.allocate(*Bytes, P.Param), P.Param); // exp_avg
      L.keepAsState(L.allocate(*Bytes, P.Param), P.Param); // exp_avg_sq
    }
    L.scalarOperand(); // exp_avg.mul_(beta1)
    L.scalarOperand(); // exp_avg_sq.mul_(beta2)
    int Root = L.allocate(*Bytes, NoValue); // exp_avg_sq.sqrt()
    int Wrapped = L.allocate(SymSize(8), NoValue), AsFloat = L.allocate(SymSize(4), NoValue);
    int Denom = L.allocate(*Bytes, NoValue); // / sqrt(bias_correction2)
    L.free(AsFloat);
    L.free(Wrapped);
    L.scalarOperand(); // .add_(eps)
    L.free(Root);
    L.free(Denom); // after p.addcdiv_(exp_avg, denom, -step_size)
  }
  Plan.Steps = std::move(L.Steps);
  return Plan;
}

} // namespace tma
