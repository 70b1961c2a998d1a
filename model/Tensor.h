// What the analysis knows about one tensor value.
//
// Every field is optional on its own: a tensor can have a known dtype and an
// unknown shape (a function parameter), or a known shape and unknown strides
// (an op whose layout rule we do not model). The first reason a field became
// unknown is kept so the report can say why; a missing field is never
// replaced by a guess.
#pragma once

#include "model/DType.h"
#include "model/Geometry.h"

#include <optional>
#include <string>

namespace tma {

using StorageId = int;
constexpr StorageId NoStorage = -1;

/// numel(Sizes) * itemsize(Type), or nullopt when it does not fit in int64.
std::optional<SymSize> denseBytes(const Shape &Sizes, DType Type);

struct TensorValue {
  std::optional<Shape> Sizes;
  /// The element count of a tensor whose rank is not known but which is
  /// packed (contiguous from Offset): a parameter of unknown rank,
  /// `x.numel()`. Set only while Sizes is not. Such a tensor is laid out
  /// exactly as a 1-d [numel] one (packedAsFlat), so a view or reshape to a
  /// full shape is decided; everything else about its shape stays unknown.
  std::optional<SymSize> PackedNumel;
  std::optional<Shape> Strides;
  std::optional<SymSize> Offset; // storage_offset, in elements
  std::optional<DType> Type;
  /// When Type is not known but is a tensor parameter's: that parameter's
  /// name (the dtype is `x.scalar_type()`, the element size the symbol
  /// `x.element_size()`). Only rules that keep their input's dtype carry
  /// it (keepDType); everything else leaves it empty.
  std::string TypeOf;
  std::optional<Device> Dev;
  /// The storage this tensor refers to. Set by the Interpreter, not by op
  /// rules; NoStorage when not known (the value then counts as unknown).
  StorageId Storage = NoStorage;
  /// Why some field is missing; empty when everything is known.
  std::string UnknownReason;

  bool hasLayout() const { return Sizes && Strides && Offset; }
  bool fullyKnown() const { return hasLayout() && Type && Dev; }
  std::optional<int64_t> rank() const {
    if (!Sizes)
      return std::nullopt;
    return static_cast<int64_t>(Sizes->size());
  }
  /// nullopt when unknown or beyond int64 (LibTorch would have thrown).
  std::optional<SymSize> elementCount() const {
    if (!Sizes)
      return std::nullopt;
    return checkedNumel(*Sizes);
  }
  /// numel * itemsize: the bytes this tensor shows (not its storage's);
  /// nullopt when unknown or beyond int64 (an expanded view can show more
  /// bytes than int64 holds).
  std::optional<SymSize> logicalBytes() const {
    if (!Sizes)
      return std::nullopt;
    if (Type)
      return denseBytes(*Sizes, *Type);
    if (auto Item = itemBytes())
      return mulSizes(checkedNumel(*Sizes), *Item);
    return std::nullopt;
  }
  /// Bytes per element: itemSize, or `x.element_size()` for a dtype that
  /// follows parameter x; nullopt when unknown.
  std::optional<SymSize> itemBytes() const {
    if (Type)
      return SymSize(itemSize(*Type));
    if (!TypeOf.empty())
      return SymSize::symbol(TypeOf + ".element_size()");
    return std::nullopt;
  }
  /// The dtype is known or follows a parameter.
  bool dtypeKnown() const { return Type || !TypeOf.empty(); }
  /// nullopt when unknown or not decidable.
  std::optional<bool> contiguous() const {
    if (!Sizes || !Strides)
      return std::nullopt;
    Tri C = isContiguous(*Sizes, *Strides);
    if (C == Tri::Unknown)
      return std::nullopt;
    return C == Tri::True;
  }
  /// Records Reason unless an earlier one is already there.
  void markUnknown(const std::string &Reason) {
    if (UnknownReason.empty())
      UnknownReason = Reason;
  }
};

/// Out has In's dtype, whatever it is: known, a parameter's, or unknown.
inline void keepDType(TensorValue &Out, const TensorValue &In) {
  Out.Type = In.Type;
  Out.TypeOf = In.Type ? std::string() : In.TypeOf;
}

/// In as the 1-d tensor of its PackedNumel elements with stride 1 (the same
/// memory, the same answer to every view and reshape), or nullopt when In's
/// sizes are known or it is not known to be packed.
std::optional<TensorValue> packedAsFlat(const TensorValue &In);

/// A fully known, freshly laid out tensor (contiguous, offset 0).
TensorValue makeContiguous(const Shape &Sizes, DType Type, Device Dev);

/// A value with nothing known but the reason.
TensorValue unknownTensor(const std::string &Reason);

/// What every one of Values has alike, when they share sizes, strides,
/// offset and dtype (a name that holds one of several tensors after a
/// branch, each of one layout): those, and the device when they share it;
/// no storage, and Reason. nullopt when any of those differs or is
/// unknown.
std::optional<TensorValue> commonLayout(const std::vector<TensorValue> &Values,
                                        const std::string &Reason);

} // namespace tma
