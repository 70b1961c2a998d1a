// The opcodes: one per entry of model/ops/OpTable.def (see OpCode.h, which
// declares OpCode opaque). Include this only where an op is named
// (OpCode::transpose): it changes whenever an op is added.
#pragma once

#include "model/ops/OpCode.h"

namespace tma {

enum class OpCode : unsigned short {
#define TMA_OP(Id, Family, Result, Tags, ...) Id,
#include "model/ops/OpTable.def"
  NumOps
};

static_assert(static_cast<unsigned>(OpCode::NumOps) <
                  static_cast<unsigned>(NoOpCode),
              "NoOpCode must not be a table op");

} // namespace tma
