// Helpers shared by the loss rules (Losses.cpp: elementwise losses;
// ClassLosses.cpp: nll_loss and cross_entropy). Not part of the model's
// interface.
//  1. Every loss reads its reduction, options and optional tensors alike.
//  2. Its dtype and 0-d/unreduced result are built by lossResult.
#pragma once

#include "model/Ops.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <optional>
#include <string>
#include <vector>

namespace tma {
namespace loss {

inline const char *const LossNote = "the unreduced loss and the kernel's "
                                    "temporaries are not modelled";

enum class Reduction { None, Mean, Sum };

/// The reduction argument: at::Reduction's integer (None 0, Mean 1, Sum
/// 2) or an options object's enumtype ("none", "mean", "sum"; "batchmean"
/// where AllowBatchMean: F::kl_div sums, then divides by the batch size, a
/// 0-d result like Sum). Absent: Mean, the default of every spelling.
std::optional<Reduction> readReduction(const ArgValue *A, bool AllowBatchMean,
                                       std::string &Why);

/// The options object of a functional spelling (argument OptionsArg), or
/// null for the positional spelling.
const ArgValue *optionsOf(const OpCall &C, size_t OptionsArg);

/// A tensor argument or option that may be absent (weight, pos_weight):
/// the tensor, or null when absent. Unknown (given but not derived) sets
/// Why.
const TensorValue *optionalTensor(const ArgValue *A, const std::string &Name,
                                  std::string &Why);

/// The dtype as c10 prints it in messages: "Long", "Float".
std::string c10Name(DType T);

bool answeredFloating(DType T);

/// The loss's dtype into Into: the input's, float32 or float64 (or a
/// parameter's dtype, then stated to be floating), every tensor in Same of
/// that dtype too. False with Why otherwise.
bool lossDType(const std::string &Op, const TensorValue &In,
               const std::vector<const TensorValue *> &Same, TensorValue &Into,
               std::string &Why);

/// Class indices: LibTorch's CPU kernels read int64 (a parameter's dtype is
/// stated to be int64). False with Why otherwise.
bool classIndexTarget(const std::string &Op, const TensorValue &Target,
                      std::string &Why);

/// The loss's result: a fresh 0-d tensor for Mean/Sum, else Unreduced
/// sizes with Strides (unset: unknown because LayoutWhy). Typed carries the
/// dtype (lossDType).
OpOutcome lossResult(Reduction R, const TensorValue &Typed,
                     std::optional<Device> Dev, const Shape &Unreduced,
                     const std::optional<Shape> &Strides,
                     const std::string &LayoutWhy,
                     std::vector<const TensorValue *> Reads);

/// A loss of operands whose shapes are not known: a Mean or Sum result is
/// still 0-d wherever the op does not throw; its dtype is the input's when
/// every operand has it. Its storage is the unreduced loss's where ATen
/// reduces into it (unknown then), else the 0-d result's own.
OpOutcome reducedOfUnknownShape(const std::string &Op, Reduction R,
                                bool ReducesInPlace, const TensorValue &In,
                                const std::vector<const TensorValue *> &Others,
                                const std::string &Why);

/// Whether two shapes are equal: rank, then every size (undecidable
/// symbolic sizes give Unknown).
Tri sameShape(const Shape &A, const Shape &B);

/// Whether Small broadcasts into Into without changing it (an in-place
/// `loss.mul_(weight)`).
Tri broadcastsInto(const Shape &Small, const Shape &Into);

bool allContiguous(const std::vector<const TensorValue *> &Ts);

/// A double argument or option (beta, delta, label_smoothing): Default
/// when absent; Why when given but not derived.
std::optional<double> readNumber(const ArgValue *A, double Default,
                                 const std::string &Name, std::string &Why);

} // namespace loss
} // namespace tma
