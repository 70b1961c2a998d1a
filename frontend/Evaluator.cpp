// FunctionEvaluator: evaluates a function body's LibTorch expressions in
// statement order and feeds the Interpreter.
//
// Design:
// - Expressions are matched by what Clang resolved them to (the callee's
//   FunctionDecl, the record a type names), never by spelling, so every
//   spelling of an API (torch:: or at::, a using-declaration, an alias)
//   lands on the same rule.
// - Integers are whatever Clang can fold (constexpr, const locals,
//   `16 * 4096`); enumerators (c10::ScalarType, c10::DeviceType) are read by
//   name, so the numbering of the LibTorch headers never matters.
// - Anything not understood becomes an unknown with a reason; the evaluator
//   never substitutes a default it did not see in the source. Default
//   arguments are read from the declaration (torch::randint's `= at::kLong`).
// - Control flow: names assigned in a branch or carried around a loop become
//   unknown after it; allocations inside loops or branches make the totals
//   unknown, with that reason.
#include "frontend/Analyzer.h"
#include "model/Interpreter.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/Preprocessor.h"

#include <functional>
#include <map>
#include <set>

using namespace clang;

namespace tma {
namespace {

// ---- Types ---------------------------------------------------------------------

std::string recordName(QualType T) {
  T = T.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  if (const auto *RD = T->getAsCXXRecordDecl())
    return RD->getQualifiedNameAsString();
  if (const auto *ET = T->getAs<EnumType>())
    return ET->getDecl()->getQualifiedNameAsString();
  return {};
}

bool isTensorType(QualType T) {
  std::string N = recordName(T);
  return N == "at::Tensor" || N == "at::TensorBase";
}
bool isOptionsType(QualType T) { return recordName(T) == "c10::TensorOptions"; }
bool isTensorVectorType(QualType T) {
  T = T.getNonReferenceType().getCanonicalType();
  const auto *Spec =
      dyn_cast_or_null<ClassTemplateSpecializationDecl>(T->getAsCXXRecordDecl());
  if (!Spec || Spec->getQualifiedNameAsString() != "std::vector")
    return false;
  const auto &Args = Spec->getTemplateArgs();
  return Args.size() >= 1 && Args[0].getKind() == TemplateArgument::Type &&
         isTensorType(Args[0].getAsType());
}

/// std::tuple / std::pair whose elements are all tensors (or references to
/// tensors, as std::tie makes).
bool isTensorTupleType(QualType T) {
  T = T.getNonReferenceType().getCanonicalType();
  const auto *Spec =
      dyn_cast_or_null<ClassTemplateSpecializationDecl>(T->getAsCXXRecordDecl());
  if (!Spec)
    return false;
  std::string N = Spec->getQualifiedNameAsString();
  if (N != "std::tuple" && N != "std::pair")
    return false;
  const auto &Args = Spec->getTemplateArgs();
  auto IsTensor = [](const TemplateArgument &A) {
    return A.getKind() == TemplateArgument::Type && isTensorType(A.getAsType());
  };
  if (N == "std::pair")
    return Args.size() == 2 && IsTensor(Args[0]) && IsTensor(Args[1]);
  if (Args.size() != 1 || Args[0].getKind() != TemplateArgument::Pack ||
      Args[0].pack_size() == 0)
    return false;
  for (const TemplateArgument &A : Args[0].pack_elements())
    if (!IsTensor(A))
      return false;
  return true;
}

/// The top-level namespace a declaration lives in ("at", "torch", "c10").
std::string topNamespace(const Decl *D) {
  std::string Top;
  for (const DeclContext *C = D->getDeclContext(); C; C = C->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(C))
      if (!NS->isAnonymousNamespace() && !NS->isInline())
        Top = NS->getName().str();
  return Top;
}

bool isLibTorchDecl(const Decl *D) {
  std::string Top = topNamespace(D);
  return Top == "at" || Top == "torch" || Top == "c10" || Top == "caffe2";
}

// ---- Expression helpers ------------------------------------------------------------

/// Strips the nodes that do not change a value: parentheses, implicit
/// casts, temporaries, cleanups.
const Expr *strip(const Expr *E) {
  while (E) {
    E = E->IgnoreParens();
    if (const auto *EWC = dyn_cast<ExprWithCleanups>(E))
      E = EWC->getSubExpr();
    else if (const auto *MTE = dyn_cast<MaterializeTemporaryExpr>(E))
      E = MTE->getSubExpr();
    else if (const auto *BTE = dyn_cast<CXXBindTemporaryExpr>(E))
      E = BTE->getSubExpr();
    else if (const auto *ICE = dyn_cast<ImplicitCastExpr>(E))
      E = ICE->getSubExpr();
    else if (const auto *FCE = dyn_cast<CXXFunctionalCastExpr>(E);
             FCE && FCE->getCastKind() == CK_NoOp)
      E = FCE->getSubExpr();
    else if (const auto *DAE = dyn_cast<CXXDefaultArgExpr>(E))
      E = DAE->getExpr();
    else
      break;
  }
  return E;
}

/// Also looks through converting constructors with one argument
/// (c10::optional<int64_t>(3), TensorOptions(kHalf), Scalar(1.5)) until
/// Stop says it has reached the expression it wants.
template <typename Pred>
const Expr *stripConversions(const Expr *E, Pred Stop) {
  while (true) {
    E = strip(E);
    if (!E || Stop(E))
      return E;
    const auto *CE = dyn_cast<CXXConstructExpr>(E);
    if (!CE || CE->getNumArgs() == 0)
      return E;
    // Only the first argument carries the value for the conversions we look
    // through; the rest must be defaults.
    for (unsigned I = 1; I < CE->getNumArgs(); ++I)
      if (!isa<CXXDefaultArgExpr>(CE->getArg(I)))
        return E;
    E = CE->getArg(0);
  }
}

bool isDefaultArg(const Expr *E) {
  return E && isa<CXXDefaultArgExpr>(E->IgnoreParens());
}

std::string calleeName(const FunctionDecl *FD) {
  if (!FD)
    return {};
  if (FD->getDeclName().isIdentifier())
    return FD->getName().str();
  return FD->getNameAsString();
}

// ---- Options ----------------------------------------------------------------------

/// A c10::TensorOptions as far as the source determines it. A field is
/// either absent from the options (unset), derived, or unknown.
struct Options {
  bool HasType = false;
  std::optional<DType> Type;
  bool HasDevice = false;
  std::optional<Device> Dev;
  bool HasFormat = false;
  std::optional<MemoryFormat> Fmt;
  std::string UnknownReason;
  bool Known = true; // false: the options object itself is not understood
};

class FunctionEvaluator {
public:
  /// Name overrides the qualified name (lambdas: "f::lambda@L12").
  FunctionEvaluator(ASTContext &Ctx, const FunctionDecl &FD,
                    const AnalysisOptions &Opts, const std::string &Name = "")
      : Ctx(Ctx), SM(Ctx.getSourceManager()), FD(FD), Opts(Opts),
        I(Opts.DisplayFile,
          Name.empty() ? FD.getQualifiedNameAsString() : Name,
          span(FD.getSourceRange())) {}

  FunctionTrace run();

private:
  struct Flow {
    bool InLoop = false;
    bool InBranch = false;
  };
  /// How a statement ends, as C++ defines it: normally, or by a jump that
  /// skips what follows it.
  struct Completion {
    enum Kind { Normal, Break, Continue, Return, Goto, Throw } K = Normal;
    const LabelDecl *Label = nullptr; // Goto
    const Stmt *Where = nullptr;      // the jump
    QualType Thrown;                  // Throw: the exception's type
    bool abrupt() const { return K != Normal; }
  };

  // Statements.
  Completion statement(const Stmt *S, Flow F, bool Insertable);
  Completion compound(const CompoundStmt *CS, Flow F);
  Completion statementList(llvm::ArrayRef<const Stmt *> Body, Flow F);
  Completion loop(const Stmt *Body, const Stmt *Whole, Flow F);
  Completion branch(const Stmt *Body, Flow F);
  Completion ifStatement(const IfStmt *IS, Flow F);
  Completion switchStatement(const SwitchStmt *SS, Flow F);
  Completion tryStatement(const CXXTryStmt *TS, Flow F);
  void declaration(const DeclStmt *DS, Flow F, bool Insertable);
  void declareVariable(const VarDecl *VD, const DeclStmt *DS, Flow F,
                       bool Insertable);
  Completion expressionStatement(const Expr *E, Flow F, bool Insertable);
  void openStatement(const Stmt *S, Flow F, bool Insertable);
  /// The storage each name that Body may assign holds now.
  using StorageSnapshot = std::map<std::string, StorageId>;
  StorageSnapshot snapshotAssignedIn(const Stmt *Body);
  void invalidateAssignedIn(const Stmt *Body, const std::string &Reason,
                            SourceRange Where,
                            const StorageSnapshot *Before = nullptr);
  /// Allocations among the ops since OpsBefore make the totals unknown
  /// (they ran a number of times the analysis does not know).
  void allocationsAreUncertain(size_t OpsBefore, const std::string &Why);
  /// Evaluates the tensor work inside an expression that is not itself a
  /// tensor (`int64_t n = x.sum().item<int64_t>()`, a condition, `(void)`).
  void sideEffects(const Expr *E);

  // Where a tensor handle lives: a named variable, a member of an
  // aggregate local, an element of a tensor vector, a heap object. A
  // reference or a pointer resolves to the slot it names, so assigning
  // through it rebinds that slot (issue 10 item 4).
  struct Slot {
    std::string Key;     // the Interpreter's name key
    std::string Display; // how the source names it
    std::string Vector;  // set for an element of a tensor vector
    size_t Index = 0;
    bool Known = true;   // false: one of Candidates, or unknown
    std::vector<std::string> Candidates;
    std::string Why;     // Known == false: why
  };
  std::optional<Slot> slotOf(const Expr *E);
  ValueId readSlot(const Slot &S, const Expr *E);
  void assignSlot(const Slot &S, ValueId V, const SourceSpan &Where,
                  const SourceSpan &NameWhere);
  void forgetSlot(const std::string &Key, const std::string &Display,
                  const std::string &Why, const SourceSpan &Where);
  ValueId assignment(const Expr *E, const Expr *LHS, const Expr *RHS);
  std::string resolveKey(const ValueDecl *D) const;

  // Expressions.
  ValueId tensor(const Expr *E);
  ValueId evaluate(const Expr *S);
  const Expr *spineChild(const Expr *S) const;
  std::optional<std::vector<ValueId>> tensorTuple(const Expr *E);
  std::optional<std::vector<ValueId>> evaluateTuple(const Expr *S);
  ValueId conditional(const AbstractConditionalOperator *CO);
  void opaqueCallEffects(const CallExpr *CE);
  bool mayAllocateTensors(const FunctionDecl *Callee, int Depth = 0);
  std::map<const FunctionDecl *, bool> MayAllocate;
  ValueId call(const Expr *E, const FunctionDecl *Callee, const Expr *Object,
               llvm::ArrayRef<const Expr *> Args);
  ValueId method(const Expr *E, const CXXMethodDecl *MD, const Expr *Object,
                 llvm::ArrayRef<const Expr *> Args);
  ValueId freeFunction(const Expr *E, const FunctionDecl *FD,
                       llvm::ArrayRef<const Expr *> Args);
  ValueId factoryCall(const Expr *E, const std::string &Name,
                      const FunctionDecl *FD, llvm::ArrayRef<const Expr *> Args);
  ValueId tensorLiteral(const Expr *E, const FunctionDecl *Callee,
                        llvm::ArrayRef<const Expr *> Args);
  /// A call of a tensor op: the tensor it applies to and the other
  /// arguments (see tensorOp).
  struct OpCall {
    const Expr *E = nullptr;
    std::string Name;
    const FunctionDecl *Callee = nullptr;
    unsigned ParamBase = 0;
    const Expr *SelfExpr = nullptr;
    llvm::SmallVector<const Expr *, 6> Args;
    bool Functional = false; // torch::nn::functional::...
  };
  std::optional<ValueId> tensorOp(const OpCall &C);
  std::optional<std::vector<ValueId>> tensorList(const Expr *E);
  std::optional<std::vector<ValueId>> evaluateList(const Expr *S);
  ValueId listElement(const Expr *E, const Expr *List, const Expr *Index);
  void forgetObject(const Expr *Object, const std::string &Why);
  ValueId apply(const std::string &Op, const Expr *E,
                const std::vector<ValueId> &Inputs, const OpOutcome &Out);
  ValueId unmodelledCall(const std::string &Op, const Expr *E,
                         const std::vector<ValueId> &Inputs,
                         const std::string &Reason);
  ValueId evalIndex(const Expr *E, ValueId Self, const Expr *IndexList);

  // Arguments.
  std::optional<int64_t> integer(const Expr *E);
  std::optional<Dims> intList(const Expr *E);
  std::optional<DType> scalarType(const Expr *E);
  std::optional<Device> device(const Expr *E);
  std::optional<MemoryFormat> memoryFormat(const Expr *E);
  Options options(const Expr *E);
  const Expr *constantInitializer(const ValueDecl *D) const;
  std::optional<DType> scalarLiteralType(const Expr *E);
  std::optional<std::string> enumeratorName(const Expr *E);
  struct Number {
    double Value;
    bool Floating;
  };
  std::optional<Number> number(const Expr *E);
  std::optional<DType> scalarCategory(const Expr *E);
  ElemOperand operand(const Expr *E);
  struct OptTensor {
    bool Present = false;
    bool Understood = true;
    const Expr *E = nullptr;
  };
  OptTensor optionalTensor(const Expr *E);
  struct OptInt {
    bool Present = false;
    std::optional<int64_t> Value;
  };
  OptInt optionalInt(const Expr *E);
  struct OptDType {
    bool Present = false;
    std::optional<DType> Value;
  };
  OptDType optionalDType(const Expr *E);

  SourceSpan span(SourceRange R) const;
  SourceLocation inMainFile(SourceLocation L) const;
  /// The statement being evaluated (openStatement), for locations that
  /// are not in the analysed file.
  SourceRange CurrentStatement;
  SourceSpan nameSpan(const Expr *E) const;
  std::string key(const ValueDecl *D) const {
    return std::to_string(reinterpret_cast<uintptr_t>(D->getCanonicalDecl()));
  }

  ASTContext &Ctx;
  SourceManager &SM;
  const FunctionDecl &FD;
  const AnalysisOptions &Opts;
  Interpreter I;
  std::map<std::string, Options> OptionVars;
  std::map<std::string, std::optional<Device>> DeviceVars;
  /// Elements of std::vector<Tensor> locals (chunk/split/unbind results).
  std::map<std::string, std::vector<ValueId>> TensorLists;
  /// Elements of std::tuple / std::pair locals of tensors.
  std::map<std::string, std::vector<ValueId>> TensorTuples;
  /// Each expression node is evaluated once per statement: an operand
  /// read twice (once for its dtype, once for its value) must not count
  /// its allocation twice (issue 10 item 1).
  std::map<const Expr *, ValueId> Evaluated;
  std::map<const Expr *, std::optional<std::vector<ValueId>>> EvaluatedLists;
  std::map<const Expr *, std::optional<std::vector<ValueId>>> EvaluatedTuples;
  /// References: the slot each one names (its key maps to the target's).
  std::map<std::string, Slot> References;
  /// Pointers to tensors: the slot each points to (Known false: unknown).
  std::map<std::string, Slot> Pointers;
  /// Slots whose address was taken: an assignment through an unknown
  /// pointer may have changed any of them.
  std::map<std::string, std::string> AddressTaken;
  /// A branch may have left the function or jumped (line and what): later
  /// allocations happen on some paths only.
  std::string MayHaveLeft;
  /// Depth of nested try blocks: a throw inside one is caught.
  int TryDepth = 0;
  /// The first op LibTorch throws in inside a try block.
  std::string CaughtThrow;
  size_t MayHaveLeftOps = 0;
  void mayHaveLeft(const Completion &C);
  /// Labels that a goto jumps back to: a goto to one ends an iteration.
  std::set<const LabelDecl *> BackEdges;
  /// Depth of options()/device() calls following global initializers.
  int FollowDepth = 0;
};

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

// ---- Arguments ----------------------------------------------------------------------

std::optional<int64_t> FunctionEvaluator::integer(const Expr *E) {
  E = stripConversions(E, [](const Expr *X) {
    return X->getType()->isIntegralOrEnumerationType();
  });
  if (!E || E->isValueDependent() || !E->getType()->isIntegralOrEnumerationType())
    return std::nullopt;
  Expr::EvalResult R;
  if (!E->EvaluateAsInt(R, Ctx))
    return std::nullopt;
  return R.Val.getInt().getExtValue();
}

std::optional<std::string> FunctionEvaluator::enumeratorName(const Expr *E) {
  E = stripConversions(E, [](const Expr *X) {
    return X->getType()->isEnumeralType();
  });
  if (!E || !E->getType()->isEnumeralType())
    return std::nullopt;
  Expr::EvalResult R;
  if (E->isValueDependent() || !E->EvaluateAsInt(R, Ctx))
    return std::nullopt;
  const EnumDecl *ED = E->getType()
                           .getNonReferenceType()
                           ->castAs<EnumType>()
                           ->getDecl();
  for (const EnumConstantDecl *C : ED->enumerators())
    if (llvm::APSInt::isSameValue(C->getInitVal(), R.Val.getInt()))
      return C->getName().str();
  return std::nullopt;
}

std::optional<Dims> FunctionEvaluator::intList(const Expr *E) {
  E = strip(E);
  if (!E)
    return std::nullopt;
  // ArrayRef / SymIntArrayRef from an initializer list: the InitListExpr
  // sits below the constructor and std::initializer_list.
  const Expr *Cur = E;
  for (int Depth = 0; Depth < 6 && Cur; ++Depth) {
    Cur = strip(Cur);
    if (const auto *IL = dyn_cast<InitListExpr>(Cur)) {
      Dims Out;
      for (const Expr *Elem : IL->inits()) {
        auto V = integer(Elem);
        if (!V)
          return std::nullopt;
        Out.push_back(*V);
      }
      return Out;
    }
    if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(Cur)) {
      Cur = SIL->getSubExpr();
      continue;
    }
    if (const auto *CE = dyn_cast<CXXConstructExpr>(Cur)) {
      if (CE->getNumArgs() == 0)
        return Dims{};
      const Expr *Arg = strip(CE->getArg(0));
      // ArrayRef(const T &OneElt): a single integer.
      if (Arg->getType()->isIntegerType() && CE->getNumArgs() == 1) {
        if (auto V = integer(Arg))
          return Dims{*V};
        return std::nullopt;
      }
      Cur = Arg;
      continue;
    }
    break;
  }
  return std::nullopt;
}

std::optional<DType> FunctionEvaluator::scalarType(const Expr *E) {
  auto Name = enumeratorName(E);
  if (!Name)
    return std::nullopt;
  return dtypeFromName(*Name);
}

std::optional<MemoryFormat> FunctionEvaluator::memoryFormat(const Expr *E) {
  auto Name = enumeratorName(E);
  if (!Name)
    return std::nullopt;
  if (*Name == "Preserve")
    return MemoryFormat::Preserve;
  if (*Name == "Contiguous")
    return MemoryFormat::Contiguous;
  if (*Name == "ChannelsLast")
    return MemoryFormat::ChannelsLast;
  return std::nullopt;
}

std::optional<Device> FunctionEvaluator::device(const Expr *E) {
  E = strip(E);
  if (!E)
    return std::nullopt;
  // torch::Device(torch::kCUDA) written as a functional cast.
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
    return device(FC->getSubExpr());
  // A Device variable: a local the analysis tracks, or a constant.
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E);
      DRE && !E->getType()->isEnumeralType()) {
    if (auto It = DeviceVars.find(key(DRE->getDecl())); It != DeviceVars.end())
      return It->second;
    if (const Expr *Init = constantInitializer(DRE->getDecl());
        Init && FollowDepth < 8) {
      ++FollowDepth;
      auto D = device(Init);
      --FollowDepth;
      return D;
    }
    return std::nullopt;
  }
  // A c10::DeviceType enumerator (torch::kCUDA).
  if (E->getType()->isEnumeralType()) {
    auto Name = enumeratorName(E);
    auto Kind = Name ? deviceKindFromC10Name(*Name) : std::nullopt;
    if (!Kind)
      return std::nullopt;
    Device D;
    D.Kind = *Kind;
    I.mentionDevice(span(E->getSourceRange()), false, D);
    return D;
  }
  // A string literal ("cuda:0"), possibly wrapped in std::string.
  if (const auto *SL = dyn_cast<StringLiteral>(E)) {
    auto D = parseDeviceString(SL->getString());
    if (D)
      I.mentionDevice(span(E->getSourceRange()), true, *D);
    return D;
  }
  if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
    std::string Record = recordName(CE->getType());
    if (Record == "c10::Device") {
      if (CE->getNumArgs() == 0)
        return std::nullopt;
      auto D = device(CE->getArg(0));
      if (D && CE->getNumArgs() >= 2 && !isDefaultArg(CE->getArg(1))) {
        auto Index = integer(CE->getArg(1));
        if (!Index)
          return std::nullopt;
        D->Index = static_cast<int>(*Index);
      }
      return D;
    }
    if (CE->getNumArgs() >= 1)
      return device(CE->getArg(0));
  }
  // x.device() of a tensor we know.
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E)) {
    const CXXMethodDecl *MD = MCE->getMethodDecl();
    if (MD && calleeName(MD) == "device" &&
        isTensorType(MCE->getImplicitObjectArgument()->getType())) {
      ValueId V = tensor(MCE->getImplicitObjectArgument());
      if (V >= 0)
        return I.value(V).Dev;
    }
  }
  return std::nullopt;
}

