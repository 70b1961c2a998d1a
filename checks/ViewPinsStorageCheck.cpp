#include "checks/ViewPinsStorageCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/Units.h"

#include <algorithm>
#include <set>

namespace tma {

ViewPinsStorageCheck::ViewPinsStorageCheck(const OptionSource &Opts)
    : TorchCheck("torch-view-pins-storage"),
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

void ViewPinsStorageCheck::check(const FunctionTrace &T,
                                 std::vector<Diagnostic> &Out) const {
  for (const Binding &B : T.Bindings) {
    if (B.BaseName.empty() || B.IsParameter)
      continue;
    const StorageInfo *S = T.storageOf(B.Value);
    auto Shown = T.value(B.Value).logicalBytes();
    if (!S || S->External || !S->Bytes || !Shown || *Shown >= *S->Bytes)
      continue;
    int64_t Pinned = *S->Bytes - *Shown;
    if (Pinned < MinPinnedBytes)
      continue;
    std::set<ValueId> Family = viewFamily(T, B.Value);
    // The base's last use: any op reading another value on this storage.
    int BaseLast = -1, ViewLast = -1;
    bool ViewUsedOtherThanCompaction = false;
    for (const OpEvent &Op : T.Ops)
      for (ValueId In : Op.Inputs) {
        if (In < 0 || T.value(In).Storage != S->Id)
          continue;
        if (Family.count(In)) {
          if (Op.Statement <= B.Statement)
            continue;
          ViewLast = std::max(ViewLast, static_cast<int>(Op.Statement));
          // A clone/contiguous copy of the view is the cure, not the disease.
          if (!(Op.Kind == OpKind::Copy &&
                (Op.Name == "clone" || Op.Name == "contiguous")))
            ViewUsedOtherThanCompaction = true;
        } else {
          BaseLast = std::max(BaseLast, static_cast<int>(Op.Statement));
        }
      }
    bool Returned = std::any_of(T.Returned.begin(), T.Returned.end(),
                                [&](ValueId V) { return Family.count(V) > 0; });
    // When the base itself leaves the function too, the view pins nothing
    // the caller does not already hold.
    bool BaseReturned = std::any_of(
        T.Returned.begin(), T.Returned.end(), [&](ValueId V) {
          return V >= 0 && T.value(V).Storage == S->Id && !Family.count(V);
        });
    if (BaseReturned)
      continue;
    // Without a return, "outlives" compares last uses; a statement the
    // trace cannot see into may use the base later, so stay silent then.
    bool Outlives = Returned || (ViewUsedOtherThanCompaction && ViewLast > BaseLast &&
                                 !opaqueStatementAfter(T, B.Statement));
    if (!Outlives)
      continue;
    Diagnostic &D = report(Out, B.NameWhere,
                           "'%0' keeps all %1 of '%2' alive for %3 of view%4; "
                           "clone() it to release %5");
    D.arg(B.Name)
        .arg(formatBytes(*S->Bytes))
        .arg(B.BaseName)
        .arg(formatBytes(*Shown))
        .arg(Returned ? " and returns it" : "")
        .arg(formatBytes(Pinned));
    D.Bytes = Pinned;
    const OpEvent *Base = S->Producer != NoOp ? &T.Ops[S->Producer] : nullptr;
    if (Base)
      D.Notes.push_back({Base->NameWhere, "'%0' was allocated here (%1)",
                         {B.BaseName, formatBytes(*S->Bytes)}});
  }
}

} // namespace tma
