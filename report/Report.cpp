#include "report/Report.h"
#include "driver/Assume.h"
#include "model/ShapeEnv.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace tma {

std::vector<std::string> assumptionsOf(const FunctionTrace &T) {
  return T.Env ? T.Env->assumptions() : std::vector<std::string>{};
}

bool isSymbolic(const FunctionTrace &T) {
  if (!assumptionsOf(T).empty())
    return true;
  auto Sym = [](const std::optional<SymSize> &S) { return S && S->isSymbolic(); };
  for (const ValueInfo &V : T.Values) {
    if (!V.Value.TypeOf.empty())
      return true;
    if (V.Value.Sizes)
      for (const SymSize &S : *V.Value.Sizes)
        if (S.isSymbolic())
          return true;
    if (Sym(V.Value.Offset))
      return true;
  }
  for (const StorageInfo &S : T.Storages)
    if (Sym(S.Bytes))
      return true;
  for (const OpEvent &E : T.Ops)
    if (Sym(E.AllocatedBytes) || Sym(E.ReadBytes) || Sym(E.WrittenBytes))
      return true;
  return false;
}

namespace {

/// The line of the first op whose result's sizes name Symbol: where a size
/// only a run knows was found (0 when none does).
unsigned lineFound(const FunctionTrace &T, const std::string &Symbol) {
  for (const OpEvent &E : T.Ops) {
    if (E.Result == NoValue)
      continue;
    const TensorValue &V = T.value(E.Result);
    if (V.Sizes)
      for (const SymSize &S : *V.Sizes)
        for (const std::string &Name : S.symbols())
          if (Name == Symbol)
            return E.NameWhere.Line;
  }
  return 0;
}

const std::vector<ShapeEnv::DataDependentSize> &
dataDependentSizes(const FunctionTrace &T) {
  static const std::vector<ShapeEnv::DataDependentSize> None;
  return T.Env ? T.Env->dataDependentSizes() : None;
}

/// A size in the table: the code's names for its symbols (`B`).
std::string sizeText(const SymSize &S, const ShapeEnv *Env) {
  if (S.isError())
    return "?";
  return Env && S.isSymbolic() ? Env->toTable(S) : S.toTable();
}

std::string shapeText(const TensorValue &V, const ShapeEnv *Env) {
  if (!V.Sizes)
    return "?";
  std::string S = "(";
  for (size_t I = 0; I < V.Sizes->size(); ++I)
    S += (I ? ", " : "") + sizeText((*V.Sizes)[I], Env);
  if (V.Sizes->size() == 1)
    S += ",";
  return S + ")";
}

/// A size in the report's contract (report-schema, version 2): an integer,
/// or a string holding its C++ expression over the function's parameters.
llvm::json::Value sizeJSON(const SymSize &S) {
  if (auto C = S.constant())
    return *C;
  if (S.isError())
    return nullptr;
  return S.toCpp();
}

llvm::json::Value dimsJSON(const std::optional<Shape> &D) {
  if (!D)
    return nullptr;
  llvm::json::Array A;
  for (const SymSize &X : *D)
    A.push_back(sizeJSON(X));
  return A;
}

llvm::json::Value optJSON(const std::optional<SymSize> &V) {
  if (!V)
    return nullptr;
  return sizeJSON(*V);
}

template <typename T> llvm::json::Value optJSON(const std::optional<T> &V) {
  if (!V)
    return nullptr;
  return *V;
}

llvm::json::Object cudaAllocatorJSON(const CudaAllocatorSummary &S) {
  llvm::json::Object O{{"peak_allocated_bytes", optJSON(S.PeakAllocatedBytes)},
                       {"peak_reserved_bytes", optJSON(S.PeakReservedBytes)}};
  if (!S.UnknownReason.empty())
    O["unknown_reason"] = S.UnknownReason;
  return O;
}

std::string viewOrCopyText(const RowFacts &R) {
  std::string Text;
  switch (R.Kind) {
  case RowKind::Alloc: Text = "new (" + R.Op + ")"; break;
  case RowKind::Copy: Text = "copy (" + R.Op + ")"; break;
  case RowKind::View:
    Text = (R.Base.empty() ? std::string("view of a temporary")
                           : "view of " + R.Base) +
           " (" + R.Op + ")";
    break;
  case RowKind::Undefined:
    return "undefined (" + R.Note + ")";
  case RowKind::Unknown:
    return "? (" + (R.Value->UnknownReason.empty() ? std::string("unknown")
                                                    : R.Value->UnknownReason) +
           ")";
  }
  if (auto C = R.Value->contiguous(); C && !*C)
    Text += ", not contiguous";
  return Text;
}

/// Columns as a terminal shows them: UTF-8 code points (`·` is one).
size_t displayWidth(const std::string &S) {
  size_t N = 0;
  for (unsigned char C : S)
    N += (C & 0xC0) != 0x80;
  return N;
}

void printRows(llvm::raw_ostream &OS,
               const std::vector<std::vector<std::string>> &Rows) {
  std::vector<size_t> Width;
  for (const auto &Row : Rows)
    for (size_t C = 0; C < Row.size(); ++C) {
      if (Width.size() <= C)
        Width.push_back(0);
      Width[C] = std::max(Width[C], displayWidth(Row[C]));
    }
  for (const auto &Row : Rows) {
    OS << "  ";
    for (size_t C = 0; C < Row.size(); ++C) {
      OS << Row[C];
      if (C + 1 < Row.size())
        OS.indent(Width[C] - displayWidth(Row[C]) + 2);
    }
    OS << "\n";
  }
}

} // namespace

