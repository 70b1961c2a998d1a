// The HTML report (--format=html, --html-out): one self-contained page with
// a live-storage timeline per function, the seed's table beside it and the
// checks' warnings linked to their lines.
//
// Design:
//  - Self-contained: inline CSS and inline SVG, no script, no font, no
//    image, no link that loads anything; a Content-Security-Policy of
//    default-src 'none' makes the browser refuse any request the page
//    might still make. It opens from a CI artifact or a file:// URL.
//  - The picture is report/Timeline.h (bands of storages over the
//    statements); this file only draws it. Every number printed comes from
//    the trace through the same helpers as the table and the JSON report
//    (rowFacts, tableCells, statementTraffic, formatBytes).
//  - Accessible without colour: bands carry patterns (hatched: a copy;
//    crossed: size unknown) and labels, each chart has a text key listing
//    every band with its lifetime, and every statement is a focusable
//    element (Tab moves along the lines) whose source line and live bytes
//    show on hover and on focus.
//  - Machine-readable for tests: the chart's elements carry data-
//    attributes (data-line, data-bytes, data-first-line, data-last-line,
//    data-peak-line), so a browser test reads the DOM, not pixels.
//  - Small: the whole of testdata/ (300 functions) stays under 1 MB
//    (bench/html-report.sh measures it); optional closing tags are left
//    out of tables and SVG paths use integer coordinates.
//  - Escaping: every string that comes from source text, file names or
//    messages goes through one escape function (text and attributes), which
//    also replaces invalid UTF-8 and control characters.
#pragma once

#include "checks/Diagnostic.h"
#include "report/Formats.h"
#include "model/Trace.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tma {

/// Text safe inside HTML text and "-quoted attribute values: & < > "
/// escaped, invalid UTF-8 as U+FFFD, control characters as spaces.
std::string htmlEscape(llvm::StringRef S);

/// Writes the whole page.
void printHtml(llvm::raw_ostream &OS, const std::vector<FunctionTrace> &Traces,
               const std::vector<Diagnostic> &Diags,
               const FormatOptions &Options);

/// The generator tag in the page's head that says this tool wrote it.
extern const char *const HtmlGeneratorMarker;

/// The exact first bytes of every page printHtml writes, the generator tag
/// among them. --html-out replaces an existing file only when it begins
/// with these: a user's notes that quote the tag somewhere are theirs.
extern const char *const HtmlReportPrefix;

/// Whether --html-out may write Path: it does not exist, or it is a
/// regular file (not a symbolic link, a directory, a pipe) that begins
/// with HtmlReportPrefix. False with the reason in Error otherwise.
bool htmlTargetReplaceable(llvm::StringRef Path, std::string &Error);

/// Writes Html to Path (through a temporary file and a rename) when
/// htmlTargetReplaceable allows it; otherwise false with the reason in
/// Error.
bool writeHtmlFile(llvm::StringRef Path, llvm::StringRef Html,
                   std::string &Error);

} // namespace tma
