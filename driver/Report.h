// Output formats for the accountant's answers: the seed's table and the
// JSON report (../shared/design/report-schema.md, version 1).
//
// Both read FunctionTraces only. Rows are derived here from the trace
// (kind, base, keeps-alive), so the table and the JSON cannot disagree.
#pragma once

#include "model/Trace.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tma {

struct ReportDiagnostic {
  std::string Check;
  std::string File;
  unsigned Line = 0;
  unsigned Column = 0;
  std::string Severity; // "warning", "note", "error"
  std::string Message;
  std::optional<int64_t> Bytes;
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

/// "128 MiB", "64 KiB", "1.5 GiB (1610612736 B)", "52 B".
std::string formatBytes(int64_t Bytes);
std::string formatBytes(const std::optional<int64_t> &Bytes);

void printTable(llvm::raw_ostream &OS, const std::vector<FunctionTrace> &Traces);
llvm::json::Value toJSON(const std::vector<FunctionTrace> &Traces,
                         const std::vector<ReportDiagnostic> &Diagnostics);

} // namespace tma
