// Internal to lsp/: the LSP base protocol's framing, header blocks with a
// Content-Length and a JSON body, read off the input stream.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>

namespace tma::lsp {


/// Splits the input stream into message bodies. A header block is lines
/// "Name: value" up to an empty line; it needs exactly one usable
/// Content-Length. A block that is not one (no length, a length that is
/// no number, negative, or over the limit, a line that is no header, a
/// header line without its blank line) is reported and skipped, and the
/// reader resynchronises on the next "Content-Length:" in the stream,
/// wherever it starts: a body sent without a usable header ends where the
/// next message's header begins, on the same line, since bodies need not
/// end in a newline. Reading is by bytes, with bounded memory: nothing
/// skipped is kept.
class MessageReader {
public:
  explicit MessageReader(std::istream &In) : In(*In.rdbuf()) {}

  struct Result {
    enum Kind { Message, BadBlock, End } What;
    std::string Body;  // Message: the body
    std::string Error; // BadBlock: what was wrong; End: why, or empty
  };

  Result next();

private:
  static constexpr size_t MaxHeaderLine = 4096;
  static constexpr uint64_t MaxBody = uint64_t(256) << 20;

  /// RFC 7230's token characters: a JSON body run into a header line
  /// ('{"jsonrpc":...') is no header name.
  static bool isHeaderName(llvm::StringRef Name);

  /// Text for a log line: at most 60 bytes, control bytes escaped.
  static std::string shown(llvm::StringRef Text);

  Result bad(std::string Error);
  /// A bad block whose offending line may itself hold the next message's
  /// header after its first byte (a body without a blank line before it,
  /// or one run into the next header): resume there.
  Result badAt(llvm::StringRef Line, std::string Error);

  /// Appends bytes up to and without '\n' to Line (at most a little over
  /// MaxHeaderLine; the rest of a longer line is left for resynchronising).
  /// False when the stream ended before a '\n'.
  bool readLine(std::string &Line);

  /// Reads up to and through the next "Content-Length:" (any case).
  /// Skipped counts the bytes dropped. False at the end of the stream.
  bool skipToContentLength(uint64_t &Skipped);

  std::streambuf &In;
  bool Resynchronise = false;
  /// The start of a header line already read (after resynchronising, or
  /// found inside a bad line), which the next block begins with.
  std::optional<std::string> PendingHeader;
  /// PendingHeader is a whole line (its '\n' was consumed already).
  bool PendingComplete = false;
};

} // namespace tma::lsp
