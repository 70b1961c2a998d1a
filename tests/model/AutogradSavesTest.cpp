// What autograd saves, read from Functions.h (model/AutogradSaves.h): the
// scanner on a header written in the generated file's image, then on the
// installed LibTorch's own header.
#include "model/AutogradSaves.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace tma {
namespace {

const char *const SmallHeader = R"(
struct TORCH_API MmBackward0 : public TraceableFunction {
  using TraceableFunction::TraceableFunction;
  variable_list apply(variable_list&& grads) override;
  void release_variables() override {
    self_.reset_data();
    mat2_.reset_data();
  }

  SavedVariable self_;
  std::vector<c10::SymInt> mat2_sym_sizes;
  at::Layout mat2_layout;
  SavedVariable mat2_;

};
struct TORCH_API SumBackward0 : public TraceableFunction {
  std::vector<c10::SymInt> self_sym_sizes;

};
struct TORCH_API CatBackward0 : public TraceableFunction {
  std::vector<SavedVariable> tensors_;
  bool tensors_released_ = false;

};
struct TORCH_API MaxPool2DWithIndicesBackward0 : public TraceableFunction {
  SavedVariable self_;
  SavedVariable result1_;

};
struct TORCH_API ViewBackwardAutogradNestedTensor0 : public TraceableFunction {
  SavedVariable self_;

};
)";

TEST(AutogradSaves, NodeNamesFollowTheCodeGenerator) {
  EXPECT_EQ(AutogradSaves::nodeStem("mm"), "MmBackward");
  EXPECT_EQ(AutogradSaves::nodeStem("log_softmax"), "LogSoftmaxBackward");
  // str.title(): a letter after a digit is upper case.
  EXPECT_EQ(AutogradSaves::nodeStem("max_pool2d_with_indices"),
            "MaxPool2DWithIndicesBackward");
  EXPECT_EQ(AutogradSaves::nodeStem("_to_copy"), "ToCopyBackward");
}

TEST(AutogradSaves, SavedVariablesOfASmallHeader) {
  AutogradSaves S = AutogradSaves::parse(SmallHeader);
  EXPECT_EQ(S.nodeCount(), 5u);
  EXPECT_EQ(S.savedBy("mm"), (std::set<std::string>{"self", "mat2"}));
  // Sizes are no tensors: sum saves nothing.
  EXPECT_EQ(S.savedBy("sum"), std::set<std::string>{});
  EXPECT_EQ(S.savedBy("cat"), std::set<std::string>{"tensors"});
  EXPECT_EQ(S.savedBy("max_pool2d_with_indices"),
            (std::set<std::string>{"self", "result1"}));
  // Another tensor type's kernel is not the op's node; an op with no node
  // is not known.
  EXPECT_EQ(S.savedBy("view"), std::nullopt);
  EXPECT_EQ(S.savedBy("max_pool2d"), std::nullopt);
  EXPECT_EQ(AutogradSaves::parse("").nodeCount(), 0u);
}

TEST(AutogradSaves, TheInstalledHeader) {
  const char *Path = "/usr/include/torch/csrc/autograd/generated/Functions.h";
  std::ifstream In(Path);
  ASSERT_TRUE(In) << Path << " (libtorch-dev) is not installed";
  std::stringstream Text;
  Text << In.rdbuf();
  AutogradSaves S = AutogradSaves::parse(Text.str());
  EXPECT_GT(S.nodeCount(), 400u);
  EXPECT_EQ(S.savedBy("mm"), (std::set<std::string>{"self", "mat2"}));
  EXPECT_EQ(S.savedBy("sigmoid"), std::set<std::string>{"result"});
  EXPECT_EQ(S.savedBy("relu"), std::set<std::string>{"result"});
  EXPECT_EQ(S.savedBy("view"), std::set<std::string>{});
  EXPECT_EQ(S.savedBy("transpose"), std::set<std::string>{});
  EXPECT_EQ(S.savedBy("clone"), std::set<std::string>{});
  EXPECT_EQ(S.savedBy("_to_copy"), std::set<std::string>{});
  auto Mul = S.savedBy("mul");
  ASSERT_TRUE(Mul);
  EXPECT_TRUE(Mul->count("self") && Mul->count("other"));
  // pow(x, 2) is PowBackward0 (self), pow(x, y) PowBackward1 (self,
  // exponent, result): what every overload saves is certain, the rest may
  // be saved.
  auto PowAny = S.savedBy("pow");
  ASSERT_TRUE(PowAny);
  EXPECT_TRUE(PowAny->count("self") && PowAny->count("exponent") &&
              PowAny->count("result"));
  EXPECT_EQ(S.savedByEveryOverload("pow"), std::set<std::string>{});
  EXPECT_EQ(S.savedByEveryOverload("sigmoid"), std::set<std::string>{"result"});
  EXPECT_EQ(S.savedByEveryOverload("mm"), (std::set<std::string>{"self", "mat2"}));
  // The installed header's nodes, picked by the call's arguments.
  EXPECT_EQ(S.nodeFor("pow", {{"self", true}, {"exponent", false}}), "PowBackward0");
  EXPECT_EQ(S.nodeFor("mean", {{"self", true}, {"dtype", false}}), "MeanBackward0");
  EXPECT_EQ(S.nodeFor("mm", {{"self", true}, {"mat2", true}}), "MmBackward0");
  EXPECT_EQ(S.nodeFor("mse_loss", {{"self", true}, {"target", true},
                                   {"reduction", false}}),
            "MseLossBackward0");
  // contiguous() has no node: it records clone's.
  EXPECT_EQ(S.savedBy("contiguous"), std::nullopt);
}