std::vector<StatementTraffic> statementTraffic(const FunctionTrace &T) {
  std::vector<StatementTraffic> Out;
  for (const Statement &S : T.Statements) {
    if (S.Ops.empty())
      continue;
    StatementTraffic ST;
    ST.Line = S.Where.Line;
    ST.Op = T.Ops[S.Ops.back()].Name;
    auto Add = [](std::optional<SymSize> &Sum, const std::optional<SymSize> &V) {
      Sum = addSizes(Sum, V);
    };
    bool Moves = false;
    for (OpId Id : S.Ops) {
      const OpEvent &Op = T.Ops[Id];
      Add(ST.Allocated, Op.AllocatedBytes);
      Add(ST.Read, Op.ReadBytes);
      Add(ST.Written, Op.WrittenBytes);
      Add(ST.Transient, Op.TransientBytes);
      // A use moves nothing, unless it is a followed call whose body did.
      auto None = [](const std::optional<SymSize> &B) {
        return B && B->constant() == 0;
      };
      Moves |= Op.Kind != OpKind::View && Op.Kind != OpKind::Self &&
               (Op.Kind != OpKind::Use || !None(Op.ReadBytes) ||
                !None(Op.WrittenBytes));
    }
    if (!Moves)
      continue;
    Out.push_back(ST);
  }
  return Out;
}

std::optional<SymSize> bytesMoved(const FunctionTrace &T) {
  std::optional<SymSize> Sum = SymSize(0);
  for (const StatementTraffic &ST : statementTraffic(T))
    Sum = addSizes(Sum, addSizes(ST.Read, ST.Written));
  return Sum;
}

/// A dtype in the table: its name, or the parameter's it follows.
std::string dtypeText(const TensorValue &V) {
  if (V.Type)
    return dtypeName(*V.Type);
  if (!V.TypeOf.empty())
    return "dtype(" + V.TypeOf + ")";
  return "?";
}

/// Bytes in the table: a formula with the code's names, and the number
/// too when the user bound every symbol (`--assume B=16`).
std::string bytesText(const std::optional<SymSize> &B, const ShapeEnv *Env) {
  if (!B || B->isError())
    return "?";
  if (Env && B->isSymbolic())
    return Env->formatBytes(*B);
  return formatBytes(*B);
}

