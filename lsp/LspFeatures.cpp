// What the language server answers from a document's last analysis:
// findings as LSP diagnostics, hover (the table's row of the name under the
// cursor) and code actions (the checks' fix-its).
#include "lsp/LspPositions.h"
#include "lsp/Server.h"
#include "report/Formats.h"
#include "report/Report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>

namespace tma::lsp {

json::Object Server::lspDiagnostic(const Diagnostic &D, llvm::StringRef Text,
                           const std::vector<size_t> &Starts) {
  FormatOptions Severity;
  Severity.ErrorChecks = Options.ErrorChecks;
  bool Error = severityOf(D.Check, Severity) == "error";
  json::Object O{{"range", lspRange(Text, Starts, D.Where)},
                 {"severity", Error ? 1 : 2},
                 {"code", D.Check},
                 {"source", "tensor-accountant"},
                 {"message", renderMessage(D.Format, D.Args)}};
  if (!D.Notes.empty()) {
    json::Array Related;
    for (const DiagnosticNote &N : D.Notes) {
      // Notes in the same document are positioned with its text; others
      // (none today: traces are per file) get their line only.
      bool Same = N.Where.File.empty() || N.Where.File == D.Where.File;
      json::Object Range =
          Same ? lspRange(Text, Starts, N.Where)
               : json::Object{
                     {"start", json::Object{{"line", N.Where.Line - 1},
                                            {"character", 0}}},
                     {"end", json::Object{{"line", N.Where.Line - 1},
                                          {"character", 0}}}};
      std::string File = N.Where.File.empty() ? D.Where.File : N.Where.File;
      Related.push_back(json::Object{
          {"location", json::Object{{"uri", fileURI(absolute(File))},
                                    {"range", std::move(Range)}}},
          {"message", renderMessage(N.Format, N.Args)}});
    }
    O["relatedInformation"] = std::move(Related);
  }
  if (D.Bytes)
    O["data"] = json::Object{{"bytes", *D.Bytes}};
  return O;
}

std::string Server::absolute(const std::string &File) {
  llvm::SmallString<256> P(File);
  llvm::sys::fs::make_absolute(P);
  return std::string(P);
}

json::Value Server::hover(const json::Object &Params) {
  std::string URI = documentURI(Params);
  const json::Object &Pos = member(Params, "position");
  int64_t Line = integer(Pos, "line"), Character = integer(Pos, "character");
  auto It = Documents.find(URI);
  if (It == Documents.end() || !It->second.Last)
    return nullptr;
  const Document &D = It->second;
  llvm::StringRef Text = D.Text;
  std::vector<size_t> Starts = lineStarts(Text);
  size_t Offset = offsetOfLsp(Text, Starts, Line, Character);
  auto IsIdent = [](char C) { return llvm::isAlnum(C) || C == '_'; };
  size_t B = Offset, E = Offset;
  while (B > 0 && IsIdent(Text[B - 1]))
    --B;
  while (E < Text.size() && IsIdent(Text[E]))
    ++E;
  if (B == E)
    return nullptr;
  std::string Name = Text.slice(B, E).str();
  unsigned Line1 = static_cast<unsigned>(Line) + 1;
  // The binding of Name in the function around the cursor that is in
  // effect there: the last one at or above the cursor's line.
  const FunctionTrace *Fn = nullptr;
  for (const FunctionTrace &T : D.Last->Traces)
    if (T.Where.Line <= Line1 && Line1 <= std::max(T.Where.EndLine, T.Where.Line))
      Fn = &T;
  if (!Fn)
    return nullptr;
  std::vector<RowFacts> Rows = rowFacts(*Fn);
  const RowFacts *Best = nullptr;
  for (const RowFacts &R : Rows) {
    if (R.B->Name != Name)
      continue;
    if (R.B->Where.Line <= Line1 || !Best)
      Best = &R;
  }
  if (!Best)
    return nullptr;
  std::vector<std::string> Cells = tableCells(*Best, Fn->Env.get());
  auto Cell = [](const std::string &S) { return markdownCell(S); };
  std::string MD = "**" + Cell(Cells[0]) + "** in `" + Fn->Name +
                   "` (line " + std::to_string(Best->B->Where.Line) + ")\n\n" +
                   "| name | shape | dtype | storage bytes | view or copy | "
                   "keeps alive |\n|---|---|---|---|---|---|\n|";
  for (const std::string &C : Cells)
    MD += " " + Cell(C) + " |";
  MD += "\n";
  if (!Best->Note.empty())
    MD += "\n" + Best->Note + "\n";
  if (D.Text != D.Last->Text)
    MD += "\n_(from the analysis of an earlier version; the current one "
          "is analysed once the edits pause)_\n";
  return json::Object{
      {"contents", json::Object{{"kind", "markdown"}, {"value", MD}}},
      {"range", json::Object{{"start", lspPosition(Text, Starts, B)},
                             {"end", lspPosition(Text, Starts, E)}}}};
}

json::Value Server::codeActions(const json::Object &Params) {
  std::string URI = documentURI(Params);
  const json::Object &Range = member(Params, "range");
  int64_t First = integer(member(Range, "start"), "line");
  int64_t Last = integer(member(Range, "end"), "line");
  json::Array Actions;
  auto It = Documents.find(URI);
  // Fix-its are byte offsets into the analysed text: stale after an edit.
  if (It == Documents.end() || !It->second.Last ||
      It->second.Last->Text != It->second.Text)
    return Actions;
  const AnalysisResult &A = *It->second.Last;
  llvm::StringRef Text = A.Text;
  std::vector<size_t> Starts = lineStarts(Text);
  for (const Diagnostic &D : A.Diagnostics) {
    if (D.Fixes.empty())
      continue;
    int64_t L0 = static_cast<int64_t>(D.Where.Line) - 1;
    int64_t L1 = static_cast<int64_t>(std::max(D.Where.EndLine, D.Where.Line)) - 1;
    if (L1 < First || L0 > Last)
      continue;
    json::Array Edits;
    bool Ok = true;
    for (const FixIt &F : D.Fixes) {
      if (F.Where.BeginOffset == ~size_t(0) || F.Where.EndOffset == ~size_t(0) ||
          F.Where.BeginOffset > F.Where.EndOffset ||
          F.Where.EndOffset > Text.size() || F.Where.InMacro) {
        Ok = false;
        break;
      }
      Edits.push_back(json::Object{
          {"range",
           json::Object{{"start", lspPosition(Text, Starts, F.Where.BeginOffset)},
                        {"end", lspPosition(Text, Starts, F.Where.EndOffset)}}},
          {"newText", F.Replacement}});
    }
    if (!Ok)
      continue;
    json::Object Changes;
    Changes[URI] = std::move(Edits);
    std::string Title = "Apply fix-it: " + renderMessage(D.Format, D.Args);
    Actions.push_back(json::Object{
        {"title", Title + " [" + D.Check + "]"},
        {"kind", "quickfix"},
        {"isPreferred", true},
        {"diagnostics", json::Array{lspDiagnostic(D, Text, Starts)}},
        {"edit", json::Object{{"changes", std::move(Changes)}}}});
  }
  return Actions;
}

} // namespace tma::lsp
