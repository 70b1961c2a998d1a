#include "checks/DtypeWideningCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/Units.h"
#include "model/ops/OpTable.h"

namespace tma {

DtypeWideningCheck::DtypeWideningCheck(const OptionSource &Opts)
    : TorchCheck(CheckName), MinBytes(intOption(Opts, "MinBytes", 0)) {}

void DtypeWideningCheck::storeOptions(OptionMap &Opts) const {
  Opts["MinBytes"] = std::to_string(MinBytes);
}

void DtypeWideningCheck::check(const FunctionTrace &T,
                               std::vector<Diagnostic> &Out) const {
  for (const OpEvent &Op : T.Ops) {
    if (Op.Kind != OpKind::Copy || Op.Inputs.empty())
      continue;
    const TensorValue &In = T.value(Op.Inputs[0]);
    const TensorValue &Res = T.value(Op.Result);
    if (!In.Type || !Res.Type || !isFloating(*In.Type) || !isFloating(*Res.Type))
      continue;
    int64_t From = itemSize(*In.Type), To = itemSize(*Res.Type);
    if (To <= From)
      continue;
    // Only casts: an op whose output dtype differs only by promotion (a
    // matmul of mixed inputs) is not a cast the author wrote.
    if (!hasTag(Op.Code, Cast))
      continue;
    if (belowMinimum(Op.AllocatedBytes, MinBytes))
      continue;
    std::optional<SymSize> Moved = addSizes(Op.ReadBytes, Op.WrittenBytes);
    Diagnostic &D = report(
        Out, Op.NameWhere,
        "cast from %0 to %1 allocates %2 and moves %3 (reads %4, writes %5); "
        "every later read of the result moves %6x the bytes");
    D.arg(dtypeName(*In.Type))
        .arg(dtypeName(*Res.Type))
        .arg(bytesText(Op.AllocatedBytes))
        .arg(bytesText(Moved))
        .arg(bytesText(Op.ReadBytes))
        .arg(bytesText(Op.WrittenBytes))
        .arg(std::to_string(To / From));
    D.Bytes = knownBytes(Op.AllocatedBytes);
    D.BytesAssumed = assumedBytes(Op.AllocatedBytes);
  }
}

} // namespace tma
