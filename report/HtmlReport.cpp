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
// The SVG of a chart, bottom to top in paint order:
//   axis and grid, bands (one path per storage, a hatch <use> for copies),
//   views (dashed, inside their base), transients, the peak marker, then
//   one transparent, focusable column per statement on top (so hovering
//   anywhere in a column shows that statement's line, text and live bytes
//   in the readout row at the top).
#include "report/HtmlReport.h"
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

namespace {

// ---- Markup -----------------------------------------------------------------

struct Attr {
  const char *Name;
  std::string Value;
};
using Attrs = std::vector<Attr>;

/// Tags with escaped attributes and text; nothing is written unescaped but
/// the tag and attribute names, which are literals here.
class Markup {
public:
  explicit Markup(llvm::raw_ostream &OS) : OS(OS) {}
  void open(llvm::StringRef Tag, const Attrs &A = {}) {
    OS << '<' << Tag;
    attrs(A);
    OS << '>';
  }
  void close(llvm::StringRef Tag) { OS << "</" << Tag << '>'; }
  /// <Tag ...>Text</Tag>
  void leaf(llvm::StringRef Tag, const Attrs &A, llvm::StringRef Text) {
    open(Tag, A);
    text(Text);
    close(Tag);
  }
  /// <Tag .../> (SVG elements without content)
  void empty(llvm::StringRef Tag, const Attrs &A) {
    OS << '<' << Tag;
    attrs(A);
    OS << "/>";
  }
  void text(llvm::StringRef S) { OS << htmlEscape(S); }
  /// Markup this file wrote itself (the stylesheet, the doctype).
  void raw(llvm::StringRef S) { OS << S; }
  void newline() { OS << '\n'; }

private:
  void attrs(const Attrs &A) {
    for (const Attr &X : A)
      OS << ' ' << X.Name << "=\"" << htmlEscape(X.Value) << '"';
  }
  llvm::raw_ostream &OS;
};

std::string num(double V) { return std::to_string(static_cast<long>(std::lround(V))); }
std::string num(int64_t V) { return std::to_string(V); }
std::string num(unsigned V) { return std::to_string(V); }

// ---- Source text ------------------------------------------------------------

/// Statement text by file offsets, whitespace collapsed, for the readout.
class SourceTexts {
public:
  std::string statement(const SourceSpan &S, size_t MaxChars) {
    const std::string *Text = file(S.File);
    std::string Code;
    if (Text && S.BeginOffset != ~size_t(0) && S.EndOffset != ~size_t(0) &&
        S.BeginOffset < S.EndOffset && S.EndOffset <= Text->size())
      Code = Text->substr(S.BeginOffset, S.EndOffset - S.BeginOffset);
    else if (Text)
      Code = lineText(*Text, S.Line);
    std::string Collapsed;
    for (char C : Code) {
      bool Space = C == ' ' || C == '\t' || C == '\n' || C == '\r';
      if (Space && (Collapsed.empty() || Collapsed.back() == ' '))
        continue;
      Collapsed += Space ? ' ' : C;
    }
    while (!Collapsed.empty() && Collapsed.back() == ' ')
      Collapsed.pop_back();
    if (Collapsed.size() > MaxChars) {
      size_t Cut = MaxChars > 1 ? MaxChars - 1 : 0;
      // Do not cut a UTF-8 sequence in half.
      while (Cut > 0 && (static_cast<unsigned char>(Collapsed[Cut]) & 0xC0) == 0x80)
        --Cut;
      Collapsed = Collapsed.substr(0, Cut) + "\u2026";
    }
    return Collapsed;
  }

private:
  static std::string lineText(const std::string &Text, unsigned Line) {
    size_t Pos = 0;
    for (unsigned L = 1; L < Line && Pos != std::string::npos; ++L) {
      Pos = Text.find('\n', Pos);
      if (Pos != std::string::npos)
        ++Pos;
    }
    if (Pos == std::string::npos || Line == 0)
      return "";
    return Text.substr(Pos, Text.find('\n', Pos) - Pos);
  }
  const std::string *file(const std::string &Name) {
    auto It = Files.find(Name);
    if (It == Files.end()) {
      std::optional<std::string> Text;
      if (auto Read = readSourceFile(Name))
        Text = std::move(Read->Bytes);
      It = Files.emplace(Name, std::move(Text)).first;
    }
    return It->second ? &*It->second : nullptr;
  }
  std::map<std::string, std::optional<std::string>> Files;
};

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

// ColorBrewer's Set3: light, so dark labels read on every band.
const char *const Palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                               "#80b1d3", "#fdb462", "#b3de69", "#fccde5"};
constexpr unsigned PaletteSize = sizeof(Palette) / sizeof(Palette[0]);

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

