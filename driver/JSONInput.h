// JSON that comes from outside the tool (a language client's messages, a
// verification program's output given to --compare-measured) is parsed
// through here: llvm::json::parse recurses once per nesting level, so a
// message of 200 KB of '[' overflowed the stack and killed the process
// (issue 10, item 10). The nesting is measured first, in one pass without
// recursion, and JSON deeper than the limit is refused with an error that
// says so; what is within it parses as llvm::json::parse would.
#pragma once

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace tma {

/// Far above any real message (LSP and the harness output nest under 10
/// levels), far below what the parser's recursion can take.
constexpr unsigned MaxJSONDepth = 512;

/// How deeply Text nests arrays and objects (brackets inside strings do not
/// count); stops counting past Limit.
unsigned jsonNestingDepth(llvm::StringRef Text, unsigned Limit = MaxJSONDepth);

/// llvm::json::parse, after refusing JSON nested deeper than MaxDepth.
llvm::Expected<llvm::json::Value> parseBoundedJSON(llvm::StringRef Text,
                                                   unsigned MaxDepth = MaxJSONDepth);

} // namespace tma
