// View rules (OpTable.def's Views family): bound arguments in, the
// geometry of ViewGeometry.cpp out. Views move no bytes.
#include "model/Ops.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tma {

using namespace detail;

RuleResult rule_transpose(const OpCall &C) {
  const ArgValue &D0 = C.arg(1), &D1 = C.arg(2);
  if (D0.Type == ArgType::Dimname)
    return notModelled(C, "transpose by dimension name is not modelled");
  if (!D0.known() || !D1.known())
    return notModelled(C, "transpose dims could not be derived");
  return one(transpose(C.self().TV, D0.Int, D1.Int));
}

RuleResult rule_t(const OpCall &C) { return one(matrixTranspose(C.self().TV)); }

RuleResult rule_mT(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  if (In.Sizes && In.Sizes->size() < 2)
    return one(throws("tensor.mT is only supported on matrices or batches of "
                      "matrices. Got " +
                      std::to_string(In.Sizes->size()) + "-D tensor."));
  return one(transpose(In, -2, -1));
}

RuleResult rule_permute(const OpCall &C) {
  auto Order = C.arg(1).dims();
  if (!C.arg(1).known() || !Order)
    return notModelled(C, "permute argument could not be derived");
  return one(permute(C.self().TV, *Order));
}

RuleResult rule_movedim(const OpCall &C) {
  const ArgValue &Src = C.arg(1), &Dst = C.arg(2);
  if (!Src.known() || !Dst.known())
    return notModelled(C, "movedim arguments could not be derived");
  auto List = [](const ArgValue &A) -> std::optional<DimList> {
    if (A.K == ArgValue::Kind::Int)
      return DimList{A.Int};
    return A.dims();
  };
  auto S = List(Src), D = List(Dst);
  if (!S || !D)
    return notModelled(C, "movedim arguments could not be derived");
  return one(movedim(C.self().TV, *S, *D));
}

RuleResult rule_view(const OpCall &C) {
  const ArgValue &A = C.arg(1);
  if (A.Type == ArgType::ScalarType) {
    if (!A.known())
      return notModelled(C, "dtype could not be derived");
    return one(viewDtype(C.self().TV, A.Type_));
  }
  if (!A.known())
    return notModelled(C, "view argument could not be derived");
  return one(viewAs(C.self().TV, A.List));
}

/// view_as / expand_as / reshape_as: the other tensor's shape.
static RuleResult asOther(const OpCall &C,
                          OpOutcome (*Rule)(const TensorValue &, const Shape &)) {
  const TensorValue &O = C.arg(1).TV;
  if (!O.Sizes)
    return notModelled(C, "shape of the other tensor is unknown");
  return one(Rule(C.self().TV, *O.Sizes));
}

RuleResult rule_view_as(const OpCall &C) { return asOther(C, viewAs); }
RuleResult rule_expand_as(const OpCall &C) { return asOther(C, expand); }

RuleResult rule_narrow(const OpCall &C) {
  if (C.arg(2).Type == ArgType::Tensor)
    return notModelled(C, "narrow with a tensor start is not modelled");
  const ArgValue &D = C.arg(1), &S = C.arg(2), &L = C.arg(3);
  // start and length may be sizes over the parameters (x.size(3) / 2).
  if (!D.known() || !S.size() || !L.size())
    return notModelled(C, "narrow arguments could not be derived");
  return one(narrow(C.self().TV, D.Int, *S.size(), *L.size()));
}

RuleResult rule_slice(const OpCall &C) {
  const ArgValue &D = C.arg(1), &S = C.arg(2), &E = C.arg(3), &St = C.arg(4);
  // start and end may be sizes over the parameters (x.size(0) - 1).
  auto Opt = [](const ArgValue &A) {
    return A.given() ? A.size() : std::nullopt;
  };
  if ((D.given() && !D.known()) || (St.given() && !St.known()) ||
      (S.given() && !S.size()) || (E.given() && !E.size()))
    return notModelled(C, "slice arguments could not be derived");
  return one(slice(C.self().TV, D.given() ? D.Int : 0, Opt(S), Opt(E),
                   St.given() ? St.Int : 1));
}

RuleResult rule_select(const OpCall &C) {
  const ArgValue &D = C.arg(1), &K = C.arg(2);
  const TensorValue &In = C.self().TV;
  if (D.Type == ArgType::Dimname)
    return notModelled(C, "select by dimension name is not modelled");
  if (D.known() && K.size() && !K.size()->constant()) {
    OpOutcome Out = select(In, D.Int, *K.size());
    if (Out.Kind != OpKind::Unknown)
      return one(Out);
  }
  if (D.known() && !K.known() && In.Sizes && In.Strides && !In.Sizes->empty()) {
    // An index known only at run time (a loop variable): still a view of
    // known shape and strides, at an unknown offset.
    OpOutcome Out = select(In, D.Int, 0);
    if (Out.Kind == OpKind::View) {
      Out.Value.Offset.reset();
      Out.Value.markUnknown("select index could not be derived, so the "
                            "offset is unknown");
      return one(Out);
    }
  }
  if (!D.known() || !K.known())
    return notModelled(C, "select arguments could not be derived");
  return one(select(In, D.Int, K.Int));
}

