// Outcomes every rule builds on: unmodelled, throws, LibTorch's own overflow checks
// on what an op produces, and the small helpers the families share.
#include "model/Ops.h"
#include "model/ops/OpsDetail.h"
#include "model/Decide.h"
#include "model/ShapeEnv.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tma {

using namespace detail;

OpOutcome unmodelled(const std::string &Op) {
  OpOutcome Out;
  Out.Kind = OpKind::Unknown;
  Out.Value.markUnknown("'" + Op + "' is not modelled");
  return Out;
}

OpOutcome throws(const std::string &Message) {
  OpOutcome Out;
  Out.Kind = OpKind::Throws;
  Out.Error = Message;
  Out.Value.markUnknown("throws at run time: " + Message);
  return Out;
}

// LibTorch checks every geometry it creates: TensorImpl's
// safe_compute_numel for any tensor ("numel: integer multiplication
// overflow") and computeStorageNbytes for a new storage ("Storage size
// calculation overflowed"). A fresh tensor's storage is sized first, so an
// allocating op reports the storage error.
OpOutcome checkedOutcome(OpOutcome Out) {
  if (Out.Kind == OpKind::Throws || Out.Kind == OpKind::Unknown ||
      Out.Kind == OpKind::Use || !Out.Value.Sizes)
    return Out;
  const Shape &Sizes = *Out.Value.Sizes;
  bool Allocates = Out.Kind == OpKind::Alloc || Out.Kind == OpKind::Copy;
  bool NumelFits = checkedNumel(Sizes).has_value();
  if (Allocates && Out.Value.Type) {
    // A symbolic size that may be 0 leaves the bytes unknown, which is no
    // overflow.
    bool Undecided = false;
    auto Bytes = Out.Value.Strides
                     ? checkedStorageBytes(Sizes, *Out.Value.Strides,
                                           itemSize(*Out.Value.Type), 0,
                                           &Undecided)
                     : denseBytes(Sizes, *Out.Value.Type);
    if (!NumelFits || (!Bytes && !Undecided))
      return throws("Storage size calculation overflowed with sizes=" +
                    dimsText(Sizes));
  }
  if (!NumelFits)
    return throws(Allocates ? "Storage size calculation overflowed with sizes=" +
                                  dimsText(Sizes)
                            : "numel: integer multiplication overflow");
  return Out;
}

namespace detail {

std::optional<SymSize> dataDependentCount(const std::string &Op,
                                          const SymSize &Among) {
  ShapeEnv *Env = currentShapeEnv();
  if (!Env)
    return std::nullopt;
  return Env->dataDependentSize(Op, Among);
}

/// A view with exactly this geometry.
OpOutcome viewWith(const TensorValue &In, Shape Sizes, Shape Strides,
                   SymSize Offset) {
  OpOutcome Out = viewOf(In);
  Out.Value.Sizes = std::move(Sizes);
  Out.Value.Strides = std::move(Strides);
  Out.Value.Offset = Offset;
  return Out;
}

std::optional<SymSize> sumBytes(const std::vector<const TensorValue *> &Ins) {
  std::optional<SymSize> Total = SymSize(0);
  for (const TensorValue *T : Ins)
    Total = addSizes(Total, T->logicalBytes());
  return Total;
}

/// A fresh contiguous output of Sizes; Type/Dev may be unknown.
OpOutcome freshContiguous(const Shape &Sizes, std::optional<DType> Type,
                          std::optional<Device> Dev, const std::string &TypeOf) {
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  Out.Value.Sizes = Sizes;
  Out.Value.Strides = contiguousStrides(Sizes);
  Out.Value.Offset = 0;
  Out.Value.Type = Type;
  if (!Type)
    Out.Value.TypeOf = TypeOf;
  Out.Value.Dev = Dev;
  if (!Out.Value.dtypeKnown())
    Out.Value.markUnknown("dtype of an input is unknown");
  if (!Dev)
    Out.Value.markUnknown("device of an input is unknown");
  Out.WrittenBytes = Out.Value.logicalBytes();
  return Out;
}

void commonDType(const std::vector<const TensorValue *> &Ins,
                 TensorValue &Into) {
  Into.Type.reset();
  Into.TypeOf.clear();
  for (const TensorValue *T : Ins)
    if (T->Type) {
      Into.Type = T->Type;
      break;
    }
  if (!Into.Type)
    for (const TensorValue *T : Ins)
      if (!T->TypeOf.empty()) {
        Into.TypeOf = T->TypeOf;
        break;
      }
  if (!Into.dtypeKnown())
    return;
  std::string Want = Into.Type ? dtypeCpp(*Into.Type)
                               : Into.TypeOf + ".scalar_type()";
  for (const TensorValue *T : Ins) {
    if (T->Type || T->TypeOf == Into.TypeOf)
      continue; // known ones the rule compares itself
    if (T->TypeOf.empty() ||
        !requireCondition(T->TypeOf + ".scalar_type() == " + Want)) {
      Into.Type.reset();
      Into.TypeOf.clear();
      return;
    }
  }
}

/// An output whose shape cannot be derived: a copy of unknown size.
OpOutcome unknownCopy(const std::string &Reason, std::optional<DType> Type,
                      std::optional<Device> Dev) {
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  Out.Value.Type = Type;
  Out.Value.Dev = Dev;
  Out.Value.markUnknown(Reason);
  return Out;
}

std::string shapeReason(const TensorValue &T) {
  return T.UnknownReason.empty() ? "shape of an input is unknown"
                                 : T.UnknownReason;
}

/// Both dtypes known and equal, as the BLAS-backed ops require.
std::optional<OpOutcome> sameDTypeOrThrow(const TensorValue &A,
                                          const TensorValue &B,
                                          const char *Op) {
  if (A.Type && B.Type && *A.Type != *B.Type)
    return throws(std::string(Op) + ": expected mat1 and mat2 to have the same "
                  "dtype, but got: " + dtypeName(*A.Type) + " != " +
                  dtypeName(*B.Type));
  return std::nullopt;
}

bool requireFloatingParameter(const std::string &Param) {
  return requireCondition(Param + ".is_floating_point()");
}

bool requireIndexParameter(const TensorValue &Index) {
  if (Index.Type || Index.TypeOf.empty())
    return true;
  return requireCondition(Index.TypeOf + ".scalar_type() == at::kLong");
}

bool canCast(DType From, DType To) {
  // c10::canCast: no complex -> real, no floating -> integral, no
  // non-bool -> bool.
  if (isComplex(From) && !isComplex(To))
    return false;
  if (isFloating(From) && isIntegral(To, true))
    return false;
  if (From != DType::Bool && To == DType::Bool)
    return false;
  return true;
}

} // namespace detail
} // namespace tma
