// An op's identity, as the trace and the model's outcomes carry it.
//
//  1. OpCode is opaque here: one enumerator per entry of
//     model/ops/OpTable.def, spelled out in model/ops/OpCodes.h. Trace.h
//     and everything that only stores or compares codes include this
//     header, so adding an op rebuilds the files that name ops (the rules,
//     OpTable.cpp, the checks that ask for one op), not every file that
//     reads a trace.
//  2. NoOpCode: not a table op (an unmodelled call, a handle copy, a use).
//  3. Checks name ops by identity (OpEvent::Code == OpCode::clone, with
//     OpCodes.h) or ask the table (hasTag), never by spelling.
#pragma once

namespace tma {

enum class OpCode : unsigned short;

/// The code of an event or outcome no table op made.
inline constexpr OpCode NoOpCode = static_cast<OpCode>(0xFFFF);

} // namespace tma
