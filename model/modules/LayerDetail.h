// Helpers shared by the layer table's files (model/modules/*.cpp): reading
// options by name, and the per-entry parameters() and forward() functions
// the table (LayerTable.cpp) points to. Not part of the model's interface.
#pragma once

#include "model/modules/LayerTable.h"

namespace tma {
namespace layers {

/// The option called N, or null.
const ArgValue *option(const NamedArgs &O, const char *N);
std::optional<bool> flagOption(const NamedArgs &O, const char *N);
std::optional<SymSize> sizeOption(const NamedArgs &O, const char *N);
std::optional<int64_t> intOption(const NamedArgs &O, const char *N);
std::optional<double> numberOption(const NamedArgs &O, const char *N);
/// An optional option that is not set (c10::nullopt, the default).
bool unset(const NamedArgs &O, const char *N);

// parameters() per entry (LayerParameters.cpp).
LayerParameters noParameters(const LayerSpec &, const NamedArgs &);
LayerParameters linearParameters(const LayerSpec &, const NamedArgs &);
LayerParameters convParameters(const LayerSpec &, const NamedArgs &);
LayerParameters convTransposeParameters(const LayerSpec &, const NamedArgs &);
LayerParameters batchNormParameters(const LayerSpec &, const NamedArgs &);
LayerParameters layerNormParameters(const LayerSpec &, const NamedArgs &);
LayerParameters groupNormParameters(const LayerSpec &, const NamedArgs &);
LayerParameters embeddingParameters(const LayerSpec &, const NamedArgs &);
LayerParameters hardtanhParameters(const LayerSpec &, const NamedArgs &);
LayerParameters recurrentParameters(const LayerSpec &, const NamedArgs &);
LayerParameters cellParameters(const LayerSpec &, const NamedArgs &);

// forward() per entry (LayerForward.cpp).
using ForwardFn = LayerForward(const LayerSpec &, const NamedArgs &,
                               const LayerForwardInput &);
ForwardFn identityForward, linearForward, convForward, convTransposeForward,
    batchNormForward, layerNormForward, groupNormForward, embeddingForward,
    dropoutForward, activationForward, geluForward, softmaxForward,
    maxPoolForward, avgPoolForward, adaptiveAvgPoolForward, flattenForward,
    unflattenForward, tupleForward, noForward;

} // namespace layers
} // namespace tma
