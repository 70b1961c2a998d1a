// LibTorch calls no hand rule models, answered from the op's ATen schema
// (frontend/AtenOps.h, model/ops/AtenSchema.h).
//
//  1. Only for ops outside the hand table (model/ops/OpTable.def): those
//     keep their rules' answers.
//  2. A return the schema makes a view of an argument is a view of that
//     tensor: its storage, so its base and what it keeps alive are known;
//     its shape is unknown ("no shape rule for aten::<op>"). It may be the
//     argument itself (positive(), conj() of a real tensor return self), so
//     an in-place change through it may be one to the argument.
//  3. A list of views is one view of unknown shape standing for the list,
//     as a split of a tensor of unknown shape is (listElement).
//  4. An unannotated return is new storage of unknown bytes; what the op
//     allocates is unknown, so the totals are.
//  5. An op that writes its arguments (in place, out=) leaves them unknown
//     (libTorchWrites and the in-place methods forget them), and the
//     returned written argument is that same tensor, not a second one.
#include "frontend/AtenOps.h"
#include "frontend/FunctionEvaluator.h"

using namespace clang;

namespace tma {

/// The C++ expression passing schema argument Arg of callee A, or null.
static const Expr *schemaArgExpr(const AtenCallee &A, size_t Arg,
                                 const Expr *Receiver,
                                 llvm::ArrayRef<const Expr *> Args) {
  if (Receiver && A.SelfArg == Arg)
    return Receiver;
  for (size_t K = 0; K < A.SchemaArgOfParam.size() && K < Args.size(); ++K)
    if (A.SchemaArgOfParam[K] == Arg)
      return Args[K];
  return nullptr;
}

/// The op's tensor inputs, as unmodelled calls list them (the receiver,
/// then each tensor argument), and which of them Source is.
static std::optional<unsigned> inputIndexOf(const Expr *Source,
                                            const Expr *Receiver,
                                            llvm::ArrayRef<const Expr *> Args) {
  unsigned K = 0;
  if (Receiver) {
    if (Receiver == Source)
      return K;
    ++K;
  }
  for (const Expr *A : Args)
    if (isTensorType(A->getType())) {
      if (A == Source)
        return K;
      ++K;
    }
  return std::nullopt;
}

std::optional<ValueId>
FunctionEvaluator::schemaOp(const Expr *E, const FunctionDecl *Callee,
                            const Expr *Receiver,
                            llvm::ArrayRef<const Expr *> Args,
                            const std::vector<ValueId> &Inputs) {
  const AtenCallee *A = atenCallee(Ctx, Callee);
  if (!A || A->Facts.Returns.size() != 1 || !A->Facts.Written.empty() ||
      A->Facts.ChangesSelfGeometry)
    return std::nullopt;
  const AtenReturnFact &R = A->Facts.Returns.front();
  std::string Name = calleeName(Callee);
  if (R.K == AtenReturnFact::Kind::NewStorage) {
    I.totalsUnknown("'" + Name + "' (line " +
                    std::to_string(span(E->getSourceRange()).Line) +
                    ") has no shape rule: what it allocates is unknown");
    return apply(Name, E, Inputs,
                 schemaNewStorageOutcome(A->Schema, !Inputs.empty()));
  }
  if (R.K != AtenReturnFact::Kind::ViewOf)
    return std::nullopt;
  const Expr *Source = schemaArgExpr(*A, R.Argument, Receiver, Args);
  auto In = Source ? inputIndexOf(Source, Receiver, Args) : std::nullopt;
  if (!In || *In >= Inputs.size() || Inputs[*In] < 0)
    return std::nullopt;
  OpOutcome Out = schemaViewOutcome(A->Schema, I.value(Inputs[*In]));
  Out.SharesInput = *In;
  Out.MayBeInputs = {*In};
  return apply(Name, E, Inputs, Out);
}

std::optional<std::vector<ValueId>>
FunctionEvaluator::schemaViews(const Expr *E, const FunctionDecl *Callee,
                               const Expr *Receiver,
                               llvm::ArrayRef<const Expr *> Args) {
  const AtenCallee *A = atenCallee(Ctx, Callee);
  if (!A || A->Facts.Returns.size() != 1 || !A->Facts.Written.empty() ||
      A->Facts.Returns.front().K != AtenReturnFact::Kind::ViewsOf)
    return std::nullopt;
  const Expr *Source =
      schemaArgExpr(*A, A->Facts.Returns.front().Argument, Receiver, Args);
  if (!Source || !isTensorType(Source->getType()))
    return std::nullopt;
  std::vector<ValueId> Inputs;
  if (Receiver)
    Inputs.push_back(tensor(Receiver));
  for (const Expr *Arg : Args)
    if (isTensorType(Arg->getType()))
      Inputs.push_back(tensor(Arg));
  auto In = inputIndexOf(Source, Receiver, Args);
  if (!In || Inputs[*In] < 0)
    return std::nullopt;
  OpOutcome Out = schemaViewOutcome(A->Schema, I.value(Inputs[*In]));
  Out.Value.UnknownReason += ": how many views, and their shapes, are not known";
  Out.SharesInput = *In;
  Out.MayBeInputs = {*In};
  return std::vector<ValueId>{apply(calleeName(Callee), E, Inputs, Out)};
}

std::optional<ValueId>
FunctionEvaluator::writtenResult(const FunctionDecl *Callee,
                                 const Expr *Receiver,
                                 llvm::ArrayRef<const Expr *> Args) {
  const AtenCallee *A = atenCallee(Ctx, Callee);
  if (!A || A->Facts.Returns.size() != 1 ||
      A->Facts.Returns.front().K != AtenReturnFact::Kind::Written)
    return std::nullopt;
  const Expr *Written =
      schemaArgExpr(*A, A->Facts.Returns.front().Argument, Receiver, Args);
  if (!Written)
    return std::nullopt;
  auto Sl = slotOf(handleSource(Written));
  if (!Sl || !Sl->Known)
    return std::nullopt;
  ValueId Now = I.lookup(Sl->Key);
  // Only a tensor the call's effects forgot: its value now is what the
  // call returned.
  if (Now < 0 || I.value(Now).Sizes)
    return std::nullopt;
  return Now;
}

} // namespace tma