// ---- Chart ------------------------------------------------------------------

constexpr double PlotHeight = 200;
constexpr double LeftMargin = 70;
constexpr double RightMargin = 10;
constexpr double TopMargin = 36; // readout row, then the peak's label
constexpr double BottomMargin = 22;
constexpr double CharWidth = 6.7; // 11px monospace
/// The height of a line of 11px text: a band shorter than this has no
/// label (it would spill into its neighbours').
constexpr double LabelHeight = 13;

/// The element id of a statement's column: fN-sK.
std::string statementId(const std::string &FunctionId, unsigned Statement) {
  return FunctionId + "-s" + num(Statement);
}

std::string bandName(const TimelineBand &B) {
  return B.Name.empty() ? "(temporary " + B.Op + ")" : B.Name;
}

std::string lifetimeText(const TimelineBand &B, const Timeline &TL) {
  unsigned FirstLine = TL.Columns[B.First].Line;
  unsigned LastLine = TL.Columns[B.Last].Line;
  std::string Lines = FirstLine == LastLine
                          ? "line " + num(FirstLine)
                          : "lines " + num(FirstLine) + "\u2013" + num(LastLine);
  if (B.ReleaseUnknown)
    return Lines + " (release not recorded)";
  const TimelineColumn &End = TL.Columns[B.Last];
  if (End.InLoop || End.InBranch)
    return Lines + " (released inside a " +
           (End.InLoop ? "loop" : "branch") +
           " as the analysis counts it: one pass, names unknown after it)";
  if (B.EndsAtScopeEnd)
    return Lines + " (to its scope's end)";
  if (B.Name.empty())
    return Lines + " (a temporary)";
  return Lines + " (freed by reassignment)";
}

/// The chart's vertical scale: height units to pixels, with ticks when the
/// units are bytes.
struct Scale {
  double Max = 1;                 // height units at the top of the plot
  std::vector<int64_t> Ticks;     // bytes, when to scale
  double y(double Units) const {
    return TopMargin + PlotHeight - Units / Max * PlotHeight;
  }
};

Scale scaleFor(const Timeline &TL) {
  Scale S;
  int64_t Top = TL.MaxStacked;
  if (TL.ToScale && TL.PeakBytes)
    Top = std::max(Top, *TL.PeakBytes);
  if (Top <= 0)
    return S;
  if (!TL.ToScale) {
    S.Max = double(Top);
    return S;
  }
  // A power of two step: three or four ticks above 0.
  int64_t Step = 1;
  while (Step < Top / 3 && Step < (int64_t(1) << 61))
    Step <<= 1;
  int64_t AxisTop = (Top + Step - 1) / Step * Step;
  S.Max = double(AxisTop);
  for (int64_t T = 0; T <= AxisTop; T += Step)
    S.Ticks.push_back(T);
  return S;
}

