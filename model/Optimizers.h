// What an optimizer's step() allocates and frees (issue 36), parameter by
// parameter, as LibTorch 1.13's torch/csrc/api/src/optim/{sgd,adam}.cpp
// run it; measured with a counting CPU allocator (training.md):
//
//  SGD   momentum != 0: the first step clones each gradient as its
//        momentum buffer (kept by the optimizer); later steps scale it in
//        place, buf.mul_(momentum), whose Scalar is wrapped as a double
//        tensor (8 B) and converted to the parameter's float (4 B) for the
//        call. Without momentum nothing is allocated.
//  Adam  the first step makes exp_avg and exp_avg_sq (zeros_like, kept);
//        every step scales both in place (8 + 4 B each, as above), then
//        denom = (exp_avg_sq.sqrt() / sqrt(bias_correction2)).add_(eps):
//        the square root and the quotient, two tensors of the parameter's
//        size (the quotient after 8 + 4 B of its Scalar), add_ another
//        8 + 4 B; the square root goes at the end of that statement, the
//        quotient at the end of the parameter's iteration.
//
// A parameter without a .grad is skipped. Anything else (weight decay,
// nesterov, amsgrad, AdamW, RMSprop, another dtype than float32, another
// LibTorch version) is not followed: the plan says why.
#pragma once

#include "model/Autograd.h"

#include <optional>
#include <string>
#include <vector>

namespace tma {

struct OptimizerKind {
  std::string Type; // "SGD", "Adam", ...
  std::optional<double> Momentum, WeightDecay;
  std::optional<bool> Nesterov, Amsgrad;
  TorchVersion Version;
};

struct OptimizerParameter {
  ValueId Param = NoValue;
  bool HasGrad = false;
  /// The optimizer already holds its state (an earlier step made it).
  bool HasState = false;
};

/// The steps of one step(): Allocate (Of: the parameter), Free and
/// KeepAsState (held as long as the optimizer).
BackwardPlan optimizerStep(const FunctionTrace &T, const OptimizerKind &K,
                           const std::vector<OptimizerParameter> &Params);

} // namespace tma
