// Questions checks ask of a trace: who uses a value, where a layout was
// broken, whether a storage is still used. Shared here so each check stays
// a few lines of policy.
#pragma once

#include "model/Trace.h"

#include <vector>

namespace tma {

/// Ops that take V as an input, in trace order.
std::vector<const OpEvent *> usesOf(const FunctionTrace &T, ValueId V);

/// Bindings (rows) of V.
std::vector<const Binding *> bindingsOf(const FunctionTrace &T, ValueId V);

/// Whether V is bound to a name or returned (so not a temporary).
bool isNamedOrReturned(const FunctionTrace &T, ValueId V);

/// The last statement index in which any value on storage S is an input to
/// an op or returned; -1 if never.
int lastUseOfStorage(const FunctionTrace &T, StorageId S);

/// Following V's producers back through view ops, the view that turned a
/// contiguous tensor into a non-contiguous one (the transpose before a
/// copying contiguous()); null when there is none or layouts are unknown.
const OpEvent *layoutBreaker(const FunctionTrace &T, ValueId V);

/// Whether an op's result came from a fresh allocation (Alloc or Copy).
bool isFresh(const OpEvent *Op);

} // namespace tma
