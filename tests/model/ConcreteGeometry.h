// The geometry functions over constant shapes, in the form the tests
// compare: a constant shape always decides (Tri::Unknown would be a bug,
// and fails the test), so a view's strides are a Shape or nullopt.
#pragma once

#include "model/Geometry.h"

#include <gtest/gtest.h>

namespace tma::testing {

/// A Tri that must be True (or False): the tests' spelling of a decision.
#define EXPECT_TRI_TRUE(X) EXPECT_EQ((X), ::tma::Tri::True)
#define EXPECT_TRI_FALSE(X) EXPECT_EQ((X), ::tma::Tri::False)

inline std::optional<Shape> decided(Tri T, Shape S) {
  EXPECT_NE(T, Tri::Unknown) << "a constant shape left a question undecided";
  if (T != Tri::True)
    return std::nullopt;
  return S;
}

/// computeStride: the view's strides, or nullopt when there is no view.
inline std::optional<Shape> viewStrides(const Shape &OldSizes,
                                        const Shape &OldStrides,
                                        const Shape &NewSizes) {
  Shape S;
  Tri T = computeStride(OldSizes, OldStrides, NewSizes, S);
  return decided(T, S);
}

/// inferSize: the resolved shape, or nullopt when it is invalid.
inline std::optional<Shape> inferred(const Shape &Target, int64_t Numel) {
  Shape S;
  Tri T = inferSize(Target, Numel, S);
  return decided(T, S);
}

/// broadcastShapes: the broadcast shape, or nullopt.
inline std::optional<Shape> broadcast(const Shape &A, const Shape &B) {
  Shape S;
  Tri T = broadcastShapes(A, B, S);
  return decided(T, S);
}

/// checkedStorageBytes as a number (-1 when it overflows).
inline int64_t storageBytesFor(const Shape &Sizes, const Shape &Strides,
                               int64_t ItemSize) {
  auto B = checkedStorageBytes(Sizes, Strides, ItemSize);
  if (!B || !B->constant())
    return -1;
  return *B->constant();
}

/// A constant Shape's integers (for LibTorch's IntArrayRef).
inline std::vector<int64_t> ints(const Shape &S) {
  auto C = constantShape(S);
  EXPECT_TRUE(C.has_value()) << "a shape in a test is not constant";
  return C.value_or(std::vector<int64_t>{});
}

} // namespace tma::testing