/// A tick's label, short enough for the axis's margin: ticks are multiples
/// of a power of two, so "1.5 GiB" is exact where formatBytes would add
/// "(1610612736 B)" and run off the page's edge.
std::string tickLabel(int64_t Bytes) {
  static const std::pair<int64_t, const char *> Units[] = {
      {int64_t(1) << 40, "TiB"},
      {int64_t(1) << 30, "GiB"},
      {int64_t(1) << 20, "MiB"},
      {int64_t(1) << 10, "KiB"}};
  for (const auto &[Size, Name] : Units) {
    if (Bytes < Size)
      continue;
    // Exact to 1/1024 of the unit; shown with as few decimals as need be.
    double Value = double(Bytes) / double(Size);
    char Buf[64];
    for (int Decimals = 0; Decimals <= 10; ++Decimals) {
      std::snprintf(Buf, sizeof Buf, "%.*f", Decimals, Value);
      if (std::strtod(Buf, nullptr) * double(Size) == double(Bytes))
        return std::string(Buf) + " " + Name;
    }
    return formatBytes(Bytes);
  }
  return std::to_string(Bytes) + " B";
}

class ChartWriter {
public:
  ChartWriter(Markup &M, const FunctionTrace &T, const Timeline &TL,
              const std::string &Id, SourceTexts &Sources)
      : M(M), T(T), TL(TL), Id(Id), Sources(Sources), S(scaleFor(TL)) {
    size_t N = TL.Columns.size();
    // Whole pixels, so that columns and the stylesheet's --cw agree.
    ColumnWidth = std::clamp(std::floor(640.0 / double(N)), 20.0, 64.0);
    Width = LeftMargin + ColumnWidth * double(N) + RightMargin;
    Width = std::max(Width, 420.0);
    // Room for the peak's label above the plot, wherever its column is.
    if (TL.PeakBytes)
      Width = std::max(Width, LeftMargin + textWidth(peakLabel()) + RightMargin);
  }

  void write() {
    Attrs Svg = {{"width", num(Width)},
                 {"height", num(TopMargin + PlotHeight + BottomMargin)},
                 {"style", "--cw:" + num(ColumnWidth) + "px"},
                 {"role", "group"},
                 {"aria-labelledby", Id + "-h"},
                 {"aria-describedby", Id + "-cap " + Id + "-key"}};
    if (!TL.ToScale)
      Svg.push_back({"data-not-to-scale", "true"});
    M.open("svg", Svg);
    axis();
    loopBackgrounds();
    M.open("g", {{"class", "bands"}});
    for (size_t I = 0; I < TL.Bands.size(); ++I)
      band(I);
    M.close("g");
    views();
    transients();
    peak();
    statements();
    M.close("svg");
  }

private:
  double x(unsigned Column) const {
    return LeftMargin + ColumnWidth * double(Column);
  }
  static double textWidth(const std::string &Text) {
    // Characters, not bytes: "\u2013" is one glyph.
    size_t Glyphs = 0;
    for (unsigned char Ch : Text)
      Glyphs += (Ch & 0xC0) != 0x80;
    return double(Glyphs) * CharWidth;
  }
  std::string peakLabel() const {
    return "peak " + formatBytes(*TL.PeakBytes) + " at line " +
           num(TL.Columns[TL.PeakColumn].Line);
  }

  void axis() {
    double Bottom = TopMargin + PlotHeight;
    M.open("g", {{"class", "ax"}, {"aria-hidden", "true"}});
    std::string Grid;
    for (int64_t Tick : S.Ticks) {
      double Y = S.y(double(Tick));
      if (Tick > 0)
        Grid += "M" + num(LeftMargin) + " " + num(Y) + "H" +
                num(Width - RightMargin);
      M.leaf("text", {{"x", num(LeftMargin - 4)},
                      {"y", num(Y + 4)}},
             tickLabel(Tick));
    }
    if (!Grid.empty())
      M.empty("path", {{"class", "grid"}, {"d", Grid}});
    if (!TL.ToScale) {
      M.leaf("text", {{"x", num(LeftMargin - 4)},
                      {"y", num(TopMargin + PlotHeight / 2)}},
             "not to");
      M.leaf("text", {{"x", num(LeftMargin - 4)},
                      {"y", num(TopMargin + PlotHeight / 2 + 14)}},
             "scale");
    }
    M.empty("path", {{"class", "axis"},
                     {"d", "M" + num(LeftMargin) + " " + num(TopMargin) + "V" +
                               num(Bottom) + "H" + num(Width - RightMargin)}});
    M.close("g");
  }

