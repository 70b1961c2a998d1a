// The --verify bridge (see Verify.h for the rules it keeps).
//
// The predictions handed to compare() are the tool's JSON report of the
// functions that run, annotated per tensor with what only this side knows:
// whether a probe could be placed after the binding ("probed") and whether
// the binding is in a branch or loop ("conditional"), so that a binding the
// run never reached is judged fairly (Compare.cpp, rule 4); and per function
// with summary.allocated_bytes, every byte its ops allocate, transient
// copies included (rule 6).
#include "driver/Verify.h"
#include "driver/JSONInput.h"
#include "model/RowFacts.h"
#include "model/Units.h"
#include "verify/Process.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace tma {

namespace {

constexpr size_t NoOffset = ~size_t(0);
const char *const EmitMarker = "tensor-accountant --emit-harness";

std::string shortValue(const std::string &S) {
  return S.empty() ? "-" : S;
}

/// The verdicts of one function (one draw of its inputs), tensors in
/// report order.
struct FunctionVerdicts {
  std::string File, Function;
  int Draw = -1;
  std::string Inputs;
  std::vector<std::tuple<std::string, unsigned, std::vector<const verify::Verdict *>>> Tensors;
  std::vector<const verify::Verdict *> Totals; // function level
};

std::string fieldLabel(const std::string &Field) {
  if (Field == "peak_live_bytes")
    return "peak live bytes";
  if (Field == "allocated_bytes")
    return "allocated bytes";
  return Field;
}

bool sameFile(llvm::StringRef A, llvm::StringRef B) {
  return A == B || llvm::sys::path::filename(A) == llvm::sys::path::filename(B);
}

/// Why no probe follows a binding statement, or "" when one does.
std::string noProbeReason(const Statement &S, size_t TextSize) {
  if (S.Where.InMacro)
    return "the binding is inside a macro expansion";
  if (!S.Insertable)
    return "the statement is not directly in a block, so nothing can follow it";
  if (S.EndOffset == NoOffset || S.EndOffset > TextSize)
    return "the statement's end is not in the file";
  return "";
}

/// Adds "probed", "no_probe_reason" and "conditional" to each tensor of the
/// predicted report (one JSON function per trace, in order).
void annotatePredictions(llvm::json::Value &Report, const std::vector<FunctionTrace> &Traces,
                         const std::set<std::tuple<std::string, std::string, unsigned>> &Probed,
                         const std::map<std::string, size_t> &TextSizes) {
  llvm::json::Object *Root = Report.getAsObject();
  llvm::json::Array *Fns = Root ? Root->getArray("functions") : nullptr;
  if (!Fns)
    return;
  for (size_t I = 0; I < Fns->size() && I < Traces.size(); ++I) {
    const FunctionTrace &T = Traces[I];
    llvm::json::Object *F = (*Fns)[I].getAsObject();
    if (!F)
      continue;
    // Every byte the function allocates, the ops' transient copies (matmul
    // folding) included: what the counting allocator sees.
    if (llvm::json::Object *Summary = F->getObject("summary")) {
      std::optional<SymSize> Total = SymSize(0);
      for (const OpEvent &Op : T.Ops)
        Total = addSizes(addSizes(Total, Op.AllocatedBytes),
                         (Op.TransientTotalBytes ? Op.TransientTotalBytes
                                                 : Op.TransientBytes)
                             .value_or(SymSize(0)));
      // What the allocator counts is a number: only numbers are compared,
      // a formula once a draw of inputs gives it one (instantiatePrediction).
      auto Counted = knownBytes(Total);
      (*Summary)["allocated_bytes"] =
          Counted ? llvm::json::Value(*Counted)
          : Total && Total->isSymbolic() && !Total->isError()
              ? llvm::json::Value(Total->toCpp())
              : llvm::json::Value(nullptr);
    }
    llvm::json::Array *Tensors = F->getArray("tensors");
    if (!Tensors)
      continue;
    std::vector<RowFacts> Rows = rowFacts(T);
    auto Size = TextSizes.find(T.File);
    for (size_t J = 0; J < Tensors->size() && J < Rows.size(); ++J) {
      llvm::json::Object *O = (*Tensors)[J].getAsObject();
      const Binding *B = Rows[J].B;
      if (!O || !B || B->Statement >= T.Statements.size())
        continue;
      const Statement &S = T.Statements[B->Statement];
      bool HasProbe = Probed.count({T.CallableName, B->Name, B->Where.Line}) > 0;
      (*O)["probed"] = HasProbe;
      if (!HasProbe) {
        std::string Why = noProbeReason(S, Size == TextSizes.end() ? 0 : Size->second);
        (*O)["no_probe_reason"] = Why.empty() ? "the statement cannot take a probe" : Why;
      }
      if (S.InBranch || S.InLoop)
        (*O)["conditional"] = true;
    }
  }
}

bool startsWithMarker(llvm::StringRef Contents, llvm::StringRef Comment) {
  Contents = Contents.take_front(200);
  return Contents.startswith(Comment) && Contents.contains("Generated by tensor-accountant");
}

/// The calls of a function with parameters, one per draw of inputs
/// (driver/VerifyInputs.h). False, with the reason in Skipped, when no
/// draw is called.
bool planCalls(const FunctionTrace &T, const std::string &Text,
               const VerifyOptions &Opts, verify::HarnessFile &HF,
               std::vector<SkippedFunction> &Skipped,
               std::vector<PlannedFunction> *Planned) {
  (void)Text;
  std::string Reason;
  std::vector<InputDraw> Draws = drawInputs(T, Opts.Draws, Reason);
  if (Draws.empty()) {
    Skipped.push_back({T.File, T.Name, Reason});
    return false;
  }
  if (Opts.Mode != verify::Mode::Meta && !T.Summary.PeakLiveBytes) {
    Skipped.push_back({T.File, T.Name,
                       std::string("predicted peak unknown, not run on ") +
                           verify::modeName(Opts.Mode)});
    return false;
  }
  std::vector<InputDraw> Kept;
  for (InputDraw &D : Draws) {
    // On the CPU the inputs and the function's predicted peak are real
    // memory: a draw over the limit is not run (the run-time limit still
    // stops one the prediction gets wrong).
    if (Opts.Mode != verify::Mode::Meta) {
      std::optional<int64_t> Peak = T.Summary.PeakLiveBytes->evaluate(D.Values).Value;
      int64_t Total = 0;
      if (!Peak) {
        Skipped.push_back({T.File, T.Name,
                           "with " + D.Text + ": predicted peak unknown, not run on " +
                               verify::modeName(Opts.Mode)});
        continue;
      }
      if (__builtin_add_overflow(*Peak, D.InputBytes, &Total) || Total > Opts.MaxBytes) {
        Skipped.push_back({T.File, T.Name,
                           "with " + D.Text + ": its inputs and predicted peak (" +
                               formatBytes(D.InputBytes) + " + " + formatBytes(*Peak) +
                               ") are over --verify-max-bytes (" +
                               formatBytes(Opts.MaxBytes) + ")"});
        continue;
      }
    }
    Kept.push_back(std::move(D));
  }
  if (Kept.empty())
    return false;
  for (size_t K = 0; K < Kept.size(); ++K) {
    verify::HarnessCall C;
    C.Function = T.CallableName;
    C.Draw = static_cast<int>(K);
    C.Inputs = Kept[K].Text;
    for (const MadeInput &I : Kept[K].Inputs) {
      verify::HarnessInput A;
      A.Name = I.Name;
      A.IsTensor = I.IsTensor;
      A.Sizes = I.Sizes;
      A.ScalarType = scalarTypeEnumerator(I.Type);
      A.Move = I.Move;
      A.IntegerType = I.IntegerType;
      A.Value = I.Value;
      C.Args.push_back(std::move(A));
    }
    HF.Calls.push_back(std::move(C));
  }
  if (Planned)
    Planned->push_back({&T, std::move(Kept)});
  return true;
}

} // namespace

