// Calls into the translation unit's own functions: `split_heads(x, 8)`, a
// method with a body, a helper in a project header. The callee's body is
// evaluated with the arguments' values at the call site (context-
// sensitive), in the caller's ShapeEnv, so its sizes are the caller's
// expressions and the facts it checks hold for the caller afterwards.
// What the caller sees is one op: the returned tensor (a view of an
// argument, the argument itself, or a new storage), the bytes the body
// moved, and what it allocated and freed inside (transient bytes, for the
// peak). The callee's own table stays symbolic: it is analysed on its own
// too, with its parameters as symbols.
//
// Not followed, each with its reason: recursion, calls deeper than
// MaxCallDepth, virtual dispatch the static type does not settle, code
// without a body here (another translation unit, a library).
#include "frontend/FunctionEvaluator.h"
#include "frontend/CallFollower.h"
#include "frontend/SymbolReader.h"
#include "model/Geometry.h"

#include "clang/AST/Attr.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace tma {

namespace {

constexpr int MaxCallDepth = 4;

/// A value's fields as text, for the memo's key.
std::string describe(const TensorValue &V) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  auto List = [&](const std::optional<Shape> &L) {
    if (!L) {
      OS << "?";
      return;
    }
    OS << "(";
    for (const SymSize &D : *L)
      OS << D.toCpp() << ",";
    OS << ")";
  };
  List(V.Sizes);
  List(V.Strides);
  OS << (V.Offset ? V.Offset->toCpp() : "?") << ";"
     << (V.Type ? dtypeName(*V.Type) : "?") << ";" << V.TypeOf << ";"
     << (V.Dev ? deviceName(*V.Dev) : "?") << ";" << V.UnknownReason;
  return OS.str();
}

} // namespace

const FunctionDecl *
CallFollower::followedDefinition(const FunctionDecl *Callee) const {
  const FunctionDecl *Def = nullptr;
  if (!Callee || !Callee->hasBody(Def) || !Def || isLibTorchDecl(Def) ||
      isDeviceOnlyFunction(Def))
    return nullptr;
  if (FE.SM.isInSystemHeader(FE.SM.getExpansionLoc(Def->getLocation())))
    return nullptr;
  if (Def->isVariadic() || Def->getDeclContext()->isDependentContext() ||
      isa<CXXConstructorDecl>(Def) || isa<CXXDestructorDecl>(Def))
    return nullptr;
  if (const auto *MD = dyn_cast<CXXMethodDecl>(Def))
    if (MD->getParent()->isLambda() && !lambdaNotFollowed(MD->getParent()).empty())
      return nullptr;
  std::string Q = Def->getQualifiedNameAsString();
  if (Q.rfind("std::", 0) == 0 || Q.rfind("__gnu_cxx::", 0) == 0)
    return nullptr;
  return Def;
}

