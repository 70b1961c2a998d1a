// What the HTML report's files share (HtmlReport.cpp draws the page,
// HtmlChart.cpp each function's SVG timeline): escaped markup, numbers as
// attribute text, statement text by offsets, the palette, element ids.
// Not part of report/'s interface.
//
// 1. Nothing is written unescaped but tag and attribute names (Markup).
// 2. A statement's column and its table rows share one element id.
#pragma once

#include "driver/SourceFiles.h"
#include "report/HtmlReport.h"
#include "report/Timeline.h"
#include "model/Trace.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tma {
namespace html {

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

inline std::string num(double V) { return std::to_string(static_cast<long>(std::lround(V))); }
inline std::string num(int64_t V) { return std::to_string(V); }
inline std::string num(unsigned V) { return std::to_string(V); }

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

// ColorBrewer's Set3: light, so dark labels read on every band.
inline const char *const Palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                               "#80b1d3", "#fdb462", "#b3de69", "#fccde5"};
inline constexpr unsigned PaletteSize = sizeof(Palette) / sizeof(Palette[0]);

/// The element id of a statement's column: fN-sK.
inline std::string statementId(const std::string &FunctionId, unsigned Statement) {
  return FunctionId + "-s" + num(Statement);
}

/// The SVG timeline of one function (its bands, views, transients, peak and
/// one focusable column per statement).
void writeChart(Markup &M, const FunctionTrace &T, const Timeline &TL,
                const std::string &Id, SourceTexts &Sources);
/// The chart's text alternative: a sentence, then one key entry per band
/// and transient.
void chartText(Markup &M, const FunctionTrace &T, const Timeline &TL,
               const std::string &Id);

} // namespace html
} // namespace tma
