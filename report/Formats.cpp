// SARIF, GitHub workflow commands and the markdown summary (Formats.h).
//
// Positions: the analysis reports 1-based lines and byte columns, end
// columns one past the last byte, and byte offsets for fix-its. SARIF counts
// columns and charOffset in "characters" of the run's columnKind; we declare
// unicodeCodePoints and convert from bytes with the file's text, so a line
// with a non-ASCII comment still points at the right token. A file that can
// no longer be read is taken as ASCII (bytes == code points).
#include "report/Formats.h"
#include "checks/Registry.h"
#include "driver/CheckRunner.h"
#include "driver/SourceFiles.h"
#include "report/Timeline.h"
#include "driver/Version.h"
#include "model/ShapeEnv.h"
#include "model/Units.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <memory>

#ifndef TMA_DOCS_DIR
#define TMA_DOCS_DIR ""
#endif
#ifndef TMA_DOCS_BASE_URI
#define TMA_DOCS_BASE_URI ""
#endif

namespace tma {

namespace json = llvm::json;

std::string severityOf(const std::string &Check, const FormatOptions &Options) {
  return !Options.ErrorChecks.empty() && checkEnabled(Options.ErrorChecks, Check)
             ? "error"
             : "warning";
}

namespace {

/// RFC 3986 path encoding: unreserved characters and '/' stay.
std::string encodePath(llvm::StringRef Path) {
  std::string Out;
  for (unsigned char C : Path) {
    if (llvm::isAlnum(C) || llvm::StringRef("-._~/").contains(C))
      Out += static_cast<char>(C);
    else
      Out += "%" + llvm::utohexstr(C, /*LowerCase=*/false, /*Width=*/2);
  }
  return Out;
}

std::string helpBase(const FormatOptions &Options) {
  if (!Options.HelpBaseURI.empty())
    return Options.HelpBaseURI;
  // The configured base (by default the release tag's pages in the
  // project's repository, driver/CMakeLists.txt): a link code scanning can
  // open, which a file:// URI on the analysing machine is not.
  if (llvm::StringRef(TMA_DOCS_BASE_URI).size())
    return TMA_DOCS_BASE_URI;
  // Configured without a repository: an installed tool links to its
  // installed pages, not to the source tree it was built from (which the
  // user's machine does not have).
  std::string Dir = installedDocsDir();
  if (Dir.empty())
    Dir = TMA_DOCS_DIR;
  if (Dir.empty())
    return "";
  return fileURI(Dir + "/checks") + "/";
}

/// Byte columns and offsets to code points, per file. Each file is read
/// and indexed once: every lookup is then within one line, never a scan
/// from the file's start (thousands of findings in one file stay linear).
class TextIndex {
public:
  /// 1-based column in code points for a 1-based byte column on Line.
  unsigned column(const std::string &File, unsigned Line, unsigned ByteCol) {
    const Indexed *T = text(File);
    if (!T || Line == 0 || ByteCol == 0 || Line > T->Lines.size())
      return ByteCol;
    size_t Pos = T->Lines.start(Line);
    return static_cast<unsigned>(codePoints(T->Text, Pos, Pos + ByteCol - 1)) +
           1;
  }
  /// Offset in code points for a byte offset.
  size_t offset(const std::string &File, size_t ByteOffset) {
    const Indexed *T = text(File);
    if (!T)
      return ByteOffset;
    unsigned Line = T->Lines.lineOf(ByteOffset);
    return T->CodePointsBefore[Line - 1] +
           codePoints(T->Text, T->Lines.start(Line), ByteOffset);
  }

private:
  struct Indexed {
    explicit Indexed(std::string Contents)
        : Text(std::move(Contents)), Lines(Text) {
      size_t Before = 0;
      for (unsigned L = 1; L <= Lines.size(); ++L) {
        CodePointsBefore.push_back(Before);
        Before += codePoints(Text, Lines.start(L),
                             L < Lines.size() ? Lines.start(L + 1) : Text.size());
      }
    }
    std::string Text;
    LineIndex Lines;
    /// Code points before each line's start.
    std::vector<size_t> CodePointsBefore;
  };
  static size_t codePoints(const std::string &T, size_t Begin, size_t End) {
    size_t N = 0;
    End = std::min(End, T.size());
    for (size_t I = Begin; I < End; ++I)
      N += (static_cast<unsigned char>(T[I]) & 0xC0) != 0x80;
    return N;
  }
  const Indexed *text(const std::string &File) {
    auto It = Texts.find(File);
    if (It == Texts.end()) {
      std::unique_ptr<Indexed> T;
      if (auto Read = readSourceFile(File))
        T = std::make_unique<Indexed>(std::move(Read->Bytes));
      It = Texts.emplace(File, std::move(T)).first;
    }
    return It->second.get();
  }
  std::map<std::string, std::unique_ptr<Indexed>> Texts;
};

json::Object artifactLocation(const std::string &File) {
  if (llvm::sys::path::is_absolute(File))
    return json::Object{{"uri", fileURI(File)}};
  return json::Object{
      {"uri", encodePath(llvm::sys::path::convert_to_slash(File))},
      {"uriBaseId", "SRCROOT"}};
}

json::Object physicalLocation(const SourceSpan &S, TextIndex &Index) {
  json::Object Region{{"startLine", S.Line},
                      {"startColumn", Index.column(S.File, S.Line, S.Column)}};
  if (S.EndLine >= S.Line && S.EndLine != 0 && S.EndColumn != 0) {
    Region["endLine"] = S.EndLine;
    Region["endColumn"] = Index.column(S.File, S.EndLine, S.EndColumn);
  }
  return json::Object{{"artifactLocation", artifactLocation(S.File)},
                      {"region", std::move(Region)}};
}

bool hasOffsets(const SourceSpan &S) {
  return S.BeginOffset != ~size_t(0) && S.EndOffset != ~size_t(0) &&
         S.BeginOffset <= S.EndOffset && !S.InMacro;
}

} // namespace

std::string fileURI(llvm::StringRef AbsolutePath) {
  std::string P = llvm::sys::path::convert_to_slash(AbsolutePath);
  return "file://" + encodePath(P);
}

json::Value toSarif(const std::vector<Diagnostic> &Diagnostics,
                    const FormatOptions &Options,
                    const std::vector<FileFailure> &Failures) {
  std::string Base = helpBase(Options);
  json::Array Rules;
  std::map<std::string, unsigned> RuleIndex;
  for (const CheckInfo &Info : checkRegistry()) {
    RuleIndex[Info.Name] = static_cast<unsigned>(Rules.size());
    std::string Doc = "docs/checks/" + Info.Name + ".md";
    json::Object Rule{
        {"id", Info.Name},
        {"name", Info.Name},
        {"shortDescription", json::Object{{"text", Info.Summary}}},
        {"fullDescription", json::Object{{"text", Info.Summary}}},
        {"help",
         json::Object{
             {"text", Info.Summary + ". Documentation: " + Doc +
                          ". Silence one finding with // NOLINT(" + Info.Name +
                          ")."},
             {"markdown", Info.Summary + ".\n\nDocumentation: [" + Doc + "](" +
                              (Base.empty() ? Doc : Base + Info.Name + ".md") +
                              "). Silence one finding with `// NOLINT(" +
                              Info.Name + ")`."}}},
        {"defaultConfiguration",
         json::Object{{"level", severityOf(Info.Name, Options)}}},
        {"properties", json::Object{{"tags", json::Array{"memory", "libtorch"}}}},
    };
    if (!Base.empty())
      Rule["helpUri"] = Base + Info.Name + ".md";
    Rules.push_back(std::move(Rule));
  }

  TextIndex Index;
  json::Array Results;
  for (const Diagnostic &D : Diagnostics) {
    json::Object R{
        {"ruleId", D.Check},
        {"level", severityOf(D.Check, Options)},
        {"message", json::Object{{"text", renderMessage(D.Format, D.Args)}}},
        {"locations",
         json::Array{json::Object{
             {"physicalLocation", physicalLocation(D.Where, Index)}}}},
    };
    auto It = RuleIndex.find(D.Check);
    if (It != RuleIndex.end())
      R["ruleIndex"] = It->second;
    if (!D.Notes.empty()) {
      json::Array Related;
      int Id = 1;
      for (const DiagnosticNote &N : D.Notes)
        Related.push_back(json::Object{
            {"id", Id++},
            {"physicalLocation", physicalLocation(N.Where, Index)},
            {"message", json::Object{{"text", renderMessage(N.Format, N.Args)}}}});
      R["relatedLocations"] = std::move(Related);
    }
    json::Object Props;
    if (D.Bytes) {
      Props["bytes"] = *D.Bytes;
      Props["bytesText"] = formatBytes(*D.Bytes);
    }
    if (!Props.empty())
      R["properties"] = std::move(Props);
    // A diagnostic's fix-its form one fix (they go in together); one with
    // an edit we cannot express by offsets is left out.
    if (!D.Fixes.empty() &&
        std::all_of(D.Fixes.begin(), D.Fixes.end(),
                    [](const FixIt &F) { return hasOffsets(F.Where); })) {
      json::Array Replacements;
      for (const FixIt &F : D.Fixes) {
        std::string File = F.Where.File.empty() ? D.Where.File : F.Where.File;
        size_t Begin = Index.offset(File, F.Where.BeginOffset);
        size_t End = Index.offset(File, F.Where.EndOffset);
        Replacements.push_back(json::Object{
            {"deletedRegion",
             json::Object{{"charOffset", static_cast<int64_t>(Begin)},
                          {"charLength", static_cast<int64_t>(End - Begin)}}},
            {"insertedContent", json::Object{{"text", F.Replacement}}}});
      }
      R["fixes"] = json::Array{json::Object{
          {"description",
           json::Object{{"text", "apply the fix-it of " + D.Check}}},
          {"artifactChanges",
           json::Array{json::Object{
               {"artifactLocation", artifactLocation(D.Where.File)},
               {"replacements", std::move(Replacements)}}}}}};
    }
    Results.push_back(std::move(R));
  }

  json::Array Notifications;
  bool AnyFailed = false;
  for (const FileFailure &F : Failures) {
    AnyFailed |= !F.Skipped;
    Notifications.push_back(json::Object{
        {"level", F.Skipped ? "warning" : "error"},
        {"message",
         json::Object{{"text", (F.Skipped ? "tensor-accountant did not analyse "
                                          : "tensor-accountant could not analyse ") +
                                   F.File + ": " + F.Reason}}},
        {"locations",
         json::Array{json::Object{
             {"physicalLocation",
              json::Object{{"artifactLocation", artifactLocation(F.File)}}}}}},
        {"descriptor",
         json::Object{{"id", F.Skipped ? "file-skipped" : "file-not-analysed"}}}});
  }
  json::Object Invocation{{"executionSuccessful", !AnyFailed}};
  if (!Notifications.empty())
    Invocation["toolExecutionNotifications"] = std::move(Notifications);
  json::Array Invocations{std::move(Invocation)};

  llvm::SmallString<256> Cwd;
  llvm::sys::fs::current_path(Cwd);
  std::string Root = fileURI(Cwd);
  if (!llvm::StringRef(Root).endswith("/"))
    Root += "/";
  return json::Object{
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs",
       json::Array{json::Object{
           {"tool", json::Object{{"driver",
                                  json::Object{{"name", "tensor-accountant"},
                                               {"version", toolVersion()},
                                               {"semanticVersion",
                                                toolSemanticVersion()},
                                               {"rules", std::move(Rules)}}}}},
           {"originalUriBaseIds",
            json::Object{{"SRCROOT", json::Object{{"uri", Root}}}}},
           {"invocations", std::move(Invocations)},
           {"columnKind", "unicodeCodePoints"},
           {"results", std::move(Results)}}}}};
}

