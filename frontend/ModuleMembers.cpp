// The layers a user module's constructor builds (issue 13):
//
//     struct NetImpl : torch::nn::Module {
//       NetImpl(int64_t in, int64_t classes)
//           : fc1(in, 500), fc2(torch::nn::LinearOptions(500, classes)) {
//         register_module("fc1", fc1);
//         register_module("fc2", fc2);
//       }
//       torch::Tensor forward(torch::Tensor x) {
//         return fc2(torch::relu(fc1(x)));   // <- known here
//       }
//       torch::nn::Linear fc1{nullptr}, fc2{nullptr};
//     };
//
// In a method of such a class, each member that holds a built-in layer is
// the layer the constructor gives it: a member initialiser, the in-class
// initialiser, or one assignment in the constructor's body
// (`fc1 = register_module("fc1", torch::nn::Linear(in, 500))`). The
// constructor's integer parameters are symbols of the method (`in`,
// `classes`), so its tables are in terms of how the module was built. A
// Sequential member is also built by the constructor's push_back calls
// (SequentialPushes.cpp); when the caller constructed the object, its
// flags are known too and decide the branches they sit in.
//
// Design:
// - Only what the translation unit shows is used: one constructor, defined
//   here; every mention of the member in the class's methods defined here
//   is harmless (forward, parameters(), register_module, to(device)).
//   Anything else leaves the member unknown, with the reason.
// - Code outside the class could still replace a public member's layer or
//   change its dtype; that is stated as an assumption of the method, as a
//   parameter's contiguity is.
// - The parameters are the module's storages, not the method's: external
//   values, like a tensor parameter's. Their device is the module's, which
//   the method cannot know.
#include "frontend/FunctionEvaluator.h"
#include "frontend/ModuleTracker.h"
#include "frontend/SymbolReader.h"
#include "frontend/ModuleUses.h"
#include "frontend/SequentialPushes.h"

#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace tma {

/// A layer's construction with a register_module("fc", ...) around it
/// looked through (register_module returns a shared_ptr<Impl>, made a
/// holder again).
const Expr *throughRegistration(const Expr *E) {
  const Expr *RHS = throughCopies(E);
  auto Registration = [](const Expr *X) -> const Expr * {
    const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(X);
    if (MC && MC->getMethodDecl() && MC->getMethodDecl()->getIdentifier() &&
        MC->getMethodDecl()->getName() == "register_module" &&
        MC->getNumArgs() == 2)
      return MC->getArg(1);
    return nullptr;
  };
  // Only a register_module call is looked through: a holder constructed
  // from an options chain (`LSTMOptions(...).batch_first(true)`) is the
  // layer's own construction.
  if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(RHS);
      CE && CE->getNumArgs() == 1)
    if (const Expr *Layer = Registration(strip(CE->getArg(0))))
      return Layer;
  if (const Expr *Layer = Registration(RHS))
    return Layer;
  return RHS;
}

/// `fc = ...` in the constructor's body: the assigned expression, with a
/// register_module("fc", ...) around it looked through.
const Expr *assignedLayer(const Expr *E, const FieldDecl *Field) {
  const auto *OCE = dyn_cast_or_null<CXXOperatorCallExpr>(strip(E));
  if (!OCE || OCE->getOperator() != OO_Equal || OCE->getNumArgs() != 2 ||
      namedDecl(OCE->getArg(0)) != Field)
    return nullptr;
  return throughRegistration(OCE->getArg(1));
}

namespace {

/// Whether an in-class initializer builds nothing: `{nullptr}`.
bool nullOnly(const Expr *Init) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Null = false;
    bool VisitCXXNullPtrLiteralExpr(CXXNullPtrLiteralExpr *) {
      Null = true;
      return true;
    }
  } Find;
  Find.TraverseStmt(const_cast<Expr *>(Init));
  return Find.Null;
}

