// Layout-sensitive copies and casts: reshape (a view when computeStride
// allows, else a copy), contiguous, clone and to() (TensorConversions.cpp).
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

namespace detail {

std::optional<SymSize> transposeCopyScratch(const TensorValue &In, const TensorValue &Out) {
  // Each condition false leaves the copy to TensorIterator: nothing extra.
  if (!In.Sizes || !In.Strides)
    return In.rank() && *In.rank() != 2 ? std::optional<SymSize>(0) : std::nullopt;
  if (In.Sizes->size() != 2)
    return SymSize(0);
  const Shape &Sizes = *In.Sizes, &Strides = *In.Strides;
  std::vector<Tri> All = {sizeEq(Strides[0], 1), sizeEq(Strides[1], Sizes[0])};
  if (!Out.Strides || !Out.Sizes || Out.Strides->size() != Out.Sizes->size())
    All.push_back(Tri::Unknown);
  else
    All.push_back(isContiguous(*Out.Sizes, *Out.Strides));
  auto Numel = In.elementCount();
  Tri Large = Numel ? sizeGe(*Numel, 60 * 60) : Tri::Unknown;
  if (In.Type && Out.Type)
    All.push_back(*In.Type == *Out.Type ? Tri::True : Tri::False);
  else
    All.push_back(!In.TypeOf.empty() && In.TypeOf == Out.TypeOf ? Tri::True
                                                                 : Tri::Unknown);
  auto OnCpu = [](const std::optional<Device> &D) {
    return !D ? Tri::Unknown : D->Kind == DeviceKind::CPU ? Tri::True : Tri::False;
  };
  All.push_back(OnCpu(In.Dev));
  All.push_back(OnCpu(Out.Dev));
  if (Large == Tri::False || std::count(All.begin(), All.end(), Tri::False))
    return SymSize(0);
  if (std::count(All.begin(), All.end(), Tri::Unknown) || !Out.Type ||
      (Large == Tri::Unknown && !Numel))
    return std::nullopt;
  int64_t Block = *Out.Type == DType::UInt8 ? 120 : 60;
  SymSize Buffer(Block * Block * itemSize(*Out.Type));
  if (Large == Tri::True)
    return Buffer;
  // numel >= 3600 decides it: min(B, B * (numel / 3600)) is B or 0.
  return SymSize::min(Buffer, Buffer * SymSize::floorDiv(*Numel, SymSize(60 * 60)));
}

} // namespace detail

