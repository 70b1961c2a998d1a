// What a branch, a loop or a statement the analysis does not follow may have
// changed: the names it may assign become unknown after it, keeping their
// storage counted when every value they may hold is on that storage.
#include "frontend/FunctionEvaluator.h"
#include "frontend/StatementWalker.h"
#include "frontend/Invalidation.h"
#include "frontend/LoopCounts.h"
#include "model/Geometry.h"

#include "clang/AST/RecursiveASTVisitor.h"

#include <set>
#include <tuple>

using namespace clang;

namespace tma {

/// What a statement may assign: tensor slots (`x = ...`, through
/// references, `std::tie`, `std::swap`) and option or device variables.
struct AssignedIn {
  std::vector<const Expr *> Targets;
  std::vector<const VarDecl *> Variables;
  std::vector<const ValueDecl *> Containers; // tensor vectors and tuples used
  std::vector<const Expr *> Reshaped; // objects of in-place geometry changes
};

static AssignedIn assignedIn(const Stmt *Body) {
  struct Finder : RecursiveASTVisitor<Finder> {
    AssignedIn Out;
    bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *OCE) {
      if (OCE->getOperator() == OO_Equal && OCE->getNumArgs() == 2) {
        Out.Targets.push_back(OCE->getArg(0));
        if (const auto *DRE = dyn_cast<DeclRefExpr>(strip(OCE->getArg(0))))
          if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
            Out.Variables.push_back(VD);
        // std::tie(a, b) = ...
        if (const auto *Tie = dyn_cast<CallExpr>(strip(OCE->getArg(0))))
          for (const Expr *A : Tie->arguments())
            Out.Targets.push_back(A);
      }
      return true;
    }
    // `x.unsqueeze_(0)` changes x (and every handle to its tensor) as an
    // assignment would.
    bool VisitCXXMemberCallExpr(CXXMemberCallExpr *MC) {
      const CXXMethodDecl *MD = MC->getMethodDecl();
      if (MD && MD->getIdentifier() && isTensorType(MC->getObjectType()) &&
          changesGeometryInPlace(MD->getName()))
        Out.Reshaped.push_back(MC->getImplicitObjectArgument());
      return true;
    }
    bool VisitCallExpr(CallExpr *CE) {
      if (const FunctionDecl *F = CE->getDirectCallee();
          F && F->getQualifiedNameAsString() == "std::swap")
        for (const Expr *A : CE->arguments())
          Out.Targets.push_back(A);
      return true;
    }
    bool VisitDeclRefExpr(DeclRefExpr *DRE) {
      if (isTensorVectorType(DRE->getType()) || isTensorTupleType(DRE->getType()))
        Out.Containers.push_back(DRE->getDecl());
      return true;
    }
  } Find;
  Find.TraverseStmt(const_cast<Stmt *>(Body));
  return Find.Out;
}

/// The names the slots Found assigns hold (each candidate of a slot not
/// known), each with how the source shows it.
static std::vector<std::pair<std::string, std::string>>
assignedKeys(const AssignedIn &Found, FunctionEvaluator &E) {
  std::vector<std::pair<std::string, std::string>> Out;
  for (const Expr *A : Found.Targets)
    if (auto Sl = E.slotOf(A))
      for (const std::string &K :
           Sl->Known ? std::vector<std::string>{Sl->Key} : Sl->Candidates)
        Out.emplace_back(K, Sl->Display);
  return Out;
}

/// The names Found may change: the slots assigned, and every handle to a
/// tensor whose geometry changes in place; each once.
static std::vector<std::pair<std::string, std::string>>
keysChanged(const AssignedIn &Found, FunctionEvaluator &E) {
  std::vector<std::pair<std::string, std::string>> Out;
  std::set<std::string> Seen;
  auto Add = [&](const std::string &K, const std::string &Display) {
    if (Seen.insert(K).second)
      Out.emplace_back(K, Display);
  };
  for (const auto &[K, Display] : assignedKeys(Found, E))
    Add(K, Display);
  for (const Expr *A : Found.Reshaped)
    if (auto Sl = E.slotOf(A); Sl && Sl->Known) {
      Add(Sl->Key, Sl->Display);
      for (const std::string &K : E.I.keysHoldingTensor(E.I.lookup(Sl->Key))) {
        std::string Shown = E.I.nameOf(K);
        Add(K, Shown.empty() ? Sl->Display : Shown);
      }
    }
  return Out;
}

