#include "checks/utils/TraceQueries.h"
#include "model/Decide.h"
#include "model/Geometry.h"
#include "model/Ops.h"
#include "model/ShapeEnv.h"
#include "model/Units.h"
#include "model/ops/OpCodes.h"
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

const OpEvent *copiesAnywayBy(const FunctionTrace &T, ValueId Copy,
                              ValueId Original) {
  // The question is asked of a scratch copy of the function's ShapeEnv:
  // what it assumes must not change the function's report.
  std::optional<ShapeEnv> Scratch;
  std::optional<DecisionScope> Decisions;
  if (T.Env) {
    Scratch.emplace(*T.Env);
    Decisions.emplace(*Scratch);
  }
  const TensorValue &In = T.value(Original);
  for (const OpEvent *Use : usesOf(T, Copy)) {
    const std::vector<ValueId> &Ins = Use->Inputs;
    Tri Copies = Tri::False;
    if (Use->Code == OpCode::matmul && Ins.size() == 2) {
      // Without the contiguous(), every operand that is the copy is Original.
      TensorValue Operands[2] = {Ins[0] == Copy ? In : T.value(Ins[0]),
                                 Ins[1] == Copy ? In : T.value(Ins[1])};
      for (unsigned K = 0; K < 2 && Copies != Tri::True; ++K)
        if (Ins[K] == Copy)
          Copies = matmulCopiesOperand(Operands[0], Operands[1], K, T.Version);
    } else if (Use->Code == OpCode::linear && Ins.size() >= 2 &&
               Ins[0] == Copy && Ins[1] != Copy) {
      Copies = linearCopiesInput(In, T.value(Ins[1]), Ins.size() >= 3,
                                 T.Version);
    }
    if (Copies == Tri::True)
      return Use;
  }
  return nullptr;
}

std::vector<std::string> sizesWhoseOneMakesContiguous(const FunctionTrace &T,
                                                      ValueId V) {
  const TensorValue &In = T.value(V);
  if (!T.Env || !In.Sizes || !In.Strides)
    return {};
  // Decided again with the code's facts and no assumption, the answer
  // records exactly the sizes it assumed are not 1.
  ShapeEnv Fresh = factsOnly(*T.Env);
  std::vector<std::string> Assumed;
  {
    DecisionScope Decisions(Fresh);
    if (isContiguous(*In.Sizes, *In.Strides) != Tri::False)
      return {};
    Assumed = Fresh.symbolsAssumedNotOne();
  }
  std::vector<std::string> Out;
  for (const std::string &Name : Assumed) {
    SymBindings One = {{Name, 1}};
    Shape Sizes, Strides;
    for (const SymSize &S : *In.Sizes)
      Sizes.push_back(S.substitute(One));
    for (const SymSize &S : *In.Strides)
      Strides.push_back(S.substitute(One));
    ShapeEnv AtOne = factsOnly(*T.Env);
    DecisionScope Decisions(AtOne);
    if (isContiguous(Sizes, Strides) == Tri::True)
      Out.push_back(Name);
  }
  return Out;
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
