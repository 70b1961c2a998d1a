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
  /// Where the configuration came from, for --explain-config style output.
  std::string Source = "default";
};

/// Parses a .clang-tidy document (Checks, CheckOptions as a list of
/// key/value pairs or as a map). Returns nullopt and sets Error on bad YAML.
std::optional<CheckConfig> parseClangTidyConfig(llvm::StringRef Text,
                                                std::string &Error);

/// The nearest .clang-tidy from File's directory upward, or the defaults.
/// Sets Error when a file exists but does not parse.
CheckConfig findConfigFor(const std::string &File, std::string &Error);

/// Runs every enabled check on every trace, drops findings silenced by
/// NOLINT, NOLINTNEXTLINE or NOLINTBEGIN/END in the file's text, and sorts
/// them by position.
std::vector<Diagnostic> runChecks(const std::vector<FunctionTrace> &Traces,
                                  const CheckConfig &Config,
                                  const std::string &FileText);

/// Whether a NOLINT comment in Text silences Check at Line (1-based).
bool isSuppressed(const std::string &Text, unsigned Line,
                  const std::string &Check);

/// clang-style text: "file:line:col: warning: message [check]", the source
/// line with a caret, then notes.
void printDiagnostics(llvm::raw_ostream &OS, const std::vector<Diagnostic> &Diags,
                      const std::string &FileText);

/// Applies the fix-its to Text; overlapping fixes after the first are
/// skipped. Returns the new text and sets Applied to the count used.
std::string applyFixes(const std::string &Text,
                       const std::vector<Diagnostic> &Diags, unsigned &Applied);

} // namespace tma
