// The built-in torch::nn layers, one entry each (issue 13): the parameters
// and buffers reset() registers, read from the layer's options, and the
// functional op its forward() runs, evaluated by that op's rule in
// model/ops (never a second copy of its shape logic here).
//
//     torch::nn::BatchNorm2d bn(16);        // weight, bias (16), running_mean,
//                                           // running_var (16), num_batches_tracked ()
//     auto y = bn(x);                       // batch_norm(x, weight, bias, ...)
//
// What each layer's forward does is LibTorch 1.13's
// (torch/csrc/api/src/nn/modules/*.cpp and the F::detail functions of
// torch/nn/functional/*.h they call); each entry names what it reads.
// Module-level checks the functional op does not make (BatchNorm2d's
// "expected 4D input", more than one value per channel in training) are
// made here, before the op. Whatever is not derivable — an in-place
// option, a mode the analysis cannot see, an option of a kind not read —
// leaves the forward unknown with the reason.
//
// Training mode matters to Dropout (a new tensor in training, its input
// in eval mode) and BatchNorm (batch or running statistics; the output is
// a new tensor either way). A module the function constructs starts in
// training mode; its eval() / train(b) calls are followed when they are
// statements of the function's body itself (Modules.cpp). A member's mode
// is not known: then an outcome that differs between the modes is left
// with its shape and dtype and an unknown kind.
#include "frontend/FunctionEvaluator.h"

#include "model/Decide.h"
#include "model/ops/OpsDetail.h"

using namespace clang;

