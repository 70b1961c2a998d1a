// The opcodes: one per entry of model/ops/OpTable.def. A trace event made
// by a table op carries its opcode (OpEvent::Code), so checks name ops by
// identity, not by spelling. NumOps: not a table op (an unmodelled call, a
// handle copy, a use).
#pragma once

namespace tma {

enum class OpCode : unsigned short {
#define TMA_OP(Id, Family, Result, Tags, ...) Id,
#include "model/ops/OpTable.def"
  NumOps
};

} // namespace tma
