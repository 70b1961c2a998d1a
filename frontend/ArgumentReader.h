// ArgumentReader: arguments as values (Arguments.cpp): what an integer, a
// list of sizes, a dtype, a device, a memory format, tensor options or a
// C++ scalar argument evaluates to, as far as the source determines it.
// A room of the evaluator: it keeps no state of its own and reads and
// writes the FunctionEvaluator's (FunctionEvaluator::args() makes one).
#pragma once

#include "frontend/FunctionEvaluator.h"

namespace tma {

class ArgumentReader {
public:
  explicit ArgumentReader(FunctionEvaluator &FE) : FE(FE) {}
  using Number = FunctionEvaluator::Number;
  using OptDType = FunctionEvaluator::OptDType;
  using OptInt = FunctionEvaluator::OptInt;
  using OptTensor = FunctionEvaluator::OptTensor;

  /// A constant integer: what Clang folds, or a variable whose value is a
  /// constant (IntVars).
  std::optional<int64_t> integer(const Expr *E);
  /// `torch::cuda::is_available()`, its negation, or a local bool nothing
  /// changes initialized from it: the answer --cuda-available gives (then
  /// stated among the function's assumptions); nullopt without one.
  std::optional<int64_t> cudaAvailability(const Expr *E);
  /// What Clang alone folds (constexpr, const locals, literals).
  std::optional<int64_t> foldInteger(const Expr *E);
  std::optional<Shape> intList(const Expr *E);
  std::optional<DType> scalarType(const Expr *E);
  /// `x.scalar_type()` / `x.dtype()`: x's dtype, or the parameter it
  /// follows (second); nullopt when unknown or not such a call.
  std::optional<std::pair<std::optional<DType>, std::string>>
  dtypeOfTensor(const Expr *E);
  std::optional<Device> device(const Expr *E);
  std::optional<MemoryFormat> memoryFormat(const Expr *E);
  Options options(const Expr *E);
  const Expr *constantInitializer(const ValueDecl *D) const;
  std::optional<DType> scalarLiteralType(const Expr *E);
  std::optional<std::string> enumeratorName(const Expr *E);
  std::optional<Number> number(const Expr *E);
  std::optional<DType> scalarCategory(const Expr *E);
  ElemOperand operand(const Expr *E);
  OptTensor optionalTensor(const Expr *E);
  OptInt optionalInt(const Expr *E);
  OptDType optionalDType(const Expr *E);

private:
  FunctionEvaluator &FE;
};

inline ArgumentReader FunctionEvaluator::args() { return ArgumentReader(*this); }

} // namespace tma
