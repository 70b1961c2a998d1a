// Arguments as values: what an integer, a list of sizes, a dtype, a device,
// a memory format, tensor options or a C++ scalar argument evaluates to, as
// far as the source determines it. Clang folds the constants; enumerators
// are read by name; constants at namespace scope are followed.
#include "frontend/FunctionEvaluator.h"
#include "frontend/SymbolReader.h"
#include "frontend/ArgumentReader.h"

using namespace clang;

namespace tma {

std::optional<int64_t> ArgumentReader::integer(const Expr *E) {
  if (auto C = foldInteger(E))
    return C;
  if (auto C = cudaAvailability(E))
    return C;
  // A local or parameter nothing changes (Symbols.cpp), when its value is
  // a constant: `int64_t n = 4;`, `auto c = t.size(1)` of a known t.
  if (auto V = E ? FE.symbols().symbolicValue(E, /*Evaluate=*/false) : std::nullopt)
    return V->constant();
  return std::nullopt;
}

std::optional<int64_t> ArgumentReader::cudaAvailability(const Expr *E) {
  if (!FE.Opts.CudaAvailable || !E)
    return std::nullopt;
  E = E->IgnoreParenImpCasts();
  if (const auto *Not = dyn_cast<UnaryOperator>(E); Not && Not->getOpcode() == UO_LNot) {
    auto Inner = cudaAvailability(Not->getSubExpr());
    return Inner ? std::optional<int64_t>(!*Inner) : std::nullopt;
  }
  if (const auto *CE = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *F = CE->getDirectCallee();
    if (!F || F->getQualifiedNameAsString() != "torch::cuda::is_available")
      return std::nullopt;
    FE.Env->assume(std::string("torch::cuda::is_available() == ") +
                   (*FE.Opts.CudaAvailable ? "true" : "false"));
    return *FE.Opts.CudaAvailable ? 1 : 0;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
        VD && VD->isLocalVarDecl() && VD->getType()->isBooleanType() && VD->getInit() &&
        !FE.Mutated.count(cast<ValueDecl>(VD->getCanonicalDecl())))
      return cudaAvailability(VD->getInit());
  return std::nullopt;
}

std::optional<int64_t> ArgumentReader::foldInteger(const Expr *E) {
  E = stripConversions(E, [](const Expr *X) {
    return X->getType()->isIntegralOrEnumerationType();
  });
  if (!E || E->isValueDependent() || !E->getType()->isIntegralOrEnumerationType())
    return std::nullopt;
  Expr::EvalResult R;
  if (!E->EvaluateAsInt(R, FE.Ctx))
    return std::nullopt;
  return R.Val.getInt().getExtValue();
}

std::optional<std::string> ArgumentReader::enumeratorName(const Expr *E) {
  E = stripConversions(E, [](const Expr *X) {
    return X->getType()->isEnumeralType();
  });
  if (!E || !E->getType()->isEnumeralType())
    return std::nullopt;
  Expr::EvalResult R;
  if (E->isValueDependent() || !E->EvaluateAsInt(R, FE.Ctx))
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

std::optional<Shape> ArgumentReader::intList(const Expr *E) {
  E = strip(E);
  if (!E)
    return std::nullopt;
  // ArrayRef / SymIntArrayRef from an initializer list: the InitListExpr
  // sits below the constructor and std::initializer_list.
  const Expr *Cur = E;
  for (int Depth = 0; Depth < 6 && Cur; ++Depth) {
    Cur = strip(Cur);
    if (const auto *IL = dyn_cast<InitListExpr>(Cur)) {
      Shape Out;
      for (const Expr *Elem : IL->inits()) {
        auto V = FE.symbols().sizeValue(Elem);
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
        return Shape{};
      const Expr *Arg = strip(CE->getArg(0));
      // ArrayRef(const T &OneElt): a single integer.
      if (Arg->getType()->isIntegerType() && CE->getNumArgs() == 1) {
        if (auto V = FE.symbols().sizeValue(Arg))
          return Shape{*V};
        return std::nullopt;
      }
      Cur = Arg;
      continue;
    }
    // A local list nothing changes (FunctionEvaluator::ListVars).
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Cur)) {
      auto It = FE.ListVars.find(FE.key(DRE->getDecl()));
      if (It == FE.ListVars.end())
        return std::nullopt;
      return It->second;
    }
    // x.sizes(), x.strides(): the tensor's, as far as they are known.
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Cur)) {
      const auto *MD = MC->getMethodDecl();
      const Expr *Obj = MC->getImplicitObjectArgument();
      if (MD && Obj && isTensorType(Obj->getType()) && MC->getNumArgs() == 0 &&
          (MD->getName() == "sizes" || MD->getName() == "strides")) {
        const TensorValue &V = FE.I.value(FE.tensor(Obj));
        return MD->getName() == "sizes" ? V.Sizes : V.Strides;
      }
      // x.sizes().vec()
      if (MD && Obj && MD->getName() == "vec" && MC->getNumArgs() == 0) {
        Cur = Obj;
        continue;
      }
    }
    break;
  }
  return std::nullopt;
}

