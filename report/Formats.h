// Output formats for where users meet the checks outside a terminal:
//
//   SARIF 2.1.0   code scanning (GitHub, GitLab, VS Code's SARIF viewer)
//   github        workflow commands: annotations on a pull request's diff
//   markdown      a pull-request comment: the worst copies and counts per
//                 check, a live-bytes sparkline per function, a link to the
//                 HTML report (--html-url)
//
// All three read the same Diagnostics the text and JSON formats print, so a
// finding carries the same check, position, message and byte estimate
// everywhere. JSON goes through llvm::json only.
//
// Severity: a check's findings are warnings unless the check matches the
// --warnings-as-errors globs, in which case they are errors (clang-tidy's
// rule); SARIF's level and the workflow command follow that.
#pragma once

#include "checks/Diagnostic.h"
#include "report/Report.h"
#include "model/Trace.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tma {

struct FormatOptions {
  /// --warnings-as-errors globs: matching checks report as errors.
  std::string ErrorChecks;
  /// Where a rule's documentation lives: helpUri is Base + name + ".md".
  /// Empty: the configured TMA_DOCS_BASE_URI (the release tag's pages in
  /// the project's repository unless configured otherwise).
  std::string HelpBaseURI;
  /// Rows in the markdown table of the worst copies.
  unsigned MarkdownRows = 10;
  /// Where CI publishes the HTML report (--html-url); the markdown summary
  /// links to it when set.
  std::string HtmlURL;
};

/// "warning" or "error" for a check under Options.ErrorChecks.
std::string severityOf(const std::string &Check, const FormatOptions &Options);

/// file:///abs/path with RFC 3986 percent-encoding (SARIF, LSP).
std::string fileURI(llvm::StringRef AbsolutePath);

/// A URL as the target of a markdown link: spaces, parentheses, angle
/// brackets and control characters percent-encoded.
std::string markdownLinkTarget(llvm::StringRef URL);

/// Text for a markdown table cell: '|' escaped, newlines as spaces.
std::string markdownCell(llvm::StringRef S);

/// A SARIF 2.1.0 log with one run: every registered check as a rule (with
/// its summary and a help URI), every diagnostic as a result (physical
/// location with region, notes as related locations, "bytes" in the
/// properties, fix-its as SARIF fixes), and one invocation whose
/// executionSuccessful is false when a file could not be analysed, each
/// such file a toolExecutionNotification (code scanning shows them; without
/// them a failed file read as "no findings").
llvm::json::Value toSarif(const std::vector<Diagnostic> &Diagnostics,
                          const FormatOptions &Options,
                          const std::vector<FileFailure> &Failures = {});

/// Escapes for workflow commands: data escapes %, \r, \n; properties also
/// escape ':' and ','.
std::string escapeWorkflowData(llvm::StringRef S);
std::string escapeWorkflowProperty(llvm::StringRef S);

/// One `::warning file=...,line=...::message` line per diagnostic (notes
/// are appended to the message, since an annotation has one location);
/// an `::error file=...` line per file that could not be analysed.
void printGithub(llvm::raw_ostream &OS, const std::vector<Diagnostic> &Diags,
                 const FormatOptions &Options,
                 const std::vector<FileFailure> &Failures = {});

/// A markdown summary for a pull-request comment; files that could not be
/// analysed are listed first.
void printMarkdown(llvm::raw_ostream &OS,
                   const std::vector<FunctionTrace> &Traces,
                   const std::vector<Diagnostic> &Diags,
                   const FormatOptions &Options,
                   const std::vector<FileFailure> &Failures = {});

} // namespace tma