TEST(AutogradSaves, TheCallsArgumentsPickTheNode) {
  const char *Header = R"(
struct TORCH_API PowBackward0 : public TraceableFunction {
  using TraceableFunction::TraceableFunction;
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "PowBackward0"; }
  SavedVariable self_;
  at::Scalar exponent;

};
struct TORCH_API PowBackward1 : public TraceableFunction {
  SavedVariable self_;
  SavedVariable exponent_;
  SavedVariable result_;

};
struct TORCH_API PowBackward2 : public TraceableFunction {
  at::Scalar self;
  SavedVariable exponent_;
  SavedVariable result_;

};
struct TORCH_API MeanBackward0 : public TraceableFunction {
  std::vector<int64_t> self_sizes;
  int64_t self_numel = 0;

};
struct TORCH_API MeanBackward1 : public TraceableFunction {
  std::vector<c10::SymInt> self_sym_sizes;
  SavedVariable self_;
  c10::OptionalArray<int64_t> dim;
  bool keepdim;

};
struct TORCH_API MaxBackward0 : public TraceableFunction {
  std::vector<c10::SymInt> self_sym_sizes;
  int64_t dim = 0;
  bool keepdim;
  SavedVariable indices_;

};
)";
  AutogradSaves S = AutogradSaves::parse(Header);
  // pow(x, 2), pow(x, y), pow(2, y): the tensor-ness of each argument.
  EXPECT_EQ(S.nodeFor("pow", {{"self", true}, {"exponent", false}}), "PowBackward0");
  EXPECT_EQ(S.nodeFor("pow", {{"self", true}, {"exponent", true}}), "PowBackward1");
  EXPECT_EQ(S.nodeFor("pow", {{"self", false}, {"exponent", true}}), "PowBackward2");
  // mean() has no dim: MeanBackward1 names one. mean(x, 1): both fit,
  // MeanBackward1 names more of the call's arguments.
  EXPECT_EQ(S.nodeFor("mean", {{"self", true}, {"dtype", false}}), "MeanBackward0");
  EXPECT_EQ(S.nodeFor("mean", {{"self", true}, {"dim", false}, {"keepdim", false},
                               {"dtype", false}}),
            "MeanBackward1");
  EXPECT_EQ(S.savedByNode("MeanBackward0"), std::set<std::string>{});
  EXPECT_EQ(S.savedByNode("MeanBackward1"), std::set<std::string>{"self"});
  // A saved tensor no argument names is an output (max.dim's indices).
  EXPECT_EQ(S.nodeFor("max", {{"self", true}, {"dim", false}, {"keepdim", false}}),
            "MaxBackward0");
  // Arguments named otherwise (a wrapper's input, target): no node fits.
  EXPECT_EQ(S.nodeFor("pow", {{"input", true}, {"p", false}}), std::nullopt);
  EXPECT_EQ(S.nodeFor("sum", {{"self", true}}), std::nullopt);
}

TEST(AutogradSaves, InputGuardsFollowDerivativesYaml) {
  // mm(x, w): x is saved for w's gradient, w for x's.
  auto Mm = AutogradSaves::inputGuards("MmBackward0");
  ASSERT_TRUE(Mm);
  EXPECT_EQ(Mm->at("self"), "mat2");
  EXPECT_EQ(Mm->at("mat2"), "self");
  // div's other is read by both gradients.
  EXPECT_EQ(AutogradSaves::inputGuards("DivBackward0")->at("other"), "");
  EXPECT_EQ(AutogradSaves::inputGuards("SigmoidBackward0"), std::nullopt);
}

TEST(AutogradSaves, CompositeOpsForPlainTensors) {
  AutogradSaves S;
  S.noteCompositeDispatch(
      "linear", "TORCH_API at::Tensor linear(const at::Tensor & input, "
                "const at::Tensor & weight, const c10::optional<at::Tensor> "
                "& bias={});\n");
  // Only an overload for named dimensions: not composite for plain calls.
  S.noteCompositeDispatch(
      "sum", "TORCH_API at::Tensor sum(const at::Tensor & self, "
             "at::DimnameList dim, bool keepdim=false);\n");
  EXPECT_TRUE(S.isComposite("linear"));
  EXPECT_FALSE(S.isComposite("sum"));
  EXPECT_FALSE(S.isComposite("mm"));
}

} // namespace
} // namespace tma
