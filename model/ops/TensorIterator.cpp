// TensorIterator ops (TensorIterator.cpp, TypeProperties.cpp): broadcast
// shapes, result_type promotion, output strides, in-place casting.
//
// Traffic accounting, the same for every rule:
// - ReadBytes counts each input tensor's logical bytes (numel * itemsize)
//   once, even when broadcasting makes the kernel revisit elements; C++
//   scalars count nothing. Index tensors count their own bytes.
// - WrittenBytes counts the output's logical bytes once.
// - TransientBytes counts storages an op allocates and frees inside itself
//   (matmul's folding copy; on CPU, TensorIterator's promoted copies of
//   inputs whose dtype differs from the common dtype).
#include "model/Ops.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tma {

using namespace detail;

// at::native::result_type (TypeProperties.cpp): dimensioned tensors, zero-dim
// tensors and wrapped numbers are promoted separately and then combined so
// that a lower group only wins with a higher category. A wrapped floating
// number counts as the default dtype (float32), a complex one as
// complex64.
std::optional<DType> resultType(const std::vector<ElemOperand> &Ops) {
  std::optional<DType> DimR, ZeroR, WrapR;
  auto Add = [](std::optional<DType> &Acc, DType T) {
    Acc = Acc ? promoteTypes(*Acc, T) : T;
  };
  for (const ElemOperand &O : Ops) {
    if (O.IsScalar) {
      if (!O.ScalarType)
        return std::nullopt;
      DType T = *O.ScalarType;
      if (isComplex(T))
        T = DType::Complex64;
      else if (isFloating(T))
        T = DType::Float32;
      Add(WrapR, T);
      continue;
    }
    if (!O.T.Type || !O.T.Sizes)
      return std::nullopt;
    Add(O.T.Sizes->empty() ? ZeroR : DimR, *O.T.Type);
  }
  // combine_categories(higher, lower).
  auto Combine = [](std::optional<DType> Higher,
                    std::optional<DType> Lower) -> std::optional<DType> {
    if (!Higher)
      return Lower;
    if (!Lower)
      return Higher;
    if (isComplex(*Higher))
      return Higher;
    if (isComplex(*Lower))
      return isFloating(*Higher) ? toComplex(*Higher) : *Lower;
    if (isFloating(*Higher))
      return Higher;
    if (*Higher == DType::Bool || isFloating(*Lower))
      return promoteTypes(*Higher, *Lower);
    return Higher;
  };
  return Combine(DimR, Combine(ZeroR, WrapR));
}

