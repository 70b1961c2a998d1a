// Running a built-in torch::nn layer found in the source (Layers.cpp):
// the layer table (model/modules/LayerTable.h) says what its parameters
// are and which op its forward calls; this runs that op through the
// evaluator's trace. A small class of its own, so the evaluator keeps its
// member functions to the evaluation itself.
#pragma once

#include "frontend/FunctionEvaluator.h"
#include "model/modules/LayerTable.h"

namespace tma {

using ModuleValue = FunctionEvaluator::ModuleValue;

/// Fills M.ParamShapes (and Buffers, ParamTypes, ParamsWhy,
/// ParamElements) from the table's parameters() of M's options; empty
/// on success, else why they are not derived.
std::string layerParameters(ModuleValue &M);

/// An LSTM's or a GRU's layers from M's options; nullopt for another
/// layer, or options not derived.
std::optional<RecurrentLayers> recurrentLayers(const ModuleValue &M);

/// A layer's forward at call E (Callee: forward or operator()).
class LayerEvaluator {
public:
  LayerEvaluator(FunctionEvaluator &FE, const clang::Expr *E,
                 const clang::FunctionDecl *Callee)
      : FE(FE), E(E), Callee(Callee) {}
  /// The forward of layer M on In, its parameters Params under Prefix (""
  /// or a Sequential's "0."), in the training mode given (nullopt: not
  /// known, ModeWhy says why); the value it returns, unknown with the
  /// reason when the layer's op cannot answer.
  ValueId forward(const ModuleValue &M, const std::map<std::string, ValueId> &Params,
                  const std::string &Prefix, ValueId In,
                  std::optional<bool> Training, const std::string &ModeWhy);
  /// The forward of a loss module M (MSELoss, CrossEntropyLoss, ...) on
  /// Input and Target: its functional op with M's options.
  ValueId loss(const ModuleValue &M, ValueId Input, ValueId Target);

private:
  FunctionEvaluator &FE;
  const clang::Expr *E;
  const clang::FunctionDecl *Callee;
  ValueId sequential(const ModuleValue &M, const std::map<std::string, ValueId> &Params,
                     const std::string &Prefix, ValueId In,
                     std::optional<bool> Training, const std::string &ModeWhy);
  /// Runs a bound call of the table op; Who prefixes its reasons.
  ValueId run(const OpCall &C, const std::vector<ValueId> &Inputs,
              const std::string &Layer, const std::string &Who);
};

} // namespace tma