void instantiatePrediction(llvm::json::Object &F, const InputDraw &D, int DrawIndex) {
  // Each value that is a formula becomes its number under D; one without
  // a number becomes null (unverified), with why.
  auto Eval = [&](llvm::json::Value &V, std::string &Why) {
    std::optional<llvm::StringRef> S = V.getAsString();
    if (!S)
      return;
    std::string Error;
    if (auto N = evaluateUnder(*S, D, &Error)) {
      V = *N;
    } else {
      V = nullptr;
      if (Why.empty())
        Why = "under these inputs, " + Error;
    }
  };
  auto EvalKey = [&](llvm::json::Object &O, llvm::StringRef Key, std::string &Why) {
    if (llvm::json::Value *V = O.get(Key))
      Eval(*V, Why);
  };
  if (llvm::json::Array *Tensors = F.getArray("tensors"))
    for (llvm::json::Value &TV : *Tensors) {
      llvm::json::Object *O = TV.getAsObject();
      if (!O)
        continue;
      std::string Why;
      // A shape with one entry unknown is unknown: compare() judges lists
      // whole, and null is how a prediction says "not known".
      for (llvm::StringRef Key : {"shape", "strides"})
        if (llvm::json::Array *A = O->getArray(Key)) {
          std::string Entry;
          for (llvm::json::Value &V : *A)
            Eval(V, Entry);
          if (!Entry.empty()) {
            (*O)[Key] = nullptr;
            if (Why.empty())
              Why = Entry;
          }
        }
      for (llvm::StringRef Key : {"storage_offset", "storage_bytes"})
        EvalKey(*O, Key, Why);
      if (std::optional<llvm::StringRef> DT = O->getString("dtype");
          DT && DT->endswith(".scalar_type()")) {
        llvm::StringRef P = DT->drop_back(strlen(".scalar_type()"));
        const MadeInput *In = nullptr;
        for (const MadeInput &I : D.Inputs)
          if (I.IsTensor && I.Name == P)
            In = &I;
        (*O)["dtype"] = In ? llvm::json::Value(dtypeName(In->Type))
                           : llvm::json::Value(nullptr);
        if (!In && Why.empty())
          Why = "under these inputs, the dtype of '" + P.str() + "' is not known";
      }
      if (!Why.empty() && !O->get("unknown_reason"))
        (*O)["unknown_reason"] = Why;
    }
  if (llvm::json::Array *Ops = F.getArray("ops"))
    for (llvm::json::Value &OV : *Ops)
      if (llvm::json::Object *O = OV.getAsObject()) {
        std::string Why;
        for (llvm::StringRef Key :
             {"allocated_bytes", "read_bytes", "written_bytes", "transient_bytes"})
          EvalKey(*O, Key, Why);
      }
  if (llvm::json::Object *Summary = F.getObject("summary")) {
    std::string Why;
    for (llvm::StringRef Key :
         {"live_bytes_nothing_freed", "peak_live_bytes", "allocated_bytes"})
      EvalKey(*Summary, Key, Why);
    if (!Why.empty() && !Summary->get("unknown_reason"))
      (*Summary)["unknown_reason"] = Why;
  }
  F["draw"] = DrawIndex;
  F["inputs"] = D.Text;
}

