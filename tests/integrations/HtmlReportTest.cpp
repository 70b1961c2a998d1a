// The memory timeline, the HTML report's escaping and file handling, and the
// markdown summary's sparkline and link, on traces built with the model's
// Interpreter (no C++ is parsed). The browser test (test_html_report.py)
// checks the page the real tool writes for the seed.
#include "report/Formats.h"
#include "report/HtmlReport.h"
#include "report/Timeline.h"
#include "model/Interpreter.h"
#include "model/Ops.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace tma;

namespace {

OpOutcome newFloats(std::optional<int64_t> Elements) {
  return factory(Elements ? std::optional<Dims>(Dims{*Elements}) : std::nullopt,
                 DType::Float32, Device{}, FillKind::Filled);
}

/// Statements on lines 1, 2, 3, ...: each call opens the next one.
struct Builder {
  Interpreter I{"f.cpp", "f", SourceSpan{}};
  unsigned Line = 0;
  void statement() {
    Statement S;
    S.Where.File = "f.cpp";
    S.Where.Line = ++Line;
    I.beginStatement(S);
  }
  ValueId allocate(std::optional<int64_t> Elements) {
    return I.apply("randn", {}, {}, {}, newFloats(Elements));
  }
  void bind(const std::string &Name, ValueId V, bool Reassign = false) {
    I.bind(Name, Name, V, {}, {}, Reassign);
  }
};

/// a (4 KiB) on line 1, b (8 KiB) on line 2, a released by reassignment on
/// line 3 (to 16 KiB), a temporary (1 KiB) on line 4.
FunctionTrace fourLines() {
  Builder B;
  B.I.enterScope();
  B.statement();
  B.bind("a", B.allocate(1024));
  B.statement();
  B.bind("b", B.allocate(2048));
  B.statement();
  B.bind("a", B.allocate(4096), /*Reassign=*/true);
  B.statement();
  B.allocate(256);
  B.I.endStatement();
  B.I.exitScope();
  return B.I.finish();
}

TEST(Timeline, BandsFollowTheLedger) {
  FunctionTrace T = fourLines();
  Timeline TL = memoryTimeline(T);
  ASSERT_EQ(TL.Columns.size(), 4u);
  ASSERT_EQ(TL.Bands.size(), 4u);
  EXPECT_TRUE(TL.ToScale);
  // The first a: lines 1..3 (released by the reassignment on line 3).
  EXPECT_EQ(TL.Bands[0].Name, "a");
  EXPECT_EQ(TL.Bands[0].First, 0u);
  EXPECT_EQ(TL.Bands[0].Last, 2u);
  EXPECT_FALSE(TL.Bands[0].EndsAtScopeEnd);
  // b and the second a last to the end of the scope.
  EXPECT_EQ(TL.Bands[1].Last, 3u);
  EXPECT_TRUE(TL.Bands[1].EndsAtScopeEnd);
  EXPECT_EQ(TL.Bands[2].First, 2u);
  // The temporary: its own statement only.
  EXPECT_TRUE(TL.Bands[3].Name.empty());
  EXPECT_EQ(TL.Bands[3].First, 3u);
  EXPECT_EQ(TL.Bands[3].Last, 3u);
  // Stacking: b sits on a, then drops to the floor when a is gone.
  EXPECT_EQ(TL.Bands[1].Below, (std::vector<int64_t>{4096, 4096, 0}));
  EXPECT_EQ(TL.Bands[2].Below, (std::vector<int64_t>{4096 + 8192, 8192}));
  // Column totals: what is drawn; line 3 holds both a's at once.
  EXPECT_EQ(TL.Columns[2].LiveDuring, std::optional<int64_t>(4096 + 8192 + 16384));
  EXPECT_EQ(TL.Columns[3].LiveDuring, std::optional<int64_t>(8192 + 16384 + 1024));
  EXPECT_EQ(TL.Columns[3].LiveAfter, std::optional<int64_t>(8192 + 16384));
  // The trace's peak is the tallest column here.
  ASSERT_TRUE(TL.PeakBytes);
  EXPECT_EQ(*TL.PeakBytes, 4096 + 8192 + 16384);
  EXPECT_EQ(TL.PeakColumn, 2u);
  EXPECT_EQ(TL.MaxStacked, 4096 + 8192 + 16384);
}

TEST(Timeline, UnknownSizeIsNotToScale) {
  Builder B;
  B.statement();
  B.bind("known", B.allocate(1024));
  B.statement();
  B.bind("unknown", B.allocate(std::nullopt));
  Timeline TL = memoryTimeline(B.I.finish());
  ASSERT_EQ(TL.Bands.size(), 2u);
  EXPECT_FALSE(TL.ToScale);
  EXPECT_EQ(TL.UnknownSizeBands, 1u);
  EXPECT_FALSE(TL.Bands[1].Bytes);
  EXPECT_EQ(TL.Bands[1].Height, 4096); // nominal: the largest known band
  EXPECT_TRUE(TL.Columns[0].LiveDuring);
  EXPECT_FALSE(TL.Columns[1].LiveDuring); // no byte total for that column
  EXPECT_EQ(sparkline(TL), "\u2588?");
}

TEST(Timeline, SparklineScalesToThePeakAndMerges) {
  Timeline TL = memoryTimeline(fourLines());
  // 4 KiB, 12 KiB, 28 KiB, 25 KiB of a 28 KiB peak.
  EXPECT_EQ(sparkline(TL), "\u2582\u2584\u2588\u2587");
  // Two cells: the maximum of each half.
  EXPECT_EQ(sparkline(TL, 2), "\u2584\u2588");
  EXPECT_EQ(sparkline(Timeline{}), "");
}

TEST(HtmlReport, EscapesTextAndAttributes) {
  EXPECT_EQ(htmlEscape("<script>alert(\"x\")</script> & 'y'"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; 'y'");
  // Invalid UTF-8 becomes U+FFFD; valid sequences stay; controls are spaces.
  EXPECT_EQ(htmlEscape("a\xff" "b\xc3\xa9\x01"), "a\xEF\xBF\xBD" "b\xc3\xa9 ");
}

TEST(HtmlReport, SourceTextIsEscapedInThePage) {
  llvm::SmallString<128> Path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("tma-html", "cpp", Path));
  const std::string Code = "auto a = f(\"</text><script>x()</script>\");\n";
  {
    std::error_code EC;
    llvm::raw_fd_ostream Out(Path, EC);
    Out << Code;
  }
  Builder B;
  Statement S;
  S.Where.File = Path.str().str();
  S.Where.Line = 1;
  S.Where.BeginOffset = 0;
  S.Where.EndOffset = Code.size() - 1;
  B.I.beginStatement(S);
  B.bind("a", B.allocate(16));
  FunctionTrace T = B.I.finish();
  T.File = S.Where.File;
  T.Name = "f<int>";
  std::string Html;
  llvm::raw_string_ostream OS(Html);
  printHtml(OS, {T}, {}, FormatOptions{});
  OS.flush();
  llvm::sys::fs::remove(Path);
  EXPECT_EQ(Html.find("<script"), std::string::npos);
  EXPECT_NE(Html.find("&lt;/text&gt;&lt;script&gt;x()"), std::string::npos);
  EXPECT_NE(Html.find("<code>f&lt;int&gt;</code>"), std::string::npos);
  EXPECT_NE(Html.find(HtmlGeneratorMarker), std::string::npos);
  EXPECT_EQ(Html.rfind(HtmlReportPrefix, 0), 0u) << Html.substr(0, 200);
  EXPECT_NE(Html.find("default-src 'none'"), std::string::npos);
}

TEST(HtmlReport, ReplacesOnlyItsOwnReport) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tma-html", Dir));
  std::string Mine = (Dir + "/report.html").str();
  std::string Theirs = (Dir + "/notes.html").str();
  {
    std::error_code EC;
    llvm::raw_fd_ostream Out(Theirs, EC);
    Out << "<html>my notes</html>";
  }
  std::string Error;
  std::string Page = HtmlReportPrefix;
  EXPECT_TRUE(writeHtmlFile(Mine, Page + "one", Error)) << Error;
  EXPECT_TRUE(writeHtmlFile(Mine, Page + "two", Error)) << Error;
  EXPECT_EQ((*llvm::MemoryBuffer::getFile(Mine))->getBuffer(), Page + "two");
  EXPECT_FALSE(writeHtmlFile(Theirs, Page, Error));
  EXPECT_NE(Error.find("not a report this tool wrote"), std::string::npos);
  EXPECT_EQ((*llvm::MemoryBuffer::getFile(Theirs))->getBuffer(),
            "<html>my notes</html>");
  // Notes that quote the generator tag, even right at the top, or a page
  // cut short before its prefix ends, are not a report (issue 32 item 7).
  for (std::string Notes :
       {std::string("<!DOCTYPE html>") + HtmlGeneratorMarker + "\nmy notes",
        std::string("how to spot a report: ") + HtmlGeneratorMarker,
        Page.substr(0, Page.size() - 1), " " + Page}) {
    {
      std::error_code EC;
      llvm::raw_fd_ostream Out(Theirs, EC);
      Out << Notes;
    }
    EXPECT_FALSE(writeHtmlFile(Theirs, Page, Error)) << Notes;
    EXPECT_EQ((*llvm::MemoryBuffer::getFile(Theirs))->getBuffer(), Notes);
  }
  llvm::sys::fs::remove(Theirs);
  {
    std::error_code EC;
    llvm::raw_fd_ostream Out(Theirs, EC);
    Out << "<html>my notes</html>";
  }
  // A symbolic link, even to a report this tool wrote, stays a link.
  std::string Link = (Dir + "/link.html").str();
  ASSERT_FALSE(llvm::sys::fs::create_link(Mine, Link));
  EXPECT_FALSE(writeHtmlFile(Link, Page, Error));
  EXPECT_NE(Error.find("symbolic link"), std::string::npos) << Error;
  llvm::sys::fs::remove(Link);
  EXPECT_FALSE(writeHtmlFile(Dir.str(), Page, Error)); // a directory
  // Nothing left behind but the two files.
  std::error_code EC;
  unsigned Entries = 0;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    ++Entries;
  EXPECT_EQ(Entries, 2u);
  llvm::sys::fs::remove(Mine);
  llvm::sys::fs::remove(Theirs);
  llvm::sys::fs::remove(Dir);
}

TEST(Markdown, SparklineAndHtmlLink) {
  FormatOptions Options;
  Options.HtmlURL = "https://ci.example/runs/7 (html)/report.html";
  std::string Md;
  llvm::raw_string_ostream OS(Md);
  printMarkdown(OS, {fourLines()}, {}, Options);
  OS.flush();
  EXPECT_NE(Md.find("[HTML report](https://ci.example/runs/7%20%28html%29/"
                    "report.html)"),
            std::string::npos)
      << Md;
  EXPECT_NE(Md.find("| live bytes by statement |"), std::string::npos) << Md;
  EXPECT_NE(Md.find("`\u2582\u2584\u2588\u2587`"), std::string::npos) << Md;
  // Without --html-url, no link.
  std::string Plain;
  llvm::raw_string_ostream PlainOS(Plain);
  printMarkdown(PlainOS, {fourLines()}, {}, FormatOptions{});
  PlainOS.flush();
  EXPECT_EQ(Plain.find("HTML report"), std::string::npos);
}

} // namespace
