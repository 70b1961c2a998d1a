// The argument binder: a call of a table op (model/ops/OpTable.def) bound
// to one of the op's overloads.
//
// Design:
//  1. Each C++ parameter type has a schema type (cxxArgType): at::Tensor is
//     Tensor, c10::optional<at::Tensor> Tensor?, c10::IntArrayRef int[],
//     c10::optional<c10::ScalarType> ScalarType?, and so on.
//  2. The overload is the first whose schema types equal the callee's
//     parameter types, in order, the schema's remaining arguments all
//     having defaults (operator+ is add without alpha); a method's receiver
//     binds to the schema's `self`. A "(...)" schema takes the callee's
//     types as they are.
//  3. Each argument is read by its type (Arguments.cpp). A default argument
//     is read from the declaration too (torch::randint's options default to
//     at::kLong), and marked as not written; an empty optional (nullopt,
//     `{}`, an undefined Tensor()) is absent.
#include "frontend/FunctionEvaluator.h"
#include "model/ops/LossCommon.h"
#include "frontend/OpBinder.h"
#include "frontend/SymbolReader.h"
#include "frontend/ArgumentReader.h"
#include "frontend/OptionsChains.h"

using namespace clang;

namespace tma {

namespace {

/// The schema type of a C++ parameter type.
ArgType cxxArgType(QualType T) {
  if (isTensorType(T))
    return ArgType::Tensor;
  if (isTensorVectorType(T))
    return ArgType::TensorList;
  QualType U = T.getNonReferenceType().getCanonicalType();
  if (U->isBooleanType())
    return ArgType::Bool;
  if (U->isIntegerType() && !U->isEnumeralType())
    return ArgType::Int;
  if (U->isRealFloatingType())
    return ArgType::Float;
  std::string R = recordName(T);
  // The element type of a template record: c10::optional<X>, ArrayRef<X>.
  auto Element = [&]() -> QualType {
    if (const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(
            U->getAsCXXRecordDecl()))
      if (Spec->getTemplateArgs().size() >= 1 &&
          Spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type)
        return Spec->getTemplateArgs()[0].getAsType();
    return QualType();
  };
  if (R == "c10::optional" || R == "std::optional") {
    QualType E = Element();
    if (E.isNull())
      return ArgType::Any;
    if (isTensorType(E))
      return ArgType::OptTensor;
    ArgType Inner = cxxArgType(E);
    switch (Inner) {
    case ArgType::Int: return ArgType::OptInt;
    case ArgType::ScalarType: return ArgType::OptScalarType;
    case ArgType::IntList: return ArgType::OptIntList;
    default: return Inner; // MemoryFormat, Device, Layout, Bool, Scalar, Str
    }
  }
  if (R == "c10::ArrayRef" || R == "c10::IListRef" || R == "c10::OptionalArrayRef") {
    QualType E = Element();
    bool Optional = R == "c10::OptionalArrayRef";
    if (!E.isNull() && isTensorType(E))
      return ArgType::TensorList;
    if (!E.isNull() && recordName(E) == "at::indexing::TensorIndex")
      return ArgType::TensorIndexList;
    if (!E.isNull() && recordName(E) == "at::Dimname")
      return ArgType::DimnameList;
    return Optional ? ArgType::OptIntList : ArgType::IntList;
  }
  if (R == "std::initializer_list") {
    QualType E = Element();
    if (!E.isNull() && recordName(E) == "at::indexing::TensorIndex")
      return ArgType::TensorIndexList;
    return ArgType::Any;
  }
  if (R == "c10::SymInt")
    return ArgType::Int;
  if (R == "c10::Scalar")
    return ArgType::Scalar;
  if (R == "c10::ScalarType" || R == "caffe2::TypeMeta")
    return ArgType::ScalarType;
  if (R == "c10::MemoryFormat")
    return ArgType::MemoryFormat;
  if (R == "c10::TensorOptions")
    return ArgType::Options;
  if (R == "c10::Device" || R == "c10::DeviceType")
    return ArgType::Device;
  if (R == "c10::Layout")
    return ArgType::Layout;
  if (R == "at::Dimname")
    return ArgType::Dimname;
  if (R == "c10::basic_string_view" || R == "std::basic_string")
    return ArgType::Str;
  if (R == "at::Generator")
    return ArgType::Generator;
  return ArgType::Any;
}

bool compatible(ArgType Schema, ArgType Cxx) {
  return Schema == ArgType::Any || Schema == Cxx;
}

} // namespace

std::optional<OpCall> OpBinder::bind(const OpInfo &Op,
                                              const CallSite &S,
                                              const std::string &Name,
                                              std::string &Why) {
  const FunctionDecl *Callee = S.Callee;
  size_t NumParams = Callee ? Callee->getNumParams() : 0;
  std::vector<ArgType> Params;
  for (size_t K = 0; K < NumParams && K < S.Args.size(); ++K)
    Params.push_back(cxxArgType(Callee->getParamDecl(K)->getType()));
  bool Method = S.Receiver != nullptr;
  OpCall C;
  C.Op = &Op;
  C.Written = Name;
  C.IsMethod = Method;
  C.Functional = S.Functional;
  C.Version = FE.Opts.Version;
  bool Bound = false;
  for (unsigned O = 0; O < Op.Overloads.size() && !Bound; ++O) {
    const Schema &Sch = Op.Overloads[O];
    if (Sch.Variadic) {
      Bound = true;
      C.Overload = O;
      if (Method)
        C.Args.push_back(bindArg(S.Receiver, ArgType::Tensor));
      for (size_t K = 0; K < Params.size(); ++K)
        C.Args.push_back(bindArg(S.Args[K], Params[K]));
      continue;
    }
    // The schema's arguments the explicit ones fill, in order.
    std::vector<size_t> Slots;
    size_t Self = Sch.Args.size();
    for (size_t K = 0; K < Sch.Args.size(); ++K) {
      if (Method && Sch.Args[K].Name == "self" && Self == Sch.Args.size())
        Self = K;
      else
        Slots.push_back(K);
    }
    if (Method && Self == Sch.Args.size())
      continue; // a method needs a self
    // Fewer parameters than the schema has: the rest must have defaults
    // (operator+ is add without its alpha).
    if (Slots.size() < Params.size())
      continue;
    bool Match = true;
    for (size_t K = Params.size(); K < Slots.size() && Match; ++K)
      Match = Sch.Args[Slots[K]].HasDefault;
    for (size_t K = 0; K < Params.size() && Match; ++K)
      Match = compatible(Sch.Args[Slots[K]].Type, Params[K]);
    if (!Match)
      continue;
    Bound = true;
    C.Overload = O;
    C.Args.resize(Sch.Args.size());
    if (Method)
      C.Args[Self] = bindArg(S.Receiver, ArgType::Tensor);
    for (size_t K = 0; K < Params.size(); ++K)
      C.Args[Slots[K]] = bindArg(S.Args[K], Sch.Args[Slots[K]].Type);
    for (size_t K = Params.size(); K < Slots.size(); ++K)
      C.Args[Slots[K]].Type = Sch.Args[Slots[K]].Type;
  }
  if (!Bound) {
    Why = "this overload of '" + Name + "' is not modelled";
    return std::nullopt;
  }
  // An integer given as a size is >= 0 from here on (ATen would have
  // thrown), and the 0/1 specialisation applies to it like to any size.
  const Schema &Chosen = Op.Overloads[C.Overload];
  for (size_t K = 0; K < C.Args.size(); ++K) {
    const ArgValue &A = C.Args[K];
    if (A.K != ArgValue::Kind::IntList)
      continue;
    std::string ArgName = K < Chosen.Args.size() ? Chosen.Args[K].Name : "";
    if (Op.Family == OpFamily::Factories || ArgName == "size" ||
        ArgName == "sizes" || ArgName == "shape" || ArgName == "repeats")
      for (const SymSize &X : A.List)
        if (auto N = X.symbolName();
            N && FE.Env->info(*N) && FE.Env->info(*N)->Kind == SymbolKind::Integer)
          FE.Env->markSizeLike(*N);
  }
  const ArgValue &SelfArg = C.self();
  if (SelfArg.K == ArgValue::Kind::Tensor && SelfArg.TV.Storage != NoStorage)
    C.SelfStorageBytes = FE.I.trace().Storages.at(SelfArg.TV.Storage).Bytes;
  return C;
}

ArgValue OpBinder::bindArg(const Expr *E, ArgType T) {
  ArgValue A;
  A.Type = T;
  if (!E)
    return A;
  bool Defaulted = isDefaultArg(E);
  auto Unknown = [&](const std::string &Why) {
    A.K = ArgValue::Kind::Unknown;
    A.Reason = Why;
    return A;
  };
  auto Done = [&](ArgValue::Kind K) {
    A.K = K;
    A.Defaulted = Defaulted;
    return A;
  };
  // torch::nn options objects (F::Conv2dFuncOptions().stride(2)): their
  // options by name (frontend/OptionsChains.h).
  if (T == ArgType::Any)
    if (auto N = nnOptionsArg(FE, E)) {
      N->Type = T;
      N->Defaulted = Defaulted;
      return *N;
    }
  switch (T) {
  case ArgType::Tensor:
  case ArgType::OptTensor: {
    // An undefined Tensor() or an empty optional is no tensor.
    if (T == ArgType::OptTensor || Defaulted) {
      OptTensor O = FE.args().optionalTensor(E);
      if (!O.Understood)
        return Unknown("the tensor argument could not be derived");
      if (!O.Present)
        return A;
      E = O.E;
    }
    A.Tensor = FE.tensor(E);
    A.TV = FE.I.value(A.Tensor);
    return Done(ArgValue::Kind::Tensor);
  }
  case ArgType::TensorList: {
    auto List = FE.tensorList(E);
    if (!List)
      return Unknown("the tensor list could not be derived");
    A.Tensors = *List;
    for (ValueId V : *List)
      A.TVs.push_back(FE.I.value(V));
    return Done(ArgValue::Kind::TensorList);
  }
  case ArgType::Int:
  case ArgType::OptInt: {
    OptInt O = FE.args().optionalInt(E);
    if (!O.Present)
      return A;
    if (!O.Value) {
      if (O.Size) {
        A.Size = *O.Size;
        return Done(ArgValue::Kind::SymInt);
      }
      return Unknown("the integer could not be derived");
    }
    A.Int = *O.Value;
    A.Size = *O.Value;
    return Done(ArgValue::Kind::Int);
  }
  case ArgType::IntList:
  case ArgType::OptIntList: {
    if (T == ArgType::OptIntList) {
      std::string R = recordName(strip(E)->getType());
      if (R == "c10::nullopt_t" || R == "std::nullopt_t")
        return A;
    }
    auto L = FE.args().intList(E);
    if (!L)
      return Unknown("the list could not be derived");
    A.List = *L;
    return Done(ArgValue::Kind::IntList);
  }
  case ArgType::Bool: {
    const Expr *S = presentOptional(
        E, [](const Expr *X) { return X->getType()->isBooleanType(); });
    if (!S)
      return A;
    auto V = FE.args().integer(S);
    if (!V)
      return Unknown("the flag could not be derived");
    A.Bool = *V != 0;
    return Done(ArgValue::Kind::Bool);
  }
  case ArgType::Float: {
    const Expr *S = presentOptional(
        E, [](const Expr *X) { return X->getType()->isArithmeticType(); });
    if (!S)
      return A;
    auto N = FE.args().number(S);
    if (!N)
      return Unknown("the number could not be derived");
    A.Number = N->Value;
    A.Floating = N->Floating;
    return Done(ArgValue::Kind::Number);
  }
  case ArgType::Str: {
    // A string literal (c10::string_view or std::string made from one).
    const Expr *S = strip(E);
    for (int Depth = 0; Depth < 4 && S; ++Depth) {
      if (const auto *SL = dyn_cast<StringLiteral>(S)) {
        A.Str = SL->getString().str();
        return Done(ArgValue::Kind::Other);
      }
      const auto *CE = dyn_cast<CXXConstructExpr>(S);
      if (!CE || CE->getNumArgs() < 1)
        break;
      S = strip(CE->getArg(0));
    }
    std::string R = recordName(strip(E)->getType());
    if (R == "c10::nullopt_t" || R == "std::nullopt_t")
      return A;
    return Done(ArgValue::Kind::Other);
  }
  case ArgType::Scalar: {
    const Expr *S = presentOptional(
        E, [](const Expr *X) { return X->getType()->isArithmeticType(); });
    if (!S)
      return A;
    A.Scalar = FE.args().operand(S);
    if (auto N = FE.args().number(S)) {
      A.Number = N->Value;
      A.Floating = N->Floating;
    }
    A.LiteralType = FE.args().scalarLiteralType(S);
    if (S->getType()->isIntegerType() && !S->getType()->isBooleanType())
      A.Integral = FE.symbols().sizeValue(S);
    return Done(ArgValue::Kind::Scalar);
  }
  case ArgType::ScalarType:
  case ArgType::OptScalarType: {
    OptDType O = FE.args().optionalDType(E);
    if (!O.Present)
      return A;
    if (!O.Value && !O.TypeOf.empty()) {
      // Not a dtype a rule can read as one: unknown to every rule but
      // those that follow a parameter's dtype (ArgValue::TypeOf).
      A.TypeOf = O.TypeOf;
      return Unknown("the dtype is " + O.TypeOf + ".scalar_type(), the caller's");
    }
    if (!O.Value)
      return Unknown("the dtype could not be derived");
    A.Type_ = *O.Value;
    return Done(ArgValue::Kind::DType);
  }
  case ArgType::MemoryFormat: {
    const Expr *S = presentOptional(
        E, [](const Expr *X) { return X->getType()->isEnumeralType(); });
    if (!S)
      return A;
    auto F = FE.args().memoryFormat(S);
    if (!F)
      return Unknown("the memory format could not be derived");
    A.Fmt = *F;
    return Done(ArgValue::Kind::MemoryFormat);
  }
  case ArgType::Options:
    A.Options = FE.args().options(E);
    return Done(ArgValue::Kind::Options);
  case ArgType::Device: {
    const Expr *S = presentOptional(E, [](const Expr *X) {
      return X->getType()->isEnumeralType() ||
             recordName(X->getType()) == "c10::Device";
    });
    if (!S)
      return A;
    auto D = FE.args().device(S);
    if (!D)
      return Unknown("the device could not be derived");
    A.Dev = *D;
    return Done(ArgValue::Kind::Device);
  }
  case ArgType::TensorIndexList:
    return bindIndices(E);
  default: {
    // Layout, Dimname, Generator, other objects: present or not.
    std::string R = recordName(strip(E)->getType());
    if (R == "c10::nullopt_t" || R == "std::nullopt_t")
      return A;
    if (Defaulted)
      if (const auto *CE = dyn_cast<CXXConstructExpr>(strip(E));
          CE && CE->getNumArgs() == 0)
        return A; // `= {}`
    return Done(ArgValue::Kind::Other);
  }
  }
}

/// Tensor::index({...}): each element a TensorIndex made from an integer, a
/// Slice, None, an Ellipsis, a bool or a tensor.
ArgValue OpBinder::bindIndices(const Expr *IndexList) {
  ArgValue A;
  A.Type = ArgType::TensorIndexList;
  const InitListExpr *IL = bracedList(IndexList);
  if (!IL) {
    A.K = ArgValue::Kind::Unknown;
    A.Reason = "index list could not be derived";
    return A;
  }
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
      // A bound is a constant or a size over the function's symbols
      // (`Slice(0, x.size(0) - 1)`); the step a constant.
      auto Bound = [&](unsigned K, std::optional<SymSize> &Out) {
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
        if (auto V = FE.args().integer(B))
          Out = SymSize(*V);
        else
          Out = FE.symbols().sizeValue(B);
        if (!Out)
          Spec.Unknown = true;
      };
      if (!SC) {
        Spec.Unknown = true;
      } else {
        Bound(0, Spec.Start);
        Bound(1, Spec.Stop);
        std::optional<SymSize> Step;
        Bound(2, Step);
        if (Step && !Step->constant())
          Spec.Unknown = true;
        Spec.Step = Step && Step->constant() ? *Step->constant() : 1;
      }
    } else if (T == "c10::nullopt_t" || T == "std::nullopt_t") {
      Spec.K = IndexSpec::None;
    } else if (T == "at::indexing::EllipsisIndexType" || isa<StringLiteral>(X)) {
      Spec.K = IndexSpec::Ellipsis;
    } else if (X->getType()->isBooleanType()) {
      Spec.K = IndexSpec::Boolean;
      auto B = FE.args().integer(X);
      Spec.Bool = B.value_or(0) != 0;
      Spec.Unknown = !B;
    } else if (X->getType()->isIntegerType()) {
      Spec.K = IndexSpec::Integer;
      auto V = FE.args().integer(X);
      Spec.Int = V.value_or(0);
      Spec.Unknown = !V;
    } else if (isTensorType(X->getType())) {
      Spec.K = IndexSpec::Tensor;
      ValueId V = FE.tensor(X);
      A.Tensors.push_back(V);
      Spec.TensorIndex = FE.I.value(V);
    } else {
      A.K = ArgValue::Kind::Unknown;
      A.Reason = "an index element is not modelled";
      A.Tensors.clear();
      return A;
    }
    A.Indices.push_back(Spec);
  }
  A.K = ArgValue::Kind::Indices;
  return A;
}