std::string escapeWorkflowData(llvm::StringRef S) {
  std::string Out;
  for (char C : S) {
    switch (C) {
    case '%': Out += "%25"; break;
    case '\r': Out += "%0D"; break;
    case '\n': Out += "%0A"; break;
    default: Out += C;
    }
  }
  return Out;
}

std::string escapeWorkflowProperty(llvm::StringRef S) {
  std::string Out;
  for (char C : escapeWorkflowData(S)) {
    switch (C) {
    case ':': Out += "%3A"; break;
    case ',': Out += "%2C"; break;
    default: Out += C;
    }
  }
  return Out;
}

void printGithub(llvm::raw_ostream &OS, const std::vector<Diagnostic> &Diags,
                 const FormatOptions &Options,
                 const std::vector<FileFailure> &Failures) {
  for (const FileFailure &F : Failures)
    OS << (F.Skipped ? "::warning file=" : "::error file=")
       << escapeWorkflowProperty(F.File) << ",title=tensor-accountant::"
       << escapeWorkflowData(F.Skipped
                                 ? "did not analyse this file: " + F.Reason
                                 : "could not analyse this file: " + F.Reason +
                                       "; its findings are missing")
       << "\n";
  for (const Diagnostic &D : Diags) {
    std::string Message = renderMessage(D.Format, D.Args);
    for (const DiagnosticNote &N : D.Notes)
      Message += "\nnote: " + N.Where.File + ":" + std::to_string(N.Where.Line) +
                 ":" + std::to_string(N.Where.Column) + ": " +
                 renderMessage(N.Format, N.Args);
    OS << "::" << severityOf(D.Check, Options)
       << " file=" << escapeWorkflowProperty(D.Where.File)
       << ",line=" << D.Where.Line << ",col=" << D.Where.Column;
    if (D.Where.EndLine >= D.Where.Line && D.Where.EndColumn != 0)
      OS << ",endLine=" << D.Where.EndLine << ",endColumn=" << D.Where.EndColumn;
    OS << ",title=" << escapeWorkflowProperty(D.Check)
       << "::" << escapeWorkflowData(Message) << "\n";
  }
}