RuleResult rule_unsqueeze(const OpCall &C) {
  if (!C.arg(1).known())
    return notModelled(C, "unsqueeze dim could not be derived");
  return one(unsqueeze(C.self().TV, C.arg(1).Int));
}

RuleResult rule_squeeze(const OpCall &C) {
  if (C.Args.size() < 2)
    return one(squeeze(C.self().TV, std::nullopt));
  const ArgValue &D = C.arg(1);
  if (D.Type != ArgType::Int)
    return notModelled(C, "squeeze by dimension name is not modelled");
  if (!D.known())
    return notModelled(C, "squeeze dim could not be derived");
  return one(squeeze(C.self().TV, D.Int));
}

// unsqueeze_, squeeze_, transpose_, t_ (TensorShape.cpp): the view op's
// geometry given to self itself through as_strided_, so the same checks
// throw and the same sizes and strides result; nothing is read or written.
static RuleResult restrideSelf(RuleResult View) {
  for (OpOutcome &O : View.Outcomes)
    if (O.Kind == OpKind::View) {
      O.Kind = OpKind::InPlace;
      O.Note = "in place: self takes the new sizes and strides";
    }
  View.SelfTakesResult = true;
  return View;
}

RuleResult rule_unsqueeze_(const OpCall &C) {
  return restrideSelf(rule_unsqueeze(C));
}
RuleResult rule_squeeze_(const OpCall &C) { return restrideSelf(rule_squeeze(C)); }
RuleResult rule_transpose_(const OpCall &C) {
  return restrideSelf(rule_transpose(C));
}
RuleResult rule_t_(const OpCall &C) { return restrideSelf(rule_t(C)); }

RuleResult rule_expand(const OpCall &C) {
  if (!C.arg(1).known())
    return notModelled(C, "expand sizes could not be derived");
  return one(expand(C.self().TV, C.arg(1).List));
}

RuleResult rule_as_strided(const OpCall &C) {
  const ArgValue &Sizes = C.arg(1), &Strides = C.arg(2), &Off = C.arg(3);
  if (!Sizes.known() || !Strides.known() || (Off.given() && !Off.known()))
    return notModelled(C, "as_strided arguments could not be derived");
  return one(asStrided(C.self().TV, Sizes.List, Strides.List,
                       Off.known() ? std::optional<int64_t>(Off.Int)
                                   : std::nullopt,
                       C.SelfStorageBytes));
}

RuleResult rule_diagonal(const OpCall &C) {
  if (C.arg(1).Type == ArgType::Dimname)
    return notModelled(C, "diagonal by dimension name is not modelled");
  const ArgValue &O = C.arg(1), &D1 = C.arg(2), &D2 = C.arg(3);
  for (const ArgValue *A : {&O, &D1, &D2})
    if (A->given() && !A->known())
      return notModelled(C, "diagonal arguments could not be derived");
  return one(diagonal(C.self().TV, O.given() ? O.Int : 0,
                      D1.given() ? D1.Int : 0, D2.given() ? D2.Int : 1));
}

RuleResult rule_unfold(const OpCall &C) {
  const ArgValue &D = C.arg(1), &S = C.arg(2), &St = C.arg(3);
  if (!D.known() || !S.known() || !St.known())
    return notModelled(C, "unfold arguments could not be derived");
  return one(unfold(C.self().TV, D.Int, S.Int, St.Int));
}

RuleResult rule_flatten(const OpCall &C) {
  if (C.Overload != 0)
    return notModelled(C, "flatten by dimension name is not modelled");
  const ArgValue &S = C.arg(1), &E = C.arg(2);
  if ((S.given() && !S.known()) || (E.given() && !E.known()))
    return notModelled(C, "flatten dims could not be derived");
  return one(flatten(C.self().TV, S.given() ? S.Int : 0,
                     E.given() ? E.Int : -1));
}

RuleResult rule_unflatten(const OpCall &C) {
  if (C.Overload != 0)
    return notModelled(C, "unflatten by dimension name is not modelled");
  if (!C.arg(1).known() || !C.arg(2).known())
    return notModelled(C, "unflatten arguments could not be derived");
  return one(unflatten(C.self().TV, C.arg(1).Int, C.arg(2).List));
}

RuleResult rule_alias(const OpCall &C) { return one(alias(C.self().TV)); }

// detach (VariableTypeManual.cpp): a new tensor on the same storage with
// the same geometry, outside autograd; it copies nothing.
RuleResult rule_detach(const OpCall &C) { return one(alias(C.self().TV)); }

// requires_grad_ (VariableTypeManual.cpp): sets the autograd flag of self
// and returns self itself; no geometry, storage or element changes.
RuleResult rule_requires_grad_(const OpCall &C) {
  return one(selfOf(C.self().TV, "requires_grad_ sets a flag: returns self"));
}

} // namespace tma