/// Whether C is defined here and does nothing: no statement, and no
/// member or base initialised other than by default.
bool buildsNothing(const CXXConstructorDecl *C) {
  const FunctionDecl *Def = nullptr;
  if (C->isImplicit() || !C->hasBody(Def) || !Def)
    return false;
  const auto *Ctor = cast<CXXConstructorDecl>(Def);
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Ctor->getBody());
  if (!Body || !Body->body_empty())
    return false;
  for (const CXXCtorInitializer *Init : Ctor->inits()) {
    if (Init->isWritten())
      return false;
    // A base of the user's own (not torch::nn::Module or Cloneable) may
    // build layers in its default constructor.
    if (Init->isBaseInitializer())
      if (const CXXRecordDecl *Base = Init->getBaseClass()->getAsCXXRecordDecl();
          !Base || !isLibTorchDecl(Base))
        return false;
  }
  // Members initialised in the class (`torch::nn::Linear fc{10, 2};`) are
  // built by every constructor; only `{nullptr}` builds nothing.
  for (const FieldDecl *F : Ctor->getParent()->fields())
    if (F->hasInClassInitializer()) {
      if (!nullOnly(F->getInClassInitializer()) && !F->getType()->isFundamentalType())
        return false;
    }
  return true;
}

/// The class's one constructor that is not a copy or a move, or null
/// (Why says why).
const CXXConstructorDecl *theConstructor(const CXXRecordDecl *RD,
                                         std::string &Why) {
  const CXXConstructorDecl *Found = nullptr;
  unsigned Count = 0, Building = 0;
  const CXXConstructorDecl *Builds = nullptr;
  for (const CXXConstructorDecl *C : RD->ctors()) {
    if (C->isCopyOrMoveConstructor() || C->isDeleted())
      continue;
    ++Count;
    Found = C;
    if (!buildsNothing(C)) {
      ++Building;
      Builds = C;
    }
  }
  // `NetImpl() {}` beside `NetImpl(opts)` (TORCH_MODULE wants a default
  // constructor): an object made by the empty one has empty holders, and
  // its forward() throws on the first layer it runs, so the one that
  // builds the layers is the object forward() runs on.
  if (Count > 1 && Building == 1) {
    Count = 1;
    Found = Builds;
  }
  if (Count != 1) {
    Why = Count == 0 ? "the class declares no constructor"
                     : "the class has " + std::to_string(Count) +
                           " constructors";
    return nullptr;
  }
  const FunctionDecl *Def = nullptr;
  if (!Found->isImplicit() && !Found->hasBody(Def)) {
    Why = "its constructor is defined in another file";
    return nullptr;
  }
  return Found->isImplicit() ? Found
                             : cast<CXXConstructorDecl>(Def);
}

/// Assignments to Field anywhere in S.
struct FieldAssignments : RecursiveASTVisitor<FieldAssignments> {
  const FieldDecl *Field;
  unsigned Count = 0;
  explicit FieldAssignments(const FieldDecl *F) : Field(F) {}
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
    Count += assignedLayer(E, Field) != nullptr;
    return true;
  }
};

/// How the constructor builds member F, given its initializer's
/// construction (Init, or null): an assignment that is a statement of the
/// constructor's body replaces it. Assigned counts the assignments in the
/// class's methods (Bodies), TopLevel those that are such statements, and
/// OnlyRun says whether every other mention is harmless (forward, ...).
struct MemberConstruction {
  const Expr *Init = nullptr;
  unsigned Assigned = 0, TopLevel = 0;
  bool OnlyRun = false;
};

MemberConstruction memberConstruction(const FieldDecl *F, const Expr *Init,
                                      const Stmt *CtorBody,
                                      const std::vector<const Stmt *> &Bodies,
                                      unsigned Pushes = 0) {
  MemberConstruction M;
  M.Init = Init;
  for (const Stmt *Body : Bodies) {
    FieldAssignments A(F);
    A.TraverseStmt(const_cast<Stmt *>(Body));
    M.Assigned += A.Count;
  }
  if (const auto *CS = dyn_cast_or_null<CompoundStmt>(CtorBody))
    for (const Stmt *S : CS->body())
      if (const auto *E = dyn_cast<Expr>(S))
        if (const Expr *RHS = assignedLayer(E, F)) {
          M.Init = RHS;
          ++M.TopLevel;
        }
  ModuleUses Uses(F);
  for (const Stmt *Body : Bodies)
    Uses.body(Body);
  // The assignment itself mentions the member once, and so does each
  // push_back onto a Sequential (Pushes: judged by the caller).
  M.OnlyRun = Uses.Mentions == Uses.Harmless + M.Assigned + Pushes;
  return M;
}