/// The dtype a C++ scalar argument gives `full` and friends: the type of
/// the expression before it became a c10::Scalar.
std::optional<DType> FunctionEvaluator::scalarLiteralType(const Expr *E) {
  E = stripConversions(E, [](const Expr *X) {
    return X->getType()->isArithmeticType();
  });
  if (!E)
    return std::nullopt;
  QualType T = E->getType();
  if (T->isBooleanType())
    return DType::Bool;
  if (T->isIntegerType())
    return DType::Int64;
  if (T->isRealFloatingType())
    return DType::Float32; // the default dtype, as c10::Scalar(double) gives
  return std::nullopt;
}

/// The initializer of a variable whose value is fixed: const or constexpr
/// with static storage (namespace scope, a static member, a static local),
/// which no code of this function can change. Locals are tracked as they
/// are assigned instead.
const Expr *FunctionEvaluator::constantInitializer(const ValueDecl *D) const {
  const auto *VD = dyn_cast<VarDecl>(D);
  if (!VD || !VD->hasGlobalStorage())
    return nullptr;
  if (!VD->getType().isConstQualified() && !VD->isConstexpr())
    return nullptr;
  const VarDecl *Def = nullptr;
  const Expr *Init = VD->getAnyInitializer(Def);
  return Init;
}

Options FunctionEvaluator::options(const Expr *E) {
  Options O;
  E = strip(E);
  if (!E) {
    O.Known = false;
    return O;
  }
  auto SetType = [&](const Expr *Arg) {
    O.HasType = true;
    O.Type = scalarType(Arg);
    if (!O.Type)
      O.UnknownReason = "dtype could not be derived";
  };
  auto SetDevice = [&](const Expr *Arg) {
    O.HasDevice = true;
    O.Dev = device(Arg);
    if (!O.Dev)
      O.UnknownReason = "device could not be derived";
  };
  auto ByArgType = [&](const Expr *Arg) {
    Arg = strip(Arg);
    std::string Name = recordName(Arg->getType());
    if (Name == "c10::ScalarType" || Name == "c10::optional" ||
        Name == "caffe2::TypeMeta")
      SetType(Arg);
    else if (Name == "c10::DeviceType" || Name == "c10::Device" ||
             isa<StringLiteral>(Arg))
      SetDevice(Arg);
    else if (Name == "c10::MemoryFormat") {
      O.HasFormat = true;
      O.Fmt = memoryFormat(Arg);
    } else if (Name == "c10::Layout" || Arg->getType()->isBooleanType()) {
      // Layout and requires_grad do not change storage.
    } else {
      O.Known = false;
    }
  };

  // `torch::TensorOptions(torch::kHalf)` is a functional cast around the
  // constructor.
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
    return options(FC->getSubExpr());
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    auto It = OptionVars.find(key(DRE->getDecl()));
    if (It != OptionVars.end())
      return It->second;
    if (const Expr *Init = constantInitializer(DRE->getDecl());
        Init && FollowDepth < 8) {
      ++FollowDepth;
      Options Followed = options(Init);
      --FollowDepth;
      return Followed;
    }
    O.Known = false;
    O.UnknownReason = "options variable '" + DRE->getDecl()->getName().str() +
                      "' could not be followed";
    return O;
  }
  if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
    if (CE->getNumArgs() == 0)
      return O; // TensorOptions()
    const Expr *Arg = strip(CE->getArg(0));
    if (isOptionsType(Arg->getType()))
      return options(Arg); // copy
    ByArgType(Arg);
    return O;
  }
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E)) {
    const CXXMethodDecl *MD = MCE->getMethodDecl();
    const Expr *Obj = MCE->getImplicitObjectArgument();
    std::string Name = calleeName(MD);
    if (isTensorType(Obj->getType()) && Name == "options") {
      ValueId V = tensor(Obj);
      if (V >= 0) {
        const TensorValue &TV = I.value(V);
        O.HasType = O.HasDevice = true;
        O.Type = TV.Type;
        O.Dev = TV.Dev;
      } else {
        O.Known = false;
      }
      return O;
    }
    if (!isOptionsType(Obj->getType())) {
      O.Known = false;
      return O;
    }
    O = options(Obj);
    if (MCE->getNumArgs() == 0)
      return O;
    if (Name == "dtype")
      SetType(MCE->getArg(0));
    else if (Name == "device")
      SetDevice(MCE->getArg(0));
    else if (Name == "memory_format") {
      O.HasFormat = true;
      O.Fmt = memoryFormat(MCE->getArg(0));
    } else if (Name == "requires_grad" || Name == "layout" ||
               Name == "pinned_memory")
      ; // no storage effect
    else if (Name == "device_index") {
      auto Index = integer(MCE->getArg(0));
      O.HasDevice = true;
      O.Dev = Device{DeviceKind::CUDA, static_cast<int>(Index.value_or(-1))};
      if (!Index)
        O.Dev.reset();
    } else
      O.Known = false;
    return O;
  }
  if (const auto *CE = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *Callee = CE->getDirectCallee();
    std::string Name = calleeName(Callee);
    if (!Callee || !isLibTorchDecl(Callee) || CE->getNumArgs() == 0) {
      O.Known = false;
      return O;
    }
    if (Name == "dtype")
      SetType(CE->getArg(0));
    else if (Name == "device")
      SetDevice(CE->getArg(0));
    else if (Name == "memory_format") {
      O.HasFormat = true;
      O.Fmt = memoryFormat(CE->getArg(0));
    } else if (Name == "requires_grad" || Name == "layout")
      ;
    else
      O.Known = false;
    return O;
  }
  O.Known = false;
  return O;
}

// ---- Expressions --------------------------------------------------------------------

ValueId FunctionEvaluator::apply(const std::string &Op, const Expr *E,
                                 const std::vector<ValueId> &Inputs,
                                 const OpOutcome &Out) {
  ValueId V = I.apply(Op, span(E->getSourceRange()), nameSpan(E), Inputs, Out);
  OpEvent &Event = I.trace().Ops.back();
  const Expr *S = strip(E);
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S))
    Event.ArgWhere.push_back(
        span(MCE->getImplicitObjectArgument()->getSourceRange()));
  if (const auto *CE = dyn_cast<CallExpr>(S))
    for (const Expr *A : CE->arguments())
      if (!isDefaultArg(A))
        Event.ArgWhere.push_back(span(A->getSourceRange()));
  return V;
}

ValueId FunctionEvaluator::unmodelledCall(const std::string &Op, const Expr *E,
                                          const std::vector<ValueId> &Inputs,
                                          const std::string &Reason) {
  OpOutcome Out = unmodelled(Op);
  Out.Value.UnknownReason = Reason;
  return apply(Op, E, Inputs, Out);
}

// ---- Evaluation order and depth ----------------------------------------------------
//
// tensor() evaluates each expression node once per statement (the memo in
// Evaluated), so any path that reads an operand twice reuses its value.
// Deep chains (`x.t().t()...`, `x + x + ... + x`) nest their receiver or
// first operand, the "spine"; evaluating a node recurses down it. To keep
// the stack bounded, a node whose spine is longer than SpineStep first
// evaluates the node SpineStep below it, which does the same: the
// recursion is then about n / SpineStep + 2 * SpineStep frames deep for a
// chain of n, in every front end (the CLI, clang-tidy's thread, the LSP).

constexpr int SpineStep = 32;

/// The tensor operand evaluation recurses into first: a member call's
/// object, an operator's or a LibTorch function's first tensor argument.
const Expr *FunctionEvaluator::spineChild(const Expr *S) const {
  const Expr *Child = nullptr;
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S))
    Child = MCE->getImplicitObjectArgument();
  else if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S))
    Child = OCE->getNumArgs() >= 1 ? OCE->getArg(0) : nullptr;
  else if (const auto *CE = dyn_cast<CallExpr>(S))
    Child = CE->getNumArgs() >= 1 ? CE->getArg(0) : nullptr;
  if (!Child || !isTensorType(Child->getType()))
    return nullptr;
  return strip(Child);
}

ValueId FunctionEvaluator::tensor(const Expr *E) {
  const Expr *S = strip(E);
  if (!S)
    return NoValue;
  if (auto It = Evaluated.find(S); It != Evaluated.end())
    return It->second;
  // Names are looked up afresh each time: an assignment earlier in the
  // statement (`a = b = c`) may have changed them.
  if (isa<DeclRefExpr>(S))
    return evaluate(S);
  const Expr *Deep = S;
  int Length = 0;
  for (const Expr *C = spineChild(S); C && Length < 2 * SpineStep;
       C = spineChild(C)) {
    ++Length;
    if (Length == SpineStep)
      Deep = C;
  }
  if (Length >= 2 * SpineStep && !Evaluated.count(Deep))
    tensor(Deep);
  ValueId V = evaluate(S);
  Evaluated[S] = V;
  return V;
}

ValueId FunctionEvaluator::evaluate(const Expr *S) {
  if (isa<DeclRefExpr>(S) || isa<MemberExpr>(S) ||
      (isa<UnaryOperator>(S) &&
       cast<UnaryOperator>(S)->getOpcode() == UO_Deref)) {
    if (auto Sl = slotOf(S))
      return readSlot(*Sl, S);
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    std::string Name = DRE->getDecl()->getName().str();
    bool Captured = DRE->refersToEnclosingVariableOrCapture() ||
                    (isa<VarDecl>(DRE->getDecl()) &&
                     DRE->getDecl()->getDeclContext() != &FD &&
                     DRE->getDecl()->getDeclContext()->isFunctionOrMethod() &&
                     FD.getParent() &&
                     isa<CXXRecordDecl>(FD.getParent()) &&
                     cast<CXXRecordDecl>(FD.getParent())->isLambda());
    return I.unknown(Name,
                     Captured ? "'" + Name + "' is captured by the lambda: its "
                                "value is not known here"
                              : "'" + Name +
                                    "' is not a tensor this function created",
                     span(S->getSourceRange()),
                     Interpreter::Provenance::External);
  }
  if (const auto *ME = dyn_cast<MemberExpr>(S)) {
    std::string Name = ME->getMemberDecl()->getName().str();
    // A member of a tensor tuple local: `p.first`, `p.second`.
    if (const auto *Base = dyn_cast<DeclRefExpr>(strip(ME->getBase())))
      if (auto It = TensorTuples.find(resolveKey(Base->getDecl()));
          It != TensorTuples.end() && (Name == "first" || Name == "second")) {
        size_t K = Name == "first" ? 0 : 1;
        if (K < It->second.size())
          return It->second[K];
      }
    return I.unknown(Name,
                     "member '" + Name + "': its value is not known here",
                     span(S->getSourceRange()),
                     Interpreter::Provenance::External);
  }
  if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S))
    return conditional(CO);
  if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isCommaOp()) {
    sideEffects(BO->getLHS());
    return tensor(BO->getRHS());
  }
  if (const auto *NE = dyn_cast<CXXNewExpr>(S)) {
    (void)NE;
    return I.unknown("new", "a heap tensor is not a value",
                     span(S->getSourceRange()));
  }
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S)) {
    // Copy or move of a Tensor handle: the same tensor.
    if (CE->getNumArgs() == 1 && isTensorType(CE->getArg(0)->getType()))
      return tensor(CE->getArg(0));
    // `torch::Tensor()`: an undefined tensor, no storage.
    if (CE->getNumArgs() == 0)
      return I.undefined("an undefined tensor (default-constructed)");
    return I.unknown("tensor", "constructor not modelled",
                     span(S->getSourceRange()));
  }
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S)) {
    // Assignment is an expression: `a = b = c` assigns c to b, then b to a.
    if (OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2 &&
        isTensorType(OCE->getArg(0)->getType()))
      return assignment(S, OCE->getArg(0), OCE->getArg(1));
    // An element of a std::vector<Tensor>: parts[1], x.chunk(3)[1].
    if (OCE->getOperator() == OO_Subscript && OCE->getNumArgs() == 2 &&
        isTensorVectorType(OCE->getArg(0)->getType()))
      return listElement(S, OCE->getArg(0), OCE->getArg(1));
    const auto *Callee = dyn_cast_or_null<FunctionDecl>(OCE->getCalleeDecl());
    llvm::SmallVector<const Expr *, 4> Args(OCE->arguments());
    if (const auto *MD = dyn_cast_or_null<CXXMethodDecl>(Callee))
      return method(S, MD, Args[0], llvm::ArrayRef(Args).drop_front());
    return call(S, Callee, nullptr, Args);
  }
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S)) {
    const Expr *Obj = MCE->getImplicitObjectArgument();
    if (Obj && isTensorVectorType(Obj->getType())) {
      std::string Name = calleeName(MCE->getMethodDecl());
      if (Name == "at" && MCE->getNumArgs() == 1)
        return listElement(S, Obj, MCE->getArg(0));
      if (Name == "front" || Name == "back") {
        auto List = tensorList(Obj);
        if (List && !List->empty())
          return Name == "front" ? List->front() : List->back();
      }
      return I.unknown("tensor", "element of a tensor list not modelled",
                       span(S->getSourceRange()),
                       Interpreter::Provenance::External);
    }
    llvm::SmallVector<const Expr *, 4> Args(MCE->arguments());
    return method(S, MCE->getMethodDecl(), Obj, Args);
  }
  if (const auto *CE = dyn_cast<CallExpr>(S)) {
    const FunctionDecl *Callee = CE->getDirectCallee();
    std::string QName = Callee ? Callee->getQualifiedNameAsString() : "";
    // std::move / std::forward name the same tensor.
    if ((QName == "std::move" || QName == "std::forward") &&
        CE->getNumArgs() == 1)
      return tensor(CE->getArg(0));
    // std::get<K>(tuple) of a tensor tuple.
    if (QName == "std::get" && CE->getNumArgs() == 1) {
      auto Tuple = tensorTuple(CE->getArg(0));
      const TemplateArgumentList *TA = Callee->getTemplateSpecializationArgs();
      if (Tuple && TA && TA->size() >= 1 &&
          TA->get(0).getKind() == TemplateArgument::Integral) {
        uint64_t K = TA->get(0).getAsIntegral().getZExtValue();
        if (K < Tuple->size())
          return (*Tuple)[K];
      }
      return I.unknown("std::get", "element of a tensor tuple not followed",
                       span(S->getSourceRange()));
    }
    llvm::SmallVector<const Expr *, 4> Args(CE->arguments());
    return call(S, Callee, nullptr, Args);
  }
  return I.unknown("tensor", "expression not modelled",
                   span(S->getSourceRange()));
}

/// `c ? a : b`: a constant condition picks its arm; otherwise which tensor
/// results is decided at run time, and so is what it allocates.
ValueId FunctionEvaluator::conditional(const AbstractConditionalOperator *CO) {
  if (auto C = integer(CO->getCond()))
    return tensor(*C ? CO->getTrueExpr() : CO->getFalseExpr());
  sideEffects(CO->getCond());
  size_t OpsBefore = I.trace().Ops.size();
  tensor(CO->getTrueExpr());
  tensor(CO->getFalseExpr());
  allocationsAreUncertain(OpsBefore, "allocates in an arm of '?:' (line " +
                                         std::to_string(span(CO->getSourceRange()).Line) +
                                         ")");
  return I.unknown("?:", "chosen at run time by the condition",
                   span(CO->getSourceRange()));
}

// ---- Slots: names, references, pointers, members -------------------------------

/// The key of the slot a declaration names: a reference resolves to the
/// slot it was bound to.
std::string FunctionEvaluator::resolveKey(const ValueDecl *D) const {
  std::string K = key(D);
  if (auto It = References.find(K); It != References.end() && It->second.Known &&
                                    It->second.Vector.empty())
    return It->second.Key;
  return K;
}

std::optional<FunctionEvaluator::Slot>
FunctionEvaluator::slotOf(const Expr *E) {
  const Expr *S = strip(E);
  if (!S)
    return std::nullopt;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    const ValueDecl *D = DRE->getDecl();
    if (!isa<VarDecl>(D) && !isa<BindingDecl>(D))
      return std::nullopt;
    if (auto It = References.find(key(D)); It != References.end())
      return It->second;
    Slot Sl;
    Sl.Key = key(D);
    Sl.Display = D->getName().str();
    if (I.lookup(Sl.Key) == NoValue)
      return std::nullopt; // not a tensor this function holds
    return Sl;
  }
  if (const auto *ME = dyn_cast<MemberExpr>(S)) {
    // A member of an aggregate local (`h.t`) or of a pointed-to one.
    const auto *Field = dyn_cast<FieldDecl>(ME->getMemberDecl());
    if (!Field || !isTensorType(Field->getType()))
      return std::nullopt;
    std::optional<Slot> Base;
    if (ME->isArrow()) {
      if (const auto *P = dyn_cast<DeclRefExpr>(strip(ME->getBase())))
        if (auto It = Pointers.find(key(P->getDecl())); It != Pointers.end())
          Base = It->second;
    } else if (const auto *B = dyn_cast<DeclRefExpr>(strip(ME->getBase()))) {
      Base = Slot{};
      Base->Key = resolveKey(B->getDecl());
      Base->Display = B->getDecl()->getName().str();
    }
    if (!Base || !Base->Known)
      return std::nullopt;
    Slot Sl;
    Sl.Key = Base->Key + "." + Field->getName().str();
    Sl.Display = Base->Display + "." + Field->getName().str();
    if (I.lookup(Sl.Key) == NoValue)
      return std::nullopt;
    return Sl;
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(S); UO && UO->getOpcode() == UO_Deref) {
    if (const auto *P = dyn_cast<DeclRefExpr>(strip(UO->getSubExpr())))
      if (auto It = Pointers.find(key(P->getDecl())); It != Pointers.end())
        return It->second;
    Slot Sl;
    Sl.Known = false;
    Sl.Display = "*pointer";
    Sl.Why = "a pointer the analysis does not follow";
    for (const auto &[K, Name] : AddressTaken)
      Sl.Candidates.push_back(K);
    return Sl;
  }
  return std::nullopt;
}

ValueId FunctionEvaluator::readSlot(const Slot &Sl, const Expr *E) {
  if (!Sl.Known)
    return I.unknown(Sl.Display, "'" + Sl.Display + "' names " + Sl.Why,
                     span(E->getSourceRange()));
  if (!Sl.Vector.empty()) {
    auto It = TensorLists.find(Sl.Vector);
    if (It != TensorLists.end() && Sl.Index < It->second.size())
      return It->second[Sl.Index];
    return I.unknown(Sl.Display, "element of a tensor list not followed",
                     span(E->getSourceRange()),
                     Interpreter::Provenance::External);
  }
  ValueId V = I.lookup(Sl.Key);
  if (V != NoValue)
    return V;
  return I.unknown(Sl.Display, "'" + Sl.Display + "' is not known here",
                   span(E->getSourceRange()), Interpreter::Provenance::External);
}

/// Assigning a tensor to a slot rebinds the handle stored there: every
/// name referring to that slot sees the new tensor.
void FunctionEvaluator::assignSlot(const Slot &Sl, ValueId V,
                                   const SourceSpan &Where,
                                   const SourceSpan &NameWhere) {
  if (!Sl.Known) {
    // Any candidate may have been assigned: none is known any more.
    for (const std::string &K : Sl.Candidates) {
      std::string Name = AddressTaken.count(K) ? AddressTaken[K] : I.nameOf(K);
      forgetSlot(K, Name.empty() ? "a member" : Name,
                 "may be assigned through " + Sl.Display, Where);
    }
    I.totalsUnknown("assignment through " + Sl.Display + " (line " +
                    std::to_string(Where.Line) + ") is not followed");
    return;
  }
  if (!Sl.Vector.empty()) {
    auto It = TensorLists.find(Sl.Vector);
    if (It != TensorLists.end() && Sl.Index < It->second.size())
      It->second[Sl.Index] = V;
  }
  I.bind(Sl.Key, Sl.Display, V, Where, NameWhere, /*Reassignment=*/true);
}

void FunctionEvaluator::forgetSlot(const std::string &Key,
                                   const std::string &Display,
                                   const std::string &Why,
                                   const SourceSpan &Where) {
  if (I.lookup(Key) == NoValue)
    return;
  ValueId V = I.unknown(Display, "'" + Display + "' " + Why, Where,
                        Interpreter::Provenance::External);
  I.rebind(Key, V);
  I.totalsUnknown("'" + Display + "' " + Why);
}