// reshape (TensorShape.cpp): _reshape_alias when computeStride succeeds,
// otherwise _unsafe_view(clone(Contiguous)).
OpOutcome reshape(const TensorValue &In, const Shape &Target) {
  // A packed tensor of unknown rank is always viewable: an alias.
  if (auto Flat = packedAsFlat(In)) {
    OpOutcome Out = viewPacked(*Flat, Target);
    if (Out.Kind == OpKind::View)
      Out.Note = "viewable: returns an alias";
    return Out;
  }
  if (!In.Sizes) {
    OpOutcome Out = unmodelled("reshape");
    Out.Value = TensorValue();
    keepDType(Out.Value, In);
    Out.Value.Dev = In.Dev;
    Out.Value.markUnknown(In.UnknownReason.empty() ? "shape of the input is unknown"
                                                   : In.UnknownReason);
    return Out;
  }
  Shape Sizes;
  SymSize N = numel(*In.Sizes);
  Tri Valid = inferSize(Target, N, Sizes);
  if (Valid == Tri::Unknown) {
    OpOutcome Out = unmodelled("reshape");
    keepDType(Out.Value, In);
    Out.Value.Dev = In.Dev;
    Out.Value.UnknownReason = "whether shape '" + dimsText(Target) +
                              "' is valid for input of size " + sizeText(N) +
                              " is not known";
    return Out;
  }
  if (Valid == Tri::False)
    return throws("shape '" + dimsText(Target) + "' is invalid for input of size " +
                  sizeText(N));
  // The shape is known; without the input's layout, or when whether it
  // is viewable is undecidable, whether reshape copies is not.
  auto Undecided = [&](const std::string &Why) {
    OpOutcome Out;
    Out.Kind = OpKind::Unknown;
    Out.Value.Sizes = Sizes;
    keepDType(Out.Value, In);
    Out.Value.Dev = In.Dev;
    Out.Value.markUnknown(Why);
    return Out;
  };
  if (!In.hasLayout())
    return Undecided(In.UnknownReason.empty()
                         ? "strides of the input are unknown, so whether "
                           "reshape copies is unknown"
                         : In.UnknownReason);
  Shape Strides;
  Tri Viewable = computeStride(*In.Sizes, *In.Strides, Sizes, Strides,
                                /*SameNumel=*/true);
  if (Viewable == Tri::Unknown)
    return Undecided("whether the input is viewable as " + dimsText(Sizes) +
                     " is not known, so whether reshape copies is unknown");
  if (Viewable == Tri::True) {
    OpOutcome Out = viewOf(In);
    Out.Value.Sizes = Sizes;
    Out.Value.Strides = Strides;
    Out.Value.Offset = In.Offset;
    Out.Note = "viewable: returns an alias";
    return Out;
  }
  OpOutcome Out = copyOf(In, contiguousStrides(Sizes), In.Type, In.Dev, In.TypeOf);
  // The copy is clone(Contiguous) in the input's shape, then a view.
  TensorValue Cloned = Out.Value;
  Cloned.Strides = contiguousStrides(*In.Sizes);
  Out.TransientBytes = transposeCopyScratch(In, Cloned);
  Out.TransientWhy = Out.TransientBytes ? "" : TransposeScratchUnknown;
  Out.Value.Sizes = Sizes;
  Out.Note = "input is not viewable as " + dimsText(Sizes) +
             ": reshape copies into a contiguous tensor";
  return Out;
}

// contiguous (TensorProperties.cpp): self when is_contiguous(fmt), else
// clone(fmt).
OpOutcome contiguous(const TensorValue &In, MemoryFormat Fmt) {
  // A packed tensor of unknown rank (a parameter, stated contiguous) is
  // contiguous whatever its rank: contiguous() returns it.
  if (Fmt == MemoryFormat::Contiguous && packedAsFlat(In))
    return selfOf(In, "already contiguous: returns self");
  if (!In.Sizes || !In.Strides) {
    OpOutcome Out = unmodelled("contiguous");
    Out.Value = TensorValue();
    Out.Value.Sizes = In.Sizes;
    keepDType(Out.Value, In);
    Out.Value.Dev = In.Dev;
    Out.Value.markUnknown(In.UnknownReason.empty()
                              ? "strides of the input are unknown, so whether "
                                "contiguous() copies is unknown"
                              : In.UnknownReason);
    return Out;
  }
  Tri Already = Fmt == MemoryFormat::ChannelsLast
                    ? isChannelsLastContiguous(*In.Sizes, *In.Strides)
                    : isContiguous(*In.Sizes, *In.Strides);
  if (Already == Tri::True)
    return selfOf(In, "already contiguous: returns self");
  if (Already == Tri::Unknown) {
    OpOutcome Out = unmodelled("contiguous");
    Out.Value = TensorValue();
    Out.Value.Sizes = In.Sizes;
    keepDType(Out.Value, In);
    Out.Value.Dev = In.Dev;
    Out.Value.markUnknown("whether the input is contiguous is not known, so "
                          "whether contiguous() copies is unknown");
    return Out;
  }
  return clone(In, Fmt == MemoryFormat::Preserve ? MemoryFormat::Contiguous : Fmt);
}

