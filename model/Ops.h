// ATen op rules: what each LibTorch op returns (shape, strides, dtype,
// device), whether it is a view, a copy or the input itself, and the bytes it
// reads and writes.
//
// A rule sees only TensorValues and plain arguments. It never decides which
// storage a result lives in; it says "view of input N" or "new storage" and
// the Interpreter does the bookkeeping. Missing inputs propagate: a rule
// fills in what it can derive and marks the rest unknown with a reason.
#pragma once

#include "model/Tensor.h"
#include "model/Trace.h"

#include <optional>
#include <string>
#include <vector>

namespace tma {

enum class MemoryFormat { Preserve, Contiguous, ChannelsLast };

struct OpOutcome {
  OpKind Kind = OpKind::Unknown;
  TensorValue Value;
  /// View/Self/InPlace: the input whose storage the result shares.
  unsigned SharesInput = 0;
  /// Unknown: inputs the result may be the very tensor of (a called
  /// function that returns its argument on some paths).
  std::vector<unsigned> MayBeInputs;
  std::optional<SymSize> ReadBytes;
  std::optional<SymSize> WrittenBytes;
  /// Storage allocated and freed inside the op (matmul's folding copy, a
  /// CPU dtype conversion): 0 when there is none, nullopt when unknown (the
  /// peak is then unknown too).
  std::optional<SymSize> TransientBytes = SymSize(0);
  /// Why TransientBytes is unknown, when the rule knows (the peak's reason).
  std::string TransientWhy;
  /// Everything allocated and freed inside the op, when that is not one
  /// allocation of TransientBytes (a followed call's temporaries: their
  /// peak is TransientBytes, their sum this); unset: TransientBytes.
  std::optional<SymSize> TransientTotalBytes;
  /// Tensors the op makes inside and frees before it returns (counted in
  /// TransientBytes) that the backward nodes it records keep when
  /// gradients are on: cross_entropy's log_softmax output and nll_loss's
  /// total_weight, in that order (model/Autograd.h rule 6).
  std::vector<SymSize> Intermediates;
  /// Alloc/Copy: the new storage's bytes when they are not the result's
  /// extent (a called function that returns a slice of a tensor it
  /// allocated keeps the whole allocation alive).
  std::optional<SymSize> StorageBytes;
  /// Alloc/Copy: the new storage's bytes are not known though the result's
  /// shape is (a loss reduced into an unreduced loss of unknown size).
  bool StorageBytesUnknown = false;
  std::string Note;
  std::string Error;
  /// A factory whose dtype is the default dtype because its options named
  /// none (copied to OpEvent::DTypeDefaulted).
  bool DTypeDefaulted = false;
  /// Where the op runs and what it makes, for autograd (copied to OpEvent's
  /// GradModeOn and MakesGradLeaf; set by the frontend, not by rules).
  bool GradModeOn = true;
  bool MakesGradLeaf = false;
  /// Alloc: the new storage is a module's parameter (the peak's
  /// breakdown; set by the frontend).
  bool MakesParameter = false;
  /// The call's arguments by schema name (copied to OpEvent::Args; set by
  /// the frontend).
  std::vector<OpArgument> Args;
  /// The table op whose rule made this outcome (set by applyRule).
  OpCode Code = NoOpCode;
};

/// LibTorch's own overflow checks on what an op produces: an outcome whose
/// element count or new storage would not fit in int64 becomes Throws with
/// LibTorch's message. The Interpreter applies it to every outcome, so no
/// rule can hand a wrapped number to the report.
OpOutcome checkedOutcome(OpOutcome Out);

/// The outcome for an op the rules do not model.
OpOutcome unmodelled(const std::string &Op);
/// An op that raises at run time with Message.
OpOutcome throws(const std::string &Message);

// ---- Factories --------------------------------------------------------------

enum class FillKind { Uninitialized, Filled };

/// randn/rand/zeros/ones/empty/full/randint...: a fresh contiguous tensor.
OpOutcome factory(const std::optional<Shape> &Sizes,
                  const std::optional<DType> &Type,
                  const std::optional<Device> &Dev, FillKind Fill,
                  const std::string &TypeOf = "");

// ---- Views ------------------------------------------------------------------

OpOutcome transpose(const TensorValue &In, int64_t Dim0, int64_t Dim1);
/// Tensor::t(): 0-D and 1-D inputs come back as an alias of the same shape.
OpOutcome matrixTranspose(const TensorValue &In);
OpOutcome permute(const TensorValue &In, const DimList &Order);
/// view(shape): a view or, when computeStride fails, a run-time error.
OpOutcome viewAs(const TensorValue &In, const Shape &Target);
/// view of a packed tensor given as its flat self (packedAsFlat).
OpOutcome viewPacked(const TensorValue &Flat, const Shape &Target);
OpOutcome select(const TensorValue &In, int64_t Dim, int64_t Index);
/// select at a symbolic index, answered when it is known not negative.
OpOutcome select(const TensorValue &In, int64_t Dim, const SymSize &Index);
/// slice(dim, start, end, step) with Python semantics for missing bounds.
OpOutcome slice(const TensorValue &In, int64_t Dim, std::optional<SymSize> Start,
                std::optional<SymSize> End, int64_t Step);
OpOutcome unsqueeze(const TensorValue &In, int64_t Dim);
/// at::alias: same geometry, new TensorImpl, same storage.
OpOutcome alias(const TensorValue &In);

// ---- Layout-sensitive copies -------------------------------------------------

/// reshape: a view when computeStride succeeds, else a contiguous copy.
OpOutcome reshape(const TensorValue &In, const Shape &Target);
/// contiguous(fmt): the input itself when already contiguous in fmt.
OpOutcome contiguous(const TensorValue &In, MemoryFormat Fmt);
OpOutcome clone(const TensorValue &In, MemoryFormat Fmt);

/// Tensor::to(...) and its spellings (toType, type_as, cpu(), cuda()).
struct ToTarget {
  std::optional<DType> Type;   // unset: keep
  /// Type unset: the dtype of this parameter (`x.scalar_type()`, the
  /// caller's), or empty.
  std::string TypeOf;
  std::optional<Device> Dev;   // unset: keep
  bool TypeUnknown = false;    // a dtype was given but could not be derived
  bool DeviceUnknown = false;
  bool Copy = false;
  MemoryFormat Fmt = MemoryFormat::Preserve;
};
OpOutcome to(const TensorValue &In, const ToTarget &Target);

// ---- Indexing -----------------------------------------------------------------

/// One element of Tensor::index({...}).
struct IndexSpec {
  enum Kind { Integer, Slice, None, Ellipsis, Boolean, Tensor } K = None;
  int64_t Int = 0;
  /// Slice bounds: constants or sizes over the function's symbols.
  std::optional<SymSize> Start, Stop;
  int64_t Step = 1;
  bool Bool = false;
  TensorValue TensorIndex;
  /// An integer or slice bound that could not be derived.
  bool Unknown = false;
};
/// Tensor::index: basic indices give views, tensor indices gather.
OpOutcome index(const TensorValue &In, const std::vector<IndexSpec> &Indices);
/// Tensor::operator[](Tensor): only 0-dim integral index tensors work.
OpOutcome subscriptWithTensor(const TensorValue &In, const TensorValue &Index);

// ---- More views (TensorShape.cpp unless noted) ---------------------------------

/// narrow(dim, start, length): a slice with step 1; start may be negative.
OpOutcome narrow(const TensorValue &In, int64_t Dim, const SymSize &Start,
                 const SymSize &Length);
/// squeeze() (Dim unset) drops every size-1 dim; squeeze(dim) drops that dim
/// when its size is 1 and is otherwise an alias of the same shape.
OpOutcome squeeze(const TensorValue &In, std::optional<int64_t> Dim);
/// expand(sizes) (inferExpandGeometry in ExpandUtils.cpp); -1 keeps a dim.
OpOutcome expand(const TensorValue &In, const Shape &Sizes);
/// as_strided(sizes, strides, offset): exactly the geometry given. The
/// storage size, when known, bounds it ("out of bounds for storage").
OpOutcome asStrided(const TensorValue &In, const Shape &Sizes,
                    const Shape &Strides, std::optional<int64_t> Offset,
                    std::optional<SymSize> StorageBytes);
OpOutcome diagonal(const TensorValue &In, int64_t Offset, int64_t Dim1,
                   int64_t Dim2);
OpOutcome unfold(const TensorValue &In, int64_t Dim, int64_t Size,
                 int64_t Step);
OpOutcome movedim(const TensorValue &In, const DimList &Source,
                  const DimList &Destination);
/// flatten(start, end): self when start == end, [1] for a 0-dim input,
/// otherwise reshape (so it copies exactly when reshape does).
OpOutcome flatten(const TensorValue &In, int64_t Start, int64_t End);
/// unflatten(dim, sizes): view with the one dim split.
OpOutcome unflatten(const TensorValue &In, int64_t Dim, const Shape &Sizes);
/// view(dtype): reinterprets the bytes; the last dim scales by the itemsize
/// ratio.
OpOutcome viewDtype(const TensorValue &In, DType Type);
/// chunk / split / split_with_sizes / unbind: one outcome per piece, or a
/// single Throws/Unknown outcome.
std::vector<OpOutcome> chunk(const TensorValue &In, int64_t Chunks, int64_t Dim);
std::vector<OpOutcome> split(const TensorValue &In, const SymSize &SplitSize,
                             int64_t Dim);
std::vector<OpOutcome> splitWithSizes(const TensorValue &In, const Shape &Sizes,
                                      int64_t Dim);
std::vector<OpOutcome> unbind(const TensorValue &In, int64_t Dim);

// ---- More factories ------------------------------------------------------------

/// empty_strided(sizes, strides): storage bytes follow the strides.
OpOutcome emptyStrided(const Shape &Sizes, const Shape &Strides,
                       const std::optional<DType> &Type,
                       const std::optional<Device> &Dev);
/// empty_like / zeros_like / ones_like / rand_like / full_like...
/// (TensorFactories.cpp, empty_like): Preserve keeps a dense input's
/// strides, else infer_dense_strides. Type/Dev unset: the input's.
OpOutcome likeFactory(const TensorValue &In, const std::optional<DType> &Type,
                      const std::optional<Device> &Dev, MemoryFormat Fmt,
                      FillKind Fill);
/// The element count arange(start, end, step) produces (RangeFactories.cpp:
/// ceil((end - start) / step)); nullopt for an invalid range.
std::optional<int64_t> arangeSize(double Start, double End, double Step);

// ---- Allocating ops ------------------------------------------------------------

OpOutcome matmul(const TensorValue &A, const TensorValue &B,
                 const TorchVersion &Version);
OpOutcome mm(const TensorValue &A, const TensorValue &B);
OpOutcome bmm(const TensorValue &A, const TensorValue &B);
/// linear(input, weight, bias) (native/Linear.cpp). Bias may be absent.
OpOutcome linear(const TensorValue &In, const TensorValue &Weight,
                 const TensorValue *Bias, const TorchVersion &Version);
/// Whether matmul(A, B) copies operand Operand (0: A, 1: B) itself: the
/// reshape that folds a left operand of rank >= 3 into rows, or that
/// flattens an operand's batch for bmm, is not a view of it. A
/// contiguous() of that operand before the call then saves nothing.
/// Unknown where matmul throws or the answer is not decidable.
Tri matmulCopiesOperand(const TensorValue &A, const TensorValue &B,
                        unsigned Operand, const TorchVersion &Version);
/// The same question for linear(In, Weight, bias): never on the fused
/// paths (a 2-D input with a bias, a contiguous 3-D one), else matmul's
/// answer for In against Weight.t().
Tri linearCopiesInput(const TensorValue &In, const TensorValue &Weight,
                      bool HasBias, const TorchVersion &Version);
OpOutcome indexSelect(const TensorValue &In, int64_t Dim,
                      const TensorValue &Index);
OpOutcome embedding(const TensorValue &Weight, const TensorValue &Indices);

/// An LSTM's or a GRU's layers, as their options build them.
struct RecurrentLayers {
  unsigned Gates = 4;  // LSTM 4, GRU 3
  bool CellState = true; // LSTM: c_n too
  SymSize InputSize = 0, HiddenSize = 0;
  /// A symbol when the layer count is a constructor's argument: the
  /// output does not depend on it, h_n and c_n have num_layers * D rows.
  SymSize NumLayers = 1;
  bool Bidirectional = false, BatchFirst = false;
};
/// LSTM/GRU forward(input[, hx]) (LibTorch's
/// torch/csrc/api/src/nn/modules/rnn.cpp; model/ops/Recurrent.cpp): output,
/// h_n and (LSTM) c_n, each a fresh tensor, or one Throws/Unknown outcome.
/// The output is laid out (seq, batch, D*H) and transposed to (batch, seq,
/// D*H) when batch_first. State: the h_0 (and c_0) the caller passes, each
/// checked against (num_layers * D, batch, H) as LibTorch checks it; empty:
/// none (zeros inside the op).
std::vector<OpOutcome> recurrentForward(const TensorValue &In,
                                        const RecurrentLayers &R,
                                        const TorchVersion &Version,
                                        const std::vector<TensorValue> &State = {});
/// An LSTMCell's or a GRUCell's sizes, as their options build them.
struct RecurrentCell {
  bool CellState = true; // LSTMCell: (h, c); GRUCell: h
  SymSize InputSize = 0, HiddenSize = 0;
};
/// LSTMCell/GRUCell forward(input[, hx]) over a 2-D batch: (h_1, c_1) or
/// h_1, each a fresh (batch, H) tensor, or one Throws/Unknown outcome; the
/// state's batch and hidden sizes are checked as LibTorch 1.13 checks them.
std::vector<OpOutcome> cellForward(const TensorValue &In, const RecurrentCell &R,
                                   const TorchVersion &Version,
                                   const std::vector<TensorValue> &State = {});
OpOutcome gather(const TensorValue &In, int64_t Dim, const TensorValue &Index);
OpOutcome cat(const std::vector<TensorValue> &Ins, int64_t Dim);
OpOutcome stack(const std::vector<TensorValue> &Ins, int64_t Dim);
OpOutcome repeat(const TensorValue &In, const Shape &Repeats);

// ---- TensorIterator ops (elementwise) -------------------------------------------

/// One operand of an elementwise op: a tensor, or a C++ scalar that ATen
/// wraps into a 0-dim "wrapped number" tensor (ScalarType: Bool, Int64 for
/// integers, Float64 for floating, Complex128 for complex).
struct ElemOperand {
  TensorValue T;
  bool IsScalar = false;
  std::optional<DType> ScalarType; // unset for a tensor or an unknown scalar
  static ElemOperand tensor(const TensorValue &V) {
    ElemOperand O;
    O.T = V;
    return O;
  }
  static ElemOperand scalar(std::optional<DType> Type) {
    ElemOperand O;
    O.IsScalar = true;
    O.ScalarType = Type;
    O.T.Sizes = Shape{};
    O.T.Strides = Shape{};
    O.T.Offset = 0;
    O.T.Type = Type;
    return O;
  }
};

/// How the output dtype follows the common dtype of the inputs.
enum class ElemDType {
  Promote,      // add, mul, sub, maximum, pow, where...: result_type
  FloatPromote, // div, exp, log, sqrt, tanh, sigmoid: integral -> float32
  Bool,         // comparisons: bool output
  FloatOnly,    // gelu: floating inputs only (else unknown)
};

/// at::result_type over the operands (ResultTypeState: dimensioned
/// tensors, zero-dim tensors and wrapped numbers, combined by category).
std::optional<DType> resultType(const std::vector<ElemOperand> &Ops);

/// A TensorIterator op with a fresh output: broadcast shape, output strides
/// from the operands in order (the first operand's permutation wins).
OpOutcome elementwise(const std::string &Op, const std::vector<ElemOperand> &Ops,
                      ElemDType Rule);
/// `scalar - t`, `scalar / t` (ATen/TensorOperators.h): empty_like(t)
/// .fill_(scalar).sub_(t): the output keeps t's dtype, and the in-place
/// step throws when the promoted type cannot be cast back.
OpOutcome reverseScalarOp(const std::string &Op, const ElemOperand &Scalar,
                          const TensorValue &T, bool TrueDivide);
/// An in-place op on Self (add_, mul_, relu_, zero_, fill_, copy_,
/// masked_fill_, clamp_...): returns Self and allocates nothing. Others are
/// the further operands, broadcast to Self's shape; ResultRule says which
/// dtype the computation produces (it must cast to Self's dtype).
OpOutcome inPlace(const std::string &Op, const TensorValue &Self,
                  const std::vector<ElemOperand> &Others, ElemDType ResultRule,
                  bool ReadsSelf);

// ---- Reductions -----------------------------------------------------------------

enum class ReduceKind {
  Sum,     // sum, prod: integral and bool inputs give int64
  Mean,    // floating or complex inputs only
  Same,    // max(), min(), amax, amin: the input dtype
  Index,   // argmax, argmin: int64
};
/// A reduction over Shape (empty: every dim) with or without keepdim. The
/// output is a fresh contiguous tensor (1.13). Type, when set, is the
/// dtype= argument.
OpOutcome reduce(const std::string &Op, const TensorValue &In,
                 const std::optional<DimList> &ReduceDims, bool KeepDim,
                 ReduceKind Kind, std::optional<DType> Type);
/// max(dim, keepdim) / min(dim, keepdim): (values, indices), or a single
/// Throws/Unknown outcome.
std::vector<OpOutcome> reduceWithIndices(const std::string &Op,
                                         const TensorValue &In, int64_t Dim,
                                         bool KeepDim);
/// cumsum(dim, dtype): a contiguous output of In's shape (int64 for
/// integral inputs), with a transient copy when the dtype changes.
OpOutcome cumsum(const TensorValue &In, int64_t Dim, std::optional<DType> Type,
                 const TorchVersion &Version);
/// softmax / log_softmax(dim, dtype): a contiguous output of In's shape.
OpOutcome softmax(const std::string &Op, const TensorValue &In, int64_t Dim,
                  std::optional<DType> Type);

} // namespace tma