/// `lhs = rhs` for a tensor lhs; the value of the expression is lhs.
ValueId FunctionEvaluator::assignment(const Expr *E, const Expr *LHS,
                                      const Expr *RHS) {
  ValueId V = tensor(RHS);
  if (const auto *Ref = dyn_cast<DeclRefExpr>(strip(RHS));
      Ref && V >= 0) {
    (void)Ref; // a handle copy: the same tensor under another name
  }
  // `std::tie(a, b) = tuple` has no tensor lhs; see expressionStatement.
  std::optional<Slot> Sl = slotOf(LHS);
  const Expr *L = strip(LHS);
  if (!Sl) {
    // A name declared without a tensor (`torch::Tensor a;`) or one we
    // never held: it becomes this value from here on.
    if (const auto *DRE = dyn_cast<DeclRefExpr>(L);
        DRE && isa<VarDecl>(DRE->getDecl()) &&
        DRE->getDecl()->getDeclContext()->isFunctionOrMethod()) {
      Slot New;
      New.Key = resolveKey(DRE->getDecl());
      New.Display = DRE->getDecl()->getName().str();
      Sl = New;
    } else {
      // A reference returned by a method may name any member of its
      // object: none of them is known any more.
      if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(L))
        if (const auto *Obj =
                dyn_cast<DeclRefExpr>(strip(MCE->getImplicitObjectArgument())))
          for (const std::string &K :
               I.keysWithPrefix(resolveKey(Obj->getDecl()) + "."))
            forgetSlot(K, Obj->getDecl()->getName().str() + "'s member",
                       "may be assigned through '" +
                           calleeName(MCE->getMethodDecl()) + "()'",
                       span(E->getSourceRange()));
      // A member of an object we do not follow, a global, a call result:
      // the tensor escapes there and outlives this statement.
      std::string Where = std::to_string(span(E->getSourceRange()).Line);
      I.hold("escaped@" + std::to_string(reinterpret_cast<uintptr_t>(E)), V);
      I.totalsUnknown("assigned to an object the analysis does not follow "
                      "(line " + Where + ")");
      return V;
    }
  }
  assignSlot(*Sl, V, span(E->getSourceRange()), span(L->getSourceRange()));
  // Moving from a name leaves it an undefined tensor.
  if (const auto *CE = dyn_cast<CallExpr>(strip(RHS)))
    if (const FunctionDecl *C = CE->getDirectCallee();
        C && C->getQualifiedNameAsString() == "std::move" && CE->getNumArgs() == 1)
      if (auto From = slotOf(CE->getArg(0)); From && From->Known &&
                                             From->Key != Sl->Key)
        I.rebind(From->Key, I.unknown(From->Display,
                                      "moved from: an undefined tensor",
                                      span(CE->getSourceRange()),
                                      Interpreter::Provenance::External));
  return V;
}

// ---- Calls the analysis does not follow ------------------------------------------------

/// Whether calling FD may allocate tensor storage: code that works with
/// tensors, or whose body is not visible. The standard library and C do
/// not (they hold tensors only as the caller gives them).
bool FunctionEvaluator::mayAllocateTensors(const FunctionDecl *Callee,
                                           int Depth) {
  if (!Callee)
    return true;
  if (isLibTorchDecl(Callee))
    return false; // a LibTorch call returning no tensor: item(), size()
  if (topNamespace(Callee) == "std" || topNamespace(Callee) == "__gnu_cxx" ||
      SM.isInSystemHeader(SM.getExpansionLoc(Callee->getLocation())))
    return false;
  if (auto It = MayAllocate.find(Callee); It != MayAllocate.end())
    return It->second;
  const FunctionDecl *Def = nullptr;
  if (!Callee->hasBody(Def) || !Def || Depth > 8) {
    MayAllocate[Callee] = true;
    return true;
  }
  MayAllocate[Callee] = true; // a cycle: assume it may
  struct Finder : RecursiveASTVisitor<Finder> {
    std::vector<const FunctionDecl *> Calls;
    bool Tensors = false;
    bool VisitExpr(Expr *X) {
      if (isTensorType(X->getType()) || isTensorVectorType(X->getType()))
        Tensors = true;
      if (const auto *C = dyn_cast<CallExpr>(X))
        Calls.push_back(C->getDirectCallee());
      return !Tensors;
    }
  } Find;
  Find.TraverseStmt(Def->getBody());
  bool May = Find.Tensors;
  for (const FunctionDecl *C : Find.Calls)
    if (!May && C != Callee)
      May = mayAllocateTensors(C, Depth + 1);
  MayAllocate[Callee] = May;
  return May;
}

// ---- Expressions without a tensor value ----------------------------------------------

void FunctionEvaluator::allocationsAreUncertain(size_t OpsBefore,
                                                const std::string &Why) {
  for (size_t K = OpsBefore; K < I.trace().Ops.size(); ++K) {
    const OpEvent &Op = I.trace().Ops[K];
    if (Op.Kind == OpKind::Alloc || Op.Kind == OpKind::Copy ||
        Op.Kind == OpKind::Unknown) {
      I.totalsUnknown(Why);
      return;
    }
  }
}

/// The tensor work inside E: every outermost subexpression of tensor
/// (or tensor list, or tensor tuple) type is evaluated once; names are
/// not work. Lambda bodies are functions of their own. Operands evaluated
/// only on some paths (`?:` arms, the right of `&&` and `||`) make their
/// allocations uncertain.
void FunctionEvaluator::sideEffects(const Expr *E) {
  if (!E)
    return;
  struct Item {
    const Stmt *S;
    bool Conditional;
  };
  std::vector<Item> Work = {{E, false}};
  while (!Work.empty()) {
    Item It = Work.back();
    Work.pop_back();
    const auto *X = dyn_cast_or_null<Expr>(It.S);
    if (!X)
      continue;
    if (isa<LambdaExpr>(X) || isa<UnaryExprOrTypeTraitExpr>(X) ||
        isa<CXXTypeidExpr>(X) || isa<CXXNoexceptExpr>(X))
      continue;
    const Expr *SX = strip(X);
    size_t OpsBefore = I.trace().Ops.size();
    bool Evaluated = false;
    if (SX && !isa<DeclRefExpr>(SX) && !isa<MemberExpr>(SX)) {
      QualType T = SX->getType();
      if (isTensorType(T)) {
        tensor(SX);
        Evaluated = true;
      } else if (isTensorVectorType(T)) {
        tensorList(SX);
        Evaluated = true;
      } else if (isTensorTupleType(T)) {
        tensorTuple(SX);
        Evaluated = true;
      }
    }
    if (Evaluated) {
      if (It.Conditional)
        allocationsAreUncertain(OpsBefore,
                                "allocates in a conditionally evaluated "
                                "operand (line " +
                                    std::to_string(span(SX->getSourceRange()).Line) +
                                    ")");
      continue;
    }
    if (const auto *CE = dyn_cast<CallExpr>(X))
      opaqueCallEffects(CE);
    // Children, pushed in reverse so they are evaluated left to right.
    std::vector<Item> Children;
    if (const auto *CO = dyn_cast<AbstractConditionalOperator>(X)) {
      auto Cond = integer(CO->getCond());
      Children.push_back({CO->getCond(), It.Conditional});
      if (Cond)
        Children.push_back({*Cond ? CO->getTrueExpr() : CO->getFalseExpr(),
                            It.Conditional});
      else {
        Children.push_back({CO->getTrueExpr(), true});
        Children.push_back({CO->getFalseExpr(), true});
      }
    } else if (const auto *BO = dyn_cast<BinaryOperator>(X); BO && BO->isLogicalOp()) {
      Children.push_back({BO->getLHS(), It.Conditional});
      Children.push_back({BO->getRHS(), true});
    } else {
      for (const Stmt *C : X->children())
        Children.push_back({C, It.Conditional});
    }
    for (auto R = Children.rbegin(); R != Children.rend(); ++R)
      Work.push_back(*R);
  }
}

/// A call the analysis does not follow may still change the caller's
/// tensors: a lambda assigning what it captured by reference, a function
/// taking a tensor by non-const reference or pointer.
void FunctionEvaluator::opaqueCallEffects(const CallExpr *CE) {
  const FunctionDecl *Callee = CE->getDirectCallee();
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(CE);
      OCE && OCE->getOperator() == OO_Call && OCE->getNumArgs() >= 1) {
    const CXXRecordDecl *RD =
        OCE->getArg(0)->getType().getNonReferenceType()->getAsCXXRecordDecl();
    if (RD && RD->isLambda()) {
      const CXXMethodDecl *Op = RD->getLambdaCallOperator();
      unsigned Line = span(CE->getSourceRange()).Line;
      if (Op && Op->getBody()) {
        struct Finder : RecursiveASTVisitor<Finder> {
          std::vector<const VarDecl *> Assigned;
          bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
            if (E->getOperator() == OO_Equal && E->getNumArgs() == 2)
              if (const auto *D = dyn_cast<DeclRefExpr>(strip(E->getArg(0))))
                if (const auto *V = dyn_cast<VarDecl>(D->getDecl()))
                  Assigned.push_back(V);
            return true;
          }
        } Find;
        Find.TraverseStmt(Op->getBody());
        for (const VarDecl *V : Find.Assigned)
          forgetSlot(resolveKey(V), V->getName().str(),
                     "is assigned by the lambda called at line " +
                         std::to_string(Line),
                     span(CE->getSourceRange()));
      }
      if (mayAllocateTensors(Op))
        I.totalsUnknown("the lambda called at line " + std::to_string(Line) +
                        " is not analysed: what it allocates is unknown");
      return;
    }
  }
  if (!Callee || isLibTorchDecl(Callee))
    return;
  std::string Name = Callee->getQualifiedNameAsString();
  if (Name == "std::move" || Name == "std::forward" || Name == "std::get" ||
      Name == "std::tie" || Name == "std::swap")
    return;
  if (mayAllocateTensors(Callee))
    I.totalsUnknown("call to '" + Name + "' (line " +
                    std::to_string(span(CE->getSourceRange()).Line) +
                    ") is not analysed: what it allocates is unknown");
  unsigned Skip = isa<CXXOperatorCallExpr>(CE) &&
                          isa<CXXMethodDecl>(Callee) ? 1 : 0;
  for (unsigned K = 0; K + Skip < CE->getNumArgs() && K < Callee->getNumParams();
       ++K) {
    QualType PT = Callee->getParamDecl(K)->getType();
    const Expr *A = CE->getArg(K + Skip);
    bool ByRef = PT->isReferenceType() &&
                 !PT.getNonReferenceType().isConstQualified() && isTensorType(PT);
    bool ByPointer = PT->isPointerType() &&
                     !PT->getPointeeType().isConstQualified() &&
                     isTensorType(PT->getPointeeType());
    const Expr *Target = A;
    if (ByPointer)
      if (const auto *UO = dyn_cast<UnaryOperator>(strip(A));
          UO && UO->getOpcode() == UO_AddrOf)
        Target = UO->getSubExpr();
    if ((ByRef || ByPointer))
      if (auto Sl = slotOf(Target); Sl && Sl->Known)
        forgetSlot(Sl->Key, Sl->Display,
                   std::string(ByRef ? "passed by reference" : "passed by pointer") +
                       " to '" + Name + "'",
                   span(A->getSourceRange()));
  }
}

ValueId FunctionEvaluator::listElement(const Expr *E, const Expr *List,
                                       const Expr *Index) {
  auto L = tensorList(List);
  auto K = integer(Index);
  if (!L)
    return I.unknown("tensor", "the tensor list could not be derived",
                     span(E->getSourceRange()));
  if (!K || *K < 0 || *K >= static_cast<int64_t>(L->size()))
    return I.unknown("tensor",
                     K ? "index " + std::to_string(*K) +
                             " is out of range for a list of " +
                             std::to_string(L->size()) + " tensors"
                       : "list index could not be derived",
                     span(E->getSourceRange()));
  return (*L)[*K];
}

/// The tensors of a std::vector<Tensor> or TensorList expression: a local
/// vector, chunk/split/unbind results, or a braced list `{a, b}`.
std::optional<std::vector<ValueId>>
FunctionEvaluator::tensorList(const Expr *E) {
  const Expr *S = strip(E);
  if (!S)
    return std::nullopt;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    auto It = TensorLists.find(resolveKey(DRE->getDecl()));
    if (It == TensorLists.end())
      return std::nullopt;
    return It->second;
  }
  if (auto It = EvaluatedLists.find(S); It != EvaluatedLists.end())
    return It->second;
  auto L = evaluateList(S);
  EvaluatedLists[S] = L;
  return L;
}

std::optional<std::vector<ValueId>>
FunctionEvaluator::evaluateList(const Expr *S) {
  // `std::vector<torch::Tensor> v;` starts empty.
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S); CE && CE->getNumArgs() == 0)
    return std::vector<ValueId>{};
  // Braced lists reach a TensorList parameter through ArrayRef and
  // std::initializer_list constructors.
  const Expr *Cur = S;
  for (int Depth = 0; Depth < 6 && Cur; ++Depth) {
    Cur = strip(Cur);
    if (const auto *IL = dyn_cast<InitListExpr>(Cur)) {
      std::vector<ValueId> Out;
      for (const Expr *Elem : IL->inits())
        Out.push_back(tensor(Elem));
      return Out;
    }
    if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(Cur)) {
      Cur = SIL->getSubExpr();
      continue;
    }
    if (const auto *CE = dyn_cast<CXXConstructExpr>(Cur)) {
      if (CE->getNumArgs() == 1 &&
          (isTensorVectorType(CE->getArg(0)->getType()) ||
           isa<InitListExpr>(strip(CE->getArg(0))) ||
           isa<CXXStdInitializerListExpr>(strip(CE->getArg(0))) ||
           isa<CXXConstructExpr>(strip(CE->getArg(0))))) {
        Cur = CE->getArg(0);
        continue;
      }
      if (CE->getNumArgs() == 1 && isTensorType(CE->getArg(0)->getType()))
        return std::vector<ValueId>{tensor(CE->getArg(0))};
      break;
    }
    if (isTensorVectorType(Cur->getType()) && Cur != S)
      return tensorList(Cur);
    break;
  }
  // chunk / split / split_with_sizes / unbind, as methods or functions.
  const Expr *Object = nullptr;
  const FunctionDecl *Callee = nullptr;
  llvm::SmallVector<const Expr *, 4> Args;
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S)) {
    Object = MCE->getImplicitObjectArgument();
    Callee = MCE->getMethodDecl();
    Args.append(MCE->arg_begin(), MCE->arg_end());
  } else if (const auto *CE = dyn_cast<CallExpr>(S)) {
    Callee = CE->getDirectCallee();
    if (CE->getNumArgs() >= 1 && isTensorType(CE->getArg(0)->getType())) {
      Object = CE->getArg(0);
      Args.append(CE->arg_begin() + 1, CE->arg_end());
    }
  }
  if (!Object || !Callee || !isTensorType(Object->getType()) ||
      !isLibTorchDecl(Callee))
    return std::nullopt;
  std::string Name = calleeName(Callee);
  ValueId Self = tensor(Object);
  const TensorValue &In = I.value(Self);
  auto Int = [&](unsigned K) {
    return K < Args.size() ? integer(Args[K]) : std::optional<int64_t>();
  };
  std::vector<OpOutcome> Pieces;
  if (Name == "chunk" && Int(0) && Int(1)) {
    Pieces = tma::chunk(In, *Int(0), *Int(1));
  } else if ((Name == "split" || Name == "split_with_sizes") &&
             Args.size() >= 2 && Int(1)) {
    unsigned ParamBase = isa<CXXMethodDecl>(Callee) ? 0 : 1;
    QualType PT = Callee->getParamDecl(ParamBase)->getType();
    if (PT->isIntegerType()) {
      if (auto Size = Int(0))
        Pieces = tma::split(In, *Size, *Int(1));
    } else if (auto Sizes = intList(Args[0])) {
      Pieces = tma::splitWithSizes(In, *Sizes, *Int(1));
    }
  } else if (Name == "unbind" && Int(0)) {
    Pieces = tma::unbind(In, *Int(0));
  }
  if (Pieces.empty()) {
    unmodelledCall(Name, S, {Self},
                   "'" + Name + "' with these arguments is not modelled");
    return std::nullopt;
  }
  std::vector<ValueId> Out;
  for (const OpOutcome &P : Pieces)
    Out.push_back(apply(Name, S, {Self}, P));
  if (Pieces.size() == 1 && Pieces[0].Kind != OpKind::View)
    return std::nullopt; // throws, or the input is unknown
  return Out;
}

/// The tensors of a std::tuple / std::pair of tensors: a local, a LibTorch
/// op returning values and indices (max(dim), min(dim)), or one built
/// from tensors (std::make_pair, std::make_tuple, the constructors).
std::optional<std::vector<ValueId>>
FunctionEvaluator::tensorTuple(const Expr *E) {
  const Expr *S = strip(E);
  if (!S)
    return std::nullopt;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    auto It = TensorTuples.find(resolveKey(DRE->getDecl()));
    if (It == TensorTuples.end())
      return std::nullopt;
    return It->second;
  }
  if (auto It = EvaluatedTuples.find(S); It != EvaluatedTuples.end())
    return It->second;
  auto T = evaluateTuple(S);
  EvaluatedTuples[S] = T;
  return T;
}

std::optional<std::vector<ValueId>>
FunctionEvaluator::evaluateTuple(const Expr *S) {
  // Built from tensors: each element is the tensor handed in.
  auto Elements = [&](llvm::ArrayRef<const Expr *> Args)
      -> std::optional<std::vector<ValueId>> {
    std::vector<ValueId> Out;
    for (const Expr *A : Args) {
      if (!isTensorType(A->getType()))
        return std::nullopt;
      Out.push_back(tensor(A));
    }
    return Out;
  };
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S)) {
    llvm::SmallVector<const Expr *, 4> Args(CE->arguments());
    if (Args.size() == 1 && isTensorTupleType(Args[0]->getType()))
      return tensorTuple(Args[0]); // a copy or a move
    return Elements(Args);
  }
  const auto *CE = dyn_cast<CallExpr>(S);
  if (!CE)
    return std::nullopt;
  const FunctionDecl *Callee = CE->getDirectCallee();
  if (!Callee)
    return std::nullopt;
  std::string QName = Callee->getQualifiedNameAsString();
  if (QName == "std::make_pair" || QName == "std::make_tuple") {
    llvm::SmallVector<const Expr *, 4> Args(CE->arguments());
    return Elements(Args);
  }
  if (QName == "std::move" && CE->getNumArgs() == 1)
    return tensorTuple(CE->getArg(0));
  if (!isLibTorchDecl(Callee))
    return std::nullopt;
  // max(dim, keepdim) / min(dim, keepdim), as methods or functions.
  std::string Name = calleeName(Callee);
  const Expr *Object = nullptr;
  llvm::SmallVector<const Expr *, 4> Args;
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(CE)) {
    Object = MCE->getImplicitObjectArgument();
    Args.append(MCE->arg_begin(), MCE->arg_end());
  } else if (CE->getNumArgs() >= 1) {
    Object = CE->getArg(0);
    Args.append(CE->arg_begin() + 1, CE->arg_end());
  }
  if (!Object || !isTensorType(Object->getType()))
    return std::nullopt;
  ValueId Self = tensor(Object);
  std::vector<OpOutcome> Pieces;
  if ((Name == "max" || Name == "min") && !Args.empty() &&
      Args[0]->getType()->isIntegerType()) {
    auto Dim = integer(Args[0]);
    std::optional<int64_t> Keep = 0;
    if (Args.size() >= 2 && !isDefaultArg(Args[1]))
      Keep = integer(Args[1]);
    if (Dim && Keep)
      Pieces = reduceWithIndices(Name, I.value(Self), *Dim, *Keep != 0);
  }
  if (Pieces.empty()) {
    unmodelledCall(Name, S, {Self},
                   "'" + Name + "' returning a tuple is not modelled here");
    return std::nullopt;
  }
  std::vector<ValueId> Out;
  for (const OpOutcome &P : Pieces)
    Out.push_back(apply(Name, S, {Self}, P));
  if (Pieces.size() == 1)
    return std::nullopt; // throws, or the input is unknown
  return Out;
}

ValueId FunctionEvaluator::call(const Expr *E, const FunctionDecl *Callee,
                                const Expr *Object,
                                llvm::ArrayRef<const Expr *> Args) {
  if (!Callee)
    return I.unknown("call", "callee could not be resolved",
                     span(E->getSourceRange()));
  if (!isLibTorchDecl(Callee)) {
    std::string Name = Callee->getQualifiedNameAsString();
    std::vector<ValueId> Inputs;
    for (const Expr *A : Args)
      if (isTensorType(A->getType()))
        Inputs.push_back(tensor(A));
    if (const auto *CE = dyn_cast<CallExpr>(E))
      opaqueCallEffects(CE);
    return unmodelledCall(Name, E, Inputs,
                          "call to '" + Name + "' is not analysed");
  }
  return freeFunction(E, Callee, Args);
}

/// A named tensor changed in a way the analysis does not follow: its name
/// becomes unknown and so do the function's totals.
void FunctionEvaluator::forgetObject(const Expr *Object,
                                     const std::string &Why) {
  if (auto Sl = slotOf(Object); Sl && Sl->Known)
    forgetSlot(Sl->Key, Sl->Display, Why, span(Object->getSourceRange()));
}

std::optional<FunctionEvaluator::Number>
FunctionEvaluator::number(const Expr *E) {
  E = stripConversions(E, [](const Expr *X) {
    return X->getType()->isArithmeticType();
  });
  if (!E || E->isValueDependent() || !E->getType()->isArithmeticType())
    return std::nullopt;
  if (E->getType()->isIntegralOrEnumerationType()) {
    auto V = integer(E);
    if (!V)
      return std::nullopt;
    return Number{static_cast<double>(*V), false};
  }
  llvm::APFloat F(0.0);
  if (!E->EvaluateAsFloat(F, Ctx))
    return std::nullopt;
  bool LosesInfo = false;
  F.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &LosesInfo);
  return Number{F.convertToDouble(), true};
}