/// Whether E registers a module, parameter or buffer (register_module,
/// register_parameter, register_buffer); the field it registers, if it
/// names one, in Field.
bool registers(const Expr *E, const ValueDecl *&Field) {
  Field = nullptr;
  const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(throughCopies(E));
  if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(throughCopies(E));
      CE && CE->getNumArgs() == 1) // a holder made from register_module's
    MC = dyn_cast_or_null<CXXMemberCallExpr>(strip(CE->getArg(0)));
  const CXXMethodDecl *MD = MC ? MC->getMethodDecl() : nullptr;
  if (!MD || !MD->getIdentifier() || MC->getNumArgs() < 2 ||
      !MD->getName().startswith("register_"))
    return false;
  Field = namedDecl(MC->getArg(1));
  return true;
}

/// What the constructor's body registers on every path (its top-level
/// statements: `register_module("fc", fc);`, `fc = register_module(...)`,
/// and comma-separated lists of them), and whether it registers anything
/// else anywhere (a parameter, a buffer, a module not held by a layer
/// member).
struct Registrations {
  std::set<const ValueDecl *> Fields;
  unsigned Other = 0;
  void statement(const Expr *E, const std::vector<const FieldDecl *> &Layers) {
    E = strip(E);
    if (const auto *BO = dyn_cast_or_null<BinaryOperator>(E);
        BO && BO->getOpcode() == BO_Comma) {
      statement(BO->getLHS(), Layers);
      statement(BO->getRHS(), Layers);
      return;
    }
    for (const FieldDecl *F : Layers)
      if (const auto *OCE = dyn_cast_or_null<CXXOperatorCallExpr>(E);
          OCE && assignedLayer(OCE, F) && OCE->getNumArgs() == 2) {
        const ValueDecl *Named = nullptr;
        if (registers(OCE->getArg(1), Named))
          Fields.insert(F);
        return;
      }
    const ValueDecl *Named = nullptr;
    if (registers(E, Named) && Named)
      Fields.insert(Named);
  }
};

/// Every register_* call in a body.
struct RegisterCalls : RecursiveASTVisitor<RegisterCalls> {
  unsigned Count = 0;
  std::set<const ValueDecl *> Named;
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *MC) {
    const CXXMethodDecl *MD = MC->getMethodDecl();
    if (MD && MD->getIdentifier() && MD->getName().startswith("register_")) {
      ++Count;
      if (MC->getNumArgs() >= 2)
        if (const ValueDecl *D = namedDecl(MC->getArg(1)))
          Named.insert(D);
    }
    return true;
  }
};

} // namespace

