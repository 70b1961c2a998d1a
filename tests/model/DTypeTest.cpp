// Unit tests for model/DType: item sizes, names, categories, c10's
// promoteTypes table, and the [V] type-promotion cases of
// shared/design/aten-rules.md §5 that promoteTypes/typeCategory express.
// ModelVsATenTest.cpp compares promoteTypes with c10 for every pair.
#include "model/DType.h"

#include <gtest/gtest.h>

#include <string>

using namespace tma;

namespace {

const DType AllTypes[] = {
    DType::Bool,      DType::UInt8,    DType::Int8,      DType::Int16,
    DType::Int32,     DType::Int64,    DType::Float16,   DType::BFloat16,
    DType::Float32,   DType::Float64,  DType::Complex32, DType::Complex64,
    DType::Complex128,
};

// at::result_type of one dimensioned tensor and one zero-dim tensor, built
// from typeCategory and promoteTypes (combine_categories in
// aten/src/ATen/native/TypeProperties.cpp): the zero-dim operand only
// participates when its category is strictly higher, and a complex zero-dim
// keeps a floating tensor's precision. ModelVsATenTest checks this rule
// against at::result_type for every pair.
DType resultTypeWithZeroDim(DType Dim, DType ZeroDim) {
  if (typeCategory(ZeroDim) <= typeCategory(Dim))
    return Dim;
  if (isComplex(ZeroDim) && isFloating(Dim))
    return toComplex(Dim);
  return promoteTypes(Dim, ZeroDim);
}

} // namespace

TEST(DTypeTest, ItemSizes) {
  EXPECT_EQ(itemSize(DType::Bool), 1);
  EXPECT_EQ(itemSize(DType::UInt8), 1);
  EXPECT_EQ(itemSize(DType::Int8), 1);
  EXPECT_EQ(itemSize(DType::Int16), 2);
  EXPECT_EQ(itemSize(DType::Int32), 4);
  EXPECT_EQ(itemSize(DType::Int64), 8);
  EXPECT_EQ(itemSize(DType::Float16), 2);
  EXPECT_EQ(itemSize(DType::BFloat16), 2);
  EXPECT_EQ(itemSize(DType::Float32), 4);
  EXPECT_EQ(itemSize(DType::Float64), 8);
  EXPECT_EQ(itemSize(DType::Complex32), 4);
  EXPECT_EQ(itemSize(DType::Complex64), 8);
  EXPECT_EQ(itemSize(DType::Complex128), 16);
}

TEST(DTypeTest, ReportNamesRoundTrip) {
  for (DType T : AllTypes) {
    SCOPED_TRACE(dtypeName(T));
    EXPECT_EQ(dtypeFromName(dtypeName(T)), T);
  }
  EXPECT_STREQ(dtypeName(DType::Float32), "float32");
  EXPECT_STREQ(dtypeName(DType::BFloat16), "bfloat16");
  EXPECT_STREQ(dtypeName(DType::Complex64), "complex64");
}

TEST(DTypeTest, C10EnumeratorNames) {
  EXPECT_EQ(dtypeFromName("Bool"), DType::Bool);
  EXPECT_EQ(dtypeFromName("Byte"), DType::UInt8);
  EXPECT_EQ(dtypeFromName("Char"), DType::Int8);
  EXPECT_EQ(dtypeFromName("Short"), DType::Int16);
  EXPECT_EQ(dtypeFromName("Int"), DType::Int32);
  EXPECT_EQ(dtypeFromName("Long"), DType::Int64);
  EXPECT_EQ(dtypeFromName("Half"), DType::Float16);
  EXPECT_EQ(dtypeFromName("BFloat16"), DType::BFloat16);
  EXPECT_EQ(dtypeFromName("Float"), DType::Float32);
  EXPECT_EQ(dtypeFromName("Double"), DType::Float64);
  EXPECT_EQ(dtypeFromName("ComplexHalf"), DType::Complex32);
  EXPECT_EQ(dtypeFromName("ComplexFloat"), DType::Complex64);
  EXPECT_EQ(dtypeFromName("ComplexDouble"), DType::Complex128);
  EXPECT_EQ(dtypeFromName("QInt8"), std::nullopt);
  EXPECT_EQ(dtypeFromName("float"), std::nullopt);
  EXPECT_EQ(dtypeFromName(""), std::nullopt);
}