// clone (TensorFactories.cpp): Preserve keeps dense strides; offset dropped.
OpOutcome clone(const TensorValue &In, MemoryFormat Fmt) {
  std::optional<Shape> Strides;
  if (In.Sizes) {
    switch (Fmt) {
    case MemoryFormat::Contiguous:
      Strides = contiguousStrides(*In.Sizes);
      break;
    case MemoryFormat::ChannelsLast:
      if (In.Sizes->size() != 4)
        return throws("required rank 4 tensor to use channels_last format");
      Strides = channelsLastStrides(*In.Sizes);
      break;
    case MemoryFormat::Preserve:
      if (In.Strides)
        Strides = preserveFormatStrides(*In.Sizes, *In.Strides);
      break;
    }
  }
  OpOutcome Out = copyOf(In, Strides, In.Type, In.Dev, In.TypeOf);
  if (Fmt == MemoryFormat::Preserve && Strides && In.Strides &&
      isContiguous(*In.Sizes, *Strides) == Tri::False)
    Out.Note = "clone keeps the input's dense layout: the copy is not "
               "contiguous";
  return Out;
}

// Whether to() copies or not, a dense input at offset 0 gives the same
// geometry: self, or _to_copy's empty_strided with self's strides
// (Preserve keeps a non-overlapping dense layout).
static void keepDenseLayout(OpOutcome &Out, const TensorValue &In,
                            const ToTarget &Target) {
  if (In.hasLayout() && Target.Fmt == MemoryFormat::Preserve &&
      sizeEq(*In.Offset, 0) == Tri::True)
    if (auto Kept = preserveFormatStrides(*In.Sizes, *In.Strides);
        Kept && *Kept == *In.Strides) {
      Out.Value.Strides = In.Strides;
      Out.Value.Offset = SymSize(0);
    }
}