std::string markdownLinkTarget(llvm::StringRef URL) {
  std::string Out;
  for (unsigned char C : URL) {
    if (C <= ' ' || C == '(' || C == ')' || C == '<' || C == '>' || C == 0x7F)
      Out += "%" + llvm::utohexstr(C, /*LowerCase=*/false, /*Width=*/2);
    else
      Out += static_cast<char>(C);
  }
  return Out;
}

std::string markdownCell(llvm::StringRef S) {
  std::string Out;
  for (char C : S) {
    if (C == '|')
      Out += "\\|";
    else if (C == '\n' || C == '\r')
      Out += ' ';
    else
      Out += C;
  }
  return Out;
}

void printMarkdown(llvm::raw_ostream &OS,
                   const std::vector<FunctionTrace> &Traces,
                   const std::vector<Diagnostic> &Diags,
                   const FormatOptions &Options,
                   const std::vector<FileFailure> &Failures) {
  unsigned Errors = 0;
  std::map<std::string, std::pair<unsigned, int64_t>> PerCheck;
  for (const Diagnostic &D : Diags) {
    Errors += severityOf(D.Check, Options) == "error";
    auto &Entry = PerCheck[D.Check];
    ++Entry.first;
    if (D.Bytes)
      Entry.second += *D.Bytes;
  }
  OS << "### tensor-accountant\n\n";
  if (!Options.HtmlURL.empty())
    OS << "Memory timeline of every function: [HTML report]("
       << markdownLinkTarget(Options.HtmlURL) << ")\n\n";
  for (bool Skipped : {false, true}) {
    std::vector<const FileFailure *> These;
    for (const FileFailure &F : Failures)
      if (F.Skipped == Skipped)
        These.push_back(&F);
    if (These.empty())
      continue;
    OS << "**" << These.size() << " file" << (These.size() == 1 ? "" : "s")
       << (Skipped ? " skipped**" : " could not be analysed**") << "; "
       << (These.size() == 1 ? "its" : "their") << " findings are missing:\n\n";
    for (const FileFailure *F : These)
      OS << "- `" << markdownCell(F->File) << "`: " << markdownCell(F->Reason)
         << "\n";
    OS << "\n";
  }
  if (Diags.empty()) {
    OS << "No findings in " << Traces.size() << " function"
       << (Traces.size() == 1 ? "" : "s") << ".\n";
  } else {
    OS << Diags.size() << " finding" << (Diags.size() == 1 ? "" : "s") << " ("
       << Errors << " error" << (Errors == 1 ? "" : "s") << ", "
       << Diags.size() - Errors << " warning"
       << (Diags.size() - Errors == 1 ? "" : "s") << ") in " << Traces.size()
       << " function" << (Traces.size() == 1 ? "" : "s") << ".\n\n";

    std::vector<const Diagnostic *> Worst;
    for (const Diagnostic &D : Diags)
      if (D.Bytes && *D.Bytes > 0)
        Worst.push_back(&D);
    std::stable_sort(Worst.begin(), Worst.end(),
                     [](const Diagnostic *A, const Diagnostic *B) {
                       return *A->Bytes > *B->Bytes;
                     });
    if (!Worst.empty()) {
      OS << "#### Worst copies\n\n| bytes | where | check | finding |\n"
         << "|---:|---|---|---|\n";
      for (size_t I = 0; I < Worst.size() && I < Options.MarkdownRows; ++I) {
        const Diagnostic &D = *Worst[I];
        OS << "| " << formatBytes(*D.Bytes) << " | `" << markdownCell(D.Where.File)
           << ":" << D.Where.Line << "` | `" << D.Check << "` | "
           << markdownCell(renderMessage(D.Format, D.Args)) << " |\n";
      }
      if (Worst.size() > Options.MarkdownRows)
        OS << "\n" << Worst.size() - Options.MarkdownRows
           << " more with a byte estimate not shown.\n";
      OS << "\n";
    }
    OS << "#### Findings per check\n\n| check | findings | bytes |\n"
       << "|---|---:|---:|\n";
    for (const auto &[Check, Entry] : PerCheck)
      OS << "| `" << Check << "` | " << Entry.first << " | "
         << (Entry.second ? formatBytes(Entry.second) : std::string("-"))
         << " |\n";
  }
  // Peak storage per function, folded away: context for the reviewer.
  std::vector<const FunctionTrace *> WithPeak;
  for (const FunctionTrace &T : Traces)
    if (knownBytes(T.Summary.PeakLiveBytes).value_or(0) > 0)
      WithPeak.push_back(&T);
  if (!WithPeak.empty()) {
    std::stable_sort(WithPeak.begin(), WithPeak.end(),
                     [](const FunctionTrace *A, const FunctionTrace *B) {
                       return *knownBytes(A->Summary.PeakLiveBytes) >
                              *knownBytes(B->Summary.PeakLiveBytes);
                     });
    // The sparkline: live bytes per statement (the HTML report's columns),
    // scaled to the function's own peak.
    OS << "\n<details><summary>Peak live tensor storage per function</summary>"
          "\n\n| function | where | peak | live bytes by statement |\n"
          "|---|---|---:|---|\n";
    for (const FunctionTrace *T : WithPeak) {
      std::string Spark = sparkline(memoryTimeline(*T));
      OS << "| `" << markdownCell(T->Name) << "` | `" << markdownCell(T->File)
         << ":" << T->Where.Line << "` | "
         << formatBytes(*T->Summary.PeakLiveBytes) << " | "
         << (Spark.empty() ? std::string("-") : "`" + Spark + "`") << " |\n";
    }
    OS << "\n</details>\n";
  }
  // The modules' parameters (the summary under each table, docs/modules.md):
  // what the reviewer's model holds before any activation.
  std::vector<std::pair<const FunctionTrace *, const ModuleSummary *>> Modules;
  for (const FunctionTrace &T : Traces)
    for (const ModuleSummary &M : T.Modules)
      if (M.Parent.empty())
        Modules.push_back({&T, &M});
  if (!Modules.empty()) {
    // Training code adds two columns: the gradients after backward() and
    // each optimizer's state after step().
    bool Training = false;
    for (const auto &[T, M] : Modules)
      Training |= M->HasGradients || !M->Optimizers.empty();
    OS << "\n<details><summary>Module parameters</summary>\n\n"
          "| function | module | layer | parameters | bytes |"
       << (Training ? " gradient bytes | optimizer state |" : "")
       << "\n|---|---|---|---:|---:|" << (Training ? "---:|---|" : "")
       << "\n";
    for (const auto &[T, M] : Modules) {
      const ShapeEnv *Env = T->Env.get();
      auto Text = [&](const std::optional<SymSize> &V, bool Bytes) {
        if (!V || V->isError())
          return std::string("?");
        if (V->isSymbolic())
          return Bytes && Env ? Env->formatBytes(*V)
                 : Env        ? Env->toTable(*V)
                              : V->toTable();
        return Bytes ? formatBytes(*V->constant()) : V->toTable();
      };
      OS << "| `" << markdownCell(T->Name) << "` | `" << markdownCell(M->Name)
         << "` | " << markdownCell(M->Layer) << " | "
         << markdownCell(Text(M->ParameterElements, false)) << " | "
         << markdownCell(Text(M->ParameterBytes, true)) << " |";
      if (Training) {
        std::string State;
        for (const ModuleSummary::Optimizer &O : M->Optimizers)
          State += (State.empty() ? "" : ", ") + O.Type + " `" + O.Name +
                   "`: " + Text(O.StateBytes, true);
        OS << " "
           << (M->HasGradients ? markdownCell(Text(M->GradientBytes, true))
                               : std::string())
           << " | " << markdownCell(State) << " |";
      }
      OS << "\n";
    }
    OS << "\n</details>\n";
  }
}

} // namespace tma
