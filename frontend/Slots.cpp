// Slots: where a tensor handle lives (a named variable, a member of an
// aggregate local, an element of a tensor vector, a heap object). A
// reference or a pointer resolves to the slot it names, so assigning
// through it rebinds that slot for every name that refers to it.
#include "frontend/FunctionEvaluator.h"
#include "frontend/Invalidation.h"

using namespace clang;

namespace tma {

/// The key of the slot a declaration names: a reference resolves to the
/// slot it was bound to.
std::string FunctionEvaluator::resolveKey(const ValueDecl *D) const {
  std::string K = key(D);
  if (auto It = References.find(K); It != References.end() && It->second.Known &&
                                    It->second.Vector.empty())
    return It->second.Key;
  return K;
}

std::optional<FunctionEvaluator::Slot>
FunctionEvaluator::slotOf(const Expr *E) {
  const Expr *S = strip(E);
  if (!S)
    return std::nullopt;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    const ValueDecl *D = DRE->getDecl();
    if (!isa<VarDecl>(D) && !isa<BindingDecl>(D))
      return std::nullopt;
    if (auto It = References.find(key(D)); It != References.end())
      return It->second;
    Slot Sl;
    Sl.Key = key(D);
    Sl.Display = D->getName().str();
    if (I.lookup(Sl.Key) == NoValue)
      return std::nullopt; // not a tensor this function holds
    return Sl;
  }
  if (const auto *ME = dyn_cast<MemberExpr>(S)) {
    // A member of an aggregate local (`h.t`) or of a pointed-to one.
    const auto *Field = dyn_cast<FieldDecl>(ME->getMemberDecl());
    if (!Field || !isTensorType(Field->getType()))
      return std::nullopt;
    std::optional<Slot> Base;
    if (ME->isArrow()) {
      if (const auto *P = dyn_cast<DeclRefExpr>(strip(ME->getBase())))
        if (auto It = Pointers.find(key(P->getDecl())); It != Pointers.end())
          Base = It->second;
    } else if (const auto *B = dyn_cast<DeclRefExpr>(strip(ME->getBase()))) {
      Base = Slot{};
      Base->Key = resolveKey(B->getDecl());
      Base->Display = B->getDecl()->getName().str();
    }
    if (!Base || !Base->Known)
      return std::nullopt;
    Slot Sl;
    Sl.Key = Base->Key + "." + Field->getName().str();
    Sl.Display = Base->Display + "." + Field->getName().str();
    if (I.lookup(Sl.Key) == NoValue)
      return std::nullopt;
    return Sl;
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(S); UO && UO->getOpcode() == UO_Deref) {
    if (const auto *P = dyn_cast<DeclRefExpr>(strip(UO->getSubExpr())))
      if (auto It = Pointers.find(key(P->getDecl())); It != Pointers.end())
        return It->second;
    Slot Sl;
    Sl.Known = false;
    Sl.Display = "*pointer";
    Sl.Why = "a pointer the analysis does not follow";
    for (const auto &[K, Name] : AddressTaken)
      Sl.Candidates.push_back(K);
    return Sl;
  }
  return std::nullopt;
}

ValueId FunctionEvaluator::readSlot(const Slot &Sl, const Expr *E) {
  if (!Sl.Known) {
    // Some slots are displayed quoted already ('r', '*p').
    std::string Shown = !Sl.Display.empty() && Sl.Display.front() == '\''
                            ? Sl.Display
                            : "'" + Sl.Display + "'";
    return I.unknown(Sl.Display, Shown + " names " + Sl.Why,
                     span(E->getSourceRange()));
  }
  if (!Sl.Vector.empty()) {
    auto It = TensorLists.find(Sl.Vector);
    if (It != TensorLists.end() && Sl.Index < It->second.size())
      return It->second[Sl.Index];
    return I.unknown(Sl.Display, "element of a tensor list not followed",
                     span(E->getSourceRange()),
                     Interpreter::Provenance::External);
  }
  ValueId V = I.lookup(Sl.Key);
  if (V != NoValue)
    return V;
  return I.unknown(Sl.Display, "'" + Sl.Display + "' is not known here",
                   span(E->getSourceRange()), Interpreter::Provenance::External);
}