// to() (TensorConversions.cpp): to_will_alias, else _to_copy.
//
// A target dtype that is a parameter's (`x.to(p.scalar_type())`, p's dtype
// the caller's) is the same as the input's when the input follows p too.
// For an input of a known bool or integral dtype it differs when p is
// floating, which is stated (`p.is_floating_point()`, the assumption
// sum/mean/softmax of p's dtype make as well): the cast then copies. Any
// other pairing is not decided: the copy would be a guess.
OpOutcome to(const TensorValue &In, const ToTarget &Target) {
  bool TargetFollows = !Target.Type && !Target.TypeOf.empty();
  auto SetOutType = [&](TensorValue &V) {
    if (Target.Type || TargetFollows) {
      V.Type = Target.Type;
      V.TypeOf = TargetFollows ? Target.TypeOf : std::string();
    } else {
      keepDType(V, In);
    }
  };
  if (Target.TypeUnknown || Target.DeviceUnknown) {
    OpOutcome Out = unmodelled("to");
    Out.Value.Sizes = In.Sizes;
    if (Target.TypeUnknown)
      Out.Value.Type.reset();
    else
      SetOutType(Out.Value);
    Out.Value.Dev = Target.DeviceUnknown ? std::nullopt : Target.Dev ? Target.Dev : In.Dev;
    Out.Value.UnknownReason.clear();
    // The input's own reason when its shape is unknown too (the first
    // cause), as below.
    Out.Value.markUnknown(!In.Sizes && !In.UnknownReason.empty()
                              ? In.UnknownReason
                          : Target.TypeUnknown
                              ? "target of to() could not be derived, so "
                                "whether it copies is unknown"
                              : "the target device of to() is not known, so "
                                "whether it copies is unknown");
    keepDenseLayout(Out, In, Target);
    return Out;
  }
  std::optional<bool> SameType, SameDevice;
  if (!Target.Type && !TargetFollows)
    SameType = true;
  else if (TargetFollows) {
    if (!In.Type && In.TypeOf == Target.TypeOf)
      SameType = true;
    else if (In.Type && !isFloating(*In.Type) && !isComplex(*In.Type) &&
             requireFloatingParameter(Target.TypeOf))
      SameType = false;
  } else if (In.Type)
    SameType = *In.Type == *Target.Type;
  if (!Target.Dev)
    SameDevice = true;
  else if (In.Dev)
    SameDevice = In.Dev->Kind == Target.Dev->Kind &&
                 (Target.Dev->Index < 0 || In.Dev->Index < 0 ||
                  In.Dev->Index == Target.Dev->Index);
  std::optional<bool> FormatOk;
  if (Target.Fmt == MemoryFormat::Preserve)
    FormatOk = true;
  else if (In.Sizes && In.Strides) {
    Tri ChannelsLast = suggestsChannelsLast(*In.Sizes, *In.Strides);
    if (ChannelsLast != Tri::Unknown)
      FormatOk = (ChannelsLast == Tri::True) ==
                 (Target.Fmt == MemoryFormat::ChannelsLast);
  }
  std::optional<Device> OutDev = Target.Dev ? Target.Dev : In.Dev;
  if (!SameType || !SameDevice || !FormatOk) {
    OpOutcome Out = unmodelled("to");
    Out.Value.Sizes = In.Sizes;
    SetOutType(Out.Value);
    Out.Value.Dev = OutDev;
    Out.Value.UnknownReason.clear();
    // The input's own reason when its shape is unknown too (the first
    // cause); otherwise the question to() could not settle.
    std::string Why;
    if (!SameType) {
      std::string From = In.Type ? dtypeName(*In.Type)
                         : !In.TypeOf.empty() ? In.TypeOf + ".scalar_type()"
                                              : "unknown";
      std::string To = Target.Type ? dtypeName(*Target.Type)
                       : TargetFollows ? Target.TypeOf + ".scalar_type()"
                                       : dtypeName(*In.Type);
      Why = "whether the input's dtype (" + From + ") is already " + To +
            " is not known, so whether to() copies is unknown";
    } else if (!SameDevice) {
      Why = "the input's device is not known, so whether to() copies is "
            "unknown";
    } else {
      Why = "the input's memory format is not known, so whether to() "
            "copies is unknown";
    }
    Out.Value.markUnknown(In.Sizes || In.UnknownReason.empty() ? Why
                                                               : In.UnknownReason);
    keepDenseLayout(Out, In, Target);
    return Out;
  }
  if (*SameType && *SameDevice && !Target.Copy && *FormatOk)
    return selfOf(In, "same dtype and device: to() returns self");
  std::optional<Shape> Strides;
  if (In.Sizes) {
    if (Target.Fmt == MemoryFormat::Preserve) {
      if (In.Strides)
        Strides = preserveFormatStrides(*In.Sizes, *In.Strides);
    } else if (Target.Fmt == MemoryFormat::ChannelsLast) {
      Strides = channelsLastStrides(*In.Sizes);
    } else {
      Strides = contiguousStrides(*In.Sizes);
    }
  }
  TensorValue Typed;
  SetOutType(Typed);
  OpOutcome Out = copyOf(In, Strides, Typed.Type, OutDev, Typed.TypeOf);
  if (!*SameType && In.Type && Target.Type)
    Out.Note = std::string("cast ") + dtypeName(*In.Type) + " -> " +
               dtypeName(*Target.Type);
  else if (!*SameType && In.Type && TargetFollows)
    Out.Note = std::string("cast ") + dtypeName(*In.Type) + " -> " +
               Target.TypeOf + ".scalar_type()";
  else if (!*SameDevice)
    Out.Note = "device transfer";
  else
    Out.Note = "copy=true forces a copy";
  return Out;
}

} // namespace tma

// ---- Rules (OpTable.def) ------------------------------------------------------------

