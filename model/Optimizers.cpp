// step()'s allocations, per optimizer (the rules are in Optimizers.h).
#include "model/Optimizers.h"

#include "model/BackwardPass.h"
#include "model/DType.h"

namespace tma {

using namespace backward_pass;

namespace {

/// A buffer the optimizer keeps as Param's state.
void state(PassLedger &L, const SymSize &Bytes, ValueId Param) {
  int H = L.fresh(Bytes, Param);
  L.keep(L.buffer(H), Param, BackwardStep::Kind::KeepAsState);
  L.release(H);
}

/// An in-place op with a Scalar: the wrapped double and its float copy.
void scalarOperand(PassLedger &L) {
  int Wrapped = L.fresh(SymSize(8), NoValue);
  L.release(L.fresh(SymSize(4), NoValue));
  L.release(Wrapped);
}

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
  PassLedger L;
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
        state(L, *Bytes, P.Param); // clone(d_p)
      else
        scalarOperand(L); // buf.mul_(momentum)
      continue;
    }
    if (!P.HasState) {
      state(L, *Bytes, P.Param); // exp_avg
      state(L, *Bytes, P.Param); // exp_avg_sq
    }
    scalarOperand(L); // exp_avg.mul_(beta1)
    scalarOperand(L); // exp_avg_sq.mul_(beta2)
    int Root = L.fresh(*Bytes, NoValue); // exp_avg_sq.sqrt()
    int Wrapped = L.fresh(SymSize(8), NoValue);
    int AsFloat = L.fresh(SymSize(4), NoValue);
    int Denom = L.fresh(*Bytes, NoValue); // / sqrt(bias_correction2)
    L.release(AsFloat);
    L.release(Wrapped);
    scalarOperand(L); // .add_(eps)
    L.release(Root);
    L.release(Denom); // after p.addcdiv_(exp_avg, denom, -step_size)
  }
  Plan.Steps = std::move(L.Steps);
  return Plan;
}

} // namespace tma