namespace tma {

namespace {

/// Loss modules (no parameters): forward(input, target) is the functional
/// op with the module's options (MSELossImpl::forward calls
/// F::detail::mse_loss(input, target, options.reduction()), ...).
const std::map<std::string, std::string> &lossModules() {
  static const std::map<std::string, std::string> Losses = {
      {"MSELoss", "mse_loss"},
      {"L1Loss", "l1_loss"},
      {"SmoothL1Loss", "smooth_l1_loss"},
      {"HuberLoss", "huber_loss"},
      {"CrossEntropyLoss", "cross_entropy_loss"},
      {"NLLLoss", "nll_loss"},
      {"BCELoss", "binary_cross_entropy"},
      {"BCEWithLogitsLoss", "binary_cross_entropy_with_logits"},
      {"KLDivLoss", "kl_div"}};
  return Losses;
}

/// The layers whose parameters and forward are modelled, by holder name.
const std::set<std::string> &modelledLayers() {
  static const std::set<std::string> Layers = {
      "Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
      "ConvTranspose2d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
      "LayerNorm", "GroupNorm", "Embedding", "Dropout", "Dropout2d",
      "ReLU", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "Sigmoid", "Tanh",
      "Softplus", "Hardtanh", "Softmax", "LogSoftmax", "MaxPool1d",
      "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
      "AdaptiveAvgPool2d", "Flatten", "Unflatten", "Identity", "Sequential",
      "LSTM", "GRU"};
  return Layers;
}

ArgValue tensorArg(ValueId Id, const TensorValue &V) {
  ArgValue A;
  A.K = ArgValue::Kind::Tensor;
  A.Type = ArgType::Tensor;
  A.Tensor = Id;
  A.TV = V;
  return A;
}

ArgValue listArg(const Shape &L) {
  ArgValue A;
  A.K = ArgValue::Kind::IntList;
  A.Type = ArgType::IntList;
  A.List = L;
  return A;
}

ArgValue intArg(int64_t V) {
  ArgValue A;
  A.K = ArgValue::Kind::Int;
  A.Type = ArgType::Int;
  A.Int = V;
  A.Size = SymSize(V);
  return A;
}

ArgValue boolArg(bool V) {
  ArgValue A;
  A.K = ArgValue::Kind::Bool;
  A.Type = ArgType::Bool;
  A.Bool = V;
  return A;
}

ArgValue numberArg(double V) {
  ArgValue A;
  A.K = ArgValue::Kind::Number;
  A.Type = ArgType::Float;
  A.Number = V;
  A.Floating = true;
  return A;
}

/// The option called N, or null.
const ArgValue *option(const NamedArgs &O, const char *N) {
  auto It = O.Values.find(N);
  return It == O.Values.end() ? nullptr : &It->second;
}

std::optional<bool> flagOption(const NamedArgs &O, const char *N) {
  const ArgValue *A = option(O, N);
  if (!A || A->K != ArgValue::Kind::Bool)
    return std::nullopt;
  return A->Bool;
}

std::optional<SymSize> sizeOption(const NamedArgs &O, const char *N) {
  const ArgValue *A = option(O, N);
  return A ? A->size() : std::nullopt;
}

std::optional<int64_t> intOption(const NamedArgs &O, const char *N) {
  const ArgValue *A = option(O, N);
  if (!A || A->K != ArgValue::Kind::Int)
    return std::nullopt;
  return A->Int;
}

std::optional<double> numberOption(const NamedArgs &O, const char *N) {
  const ArgValue *A = option(O, N);
  if (!A || !A->Number ||
      (A->K != ArgValue::Kind::Number && A->K != ArgValue::Kind::Scalar))
    return std::nullopt;
  return A->Number;
}

/// An optional option that is not set (c10::nullopt, the default).
bool unset(const NamedArgs &O, const char *N) {
  const ArgValue *A = option(O, N);
  return !A || A->K == ArgValue::Kind::Absent;
}

std::string dimsOf(size_t N) { return std::to_string(N) + "D"; }

} // namespace

bool modelledLayer(const std::string &Layer) {
  return modelledLayers().count(Layer) != 0 || isLossModule(Layer);
}

bool isLossModule(const std::string &Layer) {
  return lossModules().count(Layer) != 0;
}

std::optional<int64_t> batchedInputRank(const std::string &Layer) {
  // The rank each layer's documentation gives a batch, where it is one
  // rank (BatchNorm1d takes (N, C) or (N, C, L): none).
  static const std::map<std::string, int64_t> Ranks = {
      {"Linear", 2},          {"Conv1d", 3},          {"Conv2d", 4},
      {"Conv3d", 5},          {"ConvTranspose1d", 3}, {"ConvTranspose2d", 4},
      {"BatchNorm2d", 4},     {"BatchNorm3d", 5},     {"MaxPool1d", 3},
      {"MaxPool2d", 4},       {"AvgPool1d", 3},       {"AvgPool2d", 4},
      {"AdaptiveAvgPool1d", 3}, {"AdaptiveAvgPool2d", 4}, {"Dropout2d", 4},
      // A batch of sequences; LibTorch 2.x also takes one unbatched
      // sequence (2-D), which recurrentForward does not model.
      {"LSTM", 3},            {"GRU", 3}};
  auto It = Ranks.find(Layer);
  if (It == Ranks.end())
    return std::nullopt;
  return It->second;
}

std::optional<RecurrentLayers>
recurrentLayers(const FunctionEvaluator::ModuleValue &M) {
  const NamedArgs &O = M.Options;
  auto In = sizeOption(O, "input_size"), H = sizeOption(O, "hidden_size");
  // A symbolic layer count (`.num_layers(num_layers)`, a constructor
  // argument) is one that runs: with none, forward throws (at::lstm and
  // at::gru stack the per-layer final states, and at::stack of no tensors
  // throws).
  auto Layers = sizeOption(O, "num_layers");
  auto Bidirectional = flagOption(O, "bidirectional");
  auto BatchFirst = flagOption(O, "batch_first");
  if ((M.Layer != "LSTM" && M.Layer != "GRU") || !In || !H || !Layers ||
      (Layers->constant() && *Layers->constant() < 1) || !Bidirectional ||
      !BatchFirst)
    return std::nullopt;
  RecurrentLayers R;
  R.Gates = M.Layer == "LSTM" ? 4 : 3;
  R.CellState = M.Layer == "LSTM";
  R.InputSize = *In;
  R.HiddenSize = *H;
  R.NumLayers = *Layers;
  R.Bidirectional = *Bidirectional;
  R.BatchFirst = *BatchFirst;
  return R;
}

/// The parameters and buffers reset() registers for M's options, in
/// registration order; empty on success, else why they are not derived.
std::string layerParameters(FunctionEvaluator::ModuleValue &M) {
  const NamedArgs &O = M.Options;
  const std::string &L = M.Layer;
  auto Param = [&](const char *N, Shape S) { M.ParamShapes.push_back({N, S}); };
  auto Buffer = [&](const char *N, Shape S, DType T = DType::Float32) {
    M.ParamShapes.push_back({N, S});
    M.Buffers.insert(N);
    if (T != DType::Float32)
      M.ParamTypes[N] = T;
  };
  std::optional<bool> Bias = flagOption(O, "bias");
  if (L == "LSTM" || L == "GRU") {
    // RNNImplBase::reset: per layer, per direction, w_ih (G*H, in),
    // w_hh (G*H, H) and the two biases; a layer after the first reads the
    // previous one's D*H outputs.
    auto R = recurrentLayers(M);
    if (!R || !Bias)
      return "its sizes, layers, bias or directions could not be derived";
    if (L == "LSTM" && intOption(O, "proj_size") != std::optional<int64_t>(0))
      return "an LSTM with proj_size is not modelled";
    SymSize Gates(R->Gates), H = R->HiddenSize;
    int64_t Dirs = R->Bidirectional ? 2 : 1;
    // Each layer has parameters of its own: a layer count that is a
    // symbol gives no list of them (forward is still followed).
    std::optional<int64_t> Layers = R->NumLayers.constant();
    if (!Layers) {
      M.ParamsWhy = "its number of layers (" + R->NumLayers.toCpp() +
                    ") is not a constant, so its parameters are not listed";
      // Their count is still a formula: per direction, the first layer
      // reads the input and every later one the previous layer's D*H.
      SymSize Biases = *Bias ? SymSize(2) * Gates * H : SymSize(0);
      SymSize First = Gates * H * R->InputSize + Gates * H * H + Biases;
      SymSize Later = Gates * H * (SymSize(Dirs) * H) + Gates * H * H + Biases;
      M.ParamElements = SymSize(Dirs) * First +
                        SymSize(Dirs) * (R->NumLayers - SymSize(1)) * Later;
      return "";
    }
    for (int64_t K = 0; K < *Layers; ++K)
      for (int64_t D = 0; D < Dirs; ++D) {
        std::string Suffix = "_l" + std::to_string(K) + (D ? "_reverse" : "");
        SymSize Width = K == 0 ? R->InputSize : SymSize(Dirs) * H;
        M.ParamShapes.push_back({"weight_ih" + Suffix, {Gates * H, Width}});
        M.ParamShapes.push_back({"weight_hh" + Suffix, {Gates * H, H}});
        if (*Bias) {
          M.ParamShapes.push_back({"bias_ih" + Suffix, {Gates * H}});
          M.ParamShapes.push_back({"bias_hh" + Suffix, {Gates * H}});
        }
      }
    return "";
  }
  if (L == "Linear") {
    auto In = sizeOption(O, "in_features"), Out = sizeOption(O, "out_features");
    if (!In || !Out || !Bias)
      return "its features or bias could not be derived";
    Param("weight", {*Out, *In});
    if (*Bias)
      Param("bias", {*Out});
    return "";
  }
  if (L.rfind("Conv", 0) == 0) {
    bool Transposed = L.rfind("ConvTranspose", 0) == 0;
    auto In = sizeOption(O, "in_channels"), Out = sizeOption(O, "out_channels");
    auto Groups = intOption(O, "groups");
    const ArgValue *K = option(O, "kernel_size");
    if (!In || !Out || !Groups || !Bias || !K ||
        K->K != ArgValue::Kind::IntList || *Groups < 1)
      return "its channels, kernel size, groups or bias could not be derived";
    // ConvNdImpl::reset: both channel counts divisible by groups.
    if (*Groups != 1 && (sizeDivides(SymSize(*Groups), *In) != Tri::True ||
                         sizeDivides(SymSize(*Groups), *Out) != Tri::True))
      return "whether groups divides its channels is not decided "
             "(LibTorch throws when it does not)";
    // Transposed: (in, out / groups, *kernel); else (out, in / groups, ...).
    Shape W = Transposed ? Shape{*In, SymSize::floorDiv(*Out, *Groups)}
                         : Shape{*Out, SymSize::floorDiv(*In, *Groups)};
    W.insert(W.end(), K->List.begin(), K->List.end());
    Param("weight", W);
    if (*Bias)
      Param("bias", {*Out});
    return "";
  }
  if (L.rfind("BatchNorm", 0) == 0) {
    auto C = sizeOption(O, "num_features");
    auto Affine = flagOption(O, "affine"),
         Track = flagOption(O, "track_running_stats");
    if (!C || !Affine || !Track)
      return "its num_features, affine or track_running_stats could not be "
             "derived";
    if (*Affine) {
      Param("weight", {*C});
      Param("bias", {*C});
    }
    if (*Track) {
      Buffer("running_mean", {*C});
      Buffer("running_var", {*C});
      Buffer("num_batches_tracked", {}, DType::Int64);
    }
    return "";
  }
  if (L == "LayerNorm") {
    const ArgValue *NS = option(O, "normalized_shape");
    auto Affine = flagOption(O, "elementwise_affine");
    if (!NS || NS->K != ArgValue::Kind::IntList || !Affine)
      return "its normalized_shape or elementwise_affine could not be derived";
    if (*Affine) {
      Param("weight", NS->List);
      Param("bias", NS->List);
    }
    return "";
  }
  if (L == "GroupNorm") {
    auto C = sizeOption(O, "num_channels");
    auto Affine = flagOption(O, "affine");
    if (!C || !Affine || !intOption(O, "num_groups"))
      return "its num_groups, num_channels or affine could not be derived";
    if (*Affine) {
      Param("weight", {*C});
      Param("bias", {*C});
    }
    return "";
  }
  if (L == "Embedding") {
    auto N = sizeOption(O, "num_embeddings"), D = sizeOption(O, "embedding_dim");
    if (!N || !D)
      return "its num_embeddings or embedding_dim could not be derived";
    const ArgValue *W = option(O, "_weight");
    if (W && W->K != ArgValue::Kind::Absent)
      return "a weight given to it (_weight) is not modelled";
    // EmbeddingImpl::reset checks padding_idx against num_embeddings; an
    // index that is there but not read could make it throw.
    const ArgValue *Pad = option(O, "padding_idx");
    if (Pad && Pad->K != ArgValue::Kind::Absent) {
      if (Pad->K != ArgValue::Kind::Int)
        return "its padding_idx could not be derived";
      Tri In = Pad->Int >= 0 ? sizeLt(SymSize(Pad->Int), *N)
                             : sizeLe(SymSize(-Pad->Int), *N);
      if (In != Tri::True)
        return "whether padding_idx is within num_embeddings is not decided "
               "(LibTorch throws when it is not)";
    }
    Param("weight", {*N, *D});
    return "";
  }
  if (L == "Hardtanh") {
    auto Min = numberOption(O, "min_val"), Max = numberOption(O, "max_val");
    if (!Min || !Max)
      return "its min_val or max_val could not be derived";
    if (!(*Max > *Min))
      return "max_val must be greater than min_val (LibTorch throws)";
    return "";
  }
  return ""; // no parameters
}

ValueId FunctionEvaluator::lossForward(const ModuleValue &M, ValueId Input,
                                       ValueId Target, const Expr *E,
                                       const FunctionDecl *Callee) {
  OpCall C;
  C.Written = lossModules().at(M.Layer); // M is a loss (isLossModule)
  C.Op = lookupOp(C.Written);
  C.Version = Opts.Version;
  C.Args.push_back(tensorArg(Input, I.value(Input)));
  C.Args.push_back(tensorArg(Target, I.value(Target)));
  // The module's options, as the functional spelling's options object.
  ArgValue Options;
  Options.K = ArgValue::Kind::NNOptions;
  Options.Named = std::make_shared<const NamedArgs>(M.Options);
  C.Args.push_back(Options);
  if (!C.Op)
    return unmodelledCall(M.Layer, E, {Input, Target},
                          "its op '" + C.Written + "' is not in the op table");
  CallSite S;
  S.E = E;
  S.Callee = Callee;
  std::vector<ValueId> Values = applyResult(S, C, applyRule(C));
  if (Values.empty())
    return unmodelledCall(M.Layer, E, {Input, Target}, "forward gave no result");
  return Values.front();
}

ValueId FunctionEvaluator::layerForward(
    const ModuleValue &M, const std::map<std::string, ValueId> &Params,
    const std::string &Prefix, ValueId In, const Expr *E,
    const FunctionDecl *Callee, std::optional<bool> Training,
    const std::string &ModeWhy) {
  const std::string &L = M.Layer;
  const NamedArgs &O = M.Options;
  auto Unknown = [&](const std::string &Why) {
    return unmodelledCall(L, E, {In},
                          "module '" + M.Name + "' (" + L + "): " + Why);
  };
  const TensorValue InV = I.value(In);
  CallSite S;
  S.E = E;
  S.Callee = Callee;
  auto Call = [&](const std::string &Op) {
    OpCall C;
    C.Op = lookupOp(Op);
    C.Written = Op;
    C.Version = Opts.Version;
    C.Args.push_back(tensorArg(In, InV));
    // As the binder gives it (as_strided's and reshape's bound checks).
    if (InV.Storage != NoStorage)
      C.SelfStorageBytes = I.trace().Storages.at(InV.Storage).Bytes;
    return C;
  };
  auto Run = [&](const OpCall &C) -> ValueId {
    if (!C.Op)
      return Unknown("its op '" + C.Written + "' is not in the op table");
    std::vector<ValueId> Values = applyResult(S, C, applyRule(C));
    if (Values.empty())
      return Unknown("forward gave no result");
    return Values.front();
  };
  auto Param = [&](const char *N) {
    auto P = Params.find(Prefix + N);
    ArgValue A;
    if (P != Params.end())
      A = tensorArg(P->second, I.value(P->second));
    A.Type = ArgType::OptTensor;
    return A;
  };
  // Parameters are float32: an op that needs its input's dtype to be
  // theirs (the norms' CPU kernels) is answered for a float32 input only.
  auto FloatInput = [&]() -> std::string {
    if (InV.Type)
      return *InV.Type == DType::Float32
                 ? ""
                 : "a " + std::string(dtypeName(*InV.Type)) +
                       " input with float32 parameters is not modelled "
                       "(LibTorch throws)";
    if (!InV.TypeOf.empty() &&
        requireCondition(InV.TypeOf + ".scalar_type() == at::kFloat"))
      return "";
    return "its input's dtype is unknown";
  };
  // An `inplace` option writes into the input: not followed.
  if (const ArgValue *Ip = option(O, "inplace");
      Ip && (Ip->K != ArgValue::Kind::Bool || Ip->Bool))
    return Unknown("in place (inplace(true)) is not modelled");

  if (L == "Sequential") {
    if (M.Children.empty())
      return Unknown("Cannot call forward() on an empty Sequential "
                     "(LibTorch throws)");
    // SequentialImpl::forward: `input = module->any_forward(input)` for
    // each layer, so a layer's result is freed once the next one has run
    // (unless it is the caller's tensor, or the next result is a view of
    // it).
    auto StorageOf = [&](ValueId V) {
      return V >= 0 ? I.value(V).Storage : NoStorage;
    };
    ValueId X = In;
    for (size_t K = 0; K < M.Children.size(); ++K) {
      ValueId Next = layerForward(M.Children[K], Params,
                                  Prefix + std::to_string(K) + ".", X, E,
                                  Callee, Training, ModeWhy);
      StorageId Prev = StorageOf(X);
      if (X != In && Prev != NoStorage && Prev != StorageOf(In) &&
          StorageOf(Next) != Prev)
        I.dropTemporary(Prev);
      X = Next;
    }
    return X;
  }
  if (L == "LSTM" || L == "GRU")
    return Unknown("forward returns a tuple, read with std::get");
  if (L == "Identity")
    return apply(L, E, {In}, detail::selfOf(InV, "Identity returns its input"));
  if (L == "Linear") {
    OpCall C = Call("linear");
    C.Args.push_back(Param("weight"));
    C.Args.push_back(Param("bias"));
    return Run(C);
  }
  if (L.rfind("Conv", 0) == 0) {
    bool Transposed = L.rfind("ConvTranspose", 0) == 0;
    std::string Op = Transposed ? "conv_transpose" : "conv";
    Op += L.substr(L.size() - 2); // "1d", "2d", "3d"
    const ArgValue *Stride = option(O, "stride"), *Padding = option(O, "padding"),
                   *Dilation = option(O, "dilation"), *Groups = option(O, "groups"),
                   *Mode = option(O, "padding_mode"),
                   *OutPad = option(O, "output_padding");
    if (!Stride || !Padding || !Dilation || !Groups || !Mode ||
        Mode->Str != std::optional<std::string>("zeros") ||
        Stride->K != ArgValue::Kind::IntList ||
        Dilation->K != ArgValue::Kind::IntList ||
        (Transposed && (!OutPad || OutPad->K != ArgValue::Kind::IntList ||
                        Padding->K != ArgValue::Kind::IntList)))
      return Unknown("its padding mode or strides are not modelled");
    OpCall C = Call(Op);
    C.Args.push_back(Param("weight"));
    C.Args.push_back(Param("bias"));
    C.Args.push_back(listArg(Stride->List));
    if (Transposed) {
      // ConvTransposeNdImpl::forward without an output_size: the options'
      // output_padding; the schema's order puts groups before dilation.
      C.Args.push_back(listArg(Padding->List));
      C.Args.push_back(listArg(OutPad->List));
      C.Args.push_back(*Groups);
      C.Args.push_back(listArg(Dilation->List));
    } else {
      if (Padding->K == ArgValue::Kind::IntList) {
        C.Args.push_back(listArg(Padding->List));
      } else {
        C.Overload = 1;
        C.Args.push_back(*Padding); // "same" / "valid"
      }
      C.Args.push_back(listArg(Dilation->List));
      C.Args.push_back(*Groups);
    }
    return Run(C);
  }
  if (L.rfind("BatchNorm", 0) == 0) {
    // BatchNormImplBase::forward: _check_input_dim, then
    // F::detail::batch_norm(input, running_mean, running_var, weight, bias,
    // is_training() || !track_running_stats, momentum, eps).
    auto Track = flagOption(O, "track_running_stats");
    auto Eps = numberOption(O, "eps");
    if (!Track || !Eps)
      return Unknown("its options could not be derived");
    if (std::string Why = FloatInput(); !Why.empty())
      return Unknown(Why);
    if (InV.Sizes) {
      size_t R = InV.Sizes->size();
      bool Ok = L == "BatchNorm1d" ? (R == 2 || R == 3)
                                   : R == (L == "BatchNorm2d" ? 4u : 5u);
      if (!Ok)
        return apply(L, E, {In},
                     throws(std::string("expected ") +
                            (L == "BatchNorm1d" ? "2D or 3D"
                             : L == "BatchNorm2d" ? "4D"
                                                  : "5D") +
                            " input (got " + dimsOf(R) + " input)"));
    }
    // Batch statistics in training mode, or always without running ones.
    std::optional<bool> BatchStats =
        !*Track ? std::optional<bool>(true) : Training;
    if (BatchStats.value_or(true) && InV.Sizes) {
      // F::detail::batch_norm: "Expected more than 1 value per channel
      // when training". In an unknown mode it may not apply: no throw is
      // claimed, and where the program goes on the output is the same.
      const Shape &IS = *InV.Sizes;
      SymSize Values = IS[0];
      for (size_t K = 2; K < IS.size(); ++K)
        Values = Values * IS[K];
      if (BatchStats && sizeEq(Values, SymSize(1)) == Tri::True)
        return apply(L, E, {In},
                     throws("Expected more than 1 value per channel when "
                            "training, but got input size " +
                            detail::dimsText(IS)));
    }
    OpCall C = Call("batch_norm");
    C.Args.push_back(Param("weight"));
    C.Args.push_back(Param("bias"));
    C.Args.push_back(Param("running_mean"));
    C.Args.push_back(Param("running_var"));
    // Either mode gives a new tensor of the input's shape: in an unknown
    // mode the rule is asked about training (its statistics are the
    // batch's); running statistics are there when it is not.
    C.Args.push_back(boolArg(BatchStats.value_or(true)));
    C.Args.push_back(numberArg(0.1));
    C.Args.push_back(numberArg(*Eps));
    C.Args.push_back(boolArg(true));
    return Run(C);
  }
  if (L == "LayerNorm") {
    const ArgValue *NS = option(O, "normalized_shape");
    auto Eps = numberOption(O, "eps");
    if (!NS || NS->K != ArgValue::Kind::IntList || !Eps)
      return Unknown("its options could not be derived");
    if (std::string Why = FloatInput(); !Why.empty())
      return Unknown(Why);
    OpCall C = Call("layer_norm");
    C.Args.push_back(listArg(NS->List));
    C.Args.push_back(Param("weight"));
    C.Args.push_back(Param("bias"));
    C.Args.push_back(numberArg(*Eps));
    C.Args.push_back(boolArg(true));
    return Run(C);
  }
  if (L == "GroupNorm") {
    auto G = intOption(O, "num_groups");
    auto Eps = numberOption(O, "eps");
    if (!G || !Eps)
      return Unknown("its options could not be derived");
    if (std::string Why = FloatInput(); !Why.empty())
      return Unknown(Why);
    OpCall C = Call("group_norm");
    C.Args.push_back(intArg(*G));
    C.Args.push_back(Param("weight"));
    C.Args.push_back(Param("bias"));
    C.Args.push_back(numberArg(*Eps));
    C.Args.push_back(boolArg(true));
    return Run(C);
  }
  if (L == "Embedding") {
    // F::detail::embedding: max_norm renormalises the weight in place
    // first; then torch::embedding(weight, input, padding_idx, ...).
    if (!unset(O, "max_norm"))
      return Unknown("max_norm renormalises its weight in place: not "
                     "modelled");
    OpCall C;
    C.Op = lookupOp("embedding");
    C.Written = "embedding";
    C.Version = Opts.Version;
    C.Args.push_back(Param("weight"));
    C.Args.back().Type = ArgType::Tensor;
    C.Args.push_back(tensorArg(In, InV));
    return Run(C);
  }
  if (L == "Dropout" || L == "Dropout2d") {
    // DropoutImpl::forward: F::detail::dropout(input, p, is_training(),
    // inplace) = torch::dropout(input, p, training); Dropout2d:
    // _dropoutNd_helper<3, 4>, torch::feature_dropout on a 4-D input (an
    // unbatched 3-D one is unsqueezed and squeezed back: not modelled).
    auto P = numberOption(O, "p");
    std::string Op = L == "Dropout" ? "dropout" : "feature_dropout";
    if (L == "Dropout2d" && (!InV.Sizes || InV.Sizes->size() != 4))
      return Unknown(InV.Sizes ? "an input that is not 4-D is not modelled"
                               : "its input's rank is unknown");
    auto WithMode = [&](bool Train, double Prob) {
      OpCall C = Call(Op);
      C.Args.push_back(numberArg(Prob));
      C.Args.push_back(boolArg(Train));
      return C;
    };
    // Either a new tensor (Dropping) or the input itself: what the two
    // share is answered (shape, dtype, and the layout when the new tensor
    // is laid out as the input), not the kind.
    auto EitherNewOrInput = [&](const OpOutcome &Dropping, const std::string &Why) {
      OpOutcome Out = unmodelled(Op);
      Out.Value.Sizes = Dropping.Value.Sizes;
      keepDType(Out.Value, Dropping.Value);
      Out.Value.Dev = InV.Dev;
      if (InV.Strides && InV.Offset && Dropping.Value.Strides &&
          *Dropping.Value.Strides == *InV.Strides &&
          sizeEq(*InV.Offset, 0) == Tri::True) {
        Out.Value.Strides = InV.Strides;
        Out.Value.Offset = SymSize(0);
      }
      Out.Value.UnknownReason = "module '" + M.Name + "' (" + L + "): " + Why;
      Out.MayBeInputs = {0}; // its input itself in eval mode
      return apply(Op, E, {In}, Out);
    };
    if (!P) {
      // p is a constructor argument (DropoutOptions(dropout_p)): eval mode
      // returns the input whatever p is; training returns it for p == 0
      // and a new tensor of its shape otherwise (as for any p in (0, 1]).
      if (Training && !*Training)
        return Run(WithMode(false, 0.5));
      RuleResult RT = applyRule(WithMode(true, 0.5));
      if (RT.Outcomes.size() != 1 || RT.Outcomes[0].Kind != OpKind::Copy)
        return Unknown(InV.Sizes ? "its p could not be derived"
                                 : "its input's shape is unknown (and its p "
                                   "could not be derived)");
      return EitherNewOrInput(RT.Outcomes[0],
                              std::string("its p could not be derived: a new tensor, "
                                          "or its input when p == 0") +
                                  (Training ? "" : " or in eval mode"));
    }
    if (Training)
      return Run(WithMode(*Training, *P));
    // The mode is not known: the two outcomes agree, or only what they
    // share (shape, dtype) is answered.
    OpCall Train = WithMode(true, *P), Eval = WithMode(false, *P);
    RuleResult RT = applyRule(Train), RE = applyRule(Eval);
    const std::string &Why = ModeWhy;
    if (RT.Outcomes.size() != 1 || RE.Outcomes.size() != 1)
      return Unknown(Why);
    const OpOutcome &T = RT.Outcomes[0], &V = RE.Outcomes[0];
    if (T.Kind == V.Kind)
      return Run(Train);
    if (T.Kind == OpKind::Throws || V.Kind == OpKind::Throws ||
        T.Kind == OpKind::Unknown || V.Kind == OpKind::Unknown)
      return Unknown(Why);
    return EitherNewOrInput(T, Why + ": a new tensor in training mode, its "
                                     "input in eval mode");
  }
  // Activations: the functional op of each (torch::relu, torch::hardtanh
  // for ReLU6 as at::relu6 is, ...); their scalar options change no
  // geometry, so the rules need only the input.
  static const std::map<std::string, std::string> Activations = {
      {"ReLU", "relu"},       {"ReLU6", "hardtanh"}, {"LeakyReLU", "leaky_relu"},
      {"ELU", "elu"},         {"SiLU", "silu"},      {"Sigmoid", "sigmoid"},
      {"Tanh", "tanh"},       {"Softplus", "softplus"},
      {"Hardtanh", "hardtanh"}, {"GELU", "gelu"}};
  if (auto It = Activations.find(L); It != Activations.end()) {
    if (L == "GELU") {
      const ArgValue *A = option(O, "approximate");
      if (!A || A->Str != std::optional<std::string>("none"))
        return Unknown("an approximate gelu is not modelled");
    }
    return Run(Call(It->second));
  }
  if (L == "Softmax" || L == "LogSoftmax") {
    auto D = intOption(O, "dim");
    if (!D)
      return Unknown("its dim could not be derived");
    OpCall C = Call(L == "Softmax" ? "softmax" : "log_softmax");
    C.Args.push_back(intArg(*D));
    return Run(C);
  }
  if (L.find("Pool") != std::string::npos) {
    // F::detail::max_pool2d / avg_pool2d / adaptive_avg_pool2d with the
    // options; a stride not set is the kernel size (MaxPoolOptions'
    // constructor), which the rule reads from an absent stride.
    std::string Op = L.rfind("MaxPool", 0) == 0   ? "max_pool"
                     : L.rfind("AvgPool", 0) == 0 ? "avg_pool"
                                                  : "adaptive_avg_pool";
    Op += L.substr(L.size() - 2);
    OpCall C = Call(Op);
    if (Op.rfind("adaptive", 0) == 0) {
      const ArgValue *Size = option(O, "output_size");
      if (!Size || Size->K != ArgValue::Kind::IntList)
        return Unknown("its output_size could not be derived");
      C.Args.push_back(listArg(Size->List));
      return Run(C);
    }
    const ArgValue *K = option(O, "kernel_size"), *St = option(O, "stride"),
                   *Pad = option(O, "padding"), *Ceil = option(O, "ceil_mode");
    if (!K || K->K != ArgValue::Kind::IntList || !Pad ||
        Pad->K != ArgValue::Kind::IntList || !Ceil ||
        Ceil->K != ArgValue::Kind::Bool ||
        (St && St->K != ArgValue::Kind::IntList &&
         St->K != ArgValue::Kind::Absent))
      return Unknown("its kernel size, stride, padding or ceil_mode could "
                     "not be derived");
    C.Args.push_back(listArg(K->List));
    C.Args.push_back(St && St->K == ArgValue::Kind::IntList ? listArg(St->List)
                                                            : ArgValue());
    C.Args.push_back(listArg(Pad->List));
    if (Op.rfind("max", 0) == 0) {
      const ArgValue *Dil = option(O, "dilation");
      if (!Dil || Dil->K != ArgValue::Kind::IntList)
        return Unknown("its dilation could not be derived");
      C.Args.push_back(listArg(Dil->List));
      C.Args.push_back(boolArg(Ceil->Bool));
    } else {
      C.Args.push_back(boolArg(Ceil->Bool));
      const ArgValue *CIP = option(O, "count_include_pad");
      if (!CIP || CIP->K != ArgValue::Kind::Bool ||
          (Op == "avg_pool2d" && !unset(O, "divisor_override")))
        return Unknown("its count_include_pad or divisor_override could not "
                       "be derived");
      C.Args.push_back(boolArg(CIP->Bool));
    }
    return Run(C);
  }
  if (L == "Flatten") {
    auto Start = intOption(O, "start_dim"), End = intOption(O, "end_dim");
    if (!Start || !End)
      return Unknown("its start_dim or end_dim could not be derived");
    OpCall C = Call("flatten");
    C.Args.push_back(intArg(*Start));
    C.Args.push_back(intArg(*End));
    return Run(C);
  }
  if (L == "Unflatten") {
    const ArgValue *Name = option(O, "dimname"), *Sizes = option(O, "sizes");
    auto D = intOption(O, "dim");
    if ((Name && Name->K != ArgValue::Kind::Absent &&
         Name->Str != std::optional<std::string>("")) ||
        !D || !Sizes || Sizes->K != ArgValue::Kind::IntList)
      return Unknown("its dim or sizes could not be derived, or it names a "
                     "dimension");
    OpCall C = Call("unflatten");
    C.Args.push_back(intArg(*D));
    C.Args.push_back(listArg(Sizes->List));
    return Run(C);
  }
  return Unknown("this layer's forward is not modelled yet");
}

} // namespace tma