/// The module summary under a function's table (issue 13): per module,
/// its layer, parameter elements and bytes (what parameters() returns),
/// and the output of each forward seen.
void printModules(llvm::raw_ostream &OS, const FunctionTrace &T) {
  if (T.Modules.empty())
    return;
  const ShapeEnv *Env = T.Env.get();
  OS << "  modules:\n";
  // Training code adds the gradients after backward() and the optimizer
  // state after step() (docs/modules.md); other functions keep the five
  // columns.
  bool Training = false;
  for (const ModuleSummary &M : T.Modules)
    Training |= M.HasGradients || !M.Optimizers.empty();
  std::vector<std::vector<std::string>> Rows = {
      {"  module", "layer", "parameters", "parameter bytes",
       "forward outputs"}};
  if (Training) {
    Rows[0].push_back("gradient bytes");
    Rows[0].push_back("optimizer state");
  }
  std::vector<std::string> Reasons;
  for (const ModuleSummary &M : T.Modules) {
    std::string Name = M.Parent.empty() ? M.Name : M.Parent + "." + M.Name;
    std::string Outputs;
    for (const ModuleSummary::Forward &F : M.Forwards) {
      Outputs += (Outputs.empty() ? "" : ", ") + std::string("line ") +
                 std::to_string(F.Line) + " ";
      Outputs += F.Output == NoValue ? "?" : shapeText(T.value(F.Output), Env);
    }
    Rows.push_back({"  " + Name, M.Layer,
                    M.ParameterElements ? sizeText(*M.ParameterElements, Env)
                                        : "?",
                    bytesText(M.ParameterBytes, Env), Outputs});
    if (!M.ParameterBytes && !M.Why.empty())
      Reasons.push_back("    ? " + Name + ": " + M.Why);
    if (!Training)
      continue;
    Rows.back().push_back(M.HasGradients ? bytesText(M.GradientBytes, Env)
                                         : "");
    std::string State;
    for (const ModuleSummary::Optimizer &O : M.Optimizers) {
      State += (State.empty() ? "" : ", ") + O.Type + " " + O.Name + ": " +
               bytesText(O.StateBytes, Env);
      if (!O.StateBytes && !O.Why.empty())
        Reasons.push_back("    ? " + Name + " optimizer state: " + O.Why);
    }
    Rows.back().push_back(State);
    if (M.HasGradients && !M.GradientBytes && !M.GradientWhy.empty() &&
        M.GradientWhy != M.Why)
      Reasons.push_back("    ? " + Name + " gradients: " + M.GradientWhy);
  }
  printRows(OS, Rows);
  for (const std::string &R : Reasons)
    OS << R << "\n";
}

llvm::json::Value modulesJSON(const FunctionTrace &T) {
  llvm::json::Array Out;
  for (const ModuleSummary &M : T.Modules) {
    llvm::json::Array Params;
    for (const ModuleSummary::Parameter &P : M.Parameters)
      Params.push_back(llvm::json::Object{
          {"name", P.Name},
          {"shape", dimsJSON(P.Sizes)},
          {"dtype", P.Type ? llvm::json::Value(dtypeName(*P.Type))
                           : llvm::json::Value(nullptr)}});
    llvm::json::Array Forwards;
    for (const ModuleSummary::Forward &F : M.Forwards)
      Forwards.push_back(llvm::json::Object{
          {"line", F.Line},
          {"shape", F.Output == NoValue ? llvm::json::Value(nullptr)
                                        : dimsJSON(T.value(F.Output).Sizes)}});
    llvm::json::Object O{
        {"name", M.Name},
        {"layer", M.Layer},
        {"parent", M.Parent.empty() ? llvm::json::Value(nullptr)
                                    : llvm::json::Value(M.Parent)},
        {"line", M.Where.Line},
        {"parameters", std::move(Params)},
        {"parameter_elements", optJSON(M.ParameterElements)},
        {"parameter_bytes", optJSON(M.ParameterBytes)},
        {"forwards", std::move(Forwards)}};
    if (!M.ParameterBytes && !M.Why.empty())
      O["unknown_reason"] = M.Why;
    // Training code only (docs/report-schema.md): absent otherwise.
    if (M.HasGradients) {
      O["gradient_bytes"] = optJSON(M.GradientBytes);
      if (!M.GradientBytes && !M.GradientWhy.empty())
        O["gradient_unknown_reason"] = M.GradientWhy;
    }
    if (!M.Optimizers.empty()) {
      llvm::json::Array Opts;
      for (const ModuleSummary::Optimizer &Op : M.Optimizers) {
        llvm::json::Object J{{"name", Op.Name},
                             {"type", Op.Type},
                             {"line", Op.Line},
                             {"state_bytes", optJSON(Op.StateBytes)}};
        if (!Op.StateBytes && !Op.Why.empty())
          J["unknown_reason"] = Op.Why;
        Opts.push_back(std::move(J));
      }
      O["optimizers"] = std::move(Opts);
    }
    Out.push_back(std::move(O));
  }
  return Out;
}

