// The built-in torch::nn layers, run from the layer table (issue 34):
//
//     torch::nn::BatchNorm2d bn(16);        // weight, bias (16), running_mean,
//                                           // running_var (16), num_batches_tracked ()
//     auto y = bn(x);                       // batch_norm(x, weight, bias, ...)
//
// Design:
//  1. What a layer is lives in model/modules (no Clang): its parameters
//     and buffers from its options, and its forward as an op call, a ready
//     outcome (a throw the module makes first, the input itself) or why it
//     is not modelled. No layer or op name is spelled here.
//  2. This file turns that into the trace: parameters become the module's
//     ParamShapes; a forward's op call runs through the op's rule
//     (applyResult), so the table's rule answers for it.
//  3. A Sequential runs its layers in order here: each layer's result is
//     freed once the next one has run, as SequentialImpl::forward's
//     `input = module->any_forward(input)` frees it.
//  4. Training mode (Modules.cpp's trainingMode) is handed to the table,
//     which decides what it changes (Dropout, BatchNorm).
#include "frontend/LayerEvaluator.h"
#include "frontend/OpBinder.h"

using namespace clang;

namespace tma {

std::string layerParameters(ModuleValue &M) {
  const LayerSpec *L = lookupLayer(M.Layer);
  if (!L)
    return "this layer is not modelled yet";
  LayerParameters P = tma::layerParameters(*L, M.Options);
  if (!P.Why.empty())
    return P.Why;
  for (const LayerTensor &T : P.Tensors) {
    M.ParamShapes.push_back({T.Name, T.Sizes});
    if (T.Buffer)
      M.Buffers.insert(T.Name);
    if (T.Type != DType::Float32)
      M.ParamTypes[T.Name] = T.Type;
  }
  M.ParamsWhy = P.NotListedWhy;
  M.ParamElements = P.Elements;
  return "";
}

std::optional<RecurrentLayers> recurrentLayers(const ModuleValue &M) {
  const LayerSpec *L = lookupLayer(M.Layer);
  if (!L)
    return std::nullopt;
  return tma::recurrentLayers(*L, M.Options);
}

ValueId LayerEvaluator::run(const OpCall &C, const std::vector<ValueId> &Inputs,
                            const std::string &Layer, const std::string &Who) {
  if (!C.Op)
    return FE.unmodelledCall(Layer, E, Inputs,
                             Who + "its op '" + C.Written + "' is not in the op table");
  FunctionEvaluator::CallSite S;
  S.E = E;
  S.Callee = Callee;
  std::vector<ValueId> Values = FE.binder().applyResult(S, C, applyRule(C));
  if (Values.empty())
    return FE.unmodelledCall(Layer, E, Inputs, Who + "forward gave no result");
  return Values.front();
}

ValueId LayerEvaluator::loss(const ModuleValue &M, ValueId Input, ValueId Target) {
  const LayerSpec &L = *lookupLayer(M.Layer); // M is a loss (isLayerKind)
  OpCall C = lossForwardCall(L, M.Options, tensorArgOf(Input, FE.I.value(Input)),
                             tensorArgOf(Target, FE.I.value(Target)),
                             FE.Opts.Version);
  return run(C, {Input, Target}, M.Layer, "");
}

ValueId LayerEvaluator::sequential(const ModuleValue &M,
                                   const std::map<std::string, ValueId> &Params,
                                   const std::string &Prefix, ValueId In,
                                   std::optional<bool> Training,
                                   const std::string &ModeWhy) {
  if (M.Children.empty())
    return FE.unmodelledCall(M.Layer, E, {In},
                             "module '" + M.Name + "' (" + M.Layer +
                                 "): Cannot call forward() on an empty "
                                 "Sequential (LibTorch throws)");
  auto StorageOf = [&](ValueId V) {
    return V >= 0 ? FE.I.value(V).Storage : NoStorage;
  };
  ValueId X = In;
  for (size_t K = 0; K < M.Children.size(); ++K) {
    ValueId Next = forward(M.Children[K], Params, Prefix + std::to_string(K) + ".",
                           X, Training, ModeWhy);
    StorageId Prev = StorageOf(X);
    // Freed once the next layer has run, unless it is the caller's tensor
    // or the next result is a view of it.
    if (X != In && Prev != NoStorage && Prev != StorageOf(In) &&
        StorageOf(Next) != Prev)
      FE.I.dropTemporary(Prev);
    X = Next;
  }
  return X;
}

ValueId LayerEvaluator::forward(const ModuleValue &M,
                                const std::map<std::string, ValueId> &Params,
                                const std::string &Prefix, ValueId In,
                                std::optional<bool> Training,
                                const std::string &ModeWhy) {
  const LayerSpec *L = lookupLayer(M.Layer);
  std::string Who = "module '" + M.Name + "' (" + M.Layer + "): ";
  if (!L)
    return FE.unmodelledCall(M.Layer, E, {In},
                             Who + "this layer's forward is not modelled yet");
  if (L->Kind == LayerKind::Sequential)
    return sequential(M, Params, Prefix, In, Training, ModeWhy);
  LayerForwardInput Given;
  const TensorValue InV = FE.I.value(In);
  Given.Input = tensorArgOf(In, InV);
  Given.Param = [&](const std::string &N) {
    auto P = Params.find(Prefix + N);
    ArgValue A;
    if (P != Params.end())
      A = tensorArgOf(P->second, FE.I.value(P->second));
    A.Type = ArgType::OptTensor;
    return A;
  };
  Given.Training = Training;
  Given.ModeWhy = ModeWhy;
  Given.Version = FE.Opts.Version;
  if (InV.Storage != NoStorage)
    Given.InputStorageBytes = FE.I.trace().Storages.at(InV.Storage).Bytes;
  Given.Who = Who;
  LayerForward F = layerForward(*L, M.Options, Given);
  switch (F.K) {
  case LayerForward::Kind::Call:
    return run(F.Call, {In}, M.Layer, Who);
  case LayerForward::Kind::Outcome:
    return FE.apply(F.Recorded, E, {In}, F.Outcome);
  case LayerForward::Kind::Unknown:
    break;
  }
  return FE.unmodelledCall(M.Layer, E, {In}, Who + F.Why);
}

} // namespace tma
