// Output formats for the accountant's answers: the seed's table and the
// JSON report (../shared/design/report-schema.md, version 1).
//
// Both read FunctionTraces only. Rows are derived here from the trace
// (kind, base, keeps-alive), so the table and the JSON cannot disagree.
#pragma once

#include "checks/Diagnostic.h"
#include "model/Trace.h"
#include "model/Units.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tma {

/// A file the run could not analyse, and why. Every format reports them,
/// so that "no findings" never stands for a file nobody looked at (issue
/// 10, item 21: a failed file vanished from JSON and SARIF).
struct FileFailure {
  std::string File;   // as the user (or the compilation database) named it
  std::string Reason; // e.g. "it did not compile (the compiler's errors are on stderr)"
};

/// One row of the table / one tensor entry of the JSON report.
struct TensorRow {
  const Binding *B = nullptr;
  const TensorValue *Value = nullptr;
  std::string Kind;     // "alloc" | "copy" | "view" | "" (unknown)
  std::string Op;       // producing op
  std::string Base;     // earliest named tensor sharing the storage
  std::optional<int64_t> StorageBytes;
  std::string KeepsAlive;
  std::string Note;
};
std::vector<TensorRow> tensorRows(const FunctionTrace &T);

/// The table's cells for a row: name, shape, dtype, storage bytes, view or
/// copy, keeps alive (the language server's hover shows the same).
std::vector<std::string> tableCells(const TensorRow &R);

/// One entry per statement that moves bytes (runs an op other than a
/// view): the outermost op's name and the sums over its ops.
struct StatementTraffic {
  unsigned Line = 0;
  std::string Op;
  std::optional<int64_t> Allocated = 0, Read = 0, Written = 0;
  /// Allocated and freed inside the statement's ops (a CPU dtype
  /// conversion, matmul's folding copy): part of what LibTorch allocates.
  std::optional<int64_t> Transient = 0;
};
std::vector<StatementTraffic> statementTraffic(const FunctionTrace &T);

/// Bytes read plus written over the function's statements; nullopt when a
/// statement's traffic is unknown.
std::optional<int64_t> bytesMoved(const FunctionTrace &T);

void printTable(llvm::raw_ostream &OS, const std::vector<FunctionTrace> &Traces);
/// The JSON report; "failed_files" lists Failures (empty: every file was
/// analysed).
llvm::json::Value toJSON(const std::vector<FunctionTrace> &Traces,
                         const std::vector<Diagnostic> &Diagnostics,
                         const std::vector<FileFailure> &Failures = {});

} // namespace tma