std::string keepsAliveText(const RowFacts &R, const ShapeEnv *Env) {
  std::string Owner;
  switch (R.Owner) {
  case StorageOwner::Unknown: return "?";
  case StorageOwner::Nothing: return "nothing";
  case StorageOwner::Caller: Owner = "(caller's storage)"; break;
  case StorageOwner::Unnamed: Owner = "(unnamed)"; break;
  case StorageOwner::Named: Owner = R.OwnerName; break;
  }
  if (!R.PinnedBytes)
    return Owner;
  return "all of " + Owner + ": " + bytesText(R.HeldBytes, Env) + " for " +
         bytesText(R.ShownBytes, Env) + " of view";
}

std::vector<std::string> tableCells(const RowFacts &R, const ShapeEnv *Env) {
  // No tensor, so no shape, dtype or storage to be unknown.
  if (R.Kind == RowKind::Undefined)
    return {R.B->Name, "-", "-", "-", viewOrCopyText(R), keepsAliveText(R, Env)};
  std::string Bytes = bytesText(R.StorageBytes, Env);
  if (R.Kind == RowKind::View && R.StorageBytes)
    Bytes += ", shared";
  return {R.B->Name, shapeText(*R.Value, Env),
          dtypeText(*R.Value), Bytes,
          viewOrCopyText(R), keepsAliveText(R, Env)};
}

std::string cudaAllocatorText(const CudaAllocatorSummary &S) {
  return "CUDA caching allocator: peak allocated " +
         formatBytes(S.PeakAllocatedBytes) + ", peak reserved " +
         formatBytes(S.PeakReservedBytes);
}

void printTable(llvm::raw_ostream &OS, const std::vector<FunctionTrace> &Traces) {
  bool First = true;
  for (const FunctionTrace &T : Traces) {
    std::vector<RowFacts> Rows = rowFacts(T);
    // A function that names no tensor is still shown when it moves bytes
    // (`(void)torch::zeros(...)`): totals of 0 B must never be implied by
    // its absence.
    if (Rows.empty() && T.Throws.empty() && statementTraffic(T).empty())
      continue;
    if (!First)
      OS << "\n";
    First = false;
    OS << T.File << ":" << T.Where.Line << ": " << T.Name << "\n";
    std::vector<std::vector<std::string>> Table = {
        {"name", "shape", "dtype", "storage bytes", "view or copy",
         "keeps alive"}};
    const ShapeEnv *Env = T.Env.get();
    for (const RowFacts &R : Rows)
      Table.push_back(tableCells(R, Env));
    printRows(OS, Table);
    const TraceSummary &S = T.Summary;
    OS << "  live storage, nothing freed: "
       << bytesText(S.LiveBytesNothingFreed, Env) << "\n";
    OS << "  peak live storage (C++ lifetimes): "
       << bytesText(S.PeakLiveBytes, Env);
    if (S.PeakLiveBytes && S.PeakStatementKnown &&
        S.PeakStatement < T.Statements.size())
      OS << " at line " << T.Statements[S.PeakStatement].Where.Line;
    OS << "\n";
    if (S.PeakLiveBytes && !S.PeakSavedForBackward.empty())
      OS << "    of which saved for backward, past their C++ lifetime: "
         << savedForBackwardText(T) << "\n";
    if (auto Parts = peakBreakdown(T); !Parts.empty()) {
      OS << "    at the peak:";
      for (size_t K = 0; K < Parts.size(); ++K)
        OS << (K ? ", " : " ") << Parts[K].first << " "
           << bytesText(Parts[K].second, Env);
      OS << "\n";
    }
    if (S.PeakLiveBytes)
      for (const UnrolledLoopSummary &L : S.Loops)
        OS << "    " << loopPeakText(L, Env) << "\n";
    if (!S.UnknownTotalsReason.empty() &&
        (!S.LiveBytesNothingFreed || !S.PeakLiveBytes))
      OS << "    ? " << S.UnknownTotalsReason << "\n";
    if (S.CudaAllocator) {
      OS << "  " << cudaAllocatorText(*S.CudaAllocator) << "\n";
      if (!S.CudaAllocator->UnknownReason.empty())
        OS << "    ? " << S.CudaAllocator->UnknownReason << "\n";
    }
    std::vector<StatementTraffic> Traffic = statementTraffic(T);
    if (!Traffic.empty()) {
      OS << "  bytes moved:\n";
      std::vector<std::vector<std::string>> Moves;
      for (const StatementTraffic &ST : Traffic) {
        std::optional<SymSize> Total = addSizes(ST.Read, ST.Written);
        Moves.push_back({"  line " + std::to_string(ST.Line), ST.Op,
                         "read " + bytesText(ST.Read, Env),
                         "written " + bytesText(ST.Written, Env),
                         "moved " + bytesText(Total, Env),
                         "allocated " + bytesText(ST.Allocated, Env)});
      }
      printRows(OS, Moves);
    }
    if (!T.Throws.empty())
      OS << "  throws at run time: " << T.Throws << "\n";
    if (std::vector<std::string> A = assumptionsOf(T); !A.empty()) {
      OS << "  assuming:";
      const char *Sep = " ";
      for (const std::string &X : A) {
        OS << Sep << X;
        Sep = ", ";
      }
      OS << "\n";
    }
    for (const auto &D : dataDependentSizes(T)) {
      // The code's name for it, when it has one (`auto n = idx.size(0)`).
      std::string Shown = sizeText(SymSize::symbol(D.Name), T.Env.get());
      OS << "  " << D.Name << (Shown != D.Name ? " (" + Shown + ")" : "")
         << ": how many elements " << D.Op
         << " finds (line " << lineFound(T, D.Name) << "), known at run time, "
         << "at most " << sizeText(D.AtMost, T.Env.get()) << "\n";
    }
    printModules(OS, T);
    if (std::string Broken = bindingViolationText(T); !Broken.empty())
      OS << "  " << Broken << "\n";
    std::vector<const Unknown *> Unknowns;
    for (const Unknown &U : T.Unknowns)
      Unknowns.push_back(&U);
    if (!Unknowns.empty()) {
      OS << "  unknown (" << Unknowns.size() << "):\n";
      for (const Unknown *U : Unknowns)
        OS << "    line " << U->Where.Line << ": " << U->What << ": "
           << U->Reason << "\n";
    }
  }
}

