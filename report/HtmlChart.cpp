// Each function's chart in the HTML report: an SVG timeline, bottom to top
// in paint order, and its text alternative.
//
// 1. Axis and grid, bands (one path per storage, a hatch <use> for copies),
//    views (dashed, inside their base), transients, the peak marker.
// 2. On top, one transparent, focusable column per statement, so hovering
//    anywhere in a column shows that statement's line, text and live bytes
//    in the readout row at the top.
// 3. The text key says in words what the colours and patterns show.
#include "report/HtmlParts.h"
#include "model/Units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tma {
namespace html {
namespace {

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

} // namespace

void writeChart(Markup &M, const FunctionTrace &T, const Timeline &TL,
                const std::string &Id, SourceTexts &Sources) {
  ChartWriter(M, T, TL, Id, Sources).write();
}

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

} // namespace html
} // namespace tma
