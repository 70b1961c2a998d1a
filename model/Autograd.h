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

#include <set>
#include <string>

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

/// Why the live and peak totals cannot follow what autograd keeps, or empty
/// when they can (issue 36). Called on a function's trace before its
/// ledger closes.
///
/// A tensor requires grad when it is made so (OpEvent::MakesGradLeaf) or
/// an op records it: gradient mode on, a floating-point (or unknown) dtype,
/// an input that may require grad; detach() and factories record nothing,
/// an in-place write that records makes every tensor on its storage one
/// that may. An op recorded so keeps what its backward node saves
/// (AutogradSaves: the header's SavedVariable members) until backward runs
/// or the graph is dropped, past its C++ lifetime. The totals, which follow
/// C++ lifetimes, are still exact when every saved tensor lives to the
/// function's end anyway: a node that saves no tensor (sum, add, clone,
/// every view), or one that saves inputs and its result that a name, the
/// caller or the function's scope holds to the end, outside a loop (a loop
/// keeps one iteration's saved tensors per iteration). Anything else (a
/// saved temporary, a saved member that is no input or result, an op with
/// no node in the header, no header at all) gives the reason.
///
/// Only tensors the function makes are followed: whether a parameter
/// requires grad is the caller's, and not known here.
std::string autogradKeepsUnfollowed(const FunctionTrace &T,
                                    const AutogradSaves *Saves);

} // namespace tma
