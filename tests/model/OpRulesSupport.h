// Helpers of the op rule unit tests (OpRulesTest.cpp, OpRulesNNTest.cpp):
// bind arguments to an op's table entry the way the frontend does, run its
// rule through applyRule, and compare an outcome with LibTorch's. See
// OpRulesTest.cpp's header for what these tests are and how the expected
// values were obtained.
#pragma once

#include "model/Decide.h"
#include "model/Ops.h"
#include "model/ShapeEnv.h"
#include "model/ops/OpTable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>

namespace tma::oprules_test {

inline TensorValue dense(const Shape &Sizes, DType Type = DType::Float32) {
  return makeContiguous(Sizes, Type, Device{});
}

inline ArgValue tensorArg(const TensorValue &V) {
  ArgValue A;
  A.K = ArgValue::Kind::Tensor;
  A.TV = V;
  return A;
}
inline ArgValue tensorListArg(std::initializer_list<TensorValue> Vs) {
  ArgValue A;
  A.K = ArgValue::Kind::TensorList;
  A.TVs = Vs;
  return A;
}
inline ArgValue intArg(int64_t V) {
  ArgValue A;
  A.K = ArgValue::Kind::Int;
  A.Int = V;
  return A;
}
/// A list argument: a Shape (view, reshape) or a DimList (a reduction's dims).
inline ArgValue intListArg(const std::vector<int64_t> &V) {
  ArgValue A;
  A.K = ArgValue::Kind::IntList;
  A.List = shapeOf(V);
  return A;
}
inline ArgValue boolArg(bool V) {
  ArgValue A;
  A.K = ArgValue::Kind::Bool;
  A.Bool = V;
  return A;
}
/// A C++ floating literal (2.5): a wrapped number of dtype float64.
inline ArgValue doubleScalarArg(double V) {
  ArgValue A;
  A.K = ArgValue::Kind::Scalar;
  A.Scalar = ElemOperand::scalar(DType::Float64);
  A.Number = V;
  A.Floating = true;
  A.LiteralType = DType::Float64;
  return A;
}
/// An argument the source gives but the analysis cannot derive.
inline ArgValue unknownArg(ArgType Type, const std::string &Reason) {
  ArgValue A;
  A.K = ArgValue::Kind::Unknown;
  A.Type = Type;
  A.Reason = Reason;
  return A;
}

/// Binds Args to overload Overload of the op written Written, taking each
/// argument's type from the schema, as the frontend's overload choice does.
/// A variadic schema ("(...)") is bound by the C++ types: pass Types.
inline OpCall bind(const std::string &Written, unsigned Overload,
            std::vector<ArgValue> Args, bool IsMethod = true,
            std::vector<ArgType> Types = {}) {
  OpCall C;
  C.Op = lookupOp(Written);
  C.Written = Written;
  C.Overload = Overload;
  C.IsMethod = IsMethod;
  if (!C.Op) {
    ADD_FAILURE() << "no table entry for " << Written;
    return C;
  }
  const Schema &S = C.Op->Overloads.at(Overload);
  for (size_t K = 0; K < Args.size(); ++K) {
    if (Args[K].Type != ArgType::Any)
      continue; // set by the case (an unknown argument)
    if (S.Variadic)
      Args[K].Type = K < Types.size() ? Types[K] : ArgType::Any;
    else if (K < S.Args.size())
      Args[K].Type = S.Args[K].Type;
    else
      ADD_FAILURE() << Written << ": more arguments than " << S.Text;
  }
  C.Args = std::move(Args);
  return C;
}

/// The single outcome of a rule.
inline OpOutcome run(const OpCall &C) {
  RuleResult R = applyRule(C);
  EXPECT_EQ(R.Outcomes.size(), 1u) << C.Written;
  if (R.Outcomes.empty())
    return unmodelled(C.Written);
  EXPECT_EQ(R.Outcomes[0].Code, C.Op->Code) << "applyRule stamps the op";
  return R.Outcomes[0];
}

inline void expectGeometry(const OpOutcome &Out, const Shape &Sizes, const Shape &Strides,
                    int64_t Offset, DType Type) {
  EXPECT_EQ(Out.Value.Sizes, std::optional<Shape>(Sizes));
  EXPECT_EQ(Out.Value.Strides, std::optional<Shape>(Strides));
  EXPECT_EQ(Out.Value.Offset, std::optional<int64_t>(Offset));
  EXPECT_EQ(Out.Value.Type, std::optional<DType>(Type));
  EXPECT_EQ(Out.Value.Dev, std::optional<Device>(Device{}));
  EXPECT_TRUE(Out.Value.UnknownReason.empty()) << Out.Value.UnknownReason;
}

/// The rule throws where LibTorch throws. Its message need not be
/// LibTorch's word for word (a rule may leave out the values LibTorch
/// appends), but must say what LibTorch says up to Shared: Shared is checked
/// to be part of LibTorch's own text (as 1.13.1 printed it) and of the
/// rule's.
inline void expectThrows(const OpOutcome &Out, const std::string &LibTorchText,
                  const std::string &Shared) {
  EXPECT_EQ(Out.Kind, OpKind::Throws);
  EXPECT_NE(LibTorchText.find(Shared), std::string::npos) << "test: " << Shared;
  EXPECT_NE(Out.Error.find(Shared), std::string::npos)
      << "rule says: " << Out.Error << "\nLibTorch says: " << LibTorchText;
}

/// A view or self: shares input 0's storage and moves no bytes.
inline void expectNoTraffic(const OpOutcome &Out) {
  EXPECT_EQ(Out.SharesInput, 0u);
  EXPECT_EQ(Out.ReadBytes, std::optional<int64_t>(0));
  EXPECT_EQ(Out.WrittenBytes, std::optional<int64_t>(0));
  EXPECT_EQ(Out.TransientBytes, std::optional<int64_t>(0));
}

inline const TensorValue X = dense({2, 3, 4}); // strides [12, 4, 1], 96 bytes
// x.transpose(1, 2): [2, 4, 3] with strides [12, 1, 4], not viewable as
// [2, 12].
inline TensorValue transposed() {
  OpOutcome T = transpose(X, 1, 2);
  return T.Value;
}

} // namespace tma::oprules_test
