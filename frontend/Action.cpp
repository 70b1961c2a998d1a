#include "frontend/Action.h"
#include "frontend/AstQueries.h"
#include "frontend/GradMode.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Sema/Sema.h"

#include <chrono>

using namespace clang;

namespace tma {

bool derivesFromModule(const clang::CXXRecordDecl *RD, int Depth); // Modules.cpp

namespace {

/// The constructors of user module templates (`ResNetImpl<B>::ResNetImpl`,
/// defined out of the class) that nothing instantiated: a holder
/// (ModuleHolder's forwarding constructor) and std::make_shared call them,
/// and those libraries' bodies are skipped, so Sema never saw the use.
/// Instantiating them gives the analysis the layers they build, as a
/// compiler would.
void instantiateModuleConstructors(Sema &S, DeclContext *DC, int Depth = 0) {
  if (Depth > 8)
    return;
  for (Decl *D : DC->decls()) {
    if (!keepsFunctionBody(D))
      continue;
    if (auto *NS = dyn_cast<NamespaceDecl>(D)) {
      instantiateModuleConstructors(S, NS, Depth + 1);
      continue;
    }
    auto *CT = dyn_cast<ClassTemplateDecl>(D);
    if (!CT)
      continue;
    for (ClassTemplateSpecializationDecl *Spec : CT->specializations()) {
      if (!Spec->hasDefinition() || !derivesFromModule(Spec, 0))
        continue;
      for (CXXConstructorDecl *C : Spec->ctors())
        if (!C->isImplicit() && !C->hasBody() &&
            C->getTemplateSpecializationKind() == TSK_ImplicitInstantiation)
          if (const FunctionDecl *Pattern = C->getTemplateInstantiationPattern();
              Pattern && Pattern->hasBody())
            S.InstantiateFunctionDefinition(C->getLocation(), C,
                                            /*Recursive=*/true,
                                            /*DefinitionRequired=*/false,
                                            /*AtEndOfTU=*/true);
    }
  }
}

class AnalysisConsumer : public ASTConsumer {
public:
  AnalysisConsumer(CompilerInstance &CI, std::string File,
                   std::vector<FileAnalysis> &Results,
                   const TranslationUnitCallback &OnTU,
                   const AnalysisOptions &Settings)
      : CI(CI), File(std::move(File)), Results(Results), OnTU(OnTU),
        Settings(Settings) {}

  // Only consulted because SkipFunctionBodies is on: keep the bodies of
  // the user's code (the main file, project headers, companion sources),
  // skip the libraries' and CUDA device code (a kernel's body may use
  // device intrinsics no host declaration has).
  bool shouldSkipFunctionBody(Decl *D) override {
    return !keepsFunctionBody(D) || isDeviceOnlyFunction(D);
  }

  void HandleTranslationUnit(ASTContext &Ctx) override {
    FileAnalysis FA;
    FA.File = File;
    if (CI.getDiagnostics().hasErrorOccurred()) {
      FA.CompileErrors = true;
      Results.push_back(std::move(FA));
      return;
    }
    if (CI.hasSema())
      instantiateModuleConstructors(CI.getSema(), Ctx.getTranslationUnitDecl());
    AnalysisOptions Opts = Settings;
    Opts.DisplayFile = FA.File;
    Opts.Version = detectTorchVersion(CI.getPreprocessor());
    Opts.Saves = autogradSavesFor(CI.getPreprocessor());
    auto Start = std::chrono::steady_clock::now();
    FA.Traces = analyzeTranslationUnit(Ctx, Opts);
    FA.AnalysisSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - Start)
                             .count();
    if (OnTU)
      OnTU(Ctx, File, FA.Traces);
    Results.push_back(std::move(FA));
  }

private:
  CompilerInstance &CI;
  std::string File;
  std::vector<FileAnalysis> &Results;
  const TranslationUnitCallback &OnTU;
  const AnalysisOptions &Settings;
};

class AnalysisAction : public ASTFrontendAction {
public:
  AnalysisAction(std::vector<FileAnalysis> &Results,
                 const TranslationUnitCallback &OnTU, const AnalysisOptions &Settings)
      : Results(Results), OnTU(OnTU), Settings(Settings) {}

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI,
                                                 StringRef InFile) override {
    CI.getFrontendOpts().SkipFunctionBodies = true;
    return std::make_unique<AnalysisConsumer>(CI, InFile.str(), Results, OnTU,
                                              Settings);
  }

private:
  std::vector<FileAnalysis> &Results;
  const TranslationUnitCallback &OnTU;
  const AnalysisOptions &Settings;
};

class Factory : public tooling::FrontendActionFactory {
public:
  Factory(std::vector<FileAnalysis> &Results, TranslationUnitCallback OnTU,
          AnalysisOptions Settings)
      : Results(Results), OnTU(std::move(OnTU)), Settings(std::move(Settings)) {}
  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<AnalysisAction>(Results, OnTU, Settings);
  }

private:
  std::vector<FileAnalysis> &Results;
  TranslationUnitCallback OnTU;
  AnalysisOptions Settings;
};

} // namespace

std::unique_ptr<tooling::FrontendActionFactory>
makeAnalysisActionFactory(std::vector<FileAnalysis> &Results,
                          TranslationUnitCallback OnTU, AnalysisOptions Settings) {
  return std::make_unique<Factory>(Results, std::move(OnTU), std::move(Settings));
}

} // namespace tma
