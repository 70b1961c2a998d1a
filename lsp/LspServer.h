// tensor-accountant --lsp: a language server over stdio.
//
// It speaks the Language Server Protocol (JSON-RPC 2.0 with Content-Length
// framing) and does one thing: publish the torch-* checks' diagnostics for
// C and C++ documents, so an editor shows them next to clangd's. Design:
//
// 1. Documents are kept in full (textDocumentSync Full; an incremental
//    change is applied too, should a client send one). Analysis runs on
//    didOpen and didSave at once, and after didChange once the edits
//    pause (ChangeDebounce, 500 ms after the last change), on the
//    document's text as the editor has it (an in-memory overlay over the
//    real file system, RunOptions::Overlays), so unsaved edits are what
//    gets analysed. Analyses run on one thread of their own, one at a
//    time, with the preamble cache kept warm between them; the reader
//    keeps answering meanwhile. publishDiagnostics carries the version
//    analysed, and a result is published only while the document still
//    has that text: one a newer edit overtook is dropped, so diagnostics
//    never go back to an older version. Nothing is compiled to code and
//    nothing the user wrote is ever run: the analysis only parses.
// 2. The compile command is the file's: from the flags after --, else
//    -p <build dir> (relative to the working directory, else to the
//    workspace root initialize names; one found nowhere is logged, not
//    fatal), else the compile database found above the file as the CLI
//    finds it (driver/DatabaseDiscovery.h), else C++17 plus the LibTorch
//    headers found on this machine. Databases give interpolated commands
//    for files they lack (headers). One that is not valid puts an error
//    on the document, never the default flags instead.
// 3. publishDiagnostics carries each finding with source
//    "tensor-accountant", code = the check's name, notes as
//    relatedInformation. A file that does not compile gets one diagnostic
//    saying so (the compiler's own errors go to the server's stderr, which
//    editors keep as the server log; clangd shows them in the buffer).
// 4. hover on a tensor's name shows its row of the table (shape, dtype,
//    storage bytes, view or copy, keeps alive) from the last analysis;
//    codeAction offers each fix-it as a quick fix (a WorkspaceEdit), only
//    while the document still has the text that was analysed.
// 5. Errors never end the server: unparsable JSON gets -32700 (so does
//    JSON nested too deeply to parse safely: driver/JSONInput.h), a request
//    that is not JSON-RPC -32600, an unknown method -32601, bad params
//    -32602, requests before initialize -32002; unknown notifications are
//    ignored, as the protocol asks. A header block the server cannot use
//    (no Content-Length, one that is no non-negative number or is over
//    256 MiB, a line that is no header) is logged (stderr and
//    window/logMessage) and skipped: the reader resumes at the next
//    "Content-Length:" in the stream, wherever it starts, so one bad block
//    costs that message only.
#pragma once

#include "driver/Analysis.h"
#include "driver/CheckRunner.h"

#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <istream>
#include <string>
#include <vector>

namespace tma {

struct LspOptions {
  /// -p: a build directory with compile_commands.json; empty for none
  /// (then each file's own database is found, as the CLI finds it).
  std::string BuildPath;
  /// Flags after `--`, used for every file when given.
  std::vector<std::string> CompilerFlags;
  bool HaveCompilerFlags = false;
  /// The checks' configuration for a file (.clang-tidy, --checks, --config).
  std::function<CheckConfig(const std::string &File, std::string &Error)>
      ConfigFor;
  /// --warnings-as-errors: matching checks publish as errors.
  std::string ErrorChecks;
  RunOptions Run;
};

/// Serves until `exit` or the end of In. Returns 0 after shutdown + exit,
/// 1 when the stream ends or exit comes without shutdown, 2 when the
/// server cannot start (Err says why: -p names a database that is not
/// valid).
int runLspServer(const LspOptions &Options, std::istream &In,
                 llvm::raw_ostream &Out, llvm::raw_ostream &Err);

/// Whether a path names a C, C++, CUDA or Objective-C++ source or header.
bool isCxxSourceName(llvm::StringRef Path);

} // namespace tma