bool reportsPeakBreakdown(const FunctionTrace &T) {
  if (!T.Summary.PeakParts || !T.Summary.PeakLiveBytes ||
      !T.Summary.PeakStatementKnown)
    return false;
  if (!T.Summary.PeakSavedForBackward.empty())
    return true;
  for (const StorageInfo &S : T.Storages)
    if (S.Role != StorageRole::Tensor)
      return true;
  return false;
}

std::vector<std::pair<std::string, SymSize>> peakBreakdown(const FunctionTrace &T) {
  std::vector<std::pair<std::string, SymSize>> Parts;
  if (!reportsPeakBreakdown(T))
    return Parts;
  const PeakBreakdown &P = *T.Summary.PeakParts;
  for (const auto &[Label, Bytes] :
       {std::pair<const char *, const SymSize &>{"parameters", P.Parameters},
        {"gradients", P.Gradients},
        {"optimizer state", P.OptimizerState},
        {"saved for backward", P.SavedForBackward},
        {"temporaries", P.Temporaries},
        {"other tensors", P.Tensors}})
    if (!(Bytes.constant() && *Bytes.constant() == 0))
      Parts.emplace_back(Label, Bytes);
  return Parts;
}

std::string loopPeakText(const UnrolledLoopSummary &L, const ShapeEnv *Env) {
  std::string Text = "the loop at line " + std::to_string(L.Where.Line) + " (" +
                     std::to_string(L.Iterations) +
                     (L.Iterations == 1 ? " iteration" : " iterations") +
                     "): peak " + bytesText(L.FirstIterationPeak, Env);
  if (L.Iterations == 1)
    return Text;
  if (L.LaterIterationPeak && L.FirstIterationPeak &&
      *L.LaterIterationPeak == *L.FirstIterationPeak)
    return Text + " in every iteration";
  return Text + " in the first iteration, " + bytesText(L.LaterIterationPeak, Env) +
         " in each later one";
}