/// The category of a C++ scalar argument as ATen wraps it: bool -> Bool,
/// integers -> Int64, floating -> Float64 (a double Scalar).
std::optional<DType> FunctionEvaluator::scalarCategory(const Expr *E) {
  E = stripConversions(E, [](const Expr *X) {
    return X->getType()->isArithmeticType();
  });
  if (!E)
    return std::nullopt;
  QualType T = E->getType();
  if (T->isBooleanType())
    return DType::Bool;
  if (T->isIntegralOrEnumerationType())
    return DType::Int64;
  if (T->isRealFloatingType())
    return DType::Float64;
  return std::nullopt;
}

ElemOperand FunctionEvaluator::operand(const Expr *E) {
  const Expr *T = stripConversions(E, [](const Expr *X) {
    return isTensorType(X->getType());
  });
  if (T && isTensorType(T->getType()))
    return ElemOperand::tensor(I.value(tensor(T)));
  return ElemOperand::scalar(scalarCategory(E));
}

/// An optional tensor argument (linear's bias): absent when it is a
/// default, `{}`, c10::nullopt or an empty Tensor().
FunctionEvaluator::OptTensor FunctionEvaluator::optionalTensor(const Expr *E) {
  OptTensor R;
  if (!E || isDefaultArg(E))
    return R;
  const Expr *S = stripConversions(E, [](const Expr *X) {
    return isTensorType(X->getType());
  });
  if (!S)
    return R;
  if (isTensorType(S->getType())) {
    if (const auto *CE = dyn_cast<CXXConstructExpr>(S); CE && CE->getNumArgs() == 0)
      return R;
    R.Present = true;
    R.E = S;
    return R;
  }
  std::string T = recordName(S->getType());
  if (T == "c10::nullopt_t" || T == "std::nullopt_t")
    return R;
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S); CE && CE->getNumArgs() == 0)
    return R;
  R.Understood = false;
  return R;
}

/// The value inside an optional argument (c10::optional<T>, SymInt, ...),
/// or null when the argument is absent: a default, c10::nullopt, `{}`.
/// IsValue says when the unwrapping has reached the value itself.
template <typename Pred>
static const Expr *presentOptional(const Expr *E, Pred IsValue) {
  if (!E)
    return nullptr;
  const Expr *S = stripConversions(E, [&](const Expr *X) {
    std::string T = recordName(X->getType());
    return IsValue(X) || T == "c10::nullopt_t" || T == "std::nullopt_t";
  });
  if (!S)
    return nullptr;
  std::string T = recordName(S->getType());
  if (T == "c10::nullopt_t" || T == "std::nullopt_t")
    return nullptr;
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S); CE && CE->getNumArgs() == 0)
    return nullptr;
  return S;
}

/// Reads an optional integer argument: absent (default / nullopt), a
/// value, or not derivable.
FunctionEvaluator::OptInt FunctionEvaluator::optionalInt(const Expr *E) {
  OptInt R;
  if (const Expr *S = presentOptional(
          E, [](const Expr *X) { return X->getType()->isIntegerType(); })) {
    R.Present = true;
    R.Value = integer(S);
  }
  return R;
}

/// An optional ScalarType argument: absent, a dtype, or not derivable.
FunctionEvaluator::OptDType FunctionEvaluator::optionalDType(const Expr *E) {
  OptDType R;
  if (const Expr *S = presentOptional(
          E, [](const Expr *X) { return X->getType()->isEnumeralType(); })) {
    R.Present = true;
    R.Value = scalarType(S);
  }
  return R;
}

// ---- Factories -----------------------------------------------------------------------

ValueId FunctionEvaluator::factoryCall(const Expr *E, const std::string &Name,
                                       const FunctionDecl *Callee,
                                       llvm::ArrayRef<const Expr *> Args) {
  // Find the size lists, scalars, integers and options by parameter type,
  // so that every overload (randint(high, size), randint(low, high, size),
  // full(size, value), arange(start, end, step)) is read the same way.
  std::vector<std::optional<Dims>> Lists;
  Options O;
  bool SawOptions = false;
  std::vector<const Expr *> Scalars, Ints;
  std::optional<DType> LooseType;
  bool LooseTypeUnknown = false;
  for (unsigned K = 0; K < Args.size() && K < Callee->getNumParams(); ++K) {
    QualType PT = Callee->getParamDecl(K)->getType();
    std::string PName = recordName(PT);
    if (PName == "c10::ArrayRef" || PName == "c10::SymIntArrayRef") {
      Lists.push_back(intList(Args[K]));
    } else if (PName == "c10::TensorOptions") {
      SawOptions = true;
      O = options(Args[K]);
    } else if (PName == "c10::Scalar") {
      Scalars.push_back(Args[K]);
    } else if (PT->isIntegerType() && !PT->isBooleanType()) {
      Ints.push_back(Args[K]);
    } else if (PName == "c10::ScalarType") {
      LooseType = scalarType(Args[K]);
      LooseTypeUnknown = !LooseType;
    } else if (PName == "c10::optional") {
      // at::randn(size, dtype, layout, device, pin_memory) style overloads.
      auto T = optionalDType(Args[K]);
      if (T.Present && (T.Value || K == 1)) {
        LooseType = T.Value;
        LooseTypeUnknown = !T.Value;
      }
    }
  }
  // The shape, per factory.
  std::optional<Dims> Sizes;
  std::string ShapeReason = "size argument could not be derived";
  std::optional<DType> ValueType; // a dtype the arguments imply
  auto IntArg = [&](size_t K) {
    return K < Ints.size() ? integer(Ints[K]) : std::optional<int64_t>();
  };
  if (Name == "arange") {
    std::vector<Number> Nums;
    bool AllKnown = true;
    for (const Expr *S : Scalars) {
      auto N = number(S);
      if (!N)
        AllKnown = false;
      else
        Nums.push_back(*N);
    }
    if (AllKnown && !Nums.empty() && Nums.size() <= 3) {
      double Start = Nums.size() >= 2 ? Nums[0].Value : 0;
      double End = Nums.size() >= 2 ? Nums[1].Value : Nums[0].Value;
      double Step = Nums.size() == 3 ? Nums[2].Value : 1;
      bool Floating = std::any_of(Nums.begin(), Nums.end(),
                                  [](const Number &N) { return N.Floating; });
      ValueType = Floating ? DType::Float32 : DType::Int64;
      if (auto N = arangeSize(Start, End, Step))
        Sizes = Dims{*N};
      else
        return apply(Name, E, {},
                     throws("upper bound and larger bound inconsistent with "
                            "step sign"));
    } else {
      ShapeReason = "arange bounds could not be derived";
    }
  } else if (Name == "linspace" || Name == "logspace") {
    if (auto N = IntArg(0)) {
      if (*N < 0)
        return apply(Name, E, {}, throws("number of steps must be non-negative"));
      Sizes = Dims{*N};
    }
  } else if (Name == "eye") {
    auto N = IntArg(0);
    auto M = Ints.size() >= 2 ? IntArg(1) : N;
    if (N && M)
      Sizes = Dims{*N, *M};
  } else if (Name == "randperm") {
    if (auto N = IntArg(0))
      Sizes = Dims{*N};
  } else if (Name == "scalar_tensor") {
    Sizes = Dims{};
  } else if (!Lists.empty()) {
    Sizes = Lists[0];
  } else {
    ShapeReason = "no size argument found";
  }
  if (Name == "full" && !Scalars.empty())
    ValueType = scalarLiteralType(Scalars[0]);

  std::optional<DType> Type;
  std::optional<Device> Dev = Device{DeviceKind::CPU, -1};
  std::string Reason;
  if (!O.Known) {
    Type.reset();
    Dev.reset();
    Reason = O.UnknownReason.empty() ? "options could not be derived"
                                     : O.UnknownReason;
  } else {
    if (O.HasDevice)
      Dev = O.Dev;
    if (O.HasType) {
      Type = O.Type;
    } else if (LooseType || LooseTypeUnknown) {
      Type = LooseType;
    } else if (ValueType) {
      // full infers its dtype from the fill value, arange from its bounds.
      Type = ValueType;
    } else if (Name == "full" || Name == "arange") {
      Type.reset();
      Reason = "the value's type could not be derived";
    } else {
      // No dtype: the default dtype (float32). This is where a C++
      // randint with options but no dtype becomes float32.
      Type = DType::Float32;
    }
  }
  FillKind Fill = (Name == "empty" || Name == "empty_strided")
                      ? FillKind::Uninitialized
                      : FillKind::Filled;
  OpOutcome Out;
  if (Name == "empty_strided") {
    if (Lists.size() >= 2 && Lists[0] && Lists[1])
      Out = emptyStrided(*Lists[0], *Lists[1], Type, Dev);
    else
      Out = factory(std::nullopt, Type, Dev, Fill);
  } else {
    Out = factory(Sizes, Type, Dev, Fill);
  }
  if (!Sizes && Name != "empty_strided")
    Out.Value.UnknownReason = ShapeReason;
  else if (!Reason.empty())
    Out.Value.UnknownReason = Reason;
  if (Out.Kind == OpKind::Alloc && Type && (Name == "randint" || Name == "randperm") &&
      !O.HasType && SawOptions && O.Known && *Type == DType::Float32) {
    Out.Note = "options without a dtype: float32, not int64";
    Out.DTypeDefaulted = true;
  }
  return apply(Name, E, {}, Out);
}

/// torch::tensor({...}) and at::tensor({...}): the shape from the nested
/// braces, the dtype from the element type (torch:: gives int64/float32
/// like Python, at:: the C++ type: int32/float64).
ValueId FunctionEvaluator::tensorLiteral(const Expr *E, const FunctionDecl *Callee,
                                         llvm::ArrayRef<const Expr *> Args) {
  bool Torch = topNamespace(Callee) == "torch";
  if (Args.empty())
    return unmodelledCall("tensor", E, {}, "tensor() without data");
  // Walk down to the outermost braces.
  std::function<std::optional<std::pair<Dims, QualType>>(const Expr *)> Shape =
      [&](const Expr *X) -> std::optional<std::pair<Dims, QualType>> {
    for (int Depth = 0; Depth < 8 && X; ++Depth) {
      X = strip(X);
      if (const auto *IL = dyn_cast<InitListExpr>(X)) {
        if (IL->getNumInits() == 0)
          return std::nullopt;
        std::optional<std::pair<Dims, QualType>> Inner;
        for (const Expr *Elem : IL->inits()) {
          auto S = Shape(Elem);
          if (!S)
            return std::nullopt;
          if (Inner && (Inner->first != S->first ||
                        Ctx.getCanonicalType(Inner->second) !=
                            Ctx.getCanonicalType(S->second)))
            return std::nullopt;
          Inner = S;
        }
        Dims D = {static_cast<int64_t>(IL->getNumInits())};
        D.insert(D.end(), Inner->first.begin(), Inner->first.end());
        return std::make_pair(D, Inner->second);
      }
      if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(X)) {
        X = SIL->getSubExpr();
        continue;
      }
      if (const auto *CE = dyn_cast<CXXConstructExpr>(X)) {
        if (CE->getNumArgs() != 1)
          return std::nullopt;
        X = CE->getArg(0);
        continue;
      }
      if (X->getType()->isArithmeticType())
        return std::make_pair(Dims{}, X->getType());
      return std::nullopt;
    }
    return std::nullopt;
  };
  auto S = Shape(Args[0]);
  if (!S || (!Torch && S->first.size() != 1))
    return unmodelledCall("tensor", E, {}, "tensor data could not be read");
  QualType T = S->second;
  std::optional<DType> Type;
  if (T->isBooleanType())
    Type = DType::Bool;
  else if (Torch)
    Type = T->isIntegerType() ? DType::Int64 : DType::Float32;
  else if (T->isIntegerType())
    Type = Ctx.getTypeSize(T) == 64 ? DType::Int64 : DType::Int32;
  else
    Type = Ctx.getTypeSize(T) == 64 ? DType::Float64 : DType::Float32;
  std::optional<Device> Dev = Device{DeviceKind::CPU, -1};
  if (Args.size() >= 2 && !isDefaultArg(Args[1])) {
    Options O = options(Args[1]);
    if (!O.Known)
      return unmodelledCall("tensor", E, {}, "options could not be derived");
    if (O.HasType)
      Type = O.Type;
    if (O.HasDevice)
      Dev = O.Dev;
  }
  return apply("tensor", E, {}, factory(S->first, Type, Dev, FillKind::Filled));
}

// ---- Calls ---------------------------------------------------------------------------

ValueId FunctionEvaluator::freeFunction(const Expr *E, const FunctionDecl *FD,
                                        llvm::ArrayRef<const Expr *> Args) {
  std::string Name = calleeName(FD);
  static const std::set<std::string> Factories = {
      "randn", "rand",     "zeros",         "ones",     "empty",
      "full",  "randint",  "arange",        "linspace", "eye",
      "randperm", "scalar_tensor", "empty_strided"};
  if (Factories.count(Name))
    return factoryCall(E, Name, FD, Args);
  if (Name == "tensor")
    return tensorLiteral(E, FD, Args);
  if ((Name == "cat" || Name == "concat" || Name == "stack") && !Args.empty()) {
    auto List = tensorList(Args[0]);
    auto Dim = Args.size() >= 2 ? integer(Args[1]) : std::optional<int64_t>(0);
    if (!List || !Dim)
      return unmodelledCall(Name, E, List ? *List : std::vector<ValueId>{},
                            List ? "dim could not be derived"
                                 : "the tensor list could not be derived");
    std::vector<TensorValue> Ins;
    for (ValueId V : *List)
      Ins.push_back(I.value(V));
    return apply(Name == "concat" ? "cat" : Name, E, *List,
                 Name == "stack" ? tma::stack(Ins, *Dim) : tma::cat(Ins, *Dim));
  }
  // Operators with a C++ scalar on the left (ATen/TensorOperators.h).
  if (Name.rfind("operator", 0) == 0 && Args.size() == 2 &&
      !isTensorType(Args[0]->getType()) && isTensorType(Args[1]->getType())) {
    std::string Op = Name.substr(8);
    ValueId T = tensor(Args[1]);
    ElemOperand S = operand(Args[0]);
    static const std::map<std::string, std::string> Flip = {
        {"+", "add"}, {"*", "mul"}, {"<", "gt"}, {">", "lt"}, {"<=", "ge"},
        {">=", "le"}, {"==", "eq"}, {"!=", "ne"}};
    if (auto It = Flip.find(Op); It != Flip.end()) {
      bool Cmp = It->second != "add" && It->second != "mul";
      return apply(It->second, E, {T},
                   elementwise(It->second, {ElemOperand::tensor(I.value(T)), S},
                               Cmp ? ElemDType::Bool : ElemDType::Promote));
    }
    if (Op == "-" || Op == "/")
      return apply(Op == "-" ? "rsub" : "rdiv", E, {T},
                   reverseScalarOp(Op == "-" ? "sub" : "div", S, I.value(T),
                                   Op == "/"));
    return unmodelledCall(Name, E, {T}, "'" + Name + "' is not modelled");
  }
  // A free function with a tensor first argument is the method spelled as
  // a function (torch::transpose(x, 0, 1), at::softmax(x, 1)).
  if (!Args.empty() && isTensorType(Args[0]->getType()) &&
      FD->getNumParams() >= 1) {
    OpCall C;
    C.E = E;
    C.Name = Name;
    C.Callee = FD;
    C.ParamBase = 1;
    C.SelfExpr = Args[0];
    C.Args.assign(Args.begin() + 1, Args.end());
    C.Functional = FD->getQualifiedNameAsString().find("nn::functional") !=
                   std::string::npos;
    if (auto V = tensorOp(C))
      return *V;
    std::vector<ValueId> Inputs;
    for (const Expr *A : Args)
      if (isTensorType(A->getType()))
        Inputs.push_back(tensor(A));
    return unmodelledCall(Name, E, Inputs, "'" + Name + "' is not modelled");
  }
  std::vector<ValueId> Inputs;
  for (const Expr *A : Args)
    if (isTensorType(A->getType()))
      Inputs.push_back(tensor(A));
  return unmodelledCall(Name, E, Inputs, "'" + Name + "' is not modelled");
}

ValueId FunctionEvaluator::method(const Expr *E, const CXXMethodDecl *MD,
                                  const Expr *Object,
                                  llvm::ArrayRef<const Expr *> Args) {
  if (!MD || !Object || !isTensorType(Object->getType())) {
    if (const auto *CE = dyn_cast<CallExpr>(E))
      opaqueCallEffects(CE);
    return I.unknown("call",
                     MD && MD->getParent() && MD->getParent()->isLambda()
                         ? "call to a lambda is not analysed"
                         : "method of a non-tensor object",
                     span(E->getSourceRange()));
  }
  OpCall C;
  C.E = E;
  C.Name = calleeName(MD);
  C.Callee = MD;
  C.ParamBase = 0;
  C.SelfExpr = Object;
  C.Args.assign(Args.begin(), Args.end());
  if (auto V = tensorOp(C))
    return *V;
  ValueId Self = tensor(Object);
  std::vector<ValueId> Inputs = {Self};
  for (const Expr *A : Args)
    if (isTensorType(A->getType()))
      Inputs.push_back(tensor(A));
  ValueId V = unmodelledCall(C.Name, E, Inputs, "'" + C.Name + "' is not modelled");
  // An in-place method we do not model (resize_, unsqueeze_, t_, set_...)
  // may change the tensor's shape or storage: forget what we knew.
  if (!C.Name.empty() && C.Name.back() == '_' && C.Name != "requires_grad_")
    forgetObject(Object, "is changed in place by '" + C.Name + "'");
  return V;
}