  void loopBackgrounds() {
    for (const TimelineColumn &C : TL.Columns)
      if (C.InLoop || C.InBranch)
        M.empty("rect", {{"class", "loopbg"}, {"x", num(x(C.Statement))}});
  }

  /// Top and bottom pixel of a band in one of its columns (at least 2 px
  /// tall, so a 64 KiB band next to a GiB one is still seen).
  std::pair<double, double> bandEdges(const TimelineBand &B, unsigned Column,
                                      double Fraction = 1.0) const {
    double Bottom = S.y(double(B.Below[Column - B.First]));
    double Top = S.y(double(B.Below[Column - B.First]) +
                     double(B.Height) * Fraction);
    Bottom = std::round(Bottom);
    Top = std::min(std::round(Top), Bottom - 2);
    return {Top, Bottom};
  }

  /// The outline of a band (or of a view inside it) over columns
  /// First..Last, as one closed path that steps where the band moves.
  std::string outline(const TimelineBand &B, unsigned First, unsigned Last,
                      double Fraction, double Inset) const {
    auto Top = [&](unsigned C) { return bandEdges(B, C, Fraction).first; };
    auto Bottom = [&](unsigned C) { return bandEdges(B, C, Fraction).second; };
    // Along the top edge, left to right, a step wherever the band moves;
    // then back along the bottom edge.
    std::string D = "M" + num(x(First) + Inset) + " " + num(Top(First));
    for (unsigned C = First; C <= Last; ++C)
      if (C == Last || Top(C + 1) != Top(C))
        D += "H" + num(x(C + 1) - (C == Last ? Inset : 0)) +
             (C == Last ? "" : "V" + num(Top(C + 1)));
    D += "V" + num(Bottom(Last));
    for (unsigned C = Last + 1; C-- > First;)
      if (C == First || Bottom(C - 1) != Bottom(C))
        D += "H" + num(x(C) + (C == First ? Inset : 0)) +
             (C == First ? "" : "V" + num(Bottom(C - 1)));
    return D + "Z";
  }

  void band(size_t Index) {
    const TimelineBand &B = TL.Bands[Index];
    // Colour by position, pattern by kind: c0..c7, then cp (hatched: a
    // copy) or uk (crossed: size unknown), each a pattern of that colour.
    std::string Class = "band c" + num(static_cast<unsigned>(Index % 8));
    if (!B.Bytes)
      Class += " uk";
    else if (B.Copy)
      Class += " cp";
    if (B.AtPeak)
      Class += " pk";
    M.empty("path", {{"class", Class},
                     {"d", outline(B, B.First, B.Last, 1.0, 0)},
                     {"data-storage", num(static_cast<int64_t>(B.Storage))},
                     {"data-first-line", num(TL.Columns[B.First].Line)},
                     {"data-last-line", num(TL.Columns[B.Last].Line)},
                     {"data-bytes", B.Bytes ? num(*B.Bytes) : "unknown"}});
    // The label, where it fits, inside the band from its first column: the
    // name and bytes, else the name alone (the key has the rest). Inside
    // means within the columns where the band stays where it starts (it
    // steps down when one below it is freed, and another band's label may
    // then start beside it), and at least a line of text tall: bands never
    // overlap, so neither do their labels.
    auto [Top, Bottom] = bandEdges(B, B.First);
    unsigned Flat = B.First;
    while (Flat < B.Last && bandEdges(B, Flat + 1) == bandEdges(B, B.First))
      ++Flat;
    double Room = x(Flat + 1) - x(B.First) - 6;
    std::string Label = bandName(B) + " " + formatBytes(B.Bytes);
    if (textWidth(Label) > Room)
      Label = bandName(B);
    if (Bottom - Top >= LabelHeight && textWidth(Label) <= Room)
      M.leaf("text", {{"x", num(x(B.First) + 3)},
                      {"y", num((Top + Bottom) / 2 + 4)}},
             Label);
  }