FunctionEvaluator::StorageSnapshot
Invalidation::snapshotAssignedIn(const Stmt *Body) {
  StorageSnapshot Out;
  for (const auto &[K, Display] : keysChanged(assignedIn(Body), FE))
    if (ValueId V = FE.I.lookup(K); V != NoValue)
      Out[K] = FE.I.value(V).Storage;
  return Out;
}

/// Names assigned inside Body that were declared outside it get an unknown
/// value: after a branch or a loop they hold one of several values. The
/// storage they hold stays counted when every value they may hold is on
/// the same storage (a view reassigned in a branch); otherwise which one is
/// held is unknown, and so are the totals. Before is what the names held
/// before Body ran; null when Body has not run yet.
void Invalidation::invalidateAssignedIn(const Stmt *Body,
                                             const std::string &Reason,
                                             SourceRange Where,
                                             const StorageSnapshot *Before,
                                             bool Names) {
  AssignedIn Found = assignedIn(Body);
  // Tensor vectors and tuples used inside may have changed: forget their
  // elements.
  for (const ValueDecl *VD : Found.Containers) {
    FE.TensorLists.erase(FE.resolveKey(VD));
    FE.TensorTuples.erase(FE.resolveKey(VD));
  }
  for (const VarDecl *VD : Found.Variables) {
    if (isOptionsType(VD->getType()))
      FE.OptionVars.erase(FE.key(VD));
    FE.DeviceVars.erase(FE.key(VD));
  }
  if (!Names)
    return;
  for (const auto &[K, Display] : keysChanged(Found, FE)) {
    ValueId Now = FE.I.lookup(K);
    if (Now == NoValue)
      continue;
    StorageId Held = FE.I.value(Now).Storage;
    StorageId Prior = Held;
    if (Before) {
      auto It = Before->find(K);
      Prior = It == Before->end() ? NoStorage : It->second;
    }
    // Which of the tensors assigned in the body it holds is not listed: an
    // in-place change of its geometry may be one to any tensor.
    if (Prior == Held) {
      ValueId V = FE.I.unknownOn(Display, Reason, FE.span(Where), Held);
      FE.I.mayBeAny(V);
      FE.I.rebind(K, V);
      continue;
    }
    ValueId V = FE.I.unknown(Display, Reason, FE.span(Where),
                          Interpreter::Provenance::External);
    FE.I.mayBeAny(V);
    FE.I.rebind(K, V);
    FE.I.totalsUnknown("'" + Display + "' holds one of several tensors "
                    "after line " + std::to_string(FE.span(Where).Line));
  }
}

FunctionEvaluator::BranchState Invalidation::saveBranchState() const {
  BranchState S;
  S.Names = FE.I.names();
  S.TensorLists = FE.TensorLists;
  S.TensorTuples = FE.TensorTuples;
  S.OptionVars = FE.OptionVars;
  S.DeviceVars = FE.DeviceVars;
  return S;
}

void Invalidation::restoreBranchState(const BranchState &Start) {
  for (const auto &[K, V] : Start.Names)
    if (ValueId Now = FE.I.lookup(K); Now != NoValue && Now != V)
      FE.I.rebind(K, V);
  FE.TensorLists = Start.TensorLists;
  FE.TensorTuples = Start.TensorTuples;
  FE.OptionVars = Start.OptionVars;
  FE.DeviceVars = Start.DeviceVars;
}

