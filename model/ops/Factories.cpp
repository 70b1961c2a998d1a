// Factories (TensorFactories.cpp, RangeFactories.cpp): fresh tensors from
// sizes and options, and the *_like family.
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
#include "model/ops/OpCodes.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tma {

using namespace detail;

OpOutcome factory(const std::optional<Shape> &Sizes,
                  const std::optional<DType> &Type,
                  const std::optional<Device> &Dev, FillKind Fill,
                  const std::string &TypeOf) {
  OpOutcome Out;
  Out.Kind = OpKind::Alloc;
  Out.ReadBytes = SymSize(0);
  if (Sizes) {
    for (const SymSize &S : *Sizes) {
      // On the path that goes on, every size is non-negative.
      Tri NonNegative = requireLe(0, S);
      if (NonNegative == Tri::Unknown)
        return undecidedOutcome(Out, undecided(">=", S, 0));
      if (NonNegative == Tri::False)
        return throws("Trying to create tensor with negative dimension " +
                      sizeText(S) + ": " + dimsText(*Sizes));
    }
    Out.Value.Sizes = *Sizes;
    Out.Value.Strides = contiguousStrides(*Sizes);
    Out.Value.Offset = 0;
  } else {
    Out.Value.markUnknown("shape argument could not be derived");
  }
  Out.Value.Type = Type;
  if (!Type)
    Out.Value.TypeOf = TypeOf;
  if (!Out.Value.dtypeKnown())
    Out.Value.markUnknown("dtype argument could not be derived");
  Out.Value.Dev = Dev;
  if (!Dev)
    Out.Value.markUnknown("device argument could not be derived");
  if (Fill == FillKind::Uninitialized)
    Out.WrittenBytes = SymSize(0);
  else
    Out.WrittenBytes = Out.Value.logicalBytes();
  return Out;
}

OpOutcome emptyStrided(const Shape &Sizes, const Shape &Strides,
                       const std::optional<DType> &Type,
                       const std::optional<Device> &Dev) {
  if (Sizes.size() != Strides.size())
    return throws("mismatch in length of strides and shape");
  OpOutcome Out = factory(Sizes, Type, Dev, FillKind::Uninitialized);
  if (Out.Kind == OpKind::Alloc)
    Out.Value.Strides = Strides;
  return Out;
}

// empty_like (TensorFactories.cpp) and the *_like factories built on it.
OpOutcome likeFactory(const TensorValue &In, const std::optional<DType> &Type,
                      const std::optional<Device> &Dev, MemoryFormat Fmt,
                      FillKind Fill) {
  OpOutcome Out;
  Out.Kind = OpKind::Alloc;
  Out.ReadBytes = SymSize(0);
  if (Type)
    Out.Value.Type = Type;
  else
    keepDType(Out.Value, In);
  Out.Value.Dev = Dev ? Dev : In.Dev;
  Out.Value.UnknownReason = In.UnknownReason;
  Out.Value.Sizes = In.Sizes;
  Out.Value.Offset = 0;
  if (In.Sizes) {
    switch (Fmt) {
    case MemoryFormat::Contiguous:
      Out.Value.Strides = contiguousStrides(*In.Sizes);
      break;
    case MemoryFormat::ChannelsLast:
      if (In.Sizes->size() != 4)
        return throws("required rank 4 tensor to use channels_last format");
      Out.Value.Strides = channelsLastStrides(*In.Sizes);
      break;
    case MemoryFormat::Preserve:
      if (In.Strides) {
        Out.Value.Strides = preserveFormatStrides(*In.Sizes, *In.Strides);
        if (!Out.Value.Strides)
          Out.Value.markUnknown("the layout MemoryFormat::Preserve keeps is "
                                "not decidable");
      } else
        Out.Value.markUnknown("strides of the input are unknown");
      break;
    }
  } else {
    Out.Value.markUnknown(In.UnknownReason.empty() ? "shape of the input is unknown"
                                                   : In.UnknownReason);
  }
  if (!Out.Value.Type)
    Out.Value.markUnknown("dtype of the input is unknown");
  if (!Out.Value.Dev)
    Out.Value.markUnknown("device of the input is unknown");
  Out.WrittenBytes =
      Fill == FillKind::Uninitialized ? std::optional<SymSize>(0)
                                      : Out.Value.logicalBytes();
  return Out;
}

std::optional<int64_t> arangeSize(double Start, double End, double Step) {
  if (Step == 0)
    return std::nullopt;
  if ((Step > 0 && End < Start) || (Step < 0 && End > Start))
    return std::nullopt;
  double Size = std::ceil((End - Start) / Step);
  if (!(Size >= 0) || Size > 9.0e18)
    return std::nullopt;
  return static_cast<int64_t>(Size);
}

} // namespace tma