bool hasTensorWork(const FunctionTrace &T) {
  if (!T.Ops.empty() || !T.Unknowns.empty())
    return true;
  for (const Binding &B : T.Bindings)
    if (!B.IsParameter)
      return true;
  return false;
}

verify::HarnessFile harnessFileFor(const FileAnalysis &FA, const std::string &Text,
                                   const VerifyOptions &Opts,
                                   std::vector<SkippedFunction> &Skipped,
                                   std::vector<PlannedFunction> *Planned) {
  verify::HarnessFile HF;
  HF.Path = FA.File;
  HF.Text = Text;
  auto addProbes = [&](const FunctionTrace &T) {
    for (const Binding &B : T.Bindings) {
      if (B.IsParameter || B.Statement >= T.Statements.size())
        continue;
      const Statement &S = T.Statements[B.Statement];
      if (!noProbeReason(S, Text.size()).empty())
        continue;
      HF.Probes.push_back({T.CallableName, B.Name, B.Where.Line, S.EndOffset});
    }
  };
  std::set<std::pair<size_t, size_t>> SeenDevices;
  for (const FunctionTrace &T : FA.Traces) {
    // Device expressions are redirected everywhere in the file, called or
    // not, so the program compiles the same way on every device.
    // CPU stays CPU: tensors made without a device are CPU tensors in every
    // mode, and an explicit kCPU must keep agreeing with them (x.to(kCPU)
    // of such a tensor returns self). Accelerators run on the chosen device.
    for (const DeviceMention &D : T.Devices) {
      if (D.Named.Kind == DeviceKind::CPU || D.Where.InMacro || D.Where.BeginOffset == NoOffset ||
          D.Where.EndOffset == NoOffset ||
          !SeenDevices.insert({D.Where.BeginOffset, D.Where.EndOffset}).second)
        continue;
      HF.Devices.push_back({D.Where.BeginOffset, D.Where.EndOffset,
                            D.IsStringLiteral
                                ? verify::DeviceSite::DeviceStringLiteral
                                : verify::DeviceSite::DeviceTypeExpr});
    }
    // Code with no tensor in it is none of our business: calling it would
    // run whatever else it does (write files, talk to the network).
    if (!hasTensorWork(T)) {
      Skipped.push_back({T.File, T.Name,
                         "the analysis saw no tensor work in it, so it is not run"});
      continue;
    }
    if (T.CallableName.empty()) {
      Skipped.push_back({T.File, T.Name,
                         T.HasParameters
                             ? "a method, a template or main: --verify calls free "
                               "functions only"
                             : "cannot be called without arguments"});
      continue;
    }
    if (!T.Params.empty()) {
      if (planCalls(T, Text, Opts, HF, Skipped, Planned))
        addProbes(T);
      continue;
    }
    if (Opts.Mode != verify::Mode::Meta) {
      const auto Peak = knownBytes(T.Summary.PeakLiveBytes);
      if (!Peak) {
        Skipped.push_back({T.File, T.Name,
                           std::string("predicted peak unknown, not run on ") +
                               verify::modeName(Opts.Mode)});
        continue;
      }
      if (*Peak > Opts.MaxBytes) {
        Skipped.push_back({T.File, T.Name,
                           "predicted peak " + formatBytes(*Peak) +
                               " is over --verify-max-bytes (" +
                               formatBytes(Opts.MaxBytes) + ")"});
        continue;
      }
    }
    HF.Functions.push_back(T.CallableName);
    if (Planned)
      Planned->push_back({&T, {}});
    addProbes(T);
  }
  return HF;
}

