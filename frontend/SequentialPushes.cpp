// The layers a Sequential member's constructor pushes (issue 35):
//
//     struct ConvBlockImpl : torch::nn::Module {
//       torch::nn::Sequential sq;
//       ConvBlockImpl(size_t in, size_t out, bool BN) {
//         sq->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3)));
//         if (BN)
//           sq->push_back(torch::nn::BatchNorm2d(out));
//         register_module("sq", sq);
//       }
//     };
//
// The push_back calls that run are statements of the constructor's body,
// or of `if` statements whose condition the constructor's arguments decide
// (their values bound in FE.IntVars as the caller constructed the object;
// a flag as 1 or 0). ModuleMembers.cpp appends their layers to the member's
// Sequential in that order. Anything else is refused with the reason: a
// condition not decided here, a loop, a push_back in another method or
// inside an expression, one before the member is assigned, a constructor
// that may return early.
#include "frontend/SequentialPushes.h"
#include "frontend/ArgumentReader.h"
#include "frontend/ModuleUses.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"

using namespace clang;

namespace tma {

namespace {

/// The push_back calls on a Sequential member in its constructor's body
/// that run, in the order they run, given the constructor's arguments
/// (bound in FE.IntVars, flags as 1 or 0): statements of the body, or of
/// `if` statements whose condition those arguments decide. Anything else
/// leaves Why: a condition not decided, a loop, a push_back inside an
/// expression, one before the member is assigned.
class PushedLayers {
public:
  PushedLayers(FunctionEvaluator &FE, const FieldDecl *F,
               const CXXConstructorDecl *Ctor)
      : FE(FE), F(F), Ctor(Ctor) {}
  std::vector<const CXXMemberCallExpr *> Run;
  unsigned Seen = 0; // the push_back calls accounted for, run or not
  std::string Why;

  unsigned pushesIn(const Stmt *S) const {
    if (!S)
      return 0;
    CallsOn Calls(F, {"push_back"});
    Calls.TraverseStmt(const_cast<Stmt *>(S));
    return Calls.Calls.size();
  }

  void walk(const Stmt *S) {
    if (!Why.empty() || !S)
      return;
    unsigned N = pushesIn(S);
    if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
      for (const Stmt *Sub : CS->body())
        walk(Sub);
      return;
    }
    if (const auto *E = dyn_cast<Expr>(S)) {
      // `sq = torch::nn::Sequential(...)` replaces what was pushed before.
      if (N == 0) {
        if (const auto *OCE = dyn_cast_or_null<CXXOperatorCallExpr>(strip(E));
            Seen && OCE && OCE->getOperator() == OO_Equal &&
            OCE->getNumArgs() == 2 && namedDecl(OCE->getArg(0)) == F)
          Why = "layers pushed onto it before it is assigned (line " +
                line(E) + ")";
        return;
      }
      CallsOn Calls(F, {"push_back"});
      Calls.TraverseStmt(const_cast<Expr *>(E));
      if (N == 1 && Calls.Calls[0] == strip(E)) {
        Run.push_back(Calls.Calls[0]);
        ++Seen;
      } else {
        Why = "a push_back inside an expression (line " + line(E) +
              ") is not followed";
      }
      return;
    }
    if (N == 0)
      return;
    if (const auto *IS = dyn_cast<IfStmt>(S)) {
      if (IS->getInit() || IS->getConditionVariable() || pushesIn(IS->getCond())) {
        Why = "layers pushed under an 'if' with an initializer or a "
              "declaration (line " + line(IS) + ") are not followed";
        return;
      }
      std::optional<bool> Taken = decide(IS->getCond());
      if (!Taken) {
        std::string Cond = "'if (" + text(IS->getCond()) + ")'";
        unsigned Params = 0;
        bool OnlyParam = false;
        for (const ParmVarDecl *P : Ctor->parameters()) {
          ModuleUses Uses(P);
          Uses.TraverseStmt(const_cast<Expr *>(IS->getCond()));
          Params += Uses.Mentions != 0;
          OnlyParam |= namedDecl(strip(IS->getCond())) == P;
        }
        Why = "layers pushed under " + Cond +
              (OnlyParam ? ", a constructor argument the analysis does not "
                           "know here"
               : Params  ? ", a condition on constructor arguments the "
                           "analysis does not know here"
                         : ", a condition the analysis does not decide");
        return;
      }
      Seen += pushesIn(*Taken ? IS->getElse() : IS->getThen());
      walk(*Taken ? IS->getThen() : IS->getElse());
      return;
    }
    if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S))
      Why = "layers pushed in a loop (line " + line(S) +
            "), so which layers it holds is not followed";
    else
      Why = "layers pushed in a statement the analysis does not follow (line " +
            line(S) + ")";
  }

