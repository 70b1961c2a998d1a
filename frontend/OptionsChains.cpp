// torch::nn options objects read as named values (OptionsChains.h).
#include "frontend/OptionsChains.h"
#include "frontend/FunctionEvaluator.h"
#include "frontend/OpBinder.h"
#include "frontend/SymbolReader.h"
#include "frontend/ArgumentReader.h"

#include "clang/AST/DeclTemplate.h"

#include <cctype>
#include <set>

using namespace clang;

namespace tma {

namespace {

bool endsWith(const std::string &S, const std::string &Tail) {
  return S.size() >= Tail.size() &&
         S.compare(S.size() - Tail.size(), Tail.size(), Tail) == 0;
}

/// The template arguments of the record T names, or null.
const TemplateArgumentList *templateArgs(QualType T) {
  T = T.getNonReferenceType().getCanonicalType();
  if (const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(
          T->getAsCXXRecordDecl()))
    return &Spec->getTemplateArgs();
  return nullptr;
}

std::optional<int64_t> integralTemplateArg(QualType T, unsigned K) {
  const TemplateArgumentList *Args = templateArgs(T);
  if (!Args || Args->size() <= K ||
      (*Args)[K].getKind() != TemplateArgument::Integral)
    return std::nullopt;
  return (*Args)[K].getAsIntegral().getExtValue();
}

QualType typeTemplateArg(QualType T, unsigned K) {
  const TemplateArgumentList *Args = templateArgs(T);
  if (!Args || Args->size() <= K ||
      (*Args)[K].getKind() != TemplateArgument::Type)
    return QualType();
  return (*Args)[K].getAsType();
}

bool isExpandingArray(QualType T) {
  std::string R = recordName(T);
  return R == "torch::ExpandingArray" ||
         R == "torch::ExpandingArrayWithOptionalElem";
}

/// "torch::enumtype::kSame" -> "same".
std::optional<std::string> enumtypeName(QualType T) {
  std::string R = recordName(T);
  const std::string Prefix = "torch::enumtype::k";
  if (R.compare(0, Prefix.size(), Prefix) != 0 || R.size() == Prefix.size())
    return std::nullopt;
  std::string Name = R.substr(Prefix.size());
  for (char &C : Name)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  return Name;
}

ArgValue unknownValue(const std::string &Why) {
  ArgValue A;
  A.K = ArgValue::Kind::Unknown;
  A.Reason = Why;
  return A;
}

/// Looks through the constructors that convert a value into T (optional,
/// variant, ExpandingArray): the first argument of a one-argument
/// constructor, until the expression's type is no longer T's record.
const Expr *innerValue(const Expr *E) {
  E = strip(E);
  std::string Outer = E ? recordName(E->getType()) : "";
  for (int Depth = 0; E && Depth < 6; ++Depth) {
    if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E)) {
      E = strip(FC->getSubExpr());
      continue;
    }
    const auto *CE = dyn_cast<CXXConstructExpr>(E);
    if (!CE || CE->getNumArgs() < 1 || recordName(CE->getType()) != Outer)
      break;
    const Expr *Arg = strip(CE->getArg(0));
    if (!Arg || recordName(Arg->getType()) == Outer)
      break;
    E = Arg;
  }
  return E;
}

ArgValue readValue(FunctionEvaluator &FE, const Expr *E, QualType T);

/// ExpandingArray<D>: D sizes; one integer stands for all D.
ArgValue readExpanding(FunctionEvaluator &FE, const Expr *E, QualType T) {
  auto D = integralTemplateArg(T, 0);
  if (!D)
    return unknownValue("the size of an ExpandingArray is not known");
  const Expr *X = strip(E);
  if (const auto *FC = dyn_cast_or_null<CXXFunctionalCastExpr>(X))
    X = strip(FC->getSubExpr());
  // ExpandingArray(T single_size).
  if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(X);
      CE && isExpandingArray(CE->getType()) && CE->getNumArgs() == 1 &&
      CE->getConstructor()->getNumParams() == 1 &&
      CE->getConstructor()->getParamDecl(0)->getType()->isIntegerType())
    X = strip(CE->getArg(0));
  ArgValue A;
  if (X && X->getType()->isIntegerType()) {
    auto V = FE.symbols().sizeValue(X);
    if (!V)
      return unknownValue("the size could not be derived");
    A.List = Shape(static_cast<size_t>(*D), *V);
    A.K = ArgValue::Kind::IntList;
    return A;
  }
  auto L = FE.args().intList(X ? X : E);
  if (!L)
    return unknownValue("the list could not be derived");
  if (static_cast<int64_t>(L->size()) != *D)
    return unknownValue("the list does not have " + std::to_string(*D) +
                        " elements (LibTorch throws)");
  A.List = *L;
  A.K = ArgValue::Kind::IntList;
  return A;
}