std::optional<ValueId>
CallFollower::userCall(const Expr *E, const FunctionDecl *Callee,
                            const Expr *Object,
                            llvm::ArrayRef<const Expr *> Args) {
  const FunctionDecl *Def = followedDefinition(Callee);
  if (!Def)
    return std::nullopt;
  std::string Name = lambdaTraceName(*Def); // f::lambda@L3, as its own table
  if (Name.empty())
    Name = Def->getQualifiedNameAsString();
  FE.NotFollowedWhy.clear();
  auto NotFollowed = [&](const std::string &Why) -> std::optional<ValueId> {
    FE.NotFollowedWhy = "call to '" + Name + "' is not followed: " + Why;
    return std::nullopt;
  };
  if (const auto *MD = dyn_cast<CXXMethodDecl>(Def);
      MD && MD->isVirtual() && !MD->hasAttr<FinalAttr>() &&
      !MD->getParent()->hasAttr<FinalAttr>()) {
    // Only a call that names the class (`Base::f(x)`) is not dispatched.
    const auto *MCE = dyn_cast<CXXMemberCallExpr>(strip(E));
    const auto *ME =
        MCE ? dyn_cast<MemberExpr>(MCE->getCallee()->IgnoreParens()) : nullptr;
    if (!ME || !ME->hasQualifier())
      return NotFollowed("a virtual function; which override runs is "
                         "decided at run time");
  }
  for (FunctionEvaluator *F = &FE; F; F = F->Caller)
    if (F->FD.getCanonicalDecl() == Def->getCanonicalDecl())
      return NotFollowed("it is recursive");
  if (FE.CallDepth >= MaxCallDepth)
    return NotFollowed("calls nest deeper than " +
                       std::to_string(MaxCallDepth));
  if (Args.size() != Def->getNumParams())
    return NotFollowed("its arguments do not match its parameters");

  // The arguments' values, in the caller; the tensor ones are the op's
  // inputs, in order.
  std::map<const ParmVarDecl *, BoundArgument> Values;
  std::vector<ValueId> Inputs;
  std::vector<int> TensorArgument(Def->getNumParams(), -1);
  std::string Key = std::to_string(reinterpret_cast<uintptr_t>(Def));
  for (unsigned K = 0; K < Args.size(); ++K) {
    const ParmVarDecl *P = Def->getParamDecl(K);
    QualType PT = P->getType();
    BoundArgument B;
    if (!Args[K]) {
      // No argument written for it (the context autograd hands a custom
      // Function's forward): a value the body cannot know.
      Key += "|-";
    } else if (isTensorType(PT) && isTensorType(Args[K]->getType())) {
      ValueId V = FE.tensor(Args[K]);
      TensorArgument[K] = static_cast<int>(Inputs.size());
      Inputs.push_back(V);
      if (V >= 0) {
        B.Tensor = FE.I.value(V);
        if (const StorageInfo *S =
                B.Tensor->Storage == NoStorage
                    ? nullptr
                    : &FE.I.trace().Storages.at(B.Tensor->Storage))
          B.StorageBytes = S->Bytes;
        Key += "|T" + describe(*B.Tensor) + "#" +
               (B.StorageBytes ? B.StorageBytes->toCpp() : "?");
      } else {
        Key += "|T?";
      }
    } else if (PT.getNonReferenceType()->isIntegerType() &&
               !PT->isBooleanType()) {
      B.Integer = FE.symbols().sizeValue(Args[K]);
      if (B.Integer)
        B.Integer = FE.symbols().convertInteger(*B.Integer, PT.getNonReferenceType());
      Key += "|I" + (B.Integer ? B.Integer->toCpp() : std::string("?"));
    } else {
      Key += "|-";
      if (hasTensorWork(Args[K]))
        FE.sideEffects(Args[K]);
    }
    Values[P] = B;
  }

  // A method of the module this method runs on (`encode(x)` in
  // VAE::forward) sees the same member layers.
  const auto *CalleeMethod = dyn_cast<CXXMethodDecl>(Def);
  const auto *ThisMethod = dyn_cast<CXXMethodDecl>(&FE.FD);
  bool SameObject = CalleeMethod && ThisMethod && !CalleeMethod->isStatic() &&
                    CalleeMethod->getParent() == ThisMethod->getParent() &&
                    (!Object || isa<CXXThisExpr>(strip(Object)));
  if (SameObject)
    Key += "|this";
  // A method on an object this function constructed (`model->forward(x)`
  // after `NeuralNet model(784, 500, 10)`): its members are built from
  // that construction.
  const UserObject *Construction = nullptr;
  if (CalleeMethod && !CalleeMethod->isStatic() && !SameObject && Object) {
    const Expr *Obj = strip(Object);
    if (const auto *Arrow = dyn_cast<CXXOperatorCallExpr>(Obj);
        Arrow && Arrow->getOperator() == OO_Arrow && Arrow->getNumArgs() == 1)
      Obj = strip(Arrow->getArg(0));
    // A local the function constructed, or a member the constructor built.
    const auto *VD = dyn_cast_or_null<ValueDecl>(namedDecl(Obj));
    if (VD && (isa<VarDecl>(VD) || isa<FieldDecl>(VD)))
      if (auto It = FE.UserObjects.find(FE.key(VD)); It != FE.UserObjects.end()) {
        const CXXRecordDecl *Class = It->second.Class;
        const CXXRecordDecl *Owner = CalleeMethod->getParent();
        if (Class->getCanonicalDecl() == Owner->getCanonicalDecl() ||
            Class->isDerivedFrom(Owner)) {
          Construction = &It->second;
          Key += "|object " + FE.key(VD);
        }
      }
  }
  FunctionEvaluator *Top = &FE;
  while (Top->Caller)
    Top = Top->Caller;
  auto Memo = Top->CallMemo.find(Key);
  if (Memo == Top->CallMemo.end()) {
    FunctionEvaluator Callee(FE.Ctx, *Def, FE.Opts, Name);
    Callee.Env = FE.Env;
    Callee.Caller = &FE;
    Callee.CallDepth = FE.CallDepth + 1;
    Callee.Bound = std::move(Values);
    Callee.SameObject = SameObject;
    Callee.Construction = Construction;
    FunctionTrace T = Callee.run();
    Memo = Top->CallMemo
               .emplace(Key, summarizeCall(*Def, Name, Callee, T, TensorArgument))
               .first;
  }
  const CallSummary &Summary = Memo->second;
  ValueId Result = NoValue;
  if (Summary.ReturnsTuple && !Summary.Elements.empty()) {
    // One value per element, the call's bytes on the first.
    std::vector<ValueId> Elements;
    for (const OpOutcome &Element : Summary.Elements)
      Elements.push_back(FE.apply(Name, E, Inputs, Element));
    FE.CallTuples[E] = Elements;
  } else {
    Result = FE.apply(Name, E, Inputs, Summary.Out);
  }
  if (!Summary.TotalsWhy.empty())
    FE.I.totalsUnknown("call to '" + Name + "' (line " +
                       std::to_string(FE.span(E->getSourceRange()).Line) +
                       "): " + Summary.TotalsWhy);
  for (const auto &[K, Why] : Summary.Changed)
    if (Args[K])
      FE.forgetObject(Args[K], Why);
  // Tensors it was handed in a container are followed only as far as the
  // container: if the body may reshape a tensor in place, they may have
  // changed.
  for (unsigned K = 0; K < Args.size(); ++K)
    if (Args[K] && holdsTensors(Def->getParamDecl(K)->getType()) &&
        FE.mayReshapeInPlace(Def))
      FE.forgetContainedTensors(Args[K], "is passed in a container to '" + Name +
                                          "', which may change its geometry "
                                          "in place");
  // A tensor behind a pointer parameter may have been rebound through it:
  // what the body did to `*p` is not carried back, so it is unknown.
  for (unsigned K = 0; K < Args.size(); ++K) {
    QualType PT = Def->getParamDecl(K)->getType();
    if (!Args[K] || !PT->isPointerType() || PT->getPointeeType().isConstQualified() ||
        !isTensorType(PT->getPointeeType()))
      continue;
    const Expr *Target = Args[K];
    if (const auto *UO = dyn_cast<UnaryOperator>(strip(Target));
        UO && UO->getOpcode() == UO_AddrOf)
      Target = UO->getSubExpr();
    if (auto Sl = FE.slotOf(Target); Sl && Sl->Known)
      FE.forgetSlot(Sl->Key, Sl->Display, "passed by pointer to '" + Name + "'",
                 FE.span(Args[K]->getSourceRange()));
  }
  return Summary.ReturnsTensor ? Result : NoValue;
}

