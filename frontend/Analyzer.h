// The frontend: Clang AST in, FunctionTraces out.
//
// analyzeTranslationUnit walks every function defined in the main file and
// evaluates its body statement by statement (FunctionEvaluator in
// Evaluator.cpp). Both front ends call it: the CLI from its ASTConsumer and
// the clang-tidy module from its checks, so the analysis is the same in
// both.
#pragma once

#include "model/AutogradSaves.h"
#include "model/Ops.h"
#include "model/Trace.h"

#include <memory>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class FunctionDecl;
class Preprocessor;
} // namespace clang

namespace tma {

struct AnalysisOptions {
  TorchVersion Version;
  /// The file name the report uses (as given on the command line).
  std::string DisplayFile;
  /// What the parsed LibTorch's autograd saves (frontend/GradMode.h);
  /// null when its header was not found.
  std::shared_ptr<const AutogradSaves> Saves;
  /// What torch::cuda::is_available() answers (--cuda-available); nullopt:
  /// not known, so a device chosen by it is not known either.
  std::optional<bool> CudaAvailable;
};

/// The LibTorch version from TORCH_VERSION_MAJOR/MINOR in the headers the
/// preprocessor has seen; 1.13 when torch/version.h was not included.
TorchVersion detectTorchVersion(const clang::Preprocessor &PP);

/// Analyses every function with a body in the main file, in source order.
std::vector<FunctionTrace> analyzeTranslationUnit(clang::ASTContext &Ctx,
                                                  const AnalysisOptions &Opts);

/// The name of a lambda body's trace, "<enclosing>::lambda@L<line of its
/// introducer>" (nested lambdas chain: "f::lambda@L3::lambda@L4"); empty
/// when FD is not a lambda's call operator. Both front ends name lambdas
/// so, and messages that name the function read the same in both.
std::string lambdaTraceName(const clang::FunctionDecl &FD);

/// Analyses one function definition (a lambda's under lambdaTraceName).
FunctionTrace analyzeFunction(clang::ASTContext &Ctx,
                              const clang::FunctionDecl &FD,
                              const AnalysisOptions &Opts);

} // namespace tma