private:
  FunctionEvaluator &FE;
  const FieldDecl *F;
  const CXXConstructorDecl *Ctor;

  std::string line(const Stmt *S) const {
    return std::to_string(FE.span(S->getSourceRange()).Line);
  }
  std::string text(const Expr *E) const {
    const SourceManager &SM = FE.Ctx.getSourceManager();
    return Lexer::getSourceText(
               CharSourceRange::getTokenRange(E->getSourceRange()), SM,
               FE.Ctx.getLangOpts())
        .str();
  }
  /// The condition's value from the constructor's known arguments.
  std::optional<bool> decide(const Expr *E) {
    E = E->IgnoreParenImpCasts();
    if (const auto *UO = dyn_cast<UnaryOperator>(E);
        UO && UO->getOpcode() == UO_LNot) {
      if (auto V = decide(UO->getSubExpr()))
        return !*V;
      return std::nullopt;
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      BinaryOperatorKind Op = BO->getOpcode();
      if (Op == BO_LAnd || Op == BO_LOr) {
        std::optional<bool> A = decide(BO->getLHS()), B = decide(BO->getRHS());
        bool Absorbing = Op == BO_LOr; // true || x, false && x
        if ((A && *A == Absorbing) || (B && *B == Absorbing))
          return Absorbing;
        if (A && B)
          return !Absorbing;
        return std::nullopt;
      }
      if (BO->isComparisonOp()) {
        std::optional<int64_t> A = FE.args().integer(BO->getLHS());
        std::optional<int64_t> B = A ? FE.args().integer(BO->getRHS()) : std::nullopt;
        if (!A || !B)
          return std::nullopt;
        bool Unsigned = BO->getLHS()->IgnoreParenImpCasts()->getType()->isUnsignedIntegerType() ||
                        BO->getRHS()->IgnoreParenImpCasts()->getType()->isUnsignedIntegerType();
        if (Unsigned && (*A < 0 || *B < 0) && Op != BO_EQ && Op != BO_NE)
          return std::nullopt; // compared as unsigned
        switch (Op) {
        case BO_EQ: return *A == *B;
        case BO_NE: return *A != *B;
        case BO_LT: return *A < *B;
        case BO_GT: return *A > *B;
        case BO_LE: return *A <= *B;
        case BO_GE: return *A >= *B;
        default: return std::nullopt;
        }
      }
    }
    if (!E->getType()->isIntegralOrEnumerationType())
      return std::nullopt;
    if (std::optional<int64_t> V = FE.args().integer(E))
      return *V != 0;
    return std::nullopt;
  }
};

} // namespace

std::string pushedLayers(FunctionEvaluator &FE, const FieldDecl *F,
                         const CXXConstructorDecl *Ctor, const Stmt *CtorBody,
                         unsigned Pushes,
                         std::vector<const CXXMemberCallExpr *> &Run) {
  PushedLayers Pushed(FE, F, Ctor);
  if (Pushed.pushesIn(CtorBody) < Pushes)
    return "layers added to it outside the constructor (push_back in "
           "another method), so which layers it holds when forward() runs "
           "is not followed";
  struct Returns : RecursiveASTVisitor<Returns> {
    bool Found = false;
    bool VisitReturnStmt(ReturnStmt *) { return !(Found = true); }
  } Early;
  Early.TraverseStmt(const_cast<Stmt *>(CtorBody));
  if (Early.Found)
    return "the constructor may return before all its push_back calls run";
  Pushed.walk(CtorBody);
  Run = Pushed.Run;
  return Pushed.Why;
}

} // namespace tma