void Invalidation::mergeBranchStates(const Stmt *Whole,
                                          const BranchState &Start,
                                          const std::vector<BranchState> &Ends,
                                          const std::string &Context) {
  SourceSpan Where = FE.span(Whole->getSourceRange());
  std::set<std::string> Assigned;
  for (const auto &[K, Display] : assignedKeys(assignedIn(Whole), FE))
    Assigned.insert(K);
  for (const auto &[K, V0] : Start.Names) {
    ValueId Now = FE.I.lookup(K);
    if (Now == NoValue)
      continue;
    std::vector<ValueId> Held = {Now};
    for (const BranchState &E : Ends) {
      auto It = E.Names.find(K);
      Held.push_back(It == E.Names.end() ? NoValue : It->second);
    }
    bool Changed = false;
    for (ValueId V : Held)
      Changed |= V != V0;
    if (!Changed)
      continue;
    StorageId On = FE.I.value(Now).Storage;
    for (ValueId V : Held)
      if (V == NoValue || FE.I.value(V).Storage != On)
        On = NoStorage;
    std::string Shown = FE.I.nameOf(K);
    std::string Display = Shown.empty() ? K : Shown;
    std::string Reason = std::string(Assigned.count(K) ? "assigned" : "changed") +
                         " in a " + Context + ": depends on the condition";
    // Tensors of one layout on every path: that much is known after it.
    std::optional<TensorValue> Common;
    if (std::find(Held.begin(), Held.end(), NoValue) == Held.end()) {
      std::vector<TensorValue> Values;
      for (ValueId V : Held)
        Values.push_back(FE.I.value(V));
      Common = commonLayout(Values, Reason);
    }
    if (On != NoStorage) {
      // A hidden holder (a list element) only keeps its storage alive.
      if (!Shown.empty()) {
        ValueId Merged = Common ? FE.I.unknownWith(Display, *Common, Where, On,
                                                Interpreter::Provenance::External)
                                : FE.I.unknownOn(Display, Reason, Where, On);
        FE.I.mayBe(Merged, Held);
        FE.I.rebind(K, Merged);
      }
      continue;
    }
    ValueId Merged = Common ? FE.I.unknownWith(Display, *Common, Where, NoStorage,
                                            Interpreter::Provenance::External)
                            : FE.I.unknown(Display, Reason, Where,
                                        Interpreter::Provenance::External);
    FE.I.mayBe(Merged, Held);
    FE.I.rebind(K, Merged);
    FE.I.totalsUnknown("'" + Display + "' holds one of several tensors after line " +
                    std::to_string(Where.Line));
  }
  // A list or tuple that differs between the arms is not known after them.
  auto KeepAlike = [&](auto &Now, const auto &Other) {
    for (auto It = Now.begin(); It != Now.end();) {
      auto There = Other.find(It->first);
      It = There == Other.end() || There->second != It->second ? Now.erase(It)
                                                               : std::next(It);
    }
  };
  for (const BranchState &E : Ends) {
    KeepAlike(FE.TensorLists, E.TensorLists);
    KeepAlike(FE.TensorTuples, E.TensorTuples);
  }
}