/// Assigning a tensor to a slot rebinds the handle stored there: every
/// name referring to that slot sees the new tensor.
void FunctionEvaluator::assignSlot(const Slot &Sl, ValueId V,
                                   const SourceSpan &Where,
                                   const SourceSpan &NameWhere) {
  if (!Sl.Known) {
    // Any candidate may have been assigned: none is known any more.
    for (const std::string &K : Sl.Candidates) {
      std::string Name = AddressTaken.count(K) ? AddressTaken[K] : I.nameOf(K);
      forgetSlot(K, Name.empty() ? "a member" : Name,
                 "may be assigned through " + Sl.Display, Where);
    }
    I.totalsUnknown("assignment through " + Sl.Display + " (line " +
                    std::to_string(Where.Line) + ") is not followed");
    return;
  }
  if (!Sl.Vector.empty()) {
    auto It = TensorLists.find(Sl.Vector);
    if (It != TensorLists.end() && Sl.Index < It->second.size())
      It->second[Sl.Index] = V;
  }
  I.bind(Sl.Key, Sl.Display, V, Where, NameWhere, /*Reassignment=*/true);
}

void FunctionEvaluator::forgetSlot(const std::string &Key,
                                   const std::string &Display,
                                   const std::string &Why,
                                   const SourceSpan &Where) {
  if (I.lookup(Key) == NoValue)
    return;
  parameterChanged(Key, Why);
  ValueId V = I.unknown(Display, "'" + Display + "' " + Why, Where,
                        Interpreter::Provenance::External);
  I.rebind(Key, V);
  I.totalsUnknown("'" + Display + "' " + Why);
}

void FunctionEvaluator::parameterChanged(const std::string &Key,
                                         const std::string &Why) {
  // A followed call's parameter names the caller's tensor: it changed too.
  if (Caller)
    for (const clang::ParmVarDecl *P : FD.parameters())
      if (key(P) == Key)
        ChangedParameters.emplace(P, Why);
}

/// `lhs = rhs` for a tensor lhs; the value of the expression is lhs.
ValueId FunctionEvaluator::assignment(const Expr *E, const Expr *LHS,
                                      const Expr *RHS) {
  ValueId V = tensor(RHS);
  if (const auto *Ref = dyn_cast<DeclRefExpr>(strip(RHS));
      Ref && V >= 0) {
    (void)Ref; // a handle copy: the same tensor under another name
  }
  // `std::tie(a, b) = tuple` has no tensor lhs; see expressionStatement.
  std::optional<Slot> Sl = slotOf(LHS);
  const Expr *L = strip(LHS);
  if (!Sl) {
    // A name declared without a tensor (`torch::Tensor a;`) or one we
    // never held: it becomes this value from here on.
    if (const auto *DRE = dyn_cast<DeclRefExpr>(L);
        DRE && isa<VarDecl>(DRE->getDecl()) &&
        DRE->getDecl()->getDeclContext()->isFunctionOrMethod()) {
      Slot New;
      New.Key = resolveKey(DRE->getDecl());
      New.Display = DRE->getDecl()->getName().str();
      Sl = New;
    } else {
      // A reference returned by a method may name any member of its
      // object: none of them is known any more.
      if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(L))
        if (const auto *Obj =
                dyn_cast<DeclRefExpr>(strip(MCE->getImplicitObjectArgument())))
          for (const std::string &K :
               I.keysWithPrefix(resolveKey(Obj->getDecl()) + "."))
            forgetSlot(K, Obj->getDecl()->getName().str() + "'s member",
                       "may be assigned through '" +
                           calleeName(MCE->getMethodDecl()) + "()'",
                       span(E->getSourceRange()));
      // A member of an object we do not follow, a global, a call result:
      // the tensor escapes there and outlives this statement.
      std::string Where = std::to_string(span(E->getSourceRange()).Line);
      I.hold("escaped@" + std::to_string(reinterpret_cast<uintptr_t>(E)), V);
      I.totalsUnknown("assigned to an object the analysis does not follow "
                      "(line " + Where + ")");
      return V;
    }
  }
  assignSlot(*Sl, V, span(E->getSourceRange()), span(L->getSourceRange()));
  // Moving from a name leaves it an undefined tensor.
  if (const auto *CE = dyn_cast<CallExpr>(strip(RHS)))
    if (const FunctionDecl *C = CE->getDirectCallee();
        C && C->getQualifiedNameAsString() == "std::move" && CE->getNumArgs() == 1)
      if (auto From = slotOf(CE->getArg(0)); From && From->Known &&
                                             From->Key != Sl->Key)
        I.rebind(From->Key, I.undefined("moved from"));
  return V;
}

