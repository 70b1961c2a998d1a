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
  FunctionEvaluator(ASTContext &Ctx, const FunctionDecl &FD,
                    const AnalysisOptions &Opts)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), FD(FD), Opts(Opts),
        I(Opts.DisplayFile, FD.getQualifiedNameAsString(),
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
  // A c10::DeviceType enumerator (torch::kCUDA).
  if (E->getType()->isEnumeralType()) {
    auto Name = enumeratorName(E);
    auto Kind = Name ? deviceKindFromC10Name(*Name) : std::nullopt;
    if (!Kind)
      return std::nullopt;
    I.mentionDevice(span(E->getSourceRange()), false);
    Device D;
    D.Kind = *Kind;
    return D;
  }
  // A string literal ("cuda:0"), possibly wrapped in std::string.
  if (const auto *SL = dyn_cast<StringLiteral>(E)) {
    auto D = parseDeviceString(SL->getString());
    if (D)
      I.mentionDevice(span(E->getSourceRange()), true);
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
  return I.apply(Op, span(E->getSourceRange()), nameSpan(E), Inputs, Out);
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
    return I.unknown(DRE->getDecl()->getName().str(),
                     "'" + DRE->getDecl()->getName().str() +
                         "' is not a tensor this function created",
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
    const auto *Callee = dyn_cast_or_null<FunctionDecl>(OCE->getCalleeDecl());
    llvm::SmallVector<const Expr *, 4> Args(OCE->arguments());
    if (const auto *MD = dyn_cast_or_null<CXXMethodDecl>(Callee))
      return method(S, MD, Args[0], llvm::ArrayRef(Args).drop_front());
    return call(S, Callee, nullptr, Args);
  }
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S)) {
    llvm::SmallVector<const Expr *, 4> Args(MCE->arguments());
    return method(S, MCE->getMethodDecl(), MCE->getImplicitObjectArgument(),
                  Args);
  }
  if (const auto *CE = dyn_cast<CallExpr>(S)) {
    llvm::SmallVector<const Expr *, 4> Args(CE->arguments());
    return call(S, CE->getDirectCallee(), nullptr, Args);
  }
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(S))
    (void)ASE;
  return I.unknown("tensor", "expression not modelled",
                   span(S->getSourceRange()));
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
    return unmodelledCall(Name, E, Inputs,
                          "call to '" + Name + "' is not analysed");
  }
  return freeFunction(E, Callee, Args);
}

ValueId FunctionEvaluator::factoryCall(const Expr *E, const std::string &Name,
                                       const FunctionDecl *Callee,
                                       llvm::ArrayRef<const Expr *> Args) {
  // Find the size list and the options by parameter type, so that every
  // overload (randint(high, size), randint(low, high, size), full(size,
  // value)) is read the same way.
  std::optional<Dims> Sizes;
  bool SawSizes = false;
  Options O;
  bool SawOptions = false;
  const Expr *FillValue = nullptr;
  std::optional<DType> LooseType;
  for (unsigned K = 0; K < Args.size() && K < Callee->getNumParams(); ++K) {
    QualType PT = Callee->getParamDecl(K)->getType();
    std::string PName = recordName(PT);
    if (!SawSizes && (PName == "c10::ArrayRef" || PName == "c10::SymIntArrayRef")) {
      SawSizes = true;
      Sizes = intList(Args[K]);
    } else if (PName == "c10::TensorOptions") {
      SawOptions = true;
      O = options(Args[K]);
    } else if (PName == "c10::Scalar") {
      FillValue = Args[K];
    } else if (PName == "c10::optional" || PName == "c10::ScalarType") {
      // at::randn(size, dtype, layout, device, pin_memory) style overloads.
      if (auto T = scalarType(Args[K]))
        LooseType = T;
    }
  }
  if (!SawOptions && !LooseType) {
    if (Callee->getNumParams() > Args.size())
      ; // trailing defaults were dropped by the AST: nothing to read
  }
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
    } else if (LooseType) {
      Type = LooseType;
    } else if (Name == "full" && FillValue) {
      // full infers its dtype from the fill value when none is given.
      Type = scalarLiteralType(FillValue);
    } else {
      // No dtype: the default dtype (float32). This is where a C++
      // randint with options but no dtype becomes float32.
      Type = DType::Float32;
    }
  }
  FillKind Fill = (Name == "empty" || Name == "empty_strided")
                      ? FillKind::Uninitialized
                      : FillKind::Filled;
  OpOutcome Out = factory(Sizes, Type, Dev, Fill);
  if (!Reason.empty())
    Out.Value.UnknownReason = Reason;
  if (!Sizes && !SawSizes)
    Out.Value.UnknownReason = "no size argument found";
  if (Out.Kind == OpKind::Alloc && Type && Name == "randint" && !O.HasType &&
      SawOptions && O.Known)
    Out.Note = "options without a dtype: float32, not int64";
  return apply(Name, E, {}, Out);
}

