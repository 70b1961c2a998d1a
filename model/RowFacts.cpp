// Row facts (RowFacts.h): each decided here once, from the finished trace.
#include "model/RowFacts.h"

#include "model/Decide.h"

namespace tma {

const char *rowKindName(RowKind K) {
  switch (K) {
  case RowKind::Alloc: return "alloc";
  case RowKind::Copy: return "copy";
  case RowKind::View: return "view";
  case RowKind::Undefined: return "undefined";
  case RowKind::Unknown: break;
  }
  return "";
}

std::optional<SymSize> pinnedBytes(const FunctionTrace &T, ValueId V) {
  const StorageInfo *S = T.storageOf(V);
  std::optional<SymSize> Shown = T.value(V).logicalBytes();
  // Pinned only when the view shows decidably less than its storage.
  if (!S || S->External || !S->Bytes || !Shown ||
      sizeLt(*Shown, *S->Bytes) != Tri::True)
    return std::nullopt;
  return *S->Bytes - *Shown;
}

namespace {

/// The kind the producing op gives the value (a name with a base is a view
/// whatever made it: the storage was not new at the binding).
RowKind kindOf(const Binding &B, const OpEvent *Op) {
  if (!B.BaseName.empty())
    return RowKind::View;
  if (!Op)
    return RowKind::Unknown;
  switch (Op->Kind) {
  case OpKind::Alloc: return RowKind::Alloc;
  case OpKind::Copy: return RowKind::Copy;
  case OpKind::View:
  case OpKind::Self:
  case OpKind::InPlace: return RowKind::View;
  default: return RowKind::Unknown;
  }
}

} // namespace

std::vector<RowFacts> rowFacts(const FunctionTrace &T) {
  std::vector<RowFacts> Rows;
  for (const Binding &B : T.Bindings) {
    if (B.IsParameter)
      continue;
    RowFacts R;
    R.B = &B;
    R.Value = &T.value(B.Value);
    if (const std::string &How = T.Values.at(B.Value).UndefinedBy; !How.empty()) {
      R.Kind = RowKind::Undefined;
      R.Owner = StorageOwner::Nothing;
      R.Note = How;
      Rows.push_back(std::move(R));
      continue;
    }
    const OpEvent *Op = T.producer(B.Value);
    // An op that returns its input itself (`zeros(...).add_(1)`,
    // `linear(x).unsqueeze_(1)`, a contiguous tensor's contiguous()) on a
    // storage no name holds yet: the name holds the tensor the storage's
    // op made, so that op gives the row its kind.
    if (Op && (Op->Kind == OpKind::Self || Op->Kind == OpKind::InPlace) &&
        B.BaseName.empty())
      if (const StorageInfo *S = T.storageOf(B.Value);
          S && !S->External && S->Producer != NoOp)
        Op = &T.Ops.at(S->Producer);
    R.Op = Op ? Op->Name : "";
    R.Note = Op ? Op->Note : "";
    R.Base = B.BaseName;
    R.Storage = T.storageOf(B.Value);
    // Without a known storage, "view" cannot say of what, and an empty base
    // would claim new storage: both are unknown.
    R.Kind = R.Storage ? kindOf(B, Op) : RowKind::Unknown;
    if (R.Kind != RowKind::Unknown)
      R.StorageBytes = R.Storage->Bytes;
    R.ShownBytes = R.Value->logicalBytes();
    if (const StorageInfo *S = R.Storage) {
      R.HeldBytes = S->Bytes;
      R.Owner = S->External          ? StorageOwner::Caller
                : S->FirstName.empty() ? StorageOwner::Unnamed
                                       : StorageOwner::Named;
      if (R.Owner == StorageOwner::Named)
        R.OwnerName = S->FirstName;
      R.PinnedBytes = pinnedBytes(T, B.Value);
    }
    Rows.push_back(std::move(R));
  }
  return Rows;
}

} // namespace tma
