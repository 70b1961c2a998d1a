// Pure helpers of the integrations, without parsing any C++: unified diff
// hunks (--changed-lines-only), workflow-command escaping, and the SARIF
// and markdown shapes of hand-made diagnostics.
#include "checks/Registry.h"
#include "cli/ChangedLines.h"
#include "driver/CheckRunner.h"
#include "report/Formats.h"
#include "driver/JSONInput.h"
#include "lsp/LspServer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace tma;

namespace {

using Ranges = std::vector<std::pair<unsigned, unsigned>>;

TEST(ChangedLines, GitZeroContextHunks) {
  const char *Diff = R"(diff --git a/src/model.cpp b/src/model.cpp
index 1111111..2222222 100644
--- a/src/model.cpp
+++ b/src/model.cpp
@@ -3 +3 @@ void f() {
-  auto a = x;
+  auto a = x.t();
@@ -10,0 +11,2 @@ void f() {
+  auto b = a.contiguous();
+  auto c = b + 1;
@@ -20,3 +22,0 @@ void g() {
-  gone();
-  gone();
-  gone();
)";
  ChangedLines C = ChangedLines::parseUnifiedDiff(Diff);
  ASSERT_EQ(C.files().count("src/model.cpp"), 1u);
  EXPECT_EQ(C.files().at("src/model.cpp"), (Ranges{{3, 3}, {11, 12}}));
  EXPECT_TRUE(C.touches("/repo/src/model.cpp", 3));
  EXPECT_TRUE(C.touches("/repo/src/model.cpp", 12));
  EXPECT_FALSE(C.touches("/repo/src/model.cpp", 4));
  EXPECT_FALSE(C.touches("/repo/src/model.cpp", 22)); // deletion only
  EXPECT_TRUE(C.touches("/repo/src/model.cpp", 1, 3)); // span reaching in
  // Whole path components only.
  EXPECT_FALSE(C.touches("/repo/xsrc/model.cpp", 3));
  EXPECT_FALSE(C.touches("/repo/src/other.cpp", 3));
}

TEST(ChangedLines, ContextLinesAreNotChanges) {
  const char *Diff = "--- a.cpp\t2024-01-01 00:00:00\n"
                     "+++ b.cpp\t2024-01-01 00:00:01\n"
                     "@@ -1,5 +1,6 @@\n"
                     " one\n"
                     " two\n"
                     "-three\n"
                     "+THREE\n"
                     "+three and a half\n"
                     " four\n"
                     "\\ No newline at end of file\n";
  ChangedLines C = ChangedLines::parseUnifiedDiff(Diff);
  // "b.cpp" has no b/ prefix to drop (plain diff -u).
  ASSERT_EQ(C.files().count("b.cpp"), 1u);
  EXPECT_EQ(C.files().at("b.cpp"), (Ranges{{3, 4}}));
}

TEST(ChangedLines, BodyLinesThatLookLikeHeaders) {
  // An added line whose text starts "++ " must not be taken for a header.
  const char *Diff = "--- a/x.cpp\n+++ b/x.cpp\n@@ -0,0 +1,2 @@\n"
                     "+++ not a header\n+int y;\n"
                     "--- a/z.cpp\n+++ /dev/null\n@@ -1 +0,0 @@\n-int z;\n"
                     "--- /dev/null\n+++ \"b/sp ace\\303\\251.cpp\"\n"
                     "@@ -0,0 +1 @@\n+int w;\n";
  ChangedLines C = ChangedLines::parseUnifiedDiff(Diff);
  EXPECT_EQ(C.files().at("x.cpp"), (Ranges{{1, 2}}));
  EXPECT_EQ(C.files().count("z.cpp"), 0u);
  EXPECT_EQ(C.files().at("sp ace\xc3\xa9.cpp"), (Ranges{{1, 1}}));
}

TEST(ChangedLines, GarbageIsIgnored) {
  ChangedLines C = ChangedLines::parseUnifiedDiff("not a diff\n@@ nonsense @@\n");
  EXPECT_TRUE(C.files().empty());
  std::string Error;
  EXPECT_FALSE(ChangedLines::load("", Error));
  EXPECT_FALSE(Error.empty());
}

TEST(ChangedLines, LoadsADiffFile) {
  llvm::SmallString<128> Path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("tma-test", "diff", Path));
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    OS << "--- a/m.cpp\n+++ b/m.cpp\n@@ -1,0 +2,2 @@\n+a\n+b\n";
  }
  std::string Error;
  auto C = ChangedLines::load(std::string(Path), Error);
  llvm::sys::fs::remove(Path);
  ASSERT_TRUE(C) << Error;
  EXPECT_EQ(C->files().at("m.cpp"), (Ranges{{2, 3}}));
}

TEST(ChangedLines, FilterKeepsDiagnosticsOnChangedLines) {
  ChangedLines C = ChangedLines::parseUnifiedDiff(
      "--- a/m.cpp\n+++ b/m.cpp\n@@ -5 +5 @@\n-x\n+y\n");
  Diagnostic On, Off;
  On.Check = Off.Check = "torch-contiguous-copy";
  On.Where.File = Off.Where.File = "m.cpp";
  On.Where.Line = 5;
  Off.Where.Line = 6;
  auto Kept = C.filter({On, Off});
  ASSERT_EQ(Kept.size(), 1u);
  EXPECT_EQ(Kept[0].Where.Line, 5u);
}

TEST(Github, Escaping) {
  EXPECT_EQ(escapeWorkflowData("50% of a\r\nb: c, d"), "50%25 of a%0D%0Ab: c, d");
  EXPECT_EQ(escapeWorkflowProperty("dir,x/a:b.cpp%"), "dir%2Cx/a%3Ab.cpp%25");
}

Diagnostic sampleDiagnostic() {
  Diagnostic D;
  D.Check = "torch-contiguous-copy";
  D.Where.File = "dir,1/m:x.cpp";
  D.Where.Line = 4;
  D.Where.Column = 14;
  D.Where.EndLine = 4;
  D.Where.EndColumn = 24;
  D.Format = "%0() copies %1 because its input is not contiguous";
  D.Args = {"contiguous", "128 MiB"};
  D.Bytes = 134217728;
  DiagnosticNote N;
  N.Where = D.Where;
  N.Where.Line = 3;
  N.Format = "contiguity is lost here by %0()";
  N.Args = {"transpose"};
  D.Notes.push_back(N);
  FixIt F;
  F.Where.BeginOffset = 100;
  F.Where.EndOffset = 113;
  F.Replacement = "";
  D.Fixes.push_back(F);
  return D;
}

TEST(Github, WorkflowCommand) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  FormatOptions Opts;
  printGithub(OS, {sampleDiagnostic()}, Opts);
  OS.flush();
  EXPECT_EQ(Out, "::warning file=dir%2C1/m%3Ax.cpp,line=4,col=14,endLine=4,"
                 "endColumn=24,title=torch-contiguous-copy::contiguous() copies "
                 "128 MiB because its input is not contiguous%0Anote: "
                 "dir,1/m:x.cpp:3:14: contiguity is lost here by transpose()\n");
  Out.clear();
  Opts.ErrorChecks = "torch-contiguous-*";
  printGithub(OS, {sampleDiagnostic()}, Opts);
  OS.flush();
  EXPECT_EQ(llvm::StringRef(Out).substr(0, 10), "::error fi");
}