  void views() {
    if (TL.Views.empty())
      return;
    M.open("g", {{"class", "views"}});
    for (const TimelineView &V : TL.Views) {
      const TimelineBand &B = TL.Bands[V.Band];
      M.empty("path",
              {{"class", "view"},
               {"d", outline(B, V.First, V.Last, V.Fraction, 2)},
               {"data-name", V.Name},
               {"data-base-storage", num(static_cast<int64_t>(B.Storage))},
               {"data-first-line", num(TL.Columns[V.First].Line)},
               {"data-last-line", num(TL.Columns[V.Last].Line)},
               {"data-shown-bytes", V.ShownBytes ? num(*V.ShownBytes) : "unknown"}});
    }
    M.close("g");
  }

  void transients() {
    for (const TimelineColumn &C : TL.Columns) {
      if (C.TransientBytes <= 0)
        continue;
      double Bottom = std::round(S.y(double(C.Stacked - C.TransientBytes)));
      double Top = std::min(std::round(S.y(double(C.Stacked))), Bottom - 2);
      M.empty("rect", {{"class", "trans"}, {"x", num(x(C.Statement) + 3)},
                       {"y", num(Top)}, {"width", num(ColumnWidth - 6)},
                       {"height", num(Bottom - Top)},
                       {"data-line", num(C.Line)},
                       {"data-bytes", num(C.TransientBytes)}});
    }
  }

  void peak() {
    if (!TL.PeakBytes)
      return;
    const TimelineColumn &C = TL.Columns[TL.PeakColumn];
    std::string Live;
    for (StorageId Sid : T.Summary.PeakLive)
      Live += (Live.empty() ? "" : " ") + num(static_cast<int64_t>(Sid));
    M.open("g", {{"class", "peak"},
                 {"data-line", num(C.Line)},
                 {"data-bytes", num(*TL.PeakBytes)},
                 {"data-storages", Live},
                 {"aria-hidden", "true"}});
    double X = x(C.Statement) + ColumnWidth / 2;
    M.empty("path", {{"d", "M" + num(X) + " " + num(TopMargin - 6) + "V" +
                               num(TopMargin + PlotHeight)}});
    if (TL.ToScale) {
      double Y = S.y(double(*TL.PeakBytes));
      M.empty("path", {{"class", "lvl"},
                       {"d", "M" + num(LeftMargin) + " " + num(Y) + "H" +
                                 num(Width - RightMargin)}});
    }
    std::string Label = peakLabel();
    // Beside the marker, on its right, else ending at it; never past the
    // plot's edges (the constructor made the chart wide enough for it),
    // and never over the axis's labels on the left.
    double L = textWidth(Label);
    double Start = X + 3;
    if (Start + L > Width - RightMargin)
      Start = X - 3 - L;
    Start = std::clamp(Start, LeftMargin, Width - RightMargin - L);
    M.leaf("text", {{"x", num(std::round(Start))}, {"y", num(TopMargin - 8)}},
           Label);
    M.close("g");
  }

  void statements() {
    size_t MaxChars =
        static_cast<size_t>(std::max(20.0, (Width - 8) / CharWidth));
    // Line labels: every column when they fit, else every k-th, with a
    // gap of at least 6 px between the widest of them.
    double Widest = 0;
    for (const TimelineColumn &C : TL.Columns)
      Widest = std::max(Widest, textWidth(num(C.Line)));
    unsigned LabelEvery = std::max(
        1u, static_cast<unsigned>(std::ceil((Widest + 6) / ColumnWidth)));
    M.open("g", {{"class", "sts"}});
    for (const TimelineColumn &C : TL.Columns) {
      std::string StId = statementId(Id, C.Statement);
      std::string Live =
          C.LiveDuring ? formatBytes(*C.LiveDuring) + " live"
                       : std::string(TL.ToScale ? "live bytes unknown"
                                                : "a size is unknown");
      std::string Where = "line " + num(C.Line) + ": ";
      std::string Suffix = " \u00b7 " + Live;
      if (C.InLoop)
        Suffix += " \u00b7 in a loop: one iteration";
      else if (C.InBranch)
        Suffix += " \u00b7 in a branch";
      size_t Room = MaxChars > Where.size() + Suffix.size() + 8
                        ? MaxChars - Where.size() - Suffix.size()
                        : 8;
      std::string Code = Sources.statement(T.Statements[C.Statement].Where, Room);
      // A link to itself: focusable with Tab, named by its text (the
      // readout), and Enter makes it the :target that stays highlighted.
      M.open("a", {{"id", StId},
                   {"href", "#" + StId},
                   {"data-line", num(C.Line)}});
      // The hit area, the readout (first text) and the line label (second
      // text, when there is room): geometry but x is in the stylesheet
      // (".st rect", ".st text", --cw on the svg), as the column repeats.
      M.empty("rect", {{"x", num(x(C.Statement))}});
      M.leaf("text", {}, Where + Code + Suffix);
      if (C.Statement % LabelEvery == 0)
        M.leaf("text", {{"x", num(x(C.Statement) + ColumnWidth / 2)}},
               num(C.Line));
      M.close("a");
    }
    M.close("g");
  }

