// Values for symbols (`--assume B=16`, the config's tensor-accountant.Assume):
// parsing them, and binding them in the functions that have those symbols.
//
// Design:
//  1. A binding names a symbol as the report writes it: the C++ over the
//     parameters (`x.size(1)`, `n_heads`, `x.numel()`, `x.element_size()`)
//     or the code's name the table prints (`B` for `auto B = x.size(0)`).
//     The name is parsed with the report's own grammar (parseSymSize), so
//     `x.size( 1 )` is `x.size(1)`; anything that is not one symbol, and a
//     value that is not a non-negative int64, is refused with a message.
//  2. Bindings never change a formula (ShapeEnv design, item 5): they give
//     numbers next to it. Each function binds the ones it has a symbol for;
//     a binding no function has is the caller's to warn about.
//  3. Values that break a fact the code states or an assumption an answer
//     rests on give no numbers for that function (ShapeEnv::bindingsUsable):
//     the caller says which, never a number that does not hold.
#pragma once

#include "model/Trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tma {

struct AssumeBinding {
  std::string Symbol; ///< as the user wrote it, whitespace removed
  int64_t Value = 0;
  std::string Text;   ///< `B=16`, for messages
};

/// One `SYM=VALUE`. nullopt with Error set (one line, no prefix) on bad input.
std::optional<AssumeBinding> parseAssumeBinding(std::string_view Text,
                                                std::string &Error);
/// Several, separated by `,` or `;` (`B=16, x.size(1)=2048`); empty items
/// are skipped.
std::optional<std::vector<AssumeBinding>> parseAssumeList(std::string_view Text,
                                                          std::string &Error);

/// Binds each of Bindings, in order (a later one for the same symbol wins),
/// in every trace whose ShapeEnv has its symbol. Returns for each binding
/// the number of functions it bound a symbol in.
std::vector<size_t> applyBindings(std::vector<FunctionTrace> &Traces,
                                  const std::vector<AssumeBinding> &Bindings);

} // namespace tma
