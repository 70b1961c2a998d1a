// parameters() and buffers() of each layer entry: what the layer's reset()
// registers (LibTorch 1.13's torch/csrc/api/src/nn/modules/*.cpp), in
// registration order, with shapes as functions of the options.
//
// Design:
//  1. One function per entry family; the entry's data (Dims, Gates) says
//     what differs between its members, never its name.
//  2. An option that is not derived leaves the layer unknown (Why); a
//     check reset() makes that is not decided does too (LibTorch throws
//     when it fails), so no parameter list is claimed for a layer that may
//     not be built.
//  3. An LSTM whose num_layers is a symbol has no list, but the count of
//     its elements is a formula (NotListedWhy with Elements).
#include "model/modules/LayerDetail.h"

#include "model/Decide.h"

namespace tma {
namespace layers {

namespace {

struct Registry {
  LayerParameters P;
  void param(const std::string &N, Shape S) { P.Tensors.push_back({N, S, DType::Float32, false}); }
  void buffer(const std::string &N, Shape S, DType T = DType::Float32) {
    P.Tensors.push_back({N, S, T, true});
  }
};

LayerParameters notDerived(const std::string &Why) {
  LayerParameters P;
  P.Why = Why;
  return P;
}

} // namespace

LayerParameters noParameters(const LayerSpec &, const NamedArgs &) { return {}; }

LayerParameters linearParameters(const LayerSpec &, const NamedArgs &O) {
  auto In = sizeOption(O, "in_features"), Out = sizeOption(O, "out_features");
  auto Bias = flagOption(O, "bias");
  if (!In || !Out || !Bias)
    return notDerived("its features or bias could not be derived");
  Registry R;
  R.param("weight", {*Out, *In});
  if (*Bias)
    R.param("bias", {*Out});
  return R.P;
}

namespace {

LayerParameters convolution(const NamedArgs &O, bool Transposed) {
  auto In = sizeOption(O, "in_channels"), Out = sizeOption(O, "out_channels");
  auto Groups = intOption(O, "groups");
  auto Bias = flagOption(O, "bias");
  const ArgValue *K = option(O, "kernel_size");
  if (!In || !Out || !Groups || !Bias || !K || K->K != ArgValue::Kind::IntList ||
      *Groups < 1)
    return notDerived("its channels, kernel size, groups or bias could not be derived");
  // ConvNdImpl::reset: both channel counts divisible by groups.
  if (*Groups != 1 && (sizeDivides(SymSize(*Groups), *In) != Tri::True ||
                       sizeDivides(SymSize(*Groups), *Out) != Tri::True))
    return notDerived("whether groups divides its channels is not decided "
                      "(LibTorch throws when it does not)");
  // Transposed: (in, out / groups, *kernel); else (out, in / groups, ...).
  Shape W = Transposed ? Shape{*In, SymSize::floorDiv(*Out, *Groups)}
                       : Shape{*Out, SymSize::floorDiv(*In, *Groups)};
  W.insert(W.end(), K->List.begin(), K->List.end());
  Registry R;
  R.param("weight", W);
  if (*Bias)
    R.param("bias", {*Out});
  return R.P;
}

} // namespace

LayerParameters convParameters(const LayerSpec &, const NamedArgs &O) {
  return convolution(O, false);
}

LayerParameters convTransposeParameters(const LayerSpec &, const NamedArgs &O) {
  return convolution(O, true);
}

LayerParameters batchNormParameters(const LayerSpec &, const NamedArgs &O) {
  auto C = sizeOption(O, "num_features");
  auto Affine = flagOption(O, "affine"), Track = flagOption(O, "track_running_stats");
  if (!C || !Affine || !Track)
    return notDerived("its num_features, affine or track_running_stats could not be "
                      "derived");
  Registry R;
  if (*Affine) {
    R.param("weight", {*C});
    R.param("bias", {*C});
  }
  if (*Track) {
    R.buffer("running_mean", {*C});
    R.buffer("running_var", {*C});
    R.buffer("num_batches_tracked", {}, DType::Int64);
  }
  return R.P;
}

LayerParameters layerNormParameters(const LayerSpec &, const NamedArgs &O) {
  const ArgValue *NS = option(O, "normalized_shape");
  auto Affine = flagOption(O, "elementwise_affine");
  if (!NS || NS->K != ArgValue::Kind::IntList || !Affine)
    return notDerived("its normalized_shape or elementwise_affine could not be derived");
  Registry R;
  if (*Affine) {
    R.param("weight", NS->List);
    R.param("bias", NS->List);
  }
  return R.P;
}

LayerParameters groupNormParameters(const LayerSpec &, const NamedArgs &O) {
  auto C = sizeOption(O, "num_channels");
  auto Affine = flagOption(O, "affine");
  if (!C || !Affine || !intOption(O, "num_groups"))
    return notDerived("its num_groups, num_channels or affine could not be derived");
  Registry R;
  if (*Affine) {
    R.param("weight", {*C});
    R.param("bias", {*C});
  }
  return R.P;
}

LayerParameters embeddingParameters(const LayerSpec &, const NamedArgs &O) {
  auto N = sizeOption(O, "num_embeddings"), D = sizeOption(O, "embedding_dim");
  if (!N || !D)
    return notDerived("its num_embeddings or embedding_dim could not be derived");
  const ArgValue *W = option(O, "_weight");
  if (W && W->K != ArgValue::Kind::Absent)
    return notDerived("a weight given to it (_weight) is not modelled");
  // EmbeddingImpl::reset checks padding_idx against num_embeddings; an
  // index that is there but not read could make it throw.
  const ArgValue *Pad = option(O, "padding_idx");
  if (Pad && Pad->K != ArgValue::Kind::Absent) {
    if (Pad->K != ArgValue::Kind::Int)
      return notDerived("its padding_idx could not be derived");
    Tri In = Pad->Int >= 0 ? sizeLt(SymSize(Pad->Int), *N)
                           : sizeLe(SymSize(-Pad->Int), *N);
    if (In != Tri::True)
      return notDerived("whether padding_idx is within num_embeddings is not decided "
                        "(LibTorch throws when it is not)");
  }
  Registry R;
  R.param("weight", {*N, *D});
  return R.P;
}

LayerParameters hardtanhParameters(const LayerSpec &, const NamedArgs &O) {
  // HardtanhImpl::reset: TORCH_CHECK(max_val > min_val).
  auto Min = numberOption(O, "min_val"), Max = numberOption(O, "max_val");
  if (!Min || !Max)
    return notDerived("its min_val or max_val could not be derived");
  if (!(*Max > *Min))
    return notDerived("max_val must be greater than min_val (LibTorch throws)");
  return {};
}

LayerParameters recurrentParameters(const LayerSpec &L, const NamedArgs &O) {
  // RNNImplBase::reset: per layer, per direction, w_ih (G*H, in),
  // w_hh (G*H, H) and the two biases; a layer after the first reads the
  // previous one's D*H outputs.
  auto R = recurrentLayers(L, O);
  auto Bias = flagOption(O, "bias");
  if (!R || !Bias)
    return notDerived("its sizes, layers, bias or directions could not be derived");
  if (L.CellState && intOption(O, "proj_size") != std::optional<int64_t>(0))
    return notDerived("an " + L.Name + " with proj_size is not modelled");
  SymSize Gates(R->Gates), H = R->HiddenSize;
  int64_t Dirs = R->Bidirectional ? 2 : 1;
  LayerParameters P;
  // Each layer has parameters of its own: a layer count that is a symbol
  // gives no list of them (forward is still followed).
  std::optional<int64_t> Layers = R->NumLayers.constant();
  if (!Layers) {
    P.NotListedWhy = "its number of layers (" + R->NumLayers.toCpp() +
                     ") is not a constant, so its parameters are not listed";
    // Their count is still a formula: per direction, the first layer reads
    // the input and every later one the previous layer's D*H.
    SymSize Biases = *Bias ? SymSize(2) * Gates * H : SymSize(0);
    SymSize First = Gates * H * R->InputSize + Gates * H * H + Biases;
    SymSize Later = Gates * H * (SymSize(Dirs) * H) + Gates * H * H + Biases;
    P.Elements = SymSize(Dirs) * First +
                 SymSize(Dirs) * (R->NumLayers - SymSize(1)) * Later;
    return P;
  }
  for (int64_t K = 0; K < *Layers; ++K)
    for (int64_t D = 0; D < Dirs; ++D) {
      std::string Suffix = "_l" + std::to_string(K) + (D ? "_reverse" : "");
      SymSize Width = K == 0 ? R->InputSize : SymSize(Dirs) * H;
      P.Tensors.push_back({"weight_ih" + Suffix, {Gates * H, Width}});
      P.Tensors.push_back({"weight_hh" + Suffix, {Gates * H, H}});
      if (*Bias) {
        P.Tensors.push_back({"bias_ih" + Suffix, {Gates * H}});
        P.Tensors.push_back({"bias_hh" + Suffix, {Gates * H}});
      }
    }
  return P;
}

LayerParameters cellParameters(const LayerSpec &L, const NamedArgs &O) {
  // RNNCellImplBase::reset: weight_ih (G*H, in), weight_hh (G*H, H), and
  // with bias bias_ih and bias_hh (G*H).
  auto R = recurrentCell(L, O);
  auto Bias = flagOption(O, "bias");
  if (!R || !Bias)
    return notDerived("its sizes or bias could not be derived");
  SymSize Rows = SymSize(L.Gates) * R->HiddenSize;
  LayerParameters P;
  P.Tensors.push_back({"weight_ih", {Rows, R->InputSize}});
  P.Tensors.push_back({"weight_hh", {Rows, R->HiddenSize}});
  if (*Bias) {
    P.Tensors.push_back({"bias_ih", {Rows}});
    P.Tensors.push_back({"bias_hh", {Rows}});
  }
  return P;
}

} // namespace layers
} // namespace tma
