// The op table (model/ops/OpTable.def) without Clang: every entry's
// schemas parse, every name and alias finds its entry, and every rule,
// called on plain arguments of its schema's types, returns an outcome its
// declared result kind allows (a view op never allocates, an in-place op
// returns self), or throws, or says unknown. The numbers themselves are
// checked against real LibTorch by the differential tests; this is the
// table's own consistency.
#include "model/ops/OpTable.h"

#include <gtest/gtest.h>

#include <set>

using namespace tma;

namespace {

TensorValue matrix() {
  return makeContiguous({4, 6}, DType::Float32, Device{DeviceKind::CPU, -1});
}

/// A plain argument of schema type T: a [4, 6] float32 tensor, the integer
/// 1, the list {1}, float32, the CPU, a scalar 2.
ArgValue plain(ArgType T) {
  ArgValue A;
  A.Type = T;
  switch (T) {
  case ArgType::Tensor:
    A.K = ArgValue::Kind::Tensor;
    A.Tensor = 0;
    A.TV = matrix();
    break;
  case ArgType::TensorList:
    A.K = ArgValue::Kind::TensorList;
    A.Tensors = {0, 0};
    A.TVs = {matrix(), matrix()};
    break;
  case ArgType::Int:
    A.K = ArgValue::Kind::Int;
    A.Int = 1;
    break;
  case ArgType::IntList:
    A.K = ArgValue::Kind::IntList;
    A.List = {1};
    break;
  case ArgType::Bool:
    A.K = ArgValue::Kind::Bool;
    break;
  case ArgType::Scalar:
    A.K = ArgValue::Kind::Scalar;
    A.Scalar = ElemOperand::scalar(DType::Int64);
    A.Number = 2;
    A.LiteralType = DType::Int64;
    break;
  case ArgType::ScalarType:
    A.K = ArgValue::Kind::DType;
    A.Type_ = DType::Float32;
    break;
  case ArgType::Device:
    A.K = ArgValue::Kind::Device;
    A.Dev = Device{DeviceKind::CPU, -1};
    break;
  case ArgType::Options:
    A.K = ArgValue::Kind::Options;
    break;
  case ArgType::TensorIndexList: {
    A.K = ArgValue::Kind::Indices;
    IndexSpec S;
    S.K = IndexSpec::Integer;
    S.Int = 1;
    A.Indices = {S};
    break;
  }
  default:
    break; // optional and other arguments: absent
  }
  return A;
}

std::set<OpKind> allowed(ResultKind R) {
  switch (R) {
  case ResultKind::View:
    return {OpKind::View, OpKind::Self};
  case ResultKind::ViewOrCopy:
    return {OpKind::View, OpKind::Self, OpKind::Copy};
  case ResultKind::Alloc:
    return {OpKind::Alloc};
  case ResultKind::Copy:
  case ResultKind::Tuple:
    return {OpKind::Copy};
  case ResultKind::InPlace:
    return {OpKind::InPlace};
  case ResultKind::Views:
    return {OpKind::View};
  }
  return {};
}

TEST(OpTable, NamesAndAliasesFindTheirEntry) {
  std::set<std::string> Seen;
  for (const OpInfo &Op : allOps()) {
    EXPECT_EQ(lookupOp(Op.Name), &Op) << Op.Name;
    EXPECT_EQ(&opInfo(Op.Code), &Op) << Op.Name;
    EXPECT_TRUE(Seen.insert(Op.Name).second) << "two entries named " << Op.Name;
    for (const std::string &A : Op.Aliases) {
      EXPECT_EQ(lookupOp(A), &Op) << A;
      EXPECT_TRUE(Seen.insert(A).second) << "two entries named " << A;
    }
    EXPECT_FALSE(Op.Overloads.empty()) << Op.Name;
  }
  EXPECT_EQ(lookupOp("no_such_op"), nullptr);
  EXPECT_TRUE(hasTag("swapaxes", Permuting));
  EXPECT_TRUE(hasTag("operator[]", SliceLike));
  EXPECT_FALSE(hasTag("matmul", Permuting));
  EXPECT_FALSE(hasTag("no_such_op", Cast));
}

TEST(OpTable, SchemasNameSelfOnce) {
  for (const OpInfo &Op : allOps())
    for (const Schema &S : Op.Overloads) {
      if (S.Variadic)
        continue;
      int Selves = 0;
      for (const SchemaArg &A : S.Args)
        Selves += A.Name == "self";
      EXPECT_LE(Selves, 1) << S.Text;
    }
}

TEST(OpTable, EveryRuleKeepsToItsDeclaredKind) {
  int Called = 0, Answered = 0;
  for (const OpInfo &Op : allOps()) {
    for (unsigned O = 0; O < Op.Overloads.size(); ++O) {
      const Schema &S = Op.Overloads[O];
      OpCall C;
      C.Op = &Op;
      C.Overload = O;
      C.Written = Op.Name;
      if (S.Variadic) {
        // Factories take a size list and options; reductions a tensor.
        C.Args = Op.Family == OpFamily::Factories
                     ? std::vector<ArgValue>{plain(ArgType::IntList),
                                             plain(ArgType::Options)}
                     : std::vector<ArgValue>{plain(ArgType::Tensor)};
      } else {
        for (const SchemaArg &A : S.Args)
          C.Args.push_back(plain(A.Type));
      }
      RuleResult R = applyRule(C);
      ++Called;
      ASSERT_FALSE(R.Outcomes.empty()) << S.Text;
      std::set<OpKind> Allowed = allowed(Op.Result);
      for (const OpOutcome &Out : R.Outcomes) {
        EXPECT_EQ(Out.Code, Op.Code) << S.Text;
        if (Out.Kind == OpKind::Throws || Out.Kind == OpKind::Unknown)
          continue;
        ++Answered;
        EXPECT_TRUE(Allowed.count(Out.Kind))
            << S.Text << ": " << opKindName(Out.Kind) << " for a declared "
            << static_cast<int>(Op.Result);
      }
    }
  }
  // Plain arguments are valid for most ops: most rules must answer.
  EXPECT_GT(Answered, Called / 2) << Answered << " of " << Called;
}

// The worked example of docs/architecture.md: detach shares its input's
// storage and geometry and moves no bytes.
TEST(OpTable, DetachIsAViewOfTheSameGeometry) {
  const OpInfo *Op = lookupOp("detach");
  ASSERT_NE(Op, nullptr);
  OpCall C;
  C.Op = Op;
  C.Written = "detach";
  TensorValue T = matrix();
  OpOutcome Transposed = transpose(T, 0, 1);
  ArgValue Self = plain(ArgType::Tensor);
  Self.TV = Transposed.Value;
  C.Args = {Self};
  RuleResult R = applyRule(C);
  ASSERT_EQ(R.Outcomes.size(), 1u);
  const OpOutcome &Out = R.Outcomes[0];
  EXPECT_EQ(Out.Kind, OpKind::View);
  EXPECT_EQ(Out.Value.Sizes, Transposed.Value.Sizes);
  EXPECT_EQ(Out.Value.Strides, Transposed.Value.Strides);
  EXPECT_EQ(Out.Value.Offset, std::optional<int64_t>(0));
  EXPECT_EQ(Out.ReadBytes, std::optional<int64_t>(0));
  EXPECT_EQ(Out.WrittenBytes, std::optional<int64_t>(0));
}

// requires_grad_ returns self itself (not a view of it), with or without
// its flag argument, and moves no bytes.
TEST(OpTable, RequiresGradReturnsSelf) {
  const OpInfo *Op = lookupOp("requires_grad_");
  ASSERT_NE(Op, nullptr);
  OpCall C;
  C.Op = Op;
  C.Written = "requires_grad_";
  ArgValue Self = plain(ArgType::Tensor);
  Self.TV = matrix();
  C.Args = {Self};
  RuleResult R = applyRule(C);
  ASSERT_EQ(R.Outcomes.size(), 1u);
  EXPECT_EQ(R.Outcomes[0].Kind, OpKind::Self);
  EXPECT_EQ(R.Outcomes[0].Value.Sizes, Self.TV.Sizes);
  EXPECT_EQ(R.Outcomes[0].ReadBytes, std::optional<int64_t>(0));
}

// A view op whose other arguments are not derived is still a view of
// self: dtype kept, geometry unknown with the reason; view(dtype) keeps no
// dtype.
TEST(OpTable, ViewOpWithUnknownArgumentsIsStillAView) {
  OpCall C;
  C.Op = lookupOp("narrow");
  ASSERT_NE(C.Op, nullptr);
  C.Written = "narrow";
  ArgValue Self = plain(ArgType::Tensor);
  Self.TV = matrix();
  ArgValue Unknown;
  Unknown.K = ArgValue::Kind::Unknown;
  C.Args = {Self, Unknown, Unknown, Unknown};
  RuleResult R = applyRule(C);
  ASSERT_EQ(R.Outcomes.size(), 1u);
  EXPECT_EQ(R.Outcomes[0].Kind, OpKind::View);
  EXPECT_EQ(R.Outcomes[0].Value.Type, Self.TV.Type);
  EXPECT_FALSE(R.Outcomes[0].Value.Sizes.has_value());
  EXPECT_FALSE(R.Outcomes[0].Value.UnknownReason.empty());
}

// A view-or-copy op whose outcome is not known may be self itself.
TEST(OpTable, UnknownViewOrCopyMayBeSelf) {
  OpCall C;
  C.Op = lookupOp("contiguous");
  ASSERT_NE(C.Op, nullptr);
  C.Written = "contiguous";
  ArgValue Self = plain(ArgType::Tensor);
  Self.TV = matrix();
  Self.TV.Strides.reset();
  C.Args = {Self};
  RuleResult R = applyRule(C);
  ASSERT_EQ(R.Outcomes.size(), 1u);
  EXPECT_EQ(R.Outcomes[0].Kind, OpKind::Unknown);
  EXPECT_EQ(R.Outcomes[0].MayBeInputs, std::vector<unsigned>{0});
}

} // namespace

