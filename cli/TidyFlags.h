// clang-tidy's command line, with clang-tidy's meaning: what a user who
// pastes a clang-tidy command line needs from tensor-accountant.
//
//   - every argument names a registered option (LLVM's parser would take an
//     unknown `--header-flter` as the grouped single-letter options -h ...
//     and print the help), with a suggestion only when one is close;
//   - check globs that enable nothing are an error, with the nearest
//     registered check name;
//   - --export-fixes writes the YAML clang-tidy writes (what
//     clang-apply-replacements reads);
//   - --dump-config prints the effective configuration as clang-tidy does.
#pragma once

#include "checks/Diagnostic.h"
#include "driver/CheckRunner.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tma {

/// The candidate nearest to Name by edit distance, when it is close enough
/// to be what was meant (a letter or two off, never most of the word);
/// empty otherwise.
std::string nearestName(llvm::StringRef Name,
                        llvm::ArrayRef<std::string> Candidates);

/// Checks a command line (argv without what follows `--`) against the
/// registered LLVM options before LLVM's parser sees it. Returns one line
/// for the first argument that names no option ("unknown option
/// '--quite'; did you mean '--quiet'?"), or empty. Accepted: -name and
/// --name, with =value or the value in the next argument for options that
/// require one, and a cl::Prefix option's value joined to it (-j2).
/// Suggestions come from Visible (the options --help lists), only when
/// close.
std::string unknownOptionError(llvm::ArrayRef<const char *> Args,
                               llvm::ArrayRef<std::string> Visible);

/// What is wrong with Config's check globs, or empty. Judged are the
/// positive globs that are plainly meant for this tool: those in the
/// torch- namespace, and any from --checks (CommandLineChecks). One of
/// those that matches no registered check is a misspelling; when no check
/// is enabled at all, the message says so first, as clang-tidy's "no checks
/// enabled" does. "-*" alone, or a shared .clang-tidy naming only other
/// tools' checks, enables none of ours and is no error (the table needs no
/// checks).
std::string checkSelectionProblem(const CheckConfig &Config,
                                  llvm::StringRef CommandLineChecks);

/// One file's findings for --export-fixes.
struct ExportedFile {
  /// Absolute path of the analysed file (the offsets are into it).
  std::string Path;
  /// The compile command's directory.
  std::string BuildDirectory;
  /// The analysed bytes: line and column become offsets into them.
  std::string Source;
  std::vector<Diagnostic> Diagnostics;
  /// Per diagnostic: whether its fix-its are exported (those --fix would
  /// apply: none inside a macro, none overlapping an earlier finding's).
  std::vector<bool> FixesExported;
  /// Per diagnostic: reported as an error (--warnings-as-errors).
  std::vector<bool> AsError;
};

/// clang-tidy's --export-fixes YAML (clang::tooling's serialisation:
/// MainSourceFile, Diagnostics with DiagnosticName, DiagnosticMessage
/// {Message, FilePath, FileOffset, Replacements}, Notes, Level,
/// BuildDirectory). MainSourceFile is the first file, as clang-tidy's.
void writeExportFixes(llvm::raw_ostream &OS,
                      const std::vector<ExportedFile> &Files);

/// --dump-config: the effective configuration as clang-tidy prints it
/// (Checks, WarningsAsErrors, HeaderFilterRegex, CheckOptions with every
/// enabled check's options at their effective values, plus the other keys
/// the configuration sets).
void dumpConfig(llvm::raw_ostream &OS, const CheckConfig &Config,
                llvm::StringRef WarningsAsErrors,
                llvm::StringRef HeaderFilterRegex);

} // namespace tma