TEST(DTypeTest, Categories) {
  EXPECT_TRUE(isIntegral(DType::Bool, true));
  EXPECT_FALSE(isIntegral(DType::Bool, false));
  EXPECT_TRUE(isIntegral(DType::UInt8, false));
  EXPECT_FALSE(isIntegral(DType::Float16, true));
  EXPECT_TRUE(isFloating(DType::BFloat16));
  EXPECT_FALSE(isFloating(DType::Complex64));
  EXPECT_TRUE(isComplex(DType::Complex32));
  EXPECT_EQ(typeCategory(DType::Bool), 0);
  EXPECT_EQ(typeCategory(DType::Int64), 1);
  EXPECT_EQ(typeCategory(DType::Float16), 2);
  EXPECT_EQ(typeCategory(DType::Complex128), 3);
  for (DType T : AllTypes) {
    SCOPED_TRACE(dtypeName(T));
    // Exactly one category.
    int Kinds = (T == DType::Bool) + isIntegral(T, false) + isFloating(T) +
                isComplex(T);
    EXPECT_EQ(Kinds, 1);
  }
}

TEST(DTypeTest, ComplexAndRealParts) {
  EXPECT_EQ(toComplex(DType::Float16), DType::Complex32);
  EXPECT_EQ(toComplex(DType::Float32), DType::Complex64);
  EXPECT_EQ(toComplex(DType::Float64), DType::Complex128);
  EXPECT_EQ(toComplex(DType::Complex128), DType::Complex128);
  EXPECT_EQ(toReal(DType::Complex32), DType::Float16);
  EXPECT_EQ(toReal(DType::Complex64), DType::Float32);
  EXPECT_EQ(toReal(DType::Complex128), DType::Float64);
  EXPECT_EQ(toReal(DType::Int32), DType::Int32);
  // real()/imag() of complex64 are float32 views (§4).
  EXPECT_EQ(itemSize(toReal(DType::Complex64)) * 2,
            itemSize(DType::Complex64));
}