TEST(Sarif, Shape) {
  FormatOptions Opts;
  Opts.HelpBaseURI = "https://example.org/docs/checks/";
  llvm::json::Value Log = toSarif({sampleDiagnostic()}, Opts);
  const llvm::json::Object &Root = *Log.getAsObject();
  EXPECT_EQ(Root.getString("version"), "2.1.0");
  const llvm::json::Object &Run = *(*Root.getArray("runs"))[0].getAsObject();
  const llvm::json::Object &Driver =
      *Run.getObject("tool")->getObject("driver");
  const llvm::json::Array &Rules = *Driver.getArray("rules");
  ASSERT_EQ(Rules.size(), checkRegistry().size());
  const llvm::json::Object &Rule0 = *Rules[0].getAsObject();
  EXPECT_EQ(Rule0.getString("id"), checkRegistry()[0].Name);
  EXPECT_EQ(Rule0.getString("helpUri"),
            "https://example.org/docs/checks/" + checkRegistry()[0].Name + ".md");
  const llvm::json::Object &R = *(*Run.getArray("results"))[0].getAsObject();
  EXPECT_EQ(R.getString("ruleId"), "torch-contiguous-copy");
  EXPECT_EQ(R.getString("level"), "warning");
  EXPECT_EQ(R.getObject("properties")->getInteger("bytes"), 134217728);
  const llvm::json::Object &Region = *(*R.getArray("locations"))[0]
                                          .getAsObject()
                                          ->getObject("physicalLocation")
                                          ->getObject("region");
  EXPECT_EQ(Region.getInteger("startLine"), 4);
  EXPECT_EQ(Region.getInteger("startColumn"), 14);
  EXPECT_EQ(Region.getInteger("endColumn"), 24);
  EXPECT_EQ(R.getArray("relatedLocations")->size(), 1u);
  const llvm::json::Object &Deleted =
      *(*(*(*R.getArray("fixes"))[0].getAsObject()->getArray("artifactChanges"))[0]
             .getAsObject()
             ->getArray("replacements"))[0]
           .getAsObject()
           ->getObject("deletedRegion");
  EXPECT_EQ(Deleted.getInteger("charOffset"), 100);
  EXPECT_EQ(Deleted.getInteger("charLength"), 13);
}

TEST(Markdown, WorstCopiesAndCounts) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  Diagnostic Small = sampleDiagnostic();
  Small.Bytes = 1024;
  Small.Args = {"contiguous", "1 KiB"};
  printMarkdown(OS, {}, {Small, sampleDiagnostic()}, FormatOptions());
  OS.flush();
  size_t Big = Out.find("| 128 MiB |"), Little = Out.find("| 1 KiB |");
  ASSERT_NE(Big, std::string::npos) << Out;
  ASSERT_NE(Little, std::string::npos) << Out;
  EXPECT_LT(Big, Little); // worst first
  EXPECT_NE(Out.find("| `torch-contiguous-copy` | 2 |"), std::string::npos) << Out;
}

