// Helpers shared by the op rule files (model/ops/*.cpp). Not part of the
// model's interface.
#pragma once

#include "model/Ops.h"

#include "model/Decide.h"

#include <sstream>
#include <string>

namespace tma {
namespace detail {

/// Sum of the inputs' logical bytes; nullopt when one is unknown or the sum
/// leaves int64.
std::optional<SymSize> sumBytes(const std::vector<const TensorValue *> &Ins);
/// A fresh contiguous output of Sizes; Type/Dev may be unknown.
/// TypeOf: the parameter the dtype follows when Type is not known.
OpOutcome freshContiguous(const Shape &Sizes, std::optional<DType> Type,
                          std::optional<Device> Dev,
                          const std::string &TypeOf = "");
/// The dtype of an op whose operands must all have one dtype (matmul,
/// cat): known when one operand's is, or a parameter's; the run-time
/// requirement is stated as an assumption when only parameters show it.
/// Into.Type / Into.TypeOf stay empty when neither is known.
void commonDType(const std::vector<const TensorValue *> &Ins, TensorValue &Into);
/// An output whose shape cannot be derived: a copy of unknown size.
OpOutcome unknownCopy(const std::string &Reason, std::optional<DType> Type,
                      std::optional<Device> Dev);
/// The reason an input's shape is unknown.
std::string shapeReason(const TensorValue &T);
/// Both dtypes known and equal, as the BLAS-backed ops require; else the
/// outcome to return (a throw, or unknown).
std::optional<OpOutcome> sameDTypeOrThrow(const TensorValue &A,
                                          const TensorValue &B,
                                          const char *Op);
/// The answer needs parameter Param's dtype (a TensorValue::TypeOf) to be
/// floating: stated as an assumption; false when it cannot be.
bool requireFloatingParameter(const std::string &Param);
/// An index tensor whose dtype is a parameter's (`target.scalar_type()`):
/// gather throws unless it is int64 (index_select and embedding also take
/// int32), so the answer holds where `target.scalar_type() == at::kLong`
/// does, stated (int32 is the caller's other choice, not the one stated;
/// the output's dtype does not depend on it). False when
/// there is no ShapeEnv to state it in; true when there is nothing to state.
bool requireIndexParameter(const TensorValue &Index);
/// A count only a run knows (how many elements nonzero() finds), as a
/// size symbol of the function's ShapeEnv (`u0`) bounded by the elements
/// it counts among; nullopt when there is no ShapeEnv to hold it.
std::optional<SymSize> dataDependentCount(const std::string &Op,
                                          const SymSize &Among);
/// c10::canCast.
bool canCast(DType From, DType To);
/// A view with exactly this geometry.
OpOutcome viewWith(const TensorValue &In, Shape Sizes, Shape Strides,
                   SymSize Offset);

inline std::string dimsText(const Shape &D) {
  std::ostringstream OS;
  OS << '[';
  for (size_t I = 0; I < D.size(); ++I)
    OS << (I ? ", " : "") << D[I];
  OS << ']';
  return OS.str();
}

/// The result of a view op keeps dtype and device; geometry is filled in by
/// the caller when the input's layout is known.
inline OpOutcome viewOf(const TensorValue &In) {
  OpOutcome Out;
  Out.Kind = OpKind::View;
  keepDType(Out.Value, In);
  Out.Value.Dev = In.Dev;
  Out.Value.UnknownReason = In.UnknownReason;
  Out.ReadBytes = SymSize(0);
  Out.WrittenBytes = SymSize(0);
  return Out;
}

inline OpOutcome selfOf(const TensorValue &In, const std::string &Note) {
  OpOutcome Out;
  Out.Kind = OpKind::Self;
  Out.Value = In;
  Out.ReadBytes = SymSize(0);
  Out.WrittenBytes = SymSize(0);
  Out.Note = Note;
  return Out;
}

/// The scratch block copy_ allocates to copy a transposed matrix on the
/// CPU (Copy.cpp, copy_transpose_valid and copy_same_type_transpose_):
/// when the destination Out is contiguous, In is 2-D with strides (1,
/// size(0)), both have one dtype and device CPU and Out has at least 60 * 60
/// elements, a buffer of 60 x 60 elements (120 x 120 for uint8) comes and
/// goes inside the copy. 0 when it does not; nullopt when which is unknown.
std::optional<SymSize> transposeCopyScratch(const TensorValue &In, const TensorValue &Out);
inline constexpr const char *TransposeScratchUnknown =
    "may copy a transposed matrix through LibTorch's 60 x 60 block buffer, "
    "which it does on the CPU only: the input's device, dtype or layout is not known";

/// A fresh tensor of In's shape with Strides; counts the copy's traffic.
/// TypeOf: the parameter Type follows when Type is not known.
inline OpOutcome copyOf(const TensorValue &In, const std::optional<Shape> &Strides,
                 std::optional<DType> Type, std::optional<Device> Dev,
                 const std::string &TypeOf = "") {
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  Out.Value.Sizes = In.Sizes;
  Out.Value.Strides = Strides;
  Out.Value.Offset = 0;
  Out.Value.Type = Type;
  if (!Type)
    Out.Value.TypeOf = TypeOf;
  Out.Value.Dev = Dev;
  Out.Value.UnknownReason = In.UnknownReason;
  if (!Strides)
    Out.Value.markUnknown("layout of the input is unknown");
  Out.ReadBytes = In.logicalBytes();
  Out.WrittenBytes = Out.Value.logicalBytes();
  Out.TransientBytes = transposeCopyScratch(In, Out.Value);
  if (!Out.TransientBytes)
    Out.TransientWhy = TransposeScratchUnknown;
  return Out;
}

inline bool needLayout(const TensorValue &In, OpOutcome &Out) {
  if (In.hasLayout())
    return true;
  Out.Value.markUnknown(In.UnknownReason.empty() ? "shape of the input is unknown"
                                                 : In.UnknownReason);
  return false;
}


/// On the CPU, LibTorch runs float16 and bfloat16 matrix products through
/// oneDNN, which takes scratch memory from LibTorch's allocator for the
/// duration of the op (measured: about 1 MiB for an [8, 4096] @ [4096,
/// 4096] bfloat16 matmul). Its size is not modelled, so the op's transient
/// bytes, and with them the peak, are unknown there.
inline void gemmScratch(OpOutcome &Out) {
  if (Out.Kind != OpKind::Copy)
    return;
  const auto &T = Out.Value.Type;
  const auto &D = Out.Value.Dev;
  bool LowPrecision = !T || *T == DType::Float16 || *T == DType::BFloat16;
  if (LowPrecision && (!D || D->Kind == DeviceKind::CPU)) {
    Out.TransientBytes.reset();
    Out.Note += std::string(Out.Note.empty() ? "" : "; ") +
                "the CPU's reduced-precision GEMM scratch is not modelled";
  }
}

/// A size as the messages print it: the integer, or its C++ expression.
inline std::string sizeText(const SymSize &S) { return S.toCpp(); }

/// An unknown outcome of Kind (the result of a view op, or a copy of
/// unknown size) because Question could not be decided.
inline OpOutcome undecidedOutcome(OpOutcome Out, const std::string &Question) {
  Out.Value.Sizes.reset();
  Out.Value.Strides.reset();
  Out.Value.Offset.reset();
  Out.Value.UnknownReason.clear();
  Out.Value.markUnknown(Question);
  if (Out.Kind == OpKind::Copy || Out.Kind == OpKind::Alloc) {
    Out.ReadBytes.reset();
    Out.WrittenBytes.reset();
  }
  return Out;
}

inline std::string rangeError(int64_t Rank) {
  int64_t R = Rank < 1 ? 1 : Rank;
  return "Dimension out of range (expected to be in range of [" +
         std::to_string(-R) + ", " + std::to_string(R - 1) + "])";
}

} // namespace detail
} // namespace tma