// Every ATen op is an entry of its own, even where it shares a rule:
// triu is not tril, prod not sum, min not max.
TEST(OpTable, EveryATenOpIsItsOwnEntry) {
  const std::pair<const char *, const char *> RuleMates[] = {
      {"triu", "tril"},       {"prod", "sum"},          {"min", "max"},
      {"amax", "max"},        {"amin", "max"},          {"argmin", "argmax"},
      {"log_softmax", "softmax"}, {"conv1d", "conv2d"}, {"conv3d", "conv2d"},
      {"max_pool1d", "max_pool2d"}, {"feature_dropout", "dropout"},
      {"zeros_like", "empty_like"}, {"new_zeros", "new_empty"},
      {"min.dim", "max.dim"}};
  for (auto [Op, Mate] : RuleMates) {
    const OpInfo *A = lookupOp(Op), *B = lookupOp(Mate);
    ASSERT_TRUE(A && B) << Op << " / " << Mate;
    EXPECT_EQ(A->Name, Op);
    EXPECT_NE(A->Code, B->Code) << Op << " shares " << Mate << "'s identity";
  }
}

// A shared rule asks the op's identity, not its spelling: triu called as
// if written "tril" is still triu.
TEST(OpTable, SharedRuleFollowsTheIdentityNotTheSpelling) {
  OpCall C;
  C.Op = lookupOp("triu");
  ASSERT_NE(C.Op, nullptr);
  C.Written = "tril";
  ArgValue Self = plain(ArgType::Tensor);
  Self.TV = matrix();
  C.Args = {Self};
  RuleResult R = applyRule(C);
  ASSERT_EQ(R.Outcomes.size(), 1u);
  EXPECT_EQ(R.Name, "triu");
  EXPECT_EQ(R.Outcomes[0].Code, C.Op->Code);
}