namespace tma {

using namespace detail;

RuleResult rule_reshape(const OpCall &C) {
  if (!C.arg(1).known())
    return notModelled(C, "reshape argument could not be derived");
  return one(reshape(C.self().TV, C.arg(1).List));
}

RuleResult rule_reshape_as(const OpCall &C) {
  const TensorValue &O = C.arg(1).TV;
  if (!O.Sizes)
    return notModelled(C, "shape of the other tensor is unknown");
  return one(reshape(C.self().TV, *O.Sizes));
}

/// contiguous(fmt) / clone(fmt): the format when given.
static RuleResult compact(const OpCall &C, MemoryFormat Default,
                          OpOutcome (*Rule)(const TensorValue &, MemoryFormat)) {
  MemoryFormat Fmt = Default;
  if (C.arg(1).given()) {
    if (!C.arg(1).known())
      return notModelled(C, "memory format could not be derived");
    Fmt = C.arg(1).Fmt;
  }
  return one(Rule(C.self().TV, Fmt));
}

RuleResult rule_contiguous(const OpCall &C) {
  return compact(C, MemoryFormat::Contiguous, contiguous);
}

RuleResult rule_clone(const OpCall &C) {
  return compact(C, MemoryFormat::Preserve, clone);
}

// Tensor::to and its spellings. Overloads: to(options, non_blocking, copy,
// fmt), to(device, dtype, non_blocking, copy, fmt), to(dtype, non_blocking,
// copy, fmt), to(other, non_blocking, copy, fmt).
/// A ScalarType argument as to()'s target: a dtype, a parameter's dtype
/// (`x.scalar_type()`), or not derivable.
static void dtypeTarget(const ArgValue &A, ToTarget &T) {
  if (A.known())
    T.Type = A.Type_;
  else
    T.TypeOf = A.TypeOf;
  T.TypeUnknown = !T.Type && T.TypeOf.empty();
}

RuleResult rule_to(const OpCall &C) {
  ToTarget T;
  size_t Next = 2; // where non_blocking is
  switch (C.Overload) {
  case 0: {
    const OptionsValue &O = C.arg(1).Options;
    if (C.arg(1).given() && !O.Known) {
      T.TypeUnknown = T.DeviceUnknown = true;
    } else if (C.arg(1).given()) {
      if (O.HasType) {
        T.Type = O.Type;
        T.TypeOf = O.Type ? std::string() : O.TypeOf;
        T.TypeUnknown = !O.Type && T.TypeOf.empty();
      }
      if (O.HasDevice) {
        T.Dev = O.Dev;
        T.DeviceUnknown = !O.Dev;
      }
      if (O.HasFormat) {
        if (!O.Fmt)
          return notModelled(C, "memory format could not be derived");
        T.Fmt = *O.Fmt;
      }
    }
    break;
  }
  case 1:
    if (C.arg(1).known())
      T.Dev = C.arg(1).Dev;
    T.DeviceUnknown = !T.Dev;
    dtypeTarget(C.arg(2), T);
    Next = 3;
    break;
  case 2:
    dtypeTarget(C.arg(1), T);
    break;
  default: {
    const TensorValue &Other = C.arg(1).TV;
    T.Type = Other.Type;
    T.Dev = Other.Dev;
    T.TypeUnknown = !T.Type;
    T.DeviceUnknown = !T.Dev;
    break;
  }
  }
  // non_blocking, copy, memory_format follow.
  const ArgValue &Copy = C.arg(Next + 1), &Fmt = C.arg(Next + 2);
  if (Copy.given()) {
    if (!Copy.known())
      return notModelled(C, "copy flag could not be derived");
    T.Copy = Copy.Bool;
  }
  if (Fmt.given()) {
    if (!Fmt.known())
      return notModelled(C, "memory format could not be derived");
    T.Fmt = Fmt.Fmt;
  }
  return one(to(C.self().TV, T));
}

RuleResult rule_toType(const OpCall &C) {
  ToTarget T;
  dtypeTarget(C.arg(1), T);
  return one(to(C.self().TV, T));
}

// type_as(other) is to(other.options()): dtype and device.
RuleResult rule_type_as(const OpCall &C) {
  const TensorValue &Other = C.arg(1).TV;
  ToTarget T;
  T.Type = Other.Type;
  T.Dev = Other.Dev;
  T.TypeUnknown = !T.Type;
  T.DeviceUnknown = !T.Dev;
  return one(to(C.self().TV, T));
}

// Tensor::cpu() / cuda(): to(options().device(...)), never copy=true.
static RuleResult toDevice(const OpCall &C, DeviceKind Kind) {
  ToTarget T;
  T.Dev = Device{Kind, -1};
  return one(to(C.self().TV, T));
}

RuleResult rule_cpu(const OpCall &C) { return toDevice(C, DeviceKind::CPU); }
RuleResult rule_cuda(const OpCall &C) { return toDevice(C, DeviceKind::CUDA); }

} // namespace tma
