// ATen schemas: parsing (torch/csrc/jit/frontend/function_schema_parser.cpp's
// grammar, the part ATen's own ops use) and the result facts their alias
// annotations give. See AtenSchema.h for the design.
#include "model/ops/AtenSchema.h"

#include <algorithm>
#include <array>

namespace tma {
namespace {

std::string_view trimmed(std::string_view S) {
  while (!S.empty() && S.front() == ' ')
    S.remove_prefix(1);
  while (!S.empty() && S.back() == ' ')
    S.remove_suffix(1);
  return S;
}

/// Splits S at the commas outside brackets, parentheses and quotes.
std::vector<std::string_view> topLevelItems(std::string_view S) {
  std::vector<std::string_view> Items;
  int Depth = 0;
  char Quote = 0;
  size_t Start = 0;
  for (size_t K = 0; K < S.size(); ++K) {
    char C = S[K];
    if (Quote) {
      if (C == Quote)
        Quote = 0;
    } else if (C == '"' || C == '\'') {
      Quote = C;
    } else if (C == '(' || C == '[') {
      ++Depth;
    } else if (C == ')' || C == ']') {
      --Depth;
    } else if (C == ',' && Depth == 0) {
      Items.push_back(trimmed(S.substr(Start, K - Start)));
      Start = K + 1;
    }
  }
  std::string_view Last = trimmed(S.substr(Start));
  if (!Last.empty() || !Items.empty())
    Items.push_back(Last);
  return Items;
}

/// The index of the parenthesis that closes the one at Open.
std::optional<size_t> closing(std::string_view S, size_t Open) {
  int Depth = 0;
  char Quote = 0;
  for (size_t K = Open; K < S.size(); ++K) {
    char C = S[K];
    if (Quote) {
      if (C == Quote)
        Quote = 0;
    } else if (C == '"' || C == '\'') {
      Quote = C;
    } else if (C == '(') {
      ++Depth;
    } else if (C == ')' && --Depth == 0) {
      return K;
    }
  }
  return std::nullopt;
}

/// `Tensor(a!)[] out=None`: the type with its alias annotation taken out,
/// the name and the default. Returns false when Item is not one.
bool parseItem(std::string_view Item, bool NameRequired, AtenSchemaArg &Out) {
  std::string_view TypeText = Item;
  int Depth = 0;
  for (size_t K = 0; K < Item.size(); ++K) {
    if (Item[K] == '(')
      ++Depth;
    else if (Item[K] == ')')
      --Depth;
    else if (Item[K] == '=' && Depth == 0) {
      Out.Default = std::string(trimmed(Item.substr(K + 1)));
      TypeText = trimmed(Item.substr(0, K));
      break;
    }
  }
  // The name is the last word unless the alias annotation or a bracket ends
  // the text (an unnamed return: `Tensor(a)`, `Tensor[]`).
  size_t Space = TypeText.rfind(' ');
  bool HasName = Space != std::string_view::npos &&
                 TypeText.find(')', Space) == std::string_view::npos &&
                 TypeText.find(']', Space) == std::string_view::npos;
  if (HasName) {
    Out.Name = std::string(trimmed(TypeText.substr(Space + 1)));
    TypeText = trimmed(TypeText.substr(0, Space));
  } else if (NameRequired) {
    return false;
  }
  if (size_t Open = TypeText.find('('); Open != std::string_view::npos) {
    size_t Close = TypeText.find(')', Open);
    if (Close == std::string_view::npos)
      return false;
    std::string_view Alias = trimmed(TypeText.substr(Open + 1, Close - Open - 1));
    if (size_t Arrow = Alias.find("->"); Arrow != std::string_view::npos)
      Alias = trimmed(Alias.substr(0, Arrow)); // `a -> *`: a list's elements
    if (!Alias.empty() && Alias.back() == '!') {
      Out.IsWrite = true;
      Alias.remove_suffix(1);
    }
    Out.AliasSet = std::string(trimmed(Alias));
    Out.Type = std::string(TypeText.substr(0, Open)) +
               std::string(TypeText.substr(Close + 1));
  } else {
    Out.Type = std::string(TypeText);
  }
  return !Out.Type.empty() && Out.Type.find(' ') == std::string::npos;
}

// ---- The registry: where the annotation does not tell the whole story ----------

/// Annotated as aliasing self, but a copy when the layout or the dtype asks
/// for one (reshape's family, contiguous, to, resolve_*).
constexpr std::array<std::string_view, 11> AliasOrCopyOps = {
    "reshape", "reshape_as", "flatten", "ravel", "contiguous", "to",
    "resolve_conj", "resolve_neg", "unflatten", "expand_copy", "view_copy"};

/// Unannotated, yet returning an input itself or a view of it in some
/// cases (CompositeImplicitAutograd code that returns `self`, or views
/// ATen does not track as aliases).
constexpr std::array<std::string_view, 21> MayReturnInputOps = {
    "atleast_1d", "atleast_2d", "atleast_3d", "sum_to_size", "einsum",
    "broadcast_tensors", "meshgrid", "cartesian_prod", "dropout",
    "feature_dropout", "alpha_dropout", "feature_alpha_dropout", "type_as",
    "to_dense", "chalf", "conj_physical", "diff", "unsafe_split",
    "unsafe_split_with_sizes", "unsafe_chunk", "align_tensors"};

/// ATen's `inplace_view` ops (and resize_/set_, which change geometry and
/// storage alike): in place, they give self new sizes and strides. ATen
/// also tags detach_, which changes only autograd's view metadata.
constexpr std::array<std::string_view, 10> InplaceViewOps = {
    "squeeze_", "unsqueeze_", "t_", "transpose_", "swapdims_", "swapaxes_",
    "as_strided_", "resize_", "resize_as_", "set_"};

template <size_t N>
bool listed(const std::array<std::string_view, N> &List, std::string_view Name) {
  return std::find(List.begin(), List.end(), Name) != List.end();
}

} // namespace

bool AtenSchemaArg::isTensor() const {
  return Type == "Tensor" || Type == "Tensor?";
}

bool AtenSchemaArg::isTensorList() const {
  return Type == "Tensor[]" || Type == "Tensor?[]";
}

std::string AtenSchema::id() const {
  return "aten::" + Name + (Overload.empty() ? "" : "." + Overload);
}

std::optional<size_t> AtenSchema::argument(std::string_view ArgName) const {
  for (size_t K = 0; K < Arguments.size(); ++K)
    if (Arguments[K].Name == ArgName)
      return K;
  return std::nullopt;
}

std::optional<AtenSchema> parseAtenSchema(std::string_view Text,
                                          std::string *Error) {
  auto Fail = [&](const std::string &Why) -> std::optional<AtenSchema> {
    if (Error)
      *Error = Why + ": '" + std::string(Text) + "'";
    return std::nullopt;
  };
  Text = trimmed(Text);
  size_t Open = Text.find('(');
  if (Open == std::string_view::npos || Open == 0)
    return Fail("no argument list");
  AtenSchema S;
  std::string_view Head = Text.substr(0, Open);
  if (Head.substr(0, 6) == "aten::")
    Head.remove_prefix(6);
  if (size_t Dot = Head.find('.'); Dot != std::string_view::npos) {
    S.Name = std::string(Head.substr(0, Dot));
    S.Overload = std::string(Head.substr(Dot + 1));
  } else {
    S.Name = std::string(Head);
  }
  auto Close = closing(Text, Open);
  if (!Close)
    return Fail("unbalanced parentheses");
  bool KwargOnly = false;
  for (std::string_view Item :
       topLevelItems(Text.substr(Open + 1, *Close - Open - 1))) {
    if (Item == "*") {
      KwargOnly = true;
      continue;
    }
    AtenSchemaArg A;
    if (!parseItem(Item, /*NameRequired=*/true, A))
      return Fail("argument '" + std::string(Item) + "' is not 'Type name'");
    A.KwargOnly = KwargOnly;
    S.Arguments.push_back(std::move(A));
  }
  std::string_view Rest = trimmed(Text.substr(*Close + 1));
  if (Rest.substr(0, 2) != "->")
    return Fail("no '->' before the returns");
  Rest = trimmed(Rest.substr(2));
  if (!Rest.empty() && Rest.front() == '(') {
    auto RClose = closing(Rest, 0);
    if (!RClose || *RClose + 1 != Rest.size())
      return Fail("unbalanced returns");
    Rest = Rest.substr(1, Rest.size() - 2);
  }
  for (std::string_view Item : topLevelItems(Rest)) {
    AtenSchemaArg R;
    if (!parseItem(Item, /*NameRequired=*/false, R))
      return Fail("return '" + std::string(Item) + "' is not a type");
    S.Returns.push_back(std::move(R));
  }
  return S;
}

AtenResultFacts atenResultFacts(const AtenSchema &S) {
  AtenResultFacts F;
  F.ChangesSelfGeometry = isInplaceViewOp(S.Name);
  for (size_t K = 0; K < S.Arguments.size(); ++K)
    if (S.Arguments[K].IsWrite)
      F.Written.push_back(K);
  auto Unknown = [&](const std::string &Why) {
    if (F.Why.empty())
      F.Why = Why;
    AtenReturnFact R;
    R.K = AtenReturnFact::Kind::Unknown;
    return R;
  };
  for (const AtenSchemaArg &Ret : S.Returns) {
    bool List = Ret.isTensorList();
    if (!Ret.isTensor() && !List) {
      F.Returns.push_back({AtenReturnFact::Kind::NotTensor, 0});
      continue;
    }
    if (!S.Name.empty() && S.Name.front() == '_') {
      F.Returns.push_back(Unknown("aten::" + S.Name +
                                  " is a private op: its schema is not trusted"));
      continue;
    }
    if (Ret.AliasSet.empty()) {
      F.Returns.push_back(
          listed(MayReturnInputOps, S.Name)
              ? Unknown("aten::" + S.Name +
                        " may return an input or a view of it")
              : AtenReturnFact{AtenReturnFact::Kind::NewStorage, 0});
      continue;
    }
    std::optional<size_t> Source;
    for (size_t K = 0; K < S.Arguments.size() && !Source; ++K)
      if (S.Arguments[K].AliasSet == Ret.AliasSet &&
          (S.Arguments[K].isTensor() || S.Arguments[K].isTensorList()))
        Source = K;
    if (!Source) {
      F.Returns.push_back(Unknown("aten::" + S.Name + "'s return aliases no argument"));
      continue;
    }
    const AtenSchemaArg &Arg = S.Arguments[*Source];
    if (Ret.IsWrite && Arg.IsWrite && Arg.isTensor() && !List) {
      F.Returns.push_back({AtenReturnFact::Kind::Written, *Source});
    } else if (Ret.IsWrite || Arg.IsWrite || !Arg.isTensor()) {
      F.Returns.push_back(Unknown("aten::" + S.Name +
                                  "'s return is written in a way not modelled"));
    } else if (listed(AliasOrCopyOps, S.Name)) {
      F.Returns.push_back(Unknown("aten::" + S.Name +
                                  " is a view or a copy, as the layout decides"));
    } else {
      F.Returns.push_back({List ? AtenReturnFact::Kind::ViewsOf
                                : AtenReturnFact::Kind::ViewOf,
                           *Source});
    }
  }
  return F;
}

std::string noShapeRule(const AtenSchema &S) {
  return "no shape rule for " + S.id();
}

OpOutcome schemaViewOutcome(const AtenSchema &S, const TensorValue &Base) {
  OpOutcome Out;
  Out.Kind = OpKind::View;
  Out.Value.markUnknown(noShapeRule(S));
  Out.Value.Dev = Base.Dev;
  Out.ReadBytes = SymSize(0);
  Out.WrittenBytes = SymSize(0);
  Out.Note = "a view, as " + S.id() + "'s schema says";
  return Out;
}

OpOutcome schemaNewStorageOutcome(const AtenSchema &S, bool HasTensorInputs) {
  OpOutcome Out;
  Out.Kind = HasTensorInputs ? OpKind::Copy : OpKind::Alloc;
  Out.Value.markUnknown(noShapeRule(S));
  Out.TransientBytes = std::nullopt;
  Out.StorageBytesUnknown = true;
  Out.Note = "new storage, as " + S.id() + "'s schema says";
  return Out;
}

bool isInplaceViewOp(std::string_view Name) {
  return listed(InplaceViewOps, Name);
}

} // namespace tma