std::optional<FunctionEvaluator::UserObject>
ModuleTracker::userObject(QualType T, const Expr *Init) {
  T = T.getNonReferenceType();
  UserObject Obj;
  llvm::SmallVector<const Expr *, 4> Args;
  const CXXConstructorDecl *Written = nullptr; // the construction names it
  const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
  if (const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(RD);
      Spec && Spec->getQualifiedNameAsString() == "std::shared_ptr") {
    // std::make_shared<NetImpl>(args...)
    Obj.Class = Spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
    const auto *Call = dyn_cast_or_null<CallExpr>(throughCopies(Init));
    if (!Call)
      return std::nullopt;
    Args.append(Call->arg_begin(), Call->arg_end());
  } else if (RD && derivesFromModule(RD)) {
    // NetImpl net(args...): the constructor is the one named.
    const CXXConstructExpr *CE = holderConstruction(Init);
    if (!CE)
      return std::nullopt;
    Obj.Class = RD;
    Written = CE->getConstructor();
    Args.append(CE->arg_begin(), CE->arg_end());
  } else if (RD) {
    // Net net(args...), TORCH_MODULE's holder: ModuleHolder<NetImpl>
    // forwards its arguments to NetImpl's constructor.
    const CXXRecordDecl *Holder = RD->hasDefinition() ? RD->getDefinition() : nullptr;
    for (int Depth = 0; Holder && !Obj.Class && Depth < 4; ++Depth) {
      if (const auto *HS = dyn_cast<ClassTemplateSpecializationDecl>(Holder);
          HS && HS->getQualifiedNameAsString() == "torch::nn::ModuleHolder")
        Obj.Class = HS->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
      else if (Holder->getNumBases() == 1)
        Holder = Holder->bases_begin()->getType()->getAsCXXRecordDecl();
      else
        Holder = nullptr;
    }
    const CXXConstructExpr *CE = holderConstruction(Init);
    if (!CE)
      return std::nullopt;
    for (const Expr *A : CE->arguments())
      if (!isDefaultArg(A))
        Args.push_back(A);
  }
  if (!Obj.Class || !Obj.Class->hasDefinition() ||
      !derivesFromModule(Obj.Class))
    return std::nullopt;
  Obj.Class = Obj.Class->getDefinition();
  // Without the constructor the call names, the one whose parameters take
  // this many arguments (ModuleHolder's forwarding constructor hides it).
  const CXXConstructorDecl *Ctor = Written;
  if (!Ctor) {
    unsigned Fits = 0;
    for (const CXXConstructorDecl *C : Obj.Class->ctors())
      if (!C->isCopyOrMoveConstructor() && !C->isDeleted() &&
          C->getMinRequiredArguments() <= Args.size() &&
          Args.size() <= C->getNumParams()) {
        Ctor = C;
        ++Fits;
      }
    if (Fits != 1) {
      Obj.Why = "which of its constructors takes these arguments is not "
                "decided here";
      return Obj;
    }
  }
  const FunctionDecl *Def = nullptr;
  if (!Ctor->isImplicit() && !Ctor->hasBody(Def)) {
    Obj.Why = "its constructor is defined in another file";
    return Obj;
  }
  Obj.Ctor = Ctor->isImplicit() ? Ctor : cast<CXXConstructorDecl>(Def);
  for (unsigned K = 0; K < Obj.Ctor->getNumParams(); ++K) {
    const ParmVarDecl *P = Obj.Ctor->getParamDecl(K);
    QualType PT = P->getType().getNonReferenceType();
    const Expr *A = K < Args.size() && !isDefaultArg(Args[K])
                        ? Args[K]
                        : (P->hasDefaultArg() && !P->hasUnparsedDefaultArg() &&
                                   !P->hasUninstantiatedDefaultArg()
                               ? P->getDefaultArg()
                               : nullptr);
    std::optional<SymSize> V;
    if (A && PT->isIntegerType() && !PT->isBooleanType())
      if ((V = FE.symbols().sizeValue(A)))
        V = FE.symbols().convertInteger(*V, PT);
    // A flag (`ConvBlock(64, 128, 3, 1, 1, /*BN=*/true, ...)`): 1 or 0,
    // when the argument is a known constant; it decides the constructor's
    // branches (`if (BN) sq->push_back(...)`) and options (`.bias(bias)`).
    if (A && PT->isBooleanType())
      if (std::optional<int64_t> C = FE.args().integer(A))
        V = SymSize(*C != 0 ? 1 : 0);
    Obj.Integers.push_back(V);
  }
  return Obj;
}

