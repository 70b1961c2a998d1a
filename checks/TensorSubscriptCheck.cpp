#include "checks/TensorSubscriptCheck.h"
#include "model/ops/OpCodes.h"

namespace tma {

TensorSubscriptCheck::TensorSubscriptCheck(const OptionSource &)
    : TorchCheck(CheckName) {}

void TensorSubscriptCheck::storeOptions(OptionMap &) const {}

void TensorSubscriptCheck::check(const FunctionTrace &T,
                                 std::vector<Diagnostic> &Out) const {
  for (const OpEvent &Op : T.Ops) {
    if (Op.Code != OpCode::subscript || Op.Inputs.size() != 2)
      continue;
    const TensorValue &Index = T.value(Op.Inputs[1]);
    bool Throws = Op.Kind == OpKind::Throws;
    bool Unknown = !Index.Sizes;
    if (!Throws && !Unknown)
      continue;
    Diagnostic &D = report(
        Out, Op.Where,
        Throws ? "operator[] with a %0-dim index tensor throws at run time "
                 "(only 0-dim integral tensors are allowed); use .index({...}) "
                 "to gather"
               : "operator[] with an index tensor of unknown rank throws at "
                 "run time unless it is 0-dim; use .index({...}) to gather");
    D.arg(Index.Sizes ? std::to_string(Index.Sizes->size()) : "?");
    // t[idx] -> t.index({idx}): the gather the author meant.
    if (!Throws || Op.ArgWhere.size() != 2 || Op.Where.InMacro)
      continue;
    const SourceSpan &Recv = Op.ArgWhere[0], &Idx = Op.ArgWhere[1];
    if (Recv.EndOffset == ~size_t(0) || Idx.BeginOffset == ~size_t(0) ||
        Idx.EndOffset == ~size_t(0) || Op.Where.EndOffset == ~size_t(0))
      continue;
    SourceSpan Open = Op.Where, Close = Op.Where;
    Open.BeginOffset = Recv.EndOffset;
    Open.EndOffset = Idx.BeginOffset;
    Open.Line = Recv.EndLine;
    Open.Column = Recv.EndColumn;
    Close.BeginOffset = Idx.EndOffset;
    Close.Line = Idx.EndLine;
    Close.Column = Idx.EndColumn;
    D.Fixes.push_back({Open, ".index({"});
    D.Fixes.push_back({Close, "})"});
  }
}

} // namespace tma