void Invalidation::tensorChangedInPlace(ValueId Old, ValueId New,
                                             const std::string &Why,
                                             const SourceSpan &Where) {
  if (Old < 0)
    return;
  ValueId Tensor = FE.I.tensorOf(Old);
  std::vector<std::string> Holding = FE.I.keysHoldingTensor(Old);
  for (const std::string &K : Holding) {
    FE.parameterChanged(K, Why);
    FE.I.rebind(K, New);
  }
  // Names that may hold the changed tensor, or that it may be (one of
  // several tensors chosen at run time, or what an op the analysis cannot
  // decide returned: its input itself or a new tensor): changed or not,
  // which is unknown.
  // Each gets a value of its own: they are not known to be one tensor.
  auto MaybeChanged = [&] {
    return FE.I.unknown("tensor",
                     "may be the tensor that " + Why + " (line " +
                         std::to_string(Where.Line) +
                         "): which tensor it is, is known only at run time",
                     Where, Interpreter::Provenance::External);
  };
  std::vector<std::string> MayHold;
  for (const auto &[K, Held] : FE.I.names())
    if (Held >= 0 && FE.I.tensorOf(Held) != Tensor && FE.I.mayShareTensor(Old, Held))
      MayHold.push_back(K);
  for (const std::string &K : MayHold) {
    FE.parameterChanged(K, Why);
    FE.I.rebind(K, MaybeChanged());
  }
  for (auto *Lists : {&FE.TensorLists, &FE.TensorTuples})
    for (auto &[K, Elements] : *Lists)
      for (ValueId &E : Elements)
        if (E >= 0 && FE.I.tensorOf(E) == Tensor)
          E = New;
        else if (E >= 0 && FE.I.mayShareTensor(Old, E))
          E = MaybeChanged();
}
std::optional<FunctionEvaluator::Completion>
StatementWalker::loopAtFixpoint(const Stmt *Body, const Stmt *Whole, Flow F) {
  // Each level tries its body once more than it runs it: a bound keeps
  // nested loops from multiplying that.
  if (FE.FixpointDepth >= 3)
    return std::nullopt;
  AssignedIn Found = assignedIn(Body);
  // Lists the body appends to, each once, when the loop is counted: after
  // it each holds what it held and one iteration's appends per iteration
  // (a later iteration's are the same tensors or new ones of their
  // layout: the body reads nothing that changes between iterations).
  // Other uses of lists and tuples, and option or device variables set per
  // iteration, are not compared: those loops keep the per-iteration
  // reading.
  std::vector<std::string> Grown;
  std::optional<int64_t> Trips;
  for (const ValueDecl *VD : Found.Containers) {
    if (declaredIn(Body, VD))
      continue; // a fresh list each iteration
    std::string K = FE.resolveKey(VD);
    if (std::find(Grown.begin(), Grown.end(), K) != Grown.end())
      continue;
    if (!Trips) {
      const auto *FS = dyn_cast<ForStmt>(Whole);
      Trips = FS ? constantTripCount(FS, FE) : std::nullopt;
      if (!Trips || *Trips < 1 || *Trips > MaxElementsBuilt ||
          mayLeaveIterationEarly(Body))
        return std::nullopt;
    }
    if (!isTensorVectorType(VD->getType()) || !FE.TensorLists.count(K) ||
        !onlyAppendedIn(Body, VD))
      return std::nullopt;
    Grown.push_back(K);
  }
  for (const VarDecl *VD : Found.Variables)
    if (isOptionsType(VD->getType()) || FE.DeviceVars.count(FE.key(VD)))
      return std::nullopt;
  std::map<std::string, ValueId> Entry;
  for (const auto &[K, Display] : keysChanged(Found, FE))
    if (ValueId V = FE.I.lookup(K); V != NoValue) {
      const TensorValue &TV = FE.I.value(V);
      if (!TV.hasLayout() || !TV.dtypeKnown() || TV.Storage == NoStorage)
        return std::nullopt;
      Entry[K] = V;
    }
  if (Entry.empty() && Grown.empty())
    return std::nullopt;

  auto Before = std::apply(
      [](auto &...Field) { return std::make_tuple(Field...); }, FE.changeableState());
  size_t OpsBefore = FE.I.trace().Ops.size();
  auto ValuesBefore = static_cast<ValueId>(FE.I.trace().Values.size());
  size_t StoragesBefore = FE.I.trace().Storages.size();
  std::map<std::string, std::vector<ValueId>> ListsBefore;
  for (const std::string &K : Grown)
    ListsBefore[K] = FE.TensorLists.at(K);
  Flow Inner = F;
  Inner.InLoop = true;
  Inner.Unrolled = false;
  ++FE.FixpointDepth;
  Completion C = loopBodyOnce(Body, Whole, Inner);
  --FE.FixpointDepth;

  const FunctionTrace &T = FE.I.trace();
  std::vector<std::string> Rebound;
  auto SameAfter = [&](const std::string &K, ValueId E) {
    ValueId X = FE.I.lookup(K);
    if (X == E)
      return true;
    if (X == NoValue)
      return false;
    const TensorValue &A = FE.I.value(E), &B = FE.I.value(X);
    if (!B.hasLayout() || !(*A.Sizes == *B.Sizes) || !(*A.Strides == *B.Strides) ||
        !(*A.Offset == *B.Offset) || A.Type != B.Type || A.TypeOf != B.TypeOf ||
        A.Dev != B.Dev)
      return false;
    if (A.Storage == B.Storage)
      return true;
    // A new tensor each iteration, held by this name alone as the one
    // before the loop was: the same answers (bytes, kind, no base).
    if (B.Storage == NoStorage)
      return false;
    const StorageInfo &SA = T.Storages.at(A.Storage), &SB = T.Storages.at(B.Storage);
    std::string Name = FE.I.nameOf(K);
    if (SA.External || SB.External || !SA.Bytes || !SB.Bytes ||
        !(*SA.Bytes == *SB.Bytes) || SB.Producer == NoOp ||
        static_cast<size_t>(SB.Producer) < OpsBefore || SA.FirstName != Name ||
        SB.FirstName != Name)
      return false;
    Rebound.push_back(Name);
    return true;
  };
  for (const auto &[K, E] : Entry)
    if (!SameAfter(K, E)) {
      FE.changeableState() = Before;
      return std::nullopt;
    }
  std::map<std::string, std::vector<ValueId>> Appended;
  for (const std::string &K : Grown) {
    auto Now = FE.TensorLists.find(K);
    const std::vector<ValueId> &Was = ListsBefore.at(K);
    if (Now == FE.TensorLists.end() || Now->second.size() <= Was.size() ||
        !std::equal(Was.begin(), Was.end(), Now->second.begin())) {
      FE.changeableState() = Before; // appended on some paths only
      return std::nullopt;
    }
    Appended[K].assign(Now->second.begin() + Was.size(), Now->second.end());
  }
  FE.invalidation().allocationsAreUncertain(OpsBefore, "allocates inside a loop", true);
  SourceSpan Where = FE.span(Whole->getSourceRange());
  // The iterations after the one evaluated append the same tensors (one
  // from before the loop) or new ones of the same layout: a view of a
  // storage from before the loop is on that storage, anything else on a
  // storage of its own.
  for (const auto &[K, Elements] : Appended) {
    std::vector<ValueId> &List = FE.TensorLists[K];
    for (int64_t Iteration = 1; Iteration < *Trips; ++Iteration)
      for (ValueId E : Elements) {
        ValueId Next = E;
        if (E >= ValuesBefore) {
          StorageId S = FE.I.value(E).Storage;
          bool Older = S != NoStorage && static_cast<size_t>(S) < StoragesBefore;
          Next = FE.I.anotherLike(E, Older ? S : NoStorage,
                                  "appended by iteration " + std::to_string(Iteration + 1) +
                                      " of the loop at line " + std::to_string(Where.Line) +
                                      ", as the first iteration appended one of unknown storage");
        }
        FE.holdElement(K, List.size(), Next);
        List.push_back(Next);
      }
  }
  for (const std::string &Name : Rebound)
    FE.I.totalsUnknown("'" + Name + "' holds one of several tensors after line " +
                    std::to_string(Where.Line));
  if (C.K == Completion::Return || C.K == Completion::Goto)
    mayHaveLeft(C);
  return Completion{};
}

} // namespace tma