void ModuleTracker::declareMemberModules() {
  const auto *MD = dyn_cast<CXXMethodDecl>(&FE.FD);
  if (!MD || MD->isStatic() || isa<CXXConstructorDecl>(MD) ||
      isa<CXXDestructorDecl>(MD) || !derivesFromModule(MD->getParent()))
    return;
  const CXXRecordDecl *RD = MD->getParent();
  std::vector<const FieldDecl *> Layers, UserModules;
  for (const FieldDecl *F : RD->fields()) {
    if (F->getType()->isReferenceType())
      continue;
    if (moduleLayer(F->getType()))
      Layers.push_back(F);
    else if (F->getType()->getAsCXXRecordDecl() && !isTensorType(F->getType()))
      UserModules.push_back(F); // a user module's holder, perhaps
  }
  if (Layers.empty() && UserModules.empty())
    return;
  // The object itself: its parameters are its layer members'.
  if (!Layers.empty()) {
    FE.ObjectModule = ModuleSummary();
    FE.ObjectModule->Name = "this";
    FE.ObjectModule->Layer = RD->getName().str();
    FE.ObjectModule->Where = FE.span(RD->getSourceRange());
  }
  auto Unknown = [&](const FieldDecl *F, const std::string &Why) {
    ModuleValue M;
    M.Layer = *moduleLayer(F->getType());
    M.Name = F->getName().str();
    M.Where = FE.span(F->getSourceRange());
    M.Member = true;
    M.Why = "member '" + M.Name + "' (" + M.Layer + "): " + Why;
    FE.Modules[FE.key(F)] = M;
    FE.ModuleOrder.push_back(FE.key(F));
  };
  // A method the caller runs on its own object: the caller's members, with
  // their parameters as this evaluator's external values.
  if (FE.Caller && FE.SameObject) {
    for (const std::string &K : FE.Caller->ModuleOrder) {
      ModuleValue M = FE.Caller->Modules.at(K);
      if (!M.Member)
        continue;
      M.Forwards.clear();
      for (auto &[PName, V] : M.Params) {
        const TensorValue &Value = FE.Caller->I.value(V);
        V = FE.I.external(Value, Value.logicalBytes());
      }
      FE.Modules[K] = M;
      FE.ModuleOrder.push_back(K);
    }
    // Its user-module members, as the caller's constructor built them.
    for (const auto &[K, Obj] : FE.Caller->UserObjects)
      FE.UserObjects.emplace(K, Obj);
    return;
  }
  // A followed call's symbols would mean nothing in the caller's terms; the
  // object's construction is not bound yet.
  std::string Why;
  const CXXConstructorDecl *Ctor = nullptr;
  if (!FE.Caller)
    Ctor = theConstructor(RD, Why);
  else if (FE.Construction && FE.Construction->Ctor &&
           FE.Construction->Class->getCanonicalDecl() == RD->getCanonicalDecl())
    Ctor = FE.Construction->Ctor;
  else if (FE.Construction && !FE.Construction->Ctor)
    Why = FE.Construction->Why;
  else
    Why = "the object's construction is not followed into this call";
  if (!Ctor) {
    for (const FieldDecl *F : Layers)
      Unknown(F, Why);
    if (FE.ObjectModule)
      FE.ObjectModule->Why = Why;
    return;
  }

  // The constructor's integer parameters: symbols named after them, unless
  // this method has a parameter of the same name (the symbol would be
  // ambiguous) or the constructor changes them before using them.
  std::set<const ValueDecl *> CtorMutated;
  if (Ctor->hasBody())
    collectMutations(Ctor->getBody(), CtorMutated);
  std::set<std::string> Taken;
  for (const ParmVarDecl *P : FE.FD.parameters())
    Taken.insert(P->getName().str());
  for (unsigned K = 0; K < Ctor->getNumParams(); ++K) {
    const ParmVarDecl *P = Ctor->getParamDecl(K);
    QualType PT = P->getType().getNonReferenceType();
    std::string Name = P->getName().str();
    if (Name.empty() || !PT->isIntegerType() || PT->isEnumeralType() ||
        CtorMutated.count(cast<ValueDecl>(P->getCanonicalDecl())))
      continue;
    // A flag is known only from the construction the caller made; it is
    // no size, so never a symbol.
    if (PT->isBooleanType() && !FE.Construction)
      continue;
    // Constructed by the caller: the arguments' values, in its terms.
    if (FE.Construction) {
      if (K < FE.Construction->Integers.size() && FE.Construction->Integers[K])
        FE.IntVars[FE.key(P)] = *FE.Construction->Integers[K];
      continue;
    }
    if (!Taken.count(Name))
      FE.IntVars[FE.key(P)] = FE.Env->integer(Name);
  }

  // Every method of the class this file defines, for the members' uses
  // (decls() has each method the class declares; hasBody finds its
  // definition, in the class or out of it, as NetImpl::forward in a .cpp).
  std::vector<const Stmt *> Bodies;
  for (const Decl *D : RD->decls()) {
    const auto *M = dyn_cast<CXXMethodDecl>(D);
    if (const auto *T = dyn_cast<FunctionTemplateDecl>(D))
      M = dyn_cast<CXXMethodDecl>(T->getTemplatedDecl());
    const FunctionDecl *Def = nullptr;
    if (M && M->hasBody(Def) && Def->getBody())
      Bodies.push_back(Def->getBody());
  }
  const FunctionDecl *CtorDef = nullptr;
  const Stmt *CtorBody = Ctor->hasBody(CtorDef) ? CtorDef->getBody() : nullptr;

  // Members that are user modules (`AttentionBlock attention;` built in
  // the constructor from its arguments): a method of theirs this class
  // calls (`attention->forward(x)`) is followed with the layers that
  // construction builds, when the constructor builds the member once, on
  // every path, and the class only runs it.
  for (const FieldDecl *F : UserModules) {
    const Expr *Written = nullptr;
    for (const CXXCtorInitializer *CI : Ctor->inits())
      if (CI->getMember() == F && CI->isWritten())
        Written = throughRegistration(CI->getInit());
    MemberConstruction M = memberConstruction(F, Written, CtorBody, Bodies);
    // `Block block{nullptr};` in the class builds nothing; anything else
    // there would be a second construction.
    if (!M.Init || (F->hasInClassInitializer() && M.Assigned == 0) ||
        (F->hasInClassInitializer() && !nullOnly(F->getInClassInitializer())) ||
        M.Assigned > 1 || M.Assigned != M.TopLevel || !M.OnlyRun)
      continue;
    if (auto Obj = userObject(F->getType(), M.Init))
      FE.UserObjects[FE.key(F)] = *Obj;
  }

  if (Layers.empty())
    return;
  for (const FieldDecl *F : Layers) {
    std::string Name = F->getName().str();
    // The initialiser: the constructor's, or the in-class one.
    const Expr *Init = nullptr;
    for (const CXXCtorInitializer *CI : Ctor->inits())
      if (CI->getMember() == F)
        Init = CI->getInit();
    if (const auto *DI = dyn_cast_or_null<CXXDefaultInitExpr>(Init))
      Init = DI->getExpr();
    if (!Init && F->hasInClassInitializer())
      Init = F->getInClassInitializer();
    // fc(register_module("fc", torch::nn::Linear(784, 10)))
    if (Init)
      Init = throughRegistration(Init);
    // An assignment in the constructor's body replaces it; it must be a
    // statement of its own that runs on every path.
    // A Sequential's layers pushed by the constructor (`sq->push_back(
    // torch::nn::Conv2d(...))`, perhaps under `if (BN)`) are judged here,
    // not as uses.
    unsigned Pushes = 0;
    if (isLayerKind(*moduleLayer(F->getType()), LayerKind::Sequential))
      for (const Stmt *Body : Bodies) {
        CallsOn Calls(F, {"push_back"});
        Calls.TraverseStmt(const_cast<Stmt *>(Body));
        Pushes += Calls.Calls.size();
      }
    MemberConstruction Built =
        memberConstruction(F, Init, CtorBody, Bodies, Pushes);
    Init = Built.Init;
    if (Built.Assigned > 1 || Built.Assigned != Built.TopLevel) {
      Unknown(F, Built.Assigned > 1 ? "assigned more than once"
                                    : "assigned outside the constructor's body, "
                                      "or in a branch or a loop");
      continue;
    }
    std::vector<const CXXMemberCallExpr *> Run;
    if (Pushes)
      if (std::string Why = pushedLayers(FE, F, Ctor, CtorBody, Pushes, Run);
          !Why.empty()) {
        Unknown(F, Why);
        continue;
      }
    if (!Built.OnlyRun) {
      Unknown(F, "used in the class other than by forward(), so its "
                 "parameters may have changed");
      continue;
    }
    // `this->model = seq;` after `seq->push_back(...)` on a local.
    if (const auto *Local = dyn_cast_or_null<VarDecl>(namedDecl(Init));
        Local && isLayerKind(*moduleLayer(F->getType()), LayerKind::Sequential)) {
      Unknown(F, "assigned from '" + Local->getNameAsString() +
                     "', whose layers are not followed");
      continue;
    }
    ModuleValue M = layerFromConstruction(F->getType(), Init, Name);
    for (const CXXMemberCallExpr *Push : Run) {
      if (!M.Why.empty())
        break;
      std::string Line = std::to_string(FE.span(Push->getSourceRange()).Line);
      if (Push->getNumArgs() != 1) {
        M.Why = "module '" + Name + "' (" + M.Layer + "): a named push_back "
                "(line " + Line + ") is not followed yet";
        break;
      }
      M.Why = appendSequentialLayer(
          M, throughCopies(Push->getArg(0)),
          "the module pushed at line " + Line +
              " is not a torch::nn layer the analysis reads (a user module, "
              "an AnyModule, a shared_ptr)");
    }
    if (!M.Why.empty()) {
      M.Why = "member " + M.Why.substr(std::string("module ").size());
      FE.Modules[FE.key(F)] = M;
      continue;
    }
    for (const auto &[PName, Sizes] : M.ParamShapes) {
      TensorValue V = makeContiguous(Sizes, M.paramType(PName), Device{});
      V.Dev.reset();
      V.markUnknown("member '" + Name + "': its device is the module's");
      M.Params[PName] = FE.I.external(V, V.logicalBytes());
    }
    // Code outside the class could move the module to another dtype
    // (model->to(torch::kDouble)); the answers hold for the default one.
    // An object the caller constructed and only ran has it.
    if (M.Params.count("weight") && !FE.Construction)
      FE.Env->assume(Name + "->weight.scalar_type() == torch::kFloat");
    M.Where = FE.span(F->getSourceRange());
    M.Member = true;
    FE.Modules[FE.key(F)] = M;
    FE.ModuleOrder.push_back(FE.key(F));
  }
  summarizeObject(RD, Layers, Ctor, CtorBody);
}