// NOLINT by an index built once (issue 10, item 9); the answers are those
// of clang-tidy's rules, line by line.
TEST(Nolint, IndexAnswersLineByLine) {
  const char *Text = "a; // NOLINT\n"                         // 1
                     "b; // NOLINT(torch-reshape-*, torch-x)\n" // 2
                     "// NOLINTNEXTLINE(torch-x)\n"             // 3
                     "c;\n"                                     // 4
                     "// NOLINTBEGIN(torch-x)\n"                // 5
                     "d; // NOLINTFOO NOLINTNEXTLINEX\n"        // 6
                     "// NOLINTBEGIN\n"                         // 7
                     "e;\n"                                     // 8
                     "// NOLINTEND(torch-x)\n"                  // 9
                     "f;\n"                                     // 10
                     "// NOLINTEND\n"                           // 11
                     "g; // NOLINTEND NOLINTEND\n"              // 12
                     "h;";                                      // 13
  NolintIndex N(Text);
  auto Silenced = [&](const std::string &Check) {
    std::string Lines;
    for (unsigned L = 1; L <= 14; ++L)
      if (N.suppresses(L, Check)) {
        EXPECT_TRUE(isSuppressed(Text, L, Check));
        Lines += std::to_string(L) + " ";
      }
    return Lines;
  };
  EXPECT_EQ(Silenced("torch-x"), "1 2 4 6 7 8 9 10 11 ");
  EXPECT_EQ(Silenced("torch-reshape-copy"), "1 2 8 9 10 11 ");
  EXPECT_EQ(Silenced("torch-y"), "1 8 9 10 11 ");
}

// Overlapping fix-its: the first diagnostic's edits win, a diagnostic's
// edits go in together or not at all, insertions at an edit's edge are no
// overlap; found by lookup among thousands of edits.
TEST(Fixes, OverlapsAreSkippedAmongManyEdits) {
  std::string Text(40000, 'x');
  auto Fix = [](size_t B, size_t E, std::string With) {
    Diagnostic D;
    FixIt F;
    F.Where.BeginOffset = B;
    F.Where.EndOffset = E;
    F.Replacement = std::move(With);
    D.Fixes.push_back(F);
    return D;
  };
  std::vector<Diagnostic> Diags;
  for (size_t I = 0; I < 10000; ++I)
    Diags.push_back(Fix(4 * I, 4 * I + 2, "ab"));  // 10,000 disjoint edits
  Diags.push_back(Fix(101, 103, "!"));            // overlaps [100, 102)
  Diags.push_back(Fix(102, 102, "^"));            // at an edge: applies
  Diags.push_back(Fix(98, 104, "?"));             // covers two edits
  Diagnostic Pair = Fix(2, 3, "<");               // one half overlaps...
  Pair.Fixes.push_back(Fix(1, 2, "").Fixes[0]);   // ...so neither goes in
  Diags.push_back(Pair);
  unsigned Applied = 0;
  std::string Out = applyFixes(Text, Diags, Applied);
  EXPECT_EQ(Applied, 10001u);
  EXPECT_EQ(Out.substr(96, 10), "abxxab^xxa");
}

// JSON from outside is measured before the recursive parser sees it
// (issue 10, item 10); brackets in strings, escaped quotes included, do not
// count.
TEST(JSONInput, DepthIsBoundedBeforeParsing) {
  EXPECT_EQ(jsonNestingDepth(R"({"a": [1, {"b": "[[[{"}], "c\"[": 2})"), 3u);
  EXPECT_EQ(jsonNestingDepth("[] [] {}"), 1u);
  std::string Deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_EQ(jsonNestingDepth(Deep), MaxJSONDepth + 1); // stops counting
  auto Refused = parseBoundedJSON(Deep);
  ASSERT_FALSE(Refused);
  EXPECT_NE(llvm::toString(Refused.takeError()).find("nested more than 512"),
            std::string::npos);
  std::string Fine = std::string(512, '[') + std::string(512, ']');
  auto Parsed = parseBoundedJSON(Fine);
  ASSERT_TRUE(bool(Parsed)) << llvm::toString(Parsed.takeError());
  auto Broken = parseBoundedJSON("{\"a\": ");
  EXPECT_FALSE(Broken);
  llvm::consumeError(Broken.takeError());
}

TEST(Lsp, SourceNames) {
  EXPECT_TRUE(isCxxSourceName("a/b.cpp"));
  EXPECT_TRUE(isCxxSourceName("B.CC"));
  EXPECT_TRUE(isCxxSourceName("x.hpp"));
  EXPECT_FALSE(isCxxSourceName("README.md"));
  EXPECT_FALSE(isCxxSourceName("model.py"));
}

} // namespace
