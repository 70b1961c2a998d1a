// forward() of each layer entry: the op call the layer's forward() makes
// (LibTorch 1.13's torch/csrc/api/src/nn/modules/*.cpp and the
// F::detail functions of torch/nn/functional/*.h they call).
//
// Design:
//  1. A forward is a description: which op (the entry's Op), and which
//     option feeds which schema argument, in the schema's order. The
//     caller runs it through the op table's rule (no shape logic here).
//  2. Checks the module makes before the op (BatchNorm2d's "expected 4D
//     input", more than one value per channel in training) give a Throws
//     outcome here; what is not derivable (an option of a kind not read, a
//     mode the analysis cannot see) gives Unknown with the reason.
//  3. Training mode matters to Dropout (a new tensor in training, its
//     input in eval mode) and BatchNorm (batch or running statistics; a new
//     tensor either way). In an unknown mode an outcome that differs
//     between the modes keeps its shape and dtype, with an unknown kind.
#include "model/modules/LayerDetail.h"

#include "model/Decide.h"
#include "model/ops/OpsDetail.h"

namespace tma {
namespace layers {

namespace {

LayerForward unknownForward(const std::string &Why) {
  LayerForward F;
  F.K = LayerForward::Kind::Unknown;
  F.Why = Why;
  return F;
}

LayerForward outcome(OpOutcome Out, const std::string &Recorded) {
  LayerForward F;
  F.K = LayerForward::Kind::Outcome;
  F.Outcome = std::move(Out);
  F.Recorded = Recorded;
  return F;
}

LayerForward run(OpCall C) {
  LayerForward F;
  F.K = LayerForward::Kind::Call;
  F.Call = std::move(C);
  return F;
}

/// Op on the input, as the binder would bind `Op(input, ...)`.
OpCall callOn(const std::string &Op, const LayerForwardInput &In) {
  OpCall C;
  C.Op = lookupOp(Op);
  C.Written = Op;
  C.Version = In.Version;
  C.Args.push_back(In.Input);
  // As the binder gives it (as_strided's and reshape's bound checks).
  C.SelfStorageBytes = In.InputStorageBytes;
  return C;
}

/// Parameters are float32: an op that needs its input's dtype to be theirs
/// (the norms' CPU kernels) is answered for a float32 input only.
std::string floatInput(const TensorValue &InV) {
  if (InV.Type)
    return *InV.Type == DType::Float32
               ? ""
               : "a " + std::string(dtypeName(*InV.Type)) +
                     " input with float32 parameters is not modelled "
                     "(LibTorch throws)";
  if (!InV.TypeOf.empty() && requireCondition(InV.TypeOf + ".scalar_type() == at::kFloat"))
    return "";
  return "its input's dtype is unknown";
}

std::string dimsOf(size_t N) { return std::to_string(N) + "D"; }

} // namespace

LayerForward noForward(const LayerSpec &, const NamedArgs &, const LayerForwardInput &) {
  return unknownForward("this layer's forward is not modelled yet");
}

LayerForward tupleForward(const LayerSpec &, const NamedArgs &, const LayerForwardInput &) {
  return unknownForward("forward returns a tuple, read with std::get");
}

LayerForward identityForward(const LayerSpec &L, const NamedArgs &,
                             const LayerForwardInput &In) {
  return outcome(detail::selfOf(In.Input.TV, "Identity returns its input"), L.Name);
}

LayerForward linearForward(const LayerSpec &L, const NamedArgs &,
                           const LayerForwardInput &In) {
  OpCall C = callOn(L.Op, In);
  C.Args.push_back(In.Param("weight"));
  C.Args.push_back(In.Param("bias"));
  return run(C);
}

namespace {

/// ConvNdImpl's forward with zeros padding: F::detail::conv<D>d(input,
/// weight, bias, stride, padding, dilation, groups); transposed without an
/// output_size: the options' output_padding, and the schema's order puts
/// groups before dilation.
LayerForward convolution(const LayerSpec &L, const NamedArgs &O,
                         const LayerForwardInput &In, bool Transposed) {
  const ArgValue *Stride = option(O, "stride"), *Padding = option(O, "padding"),
                 *Dilation = option(O, "dilation"), *Groups = option(O, "groups"),
                 *Mode = option(O, "padding_mode"),
                 *OutPad = option(O, "output_padding");
  if (!Stride || !Padding || !Dilation || !Groups || !Mode ||
      Mode->Str != std::optional<std::string>("zeros") ||
      Stride->K != ArgValue::Kind::IntList || Dilation->K != ArgValue::Kind::IntList ||
      (Transposed && (!OutPad || OutPad->K != ArgValue::Kind::IntList ||
                      Padding->K != ArgValue::Kind::IntList)))
    return unknownForward("its padding mode or strides are not modelled");
  OpCall C = callOn(L.Op, In);
  C.Args.push_back(In.Param("weight"));
  C.Args.push_back(In.Param("bias"));
  C.Args.push_back(intListArg(Stride->List));
  if (Transposed) {
    C.Args.push_back(intListArg(Padding->List));
    C.Args.push_back(intListArg(OutPad->List));
    C.Args.push_back(*Groups);
    C.Args.push_back(intListArg(Dilation->List));
    return run(C);
  }
  if (Padding->K == ArgValue::Kind::IntList) {
    C.Args.push_back(intListArg(Padding->List));
  } else {
    C.Overload = 1;
    C.Args.push_back(*Padding); // "same" / "valid"
  }
  C.Args.push_back(intListArg(Dilation->List));
  C.Args.push_back(*Groups);
  return run(C);
}

} // namespace

LayerForward convForward(const LayerSpec &L, const NamedArgs &O,
                         const LayerForwardInput &In) {
  return convolution(L, O, In, false);
}

LayerForward convTransposeForward(const LayerSpec &L, const NamedArgs &O,
                                  const LayerForwardInput &In) {
  return convolution(L, O, In, true);
}

LayerForward batchNormForward(const LayerSpec &L, const NamedArgs &O,
                              const LayerForwardInput &In) {
  // BatchNormImplBase::forward: _check_input_dim, then
  // F::detail::batch_norm(input, running_mean, running_var, weight, bias,
  // is_training() || !track_running_stats, momentum, eps).
  const TensorValue &InV = In.Input.TV;
  auto Track = flagOption(O, "track_running_stats");
  auto Eps = numberOption(O, "eps");
  if (!Track || !Eps)
    return unknownForward("its options could not be derived");
  if (std::string Why = floatInput(InV); !Why.empty())
    return unknownForward(Why);
  if (InV.Sizes) {
    // BatchNorm1d: (N, C) or (N, C, L); 2d and 3d: exactly Dims + 2.
    size_t R = InV.Sizes->size(), Want = size_t(L.Dims) + 2;
    bool Ok = R == Want || (L.Dims == 1 && R == 2);
    if (!Ok)
      return outcome(throws("expected " +
                            (L.Dims == 1 ? std::string("2D or 3D") : dimsOf(Want)) +
                            " input (got " + dimsOf(R) + " input)"),
                     L.Name);
  }
  // Batch statistics in training mode, or always without running ones.
  std::optional<bool> BatchStats = !*Track ? std::optional<bool>(true) : In.Training;
  if (BatchStats.value_or(true) && InV.Sizes) {
    // F::detail::batch_norm: "Expected more than 1 value per channel when
    // training". In an unknown mode it may not apply: no throw is claimed,
    // and where the program goes on the output is the same.
    const Shape &IS = *InV.Sizes;
    SymSize Values = IS[0];
    for (size_t K = 2; K < IS.size(); ++K)
      Values = Values * IS[K];
    if (BatchStats && sizeEq(Values, SymSize(1)) == Tri::True)
      return outcome(throws("Expected more than 1 value per channel when "
                            "training, but got input size " +
                            detail::dimsText(IS)),
                     L.Name);
  }
  OpCall C = callOn(L.Op, In);
  C.Args.push_back(In.Param("weight"));
  C.Args.push_back(In.Param("bias"));
  C.Args.push_back(In.Param("running_mean"));
  C.Args.push_back(In.Param("running_var"));
  // Either mode gives a new tensor of the input's shape: in an unknown mode
  // the rule is asked about training (its statistics are the batch's);
  // running statistics are there when it is not.
  C.Args.push_back(boolArgOf(BatchStats.value_or(true)));
  C.Args.push_back(numberArgOf(0.1));
  C.Args.push_back(numberArgOf(*Eps));
  C.Args.push_back(boolArgOf(true));
  return run(C);
}

LayerForward layerNormForward(const LayerSpec &L, const NamedArgs &O,
                              const LayerForwardInput &In) {
  const ArgValue *NS = option(O, "normalized_shape");
  auto Eps = numberOption(O, "eps");
  if (!NS || NS->K != ArgValue::Kind::IntList || !Eps)
    return unknownForward("its options could not be derived");
  if (std::string Why = floatInput(In.Input.TV); !Why.empty())
    return unknownForward(Why);
  OpCall C = callOn(L.Op, In);
  C.Args.push_back(intListArg(NS->List));
  C.Args.push_back(In.Param("weight"));
  C.Args.push_back(In.Param("bias"));
  C.Args.push_back(numberArgOf(*Eps));
  C.Args.push_back(boolArgOf(true));
  return run(C);
}

LayerForward groupNormForward(const LayerSpec &L, const NamedArgs &O,
                              const LayerForwardInput &In) {
  auto G = intOption(O, "num_groups");
  auto Eps = numberOption(O, "eps");
  if (!G || !Eps)
    return unknownForward("its options could not be derived");
  if (std::string Why = floatInput(In.Input.TV); !Why.empty())
    return unknownForward(Why);
  OpCall C = callOn(L.Op, In);
  C.Args.push_back(intArgOf(*G));
  C.Args.push_back(In.Param("weight"));
  C.Args.push_back(In.Param("bias"));
  C.Args.push_back(numberArgOf(*Eps));
  C.Args.push_back(boolArgOf(true));
  return run(C);
}

LayerForward embeddingForward(const LayerSpec &L, const NamedArgs &O,
                              const LayerForwardInput &In) {
  // F::detail::embedding: max_norm renormalises the weight in place first;
  // then torch::embedding(weight, input, padding_idx, ...).
  if (!unset(O, "max_norm"))
    return unknownForward("max_norm renormalises its weight in place: not modelled");
  OpCall C;
  C.Op = lookupOp(L.Op);
  C.Written = L.Op;
  C.Version = In.Version;
  C.Args.push_back(In.Param("weight"));
  C.Args.back().Type = ArgType::Tensor;
  C.Args.push_back(In.Input);
  // padding_idx (unset: -1), scale_grad_by_freq, sparse: what the
  // EmbeddingBackward0 this call records reads (model/AutogradSaves.h
  // rule 4 picks the node by them).
  auto Given = [&](const char *N, ArgValue Default) {
    if (unset(O, N))
      return Default;
    auto It = O.Values.find(N);
    ArgValue Unknown;
    Unknown.K = ArgValue::Kind::Unknown;
    return It != O.Values.end() ? It->second : Unknown;
  };
  C.Args.push_back(Given("padding_idx", intArgOf(-1)));
  C.Args.push_back(Given("scale_grad_by_freq", boolArgOf(false)));
  C.Args.push_back(Given("sparse", boolArgOf(false)));
  return run(C);
}

LayerForward dropoutForward(const LayerSpec &L, const NamedArgs &O,
                            const LayerForwardInput &In) {
  // DropoutImpl::forward: F::detail::dropout(input, p, is_training(),
  // inplace) = torch::dropout(input, p, training); Dropout2d:
  // _dropoutNd_helper<3, 4>, torch::feature_dropout on a batch (the
  // entry's batch rank; an unbatched input is unsqueezed and squeezed
  // back: not modelled).
  const TensorValue &InV = In.Input.TV;
  auto P = numberOption(O, "p");
  if (L.BatchedRank && (!InV.Sizes || int64_t(InV.Sizes->size()) != *L.BatchedRank))
    return unknownForward(InV.Sizes ? "an input that is not " +
                                          std::to_string(*L.BatchedRank) +
                                          "-D is not modelled"
                                    : "its input's rank is unknown");
  auto WithMode = [&](bool Train, double Prob) {
    OpCall C = callOn(L.Op, In);
    C.Args.push_back(numberArgOf(Prob));
    C.Args.push_back(boolArgOf(Train));
    return C;
  };
  // Either a new tensor (Dropping) or the input itself: what the two share
  // is answered (shape, dtype, and the layout when the new tensor is laid
  // out as the input), not the kind.
  auto EitherNewOrInput = [&](const OpOutcome &Dropping, const std::string &Why) {
    OpOutcome Out = unmodelled(L.Op);
    Out.Value.Sizes = Dropping.Value.Sizes;
    keepDType(Out.Value, Dropping.Value);
    Out.Value.Dev = InV.Dev;
    if (InV.Strides && InV.Offset && Dropping.Value.Strides &&
        *Dropping.Value.Strides == *InV.Strides && sizeEq(*InV.Offset, 0) == Tri::True) {
      Out.Value.Strides = InV.Strides;
      Out.Value.Offset = SymSize(0);
    }
    Out.Value.UnknownReason = In.Who + Why;
    Out.MayBeInputs = {0}; // its input itself in eval mode
    return outcome(Out, L.Op);
  };
  if (!P) {
    // p is a constructor argument (DropoutOptions(dropout_p)): eval mode
    // returns the input whatever p is; training returns it for p == 0 and a
    // new tensor of its shape otherwise (as for any p in (0, 1]).
    if (In.Training && !*In.Training)
      return run(WithMode(false, 0.5));
    RuleResult RT = applyRule(WithMode(true, 0.5));
    if (RT.Outcomes.size() != 1 || RT.Outcomes[0].Kind != OpKind::Copy)
      return unknownForward(InV.Sizes ? "its p could not be derived"
                                      : "its input's shape is unknown (and its p "
                                        "could not be derived)");
    return EitherNewOrInput(RT.Outcomes[0],
                            std::string("its p could not be derived: a new tensor, "
                                        "or its input when p == 0") +
                                (In.Training ? "" : " or in eval mode"));
  }
  if (In.Training)
    return run(WithMode(*In.Training, *P));
  // The mode is not known: the two outcomes agree, or only what they share
  // (shape, dtype) is answered.
  OpCall Train = WithMode(true, *P), Eval = WithMode(false, *P);
  RuleResult RT = applyRule(Train), RE = applyRule(Eval);
  if (RT.Outcomes.size() != 1 || RE.Outcomes.size() != 1)
    return unknownForward(In.ModeWhy);
  const OpOutcome &T = RT.Outcomes[0], &V = RE.Outcomes[0];
  if (T.Kind == V.Kind)
    return run(Train);
  if (T.Kind == OpKind::Throws || V.Kind == OpKind::Throws ||
      T.Kind == OpKind::Unknown || V.Kind == OpKind::Unknown)
    return unknownForward(In.ModeWhy);
  return EitherNewOrInput(T, In.ModeWhy + ": a new tensor in training mode, its "
                                          "input in eval mode");
}

LayerForward activationForward(const LayerSpec &L, const NamedArgs &,
                               const LayerForwardInput &In) {
  return run(callOn(L.Op, In));
}

LayerForward geluForward(const LayerSpec &L, const NamedArgs &O,
                         const LayerForwardInput &In) {
  const ArgValue *A = option(O, "approximate");
  if (!A || A->Str != std::optional<std::string>("none"))
    return unknownForward("an approximate gelu is not modelled");
  return run(callOn(L.Op, In));
}

LayerForward softmaxForward(const LayerSpec &L, const NamedArgs &O,
                            const LayerForwardInput &In) {
  auto D = intOption(O, "dim");
  if (!D)
    return unknownForward("its dim could not be derived");
  OpCall C = callOn(L.Op, In);
  C.Args.push_back(intArgOf(*D));
  return run(C);
}

namespace {

/// F::detail::max_pool<D>d / avg_pool<D>d with the options; a stride not
/// set is the kernel size (the options' constructor), which the rule reads
/// from an absent stride.
LayerForward pooling(const LayerSpec &L, const NamedArgs &O,
                     const LayerForwardInput &In, bool Max) {
  const ArgValue *K = option(O, "kernel_size"), *St = option(O, "stride"),
                 *Pad = option(O, "padding"), *Ceil = option(O, "ceil_mode");
  if (!K || K->K != ArgValue::Kind::IntList || !Pad || Pad->K != ArgValue::Kind::IntList ||
      !Ceil || Ceil->K != ArgValue::Kind::Bool ||
      (St && St->K != ArgValue::Kind::IntList && St->K != ArgValue::Kind::Absent))
    return unknownForward("its kernel size, stride, padding or ceil_mode could not "
                          "be derived");
  OpCall C = callOn(L.Op, In);
  C.Args.push_back(intListArg(K->List));
  C.Args.push_back(St && St->K == ArgValue::Kind::IntList ? intListArg(St->List)
                                                          : ArgValue());
  C.Args.push_back(intListArg(Pad->List));
  if (Max) {
    const ArgValue *Dil = option(O, "dilation");
    if (!Dil || Dil->K != ArgValue::Kind::IntList)
      return unknownForward("its dilation could not be derived");
    C.Args.push_back(intListArg(Dil->List));
    C.Args.push_back(boolArgOf(Ceil->Bool));
    return run(C);
  }
  C.Args.push_back(boolArgOf(Ceil->Bool));
  // avg_pool1d has no divisor_override (F::detail::avg_pool1d drops it).
  const ArgValue *CIP = option(O, "count_include_pad");
  if (!CIP || CIP->K != ArgValue::Kind::Bool ||
      (L.Dims >= 2 && !unset(O, "divisor_override")))
    return unknownForward("its count_include_pad or divisor_override could not "
                          "be derived");
  C.Args.push_back(boolArgOf(CIP->Bool));
  return run(C);
}

} // namespace

LayerForward maxPoolForward(const LayerSpec &L, const NamedArgs &O,
                            const LayerForwardInput &In) {
  return pooling(L, O, In, true);
}

LayerForward avgPoolForward(const LayerSpec &L, const NamedArgs &O,
                            const LayerForwardInput &In) {
  return pooling(L, O, In, false);
}

LayerForward adaptiveAvgPoolForward(const LayerSpec &L, const NamedArgs &O,
                                    const LayerForwardInput &In) {
  const ArgValue *Size = option(O, "output_size");
  if (!Size || Size->K != ArgValue::Kind::IntList)
    return unknownForward("its output_size could not be derived");
  OpCall C = callOn(L.Op, In);
  C.Args.push_back(intListArg(Size->List));
  return run(C);
}

LayerForward flattenForward(const LayerSpec &L, const NamedArgs &O,
                            const LayerForwardInput &In) {
  auto Start = intOption(O, "start_dim"), End = intOption(O, "end_dim");
  if (!Start || !End)
    return unknownForward("its start_dim or end_dim could not be derived");
  OpCall C = callOn(L.Op, In);
  C.Args.push_back(intArgOf(*Start));
  C.Args.push_back(intArgOf(*End));
  return run(C);
}

LayerForward unflattenForward(const LayerSpec &L, const NamedArgs &O,
                              const LayerForwardInput &In) {
  const ArgValue *Name = option(O, "dimname"), *Sizes = option(O, "sizes");
  auto D = intOption(O, "dim");
  if ((Name && Name->K != ArgValue::Kind::Absent &&
       Name->Str != std::optional<std::string>("")) ||
      !D || !Sizes || Sizes->K != ArgValue::Kind::IntList)
    return unknownForward("its dim or sizes could not be derived, or it names a "
                          "dimension");
  OpCall C = callOn(L.Op, In);
  C.Args.push_back(intArgOf(*D));
  C.Args.push_back(intListArg(Sizes->List));
  return run(C);
}

} // namespace layers
} // namespace tma
