#include "model/DType.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace tma {

int64_t itemSize(DType T) {
  switch (T) {
  case DType::Bool:
  case DType::UInt8:
  case DType::Int8:
    return 1;
  case DType::Int16:
  case DType::Float16:
  case DType::BFloat16:
    return 2;
  case DType::Int32:
  case DType::Float32:
  case DType::Complex32:
    return 4;
  case DType::Int64:
  case DType::Float64:
  case DType::Complex64:
    return 8;
  case DType::Complex128:
    return 16;
  }
  return 0;
}

const char *dtypeName(DType T) {
  switch (T) {
  case DType::Bool: return "bool";
  case DType::UInt8: return "uint8";
  case DType::Int8: return "int8";
  case DType::Int16: return "int16";
  case DType::Int32: return "int32";
  case DType::Int64: return "int64";
  case DType::Float16: return "float16";
  case DType::BFloat16: return "bfloat16";
  case DType::Float32: return "float32";
  case DType::Float64: return "float64";
  case DType::Complex32: return "complex32";
  case DType::Complex64: return "complex64";
  case DType::Complex128: return "complex128";
  }
  return "?";
}

std::optional<DType> dtypeFromName(std::string_view Name) {
  struct Alias {
    std::string_view Name;
    DType Type;
  };
  // Report names first, then the c10::ScalarType enumerator names.
  static const Alias Aliases[] = {
      {"bool", DType::Bool},          {"uint8", DType::UInt8},
      {"int8", DType::Int8},          {"int16", DType::Int16},
      {"int32", DType::Int32},        {"int64", DType::Int64},
      {"float16", DType::Float16},    {"bfloat16", DType::BFloat16},
      {"float32", DType::Float32},    {"float64", DType::Float64},
      {"complex32", DType::Complex32}, {"complex64", DType::Complex64},
      {"complex128", DType::Complex128},
      {"Bool", DType::Bool},          {"Byte", DType::UInt8},
      {"Char", DType::Int8},          {"Short", DType::Int16},
      {"Int", DType::Int32},          {"Long", DType::Int64},
      {"Half", DType::Float16},       {"BFloat16", DType::BFloat16},
      {"Float", DType::Float32},      {"Double", DType::Float64},
      {"ComplexHalf", DType::Complex32},
      {"ComplexFloat", DType::Complex64},
      {"ComplexDouble", DType::Complex128},
  };
  for (const Alias &A : Aliases)
    if (A.Name == Name)
      return A.Type;
  return std::nullopt;
}

std::string dtypeCpp(DType T) {
  switch (T) {
  case DType::Bool: return "at::kBool";
  case DType::UInt8: return "at::kByte";
  case DType::Int8: return "at::kChar";
  case DType::Int16: return "at::kShort";
  case DType::Int32: return "at::kInt";
  case DType::Int64: return "at::kLong";
  case DType::Float16: return "at::kHalf";
  case DType::BFloat16: return "at::kBFloat16";
  case DType::Float32: return "at::kFloat";
  case DType::Float64: return "at::kDouble";
  case DType::Complex32: return "at::kComplexHalf";
  case DType::Complex64: return "at::kComplexFloat";
  case DType::Complex128: return "at::kComplexDouble";
  }
  return "at::kFloat";
}

bool isFloating(DType T) {
  return T == DType::Float16 || T == DType::BFloat16 || T == DType::Float32 ||
         T == DType::Float64;
}

bool isComplex(DType T) {
  return T == DType::Complex32 || T == DType::Complex64 ||
         T == DType::Complex128;
}

bool isIntegral(DType T, bool IncludeBool) {
  switch (T) {
  case DType::Bool:
    return IncludeBool;
  case DType::UInt8:
  case DType::Int8:
  case DType::Int16:
  case DType::Int32:
  case DType::Int64:
    return true;
  default:
    return false;
  }
}

int typeCategory(DType T) {
  if (T == DType::Bool)
    return 0;
  if (isIntegral(T, false))
    return 1;
  if (isFloating(T))
    return 2;
  return 3;
}

