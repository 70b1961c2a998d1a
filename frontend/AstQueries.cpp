#include "frontend/AstQueries.h"
#include "model/ops/AtenSchema.h"

#include <functional>

#include "clang/AST/Attr.h"
#include "clang/Basic/SourceManager.h"

#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace tma {

std::string recordName(QualType T) {
  T = T.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  if (const auto *RD = T->getAsCXXRecordDecl())
    return RD->getQualifiedNameAsString();
  if (const auto *ET = T->getAs<EnumType>())
    return ET->getDecl()->getQualifiedNameAsString();
  return {};
}

bool changesGeometryInPlace(llvm::StringRef N) {
  return isInplaceViewOp(N.str()); // the registry: model/ops/AtenSchema.cpp
}

const Expr *handleSource(const Expr *E) {
  while (true) {
    E = strip(E);
    if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(E);
        CE && CE->getNumArgs() == 1 && isTensorType(CE->getType()) &&
        CE->getConstructor()->isCopyOrMoveConstructor()) {
      E = CE->getArg(0);
      continue;
    }
    if (const auto *Cast = dyn_cast_or_null<CXXNamedCastExpr>(E);
        Cast && Cast->getTypeAsWritten()->isReferenceType()) {
      E = Cast->getSubExpr();
      continue;
    }
    if (const auto *Call = dyn_cast_or_null<CallExpr>(E); Call && Call->getNumArgs() == 1)
      if (const FunctionDecl *F = Call->getDirectCallee()) {
        std::string Q = F->getQualifiedNameAsString();
        if (Q == "std::move" || Q == "std::forward") {
          E = Call->getArg(0);
          continue;
        }
      }
    return E;
  }
}

bool holdsTensors(QualType T) {
  T = T.getNonReferenceType().getCanonicalType();
  if (T->isPointerType())
    return holdsTensors(T->getPointeeType());
  if (T->isArrayType())
    return isTensorType(QualType(T->getArrayElementTypeNoTypeQual(), 0)) ||
           holdsTensors(QualType(T->getArrayElementTypeNoTypeQual(), 0));
  const auto *Spec =
      dyn_cast_or_null<ClassTemplateSpecializationDecl>(T->getAsCXXRecordDecl());
  if (!Spec)
    return false;
  std::function<bool(const TemplateArgument &)> Holds =
      [&](const TemplateArgument &A) {
        if (A.getKind() == TemplateArgument::Pack) {
          for (const TemplateArgument &P : A.pack_elements())
            if (Holds(P))
              return true;
          return false;
        }
        return A.getKind() == TemplateArgument::Type &&
               (isTensorType(A.getAsType()) || holdsTensors(A.getAsType()));
      };
  for (const TemplateArgument &A : Spec->getTemplateArgs().asArray())
    if (Holds(A))
      return true;
  return false;
}

