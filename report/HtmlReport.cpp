// The HTML report (HtmlReport.h). Layout of the page:
//
//   header      title, tool version, how to read, one totals line per file
//   per file    <section class="file">: the totals strip (functions, largest
//               peak, bytes moved), then per function:
//   per function <section class="fn">: heading, facts line (peak, live,
//               moved, throws, unknowns), then side by side
//                 <figure class="chart">  the SVG timeline + its text key
//                 <div class="side">      the seed's table, the warnings
//
// The SVG of a chart (HtmlChart.cpp), bottom to top in paint order:
//   axis and grid, bands (one path per storage, a hatch <use> for copies),
//   views (dashed, inside their base), transients, the peak marker, then
//   one transparent, focusable column per statement on top (so hovering
//   anywhere in a column shows that statement's line, text and live bytes
//   in the readout row at the top).
#include "report/HtmlReport.h"
#include "report/HtmlParts.h"
#include "report/Report.h"
#include "driver/SourceFiles.h"
#include "report/Timeline.h"
#include "driver/Version.h"
#include "model/Units.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

namespace tma {

const char *const HtmlGeneratorMarker =
    "<meta name=\"generator\" content=\"tensor-accountant\">";
const char *const HtmlReportPrefix =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"generator\" content=\"tensor-accountant\">\n";

std::string htmlEscape(llvm::StringRef S) {
  std::string Out;
  Out.reserve(S.size());
  const auto *P = reinterpret_cast<const llvm::UTF8 *>(S.data());
  const auto *End = P + S.size();
  while (P < End) {
    unsigned char C = *P;
    if (C >= 0x80) {
      unsigned Length = llvm::getNumBytesForUTF8(C);
      if (P + Length <= End && llvm::isLegalUTF8Sequence(P, P + Length)) {
        Out.append(reinterpret_cast<const char *>(P), Length);
        P += Length;
      } else {
        Out += "\xEF\xBF\xBD"; // U+FFFD
        ++P;
      }
      continue;
    }
    switch (C) {
    case '&': Out += "&amp;"; break;
    case '<': Out += "&lt;"; break;
    case '>': Out += "&gt;"; break;
    case '"': Out += "&quot;"; break; // attributes are always "-quoted
    default: Out += (C < 0x20 || C == 0x7F) ? ' ' : static_cast<char>(C);
    }
    ++P;
  }
  return Out;
}

using namespace html;

namespace {

// ---- Styles -----------------------------------------------------------------

// Patterns and outlines carry what the colours say (colourRules adds the
// palette).
const char *const StyleSheet = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1b1b;background:#fff}
h1{font-size:1.4em;margin:0 0 .3em}
h2{font-size:1.15em;margin:1.5em 0 .3em;border-bottom:1px solid #ccc}
h3{font-size:1em;margin:1.2em 0 .2em}
code,.mono,table.t{font-family:ui-monospace,monospace}
.muted,.where{color:#555}
.totals{background:#f3f3f3;border:1px solid #ddd;padding:.3em .6em;margin:.3em 0}
.facts{margin:.2em 0}
.row{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
.side{flex:1 1 30em;min-width:0;overflow-x:auto}
figure.chart{margin:0;width:min-content;max-width:100%}
figure.chart.none{width:auto;flex:1 1 20em}
.scroll{overflow-x:auto}
figcaption{font-size:.9em;max-width:60em}
table.t{border-collapse:collapse;font-size:12px}
table.t th,table.t td{border:1px solid #ccc;padding:1px 5px;text-align:left;white-space:nowrap}
table.t td:nth-child(n+5){white-space:normal;min-width:10em}
ul.w{padding-left:1.2em;margin:.3em 0;font-size:.92em}
ol.key{padding-left:1.5em;margin:.3em 0;font-size:.9em}
.sw{display:inline-block;width:1.6em;height:.9em;border:1px solid #333;vertical-align:-1px;margin-right:.4em}
.sw.cp{background-image:repeating-linear-gradient(45deg,rgba(0,0,0,.55) 0 1px,transparent 1px 5px)}
.sw.uk{background-image:repeating-linear-gradient(45deg,rgba(0,0,0,.5) 0 1px,transparent 1px 5px),repeating-linear-gradient(-45deg,rgba(0,0,0,.5) 0 1px,transparent 1px 5px)}
.sw.vw{background:#fff;border-style:dashed}
.sw.tr{background:repeating-linear-gradient(90deg,#777 0 1px,#fff 1px 3px)}
svg text{font:11px ui-monospace,monospace;fill:#1b1b1b}
.band{stroke:#333;stroke-width:.6}
.band.pk{stroke-width:1.4}
.view{fill:rgba(255,255,255,.35);stroke:#222;stroke-dasharray:3 2;stroke-width:1}
.trans{fill:url(#p-tr);stroke:#555;stroke-width:.6}
.axis{stroke:#444;stroke-width:1;fill:none}.grid{stroke:#ddd;stroke-width:1;fill:none}
.peak path{stroke:#b00020;stroke-width:1.5;fill:none}.peak .lvl{stroke-dasharray:5 3}
.peak text{fill:#b00020;font-weight:bold}
.loopbg{fill:#f1f1f9;y:36px;height:200px;width:var(--cw)}
.ax text{text-anchor:end}
.sts rect{fill:transparent;pointer-events:all;y:36px;height:222px;width:var(--cw)}
.sts text{visibility:hidden;transform:translate(4px,12px)}
.sts text+text{visibility:visible;text-anchor:middle;transform:translateY(251px)}
.sts a:hover rect,.sts a:focus rect,.sts a:target rect{fill:rgba(26,86,196,.13)}
.sts a:focus{outline:none}.sts a:focus rect{stroke:#1a56c4;stroke-width:2}
.sts a:hover text,.sts a:focus text,.sts a:target text{visibility:visible}
.sts a:hover text+text,.sts a:focus text+text{font-weight:bold}
)css";


/// Per colour: the plain fill, the hatched copy (hN) and the crossed
/// unknown size (xN); the legend's swatches use the same colours.
std::string colourRules() {
  std::string Rules;
  for (unsigned I = 0; I < PaletteSize; ++I) {
    std::string C = ".c" + num(I);
    Rules += C + "{fill:" + Palette[I] + ";background-color:" + Palette[I] +
             "}" + C + ".cp{fill:url(#h" + num(I) + ")}" + C +
             ".uk{fill:url(#x" + num(I) + ")}\n";
  }
  return Rules;
}

/// The patterns every chart refers to, defined once in a hidden SVG.
void patternDefs(Markup &M) {
  M.open("svg", {{"width", "0"}, {"height", "0"}, {"aria-hidden", "true"},
                 {"style", "position:absolute"}});
  M.open("defs");
  auto Pattern = [&](const std::string &Id, unsigned Size, const char *Angle,
                     const char *Background,
                     const std::vector<std::string> &Strokes) {
    M.open("pattern", {{"id", Id},
                       {"width", num(Size)},
                       {"height", num(Size)},
                       {"patternUnits", "userSpaceOnUse"},
                       {"patternTransform", Angle}});
    M.empty("rect", {{"width", num(Size)}, {"height", num(Size)},
                     {"fill", Background}});
    for (const std::string &D : Strokes)
      M.empty("path", {{"d", D}, {"stroke", "#222"}, {"stroke-opacity", ".6"}});
    M.close("pattern");
  };
  for (unsigned I = 0; I < PaletteSize; ++I) {
    Pattern("h" + num(I), 6, "rotate(45)", Palette[I], {"M0 0V6"});
    Pattern("x" + num(I), 6, "rotate(45)", Palette[I], {"M0 0V6", "M0 3H6"});
  }
  Pattern("p-tr", 3, "rotate(0)", "#fff", {"M0 0V3"});
  M.close("defs");
  M.close("svg");
}

// ---- Function and file sections ----------------------------------------------

/// The first column whose statement spans Line, if any.
std::optional<unsigned> columnAtLine(const FunctionTrace &T, unsigned Line) {
  for (unsigned I = 0; I < T.Statements.size(); ++I) {
    const SourceSpan &W = T.Statements[I].Where;
    unsigned End = W.EndLine >= W.Line ? W.EndLine : W.Line;
    if (W.Line <= Line && Line <= End)
      return I;
  }
  return std::nullopt;
}

bool inFunction(const Diagnostic &D, const FunctionTrace &T) {
  if (D.Where.File != T.File)
    return false;
  unsigned End = T.Where.EndLine >= T.Where.Line ? T.Where.EndLine : T.Where.Line;
  return T.Where.Line <= D.Where.Line && D.Where.Line <= End;
}

void tensorTable(Markup &M, const FunctionTrace &T, const std::string &Id) {
  std::vector<RowFacts> Rows = rowFacts(T);
  if (Rows.empty())
    return;
  // Optional tags (thead, tbody, closing tr/td) are left out: the parser
  // implies them, and 300 tables add up.
  M.open("table", {{"class", "t"}});
  M.open("tr");
  for (const char *H : {"name", "shape", "dtype", "storage bytes",
                        "view or copy", "keeps alive"}) {
    M.open("th");
    M.text(H);
  }
  for (const RowFacts &R : Rows) {
    std::vector<std::string> Cells = tableCells(R);
    M.open("tr");
    for (size_t C = 0; C < Cells.size(); ++C) {
      M.open("td");
      if (C == 0 && R.B->Statement < T.Statements.size())
        M.leaf("a", {{"href", "#" + statementId(Id, R.B->Statement)}}, Cells[C]);
      else
        M.text(Cells[C]);
    }
  }
  M.close("table");
}

void warningList(Markup &M, const FunctionTrace &T, const std::string &Id,
                 const std::vector<const Diagnostic *> &Diags,
                 const FormatOptions &Options) {
  if (Diags.empty())
    return;
  M.open("ul", {{"class", "w"}});
  for (const Diagnostic *D : Diags) {
    M.open("li", {{"data-line", num(D->Where.Line)}, {"data-check", D->Check}});
    std::string Where = "line " + num(D->Where.Line);
    if (auto C = columnAtLine(T, D->Where.Line))
      M.leaf("a", {{"href", "#" + statementId(Id, *C)}}, Where);
    else
      M.text(Where);
    M.text(" " + severityOf(D->Check, Options) + " ");
    M.leaf("code", {}, D->Check);
    M.text(": " + renderMessage(D->Format, D->Args));
    if (D->Bytes)
      M.leaf("strong", {}, " \u00b7 " + formatBytes(*D->Bytes) + " estimated");
    M.close("li");
  }
  M.close("ul");
}

std::string factsLine(const FunctionTrace &T) {
  const TraceSummary &S = T.Summary;
  std::string Facts = "peak " + formatBytes(S.PeakLiveBytes);
  if (S.PeakLiveBytes && S.PeakStatementKnown &&
      S.PeakStatement < T.Statements.size())
    Facts += " at line " + num(T.Statements[S.PeakStatement].Where.Line);
  if (auto Parts = peakBreakdown(T); !Parts.empty()) {
    Facts += " (";
    for (size_t K = 0; K < Parts.size(); ++K)
      Facts += (K ? ", " : "") + Parts[K].first + " " + formatBytes(Parts[K].second);
    Facts += ")";
  }
  Facts += " \u00b7 live, nothing freed " + formatBytes(S.LiveBytesNothingFreed) +
           " \u00b7 bytes moved " + formatBytes(bytesMoved(T));
  if (!S.UnknownTotalsReason.empty() &&
      (!S.PeakLiveBytes || !S.LiveBytesNothingFreed))
    Facts += " \u00b7 ? " + S.UnknownTotalsReason;
  return Facts;
}

void functionSection(Markup &M, const FunctionTrace &T, const std::string &Id,
                     const std::vector<const Diagnostic *> &Diags,
                     SourceTexts &Sources, const FormatOptions &Options) {
  Timeline TL = memoryTimeline(T);
  M.newline();
  M.open("section", {{"class", "fn"}, {"id", Id}, {"data-function", T.Name}});
  M.open("h3", {{"id", Id + "-h"}});
  M.leaf("code", {}, T.Name);
  M.leaf("span", {{"class", "where"}}, " line " + num(T.Where.Line));
  M.close("h3");
  M.leaf("p", {{"class", "facts"}}, factsLine(T));
  if (const auto &Cuda = T.Summary.CudaAllocator)
    M.leaf("p", {{"class", "facts"}},
           cudaAllocatorText(*Cuda) +
               (Cuda->UnknownReason.empty() ? ""
                                            : " \u00b7 ? " + Cuda->UnknownReason));
  if (!T.Throws.empty())
    M.leaf("p", {{"class", "facts"}}, "throws at run time: " + T.Throws);
  M.open("div", {{"class", "row"}});
  // A figure with no chart is as wide as its sentence, not as its longest
  // word (a chart's figure takes the chart's width).
  M.open("figure", {{"class", TL.Columns.empty() ? "chart none" : "chart"}});
  if (TL.Columns.empty()) {
    M.leaf("figcaption", {{"id", Id + "-cap"}},
           "No statement of this function runs a tensor op.");
  } else {
    M.open("div", {{"class", "scroll"}});
    writeChart(M, T, TL, Id, Sources);
    M.close("div");
    chartText(M, T, TL, Id);
  }
  M.close("figure");
  M.open("div", {{"class", "side"}});
  tensorTable(M, T, Id);
  warningList(M, T, Id, Diags, Options);
  if (!T.Unknowns.empty()) {
    M.open("ul", {{"class", "w"}});
    for (const Unknown &U : T.Unknowns)
      M.leaf("li", {},
             "line " + num(U.Where.Line) + ": ? " + U.What + ": " + U.Reason);
    M.close("ul");
  }
  M.close("div");
  M.close("div");
  M.close("section");
}

/// Functions, the largest peak and the bytes moved over a set of traces.
struct Totals {
  size_t Functions = 0;
  std::optional<int64_t> LargestPeak = 0;
  std::string LargestPeakFunction;
  std::optional<int64_t> Moved = 0;
};

Totals totalsOf(const std::vector<const FunctionTrace *> &Traces) {
  Totals Tot;
  for (const FunctionTrace *T : Traces) {
    ++Tot.Functions;
    const auto Peak = knownBytes(T->Summary.PeakLiveBytes);
    if (!Peak)
      Tot.LargestPeak.reset();
    else if (Tot.LargestPeak && *Peak > *Tot.LargestPeak) {
      Tot.LargestPeak = *Peak;
      Tot.LargestPeakFunction = T->Name;
    }
    // Totals over files add numbers: a formula is a count not known here.
    auto Moved = knownBytes(bytesMoved(*T));
    Tot.Moved = Tot.Moved && Moved ? checkedAdd(*Tot.Moved, *Moved) : std::nullopt;
  }
  return Tot;
}

std::string totalsText(const Totals &Tot) {
  std::string Text = std::to_string(Tot.Functions) + " function" +
                     (Tot.Functions == 1 ? "" : "s") + " \u00b7 largest peak ";
  if (!Tot.LargestPeak)
    Text += "? (a function's peak is unknown)";
  else {
    Text += formatBytes(*Tot.LargestPeak);
    if (!Tot.LargestPeakFunction.empty())
      Text += " (" + Tot.LargestPeakFunction + ")";
  }
  Text += " \u00b7 bytes moved " + formatBytes(Tot.Moved);
  if (!Tot.Moved)
    Text += " (a statement's traffic is unknown)";
  return Text;
}

Attrs totalsData(const Totals &Tot) {
  return {{"data-functions", std::to_string(Tot.Functions)},
          {"data-peak", Tot.LargestPeak ? num(*Tot.LargestPeak) : "unknown"},
          {"data-moved", Tot.Moved ? num(*Tot.Moved) : "unknown"}};
}

} // namespace

void printHtml(llvm::raw_ostream &OS, const std::vector<FunctionTrace> &Traces,
               const std::vector<Diagnostic> &Diags,
               const FormatOptions &Options) {
  Markup M(OS);
  // Files in the order they were first analysed, functions in source order.
  std::vector<std::string> Files;
  std::map<std::string, std::vector<const FunctionTrace *>> ByFile;
  for (const FunctionTrace &T : Traces) {
    if (!ByFile.count(T.File))
      Files.push_back(T.File);
    ByFile[T.File].push_back(&T);
  }

  M.raw(HtmlReportPrefix);
  M.raw("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
        "'none'; style-src 'unsafe-inline'\">\n"
        "<meta name=\"viewport\" content=\"width=device-width\">\n");
  M.leaf("title", {}, "tensor-accountant: live tensor storage");
  M.raw("\n<style>");
  M.raw(StyleSheet);
  M.raw(colourRules());
  M.raw("</style>\n</head>\n<body>\n");
  patternDefs(M);
  M.open("header");
  M.leaf("h1", {}, "Live tensor storage per function");
  M.leaf("p", {{"class", "muted"}},
         std::string("tensor-accountant ") + toolVersion() +
             ", from the source alone (nothing was run). Each chart: statements "
             "left to right (hover or Tab to a column for its line), live "
             "storage bytes upwards with C++ lifetimes; a band per storage "
             "from allocation to release, hatched when it is a copy, dashed "
             "outlines for views inside the storage they share, the peak in "
             "red.");
  Totals All = totalsOf([&] {
    std::vector<const FunctionTrace *> P;
    for (const FunctionTrace &T : Traces)
      P.push_back(&T);
    return P;
  }());
  Attrs AllData = totalsData(All);
  AllData.insert(AllData.begin(), Attr{"class", "totals"});
  M.leaf("p", AllData, "All files: " + totalsText(All));
  M.close("header");

  // Diagnostics by the function they fall in; the rest by file.
  std::vector<std::vector<const Diagnostic *>> PerFunction(Traces.size());
  std::map<std::string, std::vector<const Diagnostic *>> Outside;
  for (const Diagnostic &D : Diags) {
    bool Placed = false;
    for (size_t I = 0; I < Traces.size() && !Placed; ++I)
      if (inFunction(D, Traces[I])) {
        PerFunction[I].push_back(&D);
        Placed = true;
      }
    if (!Placed) {
      if (!ByFile.count(D.Where.File) && !Outside.count(D.Where.File))
        Files.push_back(D.Where.File);
      Outside[D.Where.File].push_back(&D);
    }
  }

  SourceTexts Sources;
  M.open("main");
  for (const std::string &File : Files) {
    const auto &Fns = ByFile[File];
    M.newline();
    M.open("section", {{"class", "file"}, {"data-file", File}});
    M.leaf("h2", {}, File);
    Totals Tot = totalsOf(Fns);
    Attrs Data = totalsData(Tot);
    Data.insert(Data.begin(), Attr{"class", "totals"});
    M.leaf("p", Data, totalsText(Tot));
    for (const FunctionTrace *T : Fns) {
      size_t Index = static_cast<size_t>(T - Traces.data());
      functionSection(M, *T, "f" + std::to_string(Index), PerFunction[Index],
                      Sources, Options);
    }
    auto It = Outside.find(File);
    if (It != Outside.end()) {
      M.leaf("h3", {}, "Outside the analysed functions");
      FunctionTrace None;
      warningList(M, None, "", It->second, Options);
    }
    M.close("section");
  }
  M.close("main");
  M.raw("\n</body>\n</html>\n");
}

bool htmlTargetReplaceable(llvm::StringRef Path, std::string &Error) {
  namespace fs = llvm::sys::fs;
  fs::file_status Status;
  // The name itself, not what a link names: a link is refused whatever it
  // points at (the rename would replace the link, not its target).
  if (std::error_code EC = fs::status(Path, Status, /*Follow=*/false)) {
    if (EC == std::errc::no_such_file_or_directory) {
      // A new file, where one can be made.
      llvm::StringRef Dir = llvm::sys::path::parent_path(Path);
      if (Dir.empty() || fs::is_directory(Dir))
        return true;
      Error = "cannot write '" + Path.str() + "': no directory '" + Dir.str() +
              "'";
      return false;
    }
    Error = "cannot write '" + Path.str() + "': " + EC.message();
    return false;
  }
  if (Status.type() == fs::file_type::symlink_file) {
    Error = "'" + Path.str() +
            "' is a symbolic link; not replacing it (give the file it "
            "names, or another name)";
    return false;
  }
  if (Status.type() != fs::file_type::regular_file) {
    Error = "'" + Path.str() + "' exists and is not a regular file";
    return false;
  }
  // Its first bytes only: a report is recognised by how it begins.
  llvm::StringRef Prefix(HtmlReportPrefix);
  std::string Head(Prefix.size(), '\0');
  size_t Got = 0;
  if (llvm::Expected<fs::file_t> FD = fs::openNativeFileForRead(Path)) {
    while (Got < Head.size()) {
      llvm::Expected<size_t> N = fs::readNativeFile(
          *FD, llvm::MutableArrayRef<char>(&Head[Got], Head.size() - Got));
      if (!N) {
        llvm::consumeError(N.takeError());
        break;
      }
      if (*N == 0)
        break;
      Got += *N;
    }
    fs::closeFile(*FD);
  } else {
    llvm::consumeError(FD.takeError());
  }
  if (Got == Prefix.size() && Head == Prefix)
    return true;
  Error = "'" + Path.str() +
          "' exists and is not a report this tool wrote (it does not begin "
          "as one); not replacing it (remove it or choose another file)";
  return false;
}

bool writeHtmlFile(llvm::StringRef Path, llvm::StringRef Html,
                   std::string &Error) {
  namespace fs = llvm::sys::fs;
  if (!htmlTargetReplaceable(Path, Error))
    return false;
  // Write beside it, then rename: a reader never sees half a page, and a
  // failed write leaves the old one.
  llvm::SmallString<256> Temp;
  int FD = -1;
  llvm::SmallString<256> Model(Path);
  Model += ".tmp-%%%%%%";
  if (std::error_code EC = fs::createUniqueFile(Model, FD, Temp)) {
    Error = "cannot write beside '" + Path.str() + "': " + EC.message();
    return false;
  }
  {
    llvm::raw_fd_ostream Out(FD, /*shouldClose=*/true);
    Out << Html;
    Out.close();
    if (Out.has_error()) {
      Error = "cannot write '" + Temp.str().str() + "': " + Out.error().message();
      Out.clear_error();
      fs::remove(Temp);
      return false;
    }
  }
  if (std::error_code EC = fs::rename(Temp, Path)) {
    fs::remove(Temp);
    Error = "cannot write '" + Path.str() + "': " + EC.message();
    return false;
  }
  return true;
}

} // namespace tma