// ---- Tensor ops ----------------------------------------------------------------------
//
// One dispatcher for the ops that apply to a tensor, whether written as a
// method (x.transpose(0, 1)) or a function (torch::transpose(x, 0, 1)):
// C.Args are the arguments after the tensor, C.ParamBase says where they
// start among the callee's parameters. Returns nullopt for an op it does
// not know, so the caller records it as unmodelled.
std::optional<ValueId> FunctionEvaluator::tensorOp(const OpCall &C) {
  const std::string &Name = C.Name;
  const Expr *E = C.E;
  auto Arg = [&](unsigned K) -> const Expr * {
    return K < C.Args.size() ? C.Args[K] : nullptr;
  };
  auto Given = [&](unsigned K) {
    return K < C.Args.size() && !isDefaultArg(C.Args[K]);
  };
  auto ParamType = [&](unsigned K) -> QualType {
    unsigned P = C.ParamBase + K;
    return P < C.Callee->getNumParams() ? C.Callee->getParamDecl(P)->getType()
                                        : QualType();
  };
  auto ParamIs = [&](unsigned K, const char *Record) {
    QualType T = ParamType(K);
    return !T.isNull() && recordName(T) == Record;
  };
  auto Int = [&](unsigned K) { return integer(Arg(K)); };
  auto Bool = [&](unsigned K) -> std::optional<bool> {
    if (!Arg(K))
      return false;
    auto V = integer(Arg(K));
    if (!V)
      return std::nullopt;
    return *V != 0;
  };

  // Ops that need no tensor evaluation first.
  static const std::set<std::string> Known = {
      // views
      "transpose", "swapaxes", "swapdims", "t", "mT", "permute", "view",
      "reshape", "narrow", "slice", "select", "unsqueeze", "squeeze",
      "expand", "expand_as", "as_strided", "diagonal", "unfold", "movedim",
      "moveaxis", "flatten", "unflatten", "alias", "index", "operator[]",
      "view_as", "reshape_as",
      // layout and casts
      "contiguous", "clone", "to", "toType", "type_as", "cpu", "cuda",
      // allocating
      "matmul", "mm", "bmm", "linear", "index_select", "embedding", "gather",
      "repeat",
      // *_like factories
      "empty_like", "zeros_like", "ones_like", "rand_like", "randn_like",
      "full_like",
      // reductions
      "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin",
      "softmax", "log_softmax", "cumsum",
      // in-place
      "add_", "sub_", "mul_", "div_", "relu_", "zero_", "fill_", "copy_",
      "masked_fill_", "clamp_", "exp_", "neg_", "sigmoid_", "tanh_",
      "operator+=", "operator-=", "operator*=", "operator/=",
      // elementwise
      "add", "sub", "mul", "div", "true_divide", "maximum", "minimum", "pow",
      "gt", "lt", "ge", "le", "eq", "ne", "exp", "log", "sqrt", "rsqrt",
      "tanh", "sigmoid", "sin", "cos", "relu", "neg", "abs", "gelu", "where",
      "operator+", "operator-", "operator*", "operator/", "operator<",
      "operator>", "operator<=", "operator>=", "operator==", "operator!="};
  if (!Known.count(Name))
    return std::nullopt;

  ValueId Self = tensor(C.SelfExpr);
  const TensorValue In = I.value(Self);
  auto Apply = [&](const std::string &Op, const std::vector<ValueId> &Inputs,
                   const OpOutcome &Out) { return apply(Op, E, Inputs, Out); };
  auto Unmodelled = [&](const std::string &Why) {
    return unmodelledCall(Name, E, {Self}, Why);
  };
  auto NoArgs = [&](const char *What) {
    return Unmodelled(std::string(What) + " could not be derived");
  };

  // ---- Views ----
  if (Name == "transpose" || Name == "swapaxes" || Name == "swapdims") {
    auto D0 = Int(0), D1 = Int(1);
    if (!D0 || !D1)
      return NoArgs("transpose dims");
    return Apply(Name, {Self}, tma::transpose(In, *D0, *D1));
  }
  if (Name == "t")
    return Apply(Name, {Self}, matrixTranspose(In));
  if (Name == "mT") {
    if (In.Sizes && In.Sizes->size() < 2)
      return Apply(Name, {Self},
                   throws("tensor.mT is only supported on matrices or batches "
                          "of matrices. Got " +
                          std::to_string(In.Sizes->size()) + "-D tensor."));
    return Apply(Name, {Self}, tma::transpose(In, -2, -1));
  }
  if (Name == "view" && ParamIs(0, "c10::ScalarType")) {
    auto T = scalarType(Arg(0));
    if (!T)
      return NoArgs("dtype");
    return Apply("view", {Self}, viewDtype(In, *T));
  }
  if (Name == "permute" || Name == "view" || Name == "reshape") {
    auto Shape = intList(Arg(0));
    if (!Shape)
      return NoArgs((Name + " argument").c_str());
    if (Name == "permute")
      return Apply(Name, {Self}, tma::permute(In, *Shape));
    if (Name == "view")
      return Apply(Name, {Self}, viewAs(In, *Shape));
    return Apply(Name, {Self}, tma::reshape(In, *Shape));
  }
  if (Name == "view_as" || Name == "reshape_as" || Name == "expand_as") {
    ValueId Other = tensor(Arg(0));
    const TensorValue &O = I.value(Other);
    if (!O.Sizes)
      return unmodelledCall(Name, E, {Self, Other},
                            "shape of the other tensor is unknown");
    OpOutcome Out = Name == "view_as"      ? viewAs(In, *O.Sizes)
                    : Name == "reshape_as" ? tma::reshape(In, *O.Sizes)
                                           : tma::expand(In, *O.Sizes);
    return Apply(Name, {Self, Other}, Out);
  }
  if (Name == "narrow") {
    if (!ParamType(1).isNull() && !ParamType(1)->isIntegerType())
      return Unmodelled("narrow with a tensor start is not modelled");
    auto D = Int(0), S = Int(1), L = Int(2);
    if (!D || !S || !L)
      return NoArgs("narrow arguments");
    return Apply(Name, {Self}, tma::narrow(In, *D, *S, *L));
  }
  if (Name == "slice") {
    auto D = Arg(0) ? Int(0) : std::optional<int64_t>(0);
    OptInt S = optionalInt(Arg(1)), En = optionalInt(Arg(2));
    auto Step = Arg(3) ? Int(3) : std::optional<int64_t>(1);
    if (!D || !Step || (S.Present && !S.Value) || (En.Present && !En.Value))
      return NoArgs("slice arguments");
    return Apply(Name, {Self}, tma::slice(In, *D, S.Value, En.Value, *Step));
  }
  if (Name == "select") {
    if (!ParamType(0).isNull() && !ParamType(0)->isIntegerType())
      return Unmodelled("select by dimension name is not modelled");
    auto D = Int(0), K = Int(1);
    if (D && !K && In.Sizes && In.Strides && !In.Sizes->empty()) {
      // An index known only at run time (a loop variable): still a view of
      // known shape and strides, at an unknown offset.
      OpOutcome Out = tma::select(In, *D, 0);
      if (Out.Kind == OpKind::View) {
        Out.Value.Offset.reset();
        Out.Value.markUnknown("select index could not be derived, so the "
                              "offset is unknown");
        return Apply(Name, {Self}, Out);
      }
    }
    if (!D || !K)
      return NoArgs("select arguments");
    return Apply(Name, {Self}, tma::select(In, *D, *K));
  }
  if (Name == "unsqueeze") {
    auto D = Int(0);
    if (!D)
      return NoArgs("unsqueeze dim");
    return Apply(Name, {Self}, tma::unsqueeze(In, *D));
  }
  if (Name == "squeeze") {
    if (C.Args.empty())
      return Apply(Name, {Self}, tma::squeeze(In, std::nullopt));
    if (!ParamType(0)->isIntegerType())
      return Unmodelled("squeeze by dimension name is not modelled");
    auto D = Int(0);
    if (!D)
      return NoArgs("squeeze dim");
    return Apply(Name, {Self}, tma::squeeze(In, *D));
  }
  if (Name == "expand") {
    auto Shape = intList(Arg(0));
    if (!Shape)
      return NoArgs("expand sizes");
    return Apply(Name, {Self}, tma::expand(In, *Shape));
  }
  if (Name == "as_strided") {
    auto Sizes = intList(Arg(0)), Strides = intList(Arg(1));
    OptInt Off = optionalInt(Arg(2));
    if (!Sizes || !Strides || (Off.Present && !Off.Value))
      return NoArgs("as_strided arguments");
    std::optional<int64_t> StorageBytes;
    if (In.Storage != NoStorage)
      StorageBytes = I.trace().Storages.at(In.Storage).Bytes;
    return Apply(Name, {Self},
                 asStrided(In, *Sizes, *Strides, Off.Value, StorageBytes));
  }
  if (Name == "diagonal") {
    if (!ParamType(0).isNull() && !ParamType(0)->isIntegerType())
      return Unmodelled("diagonal by dimension name is not modelled");
    auto O = Arg(0) ? Int(0) : std::optional<int64_t>(0);
    auto D1 = Arg(1) ? Int(1) : std::optional<int64_t>(0);
    auto D2 = Arg(2) ? Int(2) : std::optional<int64_t>(1);
    if (!O || !D1 || !D2)
      return NoArgs("diagonal arguments");
    return Apply(Name, {Self}, tma::diagonal(In, *O, *D1, *D2));
  }
  if (Name == "unfold") {
    auto D = Int(0), S = Int(1), St = Int(2);
    if (!D || !S || !St)
      return NoArgs("unfold arguments");
    return Apply(Name, {Self}, tma::unfold(In, *D, *S, *St));
  }
  // An int64_t parameter where a dim list also fits (movedim(0, 2),
  // prod(1)): a one-element list.
  auto Dims1 = [&](unsigned K) -> std::optional<Dims> {
    if (!ParamType(K).isNull() && ParamType(K)->isIntegerType()) {
      if (auto V = Int(K))
        return Dims{*V};
      return std::nullopt;
    }
    return intList(Arg(K));
  };
  if (Name == "movedim" || Name == "moveaxis") {
    auto Src = Dims1(0), Dst = Dims1(1);
    if (!Src || !Dst)
      return NoArgs("movedim arguments");
    return Apply(Name, {Self}, tma::movedim(In, *Src, *Dst));
  }
  if (Name == "flatten") {
    if (!ParamType(0).isNull() && !ParamType(0)->isIntegerType())
      return Unmodelled("flatten by dimension name is not modelled");
    auto S = Arg(0) ? Int(0) : std::optional<int64_t>(0);
    auto En = Arg(1) ? Int(1) : std::optional<int64_t>(-1);
    if (!S || !En)
      return NoArgs("flatten dims");
    return Apply(Name, {Self}, tma::flatten(In, *S, *En));
  }
  if (Name == "unflatten") {
    if (!ParamType(0).isNull() && !ParamType(0)->isIntegerType())
      return Unmodelled("unflatten by dimension name is not modelled");
    auto D = Int(0);
    auto Sizes = intList(Arg(1));
    if (!D || !Sizes)
      return NoArgs("unflatten arguments");
    return Apply(Name, {Self}, tma::unflatten(In, *D, *Sizes));
  }
  if (Name == "alias")
    return Apply(Name, {Self}, tma::alias(In));
  if (Name == "index" && C.Args.size() == 1)
    return evalIndex(E, Self, C.Args[0]);
  if (Name == "operator[]" && C.Args.size() == 1) {
    const Expr *Idx = strip(C.Args[0]);
    if (isTensorType(Idx->getType())) {
      ValueId IdxV = tensor(Idx);
      return Apply("operator[]", {Self, IdxV},
                   subscriptWithTensor(In, I.value(IdxV)));
    }
    if (auto V = integer(Idx))
      return Apply("operator[]", {Self}, tma::select(In, 0, *V));
    return unmodelledCall("operator[]", E, {Self}, "index could not be derived");
  }

  // ---- Layout and casts ----
  if (Name == "contiguous" || Name == "clone") {
    MemoryFormat Fmt = Name == "contiguous" ? MemoryFormat::Contiguous
                                            : MemoryFormat::Preserve;
    if (Given(0)) {
      auto F = memoryFormat(Arg(0));
      if (!F)
        return NoArgs("memory format");
      Fmt = *F;
    }
    return Apply(Name, {Self}, Name == "contiguous" ? tma::contiguous(In, Fmt)
                                                     : tma::clone(In, Fmt));
  }
  if (Name == "cpu" || Name == "cuda") {
    // Tensor::cpu() / cuda(): to(options().device(...)), never copy=true.
    ToTarget T;
    T.Dev = Device{Name == "cpu" ? DeviceKind::CPU : DeviceKind::CUDA, -1};
    return Apply(Name, {Self}, tma::to(In, T));
  }
  if (Name == "toType") {
    ToTarget T;
    T.Type = scalarType(Arg(0));
    T.TypeUnknown = !T.Type;
    return Apply(Name, {Self}, tma::to(In, T));
  }
  if (Name == "type_as") {
    // type_as(other) is to(other.options()): dtype and device.
    ValueId Other = tensor(Arg(0));
    ToTarget T;
    T.Type = I.value(Other).Type;
    T.Dev = I.value(Other).Dev;
    T.TypeUnknown = !T.Type;
    T.DeviceUnknown = !T.Dev;
    return Apply(Name, {Self, Other}, tma::to(In, T));
  }
  if (Name == "to") {
    // Overloads: to(options, non_blocking, copy, fmt), to(device, dtype,
    // non_blocking, copy, fmt), to(dtype, non_blocking, copy, fmt),
    // to(other, non_blocking, copy, fmt).
    ToTarget T;
    unsigned Next = 0;
    std::vector<ValueId> Inputs = {Self};
    std::string FirstType = recordName(ParamType(0));
    if (FirstType == "c10::TensorOptions") {
      Options O = options(Arg(0));
      if (!O.Known) {
        T.TypeUnknown = T.DeviceUnknown = true;
      } else {
        if (O.HasType) {
          T.Type = O.Type;
          T.TypeUnknown = !O.Type;
        }
        if (O.HasDevice) {
          T.Dev = O.Dev;
          T.DeviceUnknown = !O.Dev;
        }
        if (O.HasFormat) {
          if (!O.Fmt)
            return NoArgs("memory format");
          T.Fmt = *O.Fmt;
        }
      }
      Next = 1;
    } else if (FirstType == "c10::Device") {
      T.Dev = device(Arg(0));
      T.DeviceUnknown = !T.Dev;
      T.Type = scalarType(Arg(1));
      T.TypeUnknown = !T.Type;
      Next = 2;
    } else if (FirstType == "c10::ScalarType") {
      T.Type = scalarType(Arg(0));
      T.TypeUnknown = !T.Type;
      Next = 1;
    } else if (isTensorType(ParamType(0))) {
      ValueId Other = tensor(Arg(0));
      Inputs.push_back(Other);
      T.Type = I.value(Other).Type;
      T.Dev = I.value(Other).Dev;
      T.TypeUnknown = !T.Type;
      T.DeviceUnknown = !T.Dev;
      Next = 1;
    } else {
      return Unmodelled("this to() overload is not modelled");
    }
    // non_blocking, copy, memory_format follow.
    if (Given(Next + 1)) {
      auto Copy = integer(Arg(Next + 1));
      if (!Copy)
        return NoArgs("copy flag");
      T.Copy = *Copy != 0;
    }
    if (Given(Next + 2)) {
      auto F = memoryFormat(Arg(Next + 2));
      if (!F)
        return NoArgs("memory format");
      T.Fmt = *F;
    }
    return Apply(Name, Inputs, tma::to(In, T));
  }

  // ---- Factories from a tensor ----
  if (Name.size() > 5 && Name.compare(Name.size() - 5, 5, "_like") == 0) {
    // *_like(self, [fill_value,] options = {}, memory_format = nullopt).
    unsigned K = 0;
    if (Name == "full_like")
      K = 1; // the fill value: full_like keeps the input's dtype
    Options O;
    if (Arg(K) && ParamIs(K, "c10::TensorOptions"))
      O = options(Arg(K));
    if (!O.Known)
      return Unmodelled(O.UnknownReason.empty() ? "options could not be derived"
                                                : O.UnknownReason);
    MemoryFormat Fmt = MemoryFormat::Preserve;
    if (O.HasFormat) {
      if (!O.Fmt)
        return NoArgs("memory format");
      Fmt = *O.Fmt;
    }
    if (Given(K + 1)) {
      auto F = memoryFormat(Arg(K + 1));
      if (!F)
        return NoArgs("memory format");
      Fmt = *F;
    }
    if ((O.HasType && !O.Type) || (O.HasDevice && !O.Dev))
      return Unmodelled("options could not be derived");
    return Apply(Name, {Self},
                 likeFactory(In, O.HasType ? O.Type : std::nullopt,
                             O.HasDevice ? O.Dev : std::nullopt, Fmt,
                             Name == "empty_like" ? FillKind::Uninitialized
                                                  : FillKind::Filled));
  }

  // ---- Allocating ops ----
  if (Name == "matmul" || Name == "mm" || Name == "bmm") {
    ValueId B = tensor(Arg(0));
    const TensorValue &BV = I.value(B);
    OpOutcome Out = Name == "matmul" ? tma::matmul(In, BV, Opts.Version)
                    : Name == "mm"   ? tma::mm(In, BV)
                                     : tma::bmm(In, BV);
    return Apply(Name, {Self, B}, Out);
  }
  if (Name == "linear") {
    // at::linear(input, weight, bias = {}) and
    // torch::nn::functional::linear(input, weight, bias = {}).
    ValueId W = tensor(Arg(0));
    OptTensor Bias = optionalTensor(Arg(1));
    if (!Bias.Understood)
      return unmodelledCall(Name, E, {Self, W}, "bias could not be derived");
    std::vector<ValueId> Inputs = {Self, W};
    std::optional<TensorValue> BiasV;
    if (Bias.Present) {
      ValueId B = tensor(Bias.E);
      Inputs.push_back(B);
      BiasV = I.value(B);
    }
    return Apply(Name, Inputs,
                 tma::linear(In, I.value(W), BiasV ? &*BiasV : nullptr,
                             Opts.Version));
  }
  if (Name == "embedding") {
    // at::embedding(weight, indices, ...) but
    // torch::nn::functional::embedding(input, weight, options).
    ValueId Other = tensor(Arg(0));
    ValueId Weight = C.Functional ? Other : Self;
    ValueId Indices = C.Functional ? Self : Other;
    if (C.Functional && Given(1))
      return unmodelledCall(Name, E, {Weight, Indices},
                            "embedding options are not modelled");
    return Apply(Name, {Weight, Indices},
                 tma::embedding(I.value(Weight), I.value(Indices)));
  }
  if (Name == "index_select" || Name == "gather") {
    if (!ParamType(0)->isIntegerType())
      return Unmodelled(Name + " by dimension name is not modelled");
    auto D = Int(0);
    ValueId Index = tensor(Arg(1));
    if (!D)
      return unmodelledCall(Name, E, {Self, Index}, "dim could not be derived");
    if (Name == "gather" && Given(2) && Bool(2).value_or(true))
      return unmodelledCall(Name, E, {Self, Index},
                            "sparse_grad gather is not modelled");
    return Apply(Name, {Self, Index},
                 Name == "gather" ? tma::gather(In, *D, I.value(Index))
                                  : indexSelect(In, *D, I.value(Index)));
  }
  if (Name == "repeat") {
    auto Reps = intList(Arg(0));
    if (!Reps)
      return NoArgs("repeats");
    return Apply(Name, {Self}, tma::repeat(In, *Reps));
  }

  // ---- Reductions ----
  if (Name == "softmax" || Name == "log_softmax") {
    if (!ParamType(0).isNull() && !ParamType(0)->isIntegerType())
      return Unmodelled(Name + " by dimension name is not modelled");
    auto D = Int(0);
    OptDType T = optionalDType(Arg(1));
    if (!D || (T.Present && !T.Value))
      return NoArgs((Name + " arguments").c_str());
    return Apply(Name, {Self}, tma::softmax(Name, In, *D, T.Value));
  }
  if (Name == "cumsum") {
    if (!ParamType(0).isNull() && !ParamType(0)->isIntegerType())
      return Unmodelled("cumsum by dimension name is not modelled");
    auto D = Int(0);
    OptDType T = optionalDType(Arg(1));
    if (!D || (T.Present && !T.Value))
      return NoArgs("cumsum arguments");
    return Apply(Name, {Self}, tma::cumsum(In, *D, T.Value, Opts.Version));
  }
  if ((Name == "max" || Name == "min") && C.Args.size() == 1 &&
      isTensorType(ParamType(0))) {
    // max(other) is maximum(other).
    std::string Op = Name == "max" ? "maximum" : "minimum";
    ValueId B = tensor(Arg(0));
    return Apply(Op, {Self, B},
                 elementwise(Op, {ElemOperand::tensor(In),
                                  ElemOperand::tensor(I.value(B))},
                             ElemDType::Promote));
  }
  static const std::map<std::string, ReduceKind> Reductions = {
      {"sum", ReduceKind::Sum},     {"prod", ReduceKind::Sum},
      {"mean", ReduceKind::Mean},   {"max", ReduceKind::Same},
      {"min", ReduceKind::Same},    {"amax", ReduceKind::Same},
      {"amin", ReduceKind::Same},   {"argmax", ReduceKind::Index},
      {"argmin", ReduceKind::Index}};
  if (auto R = Reductions.find(Name); R != Reductions.end()) {
    if ((Name == "max" || Name == "min") && !C.Args.empty())
      return Unmodelled(Name + "(dim) returns values and indices");
    // Overloads: f(dtype), f(dims, keepdim, dtype), prod(int dim, keepdim,
    // dtype), argmax(optional dim, keepdim), amax(dims = {}, keepdim).
    std::optional<Dims> Dims_;
    bool KeepDim = false;
    OptDType T;
    if (C.Args.empty()) {
      Dims_ = Dims{};
    } else if (ParamIs(0, "c10::optional") && Name != "argmax" &&
               Name != "argmin") {
      T = optionalDType(Arg(0)); // sum(dtype)
      Dims_ = Dims{};
    } else if (Name == "argmax" || Name == "argmin") {
      OptInt D = optionalInt(Arg(0));
      if (D.Present && !D.Value)
        return NoArgs("dim");
      Dims_ = D.Present ? Dims{*D.Value} : Dims{};
      auto K = Bool(1);
      if (!K)
        return NoArgs("keepdim");
      KeepDim = *K;
    } else {
      std::string P0 = recordName(ParamType(0));
      if (P0 == "c10::ArrayRef" || P0 == "c10::OptionalArrayRef" ||
          ParamType(0)->isIntegerType()) {
        Dims_ = Dims1(0);
        if (!Dims_)
          return NoArgs("reduction dims");
      } else {
        return Unmodelled(Name + " by dimension name is not modelled");
      }
      auto K = Bool(1);
      if (!K)
        return NoArgs("keepdim");
      KeepDim = *K;
      T = optionalDType(Arg(2));
    }
    if (T.Present && !T.Value)
      return NoArgs("dtype");
    // sum(dims = {}) over an explicit empty list reduces every dim in 1.13.
    return Apply(Name, {Self},
                 tma::reduce(Name, In, Dims_, KeepDim, R->second, T.Value));
  }

  // ---- In-place ops ----
  struct InPlaceRule {
    ElemDType Rule;
    bool ReadsSelf;
  };
  static const std::map<std::string, InPlaceRule> InPlaceOps = {
      {"add_", {ElemDType::Promote, true}},
      {"sub_", {ElemDType::Promote, true}},
      {"mul_", {ElemDType::Promote, true}},
      {"div_", {ElemDType::FloatPromote, true}},
      {"operator+=", {ElemDType::Promote, true}},
      {"operator-=", {ElemDType::Promote, true}},
      {"operator*=", {ElemDType::Promote, true}},
      {"operator/=", {ElemDType::FloatPromote, true}},
      {"exp_", {ElemDType::FloatPromote, true}},
      {"sigmoid_", {ElemDType::FloatPromote, true}},
      {"tanh_", {ElemDType::FloatPromote, true}},
      {"neg_", {ElemDType::Promote, true}},
      {"relu_", {ElemDType::Promote, true}},
      {"clamp_", {ElemDType::Bool, true}},
      {"masked_fill_", {ElemDType::Bool, true}},
      {"zero_", {ElemDType::Bool, false}},
      {"fill_", {ElemDType::Bool, false}},
      {"copy_", {ElemDType::Bool, false}}};
  if (auto R = InPlaceOps.find(Name); R != InPlaceOps.end()) {
    // ElemDType::Bool here means "the value is cast into self" (fill_,
    // copy_, masked_fill_, clamp_): no result-type check.
    std::vector<ValueId> Inputs = {Self};
    std::vector<ElemOperand> Others;
    for (unsigned K = 0; K < C.Args.size(); ++K) {
      if (!Given(K))
        continue;
      if (Name == "clamp_") {
        OptTensor T = optionalTensor(Arg(K));
        if (T.Present) {
          ValueId V = tensor(T.E);
          Inputs.push_back(V);
          Others.push_back(ElemOperand::tensor(I.value(V)));
        }
        continue;
      }
      if ((Name == "copy_" && K == 1) ||
          ((Name == "add_" || Name == "sub_") && K == 1))
        continue; // non_blocking, alpha
      ElemOperand O = operand(Arg(K));
      if (!O.IsScalar)
        Inputs.push_back(tensor(Arg(K)));
      Others.push_back(O);
    }
    std::string Op = Name;
    if (Name.rfind("operator", 0) == 0)
      Op = std::string(Name == "operator+=" ? "add_"
                       : Name == "operator-=" ? "sub_"
                       : Name == "operator*=" ? "mul_"
                                              : "div_");
    if (Op == "relu_" && In.Type && *In.Type == DType::Bool)
      return Apply(Op, Inputs, throws("Boolean inputs not supported for relu"));
    return Apply(Op, Inputs,
                 inPlace(Op, In, Others, R->second.Rule, R->second.ReadsSelf));
  }

  // ---- Elementwise (TensorIterator) ----
  struct ElemRule {
    ElemDType Rule;
    const char *Op;
  };
  static const std::map<std::string, ElemRule> Elementwise = {
      {"add", {ElemDType::Promote, "add"}},
      {"operator+", {ElemDType::Promote, "add"}},
      {"sub", {ElemDType::Promote, "sub"}},
      {"operator-", {ElemDType::Promote, "sub"}},
      {"mul", {ElemDType::Promote, "mul"}},
      {"operator*", {ElemDType::Promote, "mul"}},
      {"div", {ElemDType::FloatPromote, "div"}},
      {"true_divide", {ElemDType::FloatPromote, "div"}},
      {"operator/", {ElemDType::FloatPromote, "div"}},
      {"maximum", {ElemDType::Promote, "maximum"}},
      {"minimum", {ElemDType::Promote, "minimum"}},
      {"pow", {ElemDType::Promote, "pow"}},
      {"gt", {ElemDType::Bool, "gt"}},
      {"operator>", {ElemDType::Bool, "gt"}},
      {"lt", {ElemDType::Bool, "lt"}},
      {"operator<", {ElemDType::Bool, "lt"}},
      {"ge", {ElemDType::Bool, "ge"}},
      {"operator>=", {ElemDType::Bool, "ge"}},
      {"le", {ElemDType::Bool, "le"}},
      {"operator<=", {ElemDType::Bool, "le"}},
      {"eq", {ElemDType::Bool, "eq"}},
      {"operator==", {ElemDType::Bool, "eq"}},
      {"ne", {ElemDType::Bool, "ne"}},
      {"operator!=", {ElemDType::Bool, "ne"}},
      {"exp", {ElemDType::FloatPromote, "exp"}},
      {"log", {ElemDType::FloatPromote, "log"}},
      {"sqrt", {ElemDType::FloatPromote, "sqrt"}},
      {"rsqrt", {ElemDType::FloatPromote, "rsqrt"}},
      {"tanh", {ElemDType::FloatPromote, "tanh"}},
      {"sigmoid", {ElemDType::FloatPromote, "sigmoid"}},
      {"sin", {ElemDType::FloatPromote, "sin"}},
      {"cos", {ElemDType::FloatPromote, "cos"}},
      {"relu", {ElemDType::Promote, "relu"}},
      {"neg", {ElemDType::Promote, "neg"}},
      {"abs", {ElemDType::Promote, "abs"}},
      {"gelu", {ElemDType::FloatOnly, "gelu"}},
      {"where", {ElemDType::Promote, "where"}}};
  // From here on Self has been evaluated: never return nullopt (the caller
  // would evaluate it a second time).
  auto R = Elementwise.find(Name);
  if (R == Elementwise.end())
    return Unmodelled("'" + Name + "' is not modelled");
  std::string Op = R->second.Op;
  // Unary minus is Tensor::operator-() with no argument.
  if (Name == "operator-" && C.Args.empty())
    Op = "neg";
  bool Unary = Op == "exp" || Op == "log" || Op == "sqrt" || Op == "rsqrt" ||
               Op == "tanh" || Op == "sigmoid" || Op == "sin" || Op == "cos" ||
               Op == "relu" || Op == "neg" || Op == "abs" || Op == "gelu";
  std::vector<ValueId> Inputs = {Self};
  std::vector<ElemOperand> Ops;
  if (Op == "where") {
    // where(cond, self, other) as a function: Self is the condition;
    // self.where(cond, other) as a method. TensorIterator sees
    // (cond, self, other) in that order.
    const Expr *CondE = C.ParamBase == 1 ? C.SelfExpr : Arg(0);
    const Expr *AE = C.ParamBase == 1 ? Arg(0) : C.SelfExpr;
    const Expr *BE = Arg(1);
    if (!CondE || !AE || !BE)
      return Unmodelled("this where() overload is not modelled");
    ValueId CondV = C.ParamBase == 1 ? Self : tensor(CondE);
    ElemOperand A = operand(AE), B = operand(BE);
    const TensorValue &Cond = I.value(CondV);
    Inputs = {CondV};
    if (!A.IsScalar)
      Inputs.push_back(tensor(AE));
    if (!B.IsScalar)
      Inputs.push_back(tensor(BE));
    if (Cond.Type && *Cond.Type != DType::Bool)
      return unmodelledCall(Op, E, Inputs,
                            "where with a non-bool condition is not modelled");
    OpOutcome Out = elementwise(Op, {ElemOperand::tensor(Cond), A, B},
                                ElemDType::Promote);
    // The condition takes part in the layout, not in the dtype.
    if (Out.Kind == OpKind::Copy) {
      Out.Value.Type = resultType({A, B});
      if (!Out.Value.Type)
        Out.Value.markUnknown("dtype of an operand is unknown");
      Out.WrittenBytes = Out.Value.logicalBytes();
      // where converts operands of another dtype with .to() first.
      Out.TransientBytes.reset();
    }
    return Apply(Op, Inputs, Out);
  }
  Ops.push_back(ElemOperand::tensor(In));
  if (!Unary) {
    if (!Arg(0))
      return Unmodelled("this '" + Name + "' overload is not modelled");
    ElemOperand B = operand(Arg(0));
    if (!B.IsScalar)
      Inputs.push_back(tensor(Arg(0)));
    Ops.push_back(B);
    // add/sub alpha; div rounding_mode.
    if (Given(1)) {
      if (Op == "div")
        return unmodelledCall(Op, E, Inputs,
                              "div with a rounding mode is not modelled");
      auto Alpha = scalarCategory(Arg(1));
      auto Common = resultType(Ops);
      if (!Alpha || !Common ||
          (isIntegral(*Common, true) && *Alpha == DType::Float64))
        return unmodelledCall(Op, E, Inputs,
                              "this alpha argument is not modelled");
    }
  } else if (Op == "gelu" && (C.Functional || Given(0))) {
    if (Given(0))
      return Unmodelled("gelu options are not modelled");
  }
  // ATen refuses some dtypes outright.
  if (In.Type && *In.Type == DType::Bool) {
    if (Op == "neg")
      return Apply(Op, Inputs,
                   throws("Negation, the `-` operator, on a bool tensor is "
                          "not supported. If you are trying to invert a mask, "
                          "use the `~` or `logical_not()` operator instead."));
    if (Op == "relu")
      return Apply(Op, Inputs, throws("Boolean inputs not supported for relu"));
    if (Op == "abs")
      return unmodelledCall(Op, E, Inputs, "abs of a bool tensor is not modelled");
  }
  if (Op == "sub") {
    // sub_check: any bool operand (a `true` scalar included) throws.
    bool AnyBool = false;
    for (const ElemOperand &O : Ops)
      AnyBool |= O.IsScalar ? O.ScalarType == DType::Bool
                            : O.T.Type == DType::Bool;
    if (AnyBool)
      return Apply(Op, Inputs,
                   throws("Subtraction, the `-` operator, with a bool tensor "
                          "is not supported. If you are trying to invert a "
                          "mask, use the `~` or `logical_not()` operator "
                          "instead."));
  }
  return Apply(Op, Inputs, elementwise(Op, Ops, R->second.Rule));
}