FunctionEvaluator::CallSummary
CallFollower::summarizeCall(const FunctionDecl &Def,
                                 const std::string &Name,
                                 FunctionEvaluator &Callee,
                                 const FunctionTrace &T,
                                 const std::vector<int> &TensorArgument) {
  CallSummary S;
  S.ReturnsTensor = isTensorType(Def.getReturnType());
  std::string In = "'" + Name + "' ";
  // The arguments it changed: in place beyond what is followed, or a
  // tensor reference it rebound.
  for (unsigned K = 0; K < Def.getNumParams(); ++K) {
    const ParmVarDecl *P = Def.getParamDecl(K);
    auto It = Callee.ChangedParameters.find(P);
    bool RefRebound =
        P->getType()->isReferenceType() &&
        !P->getType().getNonReferenceType().isConstQualified() &&
        Callee.Mutated.count(cast<ValueDecl>(P->getCanonicalDecl()));
    if (It != Callee.ChangedParameters.end())
      S.Changed.push_back({K, "is changed by " + In + "(its parameter '" +
                                  P->getName().str() + "' " + It->second +
                                  ")"});
    else if (RefRebound)
      S.Changed.push_back({K, "is assigned by " + In + "(parameter '" +
                                  P->getName().str() + "')"});
  }

  // Bytes the body moved, and what it allocated and freed inside.
  std::optional<SymSize> Read = SymSize(0), Written = SymSize(0),
                         Allocated = SymSize(0);
  for (const OpEvent &Op : T.Ops) {
    Allocated = addSizes(addSizes(Allocated, Op.AllocatedBytes),
                     Op.TransientTotalBytes ? Op.TransientTotalBytes
                                            : Op.TransientBytes);
    // A use moves nothing of its own, except a CUDA kernel launch, whose
    // unknown bytes make the body's unknown.
    if (Op.Kind == OpKind::Use && Op.ReadBytes && Op.WrittenBytes)
      continue;
    Read = addSizes(Read, Op.ReadBytes);
    Written = addSizes(Written, Op.WrittenBytes);
  }
  std::optional<SymSize> Peak = T.Summary.PeakLiveBytes;
  if (!T.Summary.UnknownTotalsReason.empty()) {
    Peak.reset();
    S.TotalsWhy = T.Summary.UnknownTotalsReason;
  }

  OpOutcome &Out = S.Out;
  Out.ReadBytes = Read;
  Out.WrittenBytes = Written;
  Out.TransientBytes = Peak;
  Out.TransientTotalBytes = Peak ? Allocated : std::nullopt;
  Out.Note = "call of a function followed into its body";
  if (!T.Throws.empty()) {
    Out = throws(In + T.Throws);
    return S;
  }
  S.ReturnsTuple = isTensorTupleType(Def.getReturnType());
  if (S.ReturnsTuple) {
    // Every return statement gives as many followed tensors; element K's
    // answer holds when they all agree on it.
    Out.Kind = OpKind::Use;
    size_t N = !Callee.Returns.empty() && Callee.Returns.front()
                   ? Callee.Returns.front()->size()
                   : 0;
    for (const auto &Each : Callee.Returns)
      if (!Each || Each->size() != N)
        N = 0;
    for (size_t K = 0; K < N; ++K) {
      OpOutcome Element = Out;
      if (K > 0) {
        Element.ReadBytes = SymSize(0);
        Element.WrittenBytes = SymSize(0);
      }
      // Which of the storages it returns its peak included is not
      // separated: the caller's peak is unknown.
      Element.TransientBytes.reset();
      Element.TransientTotalBytes.reset();
      returnedElement(Def, Name, Callee, T, TensorArgument, K, std::nullopt,
                      std::nullopt, Element);
      S.Elements.push_back(Element);
    }
    return S;
  }
  if (!S.ReturnsTensor) {
    Out.Kind = OpKind::Use;
    return S;
  }
  // A returned tensor is each return statement's one element.
  returnedElement(Def, Name, Callee, T, TensorArgument, 0, Peak, Allocated, Out);
  return S;
}

