// Output formats for the accountant's answers: the seed's table and the
// JSON report (../shared/design/report-schema.md, version 1).
//
// Both read FunctionTraces only. A row's facts (kind, base, what it keeps
// alive, the bytes it pins) are the model's (model/RowFacts.h), decided
// once for every output and check; this file only words them.
#pragma once

#include "checks/Diagnostic.h"
#include "driver/FileFailure.h"
#include "model/RowFacts.h"
#include "model/Trace.h"
#include "model/Units.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tma {

/// The table's cells for a row (one tensor entry of the JSON report): name,
/// shape, dtype, storage bytes, view or copy, keeps alive (the language
/// server's hover and the HTML report show the same).
std::vector<std::string> tableCells(const RowFacts &R,
                                    const ShapeEnv *Env = nullptr);
/// The assumptions under which a function's answers hold (C++ over its
/// parameters), in the order they were made.
std::vector<std::string> assumptionsOf(const FunctionTrace &T);
/// Whether a function's report needs version 2: a symbolic size or an
/// assumption.
bool isSymbolic(const FunctionTrace &T);

/// The "keeps alive" cell: the storage the name holds, named by its first
/// owner; a view that shows less than its storage says how much it pins
/// ("all of d: 256 MiB for 128 MiB of view").
std::string keepsAliveText(const RowFacts &R, const ShapeEnv *Env = nullptr);

/// One entry per statement that moves bytes (runs an op other than a
/// view): the outermost op's name and the sums over its ops.
struct StatementTraffic {
  unsigned Line = 0;
  std::string Op;
  std::optional<SymSize> Allocated = SymSize(0), Read = SymSize(0),
                         Written = SymSize(0);
  /// Allocated and freed inside the statement's ops (a CPU dtype
  /// conversion, matmul's folding copy): part of what LibTorch allocates.
  std::optional<SymSize> Transient = SymSize(0);
};
std::vector<StatementTraffic> statementTraffic(const FunctionTrace &T);

/// Bytes read plus written over the function's statements; nullopt when a
/// statement's traffic is unknown.
std::optional<SymSize> bytesMoved(const FunctionTrace &T);

/// "CUDA caching allocator: peak allocated 1 MiB, peak reserved 22 MiB"
/// ('?' for an unknown figure; the reason is the summary's).
std::string cudaAllocatorText(const CudaAllocatorSummary &S);

/// Leaves out a trace that answers exactly as an earlier one of the same
/// name and line: a body a macro pastes more than once, as
/// AT_DISPATCH_FLOATING_TYPES pastes its lambda once per dtype, would
/// otherwise be listed (and checked) once per copy. Copies that answer
/// differently (a size over sizeof(scalar_t)) all stay.
void dropRepeatedExpansions(std::vector<FunctionTrace> &Traces);

/// An unrolled loop's peaks: "the loop at line 38 (60 iterations): peak
/// 3.3 KiB in the first iteration, 2.9 KiB in each later one".
std::string loopPeakText(const UnrolledLoopSummary &L, const ShapeEnv *Env);

/// The bytes of summary.PeakSavedForBackward and what made each storage:
/// "64 KiB (sigmoid's result, line 14)".
std::string savedForBackwardText(const FunctionTrace &T);

/// The peak by what its storage is (summary.PeakParts), the parts that are
/// not 0 with their labels ("parameters", "gradients", ...), for a
/// function that holds parameters, gradients, optimizer state or saved
/// tensors; empty for any other, or when the breakdown is not known.
std::vector<std::pair<std::string, SymSize>> peakBreakdown(const FunctionTrace &T);
/// Whether the function's report carries the breakdown (JSON's
/// summary.peak_breakdown): the peak is known and the function holds a
/// parameter, a gradient, optimizer state or a saved tensor.
bool reportsPeakBreakdown(const FunctionTrace &T);

void printTable(llvm::raw_ostream &OS, const std::vector<FunctionTrace> &Traces);
/// The JSON report; "failed_files" lists Failures (empty: every file was
/// analysed).
llvm::json::Value toJSON(const std::vector<FunctionTrace> &Traces,
                         const std::vector<Diagnostic> &Diagnostics,
                         const std::vector<FileFailure> &Failures = {});

} // namespace tma