ValueId FunctionEvaluator::evalIndex(const Expr *E, ValueId Self,
                                     const Expr *IndexList) {
  // Find the braced list of TensorIndex elements.
  const Expr *Cur = IndexList;
  const InitListExpr *IL = nullptr;
  for (int Depth = 0; Depth < 6 && Cur && !IL; ++Depth) {
    Cur = strip(Cur);
    if ((IL = dyn_cast<InitListExpr>(Cur)))
      break;
    if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(Cur))
      Cur = SIL->getSubExpr();
    else if (const auto *CE = dyn_cast<CXXConstructExpr>(Cur);
             CE && CE->getNumArgs() >= 1)
      Cur = CE->getArg(0);
    else
      break;
  }
  if (!IL)
    return unmodelledCall("index", E, {Self}, "index list could not be derived");
  std::vector<IndexSpec> Specs;
  std::vector<ValueId> Inputs = {Self};
  for (const Expr *Elem : IL->inits()) {
    IndexSpec Spec;
    // Each element is a TensorIndex constructed from one argument.
    const Expr *X = strip(Elem);
    if (const auto *CE = dyn_cast<CXXConstructExpr>(X);
        CE && recordName(CE->getType()) == "at::indexing::TensorIndex" &&
        CE->getNumArgs() == 1)
      X = strip(CE->getArg(0));
    std::string T = recordName(X->getType());
    if (T == "at::indexing::Slice") {
      Spec.K = IndexSpec::Slice;
      const auto *SC = dyn_cast<CXXConstructExpr>(X);
      auto Bound = [&](unsigned K, std::optional<int64_t> &Out) {
        if (!SC || K >= SC->getNumArgs() || isDefaultArg(SC->getArg(K)))
          return;
        const Expr *B = stripConversions(SC->getArg(K), [](const Expr *Y) {
          return Y->getType()->isIntegerType() ||
                 recordName(Y->getType()) == "c10::nullopt_t" ||
                 recordName(Y->getType()) == "std::nullopt_t";
        });
        std::string BT = recordName(B->getType());
        if (BT == "c10::nullopt_t" || BT == "std::nullopt_t")
          return;
        Out = integer(B);
        if (!Out)
          Spec.Unknown = true;
      };
      if (!SC) {
        Spec.Unknown = true;
      } else {
        Bound(0, Spec.Start);
        Bound(1, Spec.Stop);
        std::optional<int64_t> Step;
        Bound(2, Step);
        Spec.Step = Step.value_or(1);
      }
    } else if (T == "c10::nullopt_t" || T == "std::nullopt_t") {
      Spec.K = IndexSpec::None;
    } else if (T == "at::indexing::EllipsisIndexType" || isa<StringLiteral>(X)) {
      Spec.K = IndexSpec::Ellipsis;
    } else if (X->getType()->isBooleanType()) {
      Spec.K = IndexSpec::Boolean;
      auto B = integer(X);
      Spec.Bool = B.value_or(0) != 0;
      Spec.Unknown = !B;
    } else if (X->getType()->isIntegerType()) {
      Spec.K = IndexSpec::Integer;
      auto V = integer(X);
      Spec.Int = V.value_or(0);
      Spec.Unknown = !V;
    } else if (isTensorType(X->getType())) {
      Spec.K = IndexSpec::Tensor;
      ValueId V = tensor(X);
      Inputs.push_back(V);
      Spec.TensorIndex = I.value(V);
    } else {
      return unmodelledCall("index", E, {Self}, "an index element is not modelled");
    }
    Specs.push_back(Spec);
  }
  return apply("index", E, Inputs, tma::index(I.value(Self), Specs));
}

// ---- Statements ---------------------------------------------------------------------

void FunctionEvaluator::openStatement(const Stmt *S, Flow F, bool Insertable) {
  CurrentStatement = S->getSourceRange();
  Evaluated.clear();
  EvaluatedLists.clear();
  EvaluatedTuples.clear();
  Statement St;
  St.Where = span(S->getSourceRange());
  St.InLoop = F.InLoop;
  St.InBranch = F.InBranch;
  St.Insertable = Insertable && !St.Where.InMacro;
  // The probe position: right after the statement's ';'.
  SourceLocation End = S->getEndLoc();
  if (!isa<DeclStmt>(S)) {
    SourceLocation Semi = Lexer::findLocationAfterToken(
        End, tok::semi, SM, Ctx.getLangOpts(), /*SkipTrailingWhitespaceAndNewLine=*/false);
    End = Semi.isValid() ? Semi.getLocWithOffset(-1) : SourceLocation();
  }
  if (End.isValid() && End.isFileID() && SM.isWrittenInMainFile(End))
    St.EndOffset = SM.getFileOffset(End) + 1;
  else
    St.Insertable = false;
  I.beginStatement(St);
}

void FunctionEvaluator::declaration(const DeclStmt *DS, Flow F, bool Insertable) {
  for (const Decl *D : DS->decls()) {
    if (const auto *DD = dyn_cast<DecompositionDecl>(D)) {
      // `auto [values, indices] = torch::max(x, 1);`: the hidden variable
      // holds the tuple, each binding names one element.
      if (!DD->hasInit())
        continue;
      openStatement(DS, F, Insertable);
      auto Tuple = isTensorTupleType(DD->getType())
                       ? tensorTuple(DD->getInit())
                       : std::nullopt;
      auto Bindings = DD->bindings();
      for (size_t K = 0; K < Bindings.size(); ++K) {
        const BindingDecl *B = Bindings[K];
        ValueId V = NoValue;
        if (Tuple && K < Tuple->size())
          V = (*Tuple)[K];
        else if (isTensorType(B->getType()))
          V = I.unknown(B->getName().str(),
                        "structured binding of a value not followed",
                        span(DS->getSourceRange()));
        else
          continue;
        I.bind(key(B), B->getName().str(), V, span(DS->getSourceRange()),
               span(SourceRange(B->getLocation(), B->getLocation())), false);
      }
      if (!Tuple)
        sideEffects(DD->getInit());
      I.endStatement();
      continue;
    }
    if (const auto *VD = dyn_cast<VarDecl>(D))
      declareVariable(VD, DS, F, Insertable);
  }
}

/// Whether E does any tensor work (a tensor-typed subexpression that is not
/// just a name), so that a statement is worth opening for it.
static bool hasTensorWork(const Expr *E) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Found = false;
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
    bool VisitExpr(Expr *X) {
      if (isa<DeclRefExpr>(X) || isa<MemberExpr>(X) || isa<ImplicitCastExpr>(X))
        return true;
      if (isTensorType(X->getType()) || isTensorVectorType(X->getType()) ||
          isTensorTupleType(X->getType()))
        Found = true;
      return !Found;
    }
  } Find;
  Find.TraverseStmt(const_cast<Expr *>(E));
  return Find.Found;
}

void FunctionEvaluator::declareVariable(const VarDecl *VD, const DeclStmt *DS,
                                        Flow F, bool Insertable) {
  QualType T = VD->getType();
  SourceSpan Where = span(DS->getSourceRange());
  SourceSpan NameWhere = span(SourceRange(VD->getLocation(), VD->getLocation()));
  std::string Name = VD->getName().str();
  const Expr *Init = VD->hasInit() ? VD->getInit() : nullptr;
  if (!Init) {
    // `torch::Tensor a;` is an undefined tensor until assigned; the name
    // lives in this scope. `std::vector<torch::Tensor> v;` is empty.
    if (isTensorType(T) && !T->isReferenceType())
      I.hold(key(VD), I.undefined("'" + Name + "' is an undefined tensor"));
    else if (isTensorVectorType(T) && !T->isReferenceType())
      TensorLists[key(VD)] = {};
    return;
  }
  if (isOptionsType(T)) {
    OptionVars[key(VD)] = options(Init);
    return;
  }
  if (recordName(T) == "c10::Device" && !T->isReferenceType()) {
    DeviceVars[key(VD)] = device(Init);
    return;
  }
  if (isTensorType(T) && !T->isReferenceType()) {
    openStatement(DS, F, Insertable);
    ValueId V = tensor(Init);
    const Expr *S = strip(Init);
    // `auto y = x;` binds another handle to the same tensor.
    if (auto Sl = isa<DeclRefExpr>(S) ? slotOf(S) : std::nullopt;
        Sl && Sl->Known && V >= 0 && readSlot(*Sl, S) == V) {
      OpOutcome Same;
      Same.Kind = OpKind::Self;
      Same.Value = I.value(V);
      Same.ReadBytes = Same.WrittenBytes = 0;
      Same.Note = "another handle to the same tensor";
      V = apply("alias", Init, {V}, Same);
    }
    I.bind(key(VD), Name, V, Where, NameWhere, false);
    if (VD->isStaticLocal())
      I.markStatic();
    // `auto b = std::move(a);` leaves a an undefined tensor.
    if (const auto *CE = dyn_cast<CallExpr>(S))
      if (const FunctionDecl *C = CE->getDirectCallee();
          C && C->getQualifiedNameAsString() == "std::move" &&
          CE->getNumArgs() == 1)
        if (auto From = slotOf(CE->getArg(0)); From && From->Known)
          I.rebind(From->Key, I.undefined("moved from: an undefined tensor"));
    I.endStatement();
    return;
  }
  if (isTensorType(T) && T->isReferenceType()) {
    openStatement(DS, F, Insertable);
    const Expr *S = strip(Init);
    if (S->isPRValue() || isa<MaterializeTemporaryExpr>(Init->IgnoreParens()) ||
        !Init->isGLValue()) {
      // A reference to a temporary extends its life to the reference's.
      ValueId V = tensor(Init);
      I.bind(key(VD), Name, V, Where, NameWhere, false);
      I.endStatement();
      return;
    }
    std::optional<Slot> Target;
    if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S)) {
      if (auto C = integer(CO->getCond())) {
        Target = slotOf(*C ? CO->getTrueExpr() : CO->getFalseExpr());
      } else {
        sideEffects(CO->getCond());
        Slot Either;
        Either.Known = false;
        Either.Display = "'" + Name + "'";
        Either.Why = "one of two tensors, chosen at run time";
        for (const Expr *Arm : {CO->getTrueExpr(), CO->getFalseExpr()})
          if (auto A = slotOf(Arm); A && A->Known)
            Either.Candidates.push_back(A->Key);
        Target = Either;
      }
    } else if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S);
               OCE && OCE->getOperator() == OO_Subscript &&
               OCE->getNumArgs() == 2 &&
               isTensorVectorType(OCE->getArg(0)->getType())) {
      // `torch::Tensor &e = v[0];` names the vector's element.
      const auto *V = dyn_cast<DeclRefExpr>(strip(OCE->getArg(0)));
      auto K = integer(OCE->getArg(1));
      if (V && K && *K >= 0) {
        Slot El;
        El.Vector = resolveKey(V->getDecl());
        El.Index = static_cast<size_t>(*K);
        El.Key = El.Vector + "#" + std::to_string(*K);
        El.Display = V->getDecl()->getName().str() + "[" + std::to_string(*K) + "]";
        Target = El;
      }
    } else {
      Target = slotOf(S);
    }
    if (!Target) {
      Slot Unknown;
      Unknown.Known = false;
      Unknown.Display = "'" + Name + "'";
      Unknown.Why = "a tensor the analysis does not follow";
      // A reference returned by a method may name any member of its object.
      if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S))
        if (const auto *Obj =
                dyn_cast<DeclRefExpr>(strip(MCE->getImplicitObjectArgument()))) {
          std::string Prefix = resolveKey(Obj->getDecl()) + ".";
          for (const std::string &K : I.keysWithPrefix(Prefix))
            Unknown.Candidates.push_back(K);
        }
      Target = Unknown;
    }
    References[key(VD)] = *Target;
    ValueId V = readSlot(*Target, S);
    I.note(Name, V, Where, NameWhere);
    I.endStatement();
    return;
  }
  if (isTensorVectorType(T) && !T->isReferenceType()) {
    // A std::vector<Tensor> local (chunk/split/unbind results, a braced
    // list): its elements stay alive with it, under hidden names.
    openStatement(DS, F, Insertable);
    auto List = tensorList(Init);
    if (List) {
      TensorLists[key(VD)] = *List;
      for (size_t K = 0; K < List->size(); ++K)
        I.hold(key(VD) + "#" + std::to_string(K), (*List)[K]);
    } else {
      TensorLists.erase(key(VD));
    }
    I.endStatement();
    return;
  }
  if (isTensorTupleType(T) && !T->isReferenceType()) {
    openStatement(DS, F, Insertable);
    auto Tuple = tensorTuple(Init);
    if (Tuple) {
      TensorTuples[key(VD)] = *Tuple;
      for (size_t K = 0; K < Tuple->size(); ++K)
        I.hold(key(VD) + "#" + std::to_string(K), (*Tuple)[K]);
    } else {
      sideEffects(Init);
      I.totalsUnknown("the tensors of '" + Name + "' are not followed");
    }
    I.endStatement();
    return;
  }
  if (T->isPointerType() && isTensorType(T->getPointeeType())) {
    openStatement(DS, F, Insertable);
    const Expr *S = strip(Init);
    Slot Target;
    Target.Known = false;
    Target.Display = "'*" + Name + "'";
    Target.Why = "a tensor the analysis does not follow";
    if (const auto *UO = dyn_cast<UnaryOperator>(S);
        UO && UO->getOpcode() == UO_AddrOf) {
      if (auto Sl = slotOf(UO->getSubExpr()); Sl && Sl->Known) {
        Target = *Sl;
        AddressTaken[Sl->Key] = Sl->Display;
      }
    } else if (const auto *NE = dyn_cast<CXXNewExpr>(S);
               NE && !NE->isArray() && NE->getConstructExpr() &&
               NE->getConstructExpr()->getNumArgs() == 1) {
      // `new torch::Tensor(...)`: a heap handle that holds its tensor until
      // deleted, whatever scope the pointer is in.
      ValueId V = tensor(NE->getConstructExpr()->getArg(0));
      Target = Slot{};
      Target.Key = "heap@" + std::to_string(reinterpret_cast<uintptr_t>(NE));
      Target.Display = "*" + Name;
      I.holdUntilReturn(Target.Key, V);
    } else {
      sideEffects(Init);
    }
    Pointers[key(VD)] = Target;
    I.endStatement();
    return;
  }
  if (const auto *LE = dyn_cast<LambdaExpr>(strip(Init))) {
    // The closure holds what it captures by copy, and what its init
    // captures compute, for as long as it lives.
    openStatement(DS, F, Insertable);
    unsigned K = 0;
    for (const LambdaCapture &C : LE->captures()) {
      ++K;
      if (!C.capturesVariable() || C.getCaptureKind() != LCK_ByCopy)
        continue;
      const auto *CV = dyn_cast<VarDecl>(C.getCapturedVar());
      if (!CV || !isTensorType(CV->getType()))
        continue;
      ValueId V = NoValue;
      if (CV->isInitCapture())
        V = tensor(CV->getInit());
      else if (auto It = I.lookup(resolveKey(CV)); It != NoValue)
        V = It;
      if (V != NoValue)
        I.hold(key(VD) + ".capture" + std::to_string(K), V);
    }
    I.endStatement();
    return;
  }
  const auto *RD = T->getAsCXXRecordDecl();
  if (const auto *IL = dyn_cast<InitListExpr>(strip(Init));
      IL && RD && RD->isAggregate() && !T->isReferenceType()) {
    // `Holder h{torch::randn(...)}`: each tensor member holds its tensor
    // as long as h lives.
    if (!hasTensorWork(Init))
      return;
    openStatement(DS, F, Insertable);
    unsigned K = 0;
    for (const FieldDecl *Field : RD->fields()) {
      if (K >= IL->getNumInits())
        break;
      const Expr *FI = IL->getInit(K++);
      if (isTensorType(Field->getType()) && !Field->getType()->isReferenceType())
        I.hold(key(VD) + "." + Field->getName().str(), tensor(FI));
      else
        sideEffects(FI);
    }
    I.endStatement();
    return;
  }
  // Other declarations may still run tensor ops (int64_t n = x.size(0)).
  // Their temporaries matter for the peak, so evaluate tensor subexprs.
  if (!hasTensorWork(Init))
    return;
  openStatement(DS, F, Insertable);
  size_t OpsBefore = I.trace().Ops.size();
  sideEffects(Init);
  // An object built by a constructor the analysis does not follow may
  // keep the tensors it was given.
  if (const auto *CE = dyn_cast<CXXConstructExpr>(strip(Init));
      CE && RD && !isLibTorchDecl(RD) && !T->isReferenceType()) {
    bool TakesTensor = false;
    for (const Expr *A : CE->arguments())
      TakesTensor |= isTensorType(A->getType());
    if (TakesTensor)
      I.totalsUnknown("'" + Name + "' may keep the tensors its constructor "
                      "is given (line " + std::to_string(Where.Line) + ")");
  }
  (void)OpsBefore;
  I.endStatement();
}

