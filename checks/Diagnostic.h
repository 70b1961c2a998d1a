// A check's finding, as plain data: the CLI prints it (text, JSON, SARIF),
// the clang-tidy module turns it into clang diagnostics. Messages keep
// clang-tidy's form: a format with %0..%9 placeholders and its arguments,
// lowercase, no final period.
#pragma once

#include "model/Trace.h"

#include <optional>
#include <string>
#include <vector>

namespace tma {

struct FixIt {
  SourceSpan Where;       // replaced range (BeginOffset..EndOffset)
  std::string Replacement;
};

struct DiagnosticNote {
  SourceSpan Where;
  std::string Format;
  std::vector<std::string> Args;
};

struct Diagnostic {
  std::string Check;
  SourceSpan Where;
  std::string Format;
  std::vector<std::string> Args;
  /// The byte estimate the message is about (allocation, saving, peak).
  std::optional<int64_t> Bytes;
  /// When that estimate is a formula: its number under the user's values
  /// (`--assume`), when they bind all of it.
  std::optional<int64_t> BytesAssumed;
  std::vector<DiagnosticNote> Notes;
  std::vector<FixIt> Fixes;

  Diagnostic &arg(const std::string &A) {
    Args.push_back(A);
    return *this;
  }
};

/// Substitutes %0..%9 in Format with Args.
std::string renderMessage(const std::string &Format,
                          const std::vector<std::string> &Args);

} // namespace tma
