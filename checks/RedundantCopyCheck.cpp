#include "checks/RedundantCopyCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/Units.h"
#include "model/ops/OpCodes.h"

namespace tma {

RedundantCopyCheck::RedundantCopyCheck(const OptionSource &Opts)
    : TorchCheck(CheckName), MinBytes(intOption(Opts, "MinBytes", 0)) {}

void RedundantCopyCheck::storeOptions(OptionMap &Opts) const {
  Opts["MinBytes"] = std::to_string(MinBytes);
}

// Whether a clone keeps its input's layout (Preserve, or a format the input
// already has): then it duplicates the data and nothing else. A clone into
// another memory format is a layout change, not a redundant copy.
static bool keepsLayout(const TensorValue &In, const TensorValue &Res) {
  if (!In.Strides || !Res.Strides)
    return true;
  return *In.Strides == *Res.Strides;
}

// `fresh.detach()`: the same elements, storage and layout under another
// handle, so a copy of it copies the fresh tensor just the same. Followed
// only through temporaries no other op uses: a named or shared handle may be
// why the copy is there.
static ValueId throughWholeViews(const FunctionTrace &T, ValueId V) {
  while (const OpEvent *P = T.producer(V)) {
    if (P->Kind != OpKind::View || P->Inputs.size() != 1 ||
        (P->Code != OpCode::detach && P->Code != OpCode::alias))
      break;
    ValueId In = P->Inputs[0];
    if (isNamedOrReturned(T, V) || isNamedOrReturned(T, In) ||
        usesOf(T, V).size() != 1 || usesOf(T, In).size() != 1)
      break;
    V = In;
  }
  return V;
}

void RedundantCopyCheck::check(const FunctionTrace &T,
                               std::vector<Diagnostic> &Out) const {
  for (const OpEvent &Op : T.Ops) {
    // Only clone(): a cast changes the data, and a contiguous() that copies
    // a fresh tensor changes its layout (the clone before it, if any, is
    // the redundant one).
    if (Op.Kind != OpKind::Copy || Op.Inputs.empty() || Op.Code != OpCode::clone)
      continue;
    ValueId In = throughWholeViews(T, Op.Inputs[0]);
    const OpEvent *Src = T.producer(In);
    if (!isFresh(Src) || !keepsLayout(T.value(In), T.value(Op.Result)))
      continue;
    if (belowMinimum(Op.AllocatedBytes, MinBytes))
      continue;
    bool Temporary = !isNamedOrReturned(T, In);
    // A named fresh copy that nothing uses after this copy. Not in a loop:
    // there the next iteration may use the source again. Not when a later
    // statement is opaque to the trace (a call it does not model may use
    // the source there).
    bool DeadAfter = false;
    if (!Temporary && Op.Statement < T.Statements.size() &&
        !T.Statements[Op.Statement].InLoop &&
        !opaqueStatementAfter(T, Op.Statement)) {
      int Last = lastUseOfStorage(T, T.value(In).Storage);
      DeadAfter = Last == static_cast<int>(Op.Statement) &&
                  usesOf(T, In).size() == 1;
    }
    if (!Temporary && !DeadAfter)
      continue;
    Diagnostic &D = report(Out, Op.NameWhere,
                           "%0() copies %1 of a fresh tensor from %2() that "
                           "nothing else uses; the copy is redundant");
    D.arg(Op.Name).arg(bytesText(Op.AllocatedBytes)).arg(Src->Name);
    D.Bytes = knownBytes(Op.AllocatedBytes);
    D.BytesAssumed = assumedBytes(Op.AllocatedBytes);
    D.Notes.push_back({Src->NameWhere, "the tensor was freshly made here by %0()",
                       {Src->Name}});
    // Dropping `.clone()` from a temporary is safe: the temporary already is
    // a tensor no one else can see. Only `x.clone()` with no arguments (a
    // memory format might matter) written as a member call.
    if (Temporary && Op.ArgWhere.size() == 1 && isMemberCall(Op) &&
        isRewritable(Op.Where) && Op.ArgWhere[0].EndOffset < Op.Where.EndOffset) {
      SourceSpan Cut = Op.Where;
      Cut.BeginOffset = Op.ArgWhere[0].EndOffset;
      Cut.Line = Op.ArgWhere[0].EndLine;
      Cut.Column = Op.ArgWhere[0].EndColumn;
      D.Fixes.push_back({Cut, ""});
    }
  }
}

} // namespace tma