std::optional<std::pair<std::optional<DType>, std::string>>
ArgumentReader::dtypeOfTensor(const Expr *E) {
  // x.scalar_type(), x.dtype(): the tensor's dtype, known or a parameter's.
  const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(strip(E));
  while (!MC && E) {
    const auto *CE = dyn_cast<CXXConstructExpr>(strip(E));
    if (!CE || CE->getNumArgs() != 1)
      break;
    E = CE->getArg(0);
    MC = dyn_cast_or_null<CXXMemberCallExpr>(strip(E));
  }
  if (!MC || !MC->getMethodDecl() || !MC->getMethodDecl()->getIdentifier() ||
      MC->getNumArgs() != 0)
    return std::nullopt;
  StringRef N = MC->getMethodDecl()->getName();
  const Expr *Obj = MC->getImplicitObjectArgument();
  if ((N != "scalar_type" && N != "dtype") || !Obj ||
      !isTensorType(Obj->getType()))
    return std::nullopt;
  const TensorValue &TV = FE.I.value(FE.tensor(Obj));
  if (!TV.dtypeKnown())
    return std::nullopt;
  return std::make_pair(TV.Type, TV.Type ? std::string() : TV.TypeOf);
}

std::optional<DType> ArgumentReader::scalarType(const Expr *E) {
  auto Name = enumeratorName(E);
  if (!Name)
    return std::nullopt;
  return dtypeFromName(*Name);
}

std::optional<MemoryFormat> ArgumentReader::memoryFormat(const Expr *E) {
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

std::optional<Device> ArgumentReader::device(const Expr *E) {
  E = strip(E);
  if (!E)
    return std::nullopt;
  // torch::Device(torch::kCUDA) written as a functional cast.
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
    return device(FC->getSubExpr());
  // A Device variable: a local the analysis tracks, or a constant.
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E);
      DRE && !E->getType()->isEnumeralType()) {
    if (auto It = FE.DeviceVars.find(FE.key(DRE->getDecl())); It != FE.DeviceVars.end())
      return It->second;
    if (const Expr *Init = constantInitializer(DRE->getDecl());
        Init && FE.FollowDepth < 8) {
      ++FE.FollowDepth;
      auto D = device(Init);
      --FE.FollowDepth;
      return D;
    }
    return std::nullopt;
  }
  // `cuda_available ? torch::kCUDA : torch::kCPU` with a condition the
  // analysis knows (--cuda-available): the arm it picks.
  if (const auto *CO = dyn_cast<ConditionalOperator>(E))
    if (auto Pick = integer(CO->getCond()))
      return device(*Pick ? CO->getTrueExpr() : CO->getFalseExpr());
  // A c10::DeviceType enumerator (torch::kCUDA).
  if (E->getType()->isEnumeralType()) {
    auto Name = enumeratorName(E);
    auto Kind = Name ? deviceKindFromC10Name(*Name) : std::nullopt;
    if (!Kind)
      return std::nullopt;
    Device D;
    D.Kind = *Kind;
    FE.I.mentionDevice(FE.span(E->getSourceRange()), false, D);
    return D;
  }
  // A string literal ("cuda:0"), possibly wrapped in std::string.
  if (const auto *SL = dyn_cast<StringLiteral>(E)) {
    auto D = parseDeviceString(SL->getString());
    if (D)
      FE.I.mentionDevice(FE.span(E->getSourceRange()), true, *D);
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
      ValueId V = FE.tensor(MCE->getImplicitObjectArgument());
      if (V >= 0)
        return FE.I.value(V).Dev;
    }
  }
  return std::nullopt;
}

