// Running the torch-* checks from the CLI the way clang-tidy would: which
// checks and options come from the nearest .clang-tidy (and --checks /
// --config on the command line), NOLINT comments silence findings, and
// fix-its can be applied to the files.
#pragma once

#include "checks/Diagnostic.h"
#include "checks/TorchCheck.h"
#include "model/Trace.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tma {

struct CheckConfig {
  /// clang-tidy check globs; "torch-*" when nothing configures them.
  std::string Checks = "torch-*";
  /// Full option keys: "torch-memory-budget.MaxPeakBytes" -> "1073741824".
  std::map<std::string, std::string> Options;
  /// HeaderFilterRegex: which headers' findings are shown (--header-filter
  /// overrides it); empty: none but the analysed file's.
  std::string HeaderFilterRegex;
  /// Where the configuration came from, for --explain-config style output.
  std::string Source = "default";
};

/// Parses a .clang-tidy document (Checks, CheckOptions as a list of
/// key/value pairs or as a map). Returns nullopt and sets Error on bad YAML.
std::optional<CheckConfig> parseClangTidyConfig(llvm::StringRef Text,
                                                std::string &Error);

/// The first option value of an enabled check that the check cannot take
/// ("torch-memory-budget.MaxPeakBytes: 'lots' is not a non-negative
/// integer", after where the configuration came from); empty when all are
/// fine. clang-tidy warns about such values; the CLI refuses them rather
/// than run with the default in their place.
std::string validateCheckOptions(const CheckConfig &Config);

/// The nearest .clang-tidy from File's directory upward, or the defaults.
/// Sets Error when a file exists but does not parse.
CheckConfig findConfigFor(const std::string &File, std::string &Error);

/// Runs every enabled check on every trace, drops findings silenced by
/// NOLINT, NOLINTNEXTLINE or NOLINTBEGIN/END in the file's text, and sorts
/// them by position.
std::vector<Diagnostic> runChecks(const std::vector<FunctionTrace> &Traces,
                                  const CheckConfig &Config,
                                  const std::string &FileText);

/// The lines of a text, indexed once: line N's text without rescanning
/// from the start (what makes per-finding lookups cheap).
class LineIndex {
public:
  explicit LineIndex(llvm::StringRef Text);
  /// Line (1-based) without its newline; empty past the end.
  llvm::StringRef line(unsigned Line) const;
  /// Number of lines ("" has one, "a\n" has two: the last one empty).
  unsigned size() const { return static_cast<unsigned>(Starts.size()); }
  /// Byte offset where Line (1-based) starts; the text's size past the end.
  size_t start(unsigned Line) const;
  /// The 1-based line holding byte Offset.
  unsigned lineOf(size_t Offset) const;

private:
  llvm::StringRef Text;
  std::vector<size_t> Starts;
};

/// The NOLINT comments of one file, found in one pass over it. Asking
/// whether a finding is silenced is then a lookup, not a rescan of the file
/// from line 1 (issue 10, item 9: with a rescan per finding, check time
/// grew with the cube of the file's size). Semantics, as clang-tidy's:
/// NOLINT on the finding's line, NOLINTNEXTLINE on the line above, or a
/// NOLINTBEGIN above it not yet closed by a NOLINTEND; a bare marker applies
/// to every check, NOLINT(glob,...) to the checks its globs name.
/// Not thread-safe (it remembers each check's NOLINTBEGIN regions).
class NolintIndex {
public:
  explicit NolintIndex(llvm::StringRef Text);
  bool suppresses(unsigned Line, const std::string &Check) const;

private:
  enum class Kind { SameLine, NextLine, Begin, End };
  struct Marker {
    Kind K;
    bool AllChecks;
    std::vector<std::string> Globs;
    bool appliesTo(const std::string &Check) const;
  };
  bool lineHas(unsigned Line, Kind K, const std::string &Check) const;
  /// For Check: each line with a BEGIN or END marker for it, and how many
  /// regions are open after that line.
  const std::vector<std::pair<unsigned, int>> &
  regionsOf(const std::string &Check) const;

  /// Line -> its markers, for the lines that have any.
  std::map<unsigned, std::vector<Marker>> Markers;
  std::vector<unsigned> RegionLines; // lines with BEGIN or END, ascending
  mutable std::map<std::string, std::vector<std::pair<unsigned, int>>> Regions;
};

/// Whether a NOLINT comment in Text silences Check at Line (1-based). Builds
/// an index of the whole text: for more than one question, keep a
/// NolintIndex.
bool isSuppressed(const std::string &Text, unsigned Line,
                  const std::string &Check);

/// clang-style text: "file:line:col: warning: message [check]", the source
/// line with a caret, then notes. Checks matching ErrorChecks (the
/// --warnings-as-errors globs) print as clang-tidy prints them:
/// "error: message [check,-warnings-as-errors]".
void printDiagnostics(llvm::raw_ostream &OS, const std::vector<Diagnostic> &Diags,
                      const std::string &FileText,
                      const std::string &ErrorChecks = "");

/// Applies the fix-its to Text; overlapping fixes after the first are
/// skipped. Returns the new text and sets Applied to the count used; with
/// Accepted, also which diagnostics' fix-its went in (--export-fixes
/// exports those, so that clang-apply-replacements makes the same edits).
std::string applyFixes(const std::string &Text,
                       const std::vector<Diagnostic> &Diags, unsigned &Applied,
                       std::vector<bool> *Accepted = nullptr);

} // namespace tma
