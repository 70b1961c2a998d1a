// The frontend action the CLI runs through LibTooling.
//
// It parses with function bodies skipped everywhere except the main file:
// the analysis reads only the user's function bodies, and skipping the
// bodies of LibTorch's header functions removes most of the parse time
// (and with them most of the end-of-TU template instantiation).
#pragma once

#include "frontend/Analyzer.h"

#include "clang/Tooling/Tooling.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tma {

struct FileAnalysis {
  std::string File;
  std::vector<FunctionTrace> Traces;
  bool CompileErrors = false;
  /// Parsed as CUDA host code (driver/CudaHostCode.h): --verify's C++
  /// harness cannot compile it.
  bool ParsedAsCuda = false;
  /// What compiling the file's code elsewhere needs (--verify's harness):
  /// the include directories and macros of its compile command, absolute,
  /// and its own directory for quoted includes.
  std::vector<std::string> BuildFlags;
  /// Seconds spent in the analysis itself, after parsing (for --stats).
  double AnalysisSeconds = 0;
  /// The file's bytes as they were analysed (the driver reads them once,
  /// before parsing: driver/SourceFiles.h). Checks, NOLINT, --verify and
  /// --fix read these, never the file again: it may have changed since.
  std::string Source;
};

/// Called once per translation unit, after it parsed without errors, while
/// its ASTContext is alive (checks run here, since they need the AST's
/// source manager for diagnostics).
using TranslationUnitCallback =
    std::function<void(clang::ASTContext &, const std::string &File,
                       std::vector<FunctionTrace> &)>;

std::unique_ptr<clang::tooling::FrontendActionFactory>
makeAnalysisActionFactory(std::vector<FileAnalysis> &Results,
                          TranslationUnitCallback OnTranslationUnit = {},
                          AnalysisOptions Settings = {});

} // namespace tma
