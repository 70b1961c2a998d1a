// ATen schema parsing and the result facts of its alias annotations, on
// schema strings as LibTorch 1.13.1's ATen/ops/*_ops.h spell them.
#include "model/ops/AtenSchema.h"

#include <gtest/gtest.h>

namespace tma {
namespace {

AtenSchema parsed(const char *Text) {
  std::string Error;
  auto S = parseAtenSchema(Text, &Error);
  EXPECT_TRUE(S) << Error;
  return S ? *S : AtenSchema{};
}

using Kind = AtenReturnFact::Kind;

TEST(AtenSchema, ParsesNameOverloadArgumentsAndAliases) {
  AtenSchema S = parsed(
      "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_EQ(S.Name, "mm");
  EXPECT_EQ(S.Overload, "out");
  EXPECT_EQ(S.id(), "aten::mm.out");
  ASSERT_EQ(S.Arguments.size(), 3u);
  EXPECT_EQ(S.Arguments[0].Name, "self");
  EXPECT_EQ(S.Arguments[0].Type, "Tensor");
  EXPECT_FALSE(S.Arguments[0].KwargOnly);
  EXPECT_EQ(S.Arguments[2].Name, "out");
  EXPECT_EQ(S.Arguments[2].AliasSet, "a");
  EXPECT_TRUE(S.Arguments[2].IsWrite);
  EXPECT_TRUE(S.Arguments[2].KwargOnly);
  ASSERT_EQ(S.Returns.size(), 1u);
  EXPECT_TRUE(S.Returns[0].IsWrite);
  EXPECT_EQ(S.argument("mat2"), 1u);
  EXPECT_EQ(S.argument("nope"), std::nullopt);
}

TEST(AtenSchema, ParsesDefaultsListsAndNamedReturns) {
  AtenSchema S = parsed(
      "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) "
      "max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)");
  ASSERT_EQ(S.Arguments.size(), 5u);
  EXPECT_EQ(S.Arguments[2].Default, std::optional<std::string>("False"));
  ASSERT_EQ(S.Returns.size(), 2u);
  EXPECT_EQ(S.Returns[1].Name, "indices");
  EXPECT_EQ(S.Returns[1].AliasSet, "b");

  AtenSchema C = parsed("conv2d(Tensor input, Tensor weight, Tensor? bias=None, "
                        "int[2] stride=1, str padding=\"valid\", int groups=1) -> Tensor");
  ASSERT_EQ(C.Arguments.size(), 6u);
  EXPECT_EQ(C.Arguments[2].Type, "Tensor?");
  EXPECT_EQ(C.Arguments[3].Type, "int[2]");
  EXPECT_EQ(C.Arguments[4].Default, std::optional<std::string>("\"valid\""));

  AtenSchema T = parsed("tensor_split.sections(Tensor(a -> *) self, int "
                        "sections, int dim=0) -> Tensor(a)[]");
  EXPECT_EQ(T.Arguments[0].AliasSet, "a");
  EXPECT_FALSE(T.Arguments[0].IsWrite);
  EXPECT_EQ(T.Returns[0].Type, "Tensor[]");
  EXPECT_EQ(T.Returns[0].AliasSet, "a");

  AtenSchema N = parsed("_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, "
                        "*, Scalar alpha=1) -> ()");
  EXPECT_TRUE(N.Returns.empty());
  EXPECT_TRUE(N.Arguments[0].IsWrite);
  EXPECT_TRUE(N.Arguments[0].isTensorList());
}

TEST(AtenSchema, RejectsWhatIsNoSchema) {
  std::string Error;
  EXPECT_FALSE(parseAtenSchema("swapaxes", &Error));
  EXPECT_FALSE(Error.empty());
  EXPECT_FALSE(parseAtenSchema("f(Tensor self -> Tensor"));
  EXPECT_FALSE(parseAtenSchema("f(Tensor) -> Tensor")); // an argument without a name
  EXPECT_FALSE(parseAtenSchema("f(Tensor self) Tensor"));
}

TEST(AtenResultFacts, AliasedReturnIsAViewOfThatArgument) {
  auto F = atenResultFacts(parsed(
      "swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)"));
  ASSERT_EQ(F.Returns.size(), 1u);
  EXPECT_EQ(F.Returns[0].K, Kind::ViewOf);
  EXPECT_EQ(F.Returns[0].Argument, 0u);
  EXPECT_TRUE(F.Written.empty());
  EXPECT_FALSE(F.ChangesSelfGeometry);
  // The alias set, not the position, names the base.
  auto G = atenResultFacts(parsed("f(Tensor a, Tensor(b) b) -> Tensor(b)"));
  EXPECT_EQ(G.Returns[0].K, Kind::ViewOf);
  EXPECT_EQ(G.Returns[0].Argument, 1u);
}

TEST(AtenResultFacts, AliasedListIsViewsOf) {
  auto F = atenResultFacts(parsed(
      "hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]"));
  EXPECT_EQ(F.Returns[0].K, Kind::ViewsOf);
  EXPECT_EQ(F.Returns[0].Argument, 0u);
}

TEST(AtenResultFacts, UnannotatedIsNewStorage) {
  auto F = atenResultFacts(parsed("kron(Tensor self, Tensor other) -> Tensor"));
  EXPECT_EQ(F.Returns[0].K, Kind::NewStorage);
  auto M = atenResultFacts(parsed(
      "aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor "
      "min, Tensor max)"));
  ASSERT_EQ(M.Returns.size(), 2u);
  EXPECT_EQ(M.Returns[1].K, Kind::NewStorage);
  auto N = atenResultFacts(parsed("numel(Tensor self) -> int"));
  EXPECT_EQ(N.Returns[0].K, Kind::NotTensor);
}

TEST(AtenResultFacts, WrittenArgumentsAndTheirReturns) {
  auto Out = atenResultFacts(parsed(
      "cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) "
      "out) -> Tensor(a!)"));
  EXPECT_EQ(Out.Written, std::vector<size_t>{3});
  EXPECT_EQ(Out.Returns[0].K, Kind::Written);
  EXPECT_EQ(Out.Returns[0].Argument, 3u);
  auto In = atenResultFacts(parsed(
      "exp2_(Tensor(a!) self) -> Tensor(a!)"));
  EXPECT_EQ(In.Written, std::vector<size_t>{0});
  EXPECT_EQ(In.Returns[0].K, Kind::Written);
  EXPECT_FALSE(In.ChangesSelfGeometry);
  auto Two = atenResultFacts(parsed(
      "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) "
      "max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)"));
  EXPECT_EQ(Two.Written, (std::vector<size_t>{3, 4}));
  EXPECT_EQ(Two.Returns[1].K, Kind::Written);
  EXPECT_EQ(Two.Returns[1].Argument, 4u);
}

TEST(AtenResultFacts, InplaceViewOpsChangeSelfGeometry) {
  auto F = atenResultFacts(parsed(
      "unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)"));
  EXPECT_TRUE(F.ChangesSelfGeometry);
  EXPECT_TRUE(isInplaceViewOp("t_"));
  EXPECT_FALSE(isInplaceViewOp("cumsum_"));
}

TEST(AtenResultFacts, WhereTheAnnotationIsNotTheWholeStory) {
  // flatten copies a tensor its view cannot express.
  auto Flat = atenResultFacts(parsed(
      "flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"));
  EXPECT_EQ(Flat.Returns[0].K, Kind::Unknown);
  EXPECT_NE(Flat.Why.find("view or a copy"), std::string::npos);
  // atleast_1d returns self itself when it already has a dim.
  auto At = atenResultFacts(parsed("atleast_1d(Tensor self) -> Tensor"));
  EXPECT_EQ(At.Returns[0].K, Kind::Unknown);
  // _unsafe_view is a view the schema does not annotate.
  auto U = atenResultFacts(parsed("_unsafe_view(Tensor self, SymInt[] size) -> Tensor"));
  EXPECT_EQ(U.Returns[0].K, Kind::Unknown);
  EXPECT_NE(U.Why.find("private"), std::string::npos);
}

} // namespace
} // namespace tma