std::string savedForBackwardText(const FunctionTrace &T) {
  std::string Text;
  std::optional<SymSize> Total = SymSize(0);
  for (StorageId Id : T.Summary.PeakSavedForBackward) {
    const StorageInfo &S = T.Storages.at(Id);
    Total = addSizes(Total, S.Bytes);
    Text += Text.empty() ? " (" : ", ";
    if (S.Producer != NoOp) {
      const OpEvent &Op = T.Ops.at(S.Producer);
      Text += Op.Name + "'s result, line " + std::to_string(Op.Where.Line);
    } else {
      Text += "a storage";
    }
  }
  return bytesText(Total, T.Env.get()) + Text + ")";
}

void dropRepeatedExpansions(std::vector<FunctionTrace> &Traces) {
  // The report itself is the comparison: two copies are the same answer
  // exactly when their JSON is the same, every row, byte and reason.
  std::set<std::string> Seen;
  std::vector<FunctionTrace> Kept;
  Kept.reserve(Traces.size());
  for (FunctionTrace &T : Traces) {
    std::string Key;
    llvm::raw_string_ostream(Key)
        << T.Name << '\n' << T.Where.Line << '\n'
        << toJSON(std::vector<FunctionTrace>{T}, {});
    if (Seen.insert(std::move(Key)).second)
      Kept.push_back(std::move(T));
  }
  Traces = std::move(Kept);
}

