// The entry points: a function's trace (run), and every function and lambda
// written in the main file of a translation unit. The rooms of the
// evaluator are listed in frontend/FunctionEvaluator.h.
#include "frontend/FunctionEvaluator.h"
#include "frontend/StatementWalker.h"
#include "frontend/Invalidation.h"
#include "frontend/ModuleTracker.h"
#include "frontend/SymbolReader.h"
#include "model/CudaMemory.h"
#include "model/Decide.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Preprocessor.h"

using namespace clang;

namespace tma {

FunctionTrace FunctionEvaluator::run() {
  FunctionTrace &T = I.trace();
  T.HasParameters = FD.getNumParams() > 0;
  const auto *MD = dyn_cast<CXXMethodDecl>(&FD);
  bool IsMember = MD && !MD->isStatic();
  // A free function can be called from the harness's file scope; one with
  // parameters only when --verify can make its arguments (driver/Verify),
  // and never a template's (its arguments would have to pick the
  // specialisation).
  if (!IsMember && !FD.isMain() && !FD.getDeclContext()->isDependentContext() &&
      (!T.HasParameters || FD.getTemplatedKind() == FunctionDecl::TK_NonTemplate))
    T.CallableName = FD.getQualifiedNameAsString();
  for (const ParmVarDecl *P : FD.parameters()) {
    FunctionTrace::Param Param;
    Param.Name = P->getName().str();
    QualType PT = P->getType();
    QualType Bare = PT.getNonReferenceType();
    Param.Type = PT.getAsString(Ctx.getPrintingPolicy());
    if (isTensorType(PT)) {
      Param.K = FunctionTrace::Param::Tensor;
      Param.RValueRef = PT->isRValueReferenceType();
    } else if (Bare->isIntegerType() && !Bare->isBooleanType() &&
               !Bare->isEnumeralType() &&
               (!PT->isReferenceType() || Bare.isConstQualified())) {
      // A non-const reference is an output the function may write: not
      // an input --verify can stand for.
      Param.K = FunctionTrace::Param::Integer;
      // The canonical spelling (`long` for int64_t) names the type from
      // any scope, as the harness's cast must.
      Param.Type = Bare.getCanonicalType().getUnqualifiedType().getAsString();
    }
    T.Params.push_back(std::move(Param));
  }
  // Every size decision of this function's rules consults its ShapeEnv.
  DecisionScope Decisions(*Env);
  T.Env = Env;
  symbols().declareParameters();
  modules().declareMemberModules();
  Completion C;
  if (const auto *Body = dyn_cast_or_null<CompoundStmt>(FD.getBody()))
    C = statements().compound(Body, Flow{});
  else if (const auto *Try = dyn_cast_or_null<CXXTryStmt>(FD.getBody()))
    C = statements().tryStatement(Try, Flow{}); // a function-try-block
  if (C.K == Completion::Throw && I.trace().Throws.empty()) {
    std::string What = C.Thrown.isNull() ? std::string("an exception")
                                         : C.Thrown.getAsString();
    I.setThrows("throws " + What + " (line " +
                std::to_string(span(C.Where->getSourceRange()).Line) + ")");
  }
  if (!MayHaveLeft.empty())
    invalidation().allocationsAreUncertain(MayHaveLeftOps, MayHaveLeft);
  FunctionTrace Done = I.finish();
  Done.Modules = modules().moduleSummaries();
  foldRepeatedIterations(Done);
  Done.Version = Opts.Version;
  simplifySizes(Done);
  summarizeCudaAllocator(Done);
  return Done;
}

TorchVersion detectTorchVersion(const Preprocessor &PP) {
  TorchVersion V;
  auto Read = [&](const char *Name) -> std::optional<int> {
    const IdentifierInfo *II = PP.getIdentifierInfo(Name);
    if (!II)
      return std::nullopt;
    const MacroInfo *MI = PP.getMacroInfo(II);
    if (!MI || MI->getNumTokens() != 1)
      return std::nullopt;
    const Token &Tok = MI->getReplacementToken(0);
    if (!Tok.is(tok::numeric_constant) || !Tok.getLiteralData())
      return std::nullopt;
    return std::atoi(std::string(Tok.getLiteralData(), Tok.getLength()).c_str());
  };
  if (auto Major = Read("TORCH_VERSION_MAJOR"))
    V.Major = *Major;
  if (auto Minor = Read("TORCH_VERSION_MINOR"))
    V.Minor = *Minor;
  return V;
}

std::string lambdaTraceName(const FunctionDecl &FD) {
  const auto *MD = dyn_cast<CXXMethodDecl>(&FD);
  if (!MD || !MD->getParent()->isLambda())
    return "";
  const CXXRecordDecl *Closure = MD->getParent();
  std::string Outer;
  for (const DeclContext *DC = Closure->getDeclContext(); DC; DC = DC->getParent())
    if (const auto *F = dyn_cast<FunctionDecl>(DC)) {
      Outer = lambdaTraceName(*F);
      if (Outer.empty())
        Outer = F->getQualifiedNameAsString();
      break;
    }
  // The closure is located at the lambda's introducer.
  const SourceManager &SM = FD.getASTContext().getSourceManager();
  return (Outer.empty() ? std::string() : Outer + "::") + "lambda@L" +
         std::to_string(SM.getExpansionLineNumber(Closure->getLocation()));
}

/// FD's trace; run again when the first run showed the rank of a parameter
/// it did not know (a view of it to the product of its own sizes), so that
/// its later uses are answered too. The second run states that rank.
/// Run once more, seeded with the facts the code states, when one of them
/// contradicted an assumption made before it (a TORCH_CHECK(x.size(1) ==
/// 1) after a decision that assumed x.size(1) >= 2): the answers before the
/// check rested on an assumption no input that passes it satisfies.
static FunctionTrace analyzeNamed(ASTContext &Ctx, const FunctionDecl &FD,
                                  const AnalysisOptions &Opts,
                                  const std::string &Name) {
  FunctionEvaluator First(Ctx, FD, Opts, Name);
  FunctionTrace T = First.run();
  std::map<std::string, int64_t> Hints = First.viewRankHints();
  std::map<std::string, int64_t> Stated = First.statedRanks();
  std::set<std::string> Refuted = First.statedRanksRefuted();
  std::map<std::string, std::string> NoRank;
  if (!Hints.empty()) {
    FunctionEvaluator Second(Ctx, FD, Opts, Name);
    Second.setRankHints(Hints);
    T = Second.run();
    Stated = Second.statedRanks();
    Refuted = Second.statedRanksRefuted();
  }
  // A stated rank a later statement refutes (Linear's documented 2-d
  // input, where the code reads x.size(2)): the next ranks in turn, up to
  // 4; a parameter no rank fits is unknown, with the reason, rather than
  // answered on a rank under which the function throws.
  constexpr int64_t MaxTriedRank = 4;
  while (!Refuted.empty()) {
    for (const std::string &P : Refuted) {
      int64_t Next = Stated.at(P) + 1;
      if (Next <= MaxTriedRank) {
        Hints[P] = Next;
        continue;
      }
      Hints.erase(P);
      NoRank[P] = "no rank fits every statement (each rank from the one "
                  "stated for it up to " + std::to_string(MaxTriedRank) +
                  " makes a later one throw)";
    }
    FunctionEvaluator Retry(Ctx, FD, Opts, Name);
    Retry.setRankHints(Hints);
    for (const auto &[P, Reason] : NoRank)
      Retry.setRankUnknown(P, Reason);
    T = Retry.run();
    Stated = Retry.statedRanks();
    Refuted = Retry.statedRanksRefuted();
  }
  if (!T.Env || !T.Env->factContradictedAssumption())
    return T;
  FunctionEvaluator Seeded(Ctx, FD, Opts, Name);
  Seeded.setRankHints(std::move(Hints));
  for (const auto &[P, Reason] : NoRank)
    Seeded.setRankUnknown(P, Reason);
  Seeded.seedFacts(*T.Env);
  return Seeded.run();
}

FunctionTrace analyzeFunction(ASTContext &Ctx, const FunctionDecl &FD,
                              const AnalysisOptions &Opts) {
  return analyzeNamed(Ctx, FD, Opts, lambdaTraceName(FD));
}

std::vector<FunctionTrace> analyzeTranslationUnit(ASTContext &Ctx,
                                                  const AnalysisOptions &Opts) {
  // Functions and methods by their qualified names; a lambda's body is
  // analysed as a function of its own named after where it is written
  // ("f::lambda@L12"), with its captures unknown.
  struct Collector : RecursiveASTVisitor<Collector> {
    SourceManager &SM;
    std::vector<std::pair<const FunctionDecl *, std::string>> Found;
    explicit Collector(SourceManager &SM) : SM(SM) {}
    bool shouldVisitLambdaBodies() const { return false; }
    bool VisitFunctionDecl(FunctionDecl *FD) {
      if (FD->doesThisDeclarationHaveABody() && !FD->isDependentContext() &&
          !FD->isTemplateInstantiation() && !isDeviceOnlyFunction(FD) &&
          SM.isWrittenInMainFile(SM.getExpansionLoc(FD->getLocation())))
        Found.push_back({FD, ""});
      return true;
    }
    bool VisitLambdaExpr(LambdaExpr *LE) {
      CXXMethodDecl *Op = LE->getCallOperator();
      if (!Op || Op->isDependentContext() || !LE->getBody() ||
          isDeviceOnlyFunction(Op) ||
          !SM.isWrittenInMainFile(SM.getExpansionLoc(LE->getBeginLoc())))
        return true;
      Found.push_back({Op, lambdaTraceName(*Op)});
      TraverseStmt(LE->getBody()); // lambdas inside lambdas
      return true;
    }
  } Collect(Ctx.getSourceManager());
  // Only top-level declarations written in the main file: the LibTorch
  // headers hold hundreds of thousands of declarations we never need.
  SourceManager &SM = Ctx.getSourceManager();
  // noload_decls: declarations from a preamble PCH are headers, never the
  // main file, and loading them all would cost more than the analysis.
  for (Decl *D : Ctx.getTranslationUnitDecl()->noload_decls())
    if (SM.isWrittenInMainFile(SM.getExpansionLoc(D->getLocation())))
      Collect.TraverseDecl(D);
  std::vector<FunctionTrace> Traces;
  for (const auto &[FD, Name] : Collect.Found)
    Traces.push_back(analyzeNamed(Ctx, *FD, Opts, Name));
  return Traces;
}

} // namespace tma
