#include "driver/Analysis.h"
#include "driver/Toolchain.h"

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/StringRef.h"

#include <map>

using namespace clang::tooling;

namespace tma {

std::unique_ptr<CompilationDatabase>
makeFixedDatabase(const std::vector<std::string> &UserFlags, bool HaveUserFlags,
                  std::string &Error) {
  std::vector<std::string> Flags = UserFlags;
  if (!HaveUserFlags)
    Flags.push_back("-std=c++17");
  bool UserGaveTorch = false;
  for (const std::string &F : UserFlags)
    UserGaveTorch |= llvm::StringRef(F).contains("torch");
  if (!UserGaveTorch) {
    auto Torch = findLibTorchHeaders();
    if (!Torch) {
      Error = "LibTorch headers not found: install Debian's libtorch-dev, set "
              "Torch_DIR to a LibTorch, or pass include flags after --";
      return nullptr;
    }
    for (const std::string &Dir : Torch->IncludeDirs)
      Flags.push_back("-isystem" + Dir);
  }
  return std::make_unique<FixedCompilationDatabase>(".", Flags);
}

AnalysisRun analyzeFiles(const CompilationDatabase &DB,
                         const std::vector<std::string> &Files,
                         TranslationUnitCallback OnTranslationUnit) {
  ClangTool Tool(DB, Files);
  Tool.appendArgumentsAdjuster(getClangStripOutputAdjuster());
  Tool.appendArgumentsAdjuster(getClangSyntaxOnlyAdjuster());
  std::string ResourceDir = clangResourceDir();
  if (!ResourceDir.empty())
    Tool.appendArgumentsAdjuster(getInsertArgumentAdjuster(
        ("-resource-dir=" + ResourceDir).c_str(), ArgumentInsertPosition::END));
  // LibTorch's headers warn under clang; the user's own warnings are not
  // this tool's business.
  Tool.appendArgumentsAdjuster(
      getInsertArgumentAdjuster("-Wno-everything", ArgumentInsertPosition::END));

  AnalysisRun Run;
  auto Factory = makeAnalysisActionFactory(Run.Files, std::move(OnTranslationUnit));
  Run.Failed = Tool.run(Factory.get()) != 0;

  // ClangTool resolves paths; report each file as the user named it.
  std::map<std::string, std::string> GivenName;
  for (const std::string &F : Files)
    GivenName[getAbsolutePath(F)] = F;
  for (FileAnalysis &FA : Run.Files) {
    auto It = GivenName.find(FA.File);
    if (It == GivenName.end())
      continue;
    FA.File = It->second;
    for (FunctionTrace &T : FA.Traces)
      T.File = It->second;
    Run.Failed |= FA.CompileErrors;
  }
  if (Run.Files.size() < Files.size())
    Run.Failed = true;
  return Run;
}

} // namespace tma
