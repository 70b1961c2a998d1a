// Code the analysis does not follow, and what it may still do to the
// caller's tensors: calls of user code that may allocate, lambdas assigning
// what they capture by reference, functions taking a tensor by non-const
// reference or pointer; and the tensor work inside expressions that are not
// tensors themselves (conditions, `int64_t n = x.sum().item<int64_t>()`).
#include "frontend/FunctionEvaluator.h"
#include "frontend/CallFollower.h"
#include "frontend/Invalidation.h"
#include "frontend/ArgumentReader.h"

#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace tma {

/// Tensor methods that may change their object's geometry: those that do
/// by name, and any other in-place method the op table does not model.
static bool mayReshapeObject(llvm::StringRef Method) {
  return changesGeometryInPlace(Method) ||
         (Method.endswith("_") && !lookupOp(Method.str()));
}


// ---- CUDA kernel launches -------------------------------------------------------------

/// Tensor methods that hand a kernel the tensor's memory: the raw pointer
/// (takesRawPointer) and the accessors CUDA extensions pass instead.
static bool handsMemoryToKernel(const CXXMemberCallExpr *MC) {
  if (takesRawPointer(MC))
    return true;
  const CXXMethodDecl *MD = MC->getMethodDecl();
  if (!MD || !MD->getIdentifier() ||
      !isTensorType(MC->getImplicitObjectArgument()->getType()))
    return false;
  return MD->getName().contains("accessor");
}

