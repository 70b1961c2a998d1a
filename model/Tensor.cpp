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

std::optional<TensorValue> packedAsFlat(const TensorValue &In) {
  if (In.Sizes || !In.PackedNumel || !In.Offset)
    return std::nullopt;
  TensorValue Flat = In;
  Flat.Sizes = Shape{*In.PackedNumel};
  Flat.Strides = Shape{SymSize(1)};
  Flat.PackedNumel.reset();
  // In's reason is about its rank, which the flat tensor does not lack.
  Flat.UnknownReason.clear();
  if (!Flat.Dev)
    Flat.markUnknown("device of an input is unknown");
  return Flat;
}

TensorValue unknownTensor(const std::string &Reason) {
  TensorValue V;
  V.UnknownReason = Reason;
  return V;
}

} // namespace tma
