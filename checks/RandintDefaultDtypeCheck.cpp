#include "checks/RandintDefaultDtypeCheck.h"
#include "checks/utils/TraceQueries.h"
#include "model/Units.h"
#include "model/ops/OpCodes.h"

namespace tma {

RandintDefaultDtypeCheck::RandintDefaultDtypeCheck(const OptionSource &)
    : TorchCheck(CheckName) {}

void RandintDefaultDtypeCheck::storeOptions(OptionMap &) const {}

void RandintDefaultDtypeCheck::check(const FunctionTrace &T,
                                     std::vector<Diagnostic> &Out) const {
  for (const OpEvent &Op : T.Ops) {
    // randperm has the same trap: its default options are kLong, but
    // options without a dtype take the default dtype.
    if ((Op.Code != OpCode::randint && Op.Code != OpCode::randperm) ||
        !Op.DTypeDefaulted)
      continue;
    Diagnostic &D = report(Out, Op.NameWhere,
                           "%0() with options but no dtype makes %1 "
                           "tensors in C++, not int64 as in Python; give the "
                           "options a dtype");
    const TensorValue &V = T.value(Op.Result);
    D.arg(Op.Name).arg(V.Type ? dtypeName(*V.Type) : "float32");
    D.Bytes = knownBytes(V.logicalBytes());
    // Wrapping the options in at::TensorOptions(...) works for every
    // spelling (a device, a dtype call, an options variable).
    if (Op.ArgWhere.empty())
      continue;
    const SourceSpan &Opts = Op.ArgWhere.back();
    if (!isRewritable(Opts))
      continue;
    SourceSpan Begin = Opts, End = Opts;
    Begin.EndOffset = Begin.BeginOffset;
    End.BeginOffset = End.EndOffset;
    End.Line = Opts.EndLine;
    End.Column = Opts.EndColumn;
    D.Fixes.push_back({Begin, "at::TensorOptions("});
    D.Fixes.push_back({End, ").dtype(at::kLong)"});
  }
}

} // namespace tma