OpOutcome elementwise(const std::string &Op,
                      const std::vector<ElemOperand> &Ops, ElemDType Rule) {
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  std::optional<Device> Dev;
  for (const ElemOperand &O : Ops)
    if (!O.IsScalar) {
      Dev = O.T.Dev;
      break;
    }
  Out.Value.Dev = Dev;
  // An unknown operand's own reason explains the most: first that of an
  // operand whose shape or dtype is unknown (what the result then misses),
  // then any other (a parameter's device, the caller's).
  for (bool Missing : {true, false})
    for (const ElemOperand &O : Ops)
      if (!O.IsScalar && !O.T.UnknownReason.empty() &&
          Missing == (!O.T.hasLayout() || !O.T.dtypeKnown()))
        Out.Value.markUnknown(O.T.UnknownReason);
  if (!Dev)
    Out.Value.markUnknown("device of an input is unknown");
  // The common dtype, then what the op makes of it.
  std::optional<DType> Common = resultType(Ops);
  std::optional<DType> Type = Common;
  // A comparison's output is bool whatever its operands' dtypes are
  // (comparison_op: the output is created as kBool).
  if (Rule == ElemDType::Bool)
    Type = DType::Bool;
  // Operands whose dtype is one parameter's: the result has it too, when
  // promotion cannot change it. A scalar operand, or an op that computes
  // in floating point, keeps it only for a floating parameter (stated).
  std::string Follow;
  if (!Common && Rule != ElemDType::Bool) {
    std::string Param;
    std::vector<std::string> Others; // other parameters' dtypes
    bool Scalars = false, Same = true;
    for (const ElemOperand &O : Ops) {
      if (O.IsScalar) {
        Scalars = true;
        Same &= O.ScalarType && !isComplex(*O.ScalarType);
      } else if (O.T.Type || O.T.TypeOf.empty()) {
        Same = false;
      } else if (Param.empty()) {
        Param = O.T.TypeOf;
      } else if (Param != O.T.TypeOf &&
                 std::find(Others.begin(), Others.end(), O.T.TypeOf) == Others.end()) {
        Others.push_back(O.T.TypeOf);
      }
    }
    // Two parameters' dtypes (x * cos_t): promotion has no name for the
    // result in the report, so it follows x where they are one dtype,
    // stated; a mixed-precision caller sees the assumption broken.
    for (const std::string &Other : Others)
      Same = Same && requireCondition(Other + ".scalar_type() == " + Param +
                                      ".scalar_type()");
    if (Same && !Param.empty()) {
      if (Rule == ElemDType::Bool)
        Type = DType::Bool;
      else if ((!Scalars && Rule == ElemDType::Promote) ||
               requireFloatingParameter(Param))
        Follow = Param;
    }
  }
  if (Common) {
    switch (Rule) {
    case ElemDType::Promote:
      break;
    case ElemDType::FloatPromote:
      if (isIntegral(*Common, true))
        Type = DType::Float32;
      break;
    case ElemDType::Bool:
      Type = DType::Bool;
      break;
    case ElemDType::FloatOnly:
      if (!isFloating(*Common)) {
        OpOutcome U = unknownCopy("'" + Op + "' of a " + dtypeName(*Common) +
                                      " tensor is not modelled",
                                  std::nullopt, Dev);
        return U;
      }
      break;
    }
  } else if (!Type && Follow.empty()) {
    Out.Value.markUnknown("dtype of an operand is unknown");
  }
  Out.Value.Type = Type;
  if (!Type)
    Out.Value.TypeOf = Follow;
  // The broadcast shape and TensorIterator's output layout.
  // An operand known in its sizes but not its strides (a gradient from
  // autograd::grad) still fixes the broadcast shape; only the permutation
  // TensorIterator gives the output follows the strides. The output is
  // dense either way, so its bytes follow from the shape (Interpreter).
  std::optional<Shape> Broadcast = Shape{};
  std::vector<IterOperand> Iter;
  std::vector<const TensorValue *> Tensors;
  bool StridesKnown = true;
  for (const ElemOperand &O : Ops) {
    if (O.IsScalar) {
      Iter.push_back({Shape{}, Shape{}});
      continue;
    }
    Tensors.push_back(&O.T);
    if (!O.T.Sizes) {
      Out.Value.markUnknown(shapeReason(O.T));
      Broadcast.reset();
      continue;
    }
    StridesKnown = StridesKnown && O.T.Strides.has_value();
    if (Broadcast) {
      Shape Both;
      Tri Broadcasts = broadcastShapes(*Broadcast, *O.T.Sizes, Both);
      if (Broadcasts == Tri::False)
        return throws("The size of tensor a must match the size of tensor b "
                      "at a non-singleton dimension (" + Op + ": shapes do "
                      "not broadcast)");
      if (Broadcasts == Tri::Unknown) {
        Out.Value.markUnknown("whether " + dimsText(*Broadcast) + " and " +
                              dimsText(*O.T.Sizes) +
                              " broadcast is not decidable");
        Broadcast.reset();
      } else {
        Broadcast = std::move(Both);
      }
    }
    if (O.T.Strides)
      Iter.push_back({*O.T.Sizes, *O.T.Strides});
  }
  if (Broadcast) {
    Out.Value.Sizes = *Broadcast;
    if (StridesKnown)
      Out.Value.Strides = tensorIteratorOutputStrides(*Broadcast, Iter);
    else
      Out.Value.markUnknown("the output layout TensorIterator picks follows "
                            "the strides of an input, which are not known");
    Out.Value.Offset = 0;
    if (StridesKnown && !Out.Value.Strides)
      Out.Value.markUnknown("the output layout TensorIterator picks is not "
                            "decidable");
  }
  Out.ReadBytes = sumBytes(Tensors);
  Out.WrittenBytes = Out.Value.logicalBytes();
  // On CPU, TensorIterator converts an input whose dtype differs from the
  // common dtype into a temporary first (compute_types).
  if (Dev && Dev->Kind == DeviceKind::CPU && Common) {
    std::optional<SymSize> Transient = SymSize(0);
    for (const TensorValue *T : Tensors)
      if (T->Type && *T->Type != *Common && T->Sizes)
        Transient = addSizes(Transient, denseBytes(*T->Sizes, *Common));
    Out.TransientBytes = Transient;
  }
  return Out;
}

