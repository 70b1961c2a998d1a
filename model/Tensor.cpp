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

std::optional<TensorValue> commonLayout(const std::vector<TensorValue> &Values,
                                        const std::string &Reason) {
  if (Values.empty())
    return std::nullopt;
  auto SameList = [](const Shape &A, const Shape &B) {
    if (A.size() != B.size())
      return false;
    for (size_t K = 0; K < A.size(); ++K)
      if (!A[K].identical(B[K]))
        return false;
    return true;
  };
  const TensorValue &First = Values.front();
  TensorValue Out = unknownTensor(Reason);
  Out.Sizes = First.Sizes;
  Out.Strides = First.Strides;
  Out.Offset = First.Offset;
  keepDType(Out, First);
  Out.Dev = First.Dev;
  for (const TensorValue &V : Values) {
    if (!V.hasLayout() || !V.dtypeKnown() || !SameList(*V.Sizes, *First.Sizes) ||
        !SameList(*V.Strides, *First.Strides) || !V.Offset->identical(*First.Offset) ||
        V.Type != First.Type || (!V.Type && V.TypeOf != First.TypeOf))
      return std::nullopt;
    if (V.Dev != First.Dev)
      Out.Dev.reset();
  }
  return Out;
}

} // namespace tma
