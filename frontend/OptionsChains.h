// torch::nn options objects read as named values.
//
// LibTorch's nn API passes settings as options objects built by a chain of
// setters on a constructor call:
//
//     F::conv2d(x, w, F::Conv2dFuncOptions().stride(2).padding(1))
//     torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3).stride(2))
//     F::log_softmax(x, /*dim=*/1)       // LogSoftmaxFuncOptions(int64_t dim)
//
// readOptionsChain turns such an expression into a map from option name to
// value, reading everything from the headers Clang parsed, never from a
// list of names of our own:
//  - a constructor argument is named by the constructor's parameter
//    (`Conv2dOptions(int64_t in_channels, int64_t out_channels,
//    ExpandingArray<2> kernel_size)`), as torch/nn/options/*.h declare it;
//  - a setter is a TORCH_ARG (torch/arg.h): a one-argument method returning
//    the options object, named as the option;
//  - an option the source does not set has the default member initializer
//    of its TORCH_ARG field (`TORCH_ARG(ExpandingArray<D>, stride) = 1;`),
//    marked Defaulted.
// Each value is read by the option's C++ type: int64_t -> Int (or SymInt
// for a symbolic size), double -> Number, bool -> Bool,
// ExpandingArray<D> -> IntList of D sizes (`3` is [3, 3] for D = 2),
// std::vector<int64_t> -> IntList, padding_t's kSame / kValid and other
// torch::enumtype values (kMean, kSum, kNone, kZeros) -> Other with Str
// "same", "valid", "mean", ... (the enumtype's name without its k,
// lower-cased), Tensor -> Tensor (an empty `Tensor()` / `{}` -> Absent),
// c10::optional<T> -> T or Absent, c10::ScalarType -> DType. What cannot be
// derived is Unknown with a reason.
#pragma once

#include "model/ops/OpTable.h"

#include "clang/AST/Expr.h"

#include <optional>

namespace tma {

class FunctionEvaluator;

/// Whether T names a torch::nn options class (torch::nn::Conv2dOptions,
/// torch::nn::functional::Conv2dFuncOptions, ...) or a torch::optim one
/// (torch::optim::AdamOptions).
bool isNNOptionsType(clang::QualType T);

/// The options of a torch::nn options object E (an expression of an
/// isNNOptionsType type: a constructor call, an implicit conversion such
/// as `1` to LogSoftmaxFuncOptions, a chain of setters on either), or
/// nullopt when E is no such object. A chain that is only partly
/// understood (a variable holding options, a setter whose argument cannot
/// be read) gives Complete = false with Why, and keeps what it read.
/// Tensor-valued options are evaluated with FE (once per statement).
std::optional<NamedArgs> readOptionsChain(FunctionEvaluator &FE,
                                          const clang::Expr *E);

/// The options a torch::nn module holder's constructor arguments give when
/// they are not an options object (`torch::nn::Linear fc(784, 500)`): the
/// arguments are the options class's constructor's, in order, as LibTorch
/// forwards them (`LinearImpl(int64_t in_features, int64_t out_features)`
/// builds `LinearOptions(in_features, out_features)`); the rest are their
/// TORCH_ARG defaults. nullopt when no constructor of OptionsType takes
/// that many arguments.
std::optional<NamedArgs>
readOptionsFromArguments(FunctionEvaluator &FE, clang::QualType OptionsType,
                         llvm::ArrayRef<const clang::Expr *> Args);

/// readOptionsChain as a bound argument: Kind NNOptions with Named set;
/// nullopt when E is no options object.
std::optional<ArgValue> nnOptionsArg(FunctionEvaluator &FE, const clang::Expr *E);

} // namespace tma
