// Helpers shared by the loss rules (see LossCommon.h).
#include "model/ops/LossCommon.h"

#include <algorithm>

namespace tma {
namespace loss {

using namespace detail;



/// The reduction argument: at::Reduction's integer (None 0, Mean 1, Sum
/// 2) or an options object's enumtype ("none", "mean", "sum"; "batchmean"
/// where AllowBatchMean: F::kl_div sums, then divides by the batch size, a
/// 0-d result like Sum). Absent: Mean, the default of every spelling.
std::optional<Reduction> readReduction(const ArgValue *A, bool AllowBatchMean,
                                       std::string &Why) {
  if (!A || A->K == ArgValue::Kind::Absent)
    return Reduction::Mean;
  if (A->K == ArgValue::Kind::Int) {
    switch (A->Int) {
    case 0:
      return Reduction::None;
    case 1:
      return Reduction::Mean;
    case 2:
      return Reduction::Sum;
    }
    Why = "reduction " + std::to_string(A->Int) +
          " is not one of at::Reduction's None, Mean and Sum";
    return std::nullopt;
  }
  if (A->K == ArgValue::Kind::Other && A->Str) {
    if (*A->Str == "none")
      return Reduction::None;
    if (*A->Str == "mean")
      return Reduction::Mean;
    if (*A->Str == "sum")
      return Reduction::Sum;
    if (*A->Str == "batchmean" && AllowBatchMean)
      return Reduction::Sum;
  }
  Why = "the reduction could not be derived";
  return std::nullopt;
}

/// The options object of a functional spelling (argument OptionsArg), or
/// null for the positional spelling.
const ArgValue *optionsOf(const OpCall &C, size_t OptionsArg) {
  const ArgValue &O = C.arg(OptionsArg);
  return O.K == ArgValue::Kind::NNOptions ? &O : nullptr;
}

/// A tensor argument or option that may be absent (weight, pos_weight):
/// the tensor, or null when absent. Unknown (given but not derived) sets
/// Why.
const TensorValue *optionalTensor(const ArgValue *A, const std::string &Name,
                                  std::string &Why) {
  if (!A || A->K == ArgValue::Kind::Absent)
    return nullptr;
  if (A->K == ArgValue::Kind::Tensor)
    return &A->TV;
  Why = Name + " could not be derived";
  return nullptr;
}

/// The dtype as c10 prints it in messages: "Long", "Float".
std::string c10Name(DType T) {
  std::string Cpp = dtypeCpp(T); // "at::kLong"
  return Cpp.rfind("at::k", 0) == 0 ? Cpp.substr(5) : Cpp;
}

bool answeredFloating(DType T) {
  return T == DType::Float32 || T == DType::Float64;
}

/// The loss's dtype into Into: the input's, float32 or float64 (or a
/// parameter's dtype, then stated to be floating), every tensor in Same of
/// that dtype too. False with Why otherwise.
bool lossDType(const std::string &Op, const TensorValue &In,
               const std::vector<const TensorValue *> &Same, TensorValue &Into,
               std::string &Why) {
  std::vector<const TensorValue *> All = {&In};
  All.insert(All.end(), Same.begin(), Same.end());
  commonDType(All, Into);
  for (const TensorValue *T : All)
    if (T->Type && Into.Type && *T->Type != *Into.Type) {
      Why = Op + " of " + dtypeName(*Into.Type) + " and " +
            dtypeName(*T->Type) + " operands is not modelled (mixed dtypes)";
      return false;
    }
  if (!Into.dtypeKnown()) {
    Why = "dtype of an input is unknown";
    return false;
  }
  if (Into.Type && !answeredFloating(*Into.Type)) {
    Why = Op + " of a " + std::string(dtypeName(*Into.Type)) +
          " input is not modelled";
    return false;
  }
  if (!Into.Type && !requireFloatingParameter(Into.TypeOf)) {
    Why = Op + " needs a floating input; " + Into.TypeOf +
          "'s dtype is unknown";
    return false;
  }
  return true;
}

/// Class indices: LibTorch's CPU kernels read int64 (a parameter's dtype is
/// stated to be int64). False with Why otherwise.
bool classIndexTarget(const std::string &Op, const TensorValue &Target,
                      std::string &Why) {
  if (Target.Type) {
    if (*Target.Type == DType::Int64)
      return true;
    Why = Op + " with a " + std::string(dtypeName(*Target.Type)) +
          " class-index target is not modelled (int64 is)";
    return false;
  }
  if (!Target.TypeOf.empty() &&
      requireCondition(Target.TypeOf + ".scalar_type() == at::kLong"))
    return true;
  Why = "dtype of the target is unknown";
  return false;
}

/// The loss's result: a fresh 0-d tensor for Mean/Sum, else Unreduced
/// sizes with Strides (unset: unknown because LayoutWhy). Typed carries the
/// dtype (lossDType).
OpOutcome lossResult(Reduction R, const TensorValue &Typed,
                     std::optional<Device> Dev, const Shape &Unreduced,
                     const std::optional<Shape> &Strides,
                     const std::string &LayoutWhy,
                     std::vector<const TensorValue *> Reads) {
  bool Reduced = R != Reduction::None;
  OpOutcome Out = freshContiguous(Reduced ? Shape{} : Unreduced, Typed.Type,
                                  Dev, Typed.TypeOf);
  if (!Reduced) {
    if (Strides) {
      Out.Value.Strides = *Strides;
    } else {
      Out.Value.Strides.reset();
      Out.Value.markUnknown(LayoutWhy);
    }
  }
  Reads.erase(std::remove(Reads.begin(), Reads.end(), nullptr), Reads.end());
  Out.ReadBytes = sumBytes(Reads);
  Out.WrittenBytes = Out.Value.logicalBytes();
  Out.TransientBytes.reset();
  Out.Note = LossNote;
  return Out;
}

/// A loss of operands whose shapes are not known: a Mean or Sum result is
/// still 0-d wherever the op does not throw; its dtype is the input's when
/// every operand has it. Its storage is the unreduced loss's where ATen
/// reduces into it (unknown then), else the 0-d result's own.
OpOutcome reducedOfUnknownShape(const std::string &Op, Reduction R,
                                bool ReducesInPlace, const TensorValue &In,
                                const std::vector<const TensorValue *> &Others,
                                const std::string &Why) {
  if (R == Reduction::None)
    return unknownCopy(Why, std::nullopt, In.Dev);
  TensorValue Typed;
  std::string TypeWhy;
  if (!lossDType(Op, In, Others, Typed, TypeWhy))
    Typed = TensorValue();
  OpOutcome Out = freshContiguous(Shape{}, Typed.Type, In.Dev, Typed.TypeOf);
  Out.Value.markUnknown(Why);
  Out.ReadBytes.reset();
  Out.TransientBytes.reset();
  Out.StorageBytesUnknown = ReducesInPlace;
  if (ReducesInPlace)
    Out.WrittenBytes.reset();
  Out.Note = LossNote;
  return Out;
}

/// Whether two shapes are equal: rank, then every size (undecidable
/// symbolic sizes give Unknown).
Tri sameShape(const Shape &A, const Shape &B) {
  if (A.size() != B.size())
    return Tri::False;
  Tri All = Tri::True;
  for (size_t K = 0; K < A.size(); ++K)
    All = triAnd(All, sizeEq(A[K], B[K]));
  return All;
}

/// Whether Small broadcasts into Into without changing it (an in-place
/// `loss.mul_(weight)`).
Tri broadcastsInto(const Shape &Small, const Shape &Into) {
  Shape Both;
  Tri B = broadcastShapes(Into, Small, Both);
  if (B != Tri::True)
    return B;
  return sameShape(Both, Into);
}

bool allContiguous(const std::vector<const TensorValue *> &Ts) {
  for (const TensorValue *T : Ts)
    if (T && !T->contiguous().value_or(false))
      return false;
  return true;
}

/// A double argument or option (beta, delta, label_smoothing): Default
/// when absent; Why when given but not derived.
std::optional<double> readNumber(const ArgValue *A, double Default,
                                 const std::string &Name, std::string &Why) {
  if (!A || A->K == ArgValue::Kind::Absent)
    return Default;
  if ((A->K == ArgValue::Kind::Number || A->K == ArgValue::Kind::Scalar) &&
      A->Number)
    return *A->Number;
  if (A->K == ArgValue::Kind::Int)
    return static_cast<double>(A->Int);
  Why = Name + " could not be derived";
  return std::nullopt;
}

} // namespace loss
} // namespace tma