std::string writeEmittedFiles(
    const std::string &Dir,
    const std::vector<std::pair<std::string, std::string>> &Files, bool Force,
    const std::function<bool(const std::string &, llvm::StringRef)> &IsOurs) {
  namespace fs = llvm::sys::fs;
  namespace path = llvm::sys::path;
  fs::file_status DirStatus;
  if (!fs::status(Dir, DirStatus) && !fs::is_directory(DirStatus))
    return "'" + Dir + "' exists and is not a directory";
  if (std::error_code EC = fs::create_directories(Dir))
    return "cannot create '" + Dir + "': " + EC.message();

  std::vector<std::string> Present;
  std::error_code EC;
  for (fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC))
    Present.push_back(std::string(path::filename(It->path())));
  if (EC)
    return "cannot list '" + Dir + "': " + EC.message();
  std::sort(Present.begin(), Present.end());
  if (!Present.empty() && !Force) {
    std::string Names;
    for (size_t I = 0; I < Present.size() && I < 5; ++I)
      Names += (I ? ", " : "") + Present[I];
    if (Present.size() > 5)
      Names += ", ...";
    return "'" + Dir + "' is not empty (" + Names +
           "); --emit-harness writes only into a new or empty directory. Choose "
           "another, or pass --force to replace the harness.cpp, CMakeLists.txt and "
           "predicted.json an earlier --emit-harness wrote there (nothing else is "
           "touched)";
  }

  // Every check before the first write: refuse all or write all.
  std::vector<bool> Replace;
  for (const auto &[Name, Contents] : Files) {
    llvm::SmallString<256> Path(Dir);
    path::append(Path, Name);
    fs::file_status St;
    if (std::error_code SE = fs::status(Path, St, /*follow=*/false)) {
      if (SE != std::errc::no_such_file_or_directory)
        return "cannot examine '" + std::string(Path) + "': " + SE.message();
      Replace.push_back(false);
      continue;
    }
    if (St.type() != fs::file_type::regular_file)
      return "'" + std::string(Path) +
             "' is not a regular file that --emit-harness wrote; not replacing it";
    auto Old = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (!Old || !IsOurs(Name, (*Old)->getBuffer()))
      return "'" + std::string(Path) +
             "' was not written by --emit-harness; not replacing it (move it away, "
             "or emit into another directory)";
    Replace.push_back(true);
  }

  for (size_t I = 0; I < Files.size(); ++I) {
    const auto &[Name, Contents] = Files[I];
    llvm::SmallString<256> Path(Dir);
    path::append(Path, Name);
    if (!Replace[I]) {
      int FD;
      if (std::error_code OE = fs::openFileForWrite(Path, FD, fs::CD_CreateNew))
        return "cannot create '" + std::string(Path) + "': " + OE.message();
      llvm::raw_fd_ostream Out(FD, /*shouldClose=*/true);
      Out << Contents;
      Out.close();
      if (Out.has_error()) {
        Out.clear_error();
        return "cannot write '" + std::string(Path) + "'";
      }
      continue;
    }
    // Replace atomically: a half-written file of ours is never left behind.
    llvm::SmallString<256> Model(Dir), Temp;
    path::append(Model, Name + ".tmp-%%%%%%");
    int FD;
    if (std::error_code TE = fs::createUniqueFile(Model, FD, Temp))
      return "cannot write into '" + Dir + "': " + TE.message();
    {
      llvm::raw_fd_ostream Out(FD, /*shouldClose=*/true);
      Out << Contents;
      Out.close();
      if (Out.has_error()) {
        Out.clear_error();
        fs::remove(Temp);
        return "cannot write '" + std::string(Temp) + "'";
      }
    }
    if (std::error_code RE = fs::rename(Temp, Path)) {
      fs::remove(Temp);
      return "cannot replace '" + std::string(Path) + "': " + RE.message();
    }
  }
  return "";
}