/// The dtype a C++ scalar argument gives `full` and friends: the type of
/// the expression before it became a c10::Scalar.
std::optional<DType> ArgumentReader::scalarLiteralType(const Expr *E) {
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
const Expr *ArgumentReader::constantInitializer(const ValueDecl *D) const {
  const auto *VD = dyn_cast<VarDecl>(D);
  if (!VD || !VD->hasGlobalStorage())
    return nullptr;
  if (!VD->getType().isConstQualified() && !VD->isConstexpr())
    return nullptr;
  const VarDecl *Def = nullptr;
  const Expr *Init = VD->getAnyInitializer(Def);
  return Init;
}

Options ArgumentReader::options(const Expr *E) {
  Options O;
  E = strip(E);
  if (!E) {
    O.Known = false;
    return O;
  }
  auto SetType = [&](const Expr *Arg) {
    O.HasType = true;
    O.Type = scalarType(Arg);
    O.TypeOf.clear();
    if (!O.Type)
      if (auto Of = dtypeOfTensor(Arg)) {
        O.Type = Of->first;
        O.TypeOf = Of->second;
      }
    if (!O.Type && O.TypeOf.empty())
      O.UnknownReason = "dtype could not be derived";
  };
  auto SetDevice = [&](const Expr *Arg) {
    O.HasDevice = true;
    O.Dev = device(Arg);
    if (!O.Dev)
      O.UnknownReason = "device could not be derived";
  };
  auto SetRequiresGrad = [&](const Expr *Arg) {
    // `requires_grad()` passes its default, true, as an argument Clang
    // spells out; a flag that is not a constant may be either.
    std::optional<int64_t> Flag = integer(Arg);
    O.RequiresGrad = Flag ? std::optional<bool>(*Flag != 0) : std::nullopt;
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
    auto It = FE.OptionVars.find(FE.key(DRE->getDecl()));
    if (It != FE.OptionVars.end())
      return It->second;
    if (const Expr *Init = constantInitializer(DRE->getDecl());
        Init && FE.FollowDepth < 8) {
      ++FE.FollowDepth;
      Options Followed = options(Init);
      --FE.FollowDepth;
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
      ValueId V = FE.tensor(Obj);
      if (V >= 0) {
        const TensorValue &TV = FE.I.value(V);
        O.HasType = O.HasDevice = true;
        O.Type = TV.Type;
        O.TypeOf = TV.Type ? std::string() : TV.TypeOf;
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
    } else if (Name == "requires_grad")
      SetRequiresGrad(MCE->getArg(0));
    else if (Name == "layout" || Name == "pinned_memory")
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
    } else if (Name == "requires_grad")
      SetRequiresGrad(CE->getArg(0));
    else if (Name == "layout")
      ;
    else
      O.Known = false;
    return O;
  }
  O.Known = false;
  return O;
}

std::optional<FunctionEvaluator::Number>
ArgumentReader::number(const Expr *E) {
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
  if (!E->EvaluateAsFloat(F, FE.Ctx))
    return std::nullopt;
  bool LosesInfo = false;
  F.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &LosesInfo);
  return Number{F.convertToDouble(), true};
}

/// The category of a C++ scalar argument as ATen wraps it: bool -> Bool,
/// integers -> Int64, floating -> Float64 (a double Scalar).
std::optional<DType> ArgumentReader::scalarCategory(const Expr *E) {
  // `b.item()`: a c10::Scalar of b's category (a bool, an int64_t, a
  // double or a complex<double>), whatever b's value.
  if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(strip(E));
      MC && MC->getMethodDecl() && MC->getMethodDecl()->getIdentifier() &&
      MC->getMethodDecl()->getName() == "item" && MC->getNumArgs() == 0 &&
      isTensorType(MC->getObjectType()) &&
      recordName(MC->getType()) == "c10::Scalar") {
    std::optional<DType> Of = FE.I.value(FE.tensor(MC->getImplicitObjectArgument())).Type;
    if (!Of)
      return std::nullopt;
    if (*Of == DType::Bool)
      return DType::Bool;
    if (isIntegral(*Of, /*IncludeBool=*/false))
      return DType::Int64;
    if (isFloating(*Of))
      return DType::Float64;
    return DType::Complex128;
  }
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

ElemOperand ArgumentReader::operand(const Expr *E) {
  const Expr *T = stripConversions(E, [](const Expr *X) {
    return isTensorType(X->getType());
  });
  if (T && isTensorType(T->getType()))
    return ElemOperand::tensor(FE.I.value(FE.tensor(T)));
  return ElemOperand::scalar(scalarCategory(E));
}

/// An optional tensor argument (linear's bias): absent when it is a
/// default, `{}`, c10::nullopt or an empty Tensor().
FunctionEvaluator::OptTensor ArgumentReader::optionalTensor(const Expr *E) {
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

/// Reads an optional integer argument: absent (default / nullopt), a
/// value, or not derivable.
FunctionEvaluator::OptInt ArgumentReader::optionalInt(const Expr *E) {
  OptInt R;
  if (const Expr *S = presentOptional(
          E, [](const Expr *X) { return X->getType()->isIntegerType(); })) {
    R.Present = true;
    R.Value = integer(S);
    if (!R.Value)
      R.Size = FE.symbols().sizeValue(S);
  }
  return R;
}

/// An optional ScalarType argument: absent, a dtype, or not derivable.
FunctionEvaluator::OptDType ArgumentReader::optionalDType(const Expr *E) {
  OptDType R;
  if (const Expr *S = presentOptional(
          E, [](const Expr *X) { return X->getType()->isEnumeralType(); })) {
    R.Present = true;
    R.Value = scalarType(S);
    // `a.scalar_type()`: a's dtype when known (a check fixed it), else
    // the parameter it follows.
    if (!R.Value)
      if (auto Of = dtypeOfTensor(S)) {
        R.Value = Of->first;
        R.TypeOf = Of->second;
      }
  }
  return R;
}

} // namespace tma
