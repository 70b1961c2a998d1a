// torch::autograd::grad in the code being analysed (issue 35):
//
//     auto out = torch::mm(x, w.t());
//     auto g = torch::autograd::grad({out}, {x}, {torch::ones_like(out)},
//                                    /*retain_graph=*/true,
//                                    /*create_graph=*/true)[0];
//
// 1. The call returns one gradient per input, in order: a tensor list
//    whose element i has the sizes, dtype and device of inputs[i]
//    (model/Autograd.h, autogradGradient: the engine holds every gradient
//    to its input's metadata). Its strides and storage are left unknown:
//    the last backward formula made them.
// 2. The outputs and grad_outputs lists are evaluated for what they
//    compute (`torch::ones_like(out)` allocates); the backward pass itself
//    allocates what the analysis does not follow, so the function's totals
//    become unknown, and each element may be any tensor (the grad_output
//    handed in, a view of it), as for any call not followed.
// 3. allow_unused (the sixth argument) true, or not read as a constant:
//    an element may be undefined, so none is answered. Otherwise an input
//    the outputs do not reach makes grad() throw, and the elements the
//    function goes on with are all defined.
// 4. grad() accumulates into no .grad (it runs the engine with
//    accumulate_grad false), so the gradients backward() leaves
//    (Training.cpp) are not touched.
#include "frontend/FunctionEvaluator.h"
#include "frontend/TrainingTracker.h"
#include "frontend/ArgumentReader.h"
#include "model/Autograd.h"

using namespace clang;

namespace tma {

bool TrainingTracker::isAutogradGrad(const FunctionDecl *Callee) {
  return Callee && isLibTorchDecl(Callee) &&
         Callee->getQualifiedNameAsString() == "torch::autograd::grad";
}

std::optional<std::vector<ValueId>>
TrainingTracker::autogradGradients(const CallExpr *CE) {
  if (CE->getNumArgs() < 2)
    return std::nullopt;
  (void)FE.tensorList(CE->getArg(0)); // outputs
  auto Inputs = FE.tensorList(CE->getArg(1));
  if (CE->getNumArgs() > 2)
    (void)FE.tensorList(CE->getArg(2)); // grad_outputs
  if (!Inputs)
    return std::nullopt;
  std::optional<int64_t> AllowUnused =
      CE->getNumArgs() > 5 ? FE.args().integer(CE->getArg(5)) : 0;
  bool MayBeUndefined = !AllowUnused || *AllowUnused != 0;
  SourceSpan Where = FE.span(CE->getSourceRange());
  std::vector<ValueId> Gradients;
  for (ValueId Input : *Inputs) {
    TensorValue Known =
        Input >= 0 ? FE.I.value(Input)
                   : unknownTensor("the input of autograd::grad is not known");
    Gradients.push_back(FE.I.unknownWith(
        "autograd::grad", autogradGradient(Known, MayBeUndefined), Where,
        NoStorage, Interpreter::Provenance::Computed));
  }
  return Gradients;
}

} // namespace tma
