#include "model/Tensor.h"

namespace tma {

TensorValue makeContiguous(const Shape &Sizes, DType Type, Device Dev) {
  TensorValue V;
  V.Sizes = Sizes;
  V.Strides = contiguousStrides(Sizes);
  V.Offset = 0;
  V.Type = Type;
  V.Dev = Dev;
  return V;
}

std::optional<SymSize> denseBytes(const Shape &Sizes, DType Type) {
  return mulSizes(checkedNumel(Sizes), SymSize(itemSize(Type)));
}

TensorValue unknownTensor(const std::string &Reason) {
  TensorValue V;
  V.UnknownReason = Reason;
  return V;
}

} // namespace tma
