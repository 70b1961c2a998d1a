// Scalar types and devices as LibTorch knows them, without any LibTorch or
// Clang header.
//
// The frontend reads c10::ScalarType / c10::DeviceType enumerators by *name*
// (so the numbering of the headers being parsed never matters) and converts
// them with dtypeFromC10Name / deviceKindFromC10Name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tma {

enum class DType {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex32,
  Complex64,
  Complex128,
};

/// Bytes per element (c10::elementSize).
int64_t itemSize(DType T);
/// The report's dtype name: "float16", "int64", "complex64", ...
const char *dtypeName(DType T);
/// The c10 enumerator as C++ names it (`at::kFloat`), for assumptions.
std::string dtypeCpp(DType T);
/// Accepts report names ("float32") and c10 enumerator names ("Float",
/// "Half", "Long", "ComplexFloat", ...).
std::optional<DType> dtypeFromName(std::string_view Name);

bool isFloating(DType T); // float16, bfloat16, float32, float64
bool isComplex(DType T);
bool isIntegral(DType T, bool IncludeBool);

/// c10::promoteTypes for the dtypes above.
DType promoteTypes(DType A, DType B);

/// The category used by ATen's result_type when a zero-dim tensor or a
/// scalar competes with dimensioned tensors: bool < integral < floating <
/// complex.
int typeCategory(DType T);

/// The complex type whose real part is T (float32 -> complex64).
DType toComplex(DType T);
/// The real type of a complex T (complex64 -> float32); T itself otherwise.
DType toReal(DType T);

enum class DeviceKind { CPU, CUDA, Meta, MPS, XPU, HIP, Other };

struct Device {
  DeviceKind Kind = DeviceKind::CPU;
  int Index = -1; // -1: no explicit index

  bool operator==(const Device &O) const {
    return Kind == O.Kind && Index == O.Index;
  }
  bool operator!=(const Device &O) const { return !(*this == O); }
  /// Same device type; an unset index matches any index.
  bool sameType(const Device &O) const { return Kind == O.Kind; }
};

/// "cpu", "cuda", "meta", ... (the report's device names).
std::string deviceName(const Device &D);
/// c10::DeviceType enumerator names ("CPU", "CUDA", "Meta").
std::optional<DeviceKind> deviceKindFromC10Name(std::string_view Name);
/// Device strings as torch::Device accepts them: "cuda", "cuda:1", "cpu".
std::optional<Device> parseDeviceString(std::string_view Text);

} // namespace tma
