// --assume and the config's tensor-accountant.Assume in the CLI: reading the
// config's values, and saying when values break what a function states or
// assumes (model/Assume.h binds them).
#pragma once

#include "driver/CheckRunner.h"
#include "model/Assume.h"
#include "model/Trace.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tma {

/// The CheckOptions key that holds values for symbols in a .clang-tidy (or
/// --config): `tensor-accountant.Assume: 'B=16, x.size(1)=2048'`. A check
/// option, not a top-level key, because clang-tidy refuses keys it does not
/// know and the same file configures the clang-tidy module.
inline constexpr const char *AssumeOptionKey = "tensor-accountant.Assume";

/// The config's values (empty when it has none); nullopt with Error set
/// (after where the config came from) when one is not SYM=VALUE.
std::optional<std::vector<AssumeBinding>>
configBindings(const CheckConfig &Config, std::string &Error);

/// When the user's values break a fact or an assumption of T: `no numbers
/// at B=1: it breaks x.size(0) >= 2 (assumed)`; empty otherwise.
std::string bindingViolationText(const FunctionTrace &T);

/// One warning on OS per function whose values break its facts or
/// assumptions (its numbers are then not given).
void warnViolatedBindings(llvm::raw_ostream &OS,
                          const std::vector<FunctionTrace> &Traces);

} // namespace tma
