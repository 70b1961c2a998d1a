#include "checks/ContiguousCopyCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/Units.h"
#include "model/ops/OpCodes.h"
#include "model/ops/OpTable.h"

namespace tma {

ContiguousCopyCheck::ContiguousCopyCheck(const OptionSource &Opts)
    : TorchCheck(CheckName),
      MinBytes(intOption(Opts, "MinBytes", 0)),
      ReportRequired(boolOption(Opts, "ReportRequired", false)) {}

void ContiguousCopyCheck::storeOptions(OptionMap &Opts) const {
  Opts["MinBytes"] = std::to_string(MinBytes);
  Opts["ReportRequired"] = ReportRequired ? "true" : "false";
}

// A clone whose output is contiguous while its dense input is not was asked
// for MemoryFormat::Contiguous (Preserve would have kept the layout).
static bool isContiguousClone(const FunctionTrace &T, const OpEvent &Op) {
  if (Op.Code != OpCode::clone || Op.Inputs.empty())
    return false;
  const TensorValue &In = T.value(Op.Inputs[0]);
  auto InContig = In.contiguous(), OutContig = T.value(Op.Result).contiguous();
  return InContig && OutContig && !*InContig && *OutContig &&
         isNonOverlappingAndDense(*In.Sizes, *In.Strides) == Tri::True;
}

// With ReportRequired, the use that needs the copy, as a note.
static void noteRequiredBy(Diagnostic &D, const OpEvent *Needs,
                           const OpEvent *CopiesAnyway) {
  if (Needs)
    D.Notes.push_back({Needs->NameWhere,
                       "%0() needs contiguous memory here", {Needs->Name}});
  else if (CopiesAnyway)
    D.Notes.push_back({CopiesAnyway->NameWhere,
                       "%0() would copy the non-contiguous input itself here",
                       {CopiesAnyway->Name}});
}

// " (unless query.size(1) == 1)": the sizes whose assumed `>= 2` made the
// input non-contiguous and at 1 would make the copy a no-op.
static std::string unlessText(const std::vector<std::string> &Sizes) {
  std::string Text;
  for (const std::string &S : Sizes)
    Text += (Text.empty() ? " (unless " : " or ") + S + " == 1";
  return Text.empty() ? Text : Text + ")";
}

void ContiguousCopyCheck::check(const FunctionTrace &T,
                                std::vector<Diagnostic> &Out) const {
  for (const OpEvent &Op : T.Ops) {
    bool Contiguous = Op.Code == OpCode::contiguous;
    if (!Contiguous && !isContiguousClone(T, Op))
      continue;
    // `y.transpose(1, 2).contiguous().view(...)`: the view raises without
    // the copy, so the copy is the view's price, not a mistake.
    const OpEvent *Needs = contiguityNeededBy(T, Op.Result);
    // `linear(x.transpose(1, 2).contiguous(), ...)` where linear would fold
    // the transposed x with a copying reshape: removing the copy saves
    // nothing.
    const OpEvent *CopiesAnyway =
        Needs || Op.Inputs.empty() ? nullptr
                                   : copiesAnywayBy(T, Op.Result, Op.Inputs[0]);
    if ((Needs || CopiesAnyway) && !ReportRequired)
      continue;
    const OpEvent *Breaker =
        Op.Inputs.empty() ? nullptr : layoutBreaker(T, Op.Inputs[0]);
    if (Op.Kind == OpKind::Copy) {
      // A copy of an already contiguous input is a deliberate conversion
      // (contiguous(ChannelsLast)), not a lost layout.
      auto InContig = Op.Inputs.empty() ? std::optional<bool>()
                                        : T.value(Op.Inputs[0]).contiguous();
      if (InContig && *InContig)
        continue;
      if (belowMinimum(Op.AllocatedBytes, MinBytes))
        continue;
      Diagnostic &D = report(
          Out, Op.NameWhere,
          "%0() copies %1 because its input is not contiguous%2");
      D.arg(Op.Name).arg(bytesText(Op.AllocatedBytes));
      D.arg(Op.Inputs.empty()
                ? std::string()
                : unlessText(sizesWhoseOneMakesContiguous(T, Op.Inputs[0])));
      D.Bytes = knownBytes(Op.AllocatedBytes);
      D.BytesAssumed = assumedBytes(Op.AllocatedBytes);
      if (Breaker)
        D.Notes.push_back({Breaker->NameWhere, "contiguity is lost here by %0()",
                           {Breaker->Name}});
      noteRequiredBy(D, Needs, CopiesAnyway);
    } else if (Op.Kind == OpKind::Unknown && Breaker == nullptr) {
      // Shapes unknown: fire on the pattern when a layout-changing view
      // feeds the call directly.
      const OpEvent *Src =
          Op.Inputs.empty() ? nullptr : permutingProducer(T, Op.Inputs[0]);
      if (!Src)
        continue;
      Diagnostic &D = report(
          Out, Op.NameWhere,
          "%0() copies a tensor of unknown size: its input comes from %1()");
      D.arg(Op.Name).arg(Src->Name);
      D.Notes.push_back({Src->NameWhere, "contiguity is lost here by %0()",
                         {Src->Name}});
      noteRequiredBy(D, Needs, CopiesAnyway);
    }
  }
}

} // namespace tma
