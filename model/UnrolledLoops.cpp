// Unrolled loops on the ledger: a counted loop whose body the frontend
// evaluates once per iteration (StatementWalker::unrolledLoop) leaves one
// copy of its statements per iteration in the trace, so the ledger and
// autograd's tape see the run as it happens: the first step() allocating
// the optimizer's state, the second backward() accumulating into .grad,
// a graph kept alive from one iteration to the next. The windows give
// each iteration's peak; foldRepeatedIterations then leaves one row per
// source statement for the report.
#include "model/Interpreter.h"

#include "model/Decide.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace tma {

std::optional<SymSize> Interpreter::liveNow() const {
  if (UnknownLive > 0)
    return std::nullopt;
  return LiveBytes;
}

void Interpreter::openPeakWindow() { PeakWindows.push_back(liveNow()); }

std::optional<SymSize> Interpreter::closePeakWindow() {
  if (PeakWindows.empty())
    return std::nullopt;
  std::optional<SymSize> Peak = PeakWindows.back();
  PeakWindows.pop_back();
  return Peak;
}

void notePeakInWindows(std::vector<std::optional<SymSize>> &PeakWindows,
                       const std::optional<SymSize> &Now) {
  for (std::optional<SymSize> &W : PeakWindows) {
    if (!W || !Now) {
      W.reset();
      continue;
    }
    Tri Higher = sizeGt(*Now, *W);
    if (Higher == Tri::True)
      W = *Now;
    else if (Higher == Tri::Unknown)
      W = SymSize::max(*W, *Now);
  }
}

void Interpreter::markRepeats(unsigned From, unsigned Of, unsigned Count) {
  for (unsigned K = 0; K < Count; ++K) {
    Statement &Copy = Trace.Statements.at(From + K);
    const Statement &First = Trace.Statements.at(Of + K);
    // The same statement of the source, with as many ops: one row.
    if (Copy.Where.BeginRaw == First.Where.BeginRaw && Copy.Where.EndRaw == First.Where.EndRaw &&
        Copy.Ops.size() == First.Ops.size())
      Copy.RepeatOf = static_cast<int>(Of + K);
  }
}

void Interpreter::endUnrolledLoop(UnrolledLoopSummary L,
                                  std::optional<SymSize> UnheldStorageBytes,
                                  std::optional<SymSize> UnheldOpBytes) {
  Trace.Summary.Loops.push_back(std::move(L));
  UnheldAllocations = addSizes(UnheldAllocations, UnheldStorageBytes);
  UnheldOpAllocations = addSizes(UnheldOpAllocations, UnheldOpBytes);
}

std::optional<SymSize> allocatedByOp(const OpEvent &Op) {
  return addSizes(Op.AllocatedBytes,
                  (Op.TransientTotalBytes ? Op.TransientTotalBytes : Op.TransientBytes)
                      .value_or(SymSize(0)));
}

