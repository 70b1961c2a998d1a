#include "lsp/LspPositions.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace tma::lsp {

namespace json = llvm::json;

namespace {

unsigned utf16Units(llvm::StringRef Bytes) {
  unsigned N = 0;
  for (unsigned char C : Bytes) {
    if ((C & 0xC0) == 0x80)
      continue; // continuation byte
    N += C >= 0xF0 ? 2 : 1;
  }
  return N;
}

/// Byte offset of a 1-based line and byte column.
size_t offsetOf(llvm::StringRef Text, const std::vector<size_t> &Starts,
                unsigned Line, unsigned Column) {
  if (Line == 0 || Line > Starts.size())
    return Text.size();
  return std::min(Text.size(), Starts[Line - 1] + (Column ? Column - 1 : 0));
}

} // namespace

std::vector<size_t> lineStarts(llvm::StringRef Text) {
  std::vector<size_t> Starts = {0};
  for (size_t I = 0; I < Text.size(); ++I)
    if (Text[I] == '\n')
      Starts.push_back(I + 1);
  return Starts;
}

json::Object lspPosition(llvm::StringRef Text, const std::vector<size_t> &Starts,
                         size_t Offset) {
  Offset = std::min(Offset, Text.size());
  size_t Line = std::upper_bound(Starts.begin(), Starts.end(), Offset) -
                Starts.begin() - 1;
  return json::Object{
      {"line", static_cast<int64_t>(Line)},
      {"character", utf16Units(Text.slice(Starts[Line], Offset))}};
}

size_t offsetOfLsp(llvm::StringRef Text, const std::vector<size_t> &Starts,
                   int64_t Line, int64_t Character) {
  if (Line < 0)
    return 0;
  if (static_cast<size_t>(Line) >= Starts.size())
    return Text.size();
  size_t I = Starts[Line];
  int64_t Units = 0;
  while (I < Text.size() && Text[I] != '\n' && Units < Character) {
    unsigned char C = Text[I];
    size_t Len = C < 0x80 ? 1 : C < 0xE0 ? 2 : C < 0xF0 ? 3 : 4;
    Units += Len == 4 ? 2 : 1;
    I = std::min(Text.size(), I + Len);
  }
  return I;
}

json::Object lspRange(llvm::StringRef Text, const std::vector<size_t> &Starts,
                      const SourceSpan &S) {
  size_t Begin = offsetOf(Text, Starts, S.Line, S.Column);
  size_t End = Begin;
  if (S.EndLine > S.Line || (S.EndLine == S.Line && S.EndColumn > S.Column))
    End = offsetOf(Text, Starts, S.EndLine, S.EndColumn);
  return json::Object{{"start", lspPosition(Text, Starts, Begin)},
                      {"end", lspPosition(Text, Starts, End)}};
}

std::optional<std::string> uriToPath(llvm::StringRef URI) {
  if (!URI.consume_front("file://"))
    return std::nullopt;
  URI.consume_front("localhost");
  // file://host/path is not a local file; file:///path is.
  if (!URI.startswith("/"))
    return std::nullopt;
  std::string Path;
  for (size_t I = 0; I < URI.size(); ++I) {
    if (URI[I] == '%' && I + 2 < URI.size() && llvm::isHexDigit(URI[I + 1]) &&
        llvm::isHexDigit(URI[I + 2])) {
      Path += static_cast<char>(llvm::hexFromNibbles(URI[I + 1], URI[I + 2]));
      I += 2;
    } else {
      Path += URI[I];
    }
  }
  return Path;
}

} // namespace tma::lsp
