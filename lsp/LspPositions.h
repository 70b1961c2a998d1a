// Internal to lsp/: positions and documents as LSP names them. LSP counts
// lines and UTF-16 code units from 0; the analysis counts lines from 1 and
// bytes, so every position crosses here.
#pragma once

#include "model/Trace.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tma::lsp {

/// The byte offset of each line's start; computed once per text, not per
/// position.
std::vector<size_t> lineStarts(llvm::StringRef Text);

/// The LSP position ({line, character}) of a byte offset.
llvm::json::Object lspPosition(llvm::StringRef Text,
                               const std::vector<size_t> &Starts, size_t Offset);

/// Byte offset of an LSP position (clamped to its line).
size_t offsetOfLsp(llvm::StringRef Text, const std::vector<size_t> &Starts,
                   int64_t Line, int64_t Character);

/// The LSP range of a source span (1-based lines, byte columns).
llvm::json::Object lspRange(llvm::StringRef Text,
                            const std::vector<size_t> &Starts,
                            const SourceSpan &S);

/// The local path of a file:// URI; none for another scheme or host.
std::optional<std::string> uriToPath(llvm::StringRef URI);

} // namespace tma::lsp