void OpBinder::setArgumentValue(OpArgument &A, const ArgValue &V) {
  if (V.K == ArgValue::Kind::Tensor)
    A.Tensor = V.Tensor;
  else if (V.K == ArgValue::Kind::Int)
    A.Number = static_cast<double>(V.Int);
  else if (V.K == ArgValue::Kind::Bool)
    A.Number = V.Bool ? 1.0 : 0.0;
  else if (V.K == ArgValue::Kind::Scalar || V.K == ArgValue::Kind::Number)
    A.Number = V.Number;
}

/// A functional spelling's options object (`F::mse_loss(a, b, opts)`)
/// stands for the ATen schema's other arguments: each it sets or defaults
/// by its name (an enum as at::Reduction's integer), the rest as absent,
/// so that the backward node keeping `reduction` is the one recognised.
void OpBinder::expandOptionsArgument(const OpCall &C, std::vector<OpArgument> &Named) {
  auto It = std::find_if(Named.begin(), Named.end(), [](const OpArgument &A) {
    return A.Name == "options" && !A.IsTensor;
  });
  if (It == Named.end() || C.Op->Overloads.empty())
    return;
  const ArgValue &V = C.Args[static_cast<size_t>(It - Named.begin())];
  Named.erase(It);
  auto Has = [&](const std::string &Name) {
    return std::any_of(Named.begin(), Named.end(),
                       [&](const OpArgument &A) { return A.Name == Name; });
  };
  if (V.Named)
    for (const auto &[Name, Value] : V.Named->Values) {
      if (Has(Name))
        continue;
      OpArgument A;
      A.Name = Name;
      A.IsTensor = Value.K == ArgValue::Kind::Tensor;
      setArgumentValue(A, Value);
      if (std::string Why; !A.Number && Name == "reduction")
        if (auto R = loss::readReduction(&Value, /*AllowBatchMean=*/false, Why))
          A.Number = static_cast<double>(static_cast<int>(*R)); // at::Reduction's
      Named.push_back(std::move(A));
    }
  for (const SchemaArg &S : C.Op->Overloads.front().Args)
    if (!Has(S.Name)) {
      OpArgument A;
      A.Name = S.Name;
      A.IsTensor = S.Type == ArgType::Tensor || S.Type == ArgType::OptTensor ||
                   S.Type == ArgType::TensorList;
      A.Absent = true;
      Named.push_back(std::move(A));
    }
}

} // namespace tma