void CallFollower::returnedElement(const FunctionDecl &Def,
                                        const std::string &Name,
                                        FunctionEvaluator &Callee,
                                        const FunctionTrace &T,
                                        const std::vector<int> &TensorArgument,
                                        size_t K,
                                        const std::optional<SymSize> &Peak,
                                        const std::optional<SymSize> &Allocated,
                                        OpOutcome &Out) {
  std::string In = "'" + Name + "' ";
  auto Unknown = [&](const std::string &Why) {
    Out.Kind = OpKind::Unknown;
    // Which tensor it returns is not known: it may be an argument itself.
    for (int Input : TensorArgument)
      if (Input >= 0)
        Out.MayBeInputs.push_back(static_cast<unsigned>(Input));
    // A reason that already names a call (an argument's, a nested one's)
    // is said once.
    Out.Value = unknownTensor(Why.rfind("call to '", 0) == 0
                                  ? Why
                                  : "call to '" + Name + "': " + Why);
    Out.TransientBytes = std::nullopt;
    Out.TransientTotalBytes = std::nullopt;
  };
  if (Callee.Returns.empty())
    return Unknown("its returned tensor is not followed");
  // Each return statement must give the same answer.
  for (const auto &Each : Callee.Returns) {
    if (!Each || K >= Each->size())
      return Unknown("its returned tensor is not followed");
    const TensorValue &W = T.value((*Each)[K]);
    if (!W.hasLayout() || W.Storage == NoStorage)
      return Unknown(W.UnknownReason.empty()
                         ? std::string("its returned tensor is not known")
                         : W.UnknownReason);
  }
  ValueId R = (*Callee.Returns.front())[K];
  const TensorValue &V = T.value(R);
  StorageId St = V.Storage;
  bool SameStorage = true;
  std::vector<TensorValue> Returned;
  for (const auto &Other : Callee.Returns) {
    const TensorValue &W = T.value((*Other)[K]);
    Returned.push_back(W);
    if (describe(W) != describe(V) ||
        (W.Storage != St &&
         (St == NoStorage || W.Storage == NoStorage ||
          T.Storages.at(St).External || T.Storages.at(W.Storage).External)))
      SameStorage = false;
  }
  if (!SameStorage) {
    Unknown("its return statements return different tensors");
    // Of one shape, strides and dtype (`if (is_training()) return eps *
    // std + mu; return mu;`): those are answered, which tensor it is not.
    if (auto Common = commonLayout(Returned, Out.Value.UnknownReason))
      Out.Value = *Common;
    return;
  }
  // Known in its layout, the value may still miss a field (a device
  // that is the caller's): it carries that reason on.
  TensorValue Result = V;
  Result.Storage = NoStorage;
  Out.Value = Result;
  const StorageInfo &Info = T.Storages.at(St);
  if (Info.External) {
    // An argument's storage: the argument itself, or a view of it.
    for (unsigned P = 0; P < Def.getNumParams(); ++P) {
      auto It = Callee.ParameterValues.find(Def.getParamDecl(P));
      if (It == Callee.ParameterValues.end() || It->second < 0 ||
          T.value(It->second).Storage != St || TensorArgument[P] < 0)
        continue;
      Out.SharesInput = static_cast<unsigned>(TensorArgument[P]);
      bool Same = It->second == R || describe(T.value(It->second)) == describe(V);
      Out.Kind = Same ? OpKind::Self : OpKind::View;
      Out.Note = Same ? In + "returns its argument"
                      : In + "returns a view of its argument";
      return;
    }
    return Unknown("it returns a tensor from outside it (a member, a "
                   "global)");
  }
  // A storage it allocated: the caller holds it from now on.
  Out.Kind = OpKind::Copy;
  Out.StorageBytes = Info.Bytes;
  if (!Info.Bytes)
    return Unknown("the size of the storage it returns is not known");
  if (Peak) {
    Out.TransientBytes = FE.Env->simplify(*Peak - *Info.Bytes);
    if (Allocated)
      Out.TransientTotalBytes = FE.Env->simplify(*Allocated - *Info.Bytes);
  }
  Out.Note = In + "returns a tensor it allocated";
}

bool CallFollower::followedEffects(const CallExpr *CE) {
  const FunctionDecl *Callee = CE->getDirectCallee();
  if (!followedDefinition(Callee) || isTensorType(CE->getType()))
    return false;
  const Expr *Object = nullptr;
  llvm::SmallVector<const Expr *, 4> Args(CE->arguments());
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(CE)) {
    Object = MCE->getImplicitObjectArgument();
  } else if (isa<CXXOperatorCallExpr>(CE) && isa<CXXMethodDecl>(Callee) &&
             !Args.empty()) {
    Object = Args.front();
    Args.erase(Args.begin());
  }
  return userCall(CE, Callee, Object, Args).has_value();
}

} // namespace tma
