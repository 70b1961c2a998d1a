// Planning a --verify run: which functions of a file the harness calls and
// with which inputs, where its probes and device redirections go, and what
// each call is predicted to do under its inputs (the rules are in Verify.h).
#include "driver/VerifyPlan.h"
#include "model/Units.h"

#include <cstring>
#include <set>

namespace tma {

namespace {

constexpr size_t NoOffset = ~size_t(0);

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

std::string noProbeReason(const Statement &S, size_t TextSize) {
  if (S.Where.InMacro)
    return "the binding is inside a macro expansion";
  if (!S.Insertable)
    return "the statement is not directly in a block, so nothing can follow it";
  if (S.EndOffset == NoOffset || S.EndOffset > TextSize)
    return "the statement's end is not in the file";
  return "";
}

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

} // namespace tma
