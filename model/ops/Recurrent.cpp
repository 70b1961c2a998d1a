// Recurrent layers as functions (LibTorch 1.13, CPU,
// torch/csrc/api/src/nn/modules/rnn.cpp): LSTM and GRU over a batch of
// sequences, LSTMCell and GRUCell over one step, each with or without an
// initial state.
//
// Every result is a fresh tensor. The state a caller passes is checked
// where LibTorch checks it: an LSTM's or GRU's h_0 (and c_0) must have the
// sizes (num_layers * directions, batch, hidden) (check_hidden_size), a
// cell's hidden state the input's batch and the hidden size
// (check_forward_hidden). A mismatch throws LibTorch 1.13's message; the
// messages of 2.x differ and are not modelled (unknown, with the reason).
// A state whose dtype is not float32, or whose device is not the input's,
// is not modelled.
#include "model/Ops.h"
#include "model/ops/OpsDetail.h"

namespace tma {

using namespace detail;

namespace {

using Outcomes = std::vector<OpOutcome>;

Outcomes single(OpOutcome O) { return {std::move(O)}; }

/// A fresh float32 result on the input's device; the zero state and the
/// kernel's workspace come and go inside the op, their size not modelled.
OpOutcome fresh(const TensorValue &In, Shape Sizes, Shape Strides,
                const char *Note) {
  OpOutcome O;
  O.Kind = OpKind::Copy;
  O.Value.Type = DType::Float32;
  O.Value.Dev = In.Dev;
  O.Value.Sizes = std::move(Sizes);
  O.Value.Strides = std::move(Strides);
  O.Value.Offset = SymSize(0);
  O.TransientBytes.reset();
  O.ReadBytes.reset();
  O.WrittenBytes.reset();
  O.Note = Note;
  return O;
}

/// LibTorch throws Message (1.13's words); 2.x words it otherwise.
OpOutcome throwsIn113(const std::string &Message, const TensorValue &In,
                      const TorchVersion &Version) {
  if (Version.atLeast(2, 0))
    return unknownCopy("LibTorch throws here; its 2.x message is not "
                       "modelled (1.13: \"" + Message + "\")",
                       DType::Float32, In.Dev);
  return throws(Message);
}

/// Whether T is float32: known, or a parameter's dtype, stated where the
/// call runs (LibTorch's matmul with the float32 weights throws on any
/// other: "mat1 and mat2 must have the same dtype").
bool float32Where(const TensorValue &T) {
  if (T.Type)
    return *T.Type == DType::Float32;
  return !T.TypeOf.empty() &&
         requireCondition(T.TypeOf + ".scalar_type() == torch::kFloat");
}

/// What is not modelled of a state tensor (Name: "h_0"), or "". A state
/// on another device than the input's throws; where either device is not
/// known, the call goes on only with one device.
std::string stateDTypeAndDevice(const TensorValue &S, const TensorValue &In,
                                const std::string &Name) {
  if (!float32Where(S))
    return S.Type ? "a " + std::string(dtypeName(*S.Type)) + " " + Name +
                        " with float32 parameters is not modelled"
                  : Name + "'s dtype is unknown";
  if (S.Dev && In.Dev && !(*S.Dev == *In.Dev))
    return Name + " on another device than the input is not modelled";
  return "";
}

/// RNNImplBase::check_hidden_size: S must have exactly the sizes Expected,
/// or LibTorch throws "Expected <Label> size 2 3 7, got [1, 3, 7]".
std::optional<OpOutcome> checkHidden(const TensorValue &S, const Shape &Expected,
                                     const std::string &Label,
                                     const std::string &Name,
                                     const TensorValue &In,
                                     const TorchVersion &Version) {
  if (!S.Sizes)
    return unknownCopy(Name + ": " + shapeReason(S), DType::Float32, In.Dev);
  const Shape &SS = *S.Sizes;
  auto Mismatch = [&]() -> OpOutcome {
    if (!constantShape(SS) || !constantShape(Expected))
      return unknownCopy(Name + "'s sizes " + dimsText(SS) +
                             " differ from the expected " + dimsText(Expected) +
                             " (LibTorch throws)",
                         DType::Float32, In.Dev);
    std::string Want;
    for (size_t K = 0; K < Expected.size(); ++K)
      Want += (K ? " " : "") + sizeText(Expected[K]);
    return throwsIn113("Expected " + Label + " size " + Want + ", got " +
                           dimsText(SS),
                       In, Version);
  };
  if (SS.size() != Expected.size())
    return Mismatch();
  for (size_t K = 0; K < SS.size(); ++K) {
    Tri Eq = requireEq(SS[K], Expected[K]);
    if (Eq == Tri::False)
      return Mismatch();
    if (Eq == Tri::Unknown)
      return unknownCopy(undecided("==", SS[K], Expected[K]), DType::Float32,
                         In.Dev);
  }
  if (std::string Why = stateDTypeAndDevice(S, In, Name); !Why.empty())
    return unknownCopy(Why, DType::Float32, In.Dev);
  return std::nullopt;
}

} // namespace

std::vector<OpOutcome> recurrentForward(const TensorValue &In,
                                        const RecurrentLayers &R,
                                        const TorchVersion &Version,
                                        const std::vector<TensorValue> &State) {
  if (!In.Sizes)
    return single(unknownCopy(shapeReason(In), In.Type, In.Dev));
  const Shape &IS = *In.Sizes;
  // RNNImplBase::check_input: a batch of sequences; 2.x also takes one
  // unbatched sequence, which is not modelled.
  if (IS.size() != 3) {
    if (Version.atLeast(2, 0))
      return single(unknownCopy("a recurrent layer's input that is not 3-D "
                                "is not modelled",
                                In.Type, In.Dev));
    return single(throws("input must have 3 dimensions, got " +
                         std::to_string(IS.size())));
  }
  Tri Fits = requireEq(IS[2], R.InputSize);
  if (Fits == Tri::False)
    return single(throws("input.size(-1) must be equal to input_size. "
                         "Expected " + sizeText(R.InputSize) + ", got " +
                         sizeText(IS[2])));
  if (Fits == Tri::Unknown)
    return single(unknownCopy(undecided("==", IS[2], R.InputSize), In.Type,
                              In.Dev));
  // The parameters are float32: another input dtype is not modelled. A
  // parameter's dtype is float32 where the call runs (LibTorch's matmul
  // with the float32 weights throws on any other): stated.
  if (!In.Type && !In.TypeOf.empty() &&
      requireCondition(In.TypeOf + ".scalar_type() == torch::kFloat")) {
    TensorValue Float = In;
    Float.Type = DType::Float32;
    Float.TypeOf.clear();
    return recurrentForward(Float, R, Version, State);
  }
  if (In.Type != std::optional<DType>(DType::Float32))
    return single(unknownCopy(In.Type ? "a " + std::string(dtypeName(*In.Type)) +
                                            " input to float32 parameters is "
                                            "not modelled"
                                      : "its input's dtype is unknown",
                              std::nullopt, In.Dev));
  SymSize Seq = R.BatchFirst ? IS[1] : IS[0];
  SymSize Batch = R.BatchFirst ? IS[0] : IS[1];
  SymSize Dirs(R.Bidirectional ? 2 : 1);
  SymSize Width = Dirs * R.HiddenSize;
  Shape StateSizes = {Dirs * R.NumLayers, Batch, R.HiddenSize};
  // forward(input, hx): check_forward_args checks h_0 (and c_0) against
  // (num_layers * D, batch, hidden) before the op runs.
  if (!State.empty()) {
    if (State.size() != (R.CellState ? 2u : 1u))
      return single(unknownCopy("the initial state has " +
                                    std::to_string(State.size()) + " tensors",
                                DType::Float32, In.Dev));
    for (size_t K = 0; K < State.size(); ++K) {
      std::string Label = R.CellState ? "hidden[" + std::to_string(K) + "]"
                                      : std::string("hidden");
      std::string Name = K == 0 ? "h_0" : "c_0";
      if (auto Bad = checkHidden(State[K], StateSizes, Label, Name, In, Version))
        return single(*Bad);
    }
  }
  const char *Note = "recurrent layer: a fresh output";
  std::vector<OpOutcome> Out;
  // Seq-first (L, N, D*H), contiguous; batch_first gives its transpose.
  Shape SeqFirst = {Seq, Batch, Width};
  Shape SeqStrides = contiguousStrides(SeqFirst);
  if (R.BatchFirst)
    Out.push_back(fresh(In, {Batch, Seq, Width},
                        {SeqStrides[1], SeqStrides[0], SeqStrides[2]}, Note));
  else
    Out.push_back(fresh(In, SeqFirst, SeqStrides, Note));
  Out.push_back(fresh(In, StateSizes, contiguousStrides(StateSizes), Note));
  if (R.CellState)
    Out.push_back(fresh(In, StateSizes, contiguousStrides(StateSizes), Note));
  return Out;
}

std::vector<OpOutcome> cellForward(const TensorValue &In, const RecurrentCell &R,
                                   const TorchVersion &Version,
                                   const std::vector<TensorValue> &State) {
  if (!In.Sizes)
    return single(unknownCopy(shapeReason(In), In.Type, In.Dev));
  const Shape &IS = *In.Sizes;
  // A batch (2-D); 1.13 reads input.size(1) of any input, 2.x also takes
  // one unbatched step (1-D): neither is modelled.
  if (IS.size() != 2)
    return single(unknownCopy("a recurrent cell's input that is not 2-D is "
                              "not modelled",
                              In.Type, In.Dev));
  // RNNCellImplBase::check_forward_input.
  Tri Fits = requireEq(IS[1], R.InputSize);
  if (Fits == Tri::False) {
    if (!IS[1].constant() || !R.InputSize.constant())
      return single(unknownCopy("the input's size " + sizeText(IS[1]) +
                                    " differs from input_size " +
                                    sizeText(R.InputSize) + " (LibTorch throws)",
                                DType::Float32, In.Dev));
    return single(throwsIn113("input has inconsistent input_size: got " +
                                  sizeText(IS[1]) + " expected " +
                                  sizeText(R.InputSize),
                              In, Version));
  }
  if (Fits == Tri::Unknown)
    return single(unknownCopy(undecided("==", IS[1], R.InputSize), In.Type,
                              In.Dev));
  if (!float32Where(In))
    return single(unknownCopy(In.Type ? "a " + std::string(dtypeName(*In.Type)) +
                                            " input to float32 parameters is "
                                            "not modelled"
                                      : "its input's dtype is unknown",
                              std::nullopt, In.Dev));
  Shape Sizes = {IS[0], R.HiddenSize};
  size_t Count = R.CellState ? 2 : 1;
  if (!State.empty()) {
    if (State.size() != Count)
      return single(unknownCopy("the initial state has " +
                                    std::to_string(State.size()) + " tensors",
                                DType::Float32, In.Dev));
    // RNNCellImplBase::check_forward_hidden: hx's batch, then its hidden
    // size; only sizes 0 and 1 are read, so another rank is not modelled.
    for (size_t K = 0; K < State.size(); ++K) {
      const TensorValue &S = State[K];
      std::string Label = R.CellState ? "hidden[" + std::to_string(K) + "]"
                                      : std::string("hidden");
      std::string Name = K == 0 ? "h_0" : "c_0";
      if (!S.Sizes)
        return single(unknownCopy(Name + ": " + shapeReason(S), DType::Float32,
                                  In.Dev));
      const Shape &SS = *S.Sizes;
      if (SS.size() != 2)
        return single(unknownCopy("a " + std::to_string(SS.size()) + "-D " +
                                      Name + " is not modelled",
                                  DType::Float32, In.Dev));
      struct Check {
        SymSize Got, Want;
        std::string Message;
      };
      Check Checks[] = {
          {SS[0], IS[0],
           "Input batch size " + sizeText(IS[0]) + " doesn't match " + Label +
               " batch size " + sizeText(SS[0])},
          {SS[1], R.HiddenSize,
           Label + " has inconsistent hidden_size: got " + sizeText(SS[1]) +
               ", expected " + sizeText(R.HiddenSize)}};
      for (const Check &C : Checks) {
        Tri Eq = requireEq(C.Got, C.Want);
        if (Eq == Tri::False) {
          if (!C.Got.constant() || !C.Want.constant())
            return single(unknownCopy(Name + "'s sizes " + dimsText(SS) +
                                          " do not fit (LibTorch throws)",
                                      DType::Float32, In.Dev));
          return single(throwsIn113(C.Message, In, Version));
        }
        if (Eq == Tri::Unknown)
          return single(unknownCopy(undecided("==", C.Got, C.Want),
                                    DType::Float32, In.Dev));
      }
      if (std::string Why = stateDTypeAndDevice(S, In, Name); !Why.empty())
        return single(unknownCopy(Why, DType::Float32, In.Dev));
    }
  }
  std::vector<OpOutcome> Out;
  for (size_t K = 0; K < Count; ++K)
    Out.push_back(fresh(In, Sizes, contiguousStrides(Sizes),
                        "recurrent cell: a fresh output"));
  return Out;
}

} // namespace tma
