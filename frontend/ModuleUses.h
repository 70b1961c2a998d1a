// Which mentions of a module in a body leave its layer as constructed:
// shared by the layers a function builds (Modules.cpp) and the members a
// user module's constructor builds (ModuleMembers.cpp).
#pragma once

#include "frontend/FunctionEvaluator.h"

#include "clang/AST/RecursiveASTVisitor.h"

namespace tma {

using clang::CXXMemberCallExpr;
using clang::CXXOperatorCallExpr;
using clang::DeclRefExpr;
using clang::MemberExpr;
using llvm::dyn_cast_or_null;

/// Module methods that neither change the module nor run it on a
/// tensor the analysis does not see.
inline bool harmlessUse(llvm::StringRef Method) {
  return Method == "forward" || Method == "parameters" ||
         Method == "named_parameters" || Method == "pretty_print" ||
         Method == "eval" || Method == "train" ||
         Method == "is_training" || Method == "zero_grad";
}

/// Tensor methods that only describe the tensor (a module's parameter
/// read through it stays as it is).
inline bool readOnlyTensorQuery(llvm::StringRef Method) {
  return Method == "grad" || Method == "sizes" || Method == "size" ||
         Method == "dim" || Method == "numel" || Method == "scalar_type" ||
         Method == "dtype" || Method == "device" || Method == "options" ||
         Method == "defined" || Method == "requires_grad" ||
         Method == "is_contiguous" || Method == "print" || Method == "nbytes";
}

/// Module::to(Device, bool non_blocking): moves the parameters, keeps
/// their shapes and dtype.
inline bool movesToDevice(const clang::CXXMethodDecl *MD) {
  return MD->getName() == "to" && MD->getNumParams() == 2 &&
         recordName(MD->getParamDecl(0)->getType()) == "c10::Device";
}

/// A method of a user module (`model->decode(z)`, `vae.encode(x)`) that
/// leaves the module as constructed: defined in the translation unit, and
/// calling on `this` only harmless Module methods or such methods of its
/// own class (depth-bounded). What it does to the members is judged where
/// members are (every method body counts in ModuleMembers.cpp); a
/// `this->to(torch::kDouble)` or `this->eval()` inside it is a change the
/// caller's reading of the object would miss.
inline bool userMethodLeavesModule(const clang::CXXMethodDecl *MD, int Depth = 0) {
  const clang::FunctionDecl *Def = nullptr;
  if (!MD || Depth > 3 || isLibTorchDecl(MD) || !MD->hasBody(Def) || !Def->getBody())
    return false;
  struct ThisCalls : clang::RecursiveASTVisitor<ThisCalls> {
    int Depth;
    bool Harmless = true;
    bool VisitCXXMemberCallExpr(CXXMemberCallExpr *E) {
      const auto *This = llvm::dyn_cast_or_null<clang::CXXThisExpr>(
          E->getImplicitObjectArgument()
              ? E->getImplicitObjectArgument()->IgnoreParenImpCasts()
              : nullptr);
      const clang::CXXMethodDecl *Callee = E->getMethodDecl();
      if (!This || !Callee)
        return true;
      bool Fine = Callee->getDeclName().isIdentifier() &&
                  ((harmlessUse(Callee->getName()) && Callee->getName() != "eval" &&
                    Callee->getName() != "train") ||
                   (!isLibTorchDecl(Callee) && userMethodLeavesModule(Callee, Depth + 1)));
      Harmless = Harmless && Fine;
      return Harmless;
    }
  } Calls;
  Calls.Depth = Depth;
  Calls.TraverseStmt(const_cast<clang::Stmt *>(Def->getBody()));
  return Calls.Harmless;
}

/// A tensor method that leaves the tensor's geometry and dtype as they
/// are: a description (sizes(), grad()), or a method that makes a new
/// handle (t(), clone(), to(kDouble)). An in-place op (normal_(),
/// unsqueeze_()), set_data, swap and anything returning a reference may
/// change it.
inline bool readOnlyTensorMethod(const clang::CXXMethodDecl *MD) {
  if (!MD || !MD->getDeclName().isIdentifier() || !isLibTorchDecl(MD))
    return false;
  llvm::StringRef N = MD->getName();
  return readOnlyTensorQuery(N) ||
         (!N.endswith("_") && N != "set_data" && N != "swap" &&
          !MD->getReturnType()->isReferenceType());
}

/// Whether argument K of call E is passed to LibTorch by const reference
/// (at::matmul(const Tensor &, ...), Tensor::add(const Tensor &, ...)).
inline bool readOnlyArgument(const clang::CallExpr *E, unsigned K) {
  const clang::FunctionDecl *Callee = E->getDirectCallee();
  if (!Callee || !isLibTorchDecl(Callee))
    return false;
  // A member operator's object is its argument 0.
  unsigned Shift = llvm::isa<CXXOperatorCallExpr>(E) && llvm::isa<CXXMethodDecl>(Callee);
  if (K < Shift || K - Shift >= Callee->getNumParams())
    return false;
  clang::QualType PT = Callee->getParamDecl(K - Shift)->getType();
  return PT->isReferenceType() && PT->getPointeeType().isConstQualified();
}

/// Whether every mention of local V in Body only reads the tensor it
/// holds: the object of a readOnlyTensorMethod, or an argument LibTorch
/// takes by const reference (printing included). An assignment, an
/// in-place op, a call of the file's own functions (which may change it
/// through a by-value handle), a return: not.
inline bool handleOnlyRead(const clang::VarDecl *V, const clang::Stmt *Body) {
  struct Reads : clang::RecursiveASTVisitor<Reads> {
    const clang::VarDecl *V;
    unsigned Mentions = 0, Read = 0;
    bool VisitDeclRefExpr(DeclRefExpr *E) {
      Mentions += E->getDecl() == V;
      return true;
    }
    bool VisitCXXMemberCallExpr(CXXMemberCallExpr *E) {
      if (namedDecl(E->getImplicitObjectArgument()) == V &&
          readOnlyTensorMethod(E->getMethodDecl()))
        ++Read;
      return true;
    }
    bool VisitCallExpr(clang::CallExpr *E) {
      for (unsigned K = 0; K < E->getNumArgs(); ++K)
        if (namedDecl(E->getArg(K)) == V && readOnlyArgument(E, K))
          ++Read;
      return true;
    }
  } R;
  R.V = V;
  R.TraverseStmt(const_cast<clang::Stmt *>(Body));
  return R.Mentions == R.Read;
}

/// Whether every mention of D (a local module, or a member of the class
/// being analysed) in the statements traversed is a call of a harmless
/// method (fc->forward(x), fc(x), fc->parameters(), register_module("fc",
/// fc)); DeviceMoves counts to(device) calls, harmless for shapes.
struct ModuleUses : clang::RecursiveASTVisitor<ModuleUses> {
  const ValueDecl *D;
  unsigned Mentions = 0, Harmless = 0, DeviceMoves = 0;
  /// The to(device) calls, for the devices they name.
  std::vector<const clang::CXXMemberCallExpr *> DeviceMoveCalls;
  /// The body traversed by body(): where a local holding a parameter's
  /// handle (`auto w = fc->weight;`) is judged.
  const clang::Stmt *Body = nullptr;
  explicit ModuleUses(const ValueDecl *D) : D(D) {}
  /// Traverses a function's body.
  void body(const clang::Stmt *B) {
    if (!B)
      return;
    Body = B;
    TraverseStmt(const_cast<clang::Stmt *>(B));
    Body = nullptr;
  }
  /// E reads a tensor member through D (`fc->weight`, `net->fc1->bias`).
  bool readsTensorMember(const Expr *E) const {
    return E && isTensorType(E->getType().getNonReferenceType()) &&
           readsMemberOf(E);
  }
  bool names(const Expr *E) const {
    E = strip(E);
    if (const auto *OCE = dyn_cast_or_null<CXXOperatorCallExpr>(E);
        OCE && OCE->getOperator() == clang::OO_Arrow && OCE->getNumArgs() == 1)
      E = strip(OCE->getArg(0));
    return E && namedDecl(E) == D;
  }
  /// E reads through D's members (`net->fc1->bias`, `net->fc1`): member
  /// accesses and holder arrows down to a mention of D.
  bool readsMemberOf(const Expr *E) const {
    bool Member = false;
    for (E = strip(E); E;) {
      if (const auto *ME = llvm::dyn_cast<MemberExpr>(E);
          ME && ME->getMemberDecl() != D) {
        E = strip(ME->getBase());
        Member = true;
      } else if (const auto *OCE = dyn_cast_or_null<CXXOperatorCallExpr>(E);
                 OCE && OCE->getOperator() == clang::OO_Arrow &&
                 OCE->getNumArgs() == 1) {
        E = strip(OCE->getArg(0));
      } else {
        return Member && namedDecl(E) == D;
      }
    }
    return false;
  }
  /// E is D's options object (`fc->options`, `this->fc->options`).
  bool isOptionsOf(const Expr *E) const {
    const auto *ME = llvm::dyn_cast_or_null<MemberExpr>(strip(E));
    return ME && ME->getMemberDecl()->getDeclName().isIdentifier() &&
           ME->getMemberDecl()->getName() == "options" && names(ME->getBase());
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    Mentions += E->getDecl() == D;
    return true;
  }
  bool VisitMemberExpr(MemberExpr *E) {
    Mentions += E->getMemberDecl() == D;
    return true;
  }
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *E) {
    const CXXMethodDecl *MD = E->getMethodDecl();
    if (!MD || !MD->getDeclName().isIdentifier())
      return true;
    if (names(E->getImplicitObjectArgument())) {
      if (harmlessUse(MD->getName()))
        ++Harmless;
      else if (movesToDevice(MD))
        ++Harmless, ++DeviceMoves, DeviceMoveCalls.push_back(E);
      else if (userMethodLeavesModule(MD))
        ++Harmless;
    }
    // A parameter's or a gradient's description read through the module
    // (`net->conv1->bias.grad()`, `net->fc->weight.sizes()`), or a tensor
    // method that makes a new handle (`fc->weight.t()`, `.clone()`): an
    // in-place op (`fc->weight.normal_()`), set_data and swap may change
    // the parameter.
    if (readOnlyTensorMethod(MD) &&
        readsTensorMember(E->getImplicitObjectArgument()))
      ++Harmless;
    // `fc->options.out_features()`: a getter (TORCH_ARG's, no argument) of
    // the options the layer was built with; the setters take the value.
    if (MD->getNumParams() == 0 && isOptionsOf(E->getImplicitObjectArgument()))
      ++Harmless;
    // register_module("fc", fc) registers the holder; nothing changes.
    if (MD->getName() == "register_module" && E->getNumArgs() == 2 &&
        names(E->getArg(1)))
      ++Harmless;
    return true;
  }
  /// `auto w = fc->weight;`: a handle on the parameter itself, harmless
  /// when every mention of w only reads it (handleOnlyRead).
  bool VisitVarDecl(clang::VarDecl *VD) {
    if (Body && VD->hasInit() && !VD->getType()->isReferenceType() &&
        readsTensorMember(throughCopies(VD->getInit())) &&
        handleOnlyRead(VD, Body))
      ++Harmless;
    return true;
  }
  /// `torch::matmul(x, fc->weight)`, `x * fc->weight`: passed to LibTorch
  /// by const reference.
  bool VisitCallExpr(clang::CallExpr *E) {
    if (const auto *OCE = llvm::dyn_cast<CXXOperatorCallExpr>(E);
        OCE && OCE->getOperator() == clang::OO_LessLess)
      return true; // printed: VisitCXXOperatorCallExpr
    for (unsigned K = 0; K < E->getNumArgs(); ++K)
      if (readsTensorMember(E->getArg(K)) && readOnlyArgument(E, K))
        ++Harmless;
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
    if (E->getOperator() == clang::OO_Call && E->getNumArgs() >= 1 &&
        names(E->getArg(0)))
      ++Harmless;
    // `std::cout << net`, `std::cout << net->fc->weight`: printed.
    if (E->getOperator() == clang::OO_LessLess && E->getNumArgs() == 2 &&
        recordName(E->getArg(0)->getType()).find("basic_ostream") !=
            std::string::npos &&
        (names(E->getArg(1)) ||
         (isTensorType(E->getArg(1)->getType()) && readsMemberOf(E->getArg(1)))))
      ++Harmless;
    return true;
  }
};

/// The calls on D of the methods Names (eval, train; push_back).
struct CallsOn : clang::RecursiveASTVisitor<CallsOn> {
  const ValueDecl *D;
  std::set<std::string> Names;
  std::vector<const CXXMemberCallExpr *> Calls;
  CallsOn(const ValueDecl *D, std::set<std::string> Names)
      : D(D), Names(std::move(Names)) {}
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *E) {
    const CXXMethodDecl *MD = E->getMethodDecl();
    if (!MD || !MD->getIdentifier() || !Names.count(MD->getName().str()))
      return true;
    const Expr *O = strip(E->getImplicitObjectArgument());
    if (const auto *OCE = dyn_cast_or_null<CXXOperatorCallExpr>(O);
        OCE && OCE->getOperator() == clang::OO_Arrow && OCE->getNumArgs() == 1)
      O = strip(OCE->getArg(0));
    if (O && namedDecl(O) == D)
      Calls.push_back(E);
    return true;
  }
};

} // namespace tma
