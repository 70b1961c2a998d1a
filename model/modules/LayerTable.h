// The torch::nn layer table: what the analysis knows about each built-in
// layer, as data and small functions, with no Clang (issue 34).
//
// Design:
//  1. One LayerSpec per torch::nn holder (LayerTable.cpp): its name
//     ("Conv2d"), its kind (a layer, a loss, a recurrent layer, the
//     Sequential container), its options as LibTorch's options class
//     spells them with their TORCH_ARG defaults, the op its forward runs,
//     the rank of a batch its documentation gives, and two functions.
//  2. parameters(options) (LayerParameters.cpp): the parameters and
//     buffers reset() registers, in registration order, with shapes as
//     functions of the options and their dtype; or why they are not derived.
//  3. forward(options, input, parameters, mode) (LayerForward.cpp): the op
//     call the layer's forward() makes (which op, which option feeds which
//     schema argument), a ready outcome (a throw the module makes before
//     the op, the input itself), or why it is not modelled. The caller runs
//     the call through the op table's rule, so no shape logic is repeated.
//  4. The frontend reads options from the parsed headers (their defaults
//     too); the defaults listed here are what tests build options from
//     without Clang. Layer and op names appear as strings only here.
#pragma once

#include "model/ops/OpTable.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tma {

enum class LayerKind {
  Layer,      // forward(input) -> one tensor
  Loss,       // forward(input, target) -> the loss
  Recurrent,  // forward(input[, hx]) -> (output, h_n[, c_n])
  RecurrentCell, // forward(input[, hx]) -> (h, c) or h: one step
  Sequential, // its layers run in order (run by the frontend)
};

/// One option of a layer's options class: its name as the TORCH_ARG
/// spells it and its default (Required: a constructor argument).
struct LayerOption {
  enum class Kind { Required, Int, IntArray, Bool, Number, Str, None };
  std::string Name;
  Kind K = Kind::Required;
  double Value = 0;   // Int, IntArray (each element), Bool, Number
  std::string Text;   // Str ("zeros", "none", "mean")
};

struct LayerSpec;

/// A parameter or buffer reset() registers.
struct LayerTensor {
  std::string Name;
  Shape Sizes;
  DType Type = DType::Float32;
  bool Buffer = false;
};

/// What parameters() and buffers() hold, as the options make them.
struct LayerParameters {
  /// Non-empty: not derived (the layer is not followed), and why.
  std::string Why;
  /// In registration order.
  std::vector<LayerTensor> Tensors;
  /// Non-empty: derived (forward is followed) but not listed (an LSTM
  /// whose num_layers is a symbol); Tensors is then empty.
  std::string NotListedWhy;
  /// With NotListedWhy: their element count in all, when a formula.
  std::optional<SymSize> Elements;
};

/// What forward() is given besides the options.
struct LayerForwardInput {
  ArgValue Input; ///< Kind Tensor
  /// The layer's parameter or buffer called Name as an OptTensor argument
  /// (absent when the layer has none of that name).
  std::function<ArgValue(const std::string &Name)> Param;
  /// nullopt: the mode is not known (ModeWhy says why).
  std::optional<bool> Training;
  std::string ModeWhy;
  TorchVersion Version;
  /// The input's storage bytes, when known (as the binder gives them).
  std::optional<SymSize> InputStorageBytes;
  /// "module 'fc' (Linear): ", put before the reasons of outcomes made here.
  std::string Who;
};

/// What forward() does, as far as the table knows.
struct LayerForward {
  enum class Kind { Call, Outcome, Unknown };
  Kind K = Kind::Unknown;
  OpCall Call;          ///< Call: run through the op's rule
  OpOutcome Outcome;    ///< Outcome: recorded as op Recorded
  std::string Recorded; ///< the name the trace records for Outcome
  std::string Why;      ///< Unknown: why (without Who)
};

struct LayerSpec {
  std::string Name; ///< the holder: "Conv2d"
  LayerKind Kind = LayerKind::Layer;
  /// The options class's options (constructor arguments first, in order).
  std::vector<LayerOption> Options;
  /// ExpandingArray<D>'s D of the options (Conv2d: 2), 0 if none.
  int Dims = 0;
  /// The op forward() calls ("conv2d"); empty for Sequential.
  std::string Op;
  /// The rank of a batch the documentation gives, when it is one rank.
  std::optional<int64_t> BatchedRank;
  /// Recurrent and RecurrentCell: gates per layer (LSTM 4, GRU 3), and
  /// whether it has c_n.
  unsigned Gates = 0;
  bool CellState = false;
  std::function<LayerParameters(const LayerSpec &, const NamedArgs &)> Parameters;
  std::function<LayerForward(const LayerSpec &, const NamedArgs &,
                             const LayerForwardInput &)>
      Forward;
};

/// The entry of a holder's name ("Linear"), or null when not modelled.
const LayerSpec *lookupLayer(std::string_view Name);
/// Every entry, in table order.
const std::vector<LayerSpec> &allLayers();

/// Whether Name is a modelled layer of that kind.
bool isLayerKind(std::string_view Name, LayerKind K);
/// The rank of a batch the layer's documentation gives (Linear: 2, Conv2d:
/// 4), when the layer is modelled and that is one rank.
std::optional<int64_t> batchedInputRank(std::string_view Name);

/// The options a holder constructed with these constructor arguments
/// (in order) and setters has, the rest at the table's defaults: the
/// options object LibTorch builds, for tests without Clang.
NamedArgs layerOptions(const LayerSpec &L, const std::vector<ArgValue> &Positional,
                       const std::map<std::string, ArgValue> &Set = {});

/// The parameters and buffers of L with options O.
LayerParameters layerParameters(const LayerSpec &L, const NamedArgs &O);

/// The forward of L with options O (not for Sequential or a loss).
LayerForward layerForward(const LayerSpec &L, const NamedArgs &O,
                          const LayerForwardInput &In);

/// A loss module's forward(input, target): its functional op with the
/// module's options as the options object.
OpCall lossForwardCall(const LayerSpec &L, const NamedArgs &O,
                       const ArgValue &Input, const ArgValue &Target,
                       const TorchVersion &Version);

/// A recurrent layer's layers from its options; nullopt for another
/// layer, or options not derived.
std::optional<RecurrentLayers> recurrentLayers(const LayerSpec &L,
                                               const NamedArgs &O);
/// How many tensors a recurrent layer's forward returns (LSTM 3, GRU 2).
size_t recurrentOutputs(const LayerSpec &L);
/// A recurrent cell's sizes from its options; nullopt for another layer,
/// or options not derived.
std::optional<RecurrentCell> recurrentCell(const LayerSpec &L, const NamedArgs &O);

// Argument values as a bound call holds them (shared with the tests).
ArgValue tensorArgOf(ValueId Id, const TensorValue &V);
ArgValue intListArg(const Shape &L);
ArgValue intArgOf(int64_t V);
ArgValue boolArgOf(bool V);
ArgValue numberArgOf(double V);

} // namespace tma
