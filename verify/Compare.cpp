// Comparing the tool's report with what LibTorch measured.
//
// The rules, in the order they are applied:
//  1. Functions are matched by name and by "draw" (the inputs a function
//     with parameters ran with; absent for one called without arguments);
//     when several measured functions share a name (two files both define
//     block1) the one from the same file wins.
//  2. Tensors are matched by (name, line), and within that key by order of
//     occurrence, so `hidden` bound twice on different lines and a binding
//     probed once per loop iteration both pair up sensibly (a single
//     prediction is compared with the first observation).
//  3. A null field in the prediction is the tool saying "unknown": the
//     verdict is Unverified, never Match. "base" is the exception: null is a
//     real answer ("the storage is new here") whenever the prediction knows
//     the tensor's kind.
//  4. A predicted binding that LibTorch never reached is Unverified when the
//     function threw (the throw explains it), when it sits in a branch or a
//     loop ("conditional": a branch not taken is no wrong number) or when no
//     probe could be put after it ("probed": false, e.g. inside a macro),
//     and a Mismatch otherwise.
//  5. Throwing: predicted "throws" and LibTorch threw is a Match whatever the
//     two messages say. A throw the tool did not predict is a Mismatch only
//     when the run was a plain run on the requested device; after a meta ->
//     CPU fallback, a timeout or a crash it says nothing about the code
//     (aten-rules.md section 8: CPU lacks some half-precision kernels).
//     A function the harness stopped at its memory limit ("stopped") neither
//     threw nor returned: every verdict about it is Unverified.
//  6. Totals, on a plain CPU run that returned (mode "cpu"): the predicted
//     peak_live_bytes and allocated bytes (summary.allocated_bytes, or the
//     sum of the ops' allocated_bytes and transient_bytes) against the
//     counting allocator's.
//     LibTorch wraps a C++ scalar operand (`x * 2`) in a 0-dim tensor, 8
//     bytes, sometimes plus a 4-byte cast copy, which the model does not
//     count; so a measurement matches when predicted <= measured <=
//     predicted + ScalarSlack x (allocations LibTorch made). Less than
//     predicted is always a mismatch. tests/hostile/check_corpus.py uses the
//     same rule.
//  7. The CUDA caching allocator, on a plain CUDA run that returned (mode
//     "cuda"), for a function whose report has summary.cuda_allocator:
//     its peak_allocated_bytes and peak_reserved_bytes against
//     getDeviceStats' allocated_bytes and reserved_bytes peaks over the
//     call, exactly (a scalar operand's wrapper is a CPU tensor, so no
//     slack). The reserved peak is unverified when the run started with
//     segments held (its inputs'): the function may carve blocks from them,
//     where the prediction starts from an empty cache.
#include "verify/Harness.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <climits>
#include <map>
#include <optional>
#include <set>

