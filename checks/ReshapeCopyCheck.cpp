#include "checks/ReshapeCopyCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/Units.h"
#include "model/ops/OpCodes.h"

namespace tma {

ReshapeCopyCheck::ReshapeCopyCheck(const OptionSource &Opts)
    : TorchCheck(CheckName), MinBytes(intOption(Opts, "MinBytes", 0)) {}

void ReshapeCopyCheck::storeOptions(OptionMap &Opts) const {
  Opts["MinBytes"] = std::to_string(MinBytes);
}

void ReshapeCopyCheck::check(const FunctionTrace &T,
                             std::vector<Diagnostic> &Out) const {
  for (const OpEvent &Op : T.Ops) {
    if ((Op.Code != OpCode::reshape && Op.Code != OpCode::flatten) ||
        Op.Inputs.empty())
      continue;
    if (Op.Kind == OpKind::Unknown) {
      // Shapes unknown: fire on the pattern, a reshape straight after a
      // layout-changing view, and say that the size is unknown.
      const OpEvent *Src = permutingProducer(T, Op.Inputs[0]);
      if (!Src)
        continue;
      Diagnostic &D = report(
          Out, Op.NameWhere,
          "%0() of the result of %1() copies a tensor of unknown size unless "
          "the permuted dimensions have size 1; use .contiguous().view() to "
          "make the copy explicit, or .view() where no copy is intended");
      D.arg(Op.Name).arg(Src->Name);
      D.Notes.push_back({Src->NameWhere,
                         "the input stopped being contiguous here, at %0()",
                         {Src->Name}});
      continue;
    }
    if (Op.Kind != OpKind::Copy)
      continue;
    if (belowMinimum(Op.AllocatedBytes, MinBytes))
      continue;
    Diagnostic &D = report(
        Out, Op.NameWhere,
        "%0() copies %1 because its input is not viewable as the new shape; "
        "use .contiguous().view() to make the copy explicit, or .view() where "
        "no copy is intended");
    D.arg(Op.Name).arg(bytesText(Op.AllocatedBytes));
    D.Bytes = knownBytes(Op.AllocatedBytes);
    D.BytesAssumed = assumedBytes(Op.AllocatedBytes);
    if (const OpEvent *Breaker = layoutBreaker(T, Op.Inputs[0]))
      D.Notes.push_back({Breaker->NameWhere,
                         "the input stopped being contiguous here, at %0()",
                         {Breaker->Name}});
    // x.reshape(s) -> x.contiguous().view(s): the same result (a contiguous
    // copy), with the copy visible. Only for member calls: torch::reshape(x,
    // s) has no receiver to put contiguous() on. flatten's arguments differ
    // from view's, so it gets no fix.
    if (Op.Code == OpCode::reshape && isMemberCall(Op))
      D.Fixes.push_back({Op.NameWhere, "contiguous().view"});
  }
}

} // namespace tma
