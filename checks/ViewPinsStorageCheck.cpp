// torch-view-pins-storage: a view that keeps more storage alive, for
// longer, than the program otherwise would.
//
// Judged with C++ lifetimes (Binding::HeldUntil, HeldToScopeEnd), not
// last uses: a view pins its base's storage only where the base itself
// has stopped holding it. That is when
//  - the view is returned and the base is a local that is not (the caller
//    gets all of the storage for a slice of it), named or not
//    (`return big.index({0});`);
//  - the view's name still holds the storage after the base's name went
//    out of scope, or after the base was assigned another tensor, and the
//    view is still used then.
// A view whose base lives as long as it does pins nothing: cloning it
// would release nothing.
#include "checks/ViewPinsStorageCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/RowFacts.h"
#include "model/Units.h"
#include "model/ops/OpTable.h"

#include <algorithm>
#include <set>

namespace tma {

ViewPinsStorageCheck::ViewPinsStorageCheck(const OptionSource &Opts)
    : TorchCheck(CheckName),
      MinPinnedBytes(intOption(Opts, "MinPinnedBytes", 0)) {}

void ViewPinsStorageCheck::storeOptions(OptionMap &Opts) const {
  Opts["MinPinnedBytes"] = std::to_string(MinPinnedBytes);
}

// Values derived from V through views (V itself included).
static std::set<ValueId> viewFamily(const FunctionTrace &T, ValueId V) {
  std::set<ValueId> Family = {V};
  for (const OpEvent &Op : T.Ops)
    if ((Op.Kind == OpKind::View || Op.Kind == OpKind::Self) &&
        !Op.Inputs.empty() && Family.count(Op.Inputs[0]))
      Family.insert(Op.Result);
  return Family;
}

/// The local name that owns storage S: the first binding holding it.
static const Binding *ownerOf(const FunctionTrace &T, StorageId S) {
  for (const Binding &B : T.Bindings)
    if (B.HoldsValue && !B.IsParameter && B.Value >= 0 &&
        T.value(B.Value).Storage == S && B.BaseName.empty())
      return &B;
  return nullptr;
}

static bool returnsStorage(const FunctionTrace &T, StorageId S,
                           const std::set<ValueId> &Except) {
  return std::any_of(T.Returned.begin(), T.Returned.end(), [&](ValueId V) {
    return V >= 0 && T.value(V).Storage == S && !Except.count(V);
  });
}

void ViewPinsStorageCheck::check(const FunctionTrace &T,
                                 std::vector<Diagnostic> &Out) const {
  // The bytes a view pins (model/RowFacts.h), when worth a warning.
  auto WorthIt = [&](const std::optional<SymSize> &Pinned) {
    return Pinned && !belowMinimum(Pinned, MinPinnedBytes);
  };
  auto Report = [&](const SourceSpan &Where, const std::string &Format,
                    const std::string &Name, const StorageInfo &S,
                    const Binding &Owner, ValueId V, const SymSize &Bytes,
                    const std::string &Why) {
    Diagnostic &D = report(Out, Where, Format);
    if (!Name.empty())
      D.arg(Name);
    D.arg(bytesText(*S.Bytes))
        .arg(Owner.Name)
        .arg(bytesText(*T.value(V).logicalBytes()))
        .arg(Why)
        .arg(bytesText(Bytes));
    D.Bytes = Bytes.constant();
    D.BytesAssumed = assumedBytes(Bytes);
    if (S.Producer != NoOp)
      D.Notes.push_back({T.Ops[S.Producer].NameWhere,
                         "'%0' was allocated here (%1)",
                         {Owner.Name, bytesText(*S.Bytes)}});
  };

  std::set<ValueId> ReportedReturns;
  for (const RowFacts &Row : rowFacts(T)) {
    const Binding &B = *Row.B;
    if (Row.Base.empty() || !B.HoldsValue || !WorthIt(Row.PinnedBytes))
      continue;
    const StorageInfo *S = Row.Storage;
    SymSize Bytes = *Row.PinnedBytes;
    const Binding *Owner = ownerOf(T, S->Id);
    if (!Owner || Owner->IsStatic)
      continue;
    std::set<ValueId> Family = viewFamily(T, B.Value);
    bool Returned = std::any_of(T.Returned.begin(), T.Returned.end(),
                                [&](ValueId V) { return Family.count(V) > 0; });
    if (Returned) {
      // When the base leaves the function too, the caller holds it anyway.
      if (returnsStorage(T, S->Id, Family))
        continue;
      for (ValueId V : T.Returned)
        if (Family.count(V))
          ReportedReturns.insert(V);
      Report(B.NameWhere,
             "'%0' keeps all %1 of '%2' alive for %3 of view%4; clone() it to "
             "release %5",
             B.Name, *S, *Owner, B.Value, Bytes, " and returns it");
      continue;
    }
    // The owner stopped holding the storage while this name still does.
    if (!Owner->HeldUntil || !B.HeldUntil || *Owner->HeldUntil >= *B.HeldUntil)
      continue;
    bool UsedAfter = false;
    for (const OpEvent &Op : T.Ops) {
      if (Op.Statement <= *Owner->HeldUntil || Op.Statement > *B.HeldUntil)
        continue;
      for (ValueId In : Op.Inputs)
        if (In >= 0 && Family.count(In) &&
            // Compacting the view is the cure, not the disease.
            !(Op.Kind == OpKind::Copy && hasTag(Op.Code, Compacting)))
          UsedAfter = true;
    }
    if (!UsedAfter)
      continue;
    std::string Why = Owner->HeldToScopeEnd
                          ? " after '" + Owner->Name + "' goes out of scope"
                          : " after '" + Owner->Name + "' is reassigned";
    Report(B.NameWhere,
           "'%0' keeps all %1 of '%2' alive for %3 of view%4; clone() it to "
           "release %5",
           B.Name, *S, *Owner, B.Value, Bytes, Why);
  }
  // Views returned without a name: `return big.index({0});`.
  for (ValueId V : T.Returned) {
    if (V < 0 || ReportedReturns.count(V) || !bindingsOf(T, V).empty())
      continue;
    const OpEvent *Op = T.producer(V);
    if (!Op || Op->Kind != OpKind::View)
      continue;
    auto Bytes = pinnedBytes(T, V);
    if (!WorthIt(Bytes))
      continue;
    const StorageInfo *S = T.storageOf(V);
    const Binding *Owner = ownerOf(T, S->Id);
    if (!Owner || Owner->IsStatic || returnsStorage(T, S->Id, {V}))
      continue;
    Report(Op->NameWhere,
           "the returned view keeps all %0 of '%1' alive for %2 of view%3; "
           "clone() it to release %4",
           "", *S, *Owner, V, *Bytes, "");
  }
}

} // namespace tma
