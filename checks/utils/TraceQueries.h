// Questions checks ask of a trace: who uses a value, where a layout was
// broken, whether a storage is still used. Shared here so each check stays
// a few lines of policy.
#pragma once

#include "model/Trace.h"

#include <cstdint>
#include <optional>
#include <string>

#include <vector>

namespace tma {

/// Ops that take V as an input, in trace order.
std::vector<const OpEvent *> usesOf(const FunctionTrace &T, ValueId V);

/// The first use of V that needs V's memory laid out as contiguous() lays
/// it out: an op that raises on other strides (the table's FailsOnStrides:
/// view, view_as), a `V.data_ptr()`, or a call the analysis does not
/// follow that takes V and returns no tensor (a kernel launcher, a custom
/// op writing an output): those may read V's memory as a flat array. Null when no use needs it.
const OpEvent *contiguityNeededBy(const FunctionTrace &T, ValueId V);

/// The first use of Copy, a contiguous copy of Original, that would copy
/// Original itself were it given Original instead: a matmul or linear
/// (a torch::nn::Linear's forward too) whose fold or batch reshape of
/// Original is no view (model/Ops.h, matmulCopiesOperand). Removing the
/// contiguous() there saves nothing. Null when no use would.
const OpEvent *copiesAnywayBy(const FunctionTrace &T, ValueId Copy,
                              ValueId Original);

/// The sizes V's non-contiguity rests on: each size the analysis assumed
/// is not 1 (`query.size(1) >= 2`, the 0/1 specialisation) to find V not
/// contiguous, and at which, were it 1, V would be contiguous after all
/// (`query.size(1)`). Empty when V is not contiguous whatever its sizes,
/// or its layout is unknown.
std::vector<std::string> sizesWhoseOneMakesContiguous(const FunctionTrace &T,
                                                      ValueId V);

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

/// The op that made V when the op table tags it Permuting (transpose,
/// permute, t, mT, movedim and their aliases); null otherwise.
/// Where shapes are unknown this is the pattern that makes a later
/// contiguous() or reshape() copy.
const OpEvent *permutingProducer(const FunctionTrace &T, ValueId V);

/// Whether a check with minimum Min skips this byte count: one shown to be
/// below Min (a number below it, or a formula the facts keep below it). An
/// unknown count, or a formula that may reach Min (`4·B·T·C B` on sizes
/// from the caller), is not skipped: the check fires and says "?" or the
/// formula.
bool belowMinimum(const std::optional<SymSize> &Bytes, int64_t Min);

/// A byte count for a message: formatBytes, and, when the user's values
/// (`--assume`) bind a formula, its number after it:
/// `x.size(0)·8192 B (128 MiB at x.size(0)=16384)`. The decisions' ShapeEnv
/// (model/Decide.h) holds the values.
std::string bytesText(const SymSize &Bytes);
std::string bytesText(const std::optional<SymSize> &Bytes);
/// A formula's number under the user's values; nullopt when it is a number
/// already, unknown, or not bound (or the values break the function's facts
/// or assumptions).
std::optional<int64_t> assumedBytes(const std::optional<SymSize> &Bytes);

/// Whether an op's result came from a fresh allocation (Alloc or Copy).
bool isFresh(const OpEvent *Op);

/// Whether a span can carry a fix-it: its file offsets are known and it is
/// not inside a macro expansion.
bool isRewritable(const SourceSpan &S);

/// Whether Op was written as a member call (`x.reshape(...)`), not as a free
/// function (`torch::reshape(x, ...)`): the receiver ends before the name.
/// Fix-its that rewrite the callee name or drop `.clone()` need this.
bool isMemberCall(const OpEvent &Op);

/// Whether a statement after Statement (by index) has no ops in the trace:
/// a call the analysis does not model (`consume(a)`, `v.push_back(a)`,
/// `std::cout << a`) may use any tensor there without the trace showing it.
/// Checks that claim "nothing uses X afterwards" stay silent when true.
bool opaqueStatementAfter(const FunctionTrace &T, unsigned Statement);

/// Whether V's layout is known and not contiguous.
bool knownNonContiguous(const FunctionTrace &T, ValueId V);

} // namespace tma