ValueId FunctionEvaluator::freeFunction(const Expr *E, const FunctionDecl *FD,
                                        llvm::ArrayRef<const Expr *> Args) {
  std::string Name = calleeName(FD);
  static const std::set<std::string> Factories = {
      "randn", "rand", "zeros", "ones", "empty", "full", "randint"};
  if (Factories.count(Name))
    return factoryCall(E, Name, FD, Args);
  if (Name == "matmul" && Args.size() == 2) {
    ValueId A = tensor(Args[0]), B = tensor(Args[1]);
    return apply("matmul", E, {A, B},
                 tma::matmul(I.value(A), I.value(B), Opts.Version));
  }
  // A free function with a tensor first argument is often the method
  // spelled as a function (torch::transpose(x, 0, 1)).
  if (!Args.empty() && isTensorType(Args[0]->getType()) &&
      FD->getNumParams() >= 1) {
    std::vector<ValueId> Inputs;
    for (const Expr *A : Args)
      if (isTensorType(A->getType()))
        Inputs.push_back(tensor(A));
    return unmodelledCall(Name, E, Inputs, "'" + Name + "' is not modelled");
  }
  return unmodelledCall(Name, E, {}, "'" + Name + "' is not modelled");
}

ValueId FunctionEvaluator::method(const Expr *E, const CXXMethodDecl *MD,
                                  const Expr *Object,
                                  llvm::ArrayRef<const Expr *> Args) {
  if (!MD || !Object || !isTensorType(Object->getType()))
    return I.unknown("call", "method of a non-tensor object",
                     span(E->getSourceRange()));
  std::string Name = calleeName(MD);
  if (Name == "operator[]")
    Name = "subscript";
  ValueId Self = tensor(Object);
  const TensorValue &In = I.value(Self);
  auto Arg = [&](unsigned K) -> const Expr * {
    return K < Args.size() ? Args[K] : nullptr;
  };
  auto Given = [&](unsigned K) {
    return K < Args.size() && !isDefaultArg(Args[K]);
  };
  auto NeedInts = [&](std::initializer_list<unsigned> Ks,
                      std::vector<int64_t> &Out) {
    for (unsigned K : Ks) {
      auto V = integer(Arg(K));
      if (!V)
        return false;
      Out.push_back(*V);
    }
    return true;
  };

  if (Name == "transpose") {
    std::vector<int64_t> D;
    if (NeedInts({0, 1}, D))
      return apply(Name, E, {Self}, tma::transpose(In, D[0], D[1]));
    return unmodelledCall(Name, E, {Self}, "transpose dims could not be derived");
  }
  if (Name == "t")
    return apply(Name, E, {Self}, matrixTranspose(In));
  if (Name == "permute" || Name == "view" || Name == "reshape") {
    auto Shape = intList(Arg(0));
    if (!Shape)
      return unmodelledCall(Name, E, {Self},
                            Name + " argument could not be derived");
    if (Name == "permute")
      return apply(Name, E, {Self}, tma::permute(In, *Shape));
    if (Name == "view")
      return apply(Name, E, {Self}, viewAs(In, *Shape));
    return apply(Name, E, {Self}, tma::reshape(In, *Shape));
  }
  if (Name == "contiguous") {
    MemoryFormat Fmt = MemoryFormat::Contiguous;
    if (Given(0)) {
      auto F = memoryFormat(Arg(0));
      if (!F)
        return unmodelledCall(Name, E, {Self}, "memory format could not be derived");
      Fmt = *F;
    }
    return apply(Name, E, {Self}, tma::contiguous(In, Fmt));
  }
  if (Name == "clone") {
    MemoryFormat Fmt = MemoryFormat::Preserve;
    if (Given(0)) {
      auto F = memoryFormat(Arg(0));
      if (!F)
        return unmodelledCall(Name, E, {Self}, "memory format could not be derived");
      Fmt = *F;
    }
    return apply(Name, E, {Self}, tma::clone(In, Fmt));
  }
  if (Name == "to") {
    // Overloads: to(options, non_blocking, copy, fmt), to(device, dtype,
    // non_blocking, copy, fmt), to(dtype, non_blocking, copy, fmt),
    // to(other, non_blocking, copy, fmt).
    ToTarget T;
    unsigned Next = 0;
    const Expr *First = Arg(0) ? strip(Arg(0)) : nullptr;
    std::string FirstType = First ? recordName(MD->getParamDecl(0)->getType()) : "";
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
        if (O.HasFormat && O.Fmt)
          T.Fmt = *O.Fmt;
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
    } else if (isTensorType(MD->getParamDecl(0)->getType())) {
      ValueId Other = tensor(Arg(0));
      T.Type = I.value(Other).Type;
      T.Dev = I.value(Other).Dev;
      T.TypeUnknown = !T.Type;
      T.DeviceUnknown = !T.Dev;
      Next = 1;
    } else {
      return unmodelledCall(Name, E, {Self}, "this to() overload is not modelled");
    }
    // non_blocking, copy, memory_format follow.
    if (Given(Next + 1)) {
      auto Copy = integer(Arg(Next + 1));
      if (!Copy)
        return unmodelledCall(Name, E, {Self}, "copy flag could not be derived");
      T.Copy = *Copy != 0;
    }
    if (Given(Next + 2)) {
      auto F = memoryFormat(Arg(Next + 2));
      if (!F)
        return unmodelledCall(Name, E, {Self}, "memory format could not be derived");
      T.Fmt = *F;
    }
    return apply(Name, E, {Self}, tma::to(In, T));
  }
  if (Name == "index" && Args.size() == 1)
    return evalIndex(E, Self, Args[0]);
  if (Name == "subscript" && Args.size() == 1) {
    const Expr *Idx = strip(Args[0]);
    if (isTensorType(Idx->getType())) {
      ValueId IdxV = tensor(Idx);
      return apply("operator[]", E, {Self, IdxV},
                   subscriptWithTensor(In, I.value(IdxV)));
    }
    if (auto V = integer(Idx))
      return apply("operator[]", E, {Self}, tma::select(In, 0, *V));
    return unmodelledCall("operator[]", E, {Self}, "index could not be derived");
  }
  if (Name == "matmul" && Args.size() == 1) {
    ValueId B = tensor(Args[0]);
    return apply(Name, E, {Self, B}, tma::matmul(In, I.value(B), Opts.Version));
  }
  std::vector<ValueId> Inputs = {Self};
  for (const Expr *A : Args)
    if (isTensorType(A->getType()))
      Inputs.push_back(tensor(A));
  return unmodelledCall(Name, E, Inputs, "'" + Name + "' is not modelled");
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
    if (isOptionsType(LHS->getType())) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(LHS))
        OptionVars[key(DRE->getDecl())] = options(OCE->getArg(1));
      return;
    }
  }
  // Any other expression with tensor ops: evaluate for its allocations.
  if (isTensorType(S->getType()) || isa<CallExpr>(S)) {
    bool HasTensorWork = isTensorType(S->getType());
    if (const auto *CE = dyn_cast<CallExpr>(S))
      for (const Expr *A : CE->arguments())
        HasTensorWork |= isTensorType(A->getType());
    if (!HasTensorWork)
      return;
    openStatement(E, F, Insertable);
    if (isTensorType(S->getType()))
      tensor(S);
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
      tensor(R);
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
  struct Collector : RecursiveASTVisitor<Collector> {
    SourceManager &SM;
    std::vector<const FunctionDecl *> Found;
    explicit Collector(SourceManager &SM) : SM(SM) {}
    bool shouldVisitLambdaBodies() const { return false; }
    bool VisitFunctionDecl(FunctionDecl *FD) {
      if (FD->doesThisDeclarationHaveABody() && !FD->isDependentContext() &&
          !FD->isTemplateInstantiation() &&
          SM.isWrittenInMainFile(SM.getExpansionLoc(FD->getLocation())))
        Found.push_back(FD);
      return true;
    }
  } Collect(Ctx.getSourceManager());
  // Only top-level declarations written in the main file: the LibTorch
  // headers hold hundreds of thousands of declarations we never need.
  SourceManager &SM = Ctx.getSourceManager();
  for (Decl *D : Ctx.getTranslationUnitDecl()->decls())
    if (SM.isWrittenInMainFile(SM.getExpansionLoc(D->getLocation())))
      Collect.TraverseDecl(D);
  std::vector<FunctionTrace> Traces;
  for (const FunctionDecl *FD : Collect.Found)
    Traces.push_back(analyzeFunction(Ctx, *FD, Opts));
  return Traces;
}

} // namespace tma
