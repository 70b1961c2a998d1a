#include "checks/MemoryBudgetCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/Decide.h"
#include "model/Units.h"

#include <algorithm>

namespace tma {

MemoryBudgetCheck::MemoryBudgetCheck(const OptionSource &Opts)
    : TorchCheck(CheckName),
      MaxPeakBytes(intOption(Opts, "MaxPeakBytes", int64_t(8) << 30)),
      MaxNotes(intOption(Opts, "MaxNotes", 3)) {}

void MemoryBudgetCheck::storeOptions(OptionMap &Opts) const {
  Opts["MaxPeakBytes"] = std::to_string(MaxPeakBytes);
  Opts["MaxNotes"] = std::to_string(MaxNotes);
}

void MemoryBudgetCheck::check(const FunctionTrace &T,
                              std::vector<Diagnostic> &Out) const {
  // Only a peak shown to exceed the budget: a formula the facts do not
  // settle is no finding, unless the user's values (--assume) bind all of
  // it: then its number is compared.
  const auto &Peak = T.Summary.PeakLiveBytes;
  if (!Peak)
    return;
  std::optional<int64_t> Assumed = assumedBytes(Peak);
  Tri Over = Assumed ? triOf(*Assumed > MaxPeakBytes)
                     : sizeGt(*Peak, MaxPeakBytes);
  if (Over != Tri::True)
    return;
  SourceSpan Where = T.Where;
  Where.EndOffset = Where.BeginOffset;
  Diagnostic &D = report(Out, Where,
                         "peak live tensor storage in '%0' is %1, over the "
                         "budget of %2 (MaxPeakBytes)");
  D.arg(T.Name).arg(bytesText(*Peak)).arg(formatBytes(MaxPeakBytes));
  D.Bytes = knownBytes(Peak);
  D.BytesAssumed = Assumed;
  std::vector<const StorageInfo *> Live;
  for (StorageId S : T.Summary.PeakLive)
    if (T.Storages[S].Bytes && T.Storages[S].Producer != NoOp)
      Live.push_back(&T.Storages[S]);
  // Largest first; formulas after the numbers, in trace order (a sort
  // needs an order the facts may not give).
  std::stable_sort(Live.begin(), Live.end(), [](const StorageInfo *A,
                                                const StorageInfo *B) {
    auto CA = A->Bytes->constant(), CB = B->Bytes->constant();
    if (CA && CB)
      return *CA > *CB;
    return CA.has_value() && !CB;
  });
  for (size_t K = 0; K < Live.size() && K < static_cast<size_t>(MaxNotes); ++K) {
    const OpEvent &Op = T.Ops[Live[K]->Producer];
    D.Notes.push_back({Op.NameWhere, "%0 holds %1 at the peak",
                       {Live[K]->FirstName.empty() ? "a temporary from " + Op.Name + "()"
                                                   : "'" + Live[K]->FirstName + "'",
                        bytesText(*Live[K]->Bytes)}});
  }
}

} // namespace tma