namespace tma {

/// Whether any expression statement or declaration in Body does tensor
/// work: a loop without any has nothing to unroll.
static bool doesTensorWork(const Stmt *Body) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Found = false;
    bool VisitExpr(Expr *E) {
      Found |= hasTensorWork(E);
      return !Found;
    }
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
  } Find;
  Find.TraverseStmt(const_cast<Stmt *>(Body));
  return Find.Found;
}

/// The most iterations of one loop the trace holds: the first, the second
/// and a third to show the second's end is a steady state.
constexpr int64_t IterationsUnrolled = 3;

std::optional<FunctionEvaluator::Completion>
StatementWalker::unrolledLoop(const Stmt *Body, const Stmt *Whole, Flow F) {
  // Inside a loop evaluated once for all its iterations, a copy per
  // iteration of an inner one would still stand for many.
  if (!F.oncePerCopy() || FE.UnrollDepth >= 2)
    return std::nullopt;
  const auto *FS = dyn_cast<ForStmt>(Whole);
  if (!FS || !doesTensorWork(Body) || mayLeaveIterationEarly(Body))
    return std::nullopt;
  std::optional<int64_t> Trips = constantTripCount(FS, FE);
  if (!Trips || *Trips < 1)
    return std::nullopt;
  // Each iteration must start from what the first started from: nothing
  // it assigns, appends to or reshapes lives outside it.
  AssignedIn Found = assignedIn(Body);
  for (const ValueDecl *VD : Found.Containers)
    if (!declaredIn(Body, VD))
      return std::nullopt;
  for (const VarDecl *VD : Found.Variables)
    if (!declaredIn(Body, VD))
      return std::nullopt;
  for (const auto &[K, Display] : keysChanged(Found, FE))
    if (FE.I.lookup(K) != NoValue)
      return std::nullopt;

  SourceSpan Where = FE.span(Whole->getSourceRange());
  int64_t Copies = std::min(*Trips, IterationsUnrolled);
  Flow Inner = F;
  Inner.InLoop = true;
  Inner.Unrolled = true;
  struct Iteration {
    unsigned Begin = 0, Count = 0;
    std::optional<SymSize> Peak, LiveAfter;
    size_t StoragesBefore = 0, OpsBefore = 0;
  };
  std::vector<Iteration> Runs;
  ++FE.UnrollDepth;
  FE.I.endStatement();
  for (int64_t K = 0; K < Copies; ++K) {
    Iteration It;
    It.Begin = static_cast<unsigned>(FE.I.trace().Statements.size());
    It.StoragesBefore = FE.I.trace().Storages.size();
    It.OpsBefore = FE.I.trace().Ops.size();
    FE.I.openPeakWindow();
    loopBodyOnce(Body, Whole, Inner);
    FE.I.endStatement();
    It.Peak = FE.I.closePeakWindow();
    It.LiveAfter = FE.I.liveNow();
    It.Count = static_cast<unsigned>(FE.I.trace().Statements.size()) - It.Begin;
    if (K > 0)
      FE.I.markRepeats(It.Begin, Runs.front().Begin, std::min(It.Count, Runs.front().Count));
    Runs.push_back(It);
  }
  --FE.UnrollDepth;

  auto Same = [](const std::optional<SymSize> &A, const std::optional<SymSize> &B) {
    return A.has_value() == B.has_value() && (!A || *A == *B);
  };
  const FunctionTrace &T = FE.I.trace();
  std::optional<SymSize> UnheldStorage = SymSize(0), UnheldOps = SymSize(0);
  if (*Trips > Copies) {
    // The third iteration stands for the later ones when it did what the
    // second did from where the second left off.
    const Iteration &Second = Runs[1], &Third = Runs[2];
    bool Steady = Second.Count == Third.Count && Same(Second.Peak, Third.Peak) &&
                  Same(Second.LiveAfter, Third.LiveAfter);
    for (unsigned K = 0; Steady && K < Second.Count; ++K) {
      const Statement &A = T.Statements[Second.Begin + K], &B = T.Statements[Third.Begin + K];
      Steady = A.LiveKnown == B.LiveKnown && A.LiveBytesAfter == B.LiveBytesAfter;
    }
    if (!Steady) {
      auto Text = [](const std::optional<SymSize> &S) {
        return S ? S->toCpp() + " B" : std::string("?");
      };
      FE.I.totalsUnknown("the loop at line " + std::to_string(Where.Line) +
                         " does not reach a steady state: its second iteration "
                         "ends with " + Text(Second.LiveAfter) +
                         " live, its third with " + Text(Third.LiveAfter));
    } else {
      std::optional<SymSize> PerIteration = SymSize(0);
      for (size_t S = Third.StoragesBefore; S < T.Storages.size(); ++S)
        if (!T.Storages[S].External)
          PerIteration = addSizes(PerIteration, T.Storages[S].Bytes);
      std::optional<SymSize> OpsPerIteration = SymSize(0);
      for (size_t K = Third.OpsBefore; K < T.Ops.size(); ++K)
        OpsPerIteration = addSizes(OpsPerIteration, allocatedByOp(T.Ops[K]));
      SymSize Later(*Trips - Copies);
      UnheldStorage = mulSizes(PerIteration, Later);
      UnheldOps = mulSizes(OpsPerIteration, Later);
    }
  }
  UnrolledLoopSummary L;
  L.Where = Where;
  L.Iterations = *Trips;
  L.FirstIterationPeak = Runs.front().Peak;
  if (Runs.size() > 1) {
    L.LaterIterationPeak = Runs[1].Peak;
    for (size_t K = 2; K < Runs.size() && L.LaterIterationPeak; ++K)
      L.LaterIterationPeak =
          Runs[K].Peak ? std::optional<SymSize>(SymSize::max(*L.LaterIterationPeak,
                                                             *Runs[K].Peak))
                       : std::nullopt;
  }
  FE.I.endUnrolledLoop(L, UnheldStorage, UnheldOps);
  return Completion{};
}

} // namespace tma