FunctionEvaluator::Completion FunctionEvaluator::expressionStatement(const Expr *E, Flow F,
                                                  bool Insertable) {
  const Expr *S = strip(E);
  Completion Done;
  // `(void)expr;` and `static_cast<void>(expr);` evaluate expr.
  while (const auto *Cast = dyn_cast<ExplicitCastExpr>(S)) {
    if (Cast->getCastKind() != CK_ToVoid)
      break;
    S = strip(Cast->getSubExpr());
  }
  if (const auto *TE = dyn_cast<CXXThrowExpr>(S)) {
    if (TE->getSubExpr() && hasTensorWork(TE->getSubExpr())) {
      openStatement(E, F, Insertable);
      sideEffects(TE->getSubExpr());
      I.endStatement();
    }
    Done.K = Completion::Throw;
    Done.Where = E;
    if (TE->getSubExpr())
      Done.Thrown = TE->getSubExpr()->getType();
    return Done;
  }
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S);
      OCE && OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2) {
    const Expr *LHS = strip(OCE->getArg(0));
    // `std::tie(a, b) = tuple;` assigns each element to its name.
    if (const auto *Tie = dyn_cast<CallExpr>(LHS);
        Tie && Tie->getDirectCallee() &&
        Tie->getDirectCallee()->getQualifiedNameAsString() == "std::tie" &&
        isTensorTupleType(LHS->getType())) {
      openStatement(E, F, Insertable);
      auto Tuple = tensorTuple(OCE->getArg(1));
      for (unsigned K = 0; K < Tie->getNumArgs(); ++K) {
        const Expr *Target = strip(Tie->getArg(K));
        ValueId V = Tuple && K < Tuple->size()
                        ? (*Tuple)[K]
                        : I.unknown("std::tie", "element not followed",
                                    span(E->getSourceRange()));
        std::optional<Slot> Sl = slotOf(Target);
        if (!Sl)
          if (const auto *DRE = dyn_cast<DeclRefExpr>(Target)) {
            Sl = Slot{};
            Sl->Key = resolveKey(DRE->getDecl());
            Sl->Display = DRE->getDecl()->getName().str();
          }
        if (Sl)
          assignSlot(*Sl, V, span(E->getSourceRange()),
                     span(Target->getSourceRange()));
      }
      I.endStatement();
      return Done;
    }
    if (isTensorVectorType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS)) {
        openStatement(E, F, Insertable);
        auto List = tensorList(OCE->getArg(1));
        std::string K = resolveKey(DRE->getDecl());
        if (List) {
          TensorLists[K] = *List;
          for (size_t N = 0; N < List->size(); ++N)
            I.hold(K + "#" + std::to_string(N), (*List)[N]);
        } else {
          TensorLists.erase(K);
        }
        I.endStatement();
      }
      return Done;
    }
    if (isTensorTupleType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS)) {
        openStatement(E, F, Insertable);
        auto Tuple = tensorTuple(OCE->getArg(1));
        std::string K = resolveKey(DRE->getDecl());
        if (Tuple) {
          TensorTuples[K] = *Tuple;
          for (size_t N = 0; N < Tuple->size(); ++N)
            I.hold(K + "#" + std::to_string(N), (*Tuple)[N]);
        } else {
          TensorTuples.erase(K);
        }
        I.endStatement();
      }
      return Done;
    }
    if (isOptionsType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS))
        OptionVars[key(DRE->getDecl())] = options(OCE->getArg(1));
      return Done;
    }
    if (recordName(LHS->getType()) == "c10::Device") {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS))
        DeviceVars[key(DRE->getDecl())] = device(OCE->getArg(1));
      return Done;
    }
  }
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S)) {
    const Expr *Obj = MCE->getImplicitObjectArgument();
    if (Obj && isTensorVectorType(Obj->getType())) {
      const auto *DRE = dyn_cast<DeclRefExpr>(strip(Obj));
      std::string Method = calleeName(MCE->getMethodDecl());
      std::string K = DRE ? resolveKey(DRE->getDecl()) : "";
      auto It = DRE ? TensorLists.find(K) : TensorLists.end();
      // push_back / emplace_back of one tensor appends it; the vector
      // holds it from here on.
      if (It != TensorLists.end() &&
          (Method == "push_back" || Method == "emplace_back") &&
          MCE->getNumArgs() == 1 && isTensorType(MCE->getArg(0)->getType())) {
        openStatement(E, F, Insertable);
        ValueId V = tensor(MCE->getArg(0));
        size_t N = It->second.size();
        It->second.push_back(V);
        I.hold(K + "#" + std::to_string(N), V);
        I.endStatement();
        return Done;
      }
      if (It != TensorLists.end() && Method == "reserve")
        return Done;
      // Anything else that changes the vector: its elements are no longer
      // the ones we recorded.
      if (DRE && (!MCE->getMethodDecl() || !MCE->getMethodDecl()->isConst()))
        TensorLists.erase(K);
    }
  }
  // `p = &b;` retargets a pointer to a tensor.
  if (const auto *BO = dyn_cast<BinaryOperator>(S);
      BO && BO->getOpcode() == BO_Assign && BO->getType()->isPointerType() &&
      isTensorType(BO->getType()->getPointeeType())) {
    if (const auto *P = dyn_cast<DeclRefExpr>(strip(BO->getLHS()))) {
      Slot Target;
      Target.Known = false;
      Target.Display = "'*" + P->getDecl()->getName().str() + "'";
      Target.Why = "a tensor the analysis does not follow";
      if (const auto *UO = dyn_cast<UnaryOperator>(strip(BO->getRHS()));
          UO && UO->getOpcode() == UO_AddrOf)
        if (auto Sl = slotOf(UO->getSubExpr()); Sl && Sl->Known) {
          Target = *Sl;
          AddressTaken[Sl->Key] = Sl->Display;
        }
      if (const auto *Q = dyn_cast<DeclRefExpr>(strip(BO->getRHS())))
        if (auto It = Pointers.find(key(Q->getDecl())); It != Pointers.end())
          Target = It->second;
      Pointers[key(P->getDecl())] = Target;
    }
    return Done;
  }
  if (const auto *DE = dyn_cast<CXXDeleteExpr>(S)) {
    // `delete p;` releases the heap handle p points to.
    if (const auto *P = dyn_cast<DeclRefExpr>(strip(DE->getArgument())))
      if (auto It = Pointers.find(key(P->getDecl()));
          It != Pointers.end() && It->second.Known &&
          It->second.Key.rfind("heap@", 0) == 0) {
        openStatement(E, F, Insertable);
        I.drop(It->second.Key);
        I.endStatement();
        Pointers.erase(It);
        return Done;
      }
    return Done;
  }
  if (const auto *CE = dyn_cast<CallExpr>(S)) {
    const FunctionDecl *Callee = CE->getDirectCallee();
    std::string QName = Callee ? Callee->getQualifiedNameAsString() : "";
    // std::swap(a, b) of two tensors swaps the handles.
    if (QName == "std::swap" && CE->getNumArgs() == 2 &&
        isTensorType(CE->getArg(0)->getType())) {
      auto A = slotOf(CE->getArg(0)), B = slotOf(CE->getArg(1));
      openStatement(E, F, Insertable);
      if (A && B && A->Known && B->Known) {
        ValueId VA = readSlot(*A, CE->getArg(0)), VB = readSlot(*B, CE->getArg(1));
        assignSlot(*A, VB, span(E->getSourceRange()),
                   span(CE->getArg(0)->getSourceRange()));
        assignSlot(*B, VA, span(E->getSourceRange()),
                   span(CE->getArg(1)->getSourceRange()));
      } else {
        for (auto *Sl : {&A, &B})
          if (*Sl && (*Sl)->Known)
            forgetSlot((*Sl)->Key, (*Sl)->Display, "is swapped with a tensor "
                       "the analysis does not follow", span(E->getSourceRange()));
      }
      I.endStatement();
      return Done;
    }
  }
  if (isTensorType(S->getType())) {
    openStatement(E, F, Insertable);
    tensor(S);
    I.endStatement();
  } else if (const auto *CE = dyn_cast<CallExpr>(S);
             CE && !isTensorVectorType(S->getType()) &&
             !isTensorTupleType(S->getType())) {
    // A call that returns no tensor (consume(a), std::cout << a): record
    // the use so checks know the tensors are still needed here.
    std::vector<ValueId> Inputs;
    bool HasTensorArgs = false;
    for (const Expr *A : CE->arguments())
      HasTensorArgs |= isTensorType(A->getType());
    const auto *MCE = dyn_cast<CXXMemberCallExpr>(CE);
    bool OnTensor = MCE && isTensorType(MCE->getImplicitObjectArgument()->getType());
    if (HasTensorArgs || OnTensor || hasTensorWork(S)) {
      openStatement(E, F, Insertable);
      if (OnTensor)
        Inputs.push_back(tensor(MCE->getImplicitObjectArgument()));
      for (const Expr *A : CE->arguments()) {
        if (isTensorType(A->getType()))
          Inputs.push_back(tensor(A));
        else
          sideEffects(A);
      }
      opaqueCallEffects(CE);
      OpOutcome Use;
      Use.Kind = OpKind::Use;
      Use.ReadBytes = Use.WrittenBytes = 0;
      const FunctionDecl *Callee = CE->getDirectCallee();
      apply(Callee ? calleeName(Callee) : "call", S, Inputs, Use);
      I.endStatement();
    } else {
      opaqueCallEffects(CE);
    }
  } else if (hasTensorWork(S)) {
    openStatement(E, F, Insertable);
    sideEffects(S);
    I.endStatement();
  } else if (const auto *CE = dyn_cast<CallExpr>(S)) {
    opaqueCallEffects(CE);
  }
  // A call that never returns: a throw (TORCH_CHECK's torchCheckFail,
  // a user's [[noreturn]] error helper) or the end of the program.
  if (const auto *CE = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *Callee = CE->getDirectCallee();
        Callee && Callee->isNoReturn()) {
      std::string QName = Callee->getQualifiedNameAsString();
      bool Exits = QName == "exit" || QName == "std::exit" ||
                   QName == "abort" || QName == "std::abort" ||
                   QName == "_Exit" || QName == "std::_Exit" ||
                   QName == "quick_exit" || QName == "std::quick_exit" ||
                   QName == "std::terminate";
      Done.K = Exits ? Completion::Return : Completion::Throw;
      Done.Where = E;
    }
  return Done;
}

/// Names assigned inside Body that were declared outside it get an unknown
/// value: after a branch or a loop they hold one of several values.
/// What a statement may assign: tensor slots (`x = ...`, through
/// references, `std::tie`, `std::swap`) and option or device variables.
struct AssignedIn {
  std::vector<const Expr *> Targets;
  std::vector<const VarDecl *> Variables;
  std::vector<const ValueDecl *> Containers; // tensor vectors and tuples used
};

static AssignedIn assignedIn(const Stmt *Body) {
  struct Finder : RecursiveASTVisitor<Finder> {
    AssignedIn Out;
    bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *OCE) {
      if (OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2) {
        Out.Targets.push_back(OCE->getArg(0));
        if (const auto *DRE = dyn_cast<DeclRefExpr>(strip(OCE->getArg(0))))
          if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
            Out.Variables.push_back(VD);
        // std::tie(a, b) = ...
        if (const auto *Tie = dyn_cast<CallExpr>(strip(OCE->getArg(0))))
          for (const Expr *A : Tie->arguments())
            Out.Targets.push_back(A);
      }
      return true;
    }
    bool VisitCallExpr(CallExpr *CE) {
      if (const FunctionDecl *F = CE->getDirectCallee();
          F && F->getQualifiedNameAsString() == "std::swap")
        for (const Expr *A : CE->arguments())
          Out.Targets.push_back(A);
      return true;
    }
    bool VisitDeclRefExpr(DeclRefExpr *DRE) {
      if (isTensorVectorType(DRE->getType()) || isTensorTupleType(DRE->getType()))
        Out.Containers.push_back(DRE->getDecl());
      return true;
    }
  } Find;
  Find.TraverseStmt(const_cast<Stmt *>(Body));
  return Find.Out;
}

FunctionEvaluator::StorageSnapshot
FunctionEvaluator::snapshotAssignedIn(const Stmt *Body) {
  StorageSnapshot Out;
  for (const Expr *A : assignedIn(Body).Targets)
    if (auto Sl = slotOf(A))
      for (const std::string &K :
           Sl->Known ? std::vector<std::string>{Sl->Key} : Sl->Candidates)
        if (ValueId V = I.lookup(K); V != NoValue)
          Out[K] = I.value(V).Storage;
  return Out;
}

/// Names assigned inside Body that were declared outside it get an unknown
/// value: after a branch or a loop they hold one of several values. The
/// storage they hold stays counted when every value they may hold is on
/// the same storage (a view reassigned in a branch); otherwise which one is
/// held is unknown, and so are the totals. Before is what the names held
/// before Body ran; null when Body has not run yet.
void FunctionEvaluator::invalidateAssignedIn(const Stmt *Body,
                                             const std::string &Reason,
                                             SourceRange Where,
                                             const StorageSnapshot *Before) {
  AssignedIn Found = assignedIn(Body);
  // Tensor vectors and tuples used inside may have changed: forget their
  // elements.
  for (const ValueDecl *VD : Found.Containers) {
    TensorLists.erase(resolveKey(VD));
    TensorTuples.erase(resolveKey(VD));
  }
  for (const VarDecl *VD : Found.Variables) {
    if (isOptionsType(VD->getType()))
      OptionVars.erase(key(VD));
    DeviceVars.erase(key(VD));
  }
  for (const Expr *A : Found.Targets) {
    auto Sl = slotOf(A);
    if (!Sl)
      continue;
    std::vector<std::string> Keys =
        Sl->Known ? std::vector<std::string>{Sl->Key} : Sl->Candidates;
    for (const std::string &K : Keys) {
      ValueId Now = I.lookup(K);
      if (Now == NoValue)
        continue;
      StorageId Held = I.value(Now).Storage;
      StorageId Prior = Held;
      if (Before) {
        auto It = Before->find(K);
        Prior = It == Before->end() ? NoStorage : It->second;
      }
      if (Prior == Held) {
        I.rebind(K, I.unknownOn(Sl->Display, Reason, span(Where), Held));
        continue;
      }
      I.rebind(K, I.unknown(Sl->Display, Reason, span(Where),
                            Interpreter::Provenance::External));
      I.totalsUnknown("'" + Sl->Display + "' holds one of several tensors "
                      "after line " + std::to_string(span(Where).Line));
    }
  }
}

FunctionEvaluator::Completion FunctionEvaluator::compound(const CompoundStmt *CS, Flow F) {
  I.enterScope();
  llvm::SmallVector<const Stmt *, 16> Body(CS->body_begin(), CS->body_end());
  Completion C = statementList(Body, F);
  I.exitScope();
  return C;
}

/// The label a statement carries, looking through nested labels.
static const LabelStmt *labelOf(const Stmt *S) {
  return dyn_cast_or_null<LabelStmt>(S);
}

/// Whether S contains a goto to L.
static bool jumpsTo(const Stmt *S, const LabelDecl *L) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const LabelDecl *L;
    bool Found = false;
    bool VisitGotoStmt(GotoStmt *G) {
      Found |= G->getLabel() == L;
      return !Found;
    }
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
  } Find;
  Find.L = L;
  Find.TraverseStmt(const_cast<Stmt *>(S));
  return Find.Found;
}

/// Statements in order. A forward goto skips to its label when the label
/// is later in this list; a label that a later statement jumps back to
/// starts a loop that runs to the last statement jumping back.
FunctionEvaluator::Completion FunctionEvaluator::statementList(llvm::ArrayRef<const Stmt *> Body,
                                            Flow F) {
  for (size_t K = 0; K < Body.size(); ++K) {
    if (const LabelStmt *L = labelOf(Body[K])) {
      size_t Last = K;
      for (size_t J = K; J < Body.size(); ++J)
        if (jumpsTo(Body[J], L->getDecl()))
          Last = J;
      if (Last > K || jumpsTo(L->getSubStmt(), L->getDecl())) {
        // Body[K..Last] runs a number of times the analysis does not know.
        SourceRange Region(Body[K]->getBeginLoc(), Body[Last]->getEndLoc());
        BackEdges.insert(L->getDecl());
        std::vector<StorageSnapshot> Before;
        for (size_t J = K; J <= Last; ++J) {
          Before.push_back(snapshotAssignedIn(Body[J]));
          invalidateAssignedIn(Body[J], "assigned in a loop made with goto: "
                               "differs per iteration", Region);
        }
        Flow Inner = F;
        Inner.InLoop = true;
        size_t OpsBefore = I.trace().Ops.size();
        Completion C;
        for (size_t J = K; J <= Last && !C.abrupt(); ++J)
          C = statement(J == K ? L->getSubStmt() : Body[J], Inner, true);
        allocationsAreUncertain(OpsBefore,
                                "allocates in a loop made with goto (line " +
                                    std::to_string(span(Region).Line) + ")");
        for (size_t J = K; J <= Last; ++J)
          invalidateAssignedIn(Body[J], "assigned in a loop made with goto: "
                               "differs per iteration", Region,
                               &Before[J - K]);
        BackEdges.erase(L->getDecl());
        if (C.K == Completion::Return || C.K == Completion::Throw ||
            C.K == Completion::Goto)
          return C;
        K = Last;
        continue;
      }
    }
    Completion C = statement(Body[K], F, /*Insertable=*/true);
    if (C.K == Completion::Goto && C.Label) {
      size_t Target = Body.size();
      for (size_t J = K + 1; J < Body.size(); ++J)
        if (const LabelStmt *L = labelOf(Body[J]); L && L->getDecl() == C.Label)
          Target = J;
      if (Target < Body.size()) {
        // Forward: what lies between is skipped. The label's statement
        // runs next.
        C = statement(labelOf(Body[Target])->getSubStmt(), F, true);
        if (C.abrupt())
          return C;
        K = Target;
        continue;
      }
    }
    if (C.abrupt())
      return C;
  }
  return {};
}