void foldRepeatedIterations(FunctionTrace &T) {
  size_t N = T.Statements.size();
  std::vector<unsigned> Root(N);
  bool Any = false;
  for (unsigned S = 0; S < N; ++S) {
    unsigned R = S;
    while (T.Statements[R].RepeatOf >= 0)
      R = static_cast<unsigned>(T.Statements[R].RepeatOf);
    Root[S] = R;
    Any |= R != S;
  }
  if (!Any)
    return;
  std::vector<unsigned> NewIndex(N, 0);
  unsigned Kept = 0;
  for (unsigned S = 0; S < N; ++S)
    if (Root[S] == S)
      NewIndex[S] = Kept++;
  auto MapStatement = [&](unsigned S) { return NewIndex[Root[std::min<size_t>(S, N - 1)]]; };

  // A statement's live bytes after it: the most over its copies.
  for (unsigned S = 0; S < N; ++S) {
    if (Root[S] == S)
      continue;
    Statement &First = T.Statements[Root[S]];
    const Statement &Copy = T.Statements[S];
    First.LiveKnown = First.LiveKnown && Copy.LiveKnown;
    Tri Higher = sizeGt(Copy.LiveBytesAfter, First.LiveBytesAfter);
    if (Higher == Tri::True)
      First.LiveBytesAfter = Copy.LiveBytesAfter;
    else if (Higher == Tri::Unknown)
      First.LiveBytesAfter = SymSize::max(First.LiveBytesAfter, Copy.LiveBytesAfter);
  }

  // Ops: a copy's op becomes the op it repeats (markRepeats made sure
  // their statements have as many).
  std::vector<OpId> NewOp(T.Ops.size(), NoOp);
  OpId NextOp = 0;
  for (const OpEvent &Op : T.Ops)
    if (Root[Op.Statement] == Op.Statement)
      NewOp[Op.Id] = NextOp++;
  for (unsigned S = 0; S < N; ++S)
    if (Root[S] != S)
      for (size_t K = 0; K < T.Statements[S].Ops.size(); ++K)
        NewOp[T.Statements[S].Ops[K]] = NewOp[T.Statements[Root[S]].Ops.at(K)];
  auto MapOp = [&](OpId Id) { return Id == NoOp ? NoOp : NewOp.at(Id); };

  std::vector<OpEvent> Ops;
  for (OpEvent &Op : T.Ops)
    if (Root[Op.Statement] == Op.Statement) {
      Op.Id = MapOp(Op.Id);
      Op.Statement = MapStatement(Op.Statement);
      Ops.push_back(std::move(Op));
    }
  T.Ops = std::move(Ops);
  std::vector<Statement> Statements;
  for (unsigned S = 0; S < N; ++S)
    if (Root[S] == S) {
      Statement St = std::move(T.Statements[S]);
      for (OpId &Id : St.Ops)
        Id = MapOp(Id);
      Statements.push_back(std::move(St));
    }
  T.Statements = std::move(Statements);
  for (ValueInfo &V : T.Values)
    V.Producer = MapOp(V.Producer);
  for (StorageInfo &S : T.Storages) {
    S.Producer = MapOp(S.Producer);
    if (S.ReleasedAfter)
      S.ReleasedAfter = MapStatement(*S.ReleasedAfter);
  }
  std::vector<Binding> Bindings;
  for (Binding &B : T.Bindings) {
    if (Root[B.Statement] != B.Statement)
      continue;
    B.Statement = MapStatement(B.Statement);
    if (B.HeldUntil)
      B.HeldUntil = MapStatement(*B.HeldUntil);
    Bindings.push_back(std::move(B));
  }
  T.Bindings = std::move(Bindings);
  T.Summary.PeakStatement = MapStatement(T.Summary.PeakStatement);

  // What each copy found unknown, said once.
  std::set<std::tuple<unsigned, unsigned, std::string, std::string>> Seen;
  std::vector<Unknown> Unknowns;
  for (Unknown &U : T.Unknowns)
    if (Seen.insert({U.Where.Line, U.Where.Column, U.What, U.Reason}).second)
      Unknowns.push_back(std::move(U));
  T.Unknowns = std::move(Unknowns);
  T.Summary.Unknowns = static_cast<int>(T.Unknowns.size());
  std::set<std::pair<unsigned, unsigned>> SeenDevice;
  std::vector<DeviceMention> Devices;
  for (DeviceMention &D : T.Devices)
    if (SeenDevice.insert({D.Where.Line, D.Where.Column}).second)
      Devices.push_back(std::move(D));
  T.Devices = std::move(Devices);
  for (ModuleSummary &M : T.Modules) {
    std::set<unsigned> Lines;
    std::vector<ModuleSummary::Forward> Forwards;
    for (const ModuleSummary::Forward &F : M.Forwards)
      if (Lines.insert(F.Line).second)
        Forwards.push_back(F);
    M.Forwards = std::move(Forwards);
  }
}

} // namespace tma
