// Scans of a function body that symbols and rank evidence share (the
// implementation of frontend/Symbols.cpp's design, split by job):
//  1. Mutations: which declarations the body may change after their
//     declaration (assign, increment, address, non-const reference, an
//     in-place geometry change), and where; tuples changed in part.
//  2. Checked conditions: the condition a statement checks on every path
//     that goes on (TORCH_CHECK, if-throw, assert).
//  3. Rank evidence (RankEvidence.cpp): what the uses of each tensor
//     parameter require of its rank, with the op table's rank tags
//     (KeepsRank, Broadcasts, ReducesOneDim) and op identities, never op
//     names as strings.
// frontend/ is a unity build: these names are external and unique.
#pragma once

#include "frontend/FunctionEvaluator.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace tma {

/// Where each declaration is changed (the changing expression or
/// declaration).
using MutationSites = std::map<const clang::ValueDecl *, std::vector<const clang::Stmt *>>;

/// Adds the declarations Body may change to Out and, when Sites is given,
/// where each is changed: evidence from a use before every change is still
/// evidence about the caller's tensor.
void scanMutations(const clang::Stmt *Body, std::set<const clang::ValueDecl *> &Out,
                   MutationSites *Sites = nullptr);

/// The tensor parameters whose every change is a whole assignment
/// (`x = x.view({x.size(0), -1})`) outside any loop, in a body without
/// labels: while the name still holds the caller's tensor, what the code
/// reads of it (x.size(1)) is the caller's tensor's, in every iteration of
/// any loop.
std::set<const clang::ParmVarDecl *>
parametersOnlyReassigned(const clang::Stmt *Body, const MutationSites &Sites);

/// Integer locals declared without a value and assigned once, by a
/// statement of the body itself (`long N; ... N = x.size(0);`, outside
/// any branch or loop): that assignment gives the value every later use
/// reads, as an initializer would (a read before it is undefined).
std::set<const clang::VarDecl *>
integersAssignedOnce(const clang::Stmt *Body, const MutationSites &Sites);

/// Whether VD's name, as a symbol of FD, means VD's one value: no other
/// declaration of FD (a parameter, a local, a binding) has it, and FD has
/// no label (a goto back to one would run VD's declaration again).
bool namesOneValue(const clang::FunctionDecl &FD, const clang::VarDecl *VD);

/// A local list of integers (std::vector<int64_t>, c10::ArrayRef,
/// c10::SmallVector of an integer type) that nothing in Body changes after
/// its declaration: every use reads it (a const method, a copy, an
/// argument taken by value or const reference, an element read). An
/// element assigned, a non-const method (push_back), a non-const
/// reference, its address: a change.
bool isIntegerListType(clang::QualType T);
bool listNeverChanged(const clang::Stmt *Body, const clang::VarDecl *VD);

/// Tuples, pairs and structs of tensors the body changes other than by a
/// whole assignment, with the line of the first change (TuplePartScan).
void scanTuplesChangedInPart(const clang::SourceManager &SM, const clang::Stmt *Body,
                             std::map<const clang::ValueDecl *, unsigned> &Out);

/// E without parentheses, full-expression wrappers, temporaries and
/// integral or boolean casts.
const clang::Expr *ignoreCastsAndParens(const clang::Expr *E);
/// The parameter a (stripped) expression names, or null.
const clang::ParmVarDecl *parameterNamed(const clang::Expr *E);
/// The tensor parameter E names, when the body never changes which tensor
/// it holds (so what the code says of it is said of the caller's tensor).
const clang::ParmVarDecl *
unchangedTensorParameter(const clang::Expr *E,
                         const std::set<const clang::ValueDecl *> &Mutated);
/// The unchanged tensor parameter whose sizes() the list E is: `x.sizes()`
/// itself, or a local IntArrayRef the body never changes, initialised with
/// it (`auto sizes = x.sizes();`). Null otherwise.
const clang::ParmVarDecl *
parameterSizes(const clang::Expr *E, const std::set<const clang::ValueDecl *> &Mutated,
               int Depth = 0);
/// `__builtin_expect(c, 0)` (C10_UNLIKELY) is c.
const clang::Expr *unwrapExpect(const clang::Expr *E);
/// The condition a statement checks on every path that goes on, with
/// whether it must hold (true) or must fail (false) there: TORCH_CHECK and
/// if-throw (`if (!(c)) throw`), assert and AT_ASSERT's conditional.
std::optional<std::pair<const clang::Expr *, bool>>
checkedCondition(const clang::Stmt *S);

/// What the code says about a tensor parameter's rank and dtype.
struct ParameterEvidence {
  std::optional<int64_t> ExactRank; // a check, a permute, mm / bmm
  bool RankConflict = false;        // two uses need different ranks
  bool Transposed = false;          // x.t(): 2-d, or t() is the identity
  /// x is the input of a layer's forward: the rank the layer documents
  /// for a batch (Linear: (N, in_features)), and the layer.
  std::optional<int64_t> LayerRank;
  std::string Layer;
  std::optional<DType> Type;        // a top-level dtype check
  std::optional<DeviceKind> Dev;    // a top-level device check (x.is_cuda())
  /// Bounds uses prove: `x.size(2)` throws unless x has at least 3 dims,
  /// an expand to 3 sizes of something with at least x's dims throws
  /// unless x has at most 3. Equal bounds are an exact rank.
  std::optional<int64_t> AtLeast, AtMost;
  /// Some of the exact evidence or bounds come from a use in an arm of a
  /// branch, which may not run: the rank is then stated, not proved.
  bool OnSomePaths = false;
};

/// The definition of a call the analysis follows into (a function of the
/// file), or null.
using FollowedCallee = std::function<const clang::FunctionDecl *(const clang::FunctionDecl *)>;

/// The rank evidence the uses in FD's Body give its tensor parameters
/// (helpers of the file it calls with them included, three deep).
std::map<const clang::ParmVarDecl *, ParameterEvidence>
scanRankEvidence(clang::ASTContext &Ctx, const clang::FunctionDecl &FD,
                 const clang::Stmt *Body,
                 const std::set<const clang::ValueDecl *> &Mutated,
                 const MutationSites &Sites, const FollowedCallee &Followed);

} // namespace tma