/// A named tensor changed in a way the analysis does not follow: its name
/// becomes unknown and so do the function's totals.
void FunctionEvaluator::forgetObject(const Expr *Object,
                                     const std::string &Why) {
  // A tensor copied into a by-value parameter (`f(a)` for `f(Tensor t)`)
  // is a second handle to a's TensorImpl, and `std::move(a)` bound to a
  // `Tensor &&` is a itself: what changes the parameter changes a.
  const Expr *Handle = handleSource(Object);
  auto Sl = slotOf(Handle);
  if (!Sl || !Sl->Known)
    return;
  forgetTensorAt(Sl->Key, Sl->Display, Why, span(Object->getSourceRange()));
}

void FunctionEvaluator::forgetTensorAt(const std::string &Key,
                                       const std::string &Display,
                                       const std::string &Why,
                                       const SourceSpan &Where) {
  ValueId Old = I.lookup(Key);
  if (Old == NoValue)
    return;
  // Every handle to the same tensor sees the change (`auto y = x;
  // x.resize_(...)` resizes y too).
  ValueId V = I.unknown(Display, "'" + Display + "' " + Why, Where,
                        Interpreter::Provenance::External);
  invalidation().tensorChangedInPlace(Old, V, Why, Where);
  I.totalsUnknown("'" + Display + "' " + Why);
}

/// The tensors a container argument holds (`f(v)`, `f({a, b})`,
/// `f(std::make_tuple(a, 1))` for a `std::vector<Tensor>`, `TensorList` or
/// tuple parameter) are handles the callee may change in place: each, and
/// every handle to it, is unknown after the call.
void FunctionEvaluator::forgetContainedTensors(const Expr *Container,
                                               const std::string &Why) {
  SourceSpan Where = span(Container->getSourceRange());
  std::vector<const Stmt *> Work = {Container};
  while (!Work.empty()) {
    const Stmt *S = Work.back();
    Work.pop_back();
    const auto *E = dyn_cast_or_null<Expr>(S);
    if (!E)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts())) {
      if (isTensorType(DRE->getType())) {
        forgetObject(DRE, Why);
        continue;
      }
      const std::string Key = resolveKey(DRE->getDecl());
      const std::string Name = DRE->getDecl()->getName().str();
      if (!TensorLists.count(Key) && !TensorTuples.count(Key) &&
          holdsTensors(DRE->getType())) {
        // Which tensors it holds is not derived: it may hold any.
        ValueId Element = I.unknown("tensor", "an element of '" + Name +
                                                  "', which is not derived",
                                    Where);
        I.mayBeAny(Element);
        invalidation().tensorChangedInPlace(Element, Element, Why, Where);
        I.totalsUnknown("'" + Name + "' " + Why);
        continue;
      }
      for (auto *Lists : {&TensorLists, &TensorTuples}) {
        auto It = Lists->find(Key);
        if (It == Lists->end())
          continue;
        // A copy: tensorChangedInPlace rewrites the lists as it goes.
        std::vector<ValueId> Elements = It->second;
        for (ValueId Element : Elements) {
          if (Element < 0)
            continue;
          ValueId V = I.unknown("tensor", "an element of '" +
                                              DRE->getDecl()->getName().str() +
                                              "' " + Why,
                                Where, Interpreter::Provenance::External);
          invalidation().tensorChangedInPlace(Element, V, Why, Where);
        }
        I.totalsUnknown("'" + DRE->getDecl()->getName().str() + "' " + Why);
      }
      continue;
    }
    // Look through the copies and conversions that carry the elements
    // (vector and ArrayRef constructors, initializer lists, make_tuple),
    // not into the work of other calls.
    if (const auto *CE = dyn_cast<CallExpr>(E)) {
      const FunctionDecl *F = CE->getDirectCallee();
      std::string Q = F ? F->getQualifiedNameAsString() : "";
      if (Q != "std::make_tuple" && Q != "std::make_pair" &&
          Q != "std::tie" && Q != "std::forward_as_tuple" && Q != "std::move")
        continue;
    }
    for (const Stmt *Child : E->children())
      Work.push_back(Child);
  }
}

} // namespace tma
