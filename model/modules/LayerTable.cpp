// The layer table's entries, one per torch::nn holder (LibTorch 1.13's
// torch/nn/options/*.h for the options and their TORCH_ARG defaults,
// torch/csrc/api/src/nn/modules/*.cpp for reset() and forward()).
//
// Design:
//  1. An entry is written with a few builders: the options (`req` a
//     constructor argument, `arr` an ExpandingArray<D> default, `none` a
//     c10::nullopt default, ...), the op forward() calls, the documented
//     batch rank, and the entry's parameters() and forward() functions.
//  2. Entries that share their code differ by data (Conv1d/2d/3d by Dims
//     and Op), never by a test of their name.
//  3. Options are what the frontend reads from the headers; the defaults
//     here serve layerOptions, which builds options without Clang.
#include "model/modules/LayerDetail.h"

namespace tma {

using namespace layers;

namespace {

using K = LayerOption::Kind;

LayerOption req(const char *N) { return {N, K::Required, 0, ""}; }
LayerOption integer(const char *N, int64_t V) {
  return {N, K::Int, double(V), ""};
}
LayerOption arr(const char *N, int64_t V) {
  return {N, K::IntArray, double(V), ""};
}
LayerOption flag(const char *N, bool V) { return {N, K::Bool, V ? 1.0 : 0.0, ""}; }
LayerOption number(const char *N, double V) { return {N, K::Number, V, ""}; }
LayerOption text(const char *N, const char *V) { return {N, K::Str, 0, V}; }
LayerOption none(const char *N) { return {N, K::None, 0, ""}; }

LayerSpec entry(const char *Name, LayerKind Kind, const char *Op,
                std::vector<LayerOption> Options, int Dims,
                std::optional<int64_t> Rank,
                LayerParameters (*Params)(const LayerSpec &, const NamedArgs &),
                ForwardFn *Forward) {
  LayerSpec L;
  L.Name = Name;
  L.Kind = Kind;
  L.Op = Op;
  L.Options = std::move(Options);
  L.Dims = Dims;
  L.BatchedRank = Rank;
  L.Parameters = Params;
  L.Forward = Forward;
  return L;
}

LayerSpec layer(const char *Name, const char *Op, std::vector<LayerOption> Options,
                int Dims, std::optional<int64_t> Rank,
                LayerParameters (*Params)(const LayerSpec &, const NamedArgs &),
                ForwardFn *Forward) {
  return entry(Name, LayerKind::Layer, Op, std::move(Options), Dims, Rank,
               Params, Forward);
}

/// A parameterless layer whose forward is its op on the input alone.
LayerSpec activation(const char *Name, const char *Op,
                     std::vector<LayerOption> Options) {
  return layer(Name, Op, std::move(Options), 0, std::nullopt, noParameters,
               activationForward);
}

/// ConvOptions<D> (conv.h), the module's options.
std::vector<LayerOption> convOptions(bool Transposed) {
  std::vector<LayerOption> O = {req("in_channels"), req("out_channels"),
                                req("kernel_size"), arr("stride", 1),
                                arr("padding", 0)};
  if (Transposed)
    O.push_back(arr("output_padding", 0));
  for (LayerOption X : {arr("dilation", 1), integer("groups", 1),
                        flag("bias", true), text("padding_mode", "zeros")})
    O.push_back(X);
  return O;
}

std::vector<LayerOption> batchNormOptions() {
  return {req("num_features"), number("eps", 1e-5), number("momentum", 0.1),
          flag("affine", true), flag("track_running_stats", true)};
}

std::vector<LayerOption> maxPoolOptions() {
  return {req("kernel_size"), none("stride"), arr("padding", 0),
          arr("dilation", 1), flag("ceil_mode", false)};
}

std::vector<LayerOption> avgPoolOptions() {
  return {req("kernel_size"), none("stride"), arr("padding", 0),
          flag("ceil_mode", false), flag("count_include_pad", true),
          none("divisor_override")};
}

std::vector<LayerOption> recurrentOptions(bool Projection) {
  std::vector<LayerOption> O = {req("input_size"), req("hidden_size"),
                                integer("num_layers", 1), flag("bias", true),
                                flag("batch_first", false), number("dropout", 0.0),
                                flag("bidirectional", false)};
  if (Projection)
    O.push_back(integer("proj_size", 0));
  return O;
}

LayerSpec recurrent(const char *Name, const char *Op, unsigned Gates,
                    bool CellState) {
  // A batch of sequences; LibTorch 2.x also takes one unbatched sequence
  // (2-D), which recurrentForward does not model.
  LayerSpec L = entry(Name, LayerKind::Recurrent, Op, recurrentOptions(CellState),
                      0, 3, recurrentParameters, tupleForward);
  L.Gates = Gates;
  L.CellState = CellState;
  return L;
}

/// LSTMCell, GRUCell: one step of one layer (RNNCellImplBase); their
/// forward is run by the frontend (cellForward), as a recurrent layer's.
LayerSpec cell(const char *Name, const char *Op, unsigned Gates, bool CellState) {
  LayerSpec L = entry(Name, LayerKind::RecurrentCell, Op,
                      {req("input_size"), req("hidden_size"), flag("bias", true)},
                      0, 2, cellParameters, tupleForward);
  L.Gates = Gates;
  L.CellState = CellState;
  return L;
}

/// A loss: forward(input, target) is its functional op with the module's
/// options (MSELossImpl::forward calls F::detail::mse_loss(input, target,
/// options.reduction()), ...).
LayerSpec loss(const char *Name, const char *Op, std::vector<LayerOption> Options) {
  return entry(Name, LayerKind::Loss, Op, std::move(Options), 0, std::nullopt,
               noParameters, noForward);
}

std::vector<LayerSpec> buildTable() {
  std::vector<LayerSpec> T = {
      layer("Linear", "linear",
            {req("in_features"), req("out_features"), flag("bias", true)}, 0, 2,
            linearParameters, linearForward),
      layer("Conv1d", "conv1d", convOptions(false), 1, 3, convParameters, convForward),
      layer("Conv2d", "conv2d", convOptions(false), 2, 4, convParameters, convForward),
      layer("Conv3d", "conv3d", convOptions(false), 3, 5, convParameters, convForward),
      layer("ConvTranspose1d", "conv_transpose1d", convOptions(true), 1, 3,
            convTransposeParameters, convTransposeForward),
      layer("ConvTranspose2d", "conv_transpose2d", convOptions(true), 2, 4,
            convTransposeParameters, convTransposeForward),
      // BatchNorm1d takes (N, C) or (N, C, L): no one batch rank.
      layer("BatchNorm1d", "batch_norm", batchNormOptions(), 1, std::nullopt,
            batchNormParameters, batchNormForward),
      layer("BatchNorm2d", "batch_norm", batchNormOptions(), 2, 4,
            batchNormParameters, batchNormForward),
      layer("BatchNorm3d", "batch_norm", batchNormOptions(), 3, 5,
            batchNormParameters, batchNormForward),
      layer("LayerNorm", "layer_norm",
            {req("normalized_shape"), number("eps", 1e-5),
             flag("elementwise_affine", true)},
            0, std::nullopt, layerNormParameters, layerNormForward),
      layer("GroupNorm", "group_norm",
            {req("num_groups"), req("num_channels"), number("eps", 1e-5),
             flag("affine", true)},
            0, std::nullopt, groupNormParameters, groupNormForward),
      layer("Embedding", "embedding",
            {req("num_embeddings"), req("embedding_dim"), none("padding_idx"),
             none("max_norm"), number("norm_type", 2.0),
             flag("scale_grad_by_freq", false), flag("sparse", false),
             none("_weight")},
            0, std::nullopt, embeddingParameters, embeddingForward),
      layer("Dropout", "dropout", {number("p", 0.5), flag("inplace", false)}, 0,
            std::nullopt, noParameters, dropoutForward),
      // _dropoutNd_helper<3, 4>: a batch is 4-D (an unbatched 3-D input is
      // not modelled).
      layer("Dropout2d", "feature_dropout", {number("p", 0.5), flag("inplace", false)},
            2, 4, noParameters, dropoutForward),
      // Activations: the functional op of each (ReLU6 is at::hardtanh, as
      // at::relu6 is); their scalar options change no geometry.
      activation("ReLU", "relu", {flag("inplace", false)}),
      activation("ReLU6", "hardtanh", {flag("inplace", false)}),
      activation("LeakyReLU", "leaky_relu",
                 {number("negative_slope", 1e-2), flag("inplace", false)}),
      activation("ELU", "elu", {number("alpha", 1.0), flag("inplace", false)}),
      layer("GELU", "gelu", {text("approximate", "none")}, 0, std::nullopt,
            noParameters, geluForward),
      activation("SiLU", "silu", {}),
      activation("Sigmoid", "sigmoid", {}),
      activation("Tanh", "tanh", {}),
      activation("Softplus", "softplus",
                 {number("beta", 1.0), number("threshold", 20.0)}),
      layer("Hardtanh", "hardtanh",
            {number("min_val", -1.0), number("max_val", 1.0), flag("inplace", false)},
            0, std::nullopt, hardtanhParameters, activationForward),
      layer("Softmax", "softmax", {req("dim")}, 0, std::nullopt, noParameters,
            softmaxForward),
      layer("LogSoftmax", "log_softmax", {req("dim")}, 0, std::nullopt,
            noParameters, softmaxForward),
      layer("MaxPool1d", "max_pool1d", maxPoolOptions(), 1, 3, noParameters,
            maxPoolForward),
      layer("MaxPool2d", "max_pool2d", maxPoolOptions(), 2, 4, noParameters,
            maxPoolForward),
      layer("AvgPool1d", "avg_pool1d", avgPoolOptions(), 1, 3, noParameters,
            avgPoolForward),
      layer("AvgPool2d", "avg_pool2d", avgPoolOptions(), 2, 4, noParameters,
            avgPoolForward),
      layer("AdaptiveAvgPool1d", "adaptive_avg_pool1d", {req("output_size")}, 1,
            3, noParameters, adaptiveAvgPoolForward),
      layer("AdaptiveAvgPool2d", "adaptive_avg_pool2d", {req("output_size")}, 2,
            4, noParameters, adaptiveAvgPoolForward),
      layer("Flatten", "flatten", {integer("start_dim", 1), integer("end_dim", -1)},
            0, std::nullopt, noParameters, flattenForward),
      layer("Unflatten", "unflatten", {req("dim"), req("sizes"), none("dimname")},
            0, std::nullopt, noParameters, unflattenForward),
      layer("Identity", "", {}, 0, std::nullopt, noParameters, identityForward),
      entry("Sequential", LayerKind::Sequential, "", {}, 0, std::nullopt,
            noParameters, noForward),
      recurrent("LSTM", "lstm", 4, true),
      recurrent("GRU", "gru", 3, false),
      cell("LSTMCell", "lstm_cell", 4, true),
      cell("GRUCell", "gru_cell", 3, false),
      loss("MSELoss", "mse_loss", {text("reduction", "mean")}),
      loss("L1Loss", "l1_loss", {text("reduction", "mean")}),
      loss("SmoothL1Loss", "smooth_l1_loss",
           {text("reduction", "mean"), number("beta", 1.0)}),
      loss("HuberLoss", "huber_loss", {text("reduction", "mean"), number("delta", 1.0)}),
      loss("CrossEntropyLoss", "cross_entropy_loss",
           {none("weight"), integer("ignore_index", -100), text("reduction", "mean"),
            number("label_smoothing", 0.0)}),
      loss("NLLLoss", "nll_loss",
           {none("weight"), integer("ignore_index", -100), text("reduction", "mean")}),
      loss("BCELoss", "binary_cross_entropy", {none("weight"), text("reduction", "mean")}),
      loss("BCEWithLogitsLoss", "binary_cross_entropy_with_logits",
           {none("weight"), text("reduction", "mean"), none("pos_weight")}),
      loss("KLDivLoss", "kl_div", {text("reduction", "mean"), flag("log_target", false)}),
  };
  return T;
}

} // namespace

const std::vector<LayerSpec> &allLayers() {
  static const std::vector<LayerSpec> Table = buildTable();
  return Table;
}

const LayerSpec *lookupLayer(std::string_view Name) {
  for (const LayerSpec &L : allLayers())
    if (L.Name == Name)
      return &L;
  return nullptr;
}

bool isLayerKind(std::string_view Name, LayerKind Kind) {
  const LayerSpec *L = lookupLayer(Name);
  return L && L->Kind == Kind;
}

std::optional<int64_t> batchedInputRank(std::string_view Name) {
  const LayerSpec *L = lookupLayer(Name);
  return L ? L->BatchedRank : std::nullopt;
}

ArgValue tensorArgOf(ValueId Id, const TensorValue &V) {
  ArgValue A;
  A.K = ArgValue::Kind::Tensor;
  A.Type = ArgType::Tensor;
  A.Tensor = Id;
  A.TV = V;
  return A;
}

ArgValue intListArg(const Shape &L) {
  ArgValue A;
  A.K = ArgValue::Kind::IntList;
  A.Type = ArgType::IntList;
  A.List = L;
  return A;
}

ArgValue intArgOf(int64_t V) {
  ArgValue A;
  A.K = ArgValue::Kind::Int;
  A.Type = ArgType::Int;
  A.Int = V;
  A.Size = SymSize(V);
  return A;
}

ArgValue boolArgOf(bool V) {
  ArgValue A;
  A.K = ArgValue::Kind::Bool;
  A.Type = ArgType::Bool;
  A.Bool = V;
  return A;
}

ArgValue numberArgOf(double V) {
  ArgValue A;
  A.K = ArgValue::Kind::Number;
  A.Type = ArgType::Float;
  A.Number = V;
  A.Floating = true;
  return A;
}

NamedArgs layerOptions(const LayerSpec &L, const std::vector<ArgValue> &Positional,
                       const std::map<std::string, ArgValue> &Set) {
  NamedArgs O;
  O.Record = "torch::nn::" + L.Name + "Options";
  for (size_t N = 0; N < L.Options.size(); ++N) {
    const LayerOption &Opt = L.Options[N];
    ArgValue V;
    switch (Opt.K) {
    case K::Required:
      V.K = ArgValue::Kind::Unknown;
      V.Reason = "the constructor's argument " + Opt.Name + " is not given";
      break;
    case K::Int:
      V = intArgOf(int64_t(Opt.Value));
      break;
    case K::IntArray:
      V = intListArg(Shape(size_t(std::max(L.Dims, 1)), SymSize(int64_t(Opt.Value))));
      break;
    case K::Bool:
      V = boolArgOf(Opt.Value != 0);
      break;
    case K::Number:
      V = numberArgOf(Opt.Value);
      break;
    case K::Str:
      V.K = ArgValue::Kind::Other;
      V.Str = Opt.Text;
      break;
    case K::None:
      V.K = ArgValue::Kind::Absent;
      break;
    }
    V.Defaulted = Opt.K != K::Required;
    if (N < Positional.size()) {
      V = Positional[N];
      // An ExpandingArray<D> given one integer is D of it.
      if ((Opt.Name.find("kernel_size") != std::string::npos ||
           Opt.Name == "output_size" || Opt.K == K::IntArray) &&
          V.K == ArgValue::Kind::Int && L.Dims > 0)
        V = intListArg(Shape(size_t(L.Dims), V.Size));
    }
    O.Values[Opt.Name] = V;
  }
  for (const auto &[Name, V] : Set)
    O.Values[Name] = V;
  for (const auto &[Name, V] : O.Values)
    if (V.K == ArgValue::Kind::Unknown) {
      O.Complete = false;
      O.Why = V.Reason;
    }
  return O;
}

LayerParameters layerParameters(const LayerSpec &L, const NamedArgs &O) {
  return L.Parameters ? L.Parameters(L, O) : LayerParameters();
}

LayerForward layerForward(const LayerSpec &L, const NamedArgs &O,
                          const LayerForwardInput &In) {
  // An `inplace` option writes into the input. ReLU's forward then is
  // torch::relu_(input) (F::detail::relu); the others are not followed.
  const ArgValue *Ip = option(O, "inplace");
  if (Ip && Ip->K == ArgValue::Kind::Bool && Ip->Bool && L.Name == "ReLU") {
    LayerSpec InPlace = L;
    InPlace.Op = "relu_";
    return L.Forward(InPlace, O, In);
  }
  if (Ip && (Ip->K != ArgValue::Kind::Bool || Ip->Bool)) {
    LayerForward F;
    F.Why = "in place (inplace(true)) is not modelled";
    return F;
  }
  return L.Forward(L, O, In);
}

OpCall lossForwardCall(const LayerSpec &L, const NamedArgs &O,
                       const ArgValue &Input, const ArgValue &Target,
                       const TorchVersion &Version) {
  OpCall C;
  C.Written = L.Op;
  C.Op = lookupOp(C.Written);
  C.Version = Version;
  C.Args.push_back(Input);
  C.Args.push_back(Target);
  // The module's options, as the functional spelling's options object.
  ArgValue Options;
  Options.K = ArgValue::Kind::NNOptions;
  Options.Named = std::make_shared<const NamedArgs>(O);
  C.Args.push_back(Options);
  return C;
}

std::optional<RecurrentLayers> recurrentLayers(const LayerSpec &L,
                                               const NamedArgs &O) {
  auto In = sizeOption(O, "input_size"), H = sizeOption(O, "hidden_size");
  // A symbolic layer count (`.num_layers(num_layers)`, a constructor
  // argument) is one that runs: with none, forward throws (at::lstm and
  // at::gru stack the per-layer final states, and at::stack of no tensors
  // throws).
  auto Layers = sizeOption(O, "num_layers");
  auto Bidirectional = flagOption(O, "bidirectional");
  auto BatchFirst = flagOption(O, "batch_first");
  if (L.Kind != LayerKind::Recurrent || !In || !H || !Layers ||
      (Layers->constant() && *Layers->constant() < 1) || !Bidirectional ||
      !BatchFirst)
    return std::nullopt;
  RecurrentLayers R;
  R.Gates = L.Gates;
  R.CellState = L.CellState;
  R.InputSize = *In;
  R.HiddenSize = *H;
  R.NumLayers = *Layers;
  R.Bidirectional = *Bidirectional;
  R.BatchFirst = *BatchFirst;
  return R;
}

size_t recurrentOutputs(const LayerSpec &L) {
  if (L.Kind == LayerKind::RecurrentCell)
    return L.CellState ? 2 : 1;
  return L.CellState ? 3 : 2;
}

std::optional<RecurrentCell> recurrentCell(const LayerSpec &L, const NamedArgs &O) {
  auto In = sizeOption(O, "input_size"), H = sizeOption(O, "hidden_size");
  if (L.Kind != LayerKind::RecurrentCell || !In || !H)
    return std::nullopt;
  RecurrentCell R;
  R.CellState = L.CellState;
  R.InputSize = *In;
  R.HiddenSize = *H;
  return R;
}

namespace layers {

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

bool unset(const NamedArgs &O, const char *N) {
  const ArgValue *A = option(O, N);
  return !A || A->K == ArgValue::Kind::Absent;
}

} // namespace layers
} // namespace tma
