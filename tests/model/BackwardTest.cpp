// Unit tests of backward() on the ledger (model/AutogradBackward.cpp): the
// engine's order and each node's buffers, for a graph built op by op as
// the frontend builds it. The figures are those LibTorch 1.13.1 gives
// (ctest training_differential_cpu measures the same functions with a
// counting allocator); here they pin the engine's rules, and the version
// branch: other versions are not followed.
#include "model/AutogradSaves.h"
#include "model/Interpreter.h"
#include "model/Ops.h"
#include "OpRulesSupport.h"

#include <gtest/gtest.h>

using namespace tma;
using namespace tma::oprules_test;

namespace {

// Functions.h's nodes of LibTorch 1.13.1 that mm(x, w).sum() records.
const char *const Header = R"(
struct TORCH_API MmBackward0 : public TraceableFunction {
  SavedVariable self_;
  std::vector<c10::SymInt> mat2_sym_sizes;
  std::vector<c10::SymInt> mat2_sym_strides;
  at::Layout mat2_layout;
  std::vector<c10::SymInt> self_sym_sizes;
  std::vector<c10::SymInt> self_sym_strides;
  at::Layout self_layout;
  SavedVariable mat2_;

};
struct TORCH_API SumBackward0 : public TraceableFunction {
  std::vector<c10::SymInt> self_sym_sizes;

};
)";

Statement statementAt(unsigned Line) {
  Statement S;
  S.Where.Line = Line;
  return S;
}

/// auto w = torch::randn({64, 32}, torch::requires_grad());
/// auto x = torch::randn({16, 64});
/// auto loss = torch::mm(x, w).sum();   // [RequiresGradOfX: x too]
/// loss.backward();
struct MmSum {
  Interpreter I{"f.cpp", "f", SourceSpan{}};
  ValueId W = NoValue, X = NoValue, Loss = NoValue;

  explicit MmSum(bool XRequiresGrad) {
    I.setAutogradSaves(
        std::make_shared<AutogradSaves>(AutogradSaves::parse(Header)));
    I.enterScope();
    W = leaf({64, 32}, true, 1, "w");
    X = leaf({16, 64}, XRequiresGrad, 2, "x");
    I.beginStatement(statementAt(3));
    OpOutcome Mm = run(bind("mm", 0, {tensorArg(I.value(X)), tensorArg(I.value(W))}, false));
    Mm.GradModeOn = true;
    Mm.Args = {OpArgument{"self", true, X}, OpArgument{"mat2", true, W}};
    ValueId Product = I.apply("mm", {}, {}, {X, W}, Mm);
    OpOutcome Sum = run(bind("sum", 0, {tensorArg(I.value(Product))}));
    Sum.GradModeOn = true;
    Sum.Args = {OpArgument{"self", true, Product}};
    Loss = I.apply("sum", {}, {}, {Product}, Sum);
    I.bind("loss", "loss", Loss, {}, {}, false);
    I.endStatement();
  }
  ValueId leaf(const Shape &Sizes, bool RequiresGrad, unsigned Line,
               const std::string &Name) {
    I.beginStatement(statementAt(Line));
    OpOutcome Out = factory(Sizes, DType::Float32, Device{}, FillKind::Filled);
    Out.GradModeOn = true;
    Out.MakesGradLeaf = RequiresGrad;
    ValueId V = I.apply("randn", {}, {}, {}, Out);
    I.bind(Name, Name, V, {}, {}, false);
    I.endStatement();
    return V;
  }
  /// backward() on `Version`'s headers: why not followed, or "".
  std::string backward(TorchVersion Version) {
    I.beginStatement(statementAt(4));
    OpOutcome Use;
    Use.Kind = OpKind::Use;
    I.apply("backward", {}, {}, {Loss}, Use);
    std::string Why = I.runBackward({Loss, false, Version});
    I.endStatement();
    return Why;
  }
  FunctionTrace finish() {
    I.exitScope();
    return I.finish();
  }
};

TEST(Backward, MmThenSumAsLibTorch113RunsIt) {
  MmSum F(/*XRequiresGrad=*/false);
  ASSERT_EQ(F.backward(TorchVersion{1, 13}), "");
  FunctionTrace T = F.finish();
  // Before: w 8192 + x 4096 + loss 4. The seed (4), w's gradient x.t().mm(g)
  // (8192), and inside it a dense copy of the expanded gradient (2048).
  ASSERT_TRUE(T.Summary.PeakLiveBytes);
  EXPECT_EQ(*T.Summary.PeakLiveBytes, SymSize(12292 + 4 + 8192 + 2048));
  // w.grad stays (adopted: dense, nothing else holds it).
  bool Named = false;
  for (const StorageInfo &S : T.Storages)
    Named |= S.FirstName == "w.grad" && S.Bytes == std::optional<SymSize>(8192);
  EXPECT_TRUE(Named);
}

TEST(Backward, BothOperandsGetAProductEachAfterACopyOfTheGradient) {
  MmSum F(/*XRequiresGrad=*/true);
  ASSERT_EQ(F.backward(TorchVersion{1, 13}), "");
  FunctionTrace T = F.finish();
  // w's product and its copy go before x's is made: 8192, then 4096 + 2048.
  ASSERT_TRUE(T.Summary.PeakLiveBytes);
  EXPECT_EQ(*T.Summary.PeakLiveBytes, SymSize(12292 + 4 + 8192 + 4096 + 2048));
}

TEST(Backward, OtherVersionsAreNotFollowed) {
  MmSum F(/*XRequiresGrad=*/false);
  std::string Why = F.backward(TorchVersion{2, 1});
  EXPECT_NE(Why.find("1.13"), std::string::npos) << Why;
  EXPECT_NE(Why.find("2.1"), std::string::npos) << Why;
}

} // namespace
