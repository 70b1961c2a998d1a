// Symbols: what a function's inputs are, as sizes. Tensor parameters get
// one symbol per dimension (`x.size(0)`), integer parameters a symbol of
// their own (`n_heads`), integer locals the value they were initialised
// with; facts the code checks (TORCH_CHECK, TORCH_INTERNAL_ASSERT, assert,
// `if (...) throw`) go into the function's ShapeEnv.
//
// Design (../shared/design/symbolic.md):
// - A symbol names the parameter's value on entry: `x.size(0)` means the
//   size of the tensor the caller passed, whatever x holds later. So the
//   size of the name x at a later line is read from x's current value,
//   never from the symbol.
// - Rank comes from exact evidence: a top-level check (`TORCH_CHECK(x.dim()
//   == 4)`), or an op that throws on any other rank (permute, mm, bmm,
//   embedding's weight) applied to the parameter or to what rank-keeping
//   ops made of it (`x.unfold(2, 3, 1).permute({...})`). The largest
//   dimension the code reads is no rank (code that reads x.size(1) runs on
//   a 4-d x too); a parameter of unknown rank still has its sizes as
//   symbols (`x.size(1)`) while its name holds it, and its element count
//   `x.numel()`, so a view of it to a full shape is answered. A parameter
//   the code assigns to gets evidence from checks only: its later uses may
//   be of another tensor.
// - The defaults PyTorch itself makes are stated once per parameter: it is
//   contiguous and owns its storage exactly.
// - An integer variable has a value only when nothing in the function can
//   change it after its declaration (no assignment, increment, address or
//   non-const reference): then its initializer is its value everywhere it
//   is in scope, in every iteration of any loop. Anything else is unknown.
// - Facts are learned only from checks that run on every path (not inside
//   a branch or a loop), and only for comparisons of sizes the analysis
//   can express; anything else in a check is ignored, never guessed.
//
// Split by job: SymbolScans.cpp (mutations, checked conditions),
// RankEvidence.cpp (what uses say of a parameter's rank, from the op
// table's tags), this file (declaring the parameters), SymbolicValues.cpp
// (integer expressions as sizes, facts from checks).
#include "frontend/SymbolScans.h"
#include "frontend/CallFollower.h"
#include "frontend/SymbolReader.h"
#include "frontend/ArgumentReader.h"
#include "model/Decide.h"
#include "model/ShapeEnv.h"

using namespace clang;