FunctionEvaluator::Completion FunctionEvaluator::branch(const Stmt *Body, Flow F) {
  if (!Body)
    return {};
  I.enterScope();
  Completion C = statement(Body, F, isa<CompoundStmt>(Body));
  I.exitScope();
  return C;
}

FunctionEvaluator::Completion FunctionEvaluator::loop(const Stmt *Body, const Stmt *Whole, Flow F) {
  // Values carried around the loop change per iteration: forget them
  // before evaluating the body once for its per-iteration shapes.
  StorageSnapshot Before = snapshotAssignedIn(Body);
  invalidateAssignedIn(Body, "assigned inside a loop: differs per iteration",
                       Whole->getSourceRange());
  size_t OpsBefore = I.trace().Ops.size();
  Flow Inner = F;
  Inner.InLoop = true;
  I.enterScope();
  // The condition runs on every iteration too.
  const Expr *Cond = nullptr;
  if (const auto *FS = dyn_cast<ForStmt>(Whole))
    Cond = FS->getCond();
  else if (const auto *WS = dyn_cast<WhileStmt>(Whole))
    Cond = WS->getCond();
  else if (const auto *DS = dyn_cast<DoStmt>(Whole))
    Cond = DS->getCond();
  if (Cond && hasTensorWork(Cond)) {
    openStatement(Cond, Inner, false);
    sideEffects(Cond);
    I.endStatement();
  }
  Completion C = statement(Body, Inner, isa<CompoundStmt>(Body));
  if (const auto *FS = dyn_cast<ForStmt>(Whole); FS && FS->getInc() &&
                                                 hasTensorWork(FS->getInc())) {
    openStatement(FS->getInc(), Inner, false);
    sideEffects(FS->getInc());
    I.endStatement();
  }
  I.exitScope();
  for (size_t K = OpsBefore; K < I.trace().Ops.size(); ++K) {
    const OpEvent &Op = I.trace().Ops[K];
    if (Op.Kind == OpKind::Alloc || Op.Kind == OpKind::Copy ||
        Op.Kind == OpKind::Unknown) {
      I.totalsUnknown("allocates inside a loop (line " +
                      std::to_string(Op.Where.Line) + ")");
      break;
    }
  }
  invalidateAssignedIn(Body, "assigned inside a loop: differs per iteration",
                       Whole->getSourceRange(), &Before);
  // A loop body leaving the function or jumping out runs on some
  // iterations only.
  if (C.K == Completion::Return || C.K == Completion::Goto)
    mayHaveLeft(C);
  return {};
}

void FunctionEvaluator::mayHaveLeft(const Completion &C) {
  if (!MayHaveLeft.empty())
    return;
  unsigned Line = C.Where ? span(C.Where->getSourceRange()).Line : 0;
  MayHaveLeft = std::string(C.K == Completion::Goto ? "jumps" : "returns") +
                " on some paths at line " + std::to_string(Line) +
                ", so what follows runs on some paths only";
  MayHaveLeftOps = I.trace().Ops.size();
}

/// Both arms of a branch whose condition is not known: each is evaluated
/// (their allocations make the totals unknown), names assigned in either
/// are unknown after it.
FunctionEvaluator::Completion FunctionEvaluator::ifStatement(const IfStmt *IS, Flow F) {
  I.enterScope();
  if (IS->getInit())
    statement(IS->getInit(), F, false);
  if (const DeclStmt *CV = IS->getConditionVariableDeclStmt())
    declaration(CV, F, false);
  else if (IS->getCond() && hasTensorWork(IS->getCond())) {
    openStatement(IS->getCond(), F, false);
    sideEffects(IS->getCond());
    I.endStatement();
  }
  std::optional<int64_t> Known;
  if (IS->isConstexpr() || !IS->getConditionVariable())
    Known = integer(IS->getCond());
  if (Known) {
    Completion C = branch(*Known ? IS->getThen() : IS->getElse(), F);
    I.exitScope();
    return C;
  }
  size_t OpsBefore = I.trace().Ops.size();
  StorageSnapshot Before = snapshotAssignedIn(IS);
  Flow Inner = F;
  Inner.InBranch = true;
  Completion Then = branch(IS->getThen(), Inner);
  Completion Else = branch(IS->getElse(), Inner);
  for (size_t K = OpsBefore; K < I.trace().Ops.size(); ++K) {
    const OpEvent &Op = I.trace().Ops[K];
    if (Op.Kind == OpKind::Alloc || Op.Kind == OpKind::Copy) {
      I.totalsUnknown("allocates in a branch (line " +
                      std::to_string(Op.Where.Line) + ")");
      break;
    }
  }
  invalidateAssignedIn(IS, "assigned in a branch: depends on the condition",
                       IS->getSourceRange(), &Before);
  I.exitScope();
  if (Then.abrupt() && Else.abrupt() && Then.K == Else.K)
    return Then;
  for (const Completion &C : {Then, Else})
    if (C.K == Completion::Return || C.K == Completion::Goto)
      mayHaveLeft(C);
  return {};
}

/// A case label's statement, looking through the labels stacked on it.
static const Stmt *caseBody(const Stmt *S) {
  while (const auto *SC = dyn_cast_or_null<SwitchCase>(S))
    S = SC->getSubStmt();
  return S;
}

FunctionEvaluator::Completion FunctionEvaluator::switchStatement(const SwitchStmt *SS, Flow F) {
  I.enterScope();
  if (SS->getInit())
    statement(SS->getInit(), F, false);
  if (const DeclStmt *CV = SS->getConditionVariableDeclStmt())
    declaration(CV, F, false);
  else if (SS->getCond() && hasTensorWork(SS->getCond())) {
    openStatement(SS->getCond(), F, false);
    sideEffects(SS->getCond());
    I.endStatement();
  }
  llvm::SmallVector<const Stmt *, 16> Body;
  if (const auto *CS = dyn_cast_or_null<CompoundStmt>(SS->getBody()))
    Body.append(CS->body_begin(), CS->body_end());
  else if (SS->getBody())
    Body.push_back(SS->getBody());
  // The value, when the condition is a constant or a const local.
  std::optional<int64_t> Value = integer(SS->getCond());
  if (!Value)
    if (const VarDecl *CV = SS->getConditionVariable())
      if (CV->getInit())
        Value = integer(CV->getInit());
  auto Matches = [&](const Stmt *S, bool Default) {
    for (const auto *SC = dyn_cast_or_null<SwitchCase>(S); SC;
         SC = dyn_cast_or_null<SwitchCase>(SC->getSubStmt())) {
      if (Default && isa<DefaultStmt>(SC))
        return true;
      if (const auto *C = dyn_cast<CaseStmt>(SC); C && !Default) {
        auto Lo = integer(C->getLHS());
        auto Hi = C->getRHS() ? integer(C->getRHS()) : Lo;
        if (Lo && Hi && *Value >= *Lo && *Value <= *Hi)
          return true;
      }
    }
    return false;
  };
  I.enterScope();
  Completion Result;
  if (Value) {
    size_t Start = Body.size();
    for (size_t K = 0; K < Body.size() && Start == Body.size(); ++K)
      if (Matches(Body[K], false))
        Start = K;
    for (size_t K = 0; K < Body.size() && Start == Body.size(); ++K)
      if (Matches(Body[K], true))
        Start = K;
    // From the matching label on, falling through the labels that follow,
    // until a break.
    for (size_t K = Start; K < Body.size(); ++K) {
      Completion C = statement(caseBody(Body[K]), F, true);
      if (C.K == Completion::Break)
        break;
      if (C.abrupt()) {
        Result = C;
        break;
      }
    }
  } else {
    size_t OpsBefore = I.trace().Ops.size();
    StorageSnapshot Before = snapshotAssignedIn(SS);
    Flow Inner = F;
    Inner.InBranch = true;
    bool Live = false;
    for (const Stmt *S : Body) {
      if (isa<SwitchCase>(S))
        Live = true;
      if (!Live)
        continue;
      Completion C = statement(caseBody(S), Inner, true);
      if (C.abrupt()) {
        Live = false;
        if (C.K == Completion::Return || C.K == Completion::Goto)
          mayHaveLeft(C);
      }
    }
    allocationsAreUncertain(OpsBefore,
                            "allocates in a switch case (line " +
                                std::to_string(span(SS->getSourceRange()).Line) +
                                ")");
    invalidateAssignedIn(SS, "assigned in a switch: depends on the condition",
                         SS->getSourceRange(), &Before);
  }
  I.exitScope();
  I.exitScope();
  return Result;
}

/// Whether a handler for Caught catches an exception of type Thrown
/// (both known): the same class, or a public base of it, or catch (...).
static bool catches(QualType Caught, QualType Thrown) {
  if (Caught.isNull())
    return true;
  const CXXRecordDecl *C =
      Caught.getNonReferenceType()->getAsCXXRecordDecl();
  const CXXRecordDecl *T = Thrown.getNonReferenceType()->getAsCXXRecordDecl();
  if (!C || !T || !T->hasDefinition())
    return false;
  C = C->getCanonicalDecl();
  return T->getCanonicalDecl() == C || T->isDerivedFrom(C);
}

FunctionEvaluator::Completion FunctionEvaluator::tryStatement(const CXXTryStmt *TS, Flow F) {
  std::string ThrowsBefore = I.trace().Throws;
  size_t OpsBefore = I.trace().Ops.size();
  ++TryDepth;
  Completion C = compound(TS->getTryBlock(), F);
  --TryDepth;
  // A LibTorch op that throws inside the block is caught, not the
  // function's fate; where the block stopped is not followed.
  bool LibTorchThrew = ThrowsBefore.empty() && !I.trace().Throws.empty();
  if (LibTorchThrew) {
    std::string Message = I.trace().Throws;
    I.trace().Throws.clear();
    I.totalsUnknown("LibTorch throws inside a try block (" + Message.substr(0, 80) +
                    "): where the block stops is not followed");
  }
  auto Handler = [&](const CXXCatchStmt *H, Flow HF) {
    I.enterScope();
    Completion HC = statement(H->getHandlerBlock(), HF, true);
    I.exitScope();
    return HC;
  };
  if (C.K == Completion::Throw && !C.Thrown.isNull() && !LibTorchThrew) {
    // The block certainly throws: the first handler that catches it runs.
    for (unsigned K = 0; K < TS->getNumHandlers(); ++K)
      if (catches(TS->getHandler(K)->getCaughtType(), C.Thrown))
        return Handler(TS->getHandler(K), F);
    bool Undecided = false;
    for (unsigned K = 0; K < TS->getNumHandlers(); ++K)
      Undecided |= !TS->getHandler(K)->getCaughtType()
                        .getNonReferenceType()->getAsCXXRecordDecl();
    if (!Undecided)
      return C; // no handler catches it: it propagates
  }
  // Handlers may run when something in the block may throw: a throw,
  // a call the analysis does not follow, a LibTorch error.
  bool MayThrow = LibTorchThrew || C.K == Completion::Throw;
  for (size_t K = OpsBefore; K < I.trace().Ops.size() && !MayThrow; ++K)
    MayThrow = I.trace().Ops[K].Kind == OpKind::Unknown ||
               I.trace().Ops[K].Kind == OpKind::Use;
  if (!MayThrow) {
    struct Finder : RecursiveASTVisitor<Finder> {
      bool Found = false;
      bool VisitCXXThrowExpr(CXXThrowExpr *) { return !(Found = true); }
      bool VisitCallExpr(CallExpr *CE) {
        const FunctionDecl *F = CE->getDirectCallee();
        if (!F || !isLibTorchDecl(F))
          Found = true;
        return !Found;
      }
      bool TraverseLambdaExpr(LambdaExpr *) { return true; }
    } Find;
    Find.TraverseStmt(const_cast<CompoundStmt *>(TS->getTryBlock()));
    MayThrow = Find.Found;
  }
  if (!MayThrow)
    return C; // nothing in the block throws as far as the model knows
  size_t HandlerOps = I.trace().Ops.size();
  std::vector<StorageSnapshot> Before;
  for (unsigned K = 0; K < TS->getNumHandlers(); ++K)
    Before.push_back(snapshotAssignedIn(TS->getHandler(K)));
  Flow Inner = F;
  Inner.InBranch = true;
  for (unsigned K = 0; K < TS->getNumHandlers(); ++K) {
    Completion HC = Handler(TS->getHandler(K), Inner);
    if (HC.K == Completion::Return || HC.K == Completion::Goto)
      mayHaveLeft(HC);
  }
  allocationsAreUncertain(HandlerOps,
                          "allocates in a catch handler that may run (line " +
                              std::to_string(span(TS->getSourceRange()).Line) +
                              ")");
  for (unsigned K = 0; K < TS->getNumHandlers(); ++K)
    invalidateAssignedIn(TS->getHandler(K), "assigned in a catch handler that "
                         "may run", TS->getSourceRange(), &Before[K]);
  if (C.K == Completion::Throw)
    return {}; // caught, probably; what follows runs when it is
  return C;
}

FunctionEvaluator::Completion FunctionEvaluator::statement(const Stmt *S, Flow F, bool Insertable) {
  Completion Done;
  if (!S || isa<NullStmt>(S))
    return Done;
  if (const auto *CS = dyn_cast<CompoundStmt>(S))
    return compound(CS, F);
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    declaration(DS, F, Insertable);
    return Done;
  }
  if (const auto *E = dyn_cast<Expr>(S))
    return expressionStatement(E, F, Insertable);
  if (const auto *RS = dyn_cast<ReturnStmt>(S)) {
    Done.K = Completion::Return;
    Done.Where = S;
    const Expr *R = RS->getRetValue();
    if (!R)
      return Done;
    if (isTensorType(R->getType())) {
      openStatement(S, F, false);
      I.trace().Returned.push_back(tensor(R));
      I.endStatement();
    } else if (isTensorVectorType(R->getType()) ||
               isTensorTupleType(R->getType())) {
      openStatement(S, F, false);
      auto Elements = isTensorVectorType(R->getType()) ? tensorList(R)
                                                        : tensorTuple(R);
      if (Elements)
        for (ValueId V : *Elements)
          I.trace().Returned.push_back(V);
      else
        I.totalsUnknown("returns tensors the analysis does not follow");
      I.endStatement();
    } else if (hasTensorWork(R)) {
      openStatement(S, F, false);
      sideEffects(R);
      I.endStatement();
    }
    return Done;
  }
  if (isa<BreakStmt>(S)) {
    Done.K = Completion::Break;
    Done.Where = S;
    return Done;
  }
  if (isa<ContinueStmt>(S)) {
    Done.K = Completion::Continue;
    Done.Where = S;
    return Done;
  }
  if (const auto *GS = dyn_cast<GotoStmt>(S)) {
    Done.K = BackEdges.count(GS->getLabel()) ? Completion::Continue
                                             : Completion::Goto;
    Done.Label = GS->getLabel();
    Done.Where = S;
    return Done;
  }
  if (const auto *LS = dyn_cast<LabelStmt>(S))
    return statement(LS->getSubStmt(), F, Insertable);
  if (const auto *AS = dyn_cast<AttributedStmt>(S))
    return statement(AS->getSubStmt(), F, Insertable);
  if (const auto *FS = dyn_cast<ForStmt>(S)) {
    I.enterScope();
    statement(FS->getInit(), F, false);
    if (const DeclStmt *CV = FS->getConditionVariableDeclStmt())
      declaration(CV, F, false);
    loop(FS->getBody(), S, F);
    I.exitScope();
    return Done;
  }
  if (const auto *RFS = dyn_cast<CXXForRangeStmt>(S)) {
    I.enterScope();
    if (RFS->getInit())
      statement(RFS->getInit(), F, false);
    if (const Expr *Range = RFS->getRangeInit(); Range && hasTensorWork(Range)) {
      openStatement(Range, F, false);
      sideEffects(Range);
      I.endStatement();
    }
    loop(RFS->getBody(), S, F);
    I.exitScope();
    return Done;
  }
  if (const auto *WS = dyn_cast<WhileStmt>(S)) {
    I.enterScope();
    if (const DeclStmt *CV = WS->getConditionVariableDeclStmt())
      declaration(CV, F, false);
    loop(WS->getBody(), S, F);
    I.exitScope();
    return Done;
  }
  if (const auto *DS = dyn_cast<DoStmt>(S)) {
    loop(DS->getBody(), S, F);
    return Done;
  }
  if (const auto *IS = dyn_cast<IfStmt>(S))
    return ifStatement(IS, F);
  if (const auto *SS = dyn_cast<SwitchStmt>(S))
    return switchStatement(SS, F);
  if (const auto *TS = dyn_cast<CXXTryStmt>(S))
    return tryStatement(TS, F);
  if (const auto *SC = dyn_cast<SwitchCase>(S))
    return statement(SC->getSubStmt(), F, Insertable);
  // Anything else (inline assembly, coroutines, SEH): not followed.
  StorageSnapshot Nothing; // nothing was evaluated: every name may differ
  invalidateAssignedIn(S, "assigned in a statement the analysis does not follow",
                       S->getSourceRange(), &Nothing);
  I.totalsUnknown("a statement the analysis does not follow (line " +
                  std::to_string(span(S->getSourceRange()).Line) + ")");
  return Done;
}

FunctionTrace FunctionEvaluator::run() {
  FunctionTrace &T = I.trace();
  T.HasParameters = FD.getNumParams() > 0;
  const auto *MD = dyn_cast<CXXMethodDecl>(&FD);
  bool IsMember = MD && !MD->isStatic();
  if (!T.HasParameters && !IsMember && !FD.isMain() &&
      !FD.getDeclContext()->isDependentContext())
    T.CallableName = FD.getQualifiedNameAsString();
  for (const ParmVarDecl *P : FD.parameters()) {
    if (!isTensorType(P->getType()))
      continue;
    TensorValue V = unknownTensor("parameter '" + P->getName().str() +
                                  "': its shape is not known here");
    ValueId Id = I.external(V);
    I.bind(key(P), P->getName().str(), Id,
           span(P->getSourceRange()),
           span(SourceRange(P->getLocation(), P->getLocation())), false,
           /*IsParameter=*/true);
  }
  Completion C;
  if (const auto *Body = dyn_cast_or_null<CompoundStmt>(FD.getBody()))
    C = compound(Body, Flow{});
  else if (const auto *Try = dyn_cast_or_null<CXXTryStmt>(FD.getBody()))
    C = tryStatement(Try, Flow{}); // a function-try-block
  if (C.K == Completion::Throw && I.trace().Throws.empty()) {
    std::string What = C.Thrown.isNull() ? std::string("an exception")
                                         : C.Thrown.getAsString();
    I.setThrows("throws " + What + " (line " +
                std::to_string(span(C.Where->getSourceRange()).Line) + ")");
  }
  if (!MayHaveLeft.empty())
    allocationsAreUncertain(MayHaveLeftOps, MayHaveLeft);
  return I.finish();
}

} // namespace

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

FunctionTrace analyzeFunction(ASTContext &Ctx, const FunctionDecl &FD,
                              const AnalysisOptions &Opts) {
  FunctionEvaluator Eval(Ctx, FD, Opts);
  return Eval.run();
}

std::vector<FunctionTrace> analyzeTranslationUnit(ASTContext &Ctx,
                                                  const AnalysisOptions &Opts) {
  // Functions and methods by their qualified names; a lambda's body is
  // analysed as a function of its own named after where it is written
  // ("f::lambda@L12"), with its captures unknown.
  struct Collector : RecursiveASTVisitor<Collector> {
    SourceManager &SM;
    std::vector<std::pair<const FunctionDecl *, std::string>> Found;
    std::map<const DeclContext *, std::string> LambdaNames;
    explicit Collector(SourceManager &SM) : SM(SM) {}
    bool shouldVisitLambdaBodies() const { return false; }
    bool VisitFunctionDecl(FunctionDecl *FD) {
      if (FD->doesThisDeclarationHaveABody() && !FD->isDependentContext() &&
          !FD->isTemplateInstantiation() &&
          SM.isWrittenInMainFile(SM.getExpansionLoc(FD->getLocation())))
        Found.push_back({FD, ""});
      return true;
    }
    std::string enclosingName(const DeclContext *DC) {
      for (; DC; DC = DC->getParent()) {
        auto It = LambdaNames.find(DC);
        if (It != LambdaNames.end())
          return It->second;
        if (const auto *F = dyn_cast<FunctionDecl>(DC))
          return F->getQualifiedNameAsString();
      }
      return "";
    }
    bool VisitLambdaExpr(LambdaExpr *LE) {
      CXXMethodDecl *Op = LE->getCallOperator();
      if (!Op || Op->isDependentContext() || !LE->getBody() ||
          !SM.isWrittenInMainFile(SM.getExpansionLoc(LE->getBeginLoc())))
        return true;
      std::string Outer = enclosingName(LE->getLambdaClass()->getDeclContext());
      std::string Name =
          (Outer.empty() ? std::string() : Outer + "::") + "lambda@L" +
          std::to_string(SM.getExpansionLineNumber(LE->getBeginLoc()));
      LambdaNames[Op] = Name;
      Found.push_back({Op, Name});
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
  for (const auto &[FD, Name] : Collect.Found) {
    FunctionEvaluator Eval(Ctx, *FD, Opts, Name);
    Traces.push_back(Eval.run());
  }
  return Traces;
}

} // namespace tma