TEST(DTypeTest, PromoteTypesTableEntries) {
  // Rows of c10::promoteTypes' lookup table (c10/core/ScalarType.h).
  EXPECT_EQ(promoteTypes(DType::UInt8, DType::Int8), DType::Int16);
  EXPECT_EQ(promoteTypes(DType::UInt8, DType::Int16), DType::Int16);
  EXPECT_EQ(promoteTypes(DType::UInt8, DType::Bool), DType::UInt8);
  EXPECT_EQ(promoteTypes(DType::Int8, DType::Bool), DType::Int8);
  EXPECT_EQ(promoteTypes(DType::Int32, DType::Int64), DType::Int64);
  EXPECT_EQ(promoteTypes(DType::Int64, DType::Float16), DType::Float16);
  EXPECT_EQ(promoteTypes(DType::Int64, DType::BFloat16), DType::BFloat16);
  EXPECT_EQ(promoteTypes(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promoteTypes(DType::BFloat16, DType::Float64), DType::Float64);
  EXPECT_EQ(promoteTypes(DType::Float32, DType::Complex32), DType::Complex64);
  EXPECT_EQ(promoteTypes(DType::BFloat16, DType::Complex32),
            DType::Complex64);
  EXPECT_EQ(promoteTypes(DType::Float64, DType::Complex64),
            DType::Complex128);
  EXPECT_EQ(promoteTypes(DType::Int64, DType::Complex32), DType::Complex32);
  EXPECT_EQ(promoteTypes(DType::Bool, DType::Complex128), DType::Complex128);
}

TEST(DTypeTest, PromoteTypesIsSymmetricAndIdempotent) {
  for (DType A : AllTypes) {
    EXPECT_EQ(promoteTypes(A, A), A) << dtypeName(A);
    EXPECT_EQ(promoteTypes(DType::Bool, A), A) << dtypeName(A);
    for (DType B : AllTypes)
      EXPECT_EQ(promoteTypes(A, B), promoteTypes(B, A))
          << dtypeName(A) << " " << dtypeName(B);
  }
}

TEST(DTypeTest, VerifiedPromotionExamples) {
  // [V] int32[2] + double zero-dim -> float64 (higher category wins).
  EXPECT_EQ(resultTypeWithZeroDim(DType::Int32, DType::Float64),
            DType::Float64);
  // [V] float32 + double zero-dim -> float32 (same category: ignored).
  EXPECT_EQ(resultTypeWithZeroDim(DType::Float32, DType::Float64),
            DType::Float32);
  // [V] int tensor + 1.5: the C++ scalar has the default dtype, float32.
  EXPECT_EQ(resultTypeWithZeroDim(DType::Int32, DType::Float32),
            DType::Float32);
  EXPECT_EQ(resultTypeWithZeroDim(DType::Int64, DType::Float32),
            DType::Float32);
  // An int64 zero-dim does not widen an int32 tensor; a bool tensor takes
  // the integral category of an int zero-dim.
  EXPECT_EQ(resultTypeWithZeroDim(DType::Int32, DType::Int64), DType::Int32);
  EXPECT_EQ(resultTypeWithZeroDim(DType::Bool, DType::Int64), DType::Int64);
  // A complex zero-dim keeps the floating tensor's precision:
  // float16[2] + complex128[] -> complex32, bfloat16 -> complex64.
  EXPECT_EQ(resultTypeWithZeroDim(DType::Float16, DType::Complex128),
            DType::Complex32);
  EXPECT_EQ(resultTypeWithZeroDim(DType::BFloat16, DType::Complex128),
            DType::Complex64);
  EXPECT_EQ(resultTypeWithZeroDim(DType::Int8, DType::Complex32),
            DType::Complex32);
  // Tensors of equal rank promote fully.
  EXPECT_EQ(promoteTypes(DType::Int32, DType::Float64), DType::Float64);
  EXPECT_EQ(promoteTypes(DType::Float32, DType::Float64), DType::Float64);
}

TEST(DTypeTest, Devices) {
  EXPECT_EQ(deviceName(Device{DeviceKind::CPU, -1}), "cpu");
  EXPECT_EQ(deviceName(Device{DeviceKind::CUDA, 1}), "cuda");
  EXPECT_EQ(deviceName(Device{DeviceKind::Meta, -1}), "meta");

  EXPECT_EQ(deviceKindFromC10Name("CPU"), DeviceKind::CPU);
  EXPECT_EQ(deviceKindFromC10Name("CUDA"), DeviceKind::CUDA);
  EXPECT_EQ(deviceKindFromC10Name("Meta"), DeviceKind::Meta);
  EXPECT_EQ(deviceKindFromC10Name("FPGA"), DeviceKind::Other);
  EXPECT_EQ(deviceKindFromC10Name(""), std::nullopt);

  EXPECT_EQ(parseDeviceString("cpu"), (Device{DeviceKind::CPU, -1}));
  EXPECT_EQ(parseDeviceString("cuda"), (Device{DeviceKind::CUDA, -1}));
  EXPECT_EQ(parseDeviceString("cuda:1"), (Device{DeviceKind::CUDA, 1}));
  EXPECT_EQ(parseDeviceString("meta"), (Device{DeviceKind::Meta, -1}));
  EXPECT_EQ(parseDeviceString("cuda:"), std::nullopt);
  EXPECT_EQ(parseDeviceString("cuda:x"), std::nullopt);
  EXPECT_EQ(parseDeviceString("tpu"), std::nullopt);

  Device A{DeviceKind::CUDA, 0}, B{DeviceKind::CUDA, -1};
  EXPECT_NE(A, B);
  EXPECT_TRUE(A.sameType(B));
  EXPECT_FALSE(A.sameType(Device{DeviceKind::CPU, -1}));
}