DType toComplex(DType T) {
  switch (T) {
  case DType::Float16:
    return DType::Complex32;
  case DType::Float64:
    return DType::Complex128;
  default:
    return isComplex(T) ? T : DType::Complex64;
  }
}

DType toReal(DType T) {
  switch (T) {
  case DType::Complex32:
    return DType::Float16;
  case DType::Complex64:
    return DType::Float32;
  case DType::Complex128:
    return DType::Float64;
  default:
    return T;
  }
}

// c10::promoteTypes (c10/core/ScalarType.cpp) restricted to the types above,
// written as the rules its table encodes rather than the table itself.
DType promoteTypes(DType A, DType B) {
  if (A == B)
    return A;
  if (A == DType::Bool)
    return B;
  if (B == DType::Bool)
    return A;
  if (isComplex(A) || isComplex(B)) {
    // complex wins; the real precision is the larger of the two.
    DType RA = toReal(A), RB = toReal(B);
    DType R = isFloating(RA) && isFloating(RB) ? promoteTypes(RA, RB)
              : isFloating(RA)                  ? RA
                                                : RB;
    if (!isFloating(R))
      R = DType::Float32;
    return toComplex(R);
  }
  if (isFloating(A) && isFloating(B)) {
    // Half and BFloat16 meet at Float.
    if ((A == DType::Float16 && B == DType::BFloat16) ||
        (A == DType::BFloat16 && B == DType::Float16))
      return DType::Float32;
    return itemSize(A) >= itemSize(B) ? A : B;
  }
  if (isFloating(A))
    return A;
  if (isFloating(B))
    return B;
  // Both integral. uint8 with a signed type needs the next wider signed type.
  if (A == DType::UInt8 || B == DType::UInt8) {
    DType Other = A == DType::UInt8 ? B : A;
    return Other == DType::Int8 ? DType::Int16 : Other;
  }
  return itemSize(A) >= itemSize(B) ? A : B;
}

std::string deviceName(const Device &D) {
  std::string Name;
  switch (D.Kind) {
  case DeviceKind::CPU: Name = "cpu"; break;
  case DeviceKind::CUDA: Name = "cuda"; break;
  case DeviceKind::Meta: Name = "meta"; break;
  case DeviceKind::MPS: Name = "mps"; break;
  case DeviceKind::XPU: Name = "xpu"; break;
  case DeviceKind::HIP: Name = "hip"; break;
  case DeviceKind::Other: Name = "other"; break;
  }
  return Name;
}

std::optional<DeviceKind> deviceKindFromC10Name(std::string_view Name) {
  if (Name == "CPU") return DeviceKind::CPU;
  if (Name == "CUDA") return DeviceKind::CUDA;
  if (Name == "Meta") return DeviceKind::Meta;
  if (Name == "MPS") return DeviceKind::MPS;
  if (Name == "XPU") return DeviceKind::XPU;
  if (Name == "HIP") return DeviceKind::HIP;
  if (Name.empty()) return std::nullopt;
  return DeviceKind::Other;
}

std::optional<Device> parseDeviceString(std::string_view Text) {
  std::string_view Type = Text.substr(0, Text.find(':'));
  Device D;
  if (Type == "cpu") D.Kind = DeviceKind::CPU;
  else if (Type == "cuda") D.Kind = DeviceKind::CUDA;
  else if (Type == "meta") D.Kind = DeviceKind::Meta;
  else if (Type == "mps") D.Kind = DeviceKind::MPS;
  else if (Type == "xpu") D.Kind = DeviceKind::XPU;
  else if (Type == "hip") D.Kind = DeviceKind::HIP;
  else return std::nullopt;
  if (Type.size() < Text.size()) {
    std::string_view Index = Text.substr(Type.size() + 1);
    if (Index.empty() || !std::all_of(Index.begin(), Index.end(),
                                      [](char C) { return std::isdigit(C); }))
      return std::nullopt;
    D.Index = std::atoi(std::string(Index).c_str());
  }
  return D;
}

} // namespace tma
