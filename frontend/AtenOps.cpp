// Resolving a LibTorch callee to its at::_ops struct and schema; the
// design is in AtenOps.h.
#include "frontend/AtenOps.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"

#include <map>
#include <memory>
#include <mutex>

using namespace clang;

namespace tma {
namespace {

/// One op overload's struct in at::_ops.
struct OpsStruct {
  const CXXRecordDecl *Record = nullptr;
  const FunctionDecl *Call = nullptr; // its static `call`
  std::string AtenName;               // "mm" of "aten::mm"
  std::string SchemaText;
};

/// What one ASTContext knows: its at::_ops structs by struct name, and the
/// answer for each callee asked about.
struct AtenOpsIndex {
  bool Built = false;
  std::map<std::string, const CXXRecordDecl *> ByStructName;
  std::map<const CXXRecordDecl *, std::optional<OpsStruct>> Read;
  std::map<const FunctionDecl *, std::unique_ptr<AtenCallee>> Callees;
};

std::mutex AtenIndexesLock;
std::map<const ASTContext *, std::unique_ptr<AtenOpsIndex>> AtenIndexes;

/// The index of Ctx, dropped when Ctx is destroyed.
AtenOpsIndex &indexOf(ASTContext &Ctx) {
  std::lock_guard<std::mutex> Lock(AtenIndexesLock);
  auto &Slot = AtenIndexes[&Ctx];
  if (!Slot) {
    Slot = std::make_unique<AtenOpsIndex>();
    Ctx.AddDeallocation(
        [](void *Key) {
          std::lock_guard<std::mutex> Lock(AtenIndexesLock);
          AtenIndexes.erase(static_cast<const ASTContext *>(Key));
        },
        &Ctx);
  }
  return *Slot;
}

const NamespaceDecl *childNamespace(ASTContext &Ctx, const DeclContext *In,
                                    llvm::StringRef Name) {
  for (const NamedDecl *D : In->lookup(&Ctx.Idents.get(Name)))
    if (const auto *NS = dyn_cast<NamespaceDecl>(D))
      return NS;
  return nullptr;
}

void buildIndex(ASTContext &Ctx, AtenOpsIndex &Index) {
  Index.Built = true;
  const NamespaceDecl *At =
      childNamespace(Ctx, Ctx.getTranslationUnitDecl(), "at");
  const NamespaceDecl *Ops = At ? childNamespace(Ctx, At, "_ops") : nullptr;
  if (!Ops)
    return;
  for (const NamespaceDecl *Part : Ops->redecls())
    for (const Decl *D : Part->decls())
      if (const auto *RD = dyn_cast<CXXRecordDecl>(D);
          RD && RD->getIdentifier() && RD->isThisDeclarationADefinition())
        Index.ByStructName[RD->getName().str()] = RD;
}

/// The string a static member `static constexpr const char *Field = "..."`
/// is initialised with.
std::optional<std::string> stringMember(ASTContext &Ctx,
                                        const CXXRecordDecl *RD,
                                        llvm::StringRef Field) {
  for (const NamedDecl *D : RD->lookup(&Ctx.Idents.get(Field)))
    if (const auto *VD = dyn_cast<VarDecl>(D))
      if (const Expr *Init = VD->getAnyInitializer())
        if (const auto *SL = dyn_cast<StringLiteral>(Init->IgnoreParenImpCasts()))
          return SL->getString().str();
  return std::nullopt;
}

const OpsStruct *readStruct(ASTContext &Ctx, AtenOpsIndex &Index,
                            const CXXRecordDecl *RD) {
  auto [It, New] = Index.Read.try_emplace(RD);
  if (!New)
    return It->second ? &*It->second : nullptr;
  auto Name = stringMember(Ctx, RD, "name");
  auto Schema = stringMember(Ctx, RD, "schema_str");
  const FunctionDecl *Call = nullptr;
  for (const NamedDecl *D : RD->lookup(&Ctx.Idents.get("call")))
    if (const auto *MD = dyn_cast<CXXMethodDecl>(D); MD && MD->isStatic())
      Call = MD;
  if (!Name || !Schema || !Call || !llvm::StringRef(*Name).startswith("aten::"))
    return nullptr;
  It->second = OpsStruct{RD, Call, Name->substr(6), *Schema};
  return &*It->second;
}

QualType plainType(QualType T) {
  return T.getNonReferenceType().getCanonicalType().getUnqualifiedType();
}

/// How Callee's parameters match S's `call`: nullopt when the names differ;
/// otherwise whether the types are the same too, with the mapping.
struct ParamMatch {
  bool SameTypes = true;
  std::vector<size_t> CallParamOfParam;
  std::optional<size_t> SelfParam;
};

std::optional<ParamMatch> matchParams(const FunctionDecl *Callee,
                                      const OpsStruct &S) {
  const auto *MD = dyn_cast<CXXMethodDecl>(Callee);
  bool Receiver = MD && !MD->isStatic();
  unsigned Own = Callee->getNumParams();
  if (Own + (Receiver ? 1 : 0) != S.Call->getNumParams())
    return std::nullopt;
  auto CallParam = [&](llvm::StringRef Name) -> std::optional<size_t> {
    for (unsigned K = 0; K < S.Call->getNumParams(); ++K)
      if (S.Call->getParamDecl(K)->getName() == Name)
        return K;
    return std::nullopt;
  };
  ParamMatch M;
  for (unsigned K = 0; K < Own; ++K) {
    const ParmVarDecl *P = Callee->getParamDecl(K);
    auto C = P->getIdentifier() ? CallParam(P->getName()) : std::nullopt;
    if (!C)
      return std::nullopt;
    M.CallParamOfParam.push_back(*C);
    if (plainType(P->getType()) != plainType(S.Call->getParamDecl(*C)->getType()))
      M.SameTypes = false;
  }
  if (Receiver) {
    M.SelfParam = CallParam("self");
    if (!M.SelfParam)
      return std::nullopt;
  }
  return M;
}

bool sameFacts(const AtenResultFacts &A, const AtenResultFacts &B) {
  if (A.Returns.size() != B.Returns.size() || A.Written != B.Written ||
      A.ChangesSelfGeometry != B.ChangesSelfGeometry)
    return false;
  for (size_t K = 0; K < A.Returns.size(); ++K)
    if (A.Returns[K].K != B.Returns[K].K ||
        A.Returns[K].Argument != B.Returns[K].Argument)
      return false;
  return true;
}

std::unique_ptr<AtenCallee> resolve(ASTContext &Ctx, AtenOpsIndex &Index,
                                    const FunctionDecl *Callee) {
  if (!Callee->getIdentifier())
    return nullptr; // operators: their ops are in the hand table
  std::string Name = Callee->getName().str();
  // The op's names: the callee's, and for `mm_out` / `mm_outf` the op
  // whose out= overload it is.
  std::vector<std::string> OpNames = {Name};
  for (llvm::StringRef Suffix : {"_outf", "_out"})
    if (llvm::StringRef(Name).endswith(Suffix)) {
      OpNames.push_back(Name.substr(0, Name.size() - Suffix.size()));
      break;
    }
  struct Candidate {
    const OpsStruct *S;
    ParamMatch M;
  };
  std::vector<Candidate> Found;
  for (const std::string &Op : OpNames) {
    std::vector<const CXXRecordDecl *> Structs;
    if (auto It = Index.ByStructName.find(Op); It != Index.ByStructName.end())
      Structs.push_back(It->second);
    std::string Prefix = Op + "_";
    for (auto It = Index.ByStructName.lower_bound(Prefix);
         It != Index.ByStructName.end() &&
         llvm::StringRef(It->first).startswith(Prefix);
         ++It)
      Structs.push_back(It->second);
    for (const CXXRecordDecl *RD : Structs)
      if (const OpsStruct *S = readStruct(Ctx, Index, RD); S && S->AtenName == Op)
        if (auto M = matchParams(Callee, *S))
          Found.push_back({S, *M});
  }
  // Of the overloads whose names match, those whose types match too.
  std::vector<Candidate> Exact;
  for (const Candidate &C : Found)
    if (C.M.SameTypes)
      Exact.push_back(C);
  const std::vector<Candidate> &Pick = Exact.empty() ? Found : Exact;
  if (Pick.empty())
    return nullptr;
  std::vector<std::unique_ptr<AtenCallee>> Parsed;
  for (const Candidate &C : Pick) {
    auto Schema = parseAtenSchema(C.S->SchemaText);
    if (!Schema || Schema->Arguments.size() != C.S->Call->getNumParams())
      return nullptr;
    auto A = std::make_unique<AtenCallee>();
    A->Facts = atenResultFacts(*Schema);
    // The struct's `call` takes the schema's arguments in order.
    for (size_t P : C.M.CallParamOfParam)
      A->SchemaArgOfParam.push_back(P);
    A->SelfArg = C.M.SelfParam;
    A->Schema = std::move(*Schema);
    Parsed.push_back(std::move(A));
  }
  // Several overloads alike in names and types' shapes: one answer only
  // when they all say the same.
  for (const auto &A : Parsed)
    if (!sameFacts(A->Facts, Parsed.front()->Facts))
      return nullptr;
  return std::move(Parsed.front());
}

} // namespace

const AtenCallee *atenCallee(ASTContext &Ctx, const FunctionDecl *Callee) {
  if (!Callee)
    return nullptr;
  Callee = Callee->getCanonicalDecl();
  AtenOpsIndex &Index = indexOf(Ctx);
  auto It = Index.Callees.find(Callee);
  if (It != Index.Callees.end())
    return It->second.get();
  if (!Index.Built)
    buildIndex(Ctx, Index);
  auto A = resolve(Ctx, Index, Callee);
  return (Index.Callees[Callee] = std::move(A)).get();
}

} // namespace tma