// ---- Rules (OpTable.def) ------------------------------------------------------------
//
// Factories are bound by their C++ parameter types, so that every overload
// (randint(high, size), randint(low, high, size), full(size, value),
// arange(start, end, step), randn(size, dtype, layout, device, pin)) is
// read the same way: size lists, scalars, integers, options, dtypes.

namespace tma {

using namespace detail;

// arange over integers of which some are symbolic (`arange(T)` where `auto
// T = x.size(1)`), with a constant step: RangeFactories.cpp's size
// ceil((end - start) / step), exact for integers. LibTorch throws when the
// bounds disagree with the step's sign: required (stated when the facts do
// not show it). nullopt: not this case; an empty optional inside: throws.
static std::optional<std::optional<SymSize>>
symbolicArangeSize(const std::vector<const ArgValue *> &Scalars) {
  if (Scalars.empty() || Scalars.size() > 3)
    return std::nullopt;
  for (const ArgValue *S : Scalars)
    if (!S->Integral)
      return std::nullopt;
  bool Two = Scalars.size() >= 2;
  SymSize Start = Two ? *Scalars[0]->Integral : SymSize(0);
  SymSize End = Two ? *Scalars[1]->Integral : *Scalars[0]->Integral;
  auto Step = Scalars.size() == 3 ? Scalars[2]->Integral->constant()
                                  : std::optional<int64_t>(1);
  if (!Step || *Step == 0)
    return std::nullopt; // step 0 throws; a symbolic step is not modelled
  SymSize Span = *Step > 0 ? End - Start : Start - End;
  Tri Ordered = requireLe(SymSize(0), Span);
  if (Ordered == Tri::Unknown)
    return std::nullopt;
  if (Ordered == Tri::False)
    return std::optional<SymSize>();
  SymSize N = SymSize::ceilDiv(Span, SymSize(*Step > 0 ? *Step : -*Step));
  return std::optional<SymSize>(N);
}

static RuleResult factoryRule(const OpCall &C) {
  const std::string &Name = C.Written; // for messages
  const OpCode Code = C.Op->Code;
  std::vector<const ArgValue *> Lists, Scalars, Ints;
  OptionsValue O;
  bool SawOptions = false;
  std::optional<DType> LooseType;
  bool LooseTypeUnknown = false;
  for (size_t K = 0; K < C.Args.size(); ++K) {
    const ArgValue &A = C.Args[K];
    switch (A.Type) {
    case ArgType::IntList:
      Lists.push_back(&A);
      break;
    case ArgType::Options:
      // Read even when it is the declaration's default (randint's kLong).
      SawOptions = true;
      if (A.known())
        O = A.Options;
      break;
    case ArgType::Scalar:
      Scalars.push_back(&A);
      break;
    case ArgType::Int:
      Ints.push_back(&A);
      break;
    case ArgType::ScalarType:
      LooseType = A.known() ? std::optional<DType>(A.Type_) : std::nullopt;
      LooseTypeUnknown = !LooseType;
      break;
    case ArgType::OptScalarType:
      // at::randn(size, dtype, layout, device, pin_memory) style overloads.
      if (A.given() && (A.known() || K == 1)) {
        LooseType = A.known() ? std::optional<DType>(A.Type_) : std::nullopt;
        LooseTypeUnknown = !LooseType;
      }
      break;
    default:
      break;
    }
  }
  auto IntArg = [&](size_t K) -> std::optional<int64_t> {
    if (K >= Ints.size() || !Ints[K]->known())
      return std::nullopt;
    return Ints[K]->Int;
  };
  // The shape, per factory.
  std::optional<Shape> Sizes;
  std::string ShapeReason = "size argument could not be derived";
  std::optional<DType> ValueType; // a dtype the arguments imply
  if (Code == OpCode::arange) {
    std::vector<double> Nums;
    bool AllKnown = true, Floating = false;
    for (const ArgValue *S : Scalars) {
      if (!S->Number)
        AllKnown = false;
      else
        Nums.push_back(*S->Number);
      Floating |= S->Floating;
    }
    if (AllKnown && !Nums.empty() && Nums.size() <= 3) {
      double Start = Nums.size() >= 2 ? Nums[0] : 0;
      double End = Nums.size() >= 2 ? Nums[1] : Nums[0];
      double Step = Nums.size() == 3 ? Nums[2] : 1;
      ValueType = Floating ? DType::Float32 : DType::Int64;
      if (auto N = arangeSize(Start, End, Step))
        Sizes = Shape{*N};
      else
        return one(throws("upper bound and larger bound inconsistent with "
                          "step sign"), Name);
    } else if (auto N = symbolicArangeSize(Scalars)) {
      if (!*N)
        return one(throws("upper bound and larger bound inconsistent with "
                          "step sign"), Name);
      ValueType = DType::Int64;
      Sizes = Shape{**N};
    } else {
      ShapeReason = "arange bounds could not be derived";
    }
  } else if (Code == OpCode::linspace || Code == OpCode::logspace) {
    if (auto N = IntArg(0)) {
      if (*N < 0)
        return one(throws("number of steps must be non-negative"), Name);
      Sizes = Shape{*N};
    }
  } else if (Code == OpCode::eye) {
    auto N = IntArg(0);
    auto M = Ints.size() >= 2 ? IntArg(1) : N;
    if (N && M)
      Sizes = Shape{*N, *M};
  } else if (Code == OpCode::randperm) {
    if (auto N = IntArg(0))
      Sizes = Shape{*N};
  } else if (Code == OpCode::scalar_tensor) {
    Sizes = Shape{};
  } else if (Code == OpCode::from_blob && Lists.empty() && Ints.size() == 1) {
    // from_blob(&n, 1, options): one int is an IntArrayRef of one size.
    if (auto N = Ints[0]->size())
      Sizes = Shape{*N};
  } else if (Code == OpCode::from_blob && Lists.size() >= 2) {
    ShapeReason = "from_blob with strides is not modelled";
  } else if (!Lists.empty()) {
    if (Lists[0]->known())
      Sizes = Lists[0]->List;
  } else {
    ShapeReason = "no size argument found";
  }
  if (Code == OpCode::full && !Scalars.empty())
    ValueType = Scalars[0]->LiteralType;

  std::optional<DType> Type;
  std::optional<Device> Dev = Device{DeviceKind::CPU, -1};
  std::string Reason;
  if (!O.Known) {
    Type.reset();
    Dev.reset();
    Reason = O.UnknownReason.empty() ? "options could not be derived"
                                     : O.UnknownReason;
  } else {
    if (O.HasDevice)
      Dev = O.Dev;
    if (O.HasType) {
      Type = O.Type;
    } else if (LooseType || LooseTypeUnknown) {
      Type = LooseType;
    } else if (ValueType) {
      // full infers its dtype from the fill value, arange from its bounds.
      Type = ValueType;
    } else if (Code == OpCode::full || Code == OpCode::arange) {
      Type.reset();
      Reason = "the value's type could not be derived";
    } else {
      // No dtype: the default dtype (float32). This is where a C++
      // randint with options but no dtype becomes float32.
      Type = DType::Float32;
    }
  }
  FillKind Fill = (Code == OpCode::empty || Code == OpCode::empty_strided)
                      ? FillKind::Uninitialized
                      : FillKind::Filled;
  OpOutcome Out;
  if (Code == OpCode::empty_strided) {
    if (Lists.size() >= 2 && Lists[0]->known() && Lists[1]->known())
      Out = emptyStrided(Lists[0]->List, Lists[1]->List, Type, Dev);
    else
      Out = factory(std::nullopt, Type, Dev, Fill);
  } else {
    Out = factory(Sizes, Type, Dev, Fill,
                  O.Known && O.HasType ? O.TypeOf : std::string());
  }
  if (Code == OpCode::from_blob && Out.Kind == OpKind::Alloc) {
    // The tensor wraps the program's own memory: LibTorch allocates and
    // writes nothing, and which other tensors wrap the same memory is not
    // followed (two from_blob of one pointer share it), so the storage
    // stays unknown while shape, strides and dtype are the arguments'.
    Out.Kind = OpKind::Unknown;
    Out.ReadBytes = SymSize(0);
    Out.WrittenBytes = SymSize(0);
    Out.Value.markUnknown("from_blob wraps memory the program owns: which "
                          "tensors share it is not followed");
  }
  if (!Sizes && Code != OpCode::empty_strided)
    Out.Value.UnknownReason = ShapeReason;
  else if (!Reason.empty())
    Out.Value.UnknownReason = Reason;
  if (Out.Kind == OpKind::Alloc && Type &&
      (Code == OpCode::randint || Code == OpCode::randperm) && !O.HasType && SawOptions &&
      O.Known && *Type == DType::Float32) {
    Out.Note = "options without a dtype: float32, not int64";
    Out.DTypeDefaulted = true;
  }
  return one(Out, Name);
}

RuleResult rule_randn(const OpCall &C) { return factoryRule(C); }
RuleResult rule_rand(const OpCall &C) { return factoryRule(C); }
RuleResult rule_zeros(const OpCall &C) { return factoryRule(C); }
RuleResult rule_ones(const OpCall &C) { return factoryRule(C); }
RuleResult rule_empty(const OpCall &C) { return factoryRule(C); }
RuleResult rule_full(const OpCall &C) { return factoryRule(C); }
RuleResult rule_randint(const OpCall &C) { return factoryRule(C); }
RuleResult rule_arange(const OpCall &C) { return factoryRule(C); }
RuleResult rule_linspace(const OpCall &C) { return factoryRule(C); }
RuleResult rule_eye(const OpCall &C) { return factoryRule(C); }
RuleResult rule_randperm(const OpCall &C) { return factoryRule(C); }
RuleResult rule_scalar_tensor(const OpCall &C) { return factoryRule(C); }
RuleResult rule_empty_strided(const OpCall &C) { return factoryRule(C); }
RuleResult rule_from_blob(const OpCall &C) { return factoryRule(C); }

// new_empty / new_zeros / new_ones / new_full (TensorFactories.cpp):
// at::empty(size, self.options().merge_in(options)), then filled: a fresh
// contiguous tensor whose dtype and device are self's unless the options
// name them (the options' memory format is not modelled).
RuleResult rule_new_empty(const OpCall &C) {
  bool Fill = C.Overload == 1;
  const TensorValue &Self = C.self().TV;
  OptionsValue O;
  if (const ArgValue &A = C.arg(Fill ? 3 : 2); A.given())
    O = A.Options;
  if (!O.Known || (O.HasType && !O.Type && O.TypeOf.empty()) ||
      (O.HasDevice && !O.Dev))
    return notModelled(C, O.UnknownReason.empty() ? "options could not be derived"
                                                  : O.UnknownReason);
  if (O.HasFormat)
    return notModelled(C, "a memory format in " + C.Written +
                              "'s options is not modelled");
  std::optional<Shape> Sizes;
  if (C.arg(1).known())
    Sizes = C.arg(1).List;
  std::optional<DType> Type = O.HasType ? O.Type : Self.Type;
  std::string TypeOf = O.HasType ? O.TypeOf : (Self.Type ? "" : Self.TypeOf);
  std::optional<Device> Dev = O.HasDevice ? O.Dev : Self.Dev;
  OpOutcome Out = factory(Sizes, Type, Dev,
                          C.Op->Code == OpCode::new_empty ? FillKind::Uninitialized
                                                   : FillKind::Filled,
                          TypeOf);
  if (!Sizes)
    Out.Value.UnknownReason = "size argument could not be derived";
  return one(Out, C.Written);
}

// *_like(self, [fill_value,] options = {}, memory_format = nullopt), or
// with the options spelled out (dtype, layout, device, pin_memory).
RuleResult rule_like(const OpCall &C) {
  bool Fill = C.Overload == 1 || C.Overload == 3; // full_like's fill value
  size_t K = Fill ? 2 : 1;
  OptionsValue O;
  const ArgValue *Fmt = nullptr;
  if (C.Overload <= 1) {
    if (C.arg(K).given())
      O = C.arg(K).Options;
    Fmt = &C.arg(K + 1);
  } else {
    // (dtype, layout, device, pin_memory, memory_format)
    if (C.arg(K).given()) {
      O.HasType = true;
      if (C.arg(K).known())
        O.Type = C.arg(K).Type_;
    }
    if (C.arg(K + 2).given()) {
      O.HasDevice = true;
      if (C.arg(K + 2).known())
        O.Dev = C.arg(K + 2).Dev;
    }
    Fmt = &C.arg(K + 4);
  }
  if (!O.Known)
    return notModelled(C, O.UnknownReason.empty() ? "options could not be derived"
                                                  : O.UnknownReason);
  MemoryFormat Format = MemoryFormat::Preserve;
  if (O.HasFormat) {
    if (!O.Fmt)
      return notModelled(C, "memory format could not be derived");
    Format = *O.Fmt;
  }
  if (Fmt->given()) {
    if (!Fmt->known())
      return notModelled(C, "memory format could not be derived");
    Format = Fmt->Fmt;
  }
  if ((O.HasType && !O.Type) || (O.HasDevice && !O.Dev))
    return notModelled(C, "options could not be derived");
  return one(likeFactory(C.self().TV, O.HasType ? O.Type : std::nullopt,
                         O.HasDevice ? O.Dev : std::nullopt, Format,
                         C.Op->Code == OpCode::empty_like ? FillKind::Uninitialized
                                                   : FillKind::Filled));
}

} // namespace tma
