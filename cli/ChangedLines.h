// --changed-lines-only: keep the diagnostics on lines a change touched.
//
// The change is a unified diff: read from a file (or "-" for stdin), or
// produced by git: `git diff -U0 <revision>` (the revision against the
// working tree) or, for the value "staged", `git diff --cached -U0` (what a
// pre-commit hook is about to commit). Only the new side of each hunk
// matters: "@@ -a,b +c,d @@" adds lines c..c+d-1 of the new file; d == 0
// is a pure deletion and touches no new line. Files the diff deletes
// (+++ /dev/null) have no new lines.
//
// Paths in a diff are relative to the repository root (git's a/ b/
// prefixes are dropped); a diagnostic's file matches a diff path when the
// diff path is a whole-component suffix of the diagnostic's absolute path.
#pragma once

#include "checks/Diagnostic.h"

#include "llvm/ADT/StringRef.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tma {

class ChangedLines {
public:
  /// Parses unified diff text. Never fails: lines that are not diff syntax
  /// are skipped (git's headers, "\ No newline at end of file").
  static ChangedLines parseUnifiedDiff(llvm::StringRef Diff);

  /// From --changed-lines-only's value: an existing file (a diff), "-"
  /// (a diff on stdin), "staged", or a git revision. Sets Error on failure.
  static std::optional<ChangedLines> load(const std::string &Spec,
                                          std::string &Error);

  /// Whether any line in [Line, EndLine] of File was added or changed.
  bool touches(llvm::StringRef File, unsigned Line, unsigned EndLine = 0) const;

  /// The diagnostics on changed lines (by their primary location).
  std::vector<Diagnostic> filter(const std::vector<Diagnostic> &Diags) const;

  /// Diff path (no a/ b/ prefix) -> changed line ranges [first, last].
  const std::map<std::string, std::vector<std::pair<unsigned, unsigned>>> &
  files() const {
    return Files;
  }

private:
  std::map<std::string, std::vector<std::pair<unsigned, unsigned>>> Files;
};

} // namespace tma
