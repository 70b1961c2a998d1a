#include "checks/utils/TraceQueries.h"
#include "model/Decide.h"
#include "model/ShapeEnv.h"
#include "model/Units.h"
#include "model/ops/OpTable.h"

#include <algorithm>

namespace tma {

std::vector<const OpEvent *> usesOf(const FunctionTrace &T, ValueId V) {
  std::vector<const OpEvent *> Uses;
  for (const OpEvent &Op : T.Ops)
    if (std::find(Op.Inputs.begin(), Op.Inputs.end(), V) != Op.Inputs.end())
      Uses.push_back(&Op);
  return Uses;
}

const OpEvent *contiguityNeededBy(const FunctionTrace &T, ValueId V) {
  for (const OpEvent *Use : usesOf(T, V))
    if (hasTag(Use->Code, FailsOnStrides) ||
        (Use->Kind == OpKind::Use && Use->Code == NoOpCode))
      return Use;
  return nullptr;
}

std::vector<const Binding *> bindingsOf(const FunctionTrace &T, ValueId V) {
  std::vector<const Binding *> Out;
  for (const Binding &B : T.Bindings)
    if (B.Value == V)
      Out.push_back(&B);
  return Out;
}

bool isNamedOrReturned(const FunctionTrace &T, ValueId V) {
  return !bindingsOf(T, V).empty() ||
         std::find(T.Returned.begin(), T.Returned.end(), V) != T.Returned.end();
}

int lastUseOfStorage(const FunctionTrace &T, StorageId S) {
  int Last = -1;
  auto OnStorage = [&](ValueId V) {
    return V >= 0 && T.value(V).Storage == S;
  };
  for (const OpEvent &Op : T.Ops)
    for (ValueId In : Op.Inputs)
      if (OnStorage(In))
        Last = std::max(Last, static_cast<int>(Op.Statement));
  for (ValueId V : T.Returned)
    if (OnStorage(V))
      Last = static_cast<int>(T.Statements.size());
  return Last;
}

const OpEvent *layoutBreaker(const FunctionTrace &T, ValueId V) {
  const OpEvent *Op = T.producer(V);
  while (Op && (Op->Kind == OpKind::View || Op->Kind == OpKind::Self) &&
         !Op->Inputs.empty()) {
    ValueId In = Op->Inputs.front();
    auto OutContig = T.value(Op->Result).contiguous();
    auto InContig = T.value(In).contiguous();
    if (OutContig && !*OutContig && InContig && *InContig)
      return Op;
    Op = T.producer(In);
  }
  return nullptr;
}

const OpEvent *permutingProducer(const FunctionTrace &T, ValueId V) {
  const OpEvent *Src = T.producer(V);
  return Src && hasTag(Src->Code, Permuting) ? Src : nullptr;
}

bool belowMinimum(const std::optional<SymSize> &Bytes, int64_t Min) {
  // The user's values decide a formula they bind (--assume).
  if (std::optional<int64_t> V = assumedBytes(Bytes))
    return *V < Min;
  return Bytes && sizeLt(*Bytes, Min) == Tri::True;
}

std::string bytesText(const SymSize &Bytes) {
  std::string Text = formatBytes(Bytes);
  if (const ShapeEnv *Env = currentShapeEnv(); Env && Bytes.isSymbolic())
    Text += Env->boundSuffix(Bytes, /*DisplayNames=*/false);
  return Text;
}

std::string bytesText(const std::optional<SymSize> &Bytes) {
  return Bytes ? bytesText(*Bytes) : formatBytes(Bytes);
}

std::optional<int64_t> assumedBytes(const std::optional<SymSize> &Bytes) {
  const ShapeEnv *Env = currentShapeEnv();
  if (!Env || !Bytes || !Bytes->isSymbolic())
    return std::nullopt;
  return Env->boundValue(*Bytes);
}

bool isFresh(const OpEvent *Op) {
  return Op && (Op->Kind == OpKind::Alloc || Op->Kind == OpKind::Copy);
}

bool isRewritable(const SourceSpan &S) {
  return !S.InMacro && S.BeginOffset != ~size_t(0) && S.EndOffset != ~size_t(0) &&
         S.BeginOffset <= S.EndOffset;
}

bool isMemberCall(const OpEvent &Op) {
  if (Op.ArgWhere.empty() || !isRewritable(Op.NameWhere) ||
      !isRewritable(Op.ArgWhere[0]))
    return false;
  return Op.ArgWhere[0].EndOffset <= Op.NameWhere.BeginOffset;
}

bool opaqueStatementAfter(const FunctionTrace &T, unsigned Statement) {
  for (size_t K = static_cast<size_t>(Statement) + 1; K < T.Statements.size(); ++K)
    if (T.Statements[K].Ops.empty())
      return true;
  return false;
}

bool knownNonContiguous(const FunctionTrace &T, ValueId V) {
  if (V < 0)
    return false;
  auto C = T.value(V).contiguous();
  return C && !*C;
}

} // namespace tma