ArgValue readValue(FunctionEvaluator &FE, const Expr *E, QualType T) {
  if (!E)
    return unknownValue("the value is missing");
  std::string R = recordName(T);
  QualType U = T.getNonReferenceType().getCanonicalType();
  // torch::enumtype values: kMean, kSame, kZeros...
  if (auto Name = enumtypeName(T)) {
    ArgValue A;
    A.K = ArgValue::Kind::Other;
    A.Str = *Name;
    return A;
  }
  if (R == "c10::optional" || R == "std::optional") {
    const Expr *S = strip(E);
    std::string SR = S ? recordName(S->getType()) : "";
    if (SR == "c10::nullopt_t" || SR == "std::nullopt_t")
      return ArgValue();
    if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(S);
        CE && CE->getNumArgs() == 0)
      return ArgValue();
    if (isa_and_nonnull<InitListExpr>(S) &&
        cast<InitListExpr>(S)->getNumInits() == 0)
      return ArgValue();
    QualType Inner = typeTemplateArg(T, 0);
    if (Inner.isNull())
      return unknownValue("the optional's type is not known");
    const Expr *V = innerValue(E);
    return readValue(FE, V, Inner);
  }
  if (R == "c10::variant" || R == "std::variant") {
    // padding_t and friends: an enumtype (kSame, kValid, kMean) or a value
    // of the first alternative that is not an enumtype.
    const Expr *V = innerValue(E);
    if (V && enumtypeName(V->getType()))
      return readValue(FE, V, V->getType());
    const TemplateArgumentList *Args = templateArgs(T);
    // The alternatives: variant<Ts...> holds them as one pack.
    std::vector<TemplateArgument> Alts;
    if (Args)
      for (const TemplateArgument &A : Args->asArray()) {
        if (A.getKind() == TemplateArgument::Pack)
          Alts.insert(Alts.end(), A.pack_begin(), A.pack_end());
        else
          Alts.push_back(A);
      }
    for (const TemplateArgument &Alt : Alts) {
      if (Alt.getKind() != TemplateArgument::Type ||
          enumtypeName(Alt.getAsType()))
        continue;
      return readValue(FE, V, Alt.getAsType());
    }
    return unknownValue("the variant's value could not be read");
  }
  if (isExpandingArray(T))
    return readExpanding(FE, E, T);
  if (R == "std::vector") {
    QualType Elem = typeTemplateArg(T, 0);
    if (!Elem.isNull() && Elem->isIntegerType()) {
      auto L = FE.args().intList(E);
      if (!L)
        return unknownValue("the list could not be derived");
      ArgValue A;
      A.K = ArgValue::Kind::IntList;
      A.List = *L;
      return A;
    }
    // std::vector<double> (InterpolateFuncOptions' scale_factor): its
    // constant elements, in Numbers.
    if (!Elem.isNull() && Elem->isRealFloatingType()) {
      const InitListExpr *IL = bracedList(E);
      if (!IL)
        return unknownValue("the list could not be derived");
      ArgValue A;
      A.K = ArgValue::Kind::Other;
      for (const Expr *X : IL->inits()) {
        auto N = FE.args().number(X);
        if (!N)
          return unknownValue("an element of the list could not be derived");
        A.Numbers.push_back(N->Value);
      }
      return A;
    }
  }
  ArgType Type = ArgType::Any;
  // std::string options (GELUOptions' approximate = "none"): the literal.
  if (R == "std::basic_string")
    Type = ArgType::Str;
  else if (isTensorType(T))
    Type = ArgType::OptTensor; // `Tensor()` and `{}` are no tensor
  else if (U->isBooleanType())
    Type = ArgType::Bool;
  else if (U->isIntegerType() && !U->isEnumeralType())
    Type = ArgType::Int;
  else if (U->isRealFloatingType())
    Type = ArgType::Float;
  else if (R == "c10::ScalarType")
    Type = ArgType::ScalarType;
  if (Type == ArgType::Any) {
    ArgValue A;
    A.K = ArgValue::Kind::Other;
    return A;
  }
  ArgValue A = FE.binder().bindArg(E, Type);
  A.Defaulted = false;
  return A;
}

