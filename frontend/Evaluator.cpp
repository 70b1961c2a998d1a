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

  // Statements.
  void statement(const Stmt *S, Flow F, bool Insertable);
  void compound(const CompoundStmt *CS, Flow F);
  void declaration(const DeclStmt *DS, Flow F, bool Insertable);
  void expressionStatement(const Expr *E, Flow F, bool Insertable);
  void openStatement(const Stmt *S, Flow F, bool Insertable);
  void invalidateAssignedIn(const Stmt *Body, const std::string &Reason,
                            SourceRange Where);

  // Expressions.
  ValueId tensor(const Expr *E);
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
  ValueId listElement(const Expr *E, const Expr *List, const Expr *Index);
  void forgetObject(const Expr *Object, const std::string &Why);
  void forgetReferenceArgs(const FunctionDecl *Callee,
                           llvm::ArrayRef<const Expr *> Args);
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
  /// Elements of std::vector<Tensor> locals (chunk/split/unbind results).
  std::map<std::string, std::vector<ValueId>> TensorLists;
};

SourceSpan FunctionEvaluator::span(SourceRange R) const {
  SourceSpan S;
  S.File = Opts.DisplayFile;
  SourceLocation B = R.getBegin(), E = R.getEnd();
  S.BeginRaw = B.getRawEncoding();
  S.EndRaw = E.getRawEncoding();
  S.InMacro = B.isMacroID() || E.isMacroID();
  SourceLocation BE = SM.getExpansionLoc(B);
  SourceLocation EE = SM.getExpansionRange(E).getEnd();
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

  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    auto It = OptionVars.find(key(DRE->getDecl()));
    if (It != OptionVars.end())
      return It->second;
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

ValueId FunctionEvaluator::tensor(const Expr *E) {
  const Expr *S = strip(E);
  if (!S)
    return NoValue;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    ValueId V = I.lookup(key(DRE->getDecl()));
    if (V != NoValue)
      return V;
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
                     span(S->getSourceRange()));
  }
  if (const auto *ME = dyn_cast<MemberExpr>(S)) {
    std::string Name = ME->getMemberDecl()->getName().str();
    return I.unknown(Name,
                     "member '" + Name + "': its value is not known here",
                     span(S->getSourceRange()));
  }
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S)) {
    // Copy or move of a Tensor handle: the same tensor.
    if (CE->getNumArgs() == 1 && isTensorType(CE->getArg(0)->getType()))
      return tensor(CE->getArg(0));
    return I.unknown("tensor", "constructor not modelled",
                     span(S->getSourceRange()));
  }
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S)) {
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
                       span(S->getSourceRange()));
    }
    llvm::SmallVector<const Expr *, 4> Args(MCE->arguments());
    return method(S, MCE->getMethodDecl(), Obj, Args);
  }
  if (const auto *CE = dyn_cast<CallExpr>(S)) {
    llvm::SmallVector<const Expr *, 4> Args(CE->arguments());
    return call(S, CE->getDirectCallee(), nullptr, Args);
  }
  return I.unknown("tensor", "expression not modelled",
                   span(S->getSourceRange()));
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
    auto It = TensorLists.find(key(DRE->getDecl()));
    if (It == TensorLists.end())
      return std::nullopt;
    return It->second;
  }
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
    forgetReferenceArgs(Callee, Args);
    return unmodelledCall(Name, E, Inputs,
                          "call to '" + Name + "' is not analysed");
  }
  return freeFunction(E, Callee, Args);
}

/// A function we do not analyse that takes a tensor by non-const reference
/// may rebind it: forget what we knew about those names.
void FunctionEvaluator::forgetReferenceArgs(const FunctionDecl *Callee,
                                            llvm::ArrayRef<const Expr *> Args) {
  std::string Name = Callee->getQualifiedNameAsString();
  for (unsigned K = 0; K < Args.size() && K < Callee->getNumParams(); ++K) {
    QualType PT = Callee->getParamDecl(K)->getType();
    if (PT->isReferenceType() && !PT.getNonReferenceType().isConstQualified() &&
        isTensorType(PT))
      forgetObject(Args[K], "passed by reference to '" + Name + "'");
  }
}