// parameters() of the object: the parameters of the layer members its
// constructor registers on every path. Anything that may register more (a
// register_parameter, a tensor member, a submodule that is no modelled
// layer) or less (a member registered in a branch) leaves the total
// unknown, with the reason.
void ModuleTracker::summarizeObject(
    const CXXRecordDecl *RD, const std::vector<const FieldDecl *> &Layers,
    const CXXConstructorDecl *Ctor, const Stmt *CtorBody) {
  ModuleSummary &O = *FE.ObjectModule;
  Registrations Registered;
  if (const auto *CS = dyn_cast_or_null<CompoundStmt>(CtorBody))
    for (const Stmt *S : CS->body())
      if (const auto *E = dyn_cast<Expr>(S))
        Registered.statement(E, Layers);
  RegisterCalls All;
  if (CtorBody)
    All.TraverseStmt(const_cast<Stmt *>(CtorBody));
  // `fc(register_module("fc", torch::nn::Linear(4, 8)))` in the initializer
  // list registers the member before the body runs, on every path.
  if (Ctor)
    for (const CXXCtorInitializer *CI : Ctor->inits()) {
      const Expr *Init = CI->getInit();
      if (const auto *DI = dyn_cast_or_null<CXXDefaultInitExpr>(Init))
        Init = DI->getExpr();
      if (!Init)
        continue;
      All.TraverseStmt(const_cast<Expr *>(Init));
      const ValueDecl *Named = nullptr;
      if (const FieldDecl *F = CI->getMember();
          F && std::find(Layers.begin(), Layers.end(), F) != Layers.end() &&
          registers(Init, Named))
        Registered.Fields.insert(F);
    }
  std::string Why;
  for (const CXXBaseSpecifier &B : RD->bases()) {
    const CXXRecordDecl *Base = B.getType()->getAsCXXRecordDecl();
    std::string BaseName = Base ? Base->getQualifiedNameAsString() : "";
    if (BaseName != "torch::nn::Module" && BaseName != "torch::nn::Cloneable")
      Why = "its base " + B.getType().getAsString() +
            " may register parameters";
  }
  for (const FieldDecl *F : RD->fields()) {
    QualType T = F->getType();
    if (std::find(Layers.begin(), Layers.end(), F) != Layers.end())
      continue;
    std::string TypeName = T->isRecordType() ? recordName(T) : "";
    if (isTensorType(T) || isTensorVectorType(T) || All.Named.count(F) ||
        TypeName.rfind("torch::", 0) == 0 ||
        TypeName.rfind("std::shared_ptr", 0) == 0)
      Why = "its member '" + F->getName().str() +
            "' may hold parameters the analysis does not follow";
  }
  unsigned Counted = 0;
  for (const FieldDecl *F : Layers)
    Counted += Registered.Fields.count(F);
  if (Why.empty() && All.Count > Counted)
    Why = "its constructor registers more than its layer members "
          "(register_parameter, register_buffer, or in a branch)";
  O.ParameterElements = O.ParameterBytes = SymSize(0);
  for (const FieldDecl *F : Layers) {
    const ModuleValue &M = FE.Modules[FE.key(F)];
    // Not registered: its parameters exist, but parameters() leaves them
    // out, and so does the object's row.
    if (!Registered.Fields.count(F))
      continue;
    if (!M.Why.empty()) {
      if (Why.empty())
        Why = M.Why;
      continue;
    }
    if (!M.ParamsWhy.empty() && !M.ParamElements) {
      if (Why.empty())
        Why = "member '" + M.Name + "' (" + M.Layer + "): " + M.ParamsWhy;
      continue;
    }
    M.addParameters(M.Name + ".", O);
  }
  if (!Why.empty() || !O.ParameterElements || !O.ParameterBytes) {
    O.ParameterElements.reset();
    O.ParameterBytes.reset();
    O.Why = Why.empty() ? "a parameter's size is not known" : Why;
  }
}

} // namespace tma
