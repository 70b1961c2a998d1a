#include "model/Interpreter.h"

#include <set>
#include "model/ShapeEnv.h"
#include "model/Decide.h"
#include "model/Geometry.h"

#include <algorithm>

namespace tma {

const char *opKindName(OpKind K) {
  switch (K) {
  case OpKind::Alloc: return "alloc";
  case OpKind::Copy: return "copy";
  case OpKind::View: return "view";
  case OpKind::Self: return "self";
  case OpKind::InPlace: return "inplace";
  case OpKind::Throws: return "throws";
  case OpKind::Unknown: return "unknown";
  case OpKind::Use: return "use";
  }
  return "unknown";
}

Interpreter::Interpreter(std::string File, std::string Function,
                         SourceSpan Where) {
  Trace.File = std::move(File);
  Trace.Name = std::move(Function);
  Trace.Where = std::move(Where);
  Scopes.emplace_back();
}

void Interpreter::beginStatement(const Statement &S) {
  if (InStatement)
    endStatement();
  Trace.Statements.push_back(S);
  InStatement = true;
}

void Interpreter::endStatement() {
  if (!InStatement)
    return;
  for (StorageId S : Temporaries)
    release(S);
  Temporaries.clear();
  dropGraphsOfStatement();
  Statement &S = Trace.Statements.back();
  S.LiveBytesAfter = LiveBytes;
  S.LiveKnown = UnknownLive == 0;
  InStatement = false;
}

void Interpreter::dropTemporary(StorageId S) {
  auto It = std::find(Temporaries.begin(), Temporaries.end(), S);
  if (It == Temporaries.end())
    return;
  Temporaries.erase(It);
  release(S);
}

void Interpreter::enterScope() { Scopes.emplace_back(); }

void Interpreter::exitScope() {
  if (Scopes.empty())
    return;
  for (const std::string &Key : Scopes.back()) {
    auto It = Names.find(Key);
    if (It == Names.end())
      continue;
    endBinding(Key, /*AtScopeEnd=*/true);
    release(value(It->second).Storage, /*AtScopeEnd=*/true);
    Names.erase(It);
  }
  Scopes.pop_back();
}

unsigned Interpreter::currentStatement() const {
  return Trace.Statements.empty()
             ? 0
             : static_cast<unsigned>(Trace.Statements.size() - 1);
}

void Interpreter::endBinding(const std::string &Key, bool AtScopeEnd) {
  auto It = CurrentBinding.find(Key);
  if (It == CurrentBinding.end())
    return;
  Binding &B = Trace.Bindings[It->second];
  B.HeldUntil = currentStatement();
  B.HeldToScopeEnd = AtScopeEnd;
  CurrentBinding.erase(It);
}

void Interpreter::retain(StorageId S) {
  if (S == NoStorage)
    return;
  if (RefCount[S]++ > 0 || Trace.Storages[S].External)
    return;
  // Held again after a release: its lifetime is open once more.
  Trace.Storages[S].ReleasedAfter.reset();
  Trace.Storages[S].ReleasedAtScopeEnd = false;
  Trace.StorageEvents.push_back({StorageEvent::Allocated, S});
  auto Bytes = Trace.Storages[S].Bytes;
  // A sum past int64 is as unknown as an unknown size: counted as such.
  auto Sum = addSizes(LiveBytes, Bytes);
  Trace.Storages[S].CountedAsUnknown = !Sum;
  if (Sum)
    LiveBytes = *Sum;
  else
    ++UnknownLive;
}

void Interpreter::release(StorageId S, bool AtScopeEnd) {
  if (S == NoStorage || RefCount[S] == 0)
    return;
  if (--RefCount[S] > 0 || Trace.Storages[S].External)
    return;
  Trace.Storages[S].ReleasedAfter = currentStatement();
  Trace.Storages[S].ReleasedAtScopeEnd = AtScopeEnd;
  Trace.StorageEvents.push_back({StorageEvent::Released, S});
  if (!Trace.Storages[S].CountedAsUnknown)
    LiveBytes -= *Trace.Storages[S].Bytes;
  else
    --UnknownLive;
}

void Interpreter::notePeak(std::optional<SymSize> ExtraBytes) {
  if (UnknownLive > 0 || !ExtraBytes)
    PeakKnown = false;
  auto Now = addSizes(LiveBytes, ExtraBytes.value_or(SymSize(0)));
  notePeakInWindows(PeakWindows, UnknownLive > 0 || !ExtraBytes ? std::nullopt : Now);
  if (!Now) {
    PeakKnown = false;
    return;
  }
  // Reaching the peak again is enough to name this statement: when the
  // facts show Now >= PeakBytes (4·n after nothing), no size is assumed
  // to tell a tie from a rise.
  Tri Higher = sizeGtFromFacts(*Now, PeakBytes);
  if (Higher == Tri::Unknown && sizeGeFromFacts(*Now, PeakBytes) == Tri::True)
    Higher = Tri::True;
  if (Higher == Tri::Unknown)
    Higher = sizeGt(*Now, PeakBytes);
  if (Higher == Tri::Unknown) {
    // Which moment is the peak depends on the sizes: the peak is the
    // larger of the two, and its statement is not one statement.
    PeakBytes = SymSize::max(PeakBytes, *Now);
    Trace.Summary.PeakStatementKnown = false;
    Trace.Summary.PeakParts.reset();
    return;
  }
  if (Higher == Tri::True) {
    PeakBytes = *Now;
    Trace.Summary.PeakStatement =
        Trace.Statements.empty() ? 0 : Trace.Statements.size() - 1;
    Trace.Summary.PeakLive.clear();
    Trace.Summary.PeakSavedForBackward.clear();
    PeakBreakdown Parts;
    bool PartsKnown = true;
    auto Add = [&](SymSize &Part, const std::optional<SymSize> &Bytes) {
      std::optional<SymSize> Sum = addSizes(Part, Bytes);
      PartsKnown = PartsKnown && Sum.has_value();
      if (Sum)
        Part = *Sum;
    };
    Add(Parts.Temporaries, ExtraBytes);
    for (size_t S = 0; S < RefCount.size(); ++S)
      if (RefCount[S] > 0 && !Trace.Storages[S].External) {
        const StorageInfo &Info = Trace.Storages[S];
        Trace.Summary.PeakLive.push_back(static_cast<StorageId>(S));
        auto Saved = SavedRefs.find(static_cast<StorageId>(S));
        bool OnlyAutograd = Saved != SavedRefs.end() && Saved->second >= RefCount[S];
        if (OnlyAutograd)
          Trace.Summary.PeakSavedForBackward.push_back(static_cast<StorageId>(S));
        Add(OnlyAutograd && Info.Role == StorageRole::Tensor
                ? Parts.SavedForBackward
            : Info.Role == StorageRole::Parameter      ? Parts.Parameters
            : Info.Role == StorageRole::Gradient       ? Parts.Gradients
            : Info.Role == StorageRole::OptimizerState ? Parts.OptimizerState
            : Info.Role == StorageRole::Scratch        ? Parts.Temporaries
                                                       : Parts.Tensors,
            Info.Bytes);
      }
    if (PartsKnown)
      Trace.Summary.PeakParts = Parts;
    else
      Trace.Summary.PeakParts.reset();
  }
}

ValueId Interpreter::external(const TensorValue &V,
                              std::optional<SymSize> Bytes) {
  StorageInfo Info;
  Info.Id = static_cast<StorageId>(Trace.Storages.size());
  Info.External = true;
  Info.Bytes = std::move(Bytes);
  Info.Dev = V.Dev;
  Trace.Storages.push_back(Info);
  RefCount.push_back(0);
  ValueInfo VI;
  VI.Value = V;
  VI.Value.Storage = Info.Id;
  Trace.Values.push_back(VI);
  return static_cast<ValueId>(Trace.Values.size() - 1);
}

ValueId Interpreter::apply(const std::string &Op, const SourceSpan &Where,
                           const SourceSpan &NameWhere,
                           const std::vector<ValueId> &Inputs,
                           const OpOutcome &RuleOutcome,
                           std::vector<SourceSpan> ArgWhere) {
  const OpOutcome Outcome = checkedOutcome(RuleOutcome);
  OpEvent E;
  E.ArgWhere = std::move(ArgWhere);
  E.Id = static_cast<OpId>(Trace.Ops.size());
  E.Name = Op;
  E.Where = Where;
  E.NameWhere = NameWhere;
  E.Statement = Trace.Statements.empty() ? 0 : Trace.Statements.size() - 1;
  E.Inputs = Inputs;
  E.Kind = Outcome.Kind;
  E.ReadBytes = Outcome.ReadBytes;
  E.WrittenBytes = Outcome.WrittenBytes;
  E.TransientBytes = Outcome.TransientBytes;
  E.TransientTotalBytes = Outcome.TransientTotalBytes;
  E.Intermediates = Outcome.Intermediates;
  E.Note = Outcome.Note;
  E.Error = Outcome.Error;
  E.DTypeDefaulted = Outcome.DTypeDefaulted;
  E.GradModeOn = Outcome.GradModeOn;
  E.MakesGradLeaf = Outcome.MakesGradLeaf;
  E.Args = Outcome.Args;
  E.Code = Outcome.Code;

  ValueInfo VI;
  VI.Value = Outcome.Value;
  VI.Producer = E.Id;
  for (unsigned K : Outcome.MayBeInputs)
    if (K < Inputs.size() && Inputs[K] >= 0)
      VI.MayBe.push_back(Inputs[K]);
  switch (Outcome.Kind) {
  case OpKind::View:
  case OpKind::Self:
  case OpKind::InPlace:
    if (Outcome.SharesInput < Inputs.size() && Inputs[Outcome.SharesInput] >= 0) {
      ValueId In = Inputs[Outcome.SharesInput];
      VI.Value.Storage = value(In).Storage;
      if (Outcome.Kind != OpKind::View)
        VI.SameTensorAs = tensorOf(In);
    }
    E.AllocatedBytes = 0;
    break;
  case OpKind::Alloc:
  case OpKind::Copy: {
    StorageInfo Info;
    Info.Id = static_cast<StorageId>(Trace.Storages.size());
    Info.Producer = E.Id;
    Info.Dev = Outcome.Value.Dev;
    const TensorValue &V = Outcome.Value;
    if (Outcome.StorageBytes)
      Info.Bytes = Outcome.StorageBytes;
    else if (Outcome.StorageBytesUnknown)
      ; // unknown
    else if (V.Sizes && V.Strides && V.Type)
      Info.Bytes = checkedStorageBytes(*V.Sizes, *V.Strides, itemSize(*V.Type));
    else if (V.Sizes && V.dtypeKnown())
      // Every allocating op lays its output out densely, so the bytes
      // follow from the shape even when the permutation is unknown (and
      // from the element size, when the dtype is a parameter's).
      Info.Bytes = V.logicalBytes();
    E.AllocatedBytes = Info.Bytes;
    Trace.Storages.push_back(Info);
    RefCount.push_back(0);
    VI.Value.Storage = Info.Id;
    retain(Info.Id);
    Temporaries.push_back(Info.Id);
    break;
  }
  case OpKind::Throws:
    setThrows(Outcome.Error);
    break;
  case OpKind::Unknown:
    // Whatever an op we do not model allocates is unknown, so the totals
    // are too (issue 10 item 5).
    totalsUnknown("'" + Op + "' (line " + std::to_string(Where.Line) +
                  ") is not modelled: what it allocates is unknown");
    break;
  case OpKind::Use:
    E.AllocatedBytes = 0; // code we do not follow: nothing of ours
    break;
  }
  Trace.Values.push_back(VI);
  E.Result = static_cast<ValueId>(Trace.Values.size() - 1);
  if ((Outcome.MakesGradLeaf || Outcome.MakesParameter) &&
      VI.Value.Storage != NoStorage)
    Trace.Storages[VI.Value.Storage].Role = StorageRole::Parameter;
  notePeak(Outcome.TransientBytes);
  if (!Outcome.TransientBytes && UnknownTransientWhy.empty())
    UnknownTransientWhy = "'" + Op + "' (line " + std::to_string(Where.Line) + ") " +
                          (Outcome.TransientWhy.empty()
                               ? std::string("allocates inside itself bytes that are unknown")
                               : Outcome.TransientWhy);
  if (!Trace.Statements.empty())
    Trace.Statements.back().Ops.push_back(E.Id);
  if (Outcome.Kind != OpKind::Use &&
      (Outcome.Kind == OpKind::Unknown || !VI.Value.UnknownReason.empty()))
    recordUnknown(Op, VI.Value.UnknownReason.empty() ? "not modelled"
                                                      : VI.Value.UnknownReason,
                  Where);
  Trace.Ops.push_back(E);
  // What autograd saves for backward lives as long as its node
  // (model/Autograd.h, rule 3).
  GradientTape::Recorded Saved = Tape.record(Trace, Trace.Ops.back(), Saves.get());
  if (!Saved.Unknown.empty())
    totalsUnknown(Saved.Unknown);
  std::vector<ValueId> Holds = Saved.Hold;
  // What the op made inside and its nodes keep: storages of their own.
  for (const SymSize &Bytes : Saved.Hidden)
    Holds.push_back(storageOf(Bytes, E.Id, nullptr, Outcome.Value.Dev));
  for (size_t K = 0; K < Holds.size(); ++K) {
    std::string Key = std::string(SavedPrefix) + std::to_string(E.Id) +
                      "#" + std::to_string(K);
    holdUntilReturn(Key, Holds[K]);
    SavedHolds[E.Id].push_back(Key);
    if (StorageId S = value(Holds[K]).Storage; S != NoStorage)
      ++SavedRefs[S];
  }
  // A temporary leaf the node reads lives as long as the graph (its
  // AccumulateGrad holds it); a named one is its name's to keep.
  for (ValueId Leaf : Tape.leavesHeldBy(E.Id)) {
    if (!keysHoldingTensor(Leaf).empty())
      continue;
    std::string Key = std::string(LeafHoldPrefix) + std::to_string(E.Id) + "#" +
                      std::to_string(Leaf);
    holdUntilReturn(Key, Leaf);
    LeafHolds[E.Id].push_back(Key);
    Tape.noteLeafHeld(E.Id, Leaf);
  }
  return E.Result;
}

void Interpreter::dropGraphsOfStatement() {
  if (Trace.Statements.empty() || !Tape.recordsGraphs())
    return;
  // The tensors the function's names may hold. Autograd's own holds do
  // not keep a graph alive: a node's saved output does not hold its
  // grad_fn (no cycle), and a saved input of a later node is in the graph
  // only if that node's result is.
  std::set<ValueId> Held;
  for (const auto &[Key, V] : Names) {
    if (V < 0 || Key.rfind(SavedPrefix, 0) == 0 || Key.rfind(LeafHoldPrefix, 0) == 0)
      continue;
    // A value chosen among tensors (after a branch) may be any of them;
    // one that may be any tensor may be one of the graph's.
    std::vector<ValueId> Work = {V};
    std::set<ValueId> Seen;
    while (!Work.empty()) {
      ValueId W = Work.back();
      Work.pop_back();
      if (W < 0 || !Seen.insert(W).second)
        continue;
      Held.insert(tensorOf(W));
      if (Trace.Values.at(W).MayBeAny)
        return;
      for (ValueId M : Trace.Values.at(W).MayBe)
        Work.push_back(M);
    }
  }
  for (OpId Op : Tape.droppedAtEnd(Trace, currentStatement(), Held)) {
    releaseSavedBy(Op);
    for (const std::string &Key : LeafHolds[Op])
      drop(Key);
    LeafHolds.erase(Op);
  }
}

ValueId Interpreter::storageOf(const SymSize &Bytes, OpId Producer,
                               const TensorValue *Like,
                               std::optional<Device> Dev) {
  StorageInfo Info;
  Info.Id = static_cast<StorageId>(Trace.Storages.size());
  Info.Producer = Producer;
  Info.Bytes = Bytes;
  Info.Dev = Like ? Like->Dev : Dev;
  Trace.Storages.push_back(Info);
  RefCount.push_back(0);
  ValueInfo VI;
  VI.Value = Like ? *Like : unknownTensor("");
  VI.Value.UnknownReason.clear();
  if (VI.Value.Sizes)
    VI.Value.Strides = contiguousStrides(*VI.Value.Sizes);
  VI.Value.Offset = SymSize(0);
  VI.Value.Storage = Info.Id;
  VI.Producer = Producer;
  Trace.Values.push_back(VI);
  return static_cast<ValueId>(Trace.Values.size() - 1);
}

void Interpreter::releaseSavedBy(OpId Op, int Member) {
  auto It = SavedHolds.find(Op);
  if (It == SavedHolds.end())
    return;
  for (size_t K = 0; K < It->second.size(); ++K) {
    std::string &Key = It->second[K];
    if (Key.empty() || (Member >= 0 && static_cast<size_t>(Member) != K))
      continue;
    auto Held = Names.find(Key);
    if (Held != Names.end())
      if (StorageId S = value(Held->second).Storage; S != NoStorage)
        --SavedRefs[S];
    drop(Key);
    Key.clear();
  }
  if (std::all_of(It->second.begin(), It->second.end(),
                  [](const std::string &Key) { return Key.empty(); }))
    SavedHolds.erase(It);
}

void Interpreter::releaseSavedForBackward(ValueId Root) {
  for (OpId Op : Tape.savingAncestors(Trace, Root))
    releaseSavedBy(Op);
}

ValueId Interpreter::unknown(const std::string &What, const std::string &Reason,
                             const SourceSpan &Where, Provenance From) {
  ValueInfo VI;
  VI.Value = unknownTensor(Reason);
  // What code the analysis does not follow returns may be any tensor it
  // could reach (its argument itself, through a std::function or a tuple
  // it built): an in-place change of its geometry may be one to any name.
  VI.MayBeAny = From == Provenance::Computed;
  Trace.Values.push_back(VI);
  recordUnknown(What, Reason, Where);
  if (From == Provenance::Computed)
    totalsUnknown(What + " (line " + std::to_string(Where.Line) +
                  "): " + Reason + ", so what it allocates is unknown");
  return static_cast<ValueId>(Trace.Values.size() - 1);
}

void Interpreter::recordUnknown(const std::string &What,
                                const std::string &Reason,
                                const SourceSpan &Where) {
  Trace.Unknowns.push_back({Where, What, Reason});
}

void Interpreter::bind(const std::string &Key, const std::string &DisplayName,
                       ValueId Value, const SourceSpan &Where,
                       const SourceSpan &NameWhere, bool Reassignment,
                       bool IsParameter) {
  Binding B;
  B.Name = DisplayName;
  B.Where = Where;
  B.NameWhere = NameWhere;
  B.Value = Value;
  B.Statement = Trace.Statements.empty() ? 0 : Trace.Statements.size() - 1;
  B.Reassignment = Reassignment;
  B.IsParameter = IsParameter;
  StorageId S = Value >= 0 ? value(Value).Storage : NoStorage;
  if (S != NoStorage) {
    StorageInfo &Info = Trace.Storages[S];
    if (Info.FirstName.empty())
      Info.FirstName = DisplayName;
    else
      B.BaseName = Info.FirstName;
  }
  place(Key, Value, Scopes.back());
  CurrentBinding[Key] = Trace.Bindings.size();
  Trace.Bindings.push_back(B);
}

// Retain the new value before releasing the old one: `x = x.view(...)`
// must not free x's storage in between. A new name joins Scope.
void Interpreter::place(const std::string &Key, ValueId Value,
                        std::vector<std::string> &Scope) {
  retain(Value >= 0 ? value(Value).Storage : NoStorage);
  auto It = Names.find(Key);
  if (It != Names.end()) {
    endBinding(Key, /*AtScopeEnd=*/false);
    release(value(It->second).Storage);
    It->second = Value;
  } else {
    Names[Key] = Value;
    Scope.push_back(Key);
  }
}

void Interpreter::markStatic() {
  if (!Trace.Bindings.empty())
    Trace.Bindings.back().IsStatic = true;
}


void Interpreter::hold(const std::string &Key, ValueId Value) {
  place(Key, Value, Scopes.back());
}

void Interpreter::rebind(const std::string &Key, ValueId Value) {
  auto It = Names.find(Key);
  if (It == Names.end())
    return;
  retain(value(Value).Storage);
  endBinding(Key, /*AtScopeEnd=*/false);
  release(value(It->second).Storage);
  It->second = Value;
}

void Interpreter::holdInScope(const std::string &Key, ValueId Value,
                              size_t Depth) {
  place(Key, Value, Scopes[std::clamp<size_t>(Depth, 1, Scopes.size()) - 1]);
}

void Interpreter::holdUntilReturn(const std::string &Key, ValueId Value) {
  place(Key, Value, Scopes.front());
}

void Interpreter::drop(const std::string &Key) {
  auto It = Names.find(Key);
  if (It == Names.end())
    return;
  endBinding(Key, /*AtScopeEnd=*/true);
  release(value(It->second).Storage);
  Names.erase(It);
}

void Interpreter::note(const std::string &DisplayName, ValueId Value,
                       const SourceSpan &Where, const SourceSpan &NameWhere) {
  Binding B;
  B.Name = DisplayName;
  B.Where = Where;
  B.NameWhere = NameWhere;
  B.Value = Value;
  B.Statement = Trace.Statements.empty() ? 0 : Trace.Statements.size() - 1;
  B.HoldsValue = false;
  B.HeldUntil = B.Statement;
  StorageId S = Value >= 0 ? value(Value).Storage : NoStorage;
  if (S != NoStorage && !Trace.Storages[S].FirstName.empty())
    B.BaseName = Trace.Storages[S].FirstName;
  Trace.Bindings.push_back(B);
}

ValueId Interpreter::unknownOn(const std::string &What, const std::string &Reason,
                               const SourceSpan &Where, StorageId S) {
  ValueInfo VI;
  VI.Value = unknownTensor(Reason);
  VI.Value.Storage = S;
  if (S != NoStorage)
    VI.Value.Dev = Trace.Storages[S].Dev;
  Trace.Values.push_back(VI);
  recordUnknown(What, Reason, Where);
  return static_cast<ValueId>(Trace.Values.size() - 1);
}

ValueId Interpreter::unknownWith(const std::string &What,
                                 const TensorValue &Layout,
                                 const SourceSpan &Where, StorageId S,
                                 Provenance From) {
  ValueId Id = S != NoStorage ? unknownOn(What, Layout.UnknownReason, Where, S)
                              : unknown(What, Layout.UnknownReason, Where, From);
  TensorValue &V = Trace.Values[Id].Value;
  std::optional<Device> Dev = V.Dev;
  V = Layout;
  V.Storage = S;
  if (S != NoStorage)
    V.Dev = Dev;
  return Id;
}

ValueId Interpreter::anotherLike(ValueId Like, StorageId S,
                                 const std::string &Why) {
  ValueInfo VI = Trace.Values.at(Like);
  VI.SameTensorAs = NoValue;
  VI.MayBe.clear();
  StorageId Own = VI.Value.Storage;
  if (S == NoStorage && Own != NoStorage) {
    // A storage of its own, made by the same op as Like's.
    StorageInfo Info = Trace.Storages.at(Own);
    Info.Id = static_cast<StorageId>(Trace.Storages.size());
    Info.FirstName.clear();
    Info.ReleasedAfter.reset();
    Info.ReleasedAtScopeEnd = false;
    Info.CountedAsUnknown = false;
    Trace.Storages.push_back(Info);
    RefCount.push_back(0);
    S = Info.Id;
  }
  VI.Value.Storage = S;
  if (S == NoStorage)
    VI.Value.UnknownReason = Why;
  Trace.Values.push_back(VI);
  return static_cast<ValueId>(Trace.Values.size() - 1);
}

ValueId Interpreter::undefined(const std::string &How) {
  ValueInfo VI;
  VI.Value = unknownTensor("an undefined tensor (" + How + ")");
  VI.UndefinedBy = How;
  Trace.Values.push_back(VI);
  return static_cast<ValueId>(Trace.Values.size() - 1);
}

std::string Interpreter::nameOf(const std::string &Key) const {
  auto It = CurrentBinding.find(Key);
  return It == CurrentBinding.end() ? "" : Trace.Bindings[It->second].Name;
}

std::vector<std::string>
Interpreter::keysWithPrefix(const std::string &Prefix) const {
  std::vector<std::string> Out;
  for (auto It = Names.lower_bound(Prefix);
       It != Names.end() && It->first.compare(0, Prefix.size(), Prefix) == 0; ++It)
    Out.push_back(It->first);
  return Out;
}

ValueId Interpreter::tensorOf(ValueId V) const {
  if (V < 0)
    return V;
  ValueId Same = Trace.Values.at(V).SameTensorAs;
  return Same == NoValue ? V : Same;
}

std::vector<std::string> Interpreter::keysHoldingTensor(ValueId V) const {
  std::vector<std::string> Out;
  if (V < 0)
    return Out;
  ValueId T = tensorOf(V);
  for (const auto &[Key, Held] : Names)
    if (Held >= 0 && tensorOf(Held) == T)
      Out.push_back(Key);
  return Out;
}

void Interpreter::mayBe(ValueId V, const std::vector<ValueId> &Candidates) {
  if (V < 0)
    return;
  // One of these and nothing else (an unknown() value may be any tensor
  // until it is known to be a choice among them).
  Trace.Values.at(V).MayBeAny = false;
  std::vector<ValueId> &Out = Trace.Values.at(V).MayBe;
  for (ValueId C : Candidates)
    if (C >= 0 && C != V)
      Out.push_back(C);
}

void Interpreter::mayBeAny(ValueId V) {
  if (V >= 0)
    Trace.Values.at(V).MayBeAny = true;
}

bool Interpreter::mayShareTensor(ValueId A, ValueId B) const {
  if (A < 0 || B < 0)
    return false;
  // The tensors each may be, through nested choices; Any: one of them may
  // be any tensor at all.
  bool Any = false;
  auto Tensors = [&](ValueId V) {
    std::set<ValueId> Out;
    std::vector<ValueId> Work = {V};
    while (!Work.empty() && Out.size() < 4096) {
      ValueId W = Work.back();
      Work.pop_back();
      if (W < 0 || !Out.insert(tensorOf(W)).second)
        continue;
      Any = Any || Trace.Values.at(W).MayBeAny ||
            Trace.Values.at(tensorOf(W)).MayBeAny;
      for (ValueId C : Trace.Values.at(W).MayBe)
        Work.push_back(C);
      ValueId T = tensorOf(W);
      if (T != W)
        for (ValueId C : Trace.Values.at(T).MayBe)
          Work.push_back(C);
    }
    return Out;
  };
  std::set<ValueId> FromA = Tensors(A);
  std::set<ValueId> FromB = Tensors(B);
  if (Any)
    return true;
  for (ValueId T : FromB)
    if (FromA.count(T))
      return true;
  return false;
}

ValueId Interpreter::lookup(const std::string &Key) const {
  auto It = Names.find(Key);
  return It == Names.end() ? NoValue : It->second;
}

void Interpreter::mentionDevice(const SourceSpan &Where, bool IsStringLiteral,
                                const Device &Named) {
  // A device variable read twice is one mention in the source.
  for (const DeviceMention &M : Trace.Devices)
    if (M.Where.BeginOffset == Where.BeginOffset &&
        M.Where.EndOffset == Where.EndOffset && M.Where.File == Where.File)
      return;
  Trace.Devices.push_back({Where, IsStringLiteral, Named});
}

void Interpreter::totalsUnknown(const std::string &Reason) {
  if (TotalsUnknownReason.empty())
    TotalsUnknownReason = Reason;
}

void Interpreter::setThrows(const std::string &Message) {
  if (Trace.Throws.empty())
    Trace.Throws = Message;
}

FunctionTrace Interpreter::finish() {
  endStatement();
  while (!Scopes.empty())
    exitScope();
  if (std::string Kept = Tape.finish(Trace); !Kept.empty())
    totalsUnknown(Kept);
  TraceSummary &Sum = Trace.Summary;
  SymSize Total = 0;
  bool TotalKnown = true;
  for (const StorageInfo &S : Trace.Storages) {
    if (S.External)
      continue;
    auto Sum = addSizes(Total, S.Bytes);
    if (Sum)
      Total = *Sum;
    else
      TotalKnown = false;
  }
  std::optional<SymSize> Allocated = UnheldOpAllocations;
  for (const OpEvent &Op : Trace.Ops)
    Allocated = addSizes(Allocated, allocatedByOp(Op));
  Sum.AllocatedBytes = Allocated;
  Sum.UnknownTotalsReason = TotalsUnknownReason;
  if (!TotalKnown && Sum.UnknownTotalsReason.empty())
    Sum.UnknownTotalsReason = "the size of an allocation is unknown";
  if (TotalKnown && TotalsUnknownReason.empty()) {
    Sum.LiveBytesNothingFreed = addSizes(Total, UnheldAllocations);
    if (!Sum.LiveBytesNothingFreed)
      Sum.UnknownTotalsReason = "what the iterations of an unrolled loop allocate "
                                "is unknown or more than int64 counts";
  }
  if (PeakKnown && TotalsUnknownReason.empty())
    Sum.PeakLiveBytes = PeakBytes;
  else if (Sum.UnknownTotalsReason.empty())
    Sum.UnknownTotalsReason = UnknownTransientWhy.empty()
                                  ? "the size of an allocation is unknown"
                                  : UnknownTransientWhy;
  Sum.Unknowns = static_cast<int>(Trace.Unknowns.size());
  return Trace;
}

void simplifySizes(FunctionTrace &T) {
  if (!T.Env)
    return;
  ShapeEnv &Env = *T.Env;
  auto One = [&](SymSize &S) {
    if (S.isSymbolic())
      S = Env.simplify(S);
  };
  auto Opt = [&](std::optional<SymSize> &S) {
    if (S)
      One(*S);
  };
  auto Dims = [&](std::optional<Shape> &D) {
    if (D)
      for (SymSize &S : *D)
        One(S);
  };
  for (ValueInfo &V : T.Values) {
    Dims(V.Value.Sizes);
    Dims(V.Value.Strides);
    Opt(V.Value.Offset);
  }
  for (OpEvent &E : T.Ops) {
    Opt(E.AllocatedBytes);
    Opt(E.ReadBytes);
    Opt(E.WrittenBytes);
    Opt(E.TransientBytes);
  }
  for (StorageInfo &S : T.Storages)
    Opt(S.Bytes);
  for (Statement &S : T.Statements)
    One(S.LiveBytesAfter);
  Opt(T.Summary.LiveBytesNothingFreed);
  Opt(T.Summary.PeakLiveBytes);
}

} // namespace tma
