// The clang-tidy module: loads into the user's own clang-tidy-16 with
//   clang-tidy-16 --load=libTensorAccountantTidyModule.so -checks='torch-*'
//
// Every check comes from the same registry as the CLI (checks/Registry.h).
// One adapter class wraps any TorchCheck: clang-tidy parses, our frontend
// analyses each function once per translation unit (shared by all enabled
// checks), the check reads the trace, and its Diagnostics become clang
// diagnostics (warnings, notes at the cause, fix-its). NOLINT comments and
// .clang-tidy files are clang-tidy's own here.
#include "checks/Registry.h"
#include "frontend/Analyzer.h"
#include "frontend/GradMode.h"
#include "model/Assume.h"
#include "model/ShapeEnv.h"

#include "clang-tidy/ClangTidyCheck.h"
#include "clang-tidy/ClangTidyModule.h"
#include "clang-tidy/ClangTidyModuleRegistry.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Preprocessor.h"

#include <map>

using namespace clang;
using namespace clang::ast_matchers;

namespace tma {
namespace {

/// Traces of the current translation unit, shared by every torch-* check so
/// a function is analysed once however many checks are enabled.
std::map<const FunctionDecl *, FunctionTrace> &traceCache() {
  static std::map<const FunctionDecl *, FunctionTrace> Cache;
  return Cache;
}

class TidyOptionSource : public OptionSource {
public:
  TidyOptionSource(const tidy::ClangTidyCheck::OptionsView &View,
                   const tidy::ClangTidyCheck &Check, StringRef CheckName)
      : View(View), Check(Check), CheckName(CheckName.str()) {}
  std::optional<std::string> get(const std::string &LocalName) const override {
    if (auto V = View.get(LocalName))
      return V->str();
    return std::nullopt;
  }
  // clang-tidy's own wording for its checks' bad integer options.
  void invalidValue(const std::string &LocalName, const std::string &Value,
                    const std::string &Expected) const override {
    Check.configurationDiag(
        "invalid configuration value '%0' for option '%1'; expected %2")
        << Value << CheckName + "." + LocalName << Expected;
  }

private:
  const tidy::ClangTidyCheck::OptionsView &View;
  const tidy::ClangTidyCheck &Check;
  std::string CheckName;
};

class TorchTidyCheck : public tidy::ClangTidyCheck {
public:
  TorchTidyCheck(StringRef Name, tidy::ClangTidyContext *Context,
                 const CheckInfo &Info)
      : ClangTidyCheck(Name, Context), Context(Context),
        Impl(Info.Create(TidyOptionSource(Options, *this, Name))) {}

  bool isLanguageVersionSupported(const LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus17;
  }
  void registerPPCallbacks(const SourceManager &, Preprocessor *P,
                           Preprocessor *) override {
    PP = P;
  }
  void registerMatchers(MatchFinder *Finder) override {
    Finder->addMatcher(
        functionDecl(isDefinition(), isExpansionInMainFile()).bind("function"),
        this);
  }
  void onStartOfTranslationUnit() override { traceCache().clear(); }
  void storeOptions(tidy::ClangTidyOptions::OptionMap &Opts) override {
    OptionMap Values;
    Impl->storeOptions(Values);
    for (const auto &[Key, Value] : Values)
      Options.store(Opts, Key, Value);
  }

  void check(const MatchFinder::MatchResult &Result) override {
    const auto *FD = Result.Nodes.getNodeAs<FunctionDecl>("function");
    if (!FD || !FD->hasBody() || FD->isDependentContext() ||
        FD->isTemplateInstantiation())
      return;
    SourceManager &SM = *Result.SourceManager;
    auto &Cache = traceCache();
    auto It = Cache.find(FD);
    if (It == Cache.end()) {
      AnalysisOptions Opts;
      if (auto Entry = SM.getFileEntryRefForID(SM.getMainFileID()))
        Opts.DisplayFile = Entry->getName().str();
      if (PP) {
        Opts.Version = detectTorchVersion(*PP);
        Opts.Saves = autogradSavesFor(*PP);
      }
      // A lambda's trace is named as the CLI names it (lambdaTraceName).
      It = Cache.emplace(FD, analyzeFunction(*Result.Context, *FD, Opts)).first;
      bindAssumedValues(It->second);
    }
    std::vector<Diagnostic> Found;
    Impl->checkFunction(It->second, Found);
    for (const Diagnostic &D : Found)
      emit(SM, D);
  }

private:
  // The values for symbols of CheckOptions' tensor-accountant.Assume (the
  // CLI's --assume), so messages carry numbers next to formulas here too.
  void bindAssumedValues(FunctionTrace &T) {
    const auto &Opts = Context->getOptions().CheckOptions;
    auto V = Opts.find("tensor-accountant.Assume");
    if (V == Opts.end())
      return;
    std::string Error;
    auto Bindings = parseAssumeList(V->getValue().Value, Error);
    if (!Bindings) {
      configurationDiag("invalid configuration value for option "
                        "'tensor-accountant.Assume': %0")
          << Error;
      return;
    }
    if (T.Env)
      for (const AssumeBinding &B : *Bindings)
        T.Env->bind(B.Symbol, B.Value);
  }

  tidy::ClangTidyContext *Context;
  // Diagnostics go to the expansion location, as the CLI reports them
  // (SourceSpan's line and column): a finding inside a macro reads the same
  // in both front ends, with no macro backtrace notes in clang-tidy.
  SourceLocation at(const SourceManager &SM, uint64_t Raw) const {
    return SM.getExpansionLoc(SourceLocation::getFromRawEncoding(
        static_cast<SourceLocation::UIntTy>(Raw)));
  }
  SourceLocation atOffset(const SourceManager &SM, size_t Offset) const {
    return SM.getLocForStartOfFile(SM.getMainFileID())
        .getLocWithOffset(static_cast<int>(Offset));
  }

  void emit(const SourceManager &SM, const Diagnostic &D) {
    {
      auto Builder = diag(at(SM, D.Where.BeginRaw), D.Format);
      for (const std::string &A : D.Args)
        Builder << A;
      for (const FixIt &F : D.Fixes) {
        if (F.Where.BeginOffset == ~size_t(0) || F.Where.EndOffset == ~size_t(0))
          continue;
        Builder << FixItHint::CreateReplacement(
            CharSourceRange::getCharRange(atOffset(SM, F.Where.BeginOffset),
                                          atOffset(SM, F.Where.EndOffset)),
            F.Replacement);
      }
    }
    for (const DiagnosticNote &N : D.Notes) {
      auto Builder = diag(at(SM, N.Where.BeginRaw), N.Format, DiagnosticIDs::Note);
      for (const std::string &A : N.Args)
        Builder << A;
    }
  }

  std::unique_ptr<TorchCheck> Impl;
  const Preprocessor *PP = nullptr;
};

class TorchTidyModule : public tidy::ClangTidyModule {
public:
  void addCheckFactories(tidy::ClangTidyCheckFactories &Factories) override {
    for (const CheckInfo &Info : checkRegistry())
      Factories.registerCheckFactory(
          Info.Name, [&Info](StringRef Name, tidy::ClangTidyContext *Context) {
            return std::make_unique<TorchTidyCheck>(Name, Context, Info);
          });
  }
};

} // namespace
} // namespace tma

static clang::tidy::ClangTidyModuleRegistry::Add<tma::TorchTidyModule>
    TorchModule("torch-module", "Tensor Memory Accountant: torch-* checks.");
