// Inputs for --verify of a function with parameters: what to call it with.
//
// A report over parameters (docs/symbolic.md) answers for every caller that
// satisfies its assumptions; --verify checks it for a few of them. Nothing
// here needs the user to describe the inputs: the analysis already knows
// each tensor parameter's rank and dtype (or that the dtype is the
// caller's), the integer parameters, the facts the code checks and the
// assumptions the answers rest on.
//
// Design:
//  1. Which functions: every parameter a tensor (by value, const&, & or &&)
//     of known rank, or a built-in integer (by value or const&). Anything
//     else (a double, a bool, a module, a tensor whose rank nobody states)
//     gives the reason no input can be made, and the function is skipped.
//  2. Values: the user's --assume values first; the equalities the code
//     checks carry them (ShapeEnv::bindings) and carry each drawn size to
//     the symbols equal to it, so `w.size(0) == x.size(1)` costs no
//     rejection. Every other size is drawn in 1..8 (an integer parameter
//     in its proven range, 1..8 when unbounded), from a generator seeded by
//     the function's name: the same draws on every run and every machine,
//     so --emit-harness and --compare-measured agree.
//  3. dtypes: a dtype the code checks is that dtype; an assumption such as
//     `t.scalar_type() == at::kLong` pins one; parameters the assumptions
//     tie together (`w.scalar_type() == x.scalar_type()`) share one; the
//     rest follow the caller and get float32, and float64 on odd draws (so
//     `x.element_size()` is exercised with two values), or the dtype of the
//     element size the user gave (`--assume x.element_size()=2`: float16).
//  4. Rejection: a draw is kept only when every fact the code checks and
//     every assumption of the report holds for it, each evaluated here as
//     the C++ it is written in (conditionHolds). A condition outside that
//     grammar skips the function (an input nobody checked would be a guess);
//     no draw in the bounded number of tries skips it too, naming the
//     condition broken most often.
#pragma once

#include "model/DType.h"
#include "model/SymSize.h"
#include "model/Trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tma {

/// One argument of one call.
struct MadeInput {
  std::string Name; ///< the parameter's name
  bool IsTensor = false;
  // Tensors: a fresh contiguous tensor (zeros on CPU and CUDA, empty on meta).
  std::vector<int64_t> Sizes;
  DType Type = DType::Float32;
  bool Move = false;     ///< passed with std::move (an && parameter)
  // Integers.
  std::string IntegerType; ///< canonical C++ type (`long`)
  int64_t Value = 0;
};

/// One set of arguments and every parameter symbol's value under it.
struct InputDraw {
  std::vector<MadeInput> Inputs;
  /// `x.size(i)`, `x.numel()`, `x.dim()`, `x.element_size()`,
  /// `x.storage().nbytes()` for each tensor, the integers by name.
  SymBindings Values;
  std::string Text;       ///< `x (2, 3, 4) float32, n_head=2`
  int64_t InputBytes = 0; ///< what the tensors hold
};

struct DrawOptions {
  unsigned Draws = 3;      ///< at most this many distinct draws
  unsigned MaxTries = 2000; ///< attempts in all before giving up
  int64_t MaxSize = 8;     ///< sizes are drawn in 1..MaxSize
};

/// The draws for T (fewer than Opts.Draws when the user's values fix every
/// size). Empty, with Reason, when T cannot be called with made inputs.
std::vector<InputDraw> drawInputs(const FunctionTrace &T, const DrawOptions &Opts,
                                  std::string &Reason);

/// A report expression (an integer, or C++ over the parameters: report
/// version 2) under the draw; nullopt with Error when it does not parse or
/// cannot be evaluated (a symbol the draw lacks, a division by zero).
std::optional<int64_t> evaluateUnder(std::string_view Expr, const InputDraw &D,
                                     std::string *Error = nullptr);

/// Whether a condition of the report (an assumption or a checked fact, C++
/// over the parameters) holds for the draw's inputs. Understood: a
/// comparison of two report expressions (`x.size(2) % n == 0`, `x.dim() ==
/// 2`), `p.is_contiguous()` (made inputs are), `p.is_floating_point()`,
/// and `==` / `!=` between `p.scalar_type()` and another one or a dtype
/// constant (`at::kLong`, `torch::kFloat`). nullopt with Error otherwise.
std::optional<bool> conditionHolds(std::string_view Cond, const InputDraw &D,
                                   std::string *Error = nullptr);

/// `float32` for the report, `Float` for c10::ScalarType.
std::string scalarTypeEnumerator(DType T);

} // namespace tma
