// The facts of a report row, decided in one place from the finished trace.
//
// A row is a name bound in the function (a parameter has none): what the
// name holds (a new tensor, a copy, a view), of which base, and what it
// keeps alive, down to the bytes it pins. The table, the JSON report, the
// HTML timeline, the language server's hover, verify's probes and the
// checks all read these facts, so no output re-derives them and no two can
// disagree. Wording (the table's "view of d (transpose)", "all of d: 1 MiB
// for 4 KiB of view") is the outputs' business; the facts are data.
//
// Never a wrong number: a fact the trace does not determine is unknown
// (RowKind::Unknown, StorageOwner::Unknown, an empty optional), never
// guessed.
#pragma once

#include "model/Trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tma {

/// What a name holds.
enum class RowKind {
  Unknown, // no storage is known, or the producing op is not understood
  Alloc,   // new storage from a factory
  Copy,    // new storage computed from other tensors
  View,    // shares the storage of another tensor (or of a temporary)
  Undefined, // no tensor at all: default-constructed or moved from
};
/// "alloc", "copy", "view", "undefined"; "" for Unknown (the JSON report's null).
const char *rowKindName(RowKind K);

/// Who the storage a name keeps alive belongs to.
enum class StorageOwner {
  Unknown, // the storage is not known
  Caller,  // not allocated by this function (a parameter's, a member's)
  Unnamed, // this function's, never bound to a name
  Named,   // this function's, first bound to RowFacts::OwnerName
  Nothing, // an undefined tensor holds no storage
};

struct RowFacts {
  const Binding *B = nullptr;
  const TensorValue *Value = nullptr;
  RowKind Kind = RowKind::Unknown;
  /// The op that produced the value, as written; empty when none did.
  std::string Op;
  /// A view's base: the earliest named tensor sharing the storage (the
  /// binding's BaseName). Empty for new storage and for a view of a
  /// temporary.
  std::string Base;
  /// The storage the value lives on; null when unknown.
  const StorageInfo *Storage = nullptr;
  /// The row's storage bytes: those of its storage, unknown when the kind
  /// is (a storage of unknown origin is not claimed as the name's).
  std::optional<SymSize> StorageBytes;

  // What the name keeps alive: its whole storage, whoever owns it.
  StorageOwner Owner = StorageOwner::Unknown;
  std::string OwnerName; // Owner == Named
  /// The bytes the name holds (its storage's) and those it shows (its own
  /// elements); nullopt when unknown.
  std::optional<SymSize> HeldBytes;
  std::optional<SymSize> ShownBytes;
  /// Held minus shown, when the name shows less than it holds of a storage
  /// this function allocated (pinnedBytes); nullopt otherwise.
  std::optional<SymSize> PinnedBytes;

  /// The producing op's note (why it copies, why it returns self).
  std::string Note;
};

/// One row per binding that is not a parameter, in binding order. The
/// pointers are into T and live as long as it does.
std::vector<RowFacts> rowFacts(const FunctionTrace &T);

/// The bytes value V keeps alive beyond what it shows: its storage's bytes
/// minus its own, when the storage is this function's (not the caller's),
/// both are known, and V shows less than all of it. nullopt otherwise.
std::optional<SymSize> pinnedBytes(const FunctionTrace &T, ValueId V);

} // namespace tma
