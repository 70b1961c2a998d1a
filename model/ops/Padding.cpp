// Padding (LibTorch 1.13, CPU; NN family, beside NN.cpp):
// reflection_pad1d / reflection_pad2d / replication_pad1d /
// replication_pad2d, one rule; pad and torch::nn::functional::pad, which
// run them or constant_pad_nd.
#include "model/Ops.h"
#include "model/ops/LossCommon.h"
#include "model/ops/OpCodes.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>
#include <string>

namespace tma {

using namespace detail;

namespace {

/// "Dimension out of range ... but got D", as Tensor::size(D) throws it.
std::string sizeRangeError(int64_t Rank, int64_t D) {
  if (Rank == 0)
    return "Dimension specified as " + std::to_string(D) +
           " but tensor has no dimensions";
  std::string M = rangeError(Rank);
  return M.substr(0, M.size() - 1) + ", but got " + std::to_string(D) + ")";
}

/// Whether size S is 0: decided, or stated non-empty (S >= 1).
Tri sizeIsZero(const SymSize &S) { return shapeIsEmpty({S}); }

} // namespace

// reflection_pad1d / reflection_pad2d / replication_pad1d /
// replication_pad2d(padding) in LibTorch 1.13 (ReflectionPad.cpp,
// ReplicationPadding.cpp): the last 1 or 2 dims padded by padding (left,
// right[, top, bottom]), the others kept; a fresh contiguous tensor of
// self's dtype, whatever self's layout (a channels-last self too). Checks,
// in LibTorch's order:
// - replication: the padding has 2 or 4 elements ("padding size is
//   expected to be 4"); reflection reads padding[0..3] unchecked (a
//   shorter list is undefined behaviour: not modelled);
// - the 2d ops read self.size(1) and self.size(2) first (a 2-D self
//   throws "Dimension out of range");
// - the rank: 2-D or 3-D (1d), 3-D or 4-D (2d); the dims after the batch
//   must not be empty (replication: every dim of a non-batch self;
//   reflection: every dim but the channels);
// - reflection: each pad smaller than its input dim ("Argument #4: Padding
//   size should be less than the corresponding input dimension");
// - the output's padded dims: reflection_pad1d and replication_pad1d need
//   W >= 1; the 2d ops throw only when both H and W are below 1, and a
//   negative one fails in the resize;
// - the CPU kernels take float32, float64 and complex (not float16,
//   bfloat16, integers or bool: "not implemented for 'Half'").
// On the CPU the kernels read input_.contiguous(): a non-contiguous self is
// copied into a dense tensor freed inside the op.
namespace {

/// The four ops' rule: Reflect or replicate, over the last Dims (1 or 2)
/// dims, with this padding.
RuleResult padLastDims(const OpCall &C, bool Reflect, int64_t Dims,
                       const std::optional<DimList> &Pad) {
  std::string Kernel = std::string(Reflect ? "reflection_pad" : "replication_pad") +
                       (Dims == 2 ? "2d" : "1d") + (Reflect ? "" : "_cpu");
  const TensorValue &In = C.self().TV;
  if (!Pad)
    return notModelled(C, "padding could not be derived");
  if (static_cast<int64_t>(Pad->size()) != 2 * Dims) {
    if (!Reflect)
      return one(throws("padding size is expected to be " + std::to_string(2 * Dims)));
    return notModelled(C, C.Written + " with " + std::to_string(Pad->size()) +
                              " paddings reads past them in LibTorch 1.13: "
                              "not modelled");
  }
  if (!In.Sizes)
    return notModelled(C, shapeReason(In));
  const Shape &Sizes = *In.Sizes;
  int64_t Rank = static_cast<int64_t>(Sizes.size());
  if (Dims == 2)
    for (int64_t D : {1, 2})
      if (Rank <= D)
        return one(throws(sizeRangeError(Rank, D)));
  // The rank and the dims that must not be empty.
  bool Batch = Rank == Dims + 2;
  if (Rank != Dims + 1 && !Batch)
    return one(throws(std::string(Reflect ? "" : "Expected ") +
                      std::to_string(Dims + 1) + "D or " + std::to_string(Dims + 2) +
                      "D (batch mode) tensor " +
                      (Reflect ? "expected for input"
                               : "with possibly 0 batch size and other non-zero "
                                 "dimensions for input") +
                      ", but got: " + dimsText(Sizes)));
  int64_t FirstChecked = Batch || Reflect ? 1 : 0;
  for (int64_t D = FirstChecked; D < Rank; ++D) {
    Tri Zero = sizeIsZero(Sizes[D]);
    if (Zero == Tri::True)
      return one(throws(std::string(Reflect ? "" : "Expected ") +
                        std::to_string(Dims + 1) + "D or " +
                        std::to_string(Dims + 2) + "D (batch mode) tensor " +
                        (Reflect ? "expected for input"
                                 : "with possibly 0 batch size and other non-zero "
                                   "dimensions for input") +
                        ", but got: " + dimsText(Sizes)));
    if (Zero == Tri::Unknown)
      return notModelled(C, "whether " + sizeText(Sizes[D]) + " is 0 could not "
                            "be decided");
  }
  // Padded dims: W is the last, H the one before; (Pad[2k], Pad[2k+1])
  // pads the k-th from the last.
  Shape OutSizes = Sizes;
  std::vector<Tri> AtLeastOne, NonNegative;
  for (int64_t K = 0; K < Dims; ++K) {
    int64_t D = Rank - 1 - K;
    int64_t Lo = (*Pad)[2 * K], Hi = (*Pad)[2 * K + 1];
    if (Reflect) {
      Tri Fits = requireLt(SymSize(Lo), Sizes[D]);
      if (Fits == Tri::True)
        Fits = requireLt(SymSize(Hi), Sizes[D]);
      if (Fits == Tri::False) {
        std::string Of = Dims == 1 ? dimsText(Sizes) : std::to_string(Rank);
        return one(throws("Argument #" + std::to_string(4 + 2 * K) +
                          ": Padding size should be less than the corresponding "
                          "input dimension, but got: padding (" +
                          std::to_string(Lo) + ", " + std::to_string(Hi) +
                          ") at dimension " + std::to_string(D) + " of input " + Of));
      }
      if (Fits == Tri::Unknown)
        return notModelled(C, undecided("<", SymSize(std::max(Lo, Hi)), Sizes[D]));
    }
    OutSizes[D] = Sizes[D] + (Lo + Hi);
    AtLeastOne.push_back(sizeGe(OutSizes[D], SymSize(1)));
    NonNegative.push_back(sizeGe(OutSizes[D], SymSize(0)));
  }
  auto TooSmall = [&]() {
    if (Dims == 1)
      return std::string(Reflect ? "2" : "") + "input (W: " + sizeText(Sizes[Rank - 1]) +
             (Reflect ? ")" : ") ") + "is too small. Calculated output W: " +
             sizeText(OutSizes[Rank - 1]);
    return "input (H: " + sizeText(Sizes[Rank - 2]) + ", W: " +
           sizeText(Sizes[Rank - 1]) + (Reflect ? ")" : " ) ") +
           "is too small." + (Reflect ? "  " : " ") + "Calculated output H: " +
           sizeText(OutSizes[Rank - 2]) + " W: " + sizeText(OutSizes[Rank - 1]);
  };
  if (Dims == 1) {
    if (AtLeastOne[0] == Tri::False)
      return one(throws(TooSmall()));
    if (AtLeastOne[0] == Tri::Unknown)
      return notModelled(C, undecided(">=", OutSizes[Rank - 1], SymSize(1)));
  } else {
    if (AtLeastOne[0] == Tri::False && AtLeastOne[1] == Tri::False)
      return one(throws(TooSmall()));
    for (int64_t K = 0; K < 2; ++K) {
      if (NonNegative[K] == Tri::False)
        return one(throws(Reflect ? "numel: integer multiplication overflow"
                                  : "Trying to create tensor with negative dimension " +
                                        sizeText(OutSizes[Rank - 1 - K]) + ": " +
                                        dimsText(OutSizes)));
      if (NonNegative[K] == Tri::Unknown || AtLeastOne[K] == Tri::Unknown)
        return notModelled(C, undecided(">=", OutSizes[Rank - 1 - K], SymSize(1)));
    }
  }
  // The kernels' dtypes.
  bool Universal = In.Type && (*In.Type == DType::Float32 || *In.Type == DType::Float64 ||
                               *In.Type == DType::Complex64 ||
                               *In.Type == DType::Complex128);
  if (In.Type && !Universal) {
    if (In.Dev && In.Dev->Kind == DeviceKind::CPU)
      return one(throws("\"" + Kernel + "\" not implemented for '" +
                        loss::c10Name(*In.Type) + "'"));
    return notModelled(C, C.Written + " of " + dtypeName(*In.Type) +
                              " off the CPU is not modelled");
  }
  OpOutcome Out = freshContiguous(OutSizes, In.Type, In.Dev, In.TypeOf);
  Out.ReadBytes = In.logicalBytes();
  bool OnCpu = In.Dev && In.Dev->Kind == DeviceKind::CPU;
  Tri Contiguous = In.Strides ? isContiguous(Sizes, *In.Strides) : Tri::Unknown;
  if (!OnCpu || Contiguous == Tri::Unknown || !In.Type)
    Out.TransientBytes.reset();
  else if (Contiguous == Tri::False) {
    auto Copy = denseBytes(Sizes, *In.Type);
    if (Copy)
      Out.TransientBytes = *Copy;
    else
      Out.TransientBytes.reset();
  }
  return one(Out);
}

// constant_pad_nd (ConstantPadNd.cpp, 1.13), which pad's "constant" mode
// runs: pad (lo, hi) pairs from the last dim back; with every pad >= 0 and
// one > 0 the output is empty(new_shape, self.suggest_memory_format()),
// filled with the value and the input copied into its middle (no
// temporary); each padded size is the input's plus its two pads. A
// negative pad (narrow first) and an all-zero one (a clone of self) are
// not modelled.
RuleResult constantPad(const OpCall &C, const DimList &Pad) {
  const TensorValue &In = C.self().TV;
  const Shape &Sizes = *In.Sizes;
  int64_t Rank = static_cast<int64_t>(Sizes.size());
  bool AnyPositive = false;
  for (int64_t P : Pad) {
    if (P < 0)
      return notModelled(C, "constant padding with a negative pad (which "
                            "narrows the input) is not modelled");
    AnyPositive |= P > 0;
  }
  if (!AnyPositive)
    return notModelled(C, "constant padding by 0 everywhere (a clone of the "
                          "input) is not modelled");
  Shape OutSizes = Sizes;
  for (size_t K = 0; 2 * K < Pad.size(); ++K)
    OutSizes[Rank - 1 - K] = Sizes[Rank - 1 - K] + (Pad[2 * K] + Pad[2 * K + 1]);
  OpOutcome Out = freshContiguous(OutSizes, In.Type, In.Dev, In.TypeOf);
  // suggest_memory_format: channels-last for a 4-D input laid out so.
  if (Rank == 4) {
    Tri Last = In.Strides ? suggestsChannelsLast(Sizes, *In.Strides) : Tri::Unknown;
    if (Last == Tri::Unknown)
      return notModelled(C, "whether the input is laid out channels-last is "
                            "not known");
    if (Last == Tri::True)
      Out.Value.Strides = channelsLastStrides(OutSizes);
  } else if (Rank == 5) {
    return notModelled(C, "constant padding of a 5-D input (channels-last-3d "
                          "layouts) is not modelled");
  }
  Out.ReadBytes = In.logicalBytes();
  Out.WrittenBytes = Out.Value.logicalBytes();
  return one(Out);
}

} // namespace

RuleResult rule_reflection_pad2d(const OpCall &C) {
  const OpCode Code = C.Op->Code;
  bool Reflect = Code == OpCode::reflection_pad2d || Code == OpCode::reflection_pad1d;
  int64_t Dims = Code == OpCode::reflection_pad2d || Code == OpCode::replication_pad2d
                     ? 2 : 1;
  const ArgValue &P = C.arg(1);
  return padLastDims(C, Reflect, Dims, P.known() ? P.dims() : std::nullopt);
}

// pad(pad, mode = "constant", value) and torch::nn::functional::pad(x,
// PadFuncOptions(pad).mode(..).value(..)), which in 1.13 calls
// at::_pad_enum with the value only when it is not 0 (PadNd.cpp,
// _pad_enum): the padding's length must be even and at most twice self's
// rank; "reflect" and "replicate" take no value other than 0 and run
// reflection_pad1d/2d or replication_pad1d/2d by the padding's length (2
// for a 2-D or 3-D self, 4 for a 3-D or 4-D one), the rules above; any
// other pairing throws NotImplementedError. Constant padding is
// constant_pad_nd (constantPad above); circular padding and the 3d ops
// are not modelled.
RuleResult rule_pad(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  std::optional<DimList> Pad;
  std::optional<std::string> Mode;
  std::optional<double> Value; // a fill value LibTorch sees, when known
  bool ValueKnown = true;
  const ArgValue &A1 = C.arg(1);
  if (A1.K == ArgValue::Kind::NNOptions) {
    const ArgValue *P = A1.option("pad"), *M = A1.option("mode"),
                   *V = A1.option("value");
    if (!A1.Named->Complete)
      return notModelled(C, "pad options could not be derived");
    if (P && P->K == ArgValue::Kind::IntList)
      Pad = P->dims();
    if (M && M->K == ArgValue::Kind::Other && M->Str)
      Mode = *M->Str;
    if (V && V->K == ArgValue::Kind::Number && V->Number) {
      if (*V->Number != 0.0)
        Value = *V->Number;
    } else if (V && V->K != ArgValue::Kind::Absent) {
      ValueKnown = false;
    }
  } else {
    if (A1.known())
      Pad = A1.dims();
    const ArgValue &M = C.arg(2), &V = C.arg(3);
    if (M.known() && M.Str)
      Mode = *M.Str;
    if (V.given()) {
      if (V.known() && V.Number)
        Value = *V.Number;
      else if (V.K != ArgValue::Kind::Absent)
        ValueKnown = false;
    }
  }
  if (!Pad)
    return notModelled(C, "the padding could not be derived");
  if (!Mode)
    return notModelled(C, "the padding mode could not be derived");
  if (!In.Sizes)
    return notModelled(C, shapeReason(In));
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  int64_t Length = static_cast<int64_t>(Pad->size());
  if (Length % 2 != 0)
    return one(throws("Padding length must be divisible by 2"));
  if (Length > 2 * Rank)
    return one(throws("Padding length too large"));
  if (*Mode == "constant") {
    if (!ValueKnown)
      return notModelled(C, "the padding value could not be derived");
    return constantPad(C, *Pad);
  }
  if (*Mode != "reflect" && *Mode != "replicate")
    return notModelled(C, "'" + *Mode + "' padding is not modelled");
  if (!ValueKnown)
    return notModelled(C, "the padding value could not be derived");
  if (Value && *Value != 0.0)
    return one(throws("Padding mode \"" + *Mode +
                      "\" doesn't take in value argument"));
  bool Reflect = *Mode == "reflect";
  if (Length == 2 && (Rank == 2 || Rank == 3))
    return padLastDims(C, Reflect, 1, Pad);
  if (Length == 4 && (Rank == 3 || Rank == 4))
    return padLastDims(C, Reflect, 2, Pad);
  if (Length == 6 && (Rank == 4 || Rank == 5))
    return notModelled(C, "3-D " + *Mode + " padding is not modelled");
  return one(throws("Only 2D, 3D, 4D, 5D padding with non-constant padding are "
                    "supported for now"));
}

} // namespace tma
