#include "model/Assume.h"
#include "model/ShapeEnv.h"

#include <cctype>
#include <cstdint>

namespace tma {

namespace {

std::string_view trim(std::string_view S) {
  while (!S.empty() && std::isspace(static_cast<unsigned char>(S.front())))
    S.remove_prefix(1);
  while (!S.empty() && std::isspace(static_cast<unsigned char>(S.back())))
    S.remove_suffix(1);
  return S;
}

} // namespace

std::optional<AssumeBinding> parseAssumeBinding(std::string_view Text,
                                                std::string &Error) {
  std::string Quoted = "'" + std::string(Text) + "'";
  size_t Eq = Text.find('=');
  if (Eq == std::string_view::npos) {
    Error = Quoted + " is not SYM=VALUE (e.g. B=16, 'x.size(1)=2048')";
    return std::nullopt;
  }
  std::string_view Name = trim(Text.substr(0, Eq));
  std::string_view Value = trim(Text.substr(Eq + 1));
  if (Name.empty()) {
    Error = Quoted + " names no symbol: write SYM=VALUE (e.g. B=16)";
    return std::nullopt;
  }
  std::string ParseError;
  std::optional<SymSize> Sym = parseSymSize(Name, &ParseError);
  std::optional<std::string> Symbol = Sym ? Sym->symbolName() : std::nullopt;
  if (!Symbol) {
    Error = Quoted + ": '" + std::string(Name) +
            "' is not a symbol (a parameter such as n_heads, a size such "
            "as x.size(1), or the table's name for one, such as B)";
    return std::nullopt;
  }
  bool Digits = !Value.empty();
  for (char C : Value)
    Digits &= std::isdigit(static_cast<unsigned char>(C)) != 0;
  if (!Digits) {
    Error = Quoted + ": the value '" + std::string(Value) +
            "' is not a non-negative integer";
    return std::nullopt;
  }
  int64_t V = 0;
  for (char C : Value) {
    int D = C - '0';
    if (V > (INT64_MAX - D) / 10) {
      Error = Quoted + ": the value " + std::string(Value) +
              " does not fit in int64_t";
      return std::nullopt;
    }
    V = V * 10 + D;
  }
  AssumeBinding B;
  B.Symbol = *Symbol;
  B.Value = V;
  B.Text = *Symbol + "=" + std::to_string(V);
  return B;
}

std::optional<std::vector<AssumeBinding>> parseAssumeList(std::string_view Text,
                                                          std::string &Error) {
  std::vector<AssumeBinding> Out;
  while (true) {
    size_t Sep = Text.find_first_of(",;");
    std::string_view Item = trim(Text.substr(0, Sep));
    if (!Item.empty()) {
      auto B = parseAssumeBinding(Item, Error);
      if (!B)
        return std::nullopt;
      Out.push_back(*B);
    }
    if (Sep == std::string_view::npos)
      break;
    Text.remove_prefix(Sep + 1);
  }
  return Out;
}

std::vector<size_t> applyBindings(std::vector<FunctionTrace> &Traces,
                                  const std::vector<AssumeBinding> &Bindings) {
  std::vector<size_t> Matched(Bindings.size(), 0);
  for (FunctionTrace &T : Traces) {
    if (!T.Env)
      continue;
    for (size_t I = 0; I < Bindings.size(); ++I)
      if (T.Env->bind(Bindings[I].Symbol, Bindings[I].Value))
        ++Matched[I];
  }
  return Matched;
}

} // namespace tma