namespace tma {

/// The rank a top-level fact gives a parameter (`x.dim() == 4`), its
/// dtype (`x.scalar_type() == at::kFloat`, `x.dtype() == torch::kHalf`)
/// and its device (`x.is_cuda()`, `x.device().is_cpu()`, as extension code
/// checks its inputs).
void SymbolReader::checkedParameterFacts(
    const Expr *Cond, bool Holds, std::map<const ParmVarDecl *, CheckedFacts> &Out,
    const Stmt *At, const MutationSites *Sites) {
  Cond = unwrapExpect(Cond);
  if (const auto *UO = dyn_cast<UnaryOperator>(Cond);
      UO && UO->getOpcode() == UO_LNot)
    return checkedParameterFacts(UO->getSubExpr(), !Holds, Out, At, Sites);
  // The parameter X names, holding the caller's tensor at the check.
  auto ParameterAt = [&](const Expr *X) -> const ParmVarDecl * {
    if (const ParmVarDecl *P = unchangedTensorParameter(X, FE.Mutated))
      return P;
    const ParmVarDecl *P = parameterNamed(X);
    if (!P || !At || !Sites || !isTensorType(P->getType()))
      return nullptr;
    auto It = Sites->find(cast<ValueDecl>(P->getCanonicalDecl()));
    if (It == Sites->end())
      return nullptr;
    const SourceManager &SM = FE.SM;
    SourceLocation End = SM.getFileLoc(At->getEndLoc());
    for (const Stmt *Site : It->second) {
      SourceLocation Begin = SM.getFileLoc(Site->getBeginLoc());
      if (!End.isValid() || !Begin.isValid() ||
          !SM.isBeforeInTranslationUnit(End, Begin))
        return nullptr;
    }
    return P;
  };
  // x.is_cuda(), x.device().is_cpu(): only where it holds (a tensor that
  // is not on CUDA may be on any other device).
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(ignoreCastsAndParens(Cond));
      MC && Holds && MC->getMethodDecl() && MC->getMethodDecl()->getIdentifier()) {
    StringRef N = MC->getMethodDecl()->getName();
    const Expr *Object = MC->getImplicitObjectArgument();
    if (const auto *Dev = dyn_cast<CXXMemberCallExpr>(
            ignoreCastsAndParens(Object->IgnoreImplicit()));
        Dev && Dev->getMethodDecl() && Dev->getMethodDecl()->getIdentifier() &&
        Dev->getMethodDecl()->getName() == "device")
      Object = Dev->getImplicitObjectArgument();
    else if (!isTensorType(Object->getType()))
      Object = nullptr;
    if (const ParmVarDecl *P = Object ? ParameterAt(Object) : nullptr) {
      if (N == "is_cuda")
        Out[P].Dev = DeviceKind::CUDA;
      else if (N == "is_cpu")
        Out[P].Dev = DeviceKind::CPU;
    }
    return;
  }
  const Expr *L = nullptr, *R = nullptr;
  bool Equal = false;
  if (const auto *BO = dyn_cast<BinaryOperator>(Cond)) {
    if (BO->getOpcode() == BO_LAnd && Holds) {
      checkedParameterFacts(BO->getLHS(), true, Out, At, Sites);
      checkedParameterFacts(BO->getRHS(), true, Out, At, Sites);
      return;
    }
    if (BO->getOpcode() == BO_LOr && !Holds) {
      checkedParameterFacts(BO->getLHS(), false, Out, At, Sites);
      checkedParameterFacts(BO->getRHS(), false, Out, At, Sites);
      return;
    }
    if (BO->getOpcode() == BO_EQ || BO->getOpcode() == BO_NE) {
      L = BO->getLHS(), R = BO->getRHS();
      Equal = BO->getOpcode() == BO_EQ;
    }
  } else if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(Cond);
             OCE && OCE->getNumArgs() == 2 &&
             (OCE->getOperator() == OO_EqualEqual ||
              OCE->getOperator() == OO_ExclaimEqual)) {
    L = OCE->getArg(0), R = OCE->getArg(1);
    Equal = OCE->getOperator() == OO_EqualEqual;
  }
  if (!L || Equal != Holds)
    return; // only equalities that hold say what a parameter is
  // a.sizes() == b.sizes(): one rank.
  auto SizesOf = [&](const Expr *X) -> const ParmVarDecl * {
    const auto *MC = dyn_cast<CXXMemberCallExpr>(ignoreCastsAndParens(X));
    if (!MC || !MC->getMethodDecl() || !MC->getMethodDecl()->getIdentifier() ||
        MC->getMethodDecl()->getName() != "sizes")
      return nullptr;
    return ParameterAt(MC->getImplicitObjectArgument());
  };
  if (const ParmVarDecl *A = SizesOf(L))
    if (const ParmVarDecl *B = SizesOf(R)) {
      FE.SameRank.push_back({A, B});
      return;
    }
  for (int Side = 0; Side < 2; ++Side, std::swap(L, R)) {
    const auto *MC = dyn_cast<CXXMemberCallExpr>(ignoreCastsAndParens(L));
    if (!MC || !MC->getMethodDecl() || !MC->getMethodDecl()->getIdentifier())
      continue;
    const ParmVarDecl *P = ParameterAt(MC->getImplicitObjectArgument());
    if (!P)
      continue;
    StringRef N = MC->getMethodDecl()->getName();
    if (N == "dim" || N == "ndimension") {
      if (auto K = FE.args().integer(R); K && *K >= 0 && *K < 64)
        Out[P].Rank = *K;
    } else if (N == "scalar_type" || N == "dtype") {
      // dtype() is a caffe2::TypeMeta compared with a ScalarType; the
      // other side may also be torch::Dtype(kFloat) or a TypeMeta.
      const Expr *Other = ignoreCastsAndParens(R);
      while (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(Other)) {
        if (CE->getNumArgs() != 1)
          break;
        Other = ignoreCastsAndParens(CE->getArg(0));
      }
      if (auto T = Other ? FE.args().scalarType(Other) : std::nullopt)
        Out[P].Type = *T;
    }
  }
}