  Markup &M;
  const FunctionTrace &T;
  const Timeline &TL;
  std::string Id;
  SourceTexts &Sources;
  Scale S;
  double ColumnWidth = 40;
  double Width = 0;
};

/// The chart's text alternative: a sentence (who is live at the peak, the
/// scale), then the key: one entry per band and transient, with its bytes
/// and lifetime. Views are the table's rows ("view of d").
void chartText(Markup &M, const FunctionTrace &T, const Timeline &TL,
               const std::string &Id) {
  std::string Caption;
  if (TL.PeakBytes) {
    std::string Live;
    for (const TimelineBand &B : TL.Bands)
      if (B.AtPeak)
        Live += (Live.empty() ? "" : ", ") + bandName(B) + " " +
                formatBytes(B.Bytes);
    Caption = "Live at the peak (line " + num(TL.Columns[TL.PeakColumn].Line) +
              "): " + (Live.empty() ? std::string("nothing") : Live);
    int64_t Transient = TL.Columns[TL.PeakColumn].TransientBytes;
    if (Transient > 0)
      Caption += ", and " + formatBytes(Transient) + " transient inside an op";
    Caption += ".";
  } else {
    Caption = "Peak unknown";
    if (!T.Summary.UnknownTotalsReason.empty())
      Caption += ": " + T.Summary.UnknownTotalsReason;
    Caption += ".";
  }
  if (TL.Bands.empty())
    Caption += " No storage is allocated here.";
  if (!TL.ToScale)
    Caption += " Not to scale: " + std::to_string(TL.UnknownSizeBands) +
               " storage" + (TL.UnknownSizeBands == 1 ? " has" : "s have") +
               " an unknown size, drawn crossed at the height of the largest "
               "known one (all alike when none is known); heights are "
               "relative, not bytes.";
  M.leaf("figcaption", {{"id", Id + "-cap"}}, Caption);

  M.open("ol", {{"class", "key"}, {"id", Id + "-key"}});
  for (size_t I = 0; I < TL.Bands.size(); ++I) {
    const TimelineBand &B = TL.Bands[I];
    std::string Swatch = "sw c" + num(static_cast<unsigned>(I % PaletteSize)) +
                         (B.Bytes ? (B.Copy ? " cp" : "") : " uk");
    M.open("li");
    M.leaf("i", {{"class", Swatch}}, "");
    M.text(bandName(B) + " " + formatBytes(B.Bytes) + ", " +
           (B.Copy ? "copy (" : "new (") + B.Op + "), " + lifetimeText(B, TL));
  }
  for (const TimelineColumn &C : TL.Columns)
    if (C.TransientBytes > 0) {
      M.open("li");
      M.leaf("i", {{"class", "sw tr"}}, "");
      M.text("transient " + formatBytes(C.TransientBytes) +
             ", allocated and freed inside line " + num(C.Line));
    }
  M.close("ol");
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
    ChartWriter(M, T, TL, Id, Sources).write();
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
