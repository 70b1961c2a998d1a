#include "checks/CopyThenSliceCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/Decide.h"
#include "model/Units.h"
#include "model/ops/OpTable.h"

#include <algorithm>

namespace tma {

CopyThenSliceCheck::CopyThenSliceCheck(const OptionSource &Opts)
    : TorchCheck(CheckName),
      MinSavedBytes(intOption(Opts, "MinSavedBytes", 0)) {}

void CopyThenSliceCheck::storeOptions(OptionMap &Opts) const {
  Opts["MinSavedBytes"] = std::to_string(MinSavedBytes);
}

static bool isSliceLike(const OpEvent &Op) {
  return Op.Kind == OpKind::View && hasTag(Op.Code, SliceLike);
}

void CopyThenSliceCheck::check(const FunctionTrace &T,
                               std::vector<Diagnostic> &Out) const {
  for (const OpEvent &Copy : T.Ops) {
    if (Copy.Kind != OpKind::Copy || !Copy.AllocatedBytes)
      continue;
    // Copies of the whole input: casts and compactions (to, contiguous,
    // clone, ...), not arithmetic.
    if (!hasTag(Copy.Code, Cast) && !hasTag(Copy.Code, Compacting))
      continue;
    ValueId R = Copy.Result;
    if (std::find(T.Returned.begin(), T.Returned.end(), R) != T.Returned.end())
      continue;
    std::vector<const OpEvent *> Uses = usesOf(T, R);
    if (Uses.empty())
      continue;
    // A named copy may be used by a call the trace does not model.
    if (isNamedOrReturned(T, R) && opaqueStatementAfter(T, Copy.Statement))
      continue;
    // Every use must be a narrowing view. Slicing first copies each slice
    // on its own, so what a slice-first version still allocates is the sum
    // of the slices (two halves save nothing).
    SymSize Needed = 0;
    bool AllNarrow = true;
    for (const OpEvent *U : Uses) {
      auto Shown = T.value(U->Result).logicalBytes();
      auto Whole = T.value(R).logicalBytes();
      if (!isSliceLike(*U) || !Shown || !Whole ||
          sizeLt(*Shown, *Whole) != Tri::True) {
        AllNarrow = false;
        break;
      }
      Needed += *Shown;
    }
    if (!AllNarrow || sizeLt(Needed, *Copy.AllocatedBytes) != Tri::True)
      continue;
    SymSize Saved = *Copy.AllocatedBytes - Needed;
    SymSize Before = *Copy.AllocatedBytes;
    // A copy of the slice made right after (f = e.clone()) is no longer
    // needed once the slice is copied first: the first copy already is one.
    const OpEvent *Recopy = nullptr;
    if (Uses.size() == 1) {
      std::vector<const OpEvent *> SliceUses = usesOf(T, Uses[0]->Result);
      if (SliceUses.size() == 1 && SliceUses[0]->Kind == OpKind::Copy &&
          hasTag(SliceUses[0]->Code, Compacting) &&
          SliceUses[0]->AllocatedBytes) {
        Recopy = SliceUses[0];
        Saved += *Recopy->AllocatedBytes;
        Before += *Recopy->AllocatedBytes;
      }
    }
    if (sizeGt(Saved, 0) != Tri::True || belowMinimum(Saved, MinSavedBytes))
      continue;
    Diagnostic &D = report(
        Out, Copy.NameWhere,
        "%0() copies all %1 but only %2 of the result is used through a "
        "slice; slicing first allocates %2 instead of %3 (saves %4)");
    D.arg(Copy.Name)
        .arg(bytesText(*Copy.AllocatedBytes))
        .arg(bytesText(Needed))
        .arg(bytesText(Before))
        .arg(bytesText(Saved));
    D.Bytes = Saved.constant();
    D.BytesAssumed = assumedBytes(Saved);
    for (const OpEvent *U : Uses)
      D.Notes.push_back({U->NameWhere, "only this %0 of the copy is used",
                         {bytesText(T.value(U->Result).logicalBytes())}});
    if (Recopy)
      D.Notes.push_back({Recopy->NameWhere,
                         "this %0() becomes unnecessary when the slice is "
                         "copied first",
                         {Recopy->Name}});
  }
}

} // namespace tma