// A followed call (Calls.cpp): the parameters hold the caller's values, and
// a value the caller does not know stays unknown (a symbol named after this
// parameter would mean nothing in the caller's terms).
void SymbolReader::declareBoundParameters() {
  for (const ParmVarDecl *P : FE.FD.parameters()) {
    const std::string Name = P->getName().str();
    const BoundArgument *B = nullptr;
    if (auto It = FE.Bound.find(P); It != FE.Bound.end())
      B = &It->second;
    if (isTensorType(P->getType())) {
      ValueId Id =
          B && B->Tensor
              ? FE.I.external(*B->Tensor, B->StorageBytes)
              : FE.I.unknown("parameter", "the caller's argument is not followed",
                          FE.span(P->getSourceRange()),
                          Interpreter::Provenance::External);
      FE.ParameterValues[P] = Id;
      FE.I.bind(FE.key(P), Name, Id, FE.span(P->getSourceRange()),
             FE.span(SourceRange(P->getLocation(), P->getLocation())), false,
             /*IsParameter=*/true);
    } else if (B && B->Integer &&
               !FE.Mutated.count(cast<ValueDecl>(P->getCanonicalDecl()))) {
      FE.IntVars[FE.key(P)] = *B->Integer;
    }
  }
}

void SymbolReader::declareParameters() {
  const Stmt *Body = FE.FD.getBody();
  MutationSites Sites;
  if (Body) {
    scanMutations(Body, FE.Mutated, &Sites);
    FE.OnlyReassigned = parametersOnlyReassigned(Body, Sites);
    FE.AssignedOnce = integersAssignedOnce(Body, Sites);
    scanTuplesChangedInPart(FE.SM, Body, FE.TuplesChangedInPart);
  }
  if (FE.Caller)
    return declareBoundParameters();
  // Evidence: the uses, then the top-level checks (which win).
  std::map<const ParmVarDecl *, ParameterEvidence> Evidence;
  if (Body) {
    FollowedCallee Followed = [this](const FunctionDecl *Callee) {
      return FE.calls().followedDefinition(Callee);
    };
    Evidence = scanRankEvidence(FE.Ctx, FE.FD, Body, FE.Mutated, Sites, Followed);
  }
  std::map<const ParmVarDecl *, CheckedFacts> Checked;
  if (const auto *CS = dyn_cast_or_null<CompoundStmt>(Body))
    for (const Stmt *S : CS->body())
      if (auto C = checkedCondition(S))
        checkedParameterFacts(C->first, C->second, Checked, S, &Sites);
  for (auto &[P, Ev] : Evidence) {
    if (Ev.RankConflict)
      Ev.ExactRank.reset();
    // At least as many dims as one use reads and at most as many as
    // another allows: exactly that many (`hidden.size(2)` and an expand of
    // what has hidden's dims to 3 sizes). Bounds that cross are no
    // evidence (one of the uses throws).
    if (!Ev.ExactRank && !Ev.RankConflict && Ev.AtLeast && Ev.AtMost &&
        *Ev.AtLeast == *Ev.AtMost)
      Ev.ExactRank = Ev.AtLeast;
  }
  for (const auto &[P, Facts] : Checked) {
    if (Facts.Rank) {
      Evidence[P].ExactRank = Facts.Rank;
      Evidence[P].OnSomePaths = false;
    }
    if (Facts.Type)
      Evidence[P].Type = Facts.Type;
    if (Facts.Dev)
      Evidence[P].Dev = Facts.Dev;
  }
  // A checked a.sizes() == b.sizes() gives a b's rank, and back.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (auto [A, B] : FE.SameRank)
      for (int K = 0; K < 2; ++K, std::swap(A, B))
        if (!Evidence[A].ExactRank && Evidence[B].ExactRank) {
          Evidence[A].ExactRank = Evidence[B].ExactRank;
          Evidence[A].OnSomePaths = Evidence[B].OnSomePaths;
          Changed = true;
        }
  }

  for (const ParmVarDecl *P : FE.FD.parameters()) {
    const std::string Name = P->getName().str();
    QualType PT = P->getType().getNonReferenceType();
    bool Unchanged = !FE.Mutated.count(cast<ValueDecl>(P->getCanonicalDecl()));
    if (isTensorType(P->getType())) {
      const ParameterEvidence &Ev = Evidence[P];
      // Only exact evidence: code that reads x.size(1) works as well on
      // a 4-d x, so the largest index read is no rank (and no assumption
      // anyone would state). Such sizes are still symbols (symbolicValue).
      std::optional<int64_t> Rank = Ev.ExactRank;
      // From a use in a branch: the paths that skip it take any rank.
      bool AssumedOnSomePaths = Rank && Ev.OnSomePaths;
      // A rank an earlier run showed (a view to its sizes), or the next one
      // tried after a statement refuted the stated one: stated.
      bool AssumedFromView = false;
      if (auto Hint = FE.RankHints.find(Name); !Rank && Hint != FE.RankHints.end()) {
        Rank = Hint->second;
        AssumedFromView = true;
      }
      // x.t() of a tensor of unknown rank: a matrix, stated (t() of a
      // vector is the vector itself, of more dims it throws).
      bool AssumedMatrix = !Rank && Ev.Transposed;
      if (AssumedMatrix)
        Rank = 2;
      // The input of a layer: the rank the layer is documented for, stated
      // (Linear also takes (*, in_features), Conv2d an unbatched (C, H, W)).
      bool AssumedLayerRank = !Rank && Ev.LayerRank;
      if (AssumedLayerRank)
        Rank = Ev.LayerRank;
      TensorValue V;
      std::optional<SymSize> Bytes;
      // Without a check its dtype is the caller's: x.scalar_type(), whose
      // element size x.element_size() is a symbol (1 to 16).
      auto SetDType = [&] {
        V.Type = Ev.Type;
        if (!V.Type && !Name.empty()) {
          V.TypeOf = Name;
          FE.Env->tensorElementSize(Name);
        }
      };
      SetDType();
      // Sizes and bytes do not depend on it; answers that do say so.
      if (Ev.Dev)
        V.Dev = Device{*Ev.Dev, -1};
      else
        V.markUnknown("parameter '" + Name + "': its device is the caller's");
      auto NoRank = FE.RankUnknown.find(Name);
      if (NoRank != FE.RankUnknown.end())
        Rank = std::nullopt;
      else if (Rank && (AssumedMatrix || AssumedLayerRank || AssumedFromView))
        FE.StatedRanks[Name] = *Rank;
      if (Name.empty() || !Rank) {
        V = unknownTensor(
            NoRank != FE.RankUnknown.end()
                ? "parameter '" + Name + "': " + NoRank->second
                : "parameter '" + Name +
                      "': its rank is not known (no dim() check, and no op "
                      "that fixes it)");
        SetDType();
        // Its element count is still a symbol and, like any parameter, it
        // is assumed packed: a view or reshape of it to a full shape
        // (`x.view({B, T, H, D})`) is answered without its rank.
        if (!Name.empty()) {
          if (Unchanged)
            FE.UnknownRankParameters.push_back(Name);
          V.PackedNumel = FE.Env->tensorNumel(Name);
          V.Offset = SymSize(0);
          FE.Env->assume(Name + ".is_contiguous()");
          if (auto Item = V.itemBytes())
            Bytes = mulSizes(*V.PackedNumel, *Item);
          FE.Env->assume(Name + ".storage().nbytes() == " + Name +
                      ".numel() * " + Name + ".element_size()");
        }
      } else {
        Shape Sizes;
        for (int64_t K = 0; K < *Rank; ++K)
          Sizes.push_back(FE.Env->tensorSize(Name, K));
        V.Sizes = Sizes;
        V.Strides = contiguousStrides(Sizes);
        V.Offset = SymSize(0);
        if (AssumedMatrix || AssumedLayerRank || AssumedFromView ||
            AssumedOnSomePaths)
          FE.Env->assume(Name + ".dim() == " + std::to_string(*Rank));
        FE.Env->assume(Name + ".is_contiguous()");
        Bytes = V.logicalBytes();
        FE.Env->assume(Name + ".storage().nbytes() == " + Name +
                    ".numel() * " + Name + ".element_size()");
      }
      ValueId Id = FE.I.external(V, Bytes);
      FE.ParameterValues[P] = Id;
      FE.I.bind(FE.key(P), Name, Id, FE.span(P->getSourceRange()),
             FE.span(SourceRange(P->getLocation(), P->getLocation())), false,
             /*IsParameter=*/true);
    } else if (PT->isIntegerType() && !PT->isBooleanType() &&
               !PT->isEnumeralType()) {
      if (Unchanged && !Name.empty() && !PT->isReferenceType())
        FE.IntVars[FE.key(P)] = FE.Env->integer(Name);
    }
  }
}

std::map<std::string, int64_t> FunctionEvaluator::viewRankHints() const {
  std::map<std::string, int64_t> Hints;
  for (const std::string &Name : UnknownRankParameters) {
    SymSize Numel = Env->simplify(Env->tensorNumel(Name));
    if (Numel.isConstant())
      continue;
    // The product of the first k sizes, for the k that matches (a view
    // names each size at most once; 8 bounds the search).
    SymSize Product(1);
    for (int64_t K = 1; K <= 8; ++K) {
      Product = Product * Env->tensorSize(Name, K - 1);
      if (Env->simplify(Product) == Numel) {
        Hints[Name] = K;
        break;
      }
    }
  }
  return Hints;
}

} // namespace tma
