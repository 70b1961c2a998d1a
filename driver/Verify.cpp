#include "driver/Verify.h"
#include "driver/JSONInput.h"
#include "driver/Report.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>
#include <set>

namespace tma {

namespace {

constexpr size_t NoOffset = ~size_t(0);

/// Verdicts of one tensor (all its fields), in report order.
struct TensorVerdicts {
  std::string Function, Name;
  unsigned Line = 0;
  std::vector<const verify::Verdict *> Fields;
};

std::string shortValue(const std::string &S) {
  return S.empty() ? "-" : S;
}

} // namespace

verify::HarnessFile harnessFileFor(const FileAnalysis &FA, const std::string &Text,
                                   const VerifyOptions &Opts,
                                   std::vector<std::string> &Skipped) {
  verify::HarnessFile HF;
  HF.Path = FA.File;
  HF.Text = Text;
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
    if (T.CallableName.empty()) {
      bool HasRows = false;
      for (const Binding &B : T.Bindings)
        HasRows |= !B.IsParameter;
      if (HasRows)
        Skipped.push_back(T.Name + ": cannot be called without arguments");
      continue;
    }
    if (Opts.Mode != verify::Mode::Meta) {
      const auto &Peak = T.Summary.PeakLiveBytes;
      if (!Peak) {
        Skipped.push_back(T.Name + ": predicted peak unknown, not run on " +
                          verify::modeName(Opts.Mode));
        continue;
      }
      if (*Peak > Opts.MaxBytes) {
        Skipped.push_back(T.Name + ": predicted peak " + formatBytes(*Peak) +
                          " is over --verify-max-bytes (" +
                          formatBytes(Opts.MaxBytes) + ")");
        continue;
      }
    }
    HF.Functions.push_back(T.CallableName);
    for (const Binding &B : T.Bindings) {
      if (B.IsParameter || B.Statement >= T.Statements.size())
        continue;
      const Statement &S = T.Statements[B.Statement];
      if (!S.Insertable || S.EndOffset == NoOffset || S.EndOffset > Text.size())
        continue;
      HF.Probes.push_back({T.CallableName, B.Name, B.Where.Line, S.EndOffset});
    }
  }
  return HF;
}

