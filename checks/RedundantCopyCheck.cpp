#include "checks/RedundantCopyCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/Units.h"

namespace tma {

RedundantCopyCheck::RedundantCopyCheck(const OptionSource &Opts)
    : TorchCheck("torch-redundant-copy"), MinBytes(intOption(Opts, "MinBytes", 0)) {}

void RedundantCopyCheck::storeOptions(OptionMap &Opts) const {
  Opts["MinBytes"] = std::to_string(MinBytes);
}

void RedundantCopyCheck::check(const FunctionTrace &T,
                               std::vector<Diagnostic> &Out) const {
  for (const OpEvent &Op : T.Ops) {
    // Same-dtype copies only: a cast changes the data, a clone does not.
    if (Op.Kind != OpKind::Copy || Op.Inputs.empty() ||
        (Op.Name != "clone" && Op.Name != "contiguous"))
      continue;
    ValueId In = Op.Inputs[0];
    const OpEvent *Src = T.producer(In);
    if (!isFresh(Src))
      continue;
    if (Op.AllocatedBytes && *Op.AllocatedBytes < MinBytes)
      continue;
    bool Temporary = !isNamedOrReturned(T, In);
    // A named fresh copy that nothing uses after this copy.
    bool DeadAfter = false;
    if (!Temporary) {
      int Last = lastUseOfStorage(T, T.value(In).Storage);
      DeadAfter = Last == static_cast<int>(Op.Statement) &&
                  usesOf(T, In).size() == 1;
    }
    if (!Temporary && !DeadAfter)
      continue;
    Diagnostic &D = report(Out, Op.NameWhere,
                           "%0() copies %1 of a fresh tensor from %2() that "
                           "nothing else uses; the copy is redundant");
    D.arg(Op.Name).arg(formatBytes(Op.AllocatedBytes)).arg(Src->Name);
    D.Bytes = Op.AllocatedBytes;
    D.Notes.push_back({Src->NameWhere, "the tensor was freshly made here by %0()",
                       {Src->Name}});
    // Dropping `.clone()` from a temporary is safe: the temporary already is
    // a tensor no one else can see.
    if (Temporary && Op.ArgWhere.size() >= 1 && !Op.Where.InMacro &&
        Op.ArgWhere[0].EndOffset != ~size_t(0) && Op.Where.EndOffset != ~size_t(0) &&
        Op.Name == "clone" && Op.ArgWhere.size() == 1) {
      SourceSpan Cut = Op.Where;
      Cut.BeginOffset = Op.ArgWhere[0].EndOffset;
      Cut.Line = Op.ArgWhere[0].EndLine;
      Cut.Column = Op.ArgWhere[0].EndColumn;
      D.Fixes.push_back({Cut, ""});
    }
  }
}

} // namespace tma