bool mayHoldTensor(QualType T, int Depth) {
  if (holdsTensors(T))
    return true;
  const auto *RD = T.getNonReferenceType().getCanonicalType()->getAsCXXRecordDecl();
  if (!RD || Depth > 3 || !RD->hasDefinition() || isLibTorchDecl(RD))
    return false;
  for (const FieldDecl *F : RD->getDefinition()->fields())
    if (isTensorType(F->getType()) || mayHoldTensor(F->getType(), Depth + 1))
      return true;
  return false;
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

const clang::CXXRecordDecl *tensorRecord(QualType T) {
  const auto *RD = T.getNonReferenceType().getCanonicalType()->getAsCXXRecordDecl();
  if (!RD || !RD->hasDefinition())
    return nullptr;
  RD = RD->getDefinition();
  if (RD->isUnion() || !RD->isAggregate() || RD->getNumBases() != 0 ||
      RD->isLambda() || isa<ClassTemplateSpecializationDecl>(RD) ||
      isLibTorchDecl(RD) || RD->field_empty())
    return nullptr;
  for (const FieldDecl *F : RD->fields())
    if (F->getType()->isReferenceType() || !isTensorType(F->getType()) ||
        F->isBitField())
      return nullptr;
  // Plain data only: a method could hand out a reference to a member
  // (`torch::Tensor &ref() { return value; }`) that changes it unseen.
  for (const Decl *D : RD->decls())
    if ((isa<CXXMethodDecl>(D) || isa<FunctionTemplateDecl>(D) || isa<FriendDecl>(D)) &&
        !D->isImplicit())
      return nullptr;
  return RD;
}

std::string lambdaNotFollowed(const clang::CXXRecordDecl *Closure) {
  if (Closure->capture_size() != 0)
    return "call to a lambda with captures is not analysed";
  if (Closure->isGenericLambda())
    return "call to a generic lambda is not analysed";
  return "";
}

/// std::tuple / std::pair whose elements are all tensors (or references to
/// tensors, as std::tie makes), and aggregates of tensors (tensorRecord).
bool isTensorTupleType(QualType T) {
  if (tensorRecord(T))
    return true;
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

bool keepsFunctionBody(const Decl *D) {
  const SourceManager &SM = D->getASTContext().getSourceManager();
  SourceLocation L = SM.getExpansionLoc(D->getLocation());
  if (L.isInvalid() || SM.isInSystemHeader(L) || isLibTorchDecl(D))
    return false;
  if (SM.isWrittenInMainFile(L))
    return true;
  // LibTorch's headers found through -I rather than -isystem (pip's
  // torch/include, a source build): known by their directories.
  StringRef Path = SM.getFilename(L);
  for (StringRef Dir : {"/torch/csrc/", "/ATen/", "/c10/", "/caffe2/",
                        "/torch/include/", "/pybind11/"})
    if (Path.contains(Dir))
      return false;
  return true;
}

bool isDeviceOnlyFunction(const Decl *D) {
  const FunctionDecl *FD = D ? D->getAsFunction() : nullptr;
  if (!FD || !FD->getASTContext().getLangOpts().CUDA)
    return false;
  return FD->hasAttr<CUDAGlobalAttr>() ||
         (FD->hasAttr<CUDADeviceAttr>() && !FD->hasAttr<CUDAHostAttr>());
}

/// Strips the nodes that do not change a value: parentheses, implicit
/// casts, temporaries, cleanups.
const InitListExpr *bracedList(const Expr *E) {
  for (int Depth = 0; Depth < 6 && E; ++Depth) {
    E = strip(E);
    if (const auto *IL = dyn_cast<InitListExpr>(E))
      return IL;
    if (const auto *SIL = dyn_cast<CXXStdInitializerListExpr>(E))
      E = SIL->getSubExpr();
    else if (const auto *CE = dyn_cast<CXXConstructExpr>(E);
             CE && CE->getNumArgs() >= 1)
      E = CE->getArg(0);
    else
      return nullptr;
  }
  return nullptr;
}

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

/// Whether E does any tensor work (a tensor-typed subexpression that is not
/// just a name), so that a statement is worth opening for it.
bool takesRawPointer(const CXXMemberCallExpr *MC) {
  const CXXMethodDecl *MD = MC->getMethodDecl();
  if (!MD || !MD->getIdentifier() ||
      !isTensorType(MC->getImplicitObjectArgument()->getType()))
    return false;
  StringRef N = MD->getName();
  return N == "data_ptr" || N == "mutable_data_ptr" || N == "const_data_ptr";
}

bool hasTensorWork(const Expr *E) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Found = false;
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
    bool VisitExpr(Expr *X) {
      if (isa<DeclRefExpr>(X) || isa<MemberExpr>(X) || isa<ImplicitCastExpr>(X))
        return true;
      if (isTensorType(X->getType()) || isTensorVectorType(X->getType()) ||
          isTensorTupleType(X->getType()))
        Found = true;
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(X); MC && takesRawPointer(MC))
        Found = true; // a use of the tensor the trace records
      return !Found;
    }
  } Find;
  Find.TraverseStmt(const_cast<Expr *>(E));
  return Find.Found;
}

bool mentionsTensor(const Expr *E) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Found = false;
    const Expr *Top = nullptr;
    bool VisitExpr(Expr *X) {
      Found = Found || (X != Top && (isTensorType(X->getType()) ||
                                     holdsTensors(X->getType())));
      return !Found;
    }
  } Find;
  Find.Top = E;
  Find.TraverseStmt(const_cast<Expr *>(E));
  return Find.Found;
}

} // namespace tma
