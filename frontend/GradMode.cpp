// Gradient mode around an expression and the parsed LibTorch's autograd
// header (the rules are in GradMode.h).
#include "frontend/GradMode.h"
#include "frontend/AstQueries.h"

#include "clang/AST/ParentMap.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>
#include <mutex>
#include <optional>

using namespace clang;

namespace tma {

namespace {

/// What declaring VD does to gradient mode: off, on, or nothing (not a
/// guard).
std::optional<bool> guardSetsGradMode(const VarDecl *VD) {
  std::string Type = recordName(VD->getType());
  if (Type == "c10::NoGradGuard")
    return false;
  bool Inference = Type == "c10::InferenceMode";
  if (!Inference && Type != "c10::AutoGradMode")
    return std::nullopt;
  // InferenceMode(bool enabled = true) turns gradients off when enabled;
  // AutoGradMode(bool enabled) sets the mode to its flag.
  const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(
      VD->getInit() ? VD->getInit()->IgnoreImplicit() : nullptr);
  if (!Construct || Construct->getNumArgs() < 1)
    return true; // rule 2
  Expr::EvalResult Flag;
  const Expr *Arg = Construct->getArg(0);
  if (Arg->isValueDependent() ||
      !Arg->EvaluateAsInt(Flag, VD->getASTContext()))
    return true; // rule 2
  bool Enabled = Flag.Val.getInt().getBoolValue();
  return Inference ? !Enabled : Enabled;
}

} // namespace

bool gradModeOnAt(const ParentMap &Parents, const Stmt *S) {
  for (const Stmt *Child = S, *P = Parents.getParent(S); P;
       Child = P, P = Parents.getParent(P)) {
    const auto *Block = dyn_cast<CompoundStmt>(P);
    if (!Block)
      continue;
    // The latest guard in this scope before the statement holding S.
    std::optional<bool> Mode;
    for (const Stmt *Sibling : Block->body()) {
      if (Sibling == Child)
        break;
      if (const auto *DS = dyn_cast<DeclStmt>(Sibling))
        for (const Decl *D : DS->decls())
          if (const auto *VD = dyn_cast<VarDecl>(D))
            if (auto Sets = guardSetsGradMode(VD))
              Mode = Sets;
    }
    if (Mode)
      return *Mode;
  }
  return true; // rule 1: as the caller left it
}

std::shared_ptr<const AutogradSaves>
autogradSavesFor(const Preprocessor &PP) {
  const IdentifierInfo *II = PP.getIdentifierInfo("TORCH_VERSION_MAJOR");
  const MacroInfo *MI = II ? PP.getMacroInfo(II) : nullptr;
  if (!MI)
    return nullptr;
  const SourceManager &SM = PP.getSourceManager();
  llvm::StringRef Version = SM.getFilename(SM.getSpellingLoc(MI->getDefinitionLoc()));
  if (Version.empty())
    return nullptr;
  // version.h is <root>/torch/csrc/api/include/torch/version.h and the
  // header <root>/torch/csrc/autograd/generated/Functions.h, where <root>
  // is the include directory (/usr/include, a wheel's torch/include): the
  // first directory above version.h that has it.
  llvm::SmallString<256> Path;
  for (llvm::StringRef Dir = llvm::sys::path::parent_path(Version); !Dir.empty();
       Dir = llvm::sys::path::parent_path(Dir)) {
    Path = Dir;
    llvm::sys::path::append(Path, "torch", "csrc", "autograd");
    llvm::sys::path::append(Path, "generated", "Functions.h");
    if (llvm::sys::fs::exists(Path))
      break;
  }

  static std::mutex M;
  static std::map<std::string, std::shared_ptr<const AutogradSaves>> ByPath;
  std::lock_guard<std::mutex> Lock(M);
  auto It = ByPath.find(std::string(Path));
  if (It != ByPath.end())
    return It->second;
  std::shared_ptr<const AutogradSaves> Saves;
  if (auto Buffer = llvm::MemoryBuffer::getFile(Path)) {
    auto Read = std::make_shared<AutogradSaves>(
        AutogradSaves::parse((*Buffer)->getBuffer()));
    // <root>/ATen/ops/<op>_compositeimplicitautograd_dispatch.h (rule 4 of
    // model/AutogradSaves.h); Path is <root>/torch/csrc/autograd/generated/.
    llvm::SmallString<256> Ops(Path);
    for (int Up = 0; Up < 5; ++Up)
      llvm::sys::path::remove_filename(Ops);
    llvm::sys::path::append(Ops, "ATen", "ops");
    const llvm::StringRef Suffix = "_compositeimplicitautograd_dispatch.h";
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator It(Ops, EC), End; !EC && It != End;
         It.increment(EC)) {
      llvm::StringRef File = llvm::sys::path::filename(It->path());
      if (!File.endswith(Suffix))
        continue;
      if (auto Header = llvm::MemoryBuffer::getFile(It->path()))
        Read->noteCompositeDispatch(File.drop_back(Suffix.size()),
                                    (*Header)->getBuffer());
    }
    Saves = std::move(Read);
  }
  ByPath.emplace(std::string(Path), Saves);
  return Saves;
}

} // namespace tma