llvm::json::Value toJSON(const std::vector<FunctionTrace> &Traces,
                         const std::vector<Diagnostic> &Diagnostics,
                         const std::vector<FileFailure> &Failures) {
  // Version 2 (symbolic sizes, assumptions) only when some function needs
  // it: a report of literal code stays a version 1 report, byte for byte.
  bool Symbolic = false;
  for (const FunctionTrace &T : Traces)
    Symbolic |= isSymbolic(T);
  llvm::json::Array Functions;
  for (const FunctionTrace &T : Traces) {
    // With the user's values (--assume): each byte count that is a formula
    // gets `<key>_assumed`, its number, or null when they leave some symbol
    // of it unbound. None when the values break the function's facts or
    // assumptions.
    const ShapeEnv *Env = T.Env.get();
    bool Assumed = Env && Env->bindingsUsable();
    auto AddAssumed = [&](llvm::json::Object &O, const std::string &Key,
                          const std::optional<SymSize> &V) {
      if (!Assumed || !V || !V->isSymbolic())
        return;
      std::optional<int64_t> N = Env->boundValue(*V);
      O[Key + "_assumed"] =
          N ? llvm::json::Value(*N) : llvm::json::Value(nullptr);
    };
    llvm::json::Array Tensors;
    for (const RowFacts &R : rowFacts(T)) {
      const TensorValue &V = *R.Value;
      llvm::json::Object O{
          {"name", R.B->Name},
          {"line", R.B->Where.Line},
          {"column", R.B->Where.Column},
          {"shape", dimsJSON(V.Sizes)},
          {"strides", dimsJSON(V.Strides)},
          {"storage_offset", optJSON(V.Offset)},
          {"dtype", V.Type ? llvm::json::Value(dtypeName(*V.Type))
                    : !V.TypeOf.empty()
                        ? llvm::json::Value(V.TypeOf + ".scalar_type()")
                        : llvm::json::Value(nullptr)},
          {"device", V.Dev ? llvm::json::Value(deviceName(*V.Dev))
                           : llvm::json::Value(nullptr)},
          {"storage_bytes", optJSON(R.StorageBytes)},
          {"kind", R.Kind == RowKind::Unknown
                       ? llvm::json::Value(nullptr)
                       : llvm::json::Value(rowKindName(R.Kind))},
          {"base", R.Base.empty() ? llvm::json::Value(nullptr)
                                  : llvm::json::Value(R.Base)},
          {"contiguous", optJSON(V.contiguous())},
          {"op", R.Op.empty() ? llvm::json::Value(nullptr)
                              : llvm::json::Value(R.Op)},
          {"keeps_alive", keepsAliveText(R, T.Env.get())},
      };
      AddAssumed(O, "storage_bytes", R.StorageBytes);
      if (!V.UnknownReason.empty() && R.Kind != RowKind::Undefined)
        O["unknown_reason"] = V.UnknownReason;
      if (!R.Note.empty())
        O["note"] = R.Note;
      Tensors.push_back(std::move(O));
    }
    llvm::json::Array Ops;
    for (const StatementTraffic &ST : statementTraffic(T)) {
      llvm::json::Object O{{"line", ST.Line},
                           {"op", ST.Op},
                           {"allocated_bytes", optJSON(ST.Allocated)},
                           {"read_bytes", optJSON(ST.Read)},
                           {"written_bytes", optJSON(ST.Written)},
                           {"transient_bytes", optJSON(ST.Transient)}};
      AddAssumed(O, "allocated_bytes", ST.Allocated);
      AddAssumed(O, "read_bytes", ST.Read);
      AddAssumed(O, "written_bytes", ST.Written);
      AddAssumed(O, "transient_bytes", ST.Transient);
      Ops.push_back(std::move(O));
    }
    // The function's own storages with their C++ lifetimes (the HTML
    // report's bands): allocated at the producer's statement, released
    // during or after released_line.
    llvm::json::Array Storages;
    for (const StorageInfo &S : T.Storages) {
      if (S.External || S.Producer == NoOp)
        continue;
      const OpEvent &Op = T.Ops[S.Producer];
      auto LineOf = [&](std::optional<unsigned> St) -> llvm::json::Value {
        if (!St || *St >= T.Statements.size())
          return nullptr;
        return T.Statements[*St].Where.Line;
      };
      llvm::json::Object O{
          {"id", S.Id},
          {"name", S.FirstName.empty() ? llvm::json::Value(nullptr)
                                       : llvm::json::Value(S.FirstName)},
          {"bytes", optJSON(S.Bytes)},
          {"op", Op.Name},
          {"kind", Op.Kind == OpKind::Alloc ? "alloc" : "copy"},
          {"allocated_line", LineOf(Op.Statement)},
          {"released_line", LineOf(S.ReleasedAfter)},
          {"released_at_scope_end", S.ReleasedAtScopeEnd}};
      AddAssumed(O, "bytes", S.Bytes);
      Storages.push_back(std::move(O));
    }
    llvm::json::Object Summary{
        {"live_bytes_nothing_freed", optJSON(T.Summary.LiveBytesNothingFreed)},
        {"peak_live_bytes", optJSON(T.Summary.PeakLiveBytes)},
        {"unknowns", T.Summary.Unknowns}};
    AddAssumed(Summary, "live_bytes_nothing_freed",
               T.Summary.LiveBytesNothingFreed);
    AddAssumed(Summary, "peak_live_bytes", T.Summary.PeakLiveBytes);
    if (T.Summary.PeakLiveBytes && T.Summary.PeakStatementKnown &&
        T.Summary.PeakStatement < T.Statements.size()) {
      Summary["peak_line"] = T.Statements[T.Summary.PeakStatement].Where.Line;
      llvm::json::Array PeakLive;
      for (StorageId Id : T.Summary.PeakLive)
        PeakLive.push_back(Id);
      Summary["peak_storages"] = std::move(PeakLive);
      if (!T.Summary.PeakSavedForBackward.empty()) {
        llvm::json::Array Saved;
        for (StorageId Id : T.Summary.PeakSavedForBackward)
          Saved.push_back(Id);
        Summary["peak_saved_for_backward"] = std::move(Saved);
      }
      if (reportsPeakBreakdown(T)) {
        const PeakBreakdown &P = *T.Summary.PeakParts;
        Summary["peak_breakdown"] = llvm::json::Object{
            {"parameters", optJSON(P.Parameters)},
            {"gradients", optJSON(P.Gradients)},
            {"optimizer_state", optJSON(P.OptimizerState)},
            {"saved_for_backward", optJSON(P.SavedForBackward)},
            {"temporaries", optJSON(P.Temporaries)},
            {"other_tensors", optJSON(P.Tensors)}};
      }
    }
    if (!T.Summary.Loops.empty()) {
      llvm::json::Array Loops;
      for (const UnrolledLoopSummary &L : T.Summary.Loops)
        Loops.push_back(llvm::json::Object{
            {"line", L.Where.Line},
            {"iterations", L.Iterations},
            {"first_iteration_peak_bytes", optJSON(L.FirstIterationPeak)},
            {"later_iteration_peak_bytes", optJSON(L.LaterIterationPeak)}});
      Summary["loops"] = std::move(Loops);
    }
    if (!T.Summary.UnknownTotalsReason.empty() &&
        (!T.Summary.LiveBytesNothingFreed || !T.Summary.PeakLiveBytes))
      Summary["unknown_reason"] = T.Summary.UnknownTotalsReason;
    if (T.Summary.CudaAllocator)
      Summary["cuda_allocator"] = cudaAllocatorJSON(*T.Summary.CudaAllocator);
    llvm::json::Object F{{"file", T.File},
                         {"function", T.Name},
                         {"line", T.Where.Line},
                         {"tensors", std::move(Tensors)},
                         {"ops", std::move(Ops)},
                         {"storages", std::move(Storages)},
                         {"summary", std::move(Summary)}};
    if (!T.Throws.empty())
      F["throws"] = T.Throws;
    if (!T.Modules.empty())
      F["modules"] = modulesJSON(T);
    if (Symbolic) {
      llvm::json::Array A;
      for (const std::string &X : assumptionsOf(T))
        A.push_back(X);
      F["assumptions"] = std::move(A);
    }
    if (!dataDependentSizes(T).empty()) {
      llvm::json::Array A;
      for (const auto &D : dataDependentSizes(T))
        A.push_back(llvm::json::Object{{"symbol", D.Name},
                                       {"op", D.Op},
                                       {"line", lineFound(T, D.Name)},
                                       {"at_most", sizeJSON(D.AtMost)}});
      F["data_dependent_sizes"] = std::move(A);
    }
    if (Env && Env->hasBindings()) {
      llvm::json::Object Values;
      for (const auto &KV : Env->bindings())
        Values[KV.first] = KV.second;
      F["assumed_values"] = std::move(Values);
      std::vector<std::string> Broken = Env->violations();
      if (!Broken.empty()) {
        llvm::json::Array A;
        for (const std::string &X : Broken)
          A.push_back(X);
        F["assumed_values_violate"] = std::move(A);
      }
    }
    Functions.push_back(std::move(F));
  }
  llvm::json::Array Diags;
  for (const Diagnostic &D : Diagnostics) {
    llvm::json::Array Notes;
    for (const DiagnosticNote &N : D.Notes)
      Notes.push_back(llvm::json::Object{{"file", N.Where.File},
                                         {"line", N.Where.Line},
                                         {"column", N.Where.Column},
                                         {"message", renderMessage(N.Format, N.Args)}});
    llvm::json::Array Fixes;
    for (const FixIt &F : D.Fixes)
      Fixes.push_back(llvm::json::Object{
          {"offset", static_cast<int64_t>(F.Where.BeginOffset)},
          {"length", static_cast<int64_t>(F.Where.EndOffset - F.Where.BeginOffset)},
          {"replacement", F.Replacement}});
    llvm::json::Object O{{"check", D.Check},
                                       {"file", D.Where.File},
                                       {"line", D.Where.Line},
                                       {"column", D.Where.Column},
                                       {"severity", "warning"},
                                       {"message", renderMessage(D.Format, D.Args)},
                                       {"bytes", optJSON(D.Bytes)},
                                       {"notes", std::move(Notes)},
                                       {"fixes", std::move(Fixes)}};
    if (D.BytesAssumed)
      O["bytes_assumed"] = *D.BytesAssumed;
    Diags.push_back(std::move(O));
  }
  llvm::json::Array Failed, Skipped;
  for (const FileFailure &F : Failures)
    (F.Skipped ? Skipped : Failed)
        .push_back(llvm::json::Object{{"file", F.File}, {"reason", F.Reason}});
  llvm::json::Object Report{{"version", Symbolic ? 2 : 1},
                            {"functions", std::move(Functions)},
                            {"diagnostics", std::move(Diags)},
                            {"failed_files", std::move(Failed)}};
  // Only when a file was skipped, so that reports of runs that skip
  // nothing keep their shape.
  if (!Skipped.empty())
    Report["skipped_files"] = std::move(Skipped);
  return Report;
}

} // namespace tma