namespace tma::verify {

namespace json = llvm::json;

const char *outcomeName(Verdict::Outcome O) {
  switch (O) {
  case Verdict::Match:
    return "match";
  case Verdict::Mismatch:
    return "mismatch";
  case Verdict::Unverified:
    return "unverified";
  }
  return "unverified";
}

json::Value toJSON(const Verdict &V) {
  json::Object O{{"file", V.File}, {"function", V.Function}, {"name", V.Name},
                 {"line", static_cast<int64_t>(V.Line)},
                 {"field", V.Field},       {"predicted", V.Predicted},
                 {"measured", V.Measured}, {"result", outcomeName(V.Result)},
                 {"note", V.Note}};
  if (V.Draw >= 0)
    O["draw"] = V.Draw;
  return O;
}

namespace {

/// Bytes per measured allocation a prediction may fall short by (rule 6).
constexpr int64_t ScalarSlack = 16;

const char *const TensorFields[] = {"shape",          "strides", "dtype",
                                    "storage_bytes",  "storage_offset",
                                    "base",           "contiguous"};

std::string render(const json::Value *V) {
  if (!V)
    return "absent";
  if (auto S = V->getAsString())
    return S->str();
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  OS << *V;
  return OS.str();
}

/// JSON equality that does not care whether a number was parsed as an
/// integer or a double.
bool sameValue(const json::Value &A, const json::Value &B) {
  if (A.kind() == json::Value::Number && B.kind() == json::Value::Number) {
    auto IA = A.getAsInteger(), IB = B.getAsInteger();
    if (IA && IB)
      return *IA == *IB;
    return A.getAsNumber() == B.getAsNumber();
  }
  if (A.kind() == json::Value::Array && B.kind() == json::Value::Array) {
    const json::Array &XA = *A.getAsArray(), &XB = *B.getAsArray();
    if (XA.size() != XB.size())
      return false;
    for (size_t I = 0; I < XA.size(); ++I)
      if (!sameValue(XA[I], XB[I]))
        return false;
    return true;
  }
  return A == B;
}

std::string str(const json::Object &O, llvm::StringRef Key) {
  if (auto S = O.getString(Key))
    return S->str();
  return "";
}

unsigned line(const json::Object &O) {
  if (auto L = O.getInteger("line"))
    return static_cast<unsigned>(*L);
  return 0;
}

const json::Value *field(const json::Object &O, llvm::StringRef Key) {
  const json::Value *V = O.get(Key);
  // The truth files written before the harness call it "offset".
  if (!V && Key == "storage_offset")
    V = O.get("offset");
  return V;
}

bool isNull(const json::Value *V) {
  return !V || V->kind() == json::Value::Null;
}

using Key = std::pair<std::string, unsigned>; // (name, line)

/// Which draw of inputs a function ran (or is predicted) with; -1: none.
int64_t drawOf(const json::Object &O) {
  return O.getInteger("draw").value_or(-1);
}

/// The measured function for a predicted one, preferring the same file.
const json::Object *findMeasured(const json::Array *Measured,
                                 const std::string &Function,
                                 const std::string &File, int64_t Draw,
                                 std::vector<bool> &Used) {
  if (!Measured)
    return nullptr;
  std::optional<size_t> Best;
  for (size_t I = 0; I < Measured->size(); ++I) {
    const json::Object *M = (*Measured)[I].getAsObject();
    if (!M || Used[I] || str(*M, "function") != Function || drawOf(*M) != Draw)
      continue;
    std::string MFile = str(*M, "file");
    bool SameFile = MFile == File || llvm::sys::path::filename(MFile) ==
                                         llvm::sys::path::filename(File);
    if (SameFile) {
      Best = I;
      break;
    }
    if (!Best)
      Best = I;
  }
  if (!Best)
    return nullptr;
  Used[*Best] = true;
  return (*Measured)[*Best].getAsObject();
}

/// Errors that come from the measuring run, not from the user's code.
bool environmentalFailure(const json::Object &M, llvm::StringRef Error) {
  if (M.get("fallback_reason"))
    return true;
  for (llvm::StringRef Prefix : {"timed out", "crashed", "not run", "the process ", "stopped"})
    if (Error.startswith(Prefix))
      return true;
  return Error.contains_insensitive("out of memory") ||
         Error.contains_insensitive("not enough memory") ||
         Error.contains_insensitive("can't allocate memory");
}

/// Unprobed: names of predicted bindings no probe could follow (an if
/// initializer, a macro). The harness names a base by the earliest probed
/// tensor on the storage, so it cannot name one of those.
void compareTensor(const json::Object &P, const json::Object &M,
                   const std::string &File, const std::string &Function,
                   const std::string &Note, const std::set<std::string> &Unprobed,
                   std::vector<Verdict> &Out) {
  std::string Name = str(P, "name");
  unsigned Line = line(P);
  std::string Reason = str(P, "unknown_reason");
  std::string ProbeError = str(M, "probe_error");
  bool KindKnown = !isNull(P.get("kind"));
  // An undefined tensor (`torch::Tensor out;`) has no field to compare:
  // what the tool claims is that it is not defined, and the probe says
  // "defined": false exactly then.
  if (str(P, "kind") == "undefined") {
    Verdict V;
    V.File = File;
    V.Function = Function;
    V.Name = Name;
    V.Line = Line;
    V.Field = "defined";
    V.Predicted = "false";
    V.Note = Note;
    bool MeasuredUndefined = M.getBoolean("defined") == false;
    V.Measured = MeasuredUndefined ? "false" : "true";
    if (!ProbeError.empty()) {
      V.Result = Verdict::Unverified;
      V.Measured.clear();
      V.Note = "the probe failed: " + ProbeError;
    } else {
      V.Result = MeasuredUndefined ? Verdict::Match : Verdict::Mismatch;
    }
    Out.push_back(std::move(V));
    return;
  }
  for (llvm::StringRef F : TensorFields) {
    Verdict V;
    V.File = File;
    V.Function = Function;
    V.Name = Name;
    V.Line = Line;
    V.Field = F.str();
    const json::Value *PV = field(P, F);
    const json::Value *MV = field(M, F);
    V.Predicted = render(PV);
    V.Measured = render(MV);
    V.Note = Note;
    bool PredictedUnknown = isNull(PV);
    if (F == "base" && PV && KindKnown)
      PredictedUnknown = false; // null base = new storage, a real answer
    bool MeasuredMissing = F == "base" ? !MV : isNull(MV);
    if (PredictedUnknown) {
      V.Result = Verdict::Unverified;
      V.Note = Reason.empty() ? "the tool reported this field as unknown"
                              : "unknown to the tool: " + Reason;
    } else if (F == "base" && PV->getAsString() &&
               Unprobed.count(PV->getAsString()->str())) {
      V.Result = Verdict::Unverified;
      V.Note = "the base's binding has no probe, so LibTorch's side cannot "
               "name it";
    } else if (!ProbeError.empty() || MeasuredMissing) {
      V.Result = Verdict::Unverified;
      V.Note = ProbeError.empty() ? "LibTorch did not report this field"
                                  : "the probe failed: " + ProbeError;
    } else {
      V.Result = sameValue(*PV, *MV) ? Verdict::Match : Verdict::Mismatch;
    }
    Out.push_back(std::move(V));
  }
}

std::optional<int64_t> integer(const json::Object *O, llvm::StringRef Key) {
  if (!O)
    return std::nullopt;
  if (const json::Value *V = O->get(Key))
    return V->getAsInteger();
  return std::nullopt;
}

/// The bytes the report says the function allocates: summary.allocated_bytes
/// when present (--verify adds it), else the sum over its ops; nullopt when
/// unknown.
std::optional<int64_t> predictedAllocated(const json::Object &PF) {
  if (const json::Object *Summary = PF.getObject("summary"))
    if (const json::Value *Total = Summary->get("allocated_bytes"))
      return Total->getAsInteger();
  int64_t Sum = 0;
  if (const json::Array *Ops = PF.getArray("ops"))
    for (const json::Value &V : *Ops) {
      const json::Object *Op = V.getAsObject();
      if (!Op)
        return std::nullopt;
      std::optional<int64_t> A = integer(Op, "allocated_bytes");
      if (!A)
        return std::nullopt;
      int64_t T = integer(Op, "transient_bytes").value_or(0);
      if (__builtin_add_overflow(Sum, *A, &Sum) || __builtin_add_overflow(Sum, T, &Sum))
        return std::nullopt;
    }
  return Sum;
}

/// Rule 6 for one total.
void compareTotal(const std::string &File, const std::string &Function, unsigned Line,
                  llvm::StringRef Field, std::optional<int64_t> Predicted,
                  const std::string &UnknownReason, int64_t Measured,
                  int64_t Allocations, std::vector<Verdict> &Out) {
  Verdict V;
  V.File = File;
  V.Function = Function;
  V.Line = Line;
  V.Field = Field.str();
  V.Measured = std::to_string(Measured);
  if (!Predicted) {
    V.Predicted = "null";
    V.Result = Verdict::Unverified;
    V.Note = UnknownReason.empty() ? "the tool reported this total as unknown"
                                   : "unknown to the tool: " + UnknownReason;
    Out.push_back(std::move(V));
    return;
  }
  V.Predicted = std::to_string(*Predicted);
  int64_t Slack = 0;
  if (__builtin_mul_overflow(ScalarSlack, Allocations < 0 ? 0 : Allocations, &Slack))
    Slack = INT64_MAX;
  int64_t Ceiling;
  if (__builtin_add_overflow(*Predicted, Slack, &Ceiling))
    Ceiling = INT64_MAX;
  if (Measured < *Predicted) {
    V.Result = Verdict::Mismatch;
    V.Note = "LibTorch allocated less than predicted";
  } else if (Measured > Ceiling) {
    V.Result = Verdict::Mismatch;
    V.Note = "more than the " + std::to_string(ScalarSlack) +
             " B per allocation allowed for scalar operands (" +
             std::to_string(Allocations) + " allocations)";
  } else {
    V.Result = Verdict::Match;
    if (Measured > *Predicted)
      V.Note = std::to_string(Measured - *Predicted) +
               " B over the prediction, within the " + std::to_string(ScalarSlack) +
               " B per allocation allowed for scalar operands";
  }
  Out.push_back(std::move(V));
}

/// Rule 7 for one figure.
void compareCudaFigure(const std::string &File, const std::string &Function,
                       unsigned Line, llvm::StringRef Field,
                       const json::Value *Predicted, const std::string &UnknownReason,
                       std::optional<int64_t> Measured, const std::string &Unverifiable,
                       std::vector<Verdict> &Out) {
  if (!Measured)
    return;
  Verdict V;
  V.File = File;
  V.Function = Function;
  V.Line = Line;
  V.Field = Field.str();
  V.Measured = std::to_string(*Measured);
  std::optional<int64_t> P = Predicted ? Predicted->getAsInteger() : std::nullopt;
  V.Predicted = P ? std::to_string(*P) : "null";
  if (!P) {
    V.Result = Verdict::Unverified;
    V.Note = UnknownReason.empty() ? "the tool reported this figure as unknown"
                                   : "unknown to the tool: " + UnknownReason;
  } else if (!Unverifiable.empty()) {
    V.Result = Verdict::Unverified;
    V.Note = Unverifiable;
  } else if (*P == *Measured) {
    V.Result = Verdict::Match;
  } else {
    V.Result = Verdict::Mismatch;
    V.Note = *Measured < *P ? "the caching allocator held less than predicted"
                            : "the caching allocator held more than predicted";
  }
  Out.push_back(std::move(V));
}

/// Rule 7.
void compareCudaAllocator(const json::Object &PF, const json::Object &MF,
                          std::vector<Verdict> &Out) {
  const json::Object *Summary = PF.getObject("summary");
  const json::Object *Cuda = Summary ? Summary->getObject("cuda_allocator") : nullptr;
  if (!Cuda)
    return;
  std::string File = str(PF, "file"), Function = str(PF, "function");
  std::string Reason = str(*Cuda, "unknown_reason");
  compareCudaFigure(File, Function, line(PF), "cuda_peak_allocated_bytes",
                    Cuda->get("peak_allocated_bytes"), Reason,
                    integer(&MF, "cuda_peak_allocated_bytes"), "", Out);
  int64_t HeldAtStart = integer(&MF, "cuda_reserved_at_start_bytes").value_or(0);
  std::string Unverifiable =
      HeldAtStart == 0
          ? ""
          : "the run started with " + std::to_string(HeldAtStart) +
                " B of segments held (its inputs'), which the function may carve "
                "blocks from; the prediction starts from an empty cache";
  compareCudaFigure(File, Function, line(PF), "cuda_peak_reserved_bytes",
                    Cuda->get("peak_reserved_bytes"), Reason,
                    integer(&MF, "cuda_peak_reserved_bytes"), Unverifiable, Out);
}

void compareFunction(const json::Object &PF, const json::Object *MF,
                     llvm::StringRef MeasuredMode, std::vector<Verdict> &Out) {
  std::string Function = str(PF, "function");
  std::string File = str(PF, "file");
  std::string Error = MF ? str(*MF, "error") : "";
  bool Threw = MF && !isNull(MF->get("error"));
  std::string Stopped = MF ? str(*MF, "stopped") : "";
  std::string Note;
  if (MF && MF->get("fallback_reason"))
    Note = "measured on " + str(*MF, "device") + ": " + str(*MF, "fallback_reason");

  std::map<Key, std::vector<const json::Object *>> Measured;
  if (MF)
    if (const json::Array *Ts = MF->getArray("tensors"))
      for (const json::Value &T : *Ts)
        if (const json::Object *O = T.getAsObject())
          Measured[{str(*O, "name"), line(*O)}].push_back(O);

  std::set<std::string> Unprobed;
  if (const json::Array *Ts = PF.getArray("tensors"))
    for (const json::Value &T : *Ts)
      if (const json::Object *P = T.getAsObject();
          P && P->getBoolean("probed") == false)
        Unprobed.insert(str(*P, "name"));

  std::map<Key, size_t> Seen; // predicted occurrences per key so far
  if (const json::Array *Ts = PF.getArray("tensors")) {
    for (const json::Value &T : *Ts) {
      const json::Object *P = T.getAsObject();
      if (!P)
        continue;
      Key K{str(*P, "name"), line(*P)};
      size_t Occurrence = Seen[K]++;
      auto It = Measured.find(K);
      size_t Observed = It == Measured.end() ? 0 : It->second.size();
      if (Occurrence < Observed) {
        std::string TNote = Note;
        if (Observed > 1 && Occurrence == 0)
          TNote += std::string(TNote.empty() ? "" : "; ") + "observed " +
                   std::to_string(Observed) + " times; compared with the first";
        compareTensor(*P, *It->second[Occurrence], File, Function, TNote,
                      Unprobed, Out);
        continue;
      }
      Verdict V;
      V.File = File;
      V.Function = Function;
      V.Name = K.first;
      V.Line = K.second;
      V.Field = "probe";
      V.Predicted = "bound";
      V.Measured = "not reached";
      if (!MF) {
        V.Result = Verdict::Unverified;
        V.Measured = "not run";
        V.Note = "the harness did not run this function";
      } else if (P->getBoolean("probed") == false) {
        V.Result = Verdict::Unverified;
        V.Measured = "not probed";
        std::string Why = str(*P, "no_probe_reason");
        V.Note = "no probe could be placed after this binding" +
                 (Why.empty() ? std::string() : ": " + Why);
      } else if (!Stopped.empty()) {
        V.Result = Verdict::Unverified;
        V.Note = "the harness stopped the function before this binding: " + Error;
      } else if (Threw) {
        V.Result = Verdict::Unverified;
        V.Note = "LibTorch threw before this binding: " + Error;
      } else if (P->getBoolean("conditional") == true) {
        V.Result = Verdict::Unverified;
        V.Note = "in a branch or loop that this run did not reach";
      } else {
        V.Result = Verdict::Mismatch;
        V.Note = "LibTorch returned without reaching this binding";
      }
      Out.push_back(std::move(V));
    }
  }

  // Observed bindings the report does not have at all.
  for (const auto &[K, List] : Measured) {
    if (Seen.count(K))
      continue;
    Verdict V;
    V.File = File;
    V.Function = Function;
    V.Name = K.first;
    V.Line = K.second;
    V.Field = "binding";
    V.Predicted = "absent";
    V.Measured = "observed";
    V.Result = Verdict::Mismatch;
    V.Note = "LibTorch observed a tensor the report does not list";
    Out.push_back(std::move(V));
  }

  const json::Value *Throws = PF.get("throws");
  bool PredictsThrow = !isNull(Throws) && Throws->getAsBoolean() != false;
  if (MF && !PredictsThrow && !Threw && MeasuredMode == "cpu" &&
      str(*MF, "device") == "cpu" && !MF->get("fallback_reason")) {
    std::optional<int64_t> Peak = integer(MF, "peak_live_bytes");
    std::optional<int64_t> Allocated = integer(MF, "allocated_bytes");
    int64_t Allocations = integer(MF, "allocations").value_or(0);
    const json::Object *Summary = PF.getObject("summary");
    std::optional<int64_t> PredictedPeak = integer(Summary, "peak_live_bytes");
    std::string Reason = Summary ? str(*Summary, "unknown_reason") : "";
    if (Peak)
      compareTotal(File, Function, line(PF), "peak_live_bytes", PredictedPeak, Reason,
                   *Peak, Allocations, Out);
    if (Allocated) {
      std::optional<int64_t> PredictedBytes =
          PredictedPeak ? predictedAllocated(PF) : std::nullopt;
      compareTotal(File, Function, line(PF), "allocated_bytes", PredictedBytes,
                   PredictedPeak ? "an op's allocation is unknown" : Reason, *Allocated,
                   Allocations, Out);
    }
  }
  if (MF && !PredictsThrow && !Threw && MeasuredMode == "cuda" &&
      str(*MF, "device") == "cuda" && !MF->get("fallback_reason"))
    compareCudaAllocator(PF, *MF, Out);
  if (!MF || (!PredictsThrow && !Threw))
    return;
  Verdict V;
  V.File = File;
  V.Function = Function;
  V.Line = line(PF);
  V.Field = "throws";
  V.Predicted = PredictsThrow ? render(Throws) : "returns";
  V.Measured = Threw ? Error : "returned";
  if (!Stopped.empty()) {
    V.Result = Verdict::Unverified;
    V.Note = "stopped by the harness's " + Stopped +
             " at run time: neither a return nor a throw; not verified";
  } else if (PredictsThrow) {
    V.Result = Threw ? Verdict::Match : Verdict::Mismatch;
  } else if (environmentalFailure(*MF, Error)) {
    V.Result = Verdict::Unverified;
    V.Note = "the measuring run failed for reasons outside the code" +
             (Note.empty() ? std::string() : ": " + Note);
  } else {
    V.Result = Verdict::Mismatch;
    // With made inputs the throw is a condition the report should have
    // stated (docs/symbolic.md: what LibTorch would otherwise throw on).
    V.Note = drawOf(PF) >= 0
                 ? "LibTorch threw with these inputs, which satisfy every fact and "
                   "assumption the report states: an assumption is missing"
                 : "LibTorch threw; the report did not predict it";
  }
  Out.push_back(std::move(V));
}

} // namespace

std::vector<Verdict> compare(const json::Value &Predicted, const json::Value &Measured) {
  std::vector<Verdict> Out;
  const json::Object *PO = Predicted.getAsObject();
  const json::Object *MO = Measured.getAsObject();
  std::string MeasuredMode = MO ? str(*MO, "mode") : "";
  const json::Array *PFs = PO ? PO->getArray("functions") : nullptr;
  const json::Array *MFs = MO ? MO->getArray("functions") : nullptr;
  if (!PFs)
    return Out;
  std::vector<bool> Used(MFs ? MFs->size() : 0, false);
  for (const json::Value &V : *PFs) {
    const json::Object *PF = V.getAsObject();
    if (!PF)
      continue;
    const json::Object *MF =
        findMeasured(MFs, str(*PF, "function"), str(*PF, "file"), drawOf(*PF), Used);
    size_t First = Out.size();
    compareFunction(*PF, MF, MeasuredMode, Out);
    for (size_t K = First; K < Out.size(); ++K)
      Out[K].Draw = static_cast<int>(drawOf(*PF));
  }
  return Out;
}

} // namespace tma::verify