/// `k<<<grid, block, shmem, stream>>>(x.data_ptr<float>(), n)`: the kernel
/// runs device code the analysis does not read. Every tensor whose memory
/// an argument hands it (its data_ptr or an accessor) may be read and
/// written, by how many bytes is unknown; its geometry and storage are
/// unchanged, as after any call given a raw pointer. The configuration and
/// the arguments are evaluated as any call's (the data_ptr uses first).
static void kernelLaunch(FunctionEvaluator &FE, const CUDAKernelCallExpr *Launch) {
  if (const CallExpr *Config = Launch->getConfig())
    FE.sideEffects(Config);
  struct Finder : RecursiveASTVisitor<Finder> {
    std::vector<const Expr *> Tensors;
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
    bool VisitCXXMemberCallExpr(CXXMemberCallExpr *MC) {
      if (handsMemoryToKernel(MC))
        Tensors.push_back(MC->getImplicitObjectArgument());
      return true;
    }
  } Find;
  for (const Expr *A : Launch->arguments()) {
    FE.sideEffects(A);
    Find.TraverseStmt(const_cast<Expr *>(A));
  }
  std::vector<ValueId> Handed;
  for (const Expr *T : Find.Tensors) {
    ValueId V = FE.tensor(T); // evaluated above: the same value
    if (std::find(Handed.begin(), Handed.end(), V) == Handed.end())
      Handed.push_back(V);
  }
  const FunctionDecl *Kernel = Launch->getDirectCallee();
  std::string Name = (Kernel ? calleeName(Kernel) : "kernel") + "<<<>>>";
  OpOutcome Use;
  Use.Kind = OpKind::Use;
  Use.ReadBytes.reset();
  Use.WrittenBytes.reset();
  Use.Note = "CUDA kernel launch: device code is not analysed";
  FE.apply(Name, Launch, Handed, Use);
  FE.I.recordUnknown(Name, "a CUDA kernel launch: the bytes the kernel reads "
                           "and writes are not known (device code is not "
                           "analysed)",
                     FE.span(Launch->getSourceRange()));
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

void Invalidation::allocationsAreUncertain(size_t OpsBefore,
                                                const std::string &Why,
                                                bool AtOpLine) {
  for (size_t K = OpsBefore; K < FE.I.trace().Ops.size(); ++K) {
    const OpEvent &Op = FE.I.trace().Ops[K];
    if (Op.Kind == OpKind::Alloc || Op.Kind == OpKind::Copy ||
        Op.Kind == OpKind::Unknown) {
      FE.I.totalsUnknown(AtOpLine ? Why + " (line " + std::to_string(Op.Where.Line) + ")"
                               : Why);
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
        invalidation().allocationsAreUncertain(OpsBefore,
                                "allocates in a conditionally evaluated "
                                "operand (line " +
                                    std::to_string(span(SX->getSourceRange()).Line) +
                                    ")");
      continue;
    }
    if (const auto *Launch = dyn_cast<CUDAKernelCallExpr>(X)) {
      kernelLaunch(*this, Launch);
      continue;
    }
    if (const auto *CE = dyn_cast<CallExpr>(X)) {
      // `x.data_ptr<float>()`: x's memory read as a flat array by code the
      // trace does not see (a kernel launcher), recorded as a use of x.
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(CE); MC && takesRawPointer(MC)) {
        OpOutcome Use;
        Use.Kind = OpKind::Use;
        Use.ReadBytes = Use.WrittenBytes = 0;
        apply(calleeName(MC->getMethodDecl()), CE,
              {tensor(MC->getImplicitObjectArgument())}, Use);
        continue;
      }
      if (calls().followedEffects(CE))
        continue; // its arguments were evaluated as the call's
      opaqueCallEffects(CE);
    }
    // Children, pushed in reverse so they are evaluated left to right.
    std::vector<Item> Children;
    if (const auto *CO = dyn_cast<AbstractConditionalOperator>(X)) {
      auto Cond = args().integer(CO->getCond());
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
/// taking a tensor by non-const reference or pointer, or by value (a
/// by-value torch::Tensor is a second handle to the same TensorImpl, so
/// `t.unsqueeze_(0)` in the callee reshapes the caller's tensor).
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
          std::vector<const VarDecl *> Reshaped;
          bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
            if (E->getOperator() == OO_Equal && E->getNumArgs() == 2)
              if (const auto *D = dyn_cast<DeclRefExpr>(strip(E->getArg(0))))
                if (const auto *V = dyn_cast<VarDecl>(D->getDecl()))
                  Assigned.push_back(V);
            return true;
          }
          // A capture, by reference or by copy (a copy is a second handle
          // to the same TensorImpl), changed in place.
          bool VisitCXXMemberCallExpr(CXXMemberCallExpr *MC) {
            const CXXMethodDecl *MD = MC->getMethodDecl();
            if (MD && MD->getIdentifier() && isTensorType(MC->getObjectType()) &&
                mayReshapeObject(MD->getName()))
              if (const auto *D = dyn_cast<DeclRefExpr>(
                      handleSource(MC->getImplicitObjectArgument())))
                if (const auto *V = dyn_cast<VarDecl>(D->getDecl())) {
                  // `[t = a]`: t is a handle to a.
                  if (V->isInitCapture() && V->getInit())
                    if (const auto *Source =
                            dyn_cast<DeclRefExpr>(handleSource(V->getInit())))
                      if (const auto *SV = dyn_cast<VarDecl>(Source->getDecl()))
                        V = SV;
                  Reshaped.push_back(V);
                }
            return true;
          }
        } Find;
        Find.TraverseStmt(Op->getBody());
        std::string Called = "the lambda called at line " + std::to_string(Line);
        for (const VarDecl *V : Find.Assigned)
          forgetSlot(resolveKey(V), V->getName().str(), "is assigned by " + Called,
                     span(CE->getSourceRange()));
        for (const VarDecl *V : Find.Reshaped)
          forgetTensorAt(resolveKey(V), V->getName().str(),
                         "is captured by " + Called + ", which changes it in place",
                         span(CE->getSourceRange()));
      }
      if (mayAllocateTensors(Op))
        I.totalsUnknown("the lambda called at line " + std::to_string(Line) +
                        " is not analysed: what it allocates is unknown");
      return;
    }
  }
  if (!Callee)
    return;
  if (isLibTorchDecl(Callee)) {
    libTorchWrites(CE, Callee);
    return;
  }
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
  // A standard container stores a copy of a handle it is given as an
  // lvalue (`v.push_back(x)`, `v.emplace_back(x)`, `m.insert({k, x})`):
  // the caller's tensor is left as it was. What it is given by std::move
  // is moved from: unknown below.
  std::string Method = calleeName(Callee);
  bool StoresCopies = isa<CXXMethodDecl>(Callee) && topNamespace(Callee) == "std" &&
                      (Method == "push_back" || Method == "emplace_back" ||
                       Method == "push_front" || Method == "emplace_front" ||
                       Method == "insert" || Method == "emplace" || Method == "push");
  for (unsigned K = 0; K + Skip < CE->getNumArgs() && K < Callee->getNumParams();
       ++K) {
    QualType PT = Callee->getParamDecl(K)->getType();
    const Expr *A = CE->getArg(K + Skip);
    if (StoresCopies && A->isLValue() && isTensorType(A->getType())) {
      // Its storage now lives as long as a container the analysis does
      // not follow: at least until the function returns, and past that
      // for all it knows.
      if (auto Sl = slotOf(A); Sl && Sl->Known)
        if (ValueId V = I.lookup(Sl->Key); V >= 0)
          I.holdUntilReturn("stored@" + std::to_string(reinterpret_cast<uintptr_t>(CE)), V);
      I.totalsUnknown("a tensor is stored in a container the analysis does not "
                      "follow (line " + std::to_string(span(CE->getSourceRange()).Line) + ")");
      continue;
    }
    // Even a `const Tensor &` may be reshaped in place (`unsqueeze_` is a
    // const method), and a by-value Tensor is a handle to the same
    // TensorImpl; a non-const reference or pointer may also be rebound.
    bool ByRef = PT->isReferenceType() && isTensorType(PT);
    bool ByPointer = PT->isPointerType() && isTensorType(PT->getPointeeType());
    bool ByValue = !PT->isReferenceType() && isTensorType(PT);
    const Expr *Target = A;
    if (ByPointer)
      if (const auto *UO = dyn_cast<UnaryOperator>(strip(A));
          UO && UO->getOpcode() == UO_AddrOf)
        Target = UO->getSubExpr();
    std::string Unseen = " to '" + Name + "', which the analysis does not "
                         "follow: it may be changed there";
    if (ByRef || ByPointer || ByValue)
      forgetObject(Target, std::string(ByRef       ? "is passed by reference"
                                       : ByPointer ? "is passed by pointer"
                                                   : "is passed by value (a "
                                                     "handle to the same tensor)") +
                               Unseen);
    else if (holdsTensors(PT))
      forgetContainedTensors(A, "is passed in a container" + Unseen);
  }
}

