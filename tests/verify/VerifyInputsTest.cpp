// Inputs for --verify of functions with parameters (driver/VerifyInputs.h)
// and the predictions evaluated under them (instantiatePrediction), on
// hand-made traces: no Clang, no LibTorch. The end-to-end run is
// tests/verify/test_verify_params.py.
#include "driver/VerifyPlan.h"
#include "driver/VerifyInputs.h"
#include "model/ShapeEnv.h"
#include "verify/Harness.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

using namespace tma;

namespace {

/// A free function `f(<tensors of the given ranks>..., ints...)`; a rank of
/// -1 is a tensor whose rank the analysis does not know.
FunctionTrace makeTrace(const std::vector<std::pair<std::string, int>> &Tensors,
                        const std::vector<std::string> &Ints = {}) {
  FunctionTrace T;
  T.Name = T.CallableName = "f";
  T.HasParameters = true;
  T.Env = std::make_shared<ShapeEnv>();
  for (const auto &[Name, Rank] : Tensors) {
    FunctionTrace::Param P;
    P.Name = Name;
    P.K = FunctionTrace::Param::Tensor;
    P.Type = "const at::Tensor &";
    T.Params.push_back(P);
    ValueInfo VI;
    if (Rank >= 0) {
      Shape S;
      for (int K = 0; K < Rank; ++K)
        S.push_back(T.Env->tensorSize(Name, K));
      VI.Value.Sizes = S;
    }
    VI.Value.TypeOf = Name;
    T.Env->tensorElementSize(Name);
    T.Values.push_back(VI);
    Binding B;
    B.Name = Name;
    B.IsParameter = true;
    B.Value = static_cast<ValueId>(T.Values.size() - 1);
    B.Where.Line = 3;
    T.Bindings.push_back(B);
  }
  for (const std::string &Name : Ints) {
    FunctionTrace::Param P;
    P.Name = Name;
    P.K = FunctionTrace::Param::Integer;
    P.Type = "long";
    T.Params.push_back(P);
    T.Env->integer(Name);
  }
  return T;
}

const MadeInput &input(const InputDraw &D, const std::string &Name) {
  for (const MadeInput &I : D.Inputs)
    if (I.Name == Name)
      return I;
  ADD_FAILURE() << "no input " << Name;
  return D.Inputs.front();
}

TEST(VerifyInputsTest, EvaluatesReportExpressionsUnderADraw) {
  InputDraw D;
  D.Values = {{"x.size(0)", 2}, {"x.size(1)", 6}, {"x.element_size()", 4}, {"n", 3}};
  EXPECT_EQ(evaluateUnder("x.size(0) * x.size(1) * x.element_size()", D), 48);
  EXPECT_EQ(evaluateUnder("x.size(1) / n", D), 2);
  EXPECT_EQ(evaluateUnder("std::max<int64_t>(x.size(0), n) + 1", D), 4);
  EXPECT_EQ(evaluateUnder("x.size( 1 ) % 4", D), 2);
  std::string Error;
  EXPECT_FALSE(evaluateUnder("x.size(7)", D, &Error));
  EXPECT_NE(Error.find("x.size(7)"), std::string::npos) << Error;
  EXPECT_FALSE(evaluateUnder("x.size(0) / (n - 3)", D, &Error));
  EXPECT_FALSE(evaluateUnder("x.size(0) +", D, &Error));
  EXPECT_NE(Error.find("not a report expression"), std::string::npos) << Error;
}

TEST(VerifyInputsTest, ChecksTheReportsConditions) {
  InputDraw D;
  MadeInput X;
  X.Name = "x";
  X.IsTensor = true;
  X.Type = DType::Float32;
  MadeInput T;
  T.Name = "t";
  T.IsTensor = true;
  T.Type = DType::Int64;
  D.Inputs = {X, T};
  D.Values = {{"x.size(0)", 2}, {"x.size(2)", 6}, {"n", 3}, {"x.dim()", 3}};
  EXPECT_EQ(conditionHolds("x.size(2) % n == 0", D), true);
  EXPECT_EQ(conditionHolds("x.size(0) >= 2", D), true);
  EXPECT_EQ(conditionHolds("x.size(0) > 2", D), false);
  EXPECT_EQ(conditionHolds("x.size(0) != n", D), true);
  EXPECT_EQ(conditionHolds("std::max<int64_t>(x.size(0), n) < 4", D), true);
  EXPECT_EQ(conditionHolds("x.dim() == 3", D), true);
  EXPECT_EQ(conditionHolds("x.is_contiguous()", D), true);
  EXPECT_EQ(conditionHolds("x.is_floating_point()", D), true);
  EXPECT_EQ(conditionHolds("t.is_floating_point()", D), false);
  EXPECT_EQ(conditionHolds("t.scalar_type() == at::kLong", D), true);
  EXPECT_EQ(conditionHolds("x.scalar_type() == torch::kFloat32", D), true);
  EXPECT_EQ(conditionHolds("x.scalar_type() == t.scalar_type()", D), false);
  EXPECT_EQ(conditionHolds("x.scalar_type() != t.scalar_type()", D), true);
  // Outside the grammar: no answer, never a guess.
  std::string Error;
  EXPECT_FALSE(conditionHolds("x.is_cuda()", D, &Error));
  EXPECT_FALSE(conditionHolds("fc1->weight.scalar_type() == torch::kFloat", D, &Error));
  EXPECT_FALSE(conditionHolds("x.size(9) == 1", D, &Error));
}

TEST(VerifyInputsTest, DrawsSatisfyFactsAndAssumptionsAndRepeat) {
  FunctionTrace T = makeTrace({{"x", 3}, {"w", 2}}, {"n"});
  SymSize C = T.Env->tensorSize("x", 2);
  SymSize N = T.Env->integer("n");
  T.Env->addFact(SymRelation::multiple(C, N));
  T.Env->addFact(SymRelation::eq(T.Env->tensorSize("w", 1), C));
  T.Env->assume(SymRelation::ge(T.Env->tensorSize("x", 1), SymSize(2)));
  T.Env->assume("w.scalar_type() == x.scalar_type()");
  std::string Reason;
  DrawOptions Opts;
  Opts.Draws = 4;
  std::vector<InputDraw> Draws = drawInputs(T, Opts, Reason);
  ASSERT_EQ(Draws.size(), 4u) << Reason;
  std::set<std::string> Texts;
  for (size_t K = 0; K < Draws.size(); ++K) {
    const InputDraw &D = Draws[K];
    const MadeInput &X = input(D, "x"), &W = input(D, "w"), &Nv = input(D, "n");
    ASSERT_EQ(X.Sizes.size(), 3u);
    ASSERT_EQ(W.Sizes.size(), 2u);
    EXPECT_EQ(X.Sizes[2] % Nv.Value, 0) << D.Text;
    EXPECT_EQ(W.Sizes[1], X.Sizes[2]) << D.Text;
    EXPECT_GE(X.Sizes[1], 2) << D.Text;
    EXPECT_EQ(X.Type, W.Type) << D.Text;
    // The caller's dtype alternates, so x.element_size() takes two values.
    EXPECT_EQ(X.Type, K % 2 ? DType::Float64 : DType::Float32) << D.Text;
    EXPECT_EQ(D.Values.at("x.numel()"), X.Sizes[0] * X.Sizes[1] * X.Sizes[2]);
    EXPECT_EQ(D.Values.at("x.storage().nbytes()"),
              D.Values.at("x.numel()") * D.Values.at("x.element_size()"));
    EXPECT_EQ(D.InputBytes, D.Values.at("x.storage().nbytes()") +
                                D.Values.at("w.storage().nbytes()"));
    EXPECT_NE(D.Text.find("x ("), std::string::npos) << D.Text;
    EXPECT_NE(D.Text.find("n=" + std::to_string(Nv.Value)), std::string::npos) << D.Text;
    Texts.insert(D.Text);
  }
  EXPECT_EQ(Texts.size(), Draws.size()) << "draws are distinct";
  // The same function gets the same draws on every run.
  std::vector<InputDraw> Again = drawInputs(T, Opts, Reason);
  ASSERT_EQ(Again.size(), Draws.size());
  for (size_t K = 0; K < Draws.size(); ++K)
    EXPECT_EQ(Again[K].Text, Draws[K].Text);
}

TEST(VerifyInputsTest, AssumedValuesAreTheInputs) {
  FunctionTrace T = makeTrace({{"x", 2}}, {"n"});
  T.Env->setDisplayName("x.size(0)", "B");
  ASSERT_TRUE(T.Env->bind("B", 5));
  std::string Reason;
  std::vector<InputDraw> Draws = drawInputs(T, DrawOptions(), Reason);
  ASSERT_FALSE(Draws.empty()) << Reason;
  for (const InputDraw &D : Draws)
    EXPECT_EQ(input(D, "x").Sizes[0], 5) << D.Text;
  // Every symbol bound, the element size too: one draw, exactly the values.
  ASSERT_TRUE(T.Env->bind("x.size(1)", 7));
  ASSERT_TRUE(T.Env->bind("n", 2));
  ASSERT_TRUE(T.Env->bind("x.element_size()", 2));
  Draws = drawInputs(T, DrawOptions(), Reason);
  ASSERT_EQ(Draws.size(), 1u) << Reason;
  EXPECT_EQ(Draws[0].Text, "x (5, 7) float16, n=2");
}

TEST(VerifyInputsTest, SaysWhyNoInputCanBeMade) {
  std::string Reason;
  FunctionTrace Unranked = makeTrace({{"x", -1}});
  EXPECT_TRUE(drawInputs(Unranked, DrawOptions(), Reason).empty());
  EXPECT_NE(Reason.find("parameter 'x': its rank is not known"), std::string::npos)
      << Reason;

  FunctionTrace Double = makeTrace({{"x", 1}});
  FunctionTrace::Param P;
  P.Name = "scale";
  P.Type = "double";
  Double.Params.push_back(P);
  EXPECT_TRUE(drawInputs(Double, DrawOptions(), Reason).empty());
  EXPECT_NE(Reason.find("parameter 'scale' has type double"), std::string::npos) << Reason;

  // Values the user gave that break a checked fact.
  FunctionTrace Broken = makeTrace({{"x", 1}}, {"n"});
  Broken.Env->addFact(
      SymRelation::multiple(Broken.Env->tensorSize("x", 0), Broken.Env->integer("n")));
  ASSERT_TRUE(Broken.Env->bind("x.size(0)", 7));
  ASSERT_TRUE(Broken.Env->bind("n", 2));
  EXPECT_TRUE(drawInputs(Broken, DrawOptions(), Reason).empty());
  EXPECT_NE(Reason.find("--assume values break x.size(0) % n == 0"), std::string::npos)
      << Reason;

  // No draw can satisfy it: said, with the condition.
  FunctionTrace Never = makeTrace({{"x", 1}});
  Never.Env->assume(SymRelation::ge(Never.Env->tensorSize("x", 0), SymSize(100)));
  EXPECT_TRUE(drawInputs(Never, DrawOptions(), Reason).empty());
  EXPECT_NE(Reason.find("no draw"), std::string::npos) << Reason;
  EXPECT_NE(Reason.find("x.size(0) >= 100"), std::string::npos) << Reason;

  // A condition this check cannot evaluate: no input rather than a guess.
  FunctionTrace Opaque = makeTrace({{"x", 1}});
  Opaque.Env->assume("x.is_cuda()");
  EXPECT_TRUE(drawInputs(Opaque, DrawOptions(), Reason).empty());
  EXPECT_NE(Reason.find("cannot be checked"), std::string::npos) << Reason;
}

/// The predicted tensor `y = x.view(...)`'s row for a draw, compared with
/// what LibTorch measured. Shape is the planted part.
std::vector<verify::Verdict> compareUnderDraw(const std::string &SecondSize) {
  InputDraw D;
  MadeInput X;
  X.Name = "x";
  X.IsTensor = true;
  X.Sizes = {2, 3};
  X.Type = DType::Float64;
  D.Inputs = {X};
  D.Values = {{"x.size(0)", 2}, {"x.size(1)", 3}, {"x.element_size()", 8},
              {"x.numel()", 6}, {"x.dim()", 2}, {"x.storage().nbytes()", 48}};
  D.Text = "x (2, 3) float64";
  llvm::json::Object F{
      {"file", "f.cpp"},
      {"function", "f"},
      {"line", 1},
      {"tensors",
       llvm::json::Array{llvm::json::Object{
           {"name", "y"},
           {"line", 2},
           {"shape", llvm::json::Array{"x.size(0)", SecondSize}},
           {"strides", llvm::json::Array{"x.size(1)", 1}},
           {"storage_offset", 0},
           {"dtype", "x.scalar_type()"},
           {"storage_bytes", "x.size(0) * x.size(1) * x.element_size()"},
           {"kind", "view"},
           {"base", "x"},
           {"contiguous", true}}}}};
  instantiatePrediction(F, D, 1);
  EXPECT_EQ(F.getInteger("draw"), 1);
  EXPECT_EQ(F.getString("inputs"), "x (2, 3) float64");
  llvm::json::Value Predicted = llvm::json::Object{
      {"functions", llvm::json::Array{llvm::json::Value(std::move(F))}}};
  llvm::json::Value Measured = llvm::json::Object{
      {"mode", "meta"},
      {"functions",
       llvm::json::Array{llvm::json::Object{
           {"file", "f.cpp"},
           {"function", "f"},
           {"draw", 1},
           {"device", "meta"},
           {"tensors", llvm::json::Array{llvm::json::Object{
                           {"name", "y"},
                           {"line", 2},
                           {"shape", llvm::json::Array{2, 3}},
                           {"strides", llvm::json::Array{3, 1}},
                           {"storage_offset", 0},
                           {"dtype", "float64"},
                           {"storage_bytes", 48},
                           {"base", "x"},
                           {"contiguous", true}}}}}}}};
  return verify::compare(Predicted, Measured);
}

TEST(VerifyInputsTest, PredictionsUnderADrawMatchLibTorch) {
  std::vector<verify::Verdict> Vs = compareUnderDraw("x.size(1)");
  ASSERT_EQ(Vs.size(), 7u);
  for (const verify::Verdict &V : Vs) {
    EXPECT_EQ(V.Result, verify::Verdict::Match)
        << V.Field << ": " << V.Predicted << " vs " << V.Measured << " " << V.Note;
    EXPECT_EQ(V.Draw, 1);
  }
}

TEST(VerifyInputsTest, APlantedWrongExpressionIsAMismatch) {
  // Proves the comparison can fail: one size off by one under the draw.
  std::vector<verify::Verdict> Vs = compareUnderDraw("x.size(1) + 1");
  int Mismatches = 0;
  for (const verify::Verdict &V : Vs)
    if (V.Result == verify::Verdict::Mismatch) {
      ++Mismatches;
      EXPECT_EQ(V.Field, "shape");
      EXPECT_EQ(V.Predicted, "[2,4]");
    }
  EXPECT_EQ(Mismatches, 1);
}

TEST(VerifyInputsTest, AnExpressionWithoutAValueIsUnverified) {
  std::vector<verify::Verdict> Vs = compareUnderDraw("y_unknown.size(0)");
  for (const verify::Verdict &V : Vs)
    if (V.Field == "shape") {
      EXPECT_EQ(V.Result, verify::Verdict::Unverified);
      EXPECT_NE(V.Note.find("y_unknown.size(0)"), std::string::npos) << V.Note;
    }
}

TEST(VerifyInputsTest, DrawsAreMatchedByIndex) {
  // A measured run of draw 0 is not evidence about draw 1.
  llvm::json::Value Predicted = llvm::json::Object{
      {"functions", llvm::json::Array{llvm::json::Object{
                        {"file", "f.cpp"}, {"function", "f"}, {"draw", 1},
                        {"tensors", llvm::json::Array{llvm::json::Object{
                                        {"name", "y"}, {"line", 2}, {"kind", "alloc"},
                                        {"shape", llvm::json::Array{2}}}}}}}}};
  llvm::json::Value Measured = llvm::json::Object{
      {"mode", "meta"},
      {"functions", llvm::json::Array{llvm::json::Object{
                        {"file", "f.cpp"}, {"function", "f"}, {"draw", 0},
                        {"tensors", llvm::json::Array{llvm::json::Object{
                                        {"name", "y"}, {"line", 2},
                                        {"shape", llvm::json::Array{2}}}}}}}}};
  for (const verify::Verdict &V : verify::compare(Predicted, Measured))
    EXPECT_NE(V.Result, verify::Verdict::Match) << V.Field;
}

TEST(VerifyInputsTest, HarnessCallsMakeInputsThenCall) {
  verify::HarnessFile F;
  F.Path = "f.cpp";
  F.Text = "#include <torch/torch.h>\nat::Tensor f(at::Tensor &&x, long n) { return x; }\n";
  verify::HarnessCall C;
  C.Function = "f";
  C.Draw = 2;
  C.Inputs = "x (2, 3) float32, n=4";
  verify::HarnessInput X;
  X.Name = "x";
  X.IsTensor = true;
  X.Sizes = {2, 3};
  X.ScalarType = "Float";
  X.Move = true;
  verify::HarnessInput N;
  N.Name = "n";
  N.IntegerType = "long";
  N.Value = 4;
  C.Args = {X, N};
  F.Calls = {C};
  std::string Out = verify::generateHarness({F}, verify::Mode::Meta);
  EXPECT_NE(Out.find("::tma_probe::make_input(\"x\", std::vector<int64_t>{2LL, "
                     "3LL}, c10::ScalarType::Float);"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("long tma_a1 = static_cast<long>(4LL);"), std::string::npos);
  EXPECT_NE(Out.find("::tma_probe::inputs_ready(); (void)::f(std::move(tma_a0), tma_a1);"),
            std::string::npos);
  EXPECT_NE(Out.find("}, 2, \"x (2, 3) float32, n=4\"},"), std::string::npos);
}

} // namespace