int runVerification(const std::vector<FileAnalysis> &Files,
                    const VerifyOptions &Opts, llvm::raw_ostream &OS,
                    llvm::raw_ostream &Err) {
  std::vector<verify::HarnessFile> Harness;
  std::vector<FunctionTrace> Predicted;
  std::vector<std::string> Skipped;
  for (const FileAnalysis &FA : Files) {
    if (FA.CompileErrors)
      continue;
    auto Buffer = llvm::MemoryBuffer::getFile(FA.File);
    if (!Buffer) {
      Err << "tensor-accountant: error: cannot read '" << FA.File << "'\n";
      return 2;
    }
    verify::HarnessFile HF =
        harnessFileFor(FA, (*Buffer)->getBuffer().str(), Opts, Skipped);
    std::set<std::string> Called(HF.Functions.begin(), HF.Functions.end());
    for (const FunctionTrace &T : FA.Traces)
      if (Called.count(T.CallableName))
        Predicted.push_back(T);
    Harness.push_back(std::move(HF));
  }
  // One program for every file; the device is chosen when it runs.
  std::string Source = generateHarness(Harness, verify::Mode::Meta);
  llvm::json::Value PredictedJSON = toJSON(Predicted, {});

  if (!Opts.EmitDir.empty()) {
    if (std::error_code EC = llvm::sys::fs::create_directories(Opts.EmitDir)) {
      Err << "tensor-accountant: error: cannot create '" << Opts.EmitDir
          << "': " << EC.message() << "\n";
      return 2;
    }
    auto Write = [&](const std::string &Name, const std::string &Content) {
      llvm::SmallString<256> Path(Opts.EmitDir);
      llvm::sys::path::append(Path, Name);
      std::error_code EC;
      llvm::raw_fd_ostream Out(Path, EC);
      if (EC)
        return false;
      Out << Content;
      return true;
    };
    std::string PredictedText;
    llvm::raw_string_ostream PS(PredictedText);
    PS << llvm::formatv("{0:2}", PredictedJSON);
    PS.flush();
    if (!Write("harness.cpp", Source) ||
        !Write("CMakeLists.txt", verify::generateCMakeLists()) ||
        !Write("predicted.json", PredictedText)) {
      Err << "tensor-accountant: error: cannot write into '" << Opts.EmitDir
          << "'\n";
      return 2;
    }
    OS << "wrote " << Opts.EmitDir << "/harness.cpp, CMakeLists.txt and "
       << "predicted.json\n"
       << "build and run it where LibTorch (and the device) is:\n"
       << "  cmake -S " << Opts.EmitDir << " -B build -DCMAKE_PREFIX_PATH=<libtorch>"
       << " && cmake --build build\n"
       << "  ./build/harness --mode " << verify::modeName(Opts.Mode)
       << " > measured.json\n"
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
    if (!Install) {
      Err << "tensor-accountant: error: " << llvm::toString(Install.takeError())
          << "\n";
      return 2;
    }
    Err << "tensor-accountant: building the verification program against "
        << Install->Description << "\n";
    std::string Log;
    auto Exe = verify::buildHarness(Source, *Install, Log);
    if (!Exe) {
      Err << "tensor-accountant: error: " << llvm::toString(Exe.takeError())
          << "\n";
      return 2;
    }
    auto Out = verify::runHarness(
        *Exe, {"--mode", verify::modeName(Opts.Mode), "--deadline-seconds",
               std::to_string(Opts.TimeoutSeconds)},
        Opts.TimeoutSeconds, Log);
    verify::removeHarnessDir(*Exe);
    if (!Out) {
      Err << "tensor-accountant: error: " << llvm::toString(Out.takeError())
          << "\n";
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

  // Where each function ran (meta, or cpu after a missing meta kernel).
  std::map<std::string, std::string> Device, Fallback, Error;
  if (const auto *Root = Measured->getAsObject())
    if (const auto *Fns = Root->getArray("functions"))
      for (const auto &F : *Fns)
        if (const auto *O = F.getAsObject()) {
          std::string Name = O->getString("function").value_or("").str();
          Device[Name] = O->getString("device").value_or(RanOn).str();
          if (auto R = O->getString("fallback_reason"))
            Fallback[Name] = R->str();
          if (auto E = O->getString("error"))
            Error[Name] = E->str();
        }

  std::vector<TensorVerdicts> Tensors;
  std::map<std::tuple<std::string, std::string, unsigned>, size_t> Index;
  std::vector<const verify::Verdict *> FunctionLevel;
  int Match = 0, Mismatch = 0, Unverified = 0;
  for (const verify::Verdict &V : Verdicts) {
    if (V.Name.empty()) {
      FunctionLevel.push_back(&V);
      continue;
    }
    auto Key = std::make_tuple(V.Function, V.Name, V.Line);
    auto It = Index.find(Key);
    if (It == Index.end()) {
      It = Index.emplace(Key, Tensors.size()).first;
      Tensors.push_back({V.Function, V.Name, V.Line, {}});
    }
    Tensors[It->second].Fields.push_back(&V);
  }

  std::string Current;
  for (const TensorVerdicts &TV : Tensors) {
    if (TV.Function != Current) {
      Current = TV.Function;
      OS << TV.Function << " (ran on " << (Device.count(Current) ? Device[Current] : RanOn);
      if (Fallback.count(Current))
        OS << "; meta lacks a kernel: " << Fallback[Current];
      OS << ")\n";
    }
    bool AnyMismatch = false, AnyUnverified = false;
    for (const verify::Verdict *V : TV.Fields) {
      AnyMismatch |= V->Result == verify::Verdict::Mismatch;
      AnyUnverified |= V->Result == verify::Verdict::Unverified;
    }
    const char *Word = AnyMismatch ? "MISMATCH" : AnyUnverified ? "unverified" : "match";
    (AnyMismatch ? Mismatch : AnyUnverified ? Unverified : Match)++;
    OS << "  " << TV.Name << " (line " << TV.Line << "): " << Word << "\n";
    for (const verify::Verdict *V : TV.Fields) {
      if (V->Result == verify::Verdict::Match && !AnyMismatch && !AnyUnverified &&
          V->Field != "shape" && V->Field != "storage_bytes")
        continue;
      if (V->Result == verify::Verdict::Match && (AnyMismatch || AnyUnverified))
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
  for (const verify::Verdict *V : FunctionLevel) {
    OS << V->Function << ": " << V->Field << ": predicted "
       << shortValue(V->Predicted) << ", measured " << shortValue(V->Measured)
       << "  [" << verify::outcomeName(V->Result) << "]";
    if (!V->Note.empty())
      OS << " (" << V->Note << ")";
    OS << "\n";
    if (V->Result == verify::Verdict::Mismatch)
      ++Mismatch;
  }
  for (const std::string &S : Skipped)
    OS << "not verified: " << S << "\n";
  OS << "verify (" << RanOn << "): " << Tensors.size() << " tensors: " << Match
     << " match, " << Mismatch << " mismatch, " << Unverified
     << " unverified\n";
  return Mismatch > 0 ? 1 : 0;
}

} // namespace tma
