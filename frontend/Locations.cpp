// Source spans for the trace: the analysed file's line and column of a
// location, and its file offsets where the text can be rewritten.
#include "frontend/FunctionEvaluator.h"

#include "clang/Lex/Lexer.h"

using namespace clang;

namespace tma {

/// Where in the analysed file a location is seen: itself when it is
/// written there; otherwise (a default argument from a header, a body
/// `#include`d from another file) the statement being evaluated, or the
/// `#include` line that brought the text in. Every span the report prints
/// carries the analysed file's name, so its line must be that file's.
SourceLocation FunctionEvaluator::inMainFile(SourceLocation L) const {
  L = SM.getExpansionLoc(L);
  if (L.isInvalid() || SM.isWrittenInMainFile(L))
    return L;
  if (SourceLocation St = SM.getExpansionLoc(CurrentStatement.getBegin());
      St.isValid() && SM.isWrittenInMainFile(St))
    return St;
  for (int Depth = 0; Depth < 64 && L.isValid() && !SM.isWrittenInMainFile(L);
       ++Depth)
    L = SM.getExpansionLoc(SM.getIncludeLoc(SM.getFileID(L)));
  return L;
}

SourceSpan FunctionEvaluator::span(SourceRange R) const {
  SourceSpan S;
  S.File = Opts.DisplayFile;
  SourceLocation B = R.getBegin(), E = R.getEnd();
  S.BeginRaw = B.getRawEncoding();
  S.EndRaw = E.getRawEncoding();
  S.InMacro = B.isMacroID() || E.isMacroID();
  SourceLocation BE = SM.getExpansionLoc(B);
  SourceLocation EE = SM.getExpansionRange(E).getEnd();
  if (BE.isValid() && !SM.isWrittenInMainFile(BE)) {
    // Text from another file: report it where the analysed file has it,
    // and never offer its offsets for rewriting.
    S.InMacro = true;
    BE = EE = inMainFile(BE);
  } else if (EE.isValid() && !SM.isWrittenInMainFile(EE)) {
    EE = BE;
  }
  if (BE.isValid()) {
    S.Line = SM.getExpansionLineNumber(BE);
    S.Column = SM.getExpansionColumnNumber(BE);
    if (SM.isWrittenInMainFile(BE))
      S.BeginOffset = SM.getFileOffset(BE);
  }
  if (EE.isValid()) {
    SourceLocation After =
        Lexer::getLocForEndOfToken(EE, 0, SM, Ctx.getLangOpts());
    if (After.isInvalid())
      After = EE;
    S.EndLine = SM.getExpansionLineNumber(After);
    S.EndColumn = SM.getExpansionColumnNumber(After);
    if (SM.isWrittenInMainFile(After))
      S.EndOffset = SM.getFileOffset(After);
  }
  return S;
}

/// The span of the callee's name (`.contiguous` in `a.contiguous()`), where
/// a diagnostic about the call should point.
SourceSpan FunctionEvaluator::nameSpan(const Expr *E) const {
  E = strip(E);
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E))
    if (const auto *ME = dyn_cast<MemberExpr>(MCE->getCallee()->IgnoreParens()))
      return span(SourceRange(ME->getMemberLoc(), ME->getMemberLoc()));
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(E))
    return span(SourceRange(OCE->getOperatorLoc(), OCE->getOperatorLoc()));
  if (const auto *CE = dyn_cast<CallExpr>(E))
    return span(CE->getCallee()->getSourceRange());
  return span(E->getSourceRange());
}

} // namespace tma
