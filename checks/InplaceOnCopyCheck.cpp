#include "checks/InplaceOnCopyCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/ops/OpTable.h"

namespace tma {

InplaceOnCopyCheck::InplaceOnCopyCheck(const OptionSource &)
    : TorchCheck(CheckName) {}

void InplaceOnCopyCheck::storeOptions(OptionMap &) const {}

void InplaceOnCopyCheck::check(const FunctionTrace &T,
                               std::vector<Diagnostic> &Out) const {
  for (const OpEvent &Op : T.Ops) {
    if (Op.Kind != OpKind::InPlace || Op.Inputs.empty())
      continue;
    ValueId Self = Op.Inputs[0];
    const OpEvent *Src = T.producer(Self);
    // The receiver is an unnamed copy of another tensor: the write is lost.
    // Only ops that copy (part of) their source: an arithmetic result is a
    // new value, not something the author could have meant to write through.
    if (!Src || Src->Kind != OpKind::Copy || Src->Inputs.empty() ||
        !hasTag(Src->Code, CopiesInput) ||
        isNamedOrReturned(T, Self) || isNamedOrReturned(T, Op.Result) ||
        !usesOf(T, Op.Result).empty())
      continue;
    std::string Source = "the source";
    for (const Binding *B : bindingsOf(T, Src->Inputs[0]))
      Source = "'" + B->Name + "'";
    Diagnostic &D = report(Out, Op.NameWhere,
                           "in-place %0() modifies a temporary copy made by "
                           "%1(); %2 is unchanged");
    D.arg(Op.Name).arg(Src->Name).arg(Source);
    D.Notes.push_back({Src->NameWhere,
                       "%0() returns a new tensor, not a view; to write into "
                       "the source use index_put_() or index_fill_()",
                       {Src->Name}});
  }
}

} // namespace tma