bool FunctionEvaluator::mayReshapeInPlace(const FunctionDecl *Callee,
                                          int Depth) {
  if (!Callee)
    return true;
  if (isLibTorchDecl(Callee)) {
    if (mayReshapeObject(calleeName(Callee)))
      return true;
    for (const ParmVarDecl *P : Callee->parameters())
      if (P->getType()->isLValueReferenceType() &&
          !P->getType().getNonReferenceType().isConstQualified() &&
          isTensorType(P->getType()))
        return true; // an out= argument
    return false;
  }
  if (topNamespace(Callee) == "std" || topNamespace(Callee) == "__gnu_cxx" ||
      SM.isInSystemHeader(SM.getExpansionLoc(Callee->getLocation())))
    return false;
  if (auto It = MayReshape.find(Callee); It != MayReshape.end())
    return It->second;
  const FunctionDecl *Def = nullptr;
  if (!Callee->hasBody(Def) || !Def || Depth > 8)
    return MayReshape[Callee] = true;
  MayReshape[Callee] = false; // a cycle: its other functions decide
  struct Finder : RecursiveASTVisitor<Finder> {
    std::vector<const FunctionDecl *> Calls;
    bool Reshapes = false;
    bool VisitCallExpr(CallExpr *C) {
      const FunctionDecl *F = C->getDirectCallee();
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(C);
          MC && F && F->getIdentifier() && isTensorType(MC->getObjectType()))
        Reshapes |= mayReshapeObject(F->getName());
      else if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(C);
               OC && OC->getOperator() == OO_Call && F &&
               topNamespace(F) == "std")
        Reshapes = true; // a std::function: what it calls is not seen
      else
        Calls.push_back(F);
      return !Reshapes;
    }
  } Find;
  Find.TraverseStmt(Def->getBody());
  bool May = Find.Reshapes;
  for (const FunctionDecl *C : Find.Calls)
    if (!May && C != Callee)
      May = mayReshapeInPlace(C, Depth + 1);
  return MayReshape[Callee] = May;
}

/// LibTorch writes a tensor argument only where its schema says so
/// (`Tensor(a!)`): the out= argument of `mm_out`, `add_out`, `cat_out`,
/// which the C++ API passes as a non-const `at::Tensor &`, and the self of
/// the function forms of in-place geometry ops (`at::as_strided_`,
/// `at::resize_as_`). Such a call the op table does not model resizes and
/// writes that argument: it and every handle to it are unknown after it.
void FunctionEvaluator::libTorchWrites(const CallExpr *CE,
                                       const FunctionDecl *Callee) {
  std::string Name = calleeName(Callee);
  unsigned Skip = isa<CXXOperatorCallExpr>(CE) && isa<CXXMethodDecl>(Callee) ? 1 : 0;
  for (unsigned K = 0; K + Skip < CE->getNumArgs() && K < Callee->getNumParams();
       ++K) {
    QualType PT = Callee->getParamDecl(K)->getType();
    const Expr *A = CE->getArg(K + Skip);
    if (!isTensorType(A->getType()))
      continue;
    bool OutArgument = PT->isLValueReferenceType() &&
                       !PT.getNonReferenceType().isConstQualified() &&
                       isTensorType(PT);
    bool ReshapedSelf = K == 0 && !isa<CXXMethodDecl>(Callee) &&
                        changesGeometryInPlace(Name);
    if (OutArgument || ReshapedSelf)
      forgetObject(A, std::string("is written by '") + Name + "' (" +
                          (OutArgument ? "its out= argument" : "in place") +
                          "), which is not modelled");
  }
}

} // namespace tma