/// A named tensor changed in a way the analysis does not follow: its name
/// becomes unknown and so do the function's totals.
void FunctionEvaluator::forgetObject(const Expr *Object,
                                     const std::string &Why) {
  const auto *DRE = dyn_cast_or_null<DeclRefExpr>(strip(Object));
  if (!DRE || I.lookup(key(DRE->getDecl())) == NoValue)
    return;
  std::string Name = DRE->getDecl()->getName().str();
  ValueId V = I.unknown(Name, "'" + Name + "' " + Why,
                        span(Object->getSourceRange()));
  I.rebind(key(DRE->getDecl()), V);
  I.totalsUnknown("'" + Name + "' " + Why);
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
  if (!MD || !Object || !isTensorType(Object->getType()))
    return I.unknown("call",
                     MD && MD->getParent() && MD->getParent()->isLambda()
                         ? "call to a lambda is not analysed"
                         : "method of a non-tensor object",
                     span(E->getSourceRange()));
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
      "softmax", "log_softmax",
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
    const auto *VD = dyn_cast<VarDecl>(D);
    if (!VD || !VD->hasInit())
      continue;
    QualType T = VD->getType();
    if (isOptionsType(T)) {
      OptionVars[key(VD)] = options(VD->getInit());
      continue;
    }
    if (isTensorType(T) && !T->isReferenceType()) {
      openStatement(DS, F, Insertable);
      ValueId V = tensor(VD->getInit());
      // `auto y = x;` binds another handle to the same tensor.
      if (const auto *DRE = dyn_cast<DeclRefExpr>(strip(VD->getInit()));
          DRE && V >= 0 && I.lookup(key(DRE->getDecl())) == V) {
        OpOutcome Same;
        Same.Kind = OpKind::Self;
        Same.Value = I.value(V);
        Same.ReadBytes = Same.WrittenBytes = 0;
        Same.Note = "another handle to the same tensor";
        V = apply("alias", VD->getInit(), {V}, Same);
      }
      I.bind(key(VD), VD->getName().str(), V, span(DS->getSourceRange()),
             span(SourceRange(VD->getLocation(), VD->getLocation())), false);
      I.endStatement();
      continue;
    }
    if (isTensorVectorType(T) && !T->isReferenceType()) {
      // A std::vector<Tensor> local (chunk/split/unbind results, a braced
      // list): its elements stay alive with it, under hidden names.
      openStatement(DS, F, Insertable);
      auto List = tensorList(VD->getInit());
      if (List) {
        TensorLists[key(VD)] = *List;
        for (size_t K = 0; K < List->size(); ++K)
          I.hold(key(VD) + "#" + std::to_string(K), (*List)[K]);
      } else {
        TensorLists.erase(key(VD));
      }
      I.endStatement();
      continue;
    }
    if (T->isReferenceType() && isTensorType(T)) {
      // A reference names an existing tensor: same value, no new binding row.
      openStatement(DS, F, Insertable);
      ValueId V = tensor(VD->getInit());
      I.bind(key(VD), VD->getName().str(), V, span(DS->getSourceRange()),
             span(SourceRange(VD->getLocation(), VD->getLocation())), false);
      I.endStatement();
      continue;
    }
    // Other declarations may still run tensor ops (int64_t n = x.size(0)).
    // Their temporaries matter for the peak, so evaluate tensor subexprs.
    const Expr *Init = strip(VD->getInit());
    if (Init && isTensorType(Init->getType())) {
      openStatement(DS, F, Insertable);
      tensor(Init);
      I.endStatement();
    }
  }
}

