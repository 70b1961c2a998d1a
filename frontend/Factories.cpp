// torch::tensor({...}) and at::tensor({...}): the shape from the nested
// braces, the dtype from the element type. The other factories are table
// ops (model/ops/Factories.cpp).
#include "frontend/FunctionEvaluator.h"
#include "frontend/ArgumentReader.h"

using namespace clang;

namespace tma {

/// torch::tensor({...}) and at::tensor({...}): the shape from the nested
/// braces, the dtype from the element type (torch:: gives int64/float32
/// like Python, at:: the C++ type: int32/float64).
ValueId FunctionEvaluator::tensorLiteral(const Expr *E, const FunctionDecl *Callee,
                                         llvm::ArrayRef<const Expr *> Args) {
  bool Torch = topNamespace(Callee) == "torch";
  if (Args.empty())
    return unmodelledCall("tensor", E, {}, "tensor() without data");
  // Walk down to the outermost braces.
  std::function<std::optional<std::pair<Shape, QualType>>(const Expr *)> ShapeOf =
      [&](const Expr *X) -> std::optional<std::pair<Shape, QualType>> {
    for (int Depth = 0; Depth < 8 && X; ++Depth) {
      X = strip(X);
      if (const auto *IL = dyn_cast<InitListExpr>(X)) {
        if (IL->getNumInits() == 0)
          return std::nullopt;
        std::optional<std::pair<Shape, QualType>> Inner;
        for (const Expr *Elem : IL->inits()) {
          auto S = ShapeOf(Elem);
          if (!S)
            return std::nullopt;
          if (Inner && (Inner->first != S->first ||
                        Ctx.getCanonicalType(Inner->second) !=
                            Ctx.getCanonicalType(S->second)))
            return std::nullopt;
          Inner = S;
        }
        Shape D = {static_cast<int64_t>(IL->getNumInits())};
        D.insert(D.end(), Inner->first.begin(), Inner->first.end());
        return std::make_pair(D, Inner->second);
      }
      if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(X)) {
        X = SIL->getSubExpr();
        continue;
      }
      if (const auto *CE = dyn_cast<CXXConstructExpr>(X)) {
        if (CE->getNumArgs() != 1)
          return std::nullopt;
        X = CE->getArg(0);
        continue;
      }
      if (X->getType()->isArithmeticType())
        return std::make_pair(Shape{}, X->getType());
      return std::nullopt;
    }
    return std::nullopt;
  };
  auto S = ShapeOf(Args[0]);
  if (!S || (!Torch && S->first.size() != 1))
    return unmodelledCall("tensor", E, {}, "tensor data could not be read");
  QualType T = S->second;
  std::optional<DType> Type;
  if (T->isBooleanType())
    Type = DType::Bool;
  else if (Torch)
    Type = T->isIntegerType() ? DType::Int64 : DType::Float32;
  else if (T->isIntegerType())
    Type = Ctx.getTypeSize(T) == 64 ? DType::Int64 : DType::Int32;
  else
    Type = Ctx.getTypeSize(T) == 64 ? DType::Float64 : DType::Float32;
  std::optional<Device> Dev = Device{DeviceKind::CPU, -1};
  if (Args.size() >= 2 && !isDefaultArg(Args[1])) {
    Options O = args().options(Args[1]);
    if (!O.Known)
      return unmodelledCall("tensor", E, {}, "options could not be derived");
    if (O.HasType)
      Type = O.Type;
    if (O.HasDevice)
      Dev = O.Dev;
  }
  return apply("tensor", E, {}, factory(S->first, Type, Dev, FillKind::Filled));
}

} // namespace tma