int runVerification(const std::vector<FileAnalysis> &Files,
                    const VerifyOptions &Opts, llvm::raw_ostream &OS,
                    llvm::raw_ostream &Err) {
  // SIGINT/SIGTERM/SIGHUP: kill the compiler or harness, clean up, then die
  // of the signal (verify/Process.h).
  verify::InterruptScope Interrupts;
  auto Interrupted = [&] {
    if (!verify::InterruptScope::signalled())
      return false;
    Err << "tensor-accountant: interrupted by signal "
        << verify::InterruptScope::signalled() << "\n";
    Err.flush();
    Interrupts.reraise();
    return true;
  };

  std::vector<verify::HarnessFile> Harness;
  std::vector<FunctionTrace> Predicted;
  std::vector<std::vector<InputDraw>> PredictedDraws; // per Predicted
  std::vector<SkippedFunction> Skipped;
  std::set<std::tuple<std::string, std::string, unsigned>> Probed;
  std::map<std::string, size_t> TextSizes;
  size_t FunctionCount = 0;
  // Every file's include directories and macros, once each, in order: the
  // harness is all of them in one translation unit.
  std::vector<std::string> UserFlags;
  std::set<std::string> SeenFlags;
  for (const FileAnalysis &FA : Files) {
    if (FA.CompileErrors)
      continue;
    for (size_t K = 0; K < FA.BuildFlags.size(); ++K) {
      bool TakesValue = FA.BuildFlags[K].rfind("-D", 0) != 0 &&
                        FA.BuildFlags[K].rfind("-U", 0) != 0 &&
                        K + 1 < FA.BuildFlags.size();
      std::string Flag = FA.BuildFlags[K];
      std::string Value = TakesValue ? FA.BuildFlags[++K] : "";
      if (!SeenFlags.insert(Flag + "\n" + Value).second)
        continue;
      UserFlags.push_back(Flag);
      if (TakesValue)
        UserFlags.push_back(Value);
    }
  }
  for (const FileAnalysis &FA : Files) {
    if (FA.CompileErrors)
      continue;
    // The bytes the trace's offsets are into (the file may have changed).
    TextSizes[FA.File] = FA.Source.size();
    std::vector<PlannedFunction> Planned;
    verify::HarnessFile HF =
        harnessFileFor(FA, FA.Source, Opts, Skipped, &Planned);
    for (PlannedFunction &P : Planned) {
      Predicted.push_back(*P.T);
      PredictedDraws.push_back(std::move(P.Draws));
    }
    for (const verify::ProbeSite &P : HF.Probes)
      Probed.insert({P.Function, P.Name, P.Line});
    FunctionCount += HF.Functions.size() + HF.Calls.size();
    Harness.push_back(std::move(HF));
  }
  // One program for every file; the device is chosen when it runs.
  std::string Source = generateHarness(Harness, verify::Mode::Meta);
  llvm::json::Value PredictedJSON = Opts.PredictionReport(Predicted);
  annotatePredictions(PredictedJSON, Predicted, Probed, TextSizes);
  // A function with parameters is predicted once per draw: its formulas
  // evaluated under the inputs it runs with.
  if (llvm::json::Object *Root = PredictedJSON.getAsObject())
    if (llvm::json::Array *Fns = Root->getArray("functions")) {
      llvm::json::Array Expanded;
      for (size_t I = 0; I < Fns->size(); ++I) {
        if (I >= PredictedDraws.size() || PredictedDraws[I].empty()) {
          Expanded.push_back(std::move((*Fns)[I]));
          continue;
        }
        for (size_t K = 0; K < PredictedDraws[I].size(); ++K) {
          llvm::json::Value Copy = (*Fns)[I];
          if (llvm::json::Object *F = Copy.getAsObject())
            instantiatePrediction(*F, PredictedDraws[I][K], static_cast<int>(K));
          Expanded.push_back(std::move(Copy));
        }
      }
      *Fns = std::move(Expanded);
    }

  if (!Opts.EmitDir.empty()) {
    llvm::json::Value Emitted = PredictedJSON;
    if (auto *Root = Emitted.getAsObject())
      (*Root)["generator"] = EmitMarker;
    std::string PredictedText;
    llvm::raw_string_ostream PS(PredictedText);
    PS << llvm::formatv("{0:2}", Emitted) << "\n";
    PS.flush();
    auto IsOurs = [](const std::string &Name, llvm::StringRef Contents) {
      if (Name == "predicted.json") {
        auto V = llvm::json::parse(Contents);
        if (!V) {
          llvm::consumeError(V.takeError());
          return false;
        }
        const llvm::json::Object *O = V->getAsObject();
        return O && O->getString("generator") == std::optional<llvm::StringRef>(EmitMarker);
      }
      return startsWithMarker(Contents, Name == "harness.cpp" ? "//" : "#");
    };
    std::string Problem = writeEmittedFiles(
        Opts.EmitDir,
        {{"harness.cpp", Source},
         {"CMakeLists.txt", verify::generateCMakeLists(UserFlags)},
         {"predicted.json", PredictedText}},
        Opts.Force, IsOurs);
    if (!Problem.empty()) {
      Err << "tensor-accountant: error: " << Problem << "\n";
      return 2;
    }
    OS << "wrote " << Opts.EmitDir << "/harness.cpp, CMakeLists.txt and "
       << "predicted.json\n"
       << "build and run it where LibTorch (and the device) is:\n"
       << "  cmake -S " << Opts.EmitDir << " -B build -DCMAKE_PREFIX_PATH=<libtorch>"
       << " && cmake --build build\n"
       << "  ./build/harness --mode " << verify::modeName(Opts.Mode)
       << " --function-timeout " << Opts.TimeoutSeconds << " --max-live-bytes "
       << Opts.MaxBytes << " > measured.json\n"
       << "then compare here:\n"
       << "  tensor-accountant --compare-measured=measured.json <the same files>\n";
    return 0;
  }

  std::string MeasuredText;
  std::string RanOn = verify::modeName(Opts.Mode);
  if (!Opts.MeasuredFile.empty()) {
    auto Buffer = llvm::MemoryBuffer::getFile(Opts.MeasuredFile);
    if (!Buffer) {
      Err << "tensor-accountant: error: cannot read '" << Opts.MeasuredFile
          << "'\n";
      return 2;
    }
    MeasuredText = (*Buffer)->getBuffer().str();
  } else {
    auto Install = verify::findLibTorch(Opts.Mode == verify::Mode::CUDA);
    if (Interrupted())
      return 2;
    if (!Install) {
      Err << "tensor-accountant: error: " << llvm::toString(Install.takeError())
          << "\n";
      return 2;
    }
    Install->UserFlags = UserFlags;
    Err << "tensor-accountant: building the verification program against "
        << Install->Description << "\n";
    std::string Log;
    auto Exe = verify::buildHarness(Source, *Install, Log);
    if (!Exe) {
      std::string Why = llvm::toString(Exe.takeError());
      if (Interrupted())
        return 2;
      Err << "tensor-accountant: error: " << Why << "\n";
      return 2;
    }
    verify::RunLimits Limits;
    Limits.FunctionSeconds = Opts.TimeoutSeconds;
    Limits.Functions = FunctionCount;
    Limits.MaxLiveBytes = Opts.MaxBytes;
    auto Out = verify::runHarness(*Exe, {"--mode", verify::modeName(Opts.Mode)},
                                  Limits, Log);
    verify::removeHarnessDir(*Exe);
    if (!Out) {
      std::string Why = llvm::toString(Out.takeError());
      if (Interrupted())
        return 2;
      Err << "tensor-accountant: error: " << Why << "\n";
      return 2;
    }
    MeasuredText = *Out;
  }
  auto Measured = parseBoundedJSON(MeasuredText);
  if (!Measured) {
    Err << "tensor-accountant: error: the measured output is not JSON: "
        << llvm::toString(Measured.takeError()) << "\n";
    return 2;
  }

  if (const auto *Root = Measured->getAsObject())
    if (auto Mode = Root->getString("mode"))
      RanOn = Mode->str();
  std::vector<verify::Verdict> Verdicts = verify::compare(PredictedJSON, *Measured);

  // What the harness said about each function it ran.
  struct RunFacts {
    std::string File, Device, Fallback, Error, Stopped;
    int64_t Draw = -1;
  };
  std::vector<std::pair<std::string, RunFacts>> Runs; // by function name
  if (const auto *Root = Measured->getAsObject())
    if (const auto *Fns = Root->getArray("functions"))
      for (const auto &F : *Fns)
        if (const auto *O = F.getAsObject()) {
          RunFacts R;
          R.File = O->getString("file").value_or("").str();
          R.Device = O->getString("device").value_or(RanOn).str();
          R.Fallback = O->getString("fallback_reason").value_or("").str();
          R.Error = O->getString("error").value_or("").str();
          R.Stopped = O->getString("stopped").value_or("").str();
          R.Draw = O->getInteger("draw").value_or(-1);
          Runs.push_back({O->getString("function").value_or("").str(), R});
        }
  auto FactsFor = [&](const std::string &File, const std::string &Function,
                      int Draw) {
    const RunFacts *Any = nullptr;
    for (const auto &[Name, R] : Runs)
      if (Name == Function && R.Draw == Draw) {
        if (sameFile(R.File, File))
          return &R;
        if (!Any)
          Any = &R;
      }
    return Any;
  };

  // Every function (and draw) that ran, in report order, even one without
  // verdicts.
  std::vector<FunctionVerdicts> Functions;
  std::map<std::tuple<std::string, std::string, int>, size_t> FunctionIndex;
  for (size_t I = 0; I < Predicted.size(); ++I) {
    const FunctionTrace &T = Predicted[I];
    size_t N = std::max<size_t>(1, PredictedDraws[I].size());
    for (size_t K = 0; K < N; ++K) {
      int Draw = PredictedDraws[I].empty() ? -1 : static_cast<int>(K);
      if (FunctionIndex.emplace(std::make_tuple(T.File, T.Name, Draw), Functions.size())
              .second)
        Functions.push_back({T.File, T.Name, Draw,
                             Draw < 0 ? "" : PredictedDraws[I][K].Text, {}, {}});
    }
  }
  for (const verify::Verdict &V : Verdicts) {
    auto Key = std::make_tuple(V.File, V.Function, V.Draw);
    auto It = FunctionIndex.find(Key);
    if (It == FunctionIndex.end()) {
      It = FunctionIndex.emplace(Key, Functions.size()).first;
      Functions.push_back({V.File, V.Function, V.Draw, "", {}, {}});
    }
    FunctionVerdicts &FV = Functions[It->second];
    if (V.Name.empty()) {
      FV.Totals.push_back(&V);
      continue;
    }
    auto T = std::find_if(FV.Tensors.begin(), FV.Tensors.end(), [&](const auto &E) {
      return std::get<0>(E) == V.Name && std::get<1>(E) == V.Line;
    });
    if (T == FV.Tensors.end()) {
      FV.Tensors.emplace_back(V.Name, V.Line, std::vector<const verify::Verdict *>{});
      T = std::prev(FV.Tensors.end());
    }
    std::get<2>(*T).push_back(&V);
  }

  int Match = 0, Mismatch = 0, Unverified = 0, TensorCount = 0;
  int TotalsMatch = 0, TotalsMismatch = 0, TotalsUnverified = 0;
  auto Tally = [](const std::vector<const verify::Verdict *> &Vs) {
    bool AnyMismatch = false, AnyUnverified = false;
    for (const verify::Verdict *V : Vs) {
      AnyMismatch |= V->Result == verify::Verdict::Mismatch;
      AnyUnverified |= V->Result == verify::Verdict::Unverified;
    }
    return AnyMismatch ? verify::Verdict::Mismatch
           : AnyUnverified ? verify::Verdict::Unverified
                           : verify::Verdict::Match;
  };
  llvm::json::Array JSONFunctions;
  for (const FunctionVerdicts &FV : Functions) {
    const RunFacts *R = FactsFor(FV.File, FV.Function, FV.Draw);
    std::string Device = R ? R->Device : "";
    if (!Opts.JSON) {
      OS << FV.Function;
      if (FV.Draw >= 0)
        OS << " with " << FV.Inputs;
      if (!R) {
        OS << " (not in the measured output)\n";
      } else {
        OS << " (ran on " << Device;
        if (!R->Fallback.empty())
          OS << "; meta lacks a kernel: " << R->Fallback;
        OS << ")\n";
      }
    }
    llvm::json::Array JSONVerdicts;
    for (const auto &[Name, Line, Fields] : FV.Tensors) {
      ++TensorCount;
      verify::Verdict::Outcome O = Tally(Fields);
      (O == verify::Verdict::Mismatch ? Mismatch
       : O == verify::Verdict::Unverified ? Unverified
                                          : Match)++;
      for (const verify::Verdict *V : Fields)
        JSONVerdicts.push_back(verify::toJSON(*V));
      if (Opts.JSON)
        continue;
      const char *Word = O == verify::Verdict::Mismatch     ? "MISMATCH"
                         : O == verify::Verdict::Unverified ? "unverified"
                                                            : "match";
      OS << "  " << Name << " (line " << Line << "): " << Word << "\n";
      for (const verify::Verdict *V : Fields) {
        if (V->Result == verify::Verdict::Match && O == verify::Verdict::Match &&
            V->Field != "shape" && V->Field != "storage_bytes")
          continue;
        if (V->Result == verify::Verdict::Match && O != verify::Verdict::Match)
          continue;
        OS << "      " << V->Field << ": predicted " << shortValue(V->Predicted)
           << ", measured " << shortValue(V->Measured);
        if (V->Result != verify::Verdict::Match)
          OS << "  [" << verify::outcomeName(V->Result) << "]";
        if (!V->Note.empty())
          OS << "  (" << V->Note << ")";
        OS << "\n";
      }
    }
    for (const verify::Verdict *V : FV.Totals) {
      (V->Result == verify::Verdict::Mismatch     ? TotalsMismatch
       : V->Result == verify::Verdict::Unverified ? TotalsUnverified
                                                  : TotalsMatch)++;
      JSONVerdicts.push_back(verify::toJSON(*V));
      if (Opts.JSON)
        continue;
      OS << "  " << fieldLabel(V->Field) << ": predicted " << shortValue(V->Predicted)
         << ", measured " << shortValue(V->Measured) << "  ["
         << (V->Result == verify::Verdict::Mismatch ? "MISMATCH"
                                                    : verify::outcomeName(V->Result))
         << "]";
      if (!V->Note.empty())
        OS << "  (" << V->Note << ")";
      OS << "\n";
    }
    llvm::json::Object F{{"file", FV.File},
                         {"function", FV.Function},
                         {"device", R ? llvm::json::Value(Device) : llvm::json::Value(nullptr)},
                         {"verdicts", std::move(JSONVerdicts)}};
    if (R && !R->Fallback.empty())
      F["fallback_reason"] = R->Fallback;
    if (R && !R->Error.empty())
      F["error"] = R->Error;
    if (R && !R->Stopped.empty())
      F["stopped"] = R->Stopped;
    if (FV.Draw >= 0) {
      F["draw"] = FV.Draw;
      F["inputs"] = FV.Inputs;
    }
    JSONFunctions.push_back(std::move(F));
  }
  int AnyMismatch = Mismatch + TotalsMismatch;
  if (Opts.JSON) {
    llvm::json::Array NotVerified;
    for (const SkippedFunction &S : Skipped)
      NotVerified.push_back(llvm::json::Object{
          {"file", S.File}, {"function", S.Function}, {"reason", S.Reason}});
    llvm::json::Object Doc{
        {"mode", RanOn},
        {"functions", std::move(JSONFunctions)},
        {"not_verified", std::move(NotVerified)},
        {"summary",
         llvm::json::Object{
             {"tensors", llvm::json::Object{{"match", Match},
                                            {"mismatch", Mismatch},
                                            {"unverified", Unverified}}},
             {"function_results", llvm::json::Object{{"match", TotalsMatch},
                                                     {"mismatch", TotalsMismatch},
                                                     {"unverified", TotalsUnverified}}}}}};
    OS << llvm::formatv("{0:2}", llvm::json::Value(std::move(Doc))) << "\n";
  } else {
    for (const SkippedFunction &S : Skipped)
      OS << "not verified: " << S.Function << ": " << S.Reason << "\n";
    OS << "verify (" << RanOn << "): " << TensorCount << " tensors: " << Match
       << " match, " << Mismatch << " mismatch, " << Unverified << " unverified; "
       << (TotalsMatch + TotalsMismatch + TotalsUnverified)
       << " function results (throws, peak, allocated): " << TotalsMatch << " match, "
       << TotalsMismatch << " mismatch, " << TotalsUnverified << " unverified\n";
  }
  OS.flush();
  if (Interrupted())
    return 2;
  return AnyMismatch > 0 ? 1 : 0;
}

} // namespace tma