/// The TORCH_ARG fields of RD and its bases: option name -> field.
void torchArgFields(const CXXRecordDecl *RD,
                    std::map<std::string, const FieldDecl *> &Out) {
  if (!RD || !RD->hasDefinition())
    return;
  RD = RD->getDefinition();
  for (const FieldDecl *F : RD->fields()) {
    std::string N = F->getName().str();
    if (N.size() > 1 && N.back() == '_')
      Out.emplace(N.substr(0, N.size() - 1), F);
  }
  for (const CXXBaseSpecifier &B : RD->bases())
    torchArgFields(B.getType()->getAsCXXRecordDecl(), Out);
}

/// A field's default member initializer; for a class template
/// specialization whose initializer is not instantiated, the template's.
const Expr *fieldDefault(const FieldDecl *F) {
  if (const Expr *Init = F->getInClassInitializer())
    return Init;
  const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(F->getParent());
  if (!Spec)
    return nullptr;
  const CXXRecordDecl *Pattern =
      Spec->getSpecializedTemplate()->getTemplatedDecl();
  if (!Pattern)
    return nullptr;
  for (const FieldDecl *PF : Pattern->fields())
    if (PF->getName() == F->getName())
      return PF->getInClassInitializer();
  return nullptr;
}

} // namespace

bool isNNOptionsType(QualType T) {
  std::string R = recordName(T);
  // torch::optim's options (SGDOptions(0.01).momentum(0.9)) are built the
  // same way: a constructor, TORCH_ARG setters and defaults.
  return (R.compare(0, 11, "torch::nn::") == 0 ||
          R.compare(0, 14, "torch::optim::") == 0) &&
         endsWith(R, "Options");
}

std::optional<NamedArgs> readOptionsChain(FunctionEvaluator &FE,
                                          const Expr *E) {
  if (!E || !isNNOptionsType(E->getType()))
    return std::nullopt;
  NamedArgs N;
  N.Record = recordName(E->getType());
  const CXXRecordDecl *RD =
      E->getType().getNonReferenceType()->getAsCXXRecordDecl();
  auto Incomplete = [&](const std::string &Why) {
    if (N.Complete) {
      N.Complete = false;
      N.Why = Why;
    }
  };
  // The setters, outermost first; then the object they start from.
  std::vector<const CXXMemberCallExpr *> Setters;
  const Expr *Cur = E;
  for (int Depth = 0; Cur && Depth < 64; ++Depth) {
    Cur = strip(Cur);
    if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(Cur)) {
      Cur = FC->getSubExpr();
      continue;
    }
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Cur)) {
      const CXXMethodDecl *MD = MC->getMethodDecl();
      if (!MD || MC->getNumArgs() != 1 || MD->getNumParams() != 1 ||
          !isNNOptionsType(MD->getReturnType()) || !MD->getDeclName().isIdentifier()) {
        Incomplete("a call on the options object is not a setter");
        break;
      }
      Setters.push_back(MC);
      Cur = MC->getImplicitObjectArgument();
      continue;
    }
    if (const auto *CE = dyn_cast<CXXConstructExpr>(Cur)) {
      const CXXConstructorDecl *Ctor = CE->getConstructor();
      if (Ctor->isCopyOrMoveConstructor() && CE->getNumArgs() >= 1) {
        Cur = CE->getArg(0);
        continue;
      }
      for (unsigned K = 0; K < CE->getNumArgs() && K < Ctor->getNumParams(); ++K) {
        const ParmVarDecl *P = Ctor->getParamDecl(K);
        if (!P->getDeclName().isIdentifier() || P->getName().empty()) {
          Incomplete("a constructor parameter has no name");
          continue;
        }
        ArgValue V = readValue(FE, CE->getArg(K), P->getType());
        V.Defaulted = isDefaultArg(CE->getArg(K));
        N.Values[P->getName().str()] = V;
      }
      break;
    }
    Incomplete(isa<DeclRefExpr>(Cur)
                   ? "options held in a variable are not followed"
                   : "the options object is not a constructor call");
    break;
  }
  // The TORCH_ARG defaults of options neither the constructor nor a setter
  // gives.
  std::map<std::string, const FieldDecl *> Fields;
  torchArgFields(RD, Fields);
  std::set<std::string> Set;
  for (const CXXMemberCallExpr *MC : Setters)
    Set.insert(MC->getMethodDecl()->getName().str());
  for (const auto &[Name, F] : Fields) {
    if (N.Values.count(Name) || Set.count(Name))
      continue;
    if (const Expr *Init = fieldDefault(F)) {
      ArgValue V = readValue(FE, Init, F->getType());
      V.Defaulted = true;
      N.Values[Name] = V;
    }
  }
  // The setters, innermost first: a later one overrides.
  for (auto It = Setters.rbegin(); It != Setters.rend(); ++It) {
    const CXXMethodDecl *MD = (*It)->getMethodDecl();
    N.Values[MD->getName().str()] =
        readValue(FE, (*It)->getArg(0), MD->getParamDecl(0)->getType());
  }
  return N;
}

