// The op table built from OpTable.def: schemas parsed once, names and
// aliases indexed, rules dispatched by opcode.
#include "model/ops/OpTable.h"
#include "model/ops/OpCodes.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>

#include <map>
#include <mutex>

namespace tma {

// Every rule, declared from the table; each family's file defines its own.
// A shared rule (TMA_OP_AS) is declared once per op that uses it.
#define TMA_OP(Id, Family, Result, Tags, ...) RuleResult rule_##Id(const OpCall &);
#define TMA_OP_AS(Id, Rule, ...) RuleResult rule_##Rule(const OpCall &);
#include "model/ops/OpTable.def"

namespace {

ArgType parseType(std::string T) {
  static const std::map<std::string, ArgType> Types = {
      {"Tensor", ArgType::Tensor},         {"Tensor?", ArgType::OptTensor},
      {"Tensor[]", ArgType::TensorList},   {"int", ArgType::Int},
      {"int?", ArgType::OptInt},           {"int[]", ArgType::IntList},
      {"int[]?", ArgType::OptIntList},     {"bool", ArgType::Bool},
      {"float", ArgType::Float},     {"float?", ArgType::Float},
      {"bool?", ArgType::Bool},            {"Scalar", ArgType::Scalar},
      {"Scalar?", ArgType::Scalar},        {"ScalarType", ArgType::ScalarType},
      {"ScalarType?", ArgType::OptScalarType},
      {"MemoryFormat", ArgType::MemoryFormat},
      {"MemoryFormat?", ArgType::MemoryFormat},
      {"TensorOptions", ArgType::Options}, {"Device", ArgType::Device},
      {"Device?", ArgType::Device},        {"Layout?", ArgType::Layout},
      {"Dimname", ArgType::Dimname},       {"Dimname[]", ArgType::DimnameList},
      {"str", ArgType::Str},               {"str?", ArgType::Str},
      {"TensorIndex[]", ArgType::TensorIndexList},
      {"Generator?", ArgType::Generator},  {"Any", ArgType::Any}};
  auto It = Types.find(T);
  if (It == Types.end())
    throw std::logic_error("OpTable.def: unknown schema type '" + T + "'");
  return It->second;
}

std::string trim(std::string S) {
  size_t B = S.find_first_not_of(' '), E = S.find_last_not_of(' ');
  return B == std::string::npos ? "" : S.substr(B, E - B + 1);
}

/// "name(Type arg, Type arg=default, ...)"
Schema parseSchema(const std::string &Text) {
  Schema S;
  S.Text = Text;
  size_t Open = Text.find('('), Close = Text.rfind(')');
  std::string Params = Text.substr(Open + 1, Close - Open - 1);
  if (trim(Params) == "...") {
    S.Variadic = true;
    return S;
  }
  size_t Pos = 0;
  while (Pos < Params.size()) {
    size_t Comma = Params.find(',', Pos);
    std::string P = trim(Params.substr(Pos, Comma == std::string::npos
                                                ? std::string::npos
                                                : Comma - Pos));
    Pos = Comma == std::string::npos ? Params.size() : Comma + 1;
    if (P.empty())
      continue;
    SchemaArg A;
    size_t Eq = P.find('=');
    A.HasDefault = Eq != std::string::npos;
    std::string Decl = trim(P.substr(0, Eq));
    size_t Space = Decl.rfind(' ');
    A.Type = parseType(Decl.substr(0, Space));
    A.Name = Decl.substr(Space + 1);
    S.Args.push_back(A);
  }
  return S;
}

std::vector<std::string> splitNames(const std::string &List) {
  std::vector<std::string> Out;
  size_t Pos = 0;
  while (Pos < List.size()) {
    size_t Comma = List.find(',', Pos);
    Out.push_back(List.substr(Pos, Comma == std::string::npos ? std::string::npos
                                                              : Comma - Pos));
    Pos = Comma == std::string::npos ? List.size() : Comma + 1;
  }
  return Out;
}

struct Table {
  std::vector<OpInfo> Ops;
  std::map<std::string, size_t, std::less<>> ByName;
};

const Table &table() {
  static const Table T = [] {
    Table T;
    auto Add = [&](OpCode Code, OpFamily Family, ResultKind Result,
                   unsigned Tags, const char *Name, const char *Aliases,
                   std::initializer_list<const char *> Schemas) {
      OpInfo Info;
      Info.Code = Code;
      Info.Name = Name;
      Info.Aliases = splitNames(Aliases);
      Info.Family = Family;
      Info.Result = Result;
      Info.Tags = Tags;
      for (const char *S : Schemas)
        Info.Overloads.push_back(parseSchema(S));
      T.ByName[Info.Name] = T.Ops.size();
      for (const std::string &A : Info.Aliases)
        T.ByName[A] = T.Ops.size();
      T.Ops.push_back(std::move(Info));
    };
#define TMA_OP(Id, Family, Result, Tags, Name, Aliases, ...)                   \
  Add(OpCode::Id, OpFamily::Family, ResultKind::Result, Tags, Name, Aliases,   \
      {__VA_ARGS__});
#define TMA_OP_AS(Id, Rule, ...) TMA_OP(Id, __VA_ARGS__)
#include "model/ops/OpTable.def"
    return T;
  }();
  return T;
}

} // namespace

const char *argTypeName(ArgType T) {
  switch (T) {
  case ArgType::Tensor: return "Tensor";
  case ArgType::OptTensor: return "Tensor?";
  case ArgType::TensorList: return "Tensor[]";
  case ArgType::Int: return "int";
  case ArgType::OptInt: return "int?";
  case ArgType::IntList: return "int[]";
  case ArgType::OptIntList: return "int[]?";
  case ArgType::Bool: return "bool";
  case ArgType::Float: return "float";
  case ArgType::Scalar: return "Scalar";
  case ArgType::ScalarType: return "ScalarType";
  case ArgType::OptScalarType: return "ScalarType?";
  case ArgType::MemoryFormat: return "MemoryFormat?";
  case ArgType::Options: return "TensorOptions";
  case ArgType::Device: return "Device";
  case ArgType::Layout: return "Layout?";
  case ArgType::Dimname: return "Dimname";
  case ArgType::DimnameList: return "Dimname[]";
  case ArgType::Str: return "str";
  case ArgType::TensorIndexList: return "TensorIndex[]";
  case ArgType::Generator: return "Generator?";
  case ArgType::Any: return "Any";
  }
  return "Any";
}

const OpInfo *lookupOp(std::string_view Name) {
  const Table &T = table();
  auto It = T.ByName.find(Name);
  return It == T.ByName.end() ? nullptr : &T.Ops[It->second];
}

const OpInfo &opInfo(OpCode Code) {
  return table().Ops.at(static_cast<size_t>(Code));
}

bool hasTag(std::string_view OpName, OpTag Tag) {
  const OpInfo *Info = lookupOp(OpName);
  return Info && (Info->Tags & Tag);
}

bool hasTag(OpCode Code, OpTag Tag) {
  return Code != NoOpCode && (opInfo(Code).Tags & Tag);
}

const std::vector<OpInfo> &allOps() { return table().Ops; }

const ArgValue &OpCall::arg(size_t K) const {
  static const ArgValue Absent;
  return K < Args.size() ? Args[K] : Absent;
}

const ArgValue *ArgValue::option(const std::string &Name) const {
  if (K != Kind::NNOptions || !Named)
    return nullptr;
  auto It = Named->Values.find(Name);
  return It == Named->Values.end() ? nullptr : &It->second;
}

size_t OpCall::selfIndex() const {
  if (Op && Overload < Op->Overloads.size()) {
    const Schema &S = Op->Overloads[Overload];
    for (size_t K = 0; K < S.Args.size(); ++K)
      if (S.Args[K].Name == "self")
        return K;
  }
  return 0;
}

const std::string &OpCall::argName(size_t K) const {
  static const std::string None;
  if (!Op || Overload >= Op->Overloads.size() ||
      K >= Op->Overloads[Overload].Args.size())
    return None;
  return Op->Overloads[Overload].Args[K].Name;
}

RuleResult one(OpOutcome Out, std::string Name) {
  RuleResult R;
  R.Outcomes.push_back(std::move(Out));
  R.Name = std::move(Name);
  return R;
}

RuleResult notModelled(const OpCall &C, const std::string &Why) {
  RuleResult R = notModelledOnAll(C, Why);
  R.Inputs = std::vector<size_t>{C.selfIndex()};
  // An op that returns a view of self whatever its other arguments are
  // (narrow, select, view, permute, ...) still does when they are not
  // known: it shares self's storage (what it keeps alive), is on its
  // device, has its dtype unless an argument sets one (view(dtype)), and
  // moves no element. Only its geometry is unknown.
  const ArgValue &Self = C.self();
  if (C.Op && C.Op->Result == ResultKind::View &&
      Self.K == ArgValue::Kind::Tensor) {
    OpOutcome Out = detail::viewOf(Self.TV);
    const Schema &S = C.Op->Overloads[C.Overload];
    if (std::any_of(S.Args.begin(), S.Args.end(), [](const SchemaArg &A) {
          return A.Type == ArgType::ScalarType || A.Type == ArgType::OptScalarType;
        })) {
      Out.Value.Type.reset();
      Out.Value.TypeOf.clear();
    }
    Out.Value.UnknownReason = Why;
    R.Outcomes = {Out};
  }
  return R;
}

RuleResult notModelledOnAll(const OpCall &C, const std::string &Why) {
  OpOutcome Out = unmodelled(C.Written);
  Out.Value.UnknownReason = Why;
  return one(Out);
}

static RuleResult dispatch(const OpCall &C) {
  switch (C.Op->Code) {
#define TMA_OP(Id, Family, Result, Tags, ...)                                  \
  case OpCode::Id:                                                             \
    return rule_##Id(C);
#define TMA_OP_AS(Id, Rule, ...)                                               \
  case OpCode::Id:                                                             \
    return rule_##Rule(C);
#include "model/ops/OpTable.def"
  case OpCode::NumOps:
    break;
  }
  return notModelled(C, "'" + C.Written + "' is not modelled");
}

RuleResult applyRule(const OpCall &C) {
  RuleResult R = dispatch(C);
  for (OpOutcome &Out : R.Outcomes) {
    Out.Code = C.Op->Code;
    // A view-or-copy op returns self itself for some inputs (to() that
    // needs no conversion, contiguous() of a contiguous tensor, flatten of
    // one dim, dropout when not training): when its outcome is not known
    // the result may be self, and an in-place change through it may be
    // one to self. Self is the first input (schema order, or notModelled's
    // Inputs).
    if (C.Op->Result == ResultKind::ViewOrCopy && Out.Kind == OpKind::Unknown &&
        Out.MayBeInputs.empty())
      Out.MayBeInputs.push_back(0);
  }
  return R;
}

} // namespace tma
