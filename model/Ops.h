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

/// The LibTorch version of the headers being analysed. Rules that changed
/// between releases (aten-rules.md section 7) branch on it.
struct TorchVersion {
  int Major = 1;
  int Minor = 13;
  bool atLeast(int Ma, int Mi) const {
    return Major > Ma || (Major == Ma && Minor >= Mi);
  }
};

enum class MemoryFormat { Preserve, Contiguous, ChannelsLast };

struct OpOutcome {
  OpKind Kind = OpKind::Unknown;
  TensorValue Value;
  /// View/Self/InPlace: the input whose storage the result shares.
  unsigned SharesInput = 0;
  std::optional<int64_t> ReadBytes;
  std::optional<int64_t> WrittenBytes;
  std::optional<int64_t> TransientBytes;
  std::string Note;
  std::string Error;
};

/// The outcome for an op the rules do not model.
OpOutcome unmodelled(const std::string &Op);
/// An op that raises at run time with Message.
OpOutcome throws(const std::string &Message);

// ---- Factories --------------------------------------------------------------

enum class FillKind { Uninitialized, Filled };

/// randn/rand/zeros/ones/empty/full/randint...: a fresh contiguous tensor.
OpOutcome factory(const std::optional<Dims> &Sizes,
                  const std::optional<DType> &Type,
                  const std::optional<Device> &Dev, FillKind Fill);

// ---- Views ------------------------------------------------------------------

OpOutcome transpose(const TensorValue &In, int64_t Dim0, int64_t Dim1);
/// Tensor::t(): 0-D and 1-D inputs come back as an alias of the same shape.
OpOutcome matrixTranspose(const TensorValue &In);
OpOutcome permute(const TensorValue &In, const Dims &Order);
/// view(shape): a view or, when computeStride fails, a run-time error.
OpOutcome viewAs(const TensorValue &In, const Dims &Shape);
OpOutcome select(const TensorValue &In, int64_t Dim, int64_t Index);
/// slice(dim, start, end, step) with Python semantics for missing bounds.
OpOutcome slice(const TensorValue &In, int64_t Dim, std::optional<int64_t> Start,
                std::optional<int64_t> End, int64_t Step);
OpOutcome unsqueeze(const TensorValue &In, int64_t Dim);
/// at::alias: same geometry, new TensorImpl, same storage.
OpOutcome alias(const TensorValue &In);

// ---- Layout-sensitive copies -------------------------------------------------

/// reshape: a view when computeStride succeeds, else a contiguous copy.
OpOutcome reshape(const TensorValue &In, const Dims &Shape);
/// contiguous(fmt): the input itself when already contiguous in fmt.
OpOutcome contiguous(const TensorValue &In, MemoryFormat Fmt);
OpOutcome clone(const TensorValue &In, MemoryFormat Fmt);

/// Tensor::to(...) and its spellings (toType, type_as, cpu(), cuda()).
struct ToTarget {
  std::optional<DType> Type;   // unset: keep
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
  std::optional<int64_t> Start, Stop;
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

// ---- Allocating ops ------------------------------------------------------------

OpOutcome matmul(const TensorValue &A, const TensorValue &B,
                 const TorchVersion &Version);

} // namespace tma
