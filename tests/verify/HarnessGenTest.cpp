// Unit tests of generateHarness: where probes land, how device expressions
// are replaced, and how several files are kept apart. Pure text: nothing
// here compiles the output (verify_libtorch_tests does that once).
#include "verify/Harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

using namespace tma::verify;

namespace {

size_t offsetAfter(const std::string &Text, const std::string &Needle) {
  size_t At = Text.find(Needle);
  EXPECT_NE(At, std::string::npos) << Needle;
  return At + Needle.size();
}

/// The line of the generated text holding Needle, and the line number the
/// compiler gives it after the nearest preceding #line directive.
struct Located {
  std::string File;
  unsigned Line = 0;
};
Located locate(const std::string &Out, const std::string &Needle) {
  size_t At = Out.find(Needle);
  EXPECT_NE(At, std::string::npos) << Needle;
  std::string Before = Out.substr(0, At);
  static const std::regex LineDirective("\n#line ([0-9]+) \"([^\"]*)\"\n");
  Located L;
  size_t DirectiveEnd = 0;
  for (auto It = std::sregex_iterator(Before.begin(), Before.end(), LineDirective);
       It != std::sregex_iterator(); ++It) {
    L.Line = static_cast<unsigned>(std::stoul((*It)[1]));
    L.File = (*It)[2];
    DirectiveEnd = static_cast<size_t>(It->position() + It->length());
  }
  L.Line += static_cast<unsigned>(
      std::count(Before.begin() + static_cast<long>(DirectiveEnd), Before.end(), '\n'));
  return L;
}

const char *const Block =
    "#include <torch/torch.h>\n"                                            // 1
    "\n"                                                                    // 2
    "void block1() {\n"                                                     // 3
    "  auto x = torch::ones({2, 3}, torch::device(torch::kCUDA));\n"        // 4
    "  auto a = x.t(); auto b = a.contiguous();\n"                          // 5
    "  auto d = torch::zeros({4}, torch::Device(\"cuda:1\"));\n"            // 6
    "}\n";                                                                  // 7

HarnessFile blockFile(const std::string &Path = "src/block.cpp") {
  HarnessFile F;
  F.Path = Path;
  F.Text = Block;
  F.Functions = {"block1"};
  F.Probes = {{"block1", "x", 4, offsetAfter(F.Text, "torch::kCUDA));")},
              {"block1", "a", 5, offsetAfter(F.Text, "x.t();")},
              {"block1", "b", 5, offsetAfter(F.Text, "a.contiguous();")},
              {"block1", "d", 6, offsetAfter(F.Text, "\"cuda:1\"));")}};
  size_t K = F.Text.find("torch::kCUDA");
  size_t S = F.Text.find("\"cuda:1\"");
  F.Devices = {{K, K + std::string("torch::kCUDA").size(), DeviceSite::DeviceTypeExpr},
               {S, S + std::string("\"cuda:1\"").size(), DeviceSite::DeviceStringLiteral}};
  return F;
}

TEST(HarnessGen, TorchHeaderComesFirst) {
  std::string Out = generateHarness({blockFile()}, Mode::Meta);
  size_t Torch = Out.find("#include <torch/torch.h>\n");
  ASSERT_NE(Torch, std::string::npos);
  // Nothing but comments before it.
  std::string Before = Out.substr(0, Torch);
  for (size_t Pos = 0; Pos < Before.size();) {
    size_t End = Before.find('\n', Pos);
    EXPECT_EQ(Before.compare(Pos, 2, "//"), 0) << Before.substr(Pos, End - Pos);
    Pos = End + 1;
  }
  EXPECT_LT(Torch, Out.find("namespace tma_probe {"));
  EXPECT_LT(Out.find("namespace tma_probe {"), Out.find("void block1()"));
}

TEST(HarnessGen, ProbesGoRightAfterTheStatement) {
  std::string Out = generateHarness({blockFile()}, Mode::Meta);
  EXPECT_NE(Out.find("torch::device(::tma_probe::device_type()));"
                     "::tma_probe::record(\"block1\", \"x\", 4, x);\n"),
            std::string::npos);
  // Two bindings on one line: each probe after its own statement.
  EXPECT_NE(Out.find("  auto a = x.t();::tma_probe::record(\"block1\", \"a\", 5, a); "
                     "auto b = a.contiguous();::tma_probe::record(\"block1\", \"b\", 5, b);\n"),
            std::string::npos);
}

TEST(HarnessGen, DevicesAreChosenAtRunTime) {
  std::string Out = generateHarness({blockFile()}, Mode::CPU);
  EXPECT_EQ(Out.find("torch::kCUDA", Out.find("#line 1 ")), std::string::npos);
  // The literal is kept as the argument: a CUDA run honours "cuda:1".
  EXPECT_NE(Out.find("torch::Device(::tma_probe::device_cstr(\"cuda:1\"))"),
            std::string::npos);
  EXPECT_NE(Out.find("::tma_probe::Mode::CPU"), std::string::npos);
  EXPECT_NE(generateHarness({blockFile()}, Mode::CUDA).find("::tma_probe::Mode::CUDA"),
            std::string::npos);
}

TEST(HarnessGen, LineDirectivesKeepTheUserLines) {
  std::string Out = generateHarness({blockFile()}, Mode::Meta);
  Located X = locate(Out, "auto x = torch::ones");
  EXPECT_EQ(X.File, "src/block.cpp");
  EXPECT_EQ(X.Line, 4u);
  Located D = locate(Out, "auto d = torch::zeros");
  EXPECT_EQ(D.Line, 6u);
  // After the user text the numbering is the generated file's own again.
  Located Main = locate(Out, "int main(int argc");
  EXPECT_EQ(Main.File, "harness.cpp");
  size_t At = Out.find("int main(int argc");
  EXPECT_EQ(Main.Line, 1 + std::count(Out.begin(), Out.begin() + static_cast<long>(At), '\n'));
}

TEST(HarnessGen, SingleFileIsNotWrapped) {
  std::string Out = generateHarness({blockFile()}, Mode::Meta);
  EXPECT_EQ(Out.find("namespace tma_u0"), std::string::npos);
  EXPECT_NE(Out.find("{0u, \"src/block.cpp\", \"block1\", [] { (void)::block1(); }, -1, nullptr}"),
            std::string::npos);
  EXPECT_NE(Out.find("harness_main(argc, argv, tma_entries, 1, "), std::string::npos);
}

TEST(HarnessGen, UserMainIsRenamed) {
  HarnessFile F = blockFile();
  F.Text += "int main() { block1(); }\n";
  std::string Out = generateHarness({F}, Mode::Meta);
  size_t Define = Out.find("#define main tma_user_main\n");
  size_t User = Out.find("int main() { block1(); }");
  size_t Undef = Out.find("#undef main\n");
  size_t Ours = Out.find("int main(int argc, char **argv)");
  ASSERT_NE(Define, std::string::npos);
  EXPECT_LT(Define, User);
  EXPECT_LT(User, Undef);
  EXPECT_LT(Undef, Ours);
}

TEST(HarnessGen, SeveralFilesGetNamespacesAndHoistedIncludes) {
  HarnessFile A = blockFile("a.cpp");
  HarnessFile B = blockFile("b.cpp");
  B.Text = "#include <torch/torch.h>\n"
           "#include <vector>\n"
           "#ifdef SOMETHING\n"
           "#include \"conditional.h\"\n"
           "#endif\n"
           "namespace ns {\n"
           "void g() { auto t = torch::ones({1}); }\n"
           "}\n";
  B.Functions = {"ns::g", "::ns::g"};
  B.Probes = {{"ns::g", "t", 7, offsetAfter(B.Text, "torch::ones({1});")}};
  B.Devices.clear();
  std::string Out = generateHarness({A, B}, Mode::Meta);

  size_t U0 = Out.find("namespace tma_u0 {\n#line 1 \"a.cpp\"\n");
  size_t U1 = Out.find("namespace tma_u1 {\n#line 1 \"b.cpp\"\n");
  ASSERT_NE(U0, std::string::npos);
  ASSERT_NE(U1, std::string::npos);
  EXPECT_LT(U0, U1);
  EXPECT_NE(Out.find("} // namespace tma_u1\n"), std::string::npos);
  EXPECT_NE(Out.find("[] { (void)::tma_u0::block1(); }"), std::string::npos);
  EXPECT_NE(Out.find("[] { (void)::tma_u1::ns::g(); }"), std::string::npos);
  EXPECT_EQ(Out.find("::tma_u1::::ns::g"), std::string::npos);
  EXPECT_NE(Out.find("{1u, \"b.cpp\", \"ns::g\""), std::string::npos);

  // Top-level includes move above the namespaces, with their own #line; the
  // conditional one stays where it is.
  size_t Hoisted = Out.find("#line 2 \"b.cpp\"\n#include <vector>\n");
  ASSERT_NE(Hoisted, std::string::npos);
  EXPECT_LT(Hoisted, U0);
  // ...and only there (the blanked original leaves nothing behind).
  EXPECT_EQ(Out.find("#include <vector>", Hoisted + 30), std::string::npos);
  EXPECT_GT(Out.find("#include \"conditional.h\""), U1);
  // Blanked in place, so the numbering inside the namespace is unchanged.
  Located T = locate(Out, "void g() { auto t");
  EXPECT_EQ(T.File, "b.cpp");
  EXPECT_EQ(T.Line, 7u);
  EXPECT_NE(Out.find("torch::ones({1});::tma_probe::record(\"ns::g\", \"t\", 7, t);"),
            std::string::npos);
}

TEST(HarnessGen, BadSitesAreSkippedAndListed) {
  HarnessFile F = blockFile();
  size_t K = F.Text.find("torch::kCUDA");
  F.Devices.push_back({K + 2, K + 5, DeviceSite::DeviceTypeExpr}); // overlaps
  F.Devices.push_back({K, K, DeviceSite::DeviceTypeExpr});         // empty
  F.Probes.push_back({"block1", "z", 99, F.Text.size() + 10});     // past the end
  std::string Out = generateHarness({F}, Mode::Meta);
  EXPECT_NE(Out.find("// tma: skipped src/block.cpp: device site at line 4: overlaps"),
            std::string::npos);
  EXPECT_NE(Out.find("// tma: skipped src/block.cpp: device site ["), std::string::npos);
  EXPECT_NE(Out.find("// tma: skipped src/block.cpp: probe of 'z' at line 99: offset past"),
            std::string::npos);
  // The good edits still happened.
  EXPECT_NE(Out.find("::tma_probe::record(\"block1\", \"x\", 4, x);"), std::string::npos);
}

TEST(HarnessGen, PathsAndNamesAreEscaped) {
  HarnessFile F = blockFile("dir with \"quotes\"\\x.cpp");
  std::string Out = generateHarness({F}, Mode::Meta);
  EXPECT_NE(Out.find("#line 1 \"dir with \\\"quotes\\\"\\\\x.cpp\"\n"), std::string::npos);
}

TEST(HarnessGen, NoFunctionsStillGivesAValidTable) {
  HarnessFile F = blockFile();
  F.Functions.clear();
  std::string Out = generateHarness({F}, Mode::Meta);
  EXPECT_NE(Out.find("{0u, nullptr, nullptr, nullptr, -1, nullptr}"), std::string::npos);
  EXPECT_NE(Out.find("tma_entries, 0, "), std::string::npos);
}

TEST(HarnessGen, CMakeListsBuildsHarnessCpp) {
  std::string C = generateCMakeLists();
  EXPECT_NE(C.find("find_package(Torch REQUIRED)"), std::string::npos);
  EXPECT_NE(C.find("add_executable(harness harness.cpp)"), std::string::npos);
  EXPECT_NE(C.find("${TORCH_LIBRARIES}"), std::string::npos);
  EXPECT_NE(C.find("TMA_PROBE_HAS_CUDA"), std::string::npos);
}

TEST(HarnessGen, ModeNames) {
  EXPECT_STREQ(modeName(Mode::Meta), "meta");
  EXPECT_STREQ(modeName(Mode::CPU), "cpu");
  EXPECT_STREQ(modeName(Mode::CUDA), "cuda");
}

} // namespace