std::optional<NamedArgs>
readOptionsFromArguments(FunctionEvaluator &FE, QualType OptionsType,
                         llvm::ArrayRef<const Expr *> Args) {
  const CXXRecordDecl *RD = OptionsType->getAsCXXRecordDecl();
  if (!RD || !RD->hasDefinition())
    return std::nullopt;
  RD = RD->getDefinition();
  // The constructor that takes this many arguments (the rest defaulted:
  // `ReLUOptions(bool inplace = false)` for `torch::nn::ReLU()`); of
  // several (UnflattenOptions(int64_t dim, ...) and (std::string dimname,
  // ...)), the one whose integer parameters take the integer arguments.
  const CXXConstructorDecl *Ctor = nullptr;
  for (const CXXConstructorDecl *C : RD->ctors()) {
    if (C->isCopyOrMoveConstructor() || C->getNumParams() < Args.size() ||
        C->getMinRequiredArguments() > Args.size())
      continue;
    bool Fits = true;
    for (unsigned K = 0; K < Args.size(); ++K) {
      QualType PT = C->getParamDecl(K)->getType().getNonReferenceType();
      bool IntArg = Args[K]->getType()->isIntegerType();
      if (PT->isIntegerType() && !Args[K]->getType()->isArithmeticType())
        Fits = false;
      if (IntArg && (PT->isPointerType() ||
                     recordName(PT) == "std::basic_string"))
        Fits = false;
    }
    if (Fits && (!Ctor || C->getNumParams() == Args.size()))
      Ctor = C;
  }
  if (!Ctor)
    return std::nullopt;
  NamedArgs N;
  N.Record = recordName(OptionsType);
  for (unsigned K = 0; K < Ctor->getNumParams(); ++K) {
    const ParmVarDecl *P = Ctor->getParamDecl(K);
    if (!P->getDeclName().isIdentifier() || P->getName().empty()) {
      N.Complete = false;
      N.Why = "a constructor parameter has no name";
      continue;
    }
    if (K < Args.size()) {
      N.Values[P->getName().str()] = readValue(FE, Args[K], P->getType());
    } else if (const Expr *Default = P->getDefaultArg()) {
      ArgValue V = readValue(FE, Default, P->getType());
      V.Defaulted = true;
      N.Values[P->getName().str()] = V;
    }
  }
  std::map<std::string, const FieldDecl *> Fields;
  torchArgFields(RD, Fields);
  for (const auto &[Name, F] : Fields)
    if (!N.Values.count(Name))
      if (const Expr *Init = fieldDefault(F)) {
        ArgValue V = readValue(FE, Init, F->getType());
        V.Defaulted = true;
        N.Values[Name] = V;
      }
  return N;
}

std::optional<ArgValue> nnOptionsArg(FunctionEvaluator &FE, const Expr *E) {
  auto N = readOptionsChain(FE, E);
  if (!N)
    return std::nullopt;
  ArgValue A;
  A.K = ArgValue::Kind::NNOptions;
  A.Named = std::make_shared<const NamedArgs>(std::move(*N));
  return A;
}

} // namespace tma