void FunctionEvaluator::expressionStatement(const Expr *E, Flow F,
                                            bool Insertable) {
  const Expr *S = strip(E);
  // Assignment to a tensor variable: x = expr.
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S);
      OCE && OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2) {
    const Expr *LHS = strip(OCE->getArg(0));
    if (isTensorType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS)) {
        openStatement(E, F, Insertable);
        ValueId V = tensor(OCE->getArg(1));
        I.bind(key(DRE->getDecl()), DRE->getDecl()->getName().str(), V,
               span(E->getSourceRange()), span(DRE->getSourceRange()), true);
        I.endStatement();
        return;
      }
    }
    if (isTensorVectorType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS)) {
        openStatement(E, F, Insertable);
        auto List = tensorList(OCE->getArg(1));
        std::string K = key(DRE->getDecl());
        if (List) {
          TensorLists[K] = *List;
          for (size_t N = 0; N < List->size(); ++N)
            I.hold(K + "#" + std::to_string(N), (*List)[N]);
        } else {
          TensorLists.erase(K);
        }
        I.endStatement();
      }
      return;
    }
    if (isOptionsType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS))
        OptionVars[key(DRE->getDecl())] = options(OCE->getArg(1));
      return;
    }
  }
  // push_back, clear, ... on a tensor vector: its elements are no longer
  // the ones we recorded.
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S)) {
    const Expr *Obj = MCE->getImplicitObjectArgument();
    if (Obj && isTensorVectorType(Obj->getType()))
      if (const auto *DRE = dyn_cast<DeclRefExpr>(strip(Obj)))
        if (!MCE->getMethodDecl() || !MCE->getMethodDecl()->isConst())
          TensorLists.erase(key(DRE->getDecl()));
  }
  // A call that takes a tensor by non-const reference may rebind it.
  if (const auto *CE = dyn_cast<CallExpr>(S);
      CE && !isTensorType(S->getType()) && !isa<CXXMemberCallExpr>(CE) &&
      !isa<CXXOperatorCallExpr>(CE))
    if (const FunctionDecl *Callee = CE->getDirectCallee();
        Callee && !isLibTorchDecl(Callee))
      forgetReferenceArgs(Callee, llvm::ArrayRef(CE->getArgs(), CE->getNumArgs()));
  // Any other expression with tensor ops: evaluate for its allocations.
  if (isTensorType(S->getType()) || isa<CallExpr>(S)) {
    bool HasTensorWork = isTensorType(S->getType());
    if (const auto *CE = dyn_cast<CallExpr>(S))
      for (const Expr *A : CE->arguments())
        HasTensorWork |= isTensorType(A->getType());
    if (!HasTensorWork)
      return;
    openStatement(E, F, Insertable);
    if (isTensorType(S->getType())) {
      tensor(S);
    } else if (const auto *CE = dyn_cast<CallExpr>(S)) {
      // A call that returns no tensor (consume(a), std::cout << a): record
      // the use so checks know the tensors are still needed here.
      std::vector<ValueId> Inputs;
      for (const Expr *A : CE->arguments())
        if (isTensorType(A->getType()))
          Inputs.push_back(tensor(A));
      if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(CE))
        if (isTensorType(MCE->getImplicitObjectArgument()->getType()))
          Inputs.insert(Inputs.begin(), tensor(MCE->getImplicitObjectArgument()));
      OpOutcome Use;
      Use.Kind = OpKind::Use;
      Use.ReadBytes = Use.WrittenBytes = 0;
      const FunctionDecl *Callee = CE->getDirectCallee();
      apply(Callee ? calleeName(Callee) : "call", S, Inputs, Use);
    }
    I.endStatement();
  }
}

/// Names assigned inside Body that were declared outside it get an unknown
/// value: after a branch or a loop they hold one of several values.
void FunctionEvaluator::invalidateAssignedIn(const Stmt *Body,
                                             const std::string &Reason,
                                             SourceRange Where) {
  struct Finder : RecursiveASTVisitor<Finder> {
    std::vector<const VarDecl *> Assigned;
    bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *OCE) {
      if (OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2)
        if (const auto *DRE = dyn_cast<DeclRefExpr>(strip(OCE->getArg(0))))
          if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
            Assigned.push_back(VD);
      return true;
    }
  } Find;
  Find.TraverseStmt(const_cast<Stmt *>(Body));
  // Tensor vectors used inside may have changed: forget their elements.
  struct VectorFinder : RecursiveASTVisitor<VectorFinder> {
    std::vector<const ValueDecl *> Used;
    bool VisitDeclRefExpr(DeclRefExpr *DRE) {
      if (isTensorVectorType(DRE->getType()))
        Used.push_back(DRE->getDecl());
      return true;
    }
  } Vectors;
  Vectors.TraverseStmt(const_cast<Stmt *>(Body));
  for (const ValueDecl *VD : Vectors.Used)
    TensorLists.erase(key(VD));
  for (const VarDecl *VD : Find.Assigned) {
    if (I.lookup(key(VD)) == NoValue)
      continue;
    ValueId V = I.unknown(VD->getName().str(), Reason, span(Where));
    I.rebind(key(VD), V);
  }
}