OpOutcome reverseScalarOp(const std::string &Op, const ElemOperand &Scalar,
                          const TensorValue &T, bool TrueDivide) {
  OpOutcome Out = likeFactory(T, std::nullopt, std::nullopt,
                              MemoryFormat::Preserve, FillKind::Filled);
  if (Out.Kind == OpKind::Throws)
    return Out;
  Out.Kind = OpKind::Copy;
  std::optional<DType> Common =
      resultType({ElemOperand::tensor(T), Scalar});
  if (Common && TrueDivide && isIntegral(*Common, true))
    Common = DType::Float32;
  if (Common && T.Type && !canCast(*Common, *T.Type))
    return throws(std::string("result type ") + dtypeName(*Common) +
                  " can't be cast to the desired output type " +
                  dtypeName(*T.Type));
  if (!Common)
    Out.Value.markUnknown("dtype of an operand is unknown");
  // empty_like + fill_ writes the output once, the in-place op reads it
  // and the tensor and writes it again.
  auto N = Out.Value.logicalBytes();
  auto TB = T.logicalBytes();
  Out.WrittenBytes = mulSizes(SymSize(2), N);
  Out.ReadBytes = addSizes(N, TB);
  Out.Note = "scalar " + Op + " tensor: empty_like(tensor).fill_(scalar)." +
             Op + "_(tensor), so the result keeps the tensor's dtype";
  return Out;
}

OpOutcome inPlace(const std::string &Op, const TensorValue &Self,
                  const std::vector<ElemOperand> &Others, ElemDType ResultRule,
                  bool ReadsSelf) {
  OpOutcome Out;
  Out.Kind = OpKind::InPlace;
  Out.Value = Self;
  Out.Note = "in-place: returns self";
  if (Self.Sizes && Self.Strides) {
    // An expanded (internally overlapping) self cannot be written in place
    // by most ops; which ones check is not modelled.
    for (size_t K = 0; K < Self.Sizes->size(); ++K) {
      Tri Overlaps = triAnd(sizeEq((*Self.Strides)[K], 0),
                            sizeGt((*Self.Sizes)[K], 1));
      if (Overlaps != Tri::False) {
        OpOutcome U;
        U.Kind = OpKind::Unknown;
        U.Value.markUnknown(
            Overlaps == Tri::True
                ? "in-place '" + Op + "' on a tensor whose elements overlap "
                  "is not modelled"
                : "whether in-place '" + Op + "' writes a tensor whose "
                  "elements overlap is not decidable");
        return U;
      }
    }
  }
  for (const ElemOperand &O : Others) {
    if (O.IsScalar || !O.T.Sizes || !Self.Sizes)
      continue;
    Shape B;
    Tri Broadcasts = broadcastShapes(*Self.Sizes, *O.T.Sizes, B);
    // The broadcast shape must be self's own (sizes equal by the facts).
    Tri Keeps = Broadcasts == Tri::True ? triOf(B.size() == Self.Sizes->size())
                                        : Broadcasts;
    for (size_t K = 0; Keeps == Tri::True && K < B.size(); ++K)
      Keeps = triAnd(Keeps, requireEq(B[K], (*Self.Sizes)[K]));
    if (Keeps == Tri::Unknown) {
      OpOutcome U;
      U.Kind = OpKind::Unknown;
      U.Value.markUnknown("whether " + dimsText(*O.T.Sizes) +
                          " broadcasts to self's " + dimsText(*Self.Sizes) +
                          " in in-place '" + Op + "' is not decidable");
      return U;
    }
    if (Keeps == Tri::False)
      return throws("output with shape " + dimsText(*Self.Sizes) +
                    " doesn't match the broadcast shape " +
                    (Broadcasts == Tri::True ? dimsText(B)
                                             : std::string("(none)")));
  }
  if (ResultRule != ElemDType::Bool && Self.Type) {
    std::vector<ElemOperand> All = {ElemOperand::tensor(Self)};
    All.insert(All.end(), Others.begin(), Others.end());
    std::optional<DType> Common = resultType(All);
    if (Common && ResultRule == ElemDType::FloatPromote &&
        isIntegral(*Common, true))
      Common = DType::Float32;
    if (Common && !canCast(*Common, *Self.Type))
      return throws(std::string("result type ") + dtypeName(*Common) +
                    " can't be cast to the desired output type " +
                    dtypeName(*Self.Type));
  }
  std::vector<const TensorValue *> Reads;
  if (ReadsSelf)
    Reads.push_back(&Self);
  for (const ElemOperand &O : Others)
    if (!O.IsScalar)
      Reads.push_back(&O.T);
  Out.ReadBytes = sumBytes(Reads);
  Out.WrittenBytes = Self.logicalBytes();
  return Out;
}

} // namespace tma
