// Upsampling (LibTorch 1.13, CPU; NN family): torch::nn::functional::
// interpolate's nearest, linear and bilinear modes and the upsample ops it
// runs (upsample_nearest1d/2d, upsample_linear1d, upsample_bilinear2d).
// The transients were measured with a counting CPU allocator (one thread,
// float32): the generic kernel makes, for each interpolated dim, an int64
// index and a weight of the input's dtype per interpolation point (one for
// nearest, two for linear), each of that dim's output size, all alive
// until the op returns; the channels-last nearest kernel makes none.
#include "model/Ops.h"
#include "model/ops/OpCodes.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <cmath>
#include <string>

namespace tma {

using namespace detail;

namespace {

/// "(H: 4, W: 5)" / "(W: 5)", as the size checks print sizes.
std::string spatialText(const std::vector<SymSize> &S) {
  if (S.size() == 1)
    return "(W: " + sizeText(S[0]) + ")";
  return "(H: " + sizeText(S[0]) + ", W: " + sizeText(S[1]) + ")";
}

/// upsample_nearest{1,2}d (Linear false) or upsample_linear1d /
/// upsample_bilinear2d (Linear true) of In to the output sizes Out of its
/// last Out.size() dims (UpSample.h upsample_{1,2}d_common_check, the
/// structured meta functions: an output of the input's
/// suggest_memory_format).
RuleResult upsampleTo(const OpCall &C, const TensorValue &In, bool Linear,
                      const std::vector<SymSize> &Out) {
  size_t Dims = Out.size();
  if (!In.Sizes)
    return notModelled(C, shapeReason(In));
  const Shape &Sizes = *In.Sizes;
  if (Sizes.size() != Dims + 2)
    return notModelled(C, "upsampling a " + std::to_string(Sizes.size()) +
                              "-D input over " + std::to_string(Dims) +
                              " dims is not modelled");
  std::vector<SymSize> InSpatial(Sizes.end() - static_cast<std::ptrdiff_t>(Dims),
                                 Sizes.end());
  Tri Positive = Tri::True;
  for (const std::vector<SymSize> *Group :
       {static_cast<const std::vector<SymSize> *>(&InSpatial), &Out})
    for (const SymSize &S : *Group)
      Positive = triAnd(Positive, sizeGe(S, SymSize(1)));
  if (Positive == Tri::False)
    return one(throws("Input and output sizes should be greater than 0, but "
                      "got input " + spatialText(InSpatial) + " output " +
                      spatialText(Out)));
  if (Positive == Tri::Unknown)
    return notModelled(C, "whether the input's and output's sizes are above 0 "
                          "is not decided");
  for (size_t D = 0; D < 2; ++D)
    if (sizeGe(Sizes[D], SymSize(1)) != Tri::True)
      return notModelled(C, "an input with a batch or channel size not known "
                            "to be above 0 is not modelled");
  if (In.Type && *In.Type != DType::Float32 && *In.Type != DType::Float64)
    return notModelled(C, "upsampling a tensor whose dtype is not float32 or "
                          "float64 is not modelled");
  Shape OutSizes = Sizes;
  for (size_t D = 0; D < Dims; ++D)
    OutSizes[Sizes.size() - Dims + D] = Out[D];
  OpOutcome Result = freshContiguous(OutSizes, In.Type, In.Dev, In.TypeOf);
  Tri Last = Tri::False, LastDense = Tri::False;
  if (Sizes.size() == 4) {
    if (!In.Strides)
      return notModelled(C, "the input's layout is not known");
    Last = suggestsChannelsLast(Sizes, *In.Strides);
    LastDense = isChannelsLastContiguous(Sizes, *In.Strides);
    if (Last == Tri::Unknown)
      return notModelled(C, "whether the input is laid out channels-last is "
                            "not known");
    if (Last == Tri::True)
      Result.Value.Strides = channelsLastStrides(OutSizes);
  }
  Result.ReadBytes = In.logicalBytes();
  Result.WrittenBytes = Result.Value.logicalBytes();
  // The measured kernels: float32 on the CPU.
  bool Measured = In.Dev && In.Dev->Kind == DeviceKind::CPU &&
                  In.Type == std::optional<DType>(DType::Float32) &&
                  LastDense != Tri::Unknown &&
                  !(Linear && LastDense == Tri::True);
  if (!Measured) {
    Result.TransientBytes.reset();
    Result.Note = "the kernel's index and weight tensors are not modelled here";
    return one(Result);
  }
  std::optional<SymSize> Scratch = SymSize(0);
  if (LastDense == Tri::False)
    for (const SymSize &O : Out)
      Scratch = addSizes(Scratch, mulSizes(O, SymSize(Linear ? 24 : 12)));
  Result.TransientBytes = Scratch;
  return one(Result);
}

/// A list option or argument as sizes, when it is one.
std::optional<std::vector<SymSize>> sizesOf(const ArgValue *A) {
  if (!A || A->K != ArgValue::Kind::IntList)
    return std::nullopt;
  return std::vector<SymSize>(A->List.begin(), A->List.end());
}

/// interpolate's scale_factor: each output size floor(input size * scale)
/// (_interp_output_size, in double); a symbolic size only by a whole
/// scale.
RuleResult scaledBy(const OpCall &C, const TensorValue &In, bool Linear,
                    const ArgValue &Scale) {
  size_t Dims = In.Sizes->size() - 2;
  if (Scale.K != ArgValue::Kind::Other || Scale.Numbers.empty())
    return notModelled(C, "interpolate's scale_factor could not be derived");
  if (Scale.Numbers.size() != Dims)
    return one(throws("scale_factor shape must match input shape. Input is " +
                      std::to_string(Dims) + "D, scale_factor size is " +
                      std::to_string(Scale.Numbers.size())));
  std::vector<SymSize> Out;
  for (size_t D = 0; D < Dims; ++D) {
    const SymSize &In_ = (*In.Sizes)[2 + D];
    double F = Scale.Numbers[D];
    if (!(F >= 0) || F > 1e6)
      return notModelled(C, "a negative, huge or NaN scale factor is not "
                            "modelled");
    if (auto N = In_.constant()) {
      double P = std::floor(static_cast<double>(*N) * F);
      if (P > 9.0e15)
        return notModelled(C, "an output size past 2^53 is not modelled");
      Out.push_back(SymSize(static_cast<int64_t>(P)));
    } else if (std::floor(F) == F) {
      Out.push_back(In_ * static_cast<int64_t>(F));
    } else {
      return notModelled(C, "a fractional scale factor of a size known only "
                            "at run time is not modelled");
    }
  }
  return upsampleTo(C, In, Linear, Out);
}

} // namespace

// upsample_nearest1d/2d(self, output_size, scales...) and
// upsample_linear1d / upsample_bilinear2d(self, output_size,
// align_corners, scales...): output_size gives the output's last dims.
RuleResult rule_upsample_nearest2d(const OpCall &C) {
  OpCode Code = C.Op->Code;
  bool Linear = Code == OpCode::upsample_linear1d ||
                Code == OpCode::upsample_bilinear2d;
  size_t Dims = Code == OpCode::upsample_nearest1d ||
                        Code == OpCode::upsample_linear1d
                    ? 1 : 2;
  std::optional<std::vector<SymSize>> Out = sizesOf(&C.arg(1));
  if (!Out)
    return notModelled(C, "output_size could not be derived");
  if (Out->size() != Dims)
    return one(throws("It is expected output_size equals to " +
                      std::to_string(Dims) + ", but got size " +
                      std::to_string(Out->size())));
  return upsampleTo(C, C.self().TV, Linear, *Out);
}

// torch::nn::functional::interpolate(input, InterpolateFuncOptions) in
// 1.13 (torch/nn/functional/upsampling.h): nearest takes no align_corners
// ("align_corners option can only be set with the interpolating modes"),
// the linear modes default it to false; exactly one of size and
// scale_factor ("either size or scale_factor should be defined", "only one
// of size or scale_factor should be defined"); the output sizes are size,
// or floor(input size * scale factor) per dim (scaledBy). A 3-D input with nearest or
// linear and a 4-D one with nearest or bilinear run the ops above; other
// modes, ranks and antialias are not modelled.
RuleResult rule_interpolate(const OpCall &C) {
  const ArgValue &O = C.arg(1);
  if (O.K != ArgValue::Kind::NNOptions)
    return notModelled(C, "interpolate's options could not be derived");
  if (!O.Named->Complete)
    return notModelled(C, "interpolate's options could not be derived: " +
                              O.Named->Why);
  const ArgValue *Mode = O.option("mode"), *Size = O.option("size"),
                 *Scale = O.option("scale_factor"),
                 *Align = O.option("align_corners"),
                 *Antialias = O.option("antialias");
  if (!Mode || Mode->K != ArgValue::Kind::Other || !Mode->Str)
    return notModelled(C, "interpolate's mode could not be derived");
  const std::string &M = *Mode->Str;
  bool Nearest = M == "nearest";
  bool Linear = M == "linear" || M == "bilinear";
  if (!Nearest && !Linear)
    return notModelled(C, "interpolate's '" + M + "' mode is not modelled");
  bool AlignGiven = Align && Align->given();
  if (Nearest && AlignGiven)
    return one(throws("align_corners option can only be set with the "
                      "interpolating modes: linear | bilinear | bicubic | "
                      "trilinear"));
  if (Linear && AlignGiven && Align->K != ArgValue::Kind::Bool)
    return notModelled(C, "align_corners could not be derived");
  const TensorValue &In = C.arg(0).TV;
  if (!In.Sizes)
    return notModelled(C, shapeReason(In));
  size_t Rank = In.Sizes->size();
  bool OneD = Rank == 3 && (Nearest || M == "linear");
  bool TwoD = Rank == 4 && (Nearest || M == "bilinear");
  if (!OneD && !TwoD)
    return notModelled(C, "interpolate's '" + M + "' mode over a " +
                              std::to_string(Rank) + "-D input is not modelled");
  if (Antialias && (Antialias->K != ArgValue::Kind::Bool || Antialias->Bool))
    return notModelled(C, "interpolate with antialias is not modelled");
  bool HasSize = Size && Size->given();
  bool HasScale = Scale && Scale->given();
  if (!HasSize && !HasScale)
    return one(throws("either size or scale_factor should be defined"));
  if (HasSize && HasScale)
    return one(throws("only one of size or scale_factor should be defined"));
  if (HasScale)
    return scaledBy(C, In, Linear, *Scale);
  std::optional<std::vector<SymSize>> Out = sizesOf(Size);
  if (!Out)
    return notModelled(C, "interpolate's size could not be derived");
  if (Out->size() != Rank - 2)
    return one(throws("It is expected output_size equals to " +
                      std::to_string(Rank - 2) + ", but got size " +
                      std::to_string(Out->size())));
  return upsampleTo(C, In, Linear, *Out);
}

} // namespace tma