void FunctionEvaluator::compound(const CompoundStmt *CS, Flow F) {
  I.enterScope();
  for (const Stmt *Child : CS->body())
    statement(Child, F, /*Insertable=*/true);
  I.exitScope();
}

void FunctionEvaluator::statement(const Stmt *S, Flow F, bool Insertable) {
  if (!S)
    return;
  if (const auto *CS = dyn_cast<CompoundStmt>(S))
    return compound(CS, F);
  if (const auto *DS = dyn_cast<DeclStmt>(S))
    return declaration(DS, F, Insertable);
  if (const auto *E = dyn_cast<Expr>(S))
    return expressionStatement(E, F, Insertable);
  if (const auto *RS = dyn_cast<ReturnStmt>(S)) {
    if (const Expr *R = RS->getRetValue(); R && isTensorType(R->getType())) {
      openStatement(S, F, false);
      I.trace().Returned.push_back(tensor(R));
      I.endStatement();
    }
    return;
  }
  auto Loop = [&](const Stmt *Body, const Stmt *Whole) {
    // Values carried around the loop change per iteration: forget them
    // before evaluating the body once for its per-iteration shapes.
    invalidateAssignedIn(Body, "assigned inside a loop: differs per iteration",
                         Whole->getSourceRange());
    size_t OpsBefore = I.trace().Ops.size();
    Flow Inner = F;
    Inner.InLoop = true;
    I.enterScope();
    statement(Body, Inner, isa<CompoundStmt>(Body));
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
                         Whole->getSourceRange());
  };
  if (const auto *FS = dyn_cast<ForStmt>(S)) {
    I.enterScope();
    statement(FS->getInit(), F, false);
    Loop(FS->getBody(), S);
    I.exitScope();
    return;
  }
  if (const auto *RFS = dyn_cast<CXXForRangeStmt>(S))
    return Loop(RFS->getBody(), S);
  if (const auto *WS = dyn_cast<WhileStmt>(S))
    return Loop(WS->getBody(), S);
  if (const auto *DS = dyn_cast<DoStmt>(S))
    return Loop(DS->getBody(), S);
  if (const auto *IS = dyn_cast<IfStmt>(S)) {
    size_t OpsBefore = I.trace().Ops.size();
    Flow Inner = F;
    Inner.InBranch = true;
    for (const Stmt *Branch : {IS->getThen(), IS->getElse()}) {
      if (!Branch)
        continue;
      I.enterScope();
      statement(Branch, Inner, isa<CompoundStmt>(Branch));
      I.exitScope();
    }
    for (size_t K = OpsBefore; K < I.trace().Ops.size(); ++K) {
      const OpEvent &Op = I.trace().Ops[K];
      if (Op.Kind == OpKind::Alloc || Op.Kind == OpKind::Copy) {
        I.totalsUnknown("allocates in a branch (line " +
                        std::to_string(Op.Where.Line) + ")");
        break;
      }
    }
    invalidateAssignedIn(S, "assigned in a branch: depends on the condition",
                         S->getSourceRange());
    return;
  }
  // Other statements (switch, try, labels): analysed as opaque; anything
  // they assign becomes unknown.
  invalidateAssignedIn(S, "assigned in a statement the analysis does not follow",
                       S->getSourceRange());
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
  if (const auto *Body = dyn_cast_or_null<CompoundStmt>(FD.getBody()))
    compound(Body, Flow{});
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
