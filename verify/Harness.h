// Verification against real LibTorch: turn analysed source into a probe
// program, build it, run it, and compare what LibTorch reports with what the
// analysis predicted.
//
// The library deliberately knows nothing about Clang. The frontend finds the
// bindings (ProbeSite) and the device expressions (DeviceSite) and hands them
// over as byte offsets into the file text; everything here is text editing,
// process management and JSON. That keeps the harness generator testable
// with hand-written offsets and keeps the verify path usable from any front
// end (CLI, clang-tidy plugin, editor).
//
// The pipeline:
//   generateHarness   one C++ translation unit: <torch/torch.h>, the probe
//                     runtime (namespace tma_probe), every user file with
//                     probes inserted and device expressions redirected to a
//                     device chosen at run time, and a main() that runs each
//                     function in its own forked process.
//   findLibTorch      where the headers and libraries are (Debian package,
//                     Torch_DIR / CMAKE_PREFIX_PATH, or a PyTorch install).
//   buildHarness      g++ (or $CXX) -std=c++17 -O0, through ccache when present.
//   runHarness        runs the program with a time limit per function and a
//                     memory limit per CPU run; returns its stdout,
//                     one JSON document (the "measured" report).
//   compare           measured vs predicted, one Verdict per tensor field.
#pragma once

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tma::verify {

/// A named tensor binding to observe: the probe statement
/// `::tma_probe::record("<Function>", "<Name>", <Line>, <Name>);` is inserted
/// at InsertOffset (right after the binding statement's ';').
struct ProbeSite {
  std::string Function; ///< qualified, callable from global scope ("ns::f")
  std::string Name;     ///< the C++ variable bound
  unsigned Line = 0;    ///< line where the binding statement starts
  size_t InsertOffset = 0;
};

/// An expression naming a device, replaced by the device chosen at run time.
struct DeviceSite {
  size_t Begin = 0, End = 0; ///< byte range [Begin, End) in the file text
  enum Kind {
    DeviceTypeExpr,     ///< e.g. torch::kCUDA (a c10::DeviceType)
    DeviceStringLiteral ///< e.g. "cuda:0"
  } K = DeviceTypeExpr;
};

/// An argument the harness makes right before a call (docs/verify.md,
/// "Functions with parameters").
struct HarnessInput {
  std::string Name; ///< the parameter's name: its probe's and a base's name
  bool IsTensor = false;
  // A tensor: fresh and contiguous on the run's device (empty on meta,
  // zeros elsewhere), its storage named after the parameter (a base).
  std::vector<int64_t> Sizes;
  std::string ScalarType; ///< c10::ScalarType enumerator: "Float", "Long"
  bool Move = false; ///< passed with std::move (an && parameter)
  // An integer.
  std::string IntegerType; ///< a C++ type that names itself anywhere: "long"
  int64_t Value = 0;
};

/// One call of a function with made arguments: one per draw of inputs.
struct HarnessCall {
  std::string Function; ///< qualified, callable from global scope
  int Draw = 0;         ///< the draw's index, in the output's "draw"
  std::string Inputs;   ///< the draw for people: `x (2, 3) float32, n=2`
  std::vector<HarnessInput> Args;
};

struct HarnessFile {
  std::string Path; ///< used in #line directives and in the "file" output
  std::string Text; ///< the file's full text; offsets refer to it
  std::vector<ProbeSite> Probes;
  std::vector<DeviceSite> Devices;
  std::vector<std::string> Functions; ///< parameterless functions to call, in order
  std::vector<HarnessCall> Calls;     ///< calls with made arguments, after them
};

enum class Mode { Meta, CPU, CUDA };

/// "meta", "cpu" or "cuda": the spelling used by the harness's --mode flag
/// and by the "mode" field of its output.
const char *modeName(Mode M);

/// One C++ translation unit. The Mode is the default; the program accepts
/// `--mode meta|cpu|cuda` to override it, `--file N` to run only the
/// functions of the N-th file, `--function-timeout S` to bound each
/// function (one still running after S seconds is killed and reported with
/// an "error"; the next one gets its own S seconds), and `--max-live-bytes
/// B` to bound the live CPU memory of a function in any mode (default 8
/// GiB): an allocation past it stops the function, which is reported with
/// "stopped": "memory-limit". Sites that
/// are out of range or overlap an earlier site are skipped and listed in a
/// comment at the top of the output.
std::string generateHarness(const std::vector<HarnessFile> &Files, Mode M);

/// A CMakeLists.txt that builds harness.cpp (the output of generateHarness)
/// with find_package(Torch), for --emit-harness.
/// UserFlags: the analysed files' include directories and macros.
std::string generateCMakeLists(const std::vector<std::string> &UserFlags = {});

struct LibTorchInstall {
  std::vector<std::string> IncludeDirs;
  std::vector<std::string> LibDirs;
  std::vector<std::string> Libs; ///< without "lib" and ".so": "torch", "c10"
  /// Preprocessor definitions the install needs, e.g.
  /// "_GLIBCXX_USE_CXX11_ABI=0" for older PyTorch wheels, and
  /// "TMA_PROBE_HAS_CUDA=1" when the CUDA memory statistics can be compiled.
  std::vector<std::string> Defines;
  /// Flags the analysed files' own code needs (their include directories
  /// and macros), placed before LibTorch's on the compile line.
  std::vector<std::string> UserFlags;
  std::string Description; ///< where it was found, version, CPU/CUDA
  std::string Version;     ///< TORCH_VERSION from torch/version.h, if read
  bool HasCUDA = false;    ///< libtorch_cuda / libc10_cuda are present
};

/// Looks, in order, at $Torch_DIR, each entry of $CMAKE_PREFIX_PATH, the
/// Debian libtorch-dev layout under /usr, and `python3 -c 'import torch'`
/// (bounded by a timeout; a missing python3 or torch is not an error). With
/// PreferCUDA the first install that has CUDA wins over earlier CPU-only ones.
/// Callers that compile user files with their own headers append those
/// directories to IncludeDirs before building.
llvm::Expected<LibTorchInstall> findLibTorch(bool PreferCUDA = false);

/// TORCH_VERSION ("1.13.1", "2.3.1+cu121") from <ApiInclude>/torch/version.h,
/// where ApiInclude is the directory holding torch/torch.h; "" when the file
/// or the macro is missing.
std::string readTorchVersion(llvm::StringRef ApiInclude);

namespace detail {
/// The inputs of findLibTorch, separated from the process environment so
/// tests can point the search at fake installs.
struct LibTorchSearch {
  std::string TorchDir;                    ///< $Torch_DIR; empty if unset
  std::vector<std::string> PrefixPath;     ///< $CMAKE_PREFIX_PATH entries
  std::vector<std::string> SystemPrefixes; ///< {"/usr"} in production
  std::string Python;     ///< program to ask; empty: do not ask
  unsigned PythonTimeoutSeconds = 30;
};
LibTorchSearch searchFromEnvironment();
llvm::Expected<LibTorchInstall> findLibTorchWith(const LibTorchSearch &S,
                                                 bool PreferCUDA);
} // namespace detail

/// Writes the source into a fresh temporary directory and compiles it. On
/// success returns the path of the executable (the directory is kept: the
/// caller may run it several times; removeHarnessDir deletes it). On a
/// compile failure the error quotes the compiler's first error lines. Log
/// receives the commands and the full compiler output. The compiler runs in
/// a process group that dies with the tool (Process.h); interrupted, the
/// directory is removed.
llvm::Expected<std::string> buildHarness(const std::string &HarnessSource,
                                         const LibTorchInstall &Install,
                                         std::string &Log);

/// The limits a harness run is given (passed as its own flags).
struct RunLimits {
  unsigned FunctionSeconds = 0; ///< per function (--function-timeout); 0: none
  size_t Functions = 1;         ///< how many it runs: sizes the backstop
  int64_t MaxLiveBytes = 0;     ///< --max-live-bytes; 0: the harness default
};

/// Runs a built harness with extra arguments (e.g. {"--mode", "cpu"}) and
/// the limits, returning its stdout. The harness enforces the per-function
/// limit itself, so a slow function is reported inside the JSON; the whole
/// program is killed (with everything it started) only past a backstop of
/// Functions x (FunctionSeconds + 2) + 10 s, which is an error. A signal
/// caught by an InterruptScope (Process.h) meanwhile is an error too.
llvm::Expected<std::string> runHarness(const std::string &Executable,
                                       const std::vector<std::string> &Args,
                                       const RunLimits &Limits,
                                       std::string &Log);

/// Deletes the directory buildHarness created for Executable.
void removeHarnessDir(const std::string &Executable);

/// buildHarness + runHarness with no extra arguments; the temporary
/// directory is removed on success and kept (named in the error) on failure.
llvm::Expected<std::string> buildAndRun(const std::string &HarnessSource,
                                        const LibTorchInstall &Install,
                                        const RunLimits &Limits,
                                        std::string &Log);

/// The outcome of checking one predicted field against LibTorch.
struct Verdict {
  std::string File; ///< the predicted function's file
  std::string Function, Name; ///< Name is empty for a function-level verdict
  unsigned Line = 0;
  /// A tensor field (shape strides dtype storage_bytes storage_offset base
  /// contiguous; "defined" for a row the tool says is undefined), "probe"
  /// (the binding was never observed), "binding" (an
  /// observed tensor the report lacks), or function level: "throws",
  /// "peak_live_bytes" and "allocated_bytes" (CPU runs only),
  /// "cuda_peak_allocated_bytes" and "cuda_peak_reserved_bytes" (CUDA runs).
  std::string Field;
  /// The draw of inputs the function ran with ("draw" in both reports);
  /// -1 for a function called without arguments.
  int Draw = -1;
  std::string Predicted, Measured; ///< JSON text; strings without quotes
  enum Outcome { Match, Mismatch, Unverified } Result = Unverified;
  std::string Note;
};

/// Predicted: the tool's JSON report (report-schema.md; tensors also carry
/// "storage_offset" and optionally "unknown_reason", and from --verify
/// "probed" and "conditional"; a function may carry "throws"). Measured:
/// the harness output. Functions are matched by name and "draw" (a function
/// with parameters runs once per draw of inputs; the predictions for each
/// draw are the report's expressions evaluated under it, driver/Verify.cpp).
/// Tensors are matched by (function, name, line) and by
/// order of occurrence within that key. On a CPU run the functions' peak
/// and allocated bytes are compared too, allowing 16 B per allocation for
/// LibTorch's scalar wrappers (Compare.cpp, rule 6).
std::vector<Verdict> compare(const llvm::json::Value &Predicted,
                             const llvm::json::Value &Measured);

const char *outcomeName(Verdict::Outcome O); ///< "match" "mismatch" "unverified"
llvm::json::Value toJSON(const Verdict &V);

} // namespace tma::verify
