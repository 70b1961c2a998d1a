#include "checks/ReshapeCopyCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/Units.h"

namespace tma {

ReshapeCopyCheck::ReshapeCopyCheck(const OptionSource &Opts)
    : TorchCheck("torch-reshape-copy"), MinBytes(intOption(Opts, "MinBytes", 0)) {}

void ReshapeCopyCheck::storeOptions(OptionMap &Opts) const {
  Opts["MinBytes"] = std::to_string(MinBytes);
}

void ReshapeCopyCheck::check(const FunctionTrace &T,
                             std::vector<Diagnostic> &Out) const {
  for (const OpEvent &Op : T.Ops) {
    if ((Op.Name != "reshape" && Op.Name != "flatten") || Op.Kind != OpKind::Copy)
      continue;
    if (Op.AllocatedBytes && *Op.AllocatedBytes < MinBytes)
      continue;
    Diagnostic &D = report(
        Out, Op.NameWhere,
        "%0() copies %1 because its input is not viewable as the new shape; "
        "use .contiguous().view() to make the copy explicit, or .view() where "
        "no copy is intended");
    D.arg(Op.Name).arg(formatBytes(Op.AllocatedBytes));
    D.Bytes = Op.AllocatedBytes;
    if (const OpEvent *Breaker = layoutBreaker(T, Op.Inputs.at(0)))
      D.Notes.push_back({Breaker->NameWhere,
                         "the input stopped being contiguous here, at %0()",
                         {Breaker->Name}});
    // reshape -> contiguous().view keeps the result (a contiguous copy) and
    // makes the copy visible; flatten's arguments differ from view's.
    if (Op.Name == "reshape" && !Op.NameWhere.InMacro &&
        Op.NameWhere.BeginOffset != ~size_t(0))
      D.Fixes.push_back({Op.NameWhere, "contiguous().view"});
  }
}

} // namespace tma
