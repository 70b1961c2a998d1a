// SymSize printing (the C++ of symbolic.md's grammar, the table's form)
// and parsing (the same grammar back).
#include "model/SymSize.h"
#include "model/SymSizeImpl.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <functional>
#include <numeric>
#include <ostream>
#include <set>

namespace tma {

using namespace detail;

// --------------------------------------------------------------- printing --

namespace {

struct Printer {
  bool Cpp;
  const std::function<std::string(const std::string &)> *Display;

  std::string symbol(const std::string &Name) const {
    if (!Cpp && Display && *Display) {
      std::string D = (*Display)(Name);
      if (!D.empty())
        return D;
    }
    return Name;
  }

  /// An operand of `/` or `%`: parenthesised unless it is one plain factor.
  std::string operand(const SymSize &S) const {
    std::string Text = print(S);
    if (auto C = S.constant())
      return *C >= 0 ? Text : "(" + Text + ")";
    const SymAtom *A = soleAtom(S);
    if (A && A->Kind != AtomKind::FloorDiv && A->Kind != AtomKind::Mod)
      return Text;
    return "(" + Text + ")";
  }

  std::string atom(const SymAtom &A, bool InProduct) const {
    switch (A.Kind) {
    case AtomKind::Symbol:
      return symbol(A.Name);
    case AtomKind::FloorDiv:
    case AtomKind::Mod: {
      std::string Text = operand(A.Args[0]) +
                         (A.Kind == AtomKind::FloorDiv ? " / " : " % ") +
                         operand(A.Args[1]);
      return InProduct ? "(" + Text + ")" : Text;
    }
    case AtomKind::Max:
    case AtomKind::Min: {
      const char *Name = A.Kind == AtomKind::Max ? "max" : "min";
      std::vector<SymSize> Args = A.Args;
      std::stable_partition(Args.begin(), Args.end(),
                            [](const SymSize &S) { return !S.isConstant(); });
      if (!Cpp) {
        std::string Text = std::string(Name) + "(";
        for (size_t I = 0; I < Args.size(); ++I)
          Text += (I ? ", " : "") + print(Args[I]);
        return Text + ")";
      }
      // n-ary as nested binary calls, innermost last; the constant (there
      // is at most one) last, as people write std::max(n, 1).
      std::string Text = print(Args.back());
      for (size_t I = Args.size() - 1; I-- > 0;)
        Text = std::string("std::") + Name + "<int64_t>(" + print(Args[I]) +
               ", " + Text + ")";
      return Text;
    }
    }
    return "?";
  }

  /// |Coeff| * factors, without the sign. A leading minus sign would bind
  /// to the dividend of a lone division, so then it is parenthesised.
  std::string term(const SymTerm &T, bool LeadingMinus = false) const {
    uint64_t Mag = T.Coeff < 0 ? 0 - uint64_t(T.Coeff) : uint64_t(T.Coeff);
    std::string Coeff = std::to_string(Mag);
    if (T.Factors.empty())
      return Coeff;
    size_t Count = 0;
    for (const SymFactor &F : T.Factors)
      Count += F.Exp;
    bool InProduct = Count > 1 || Mag != 1 || LeadingMinus;
    std::string Sep = Cpp ? " * " : "·";
    std::string Text;
    for (const SymFactor &F : T.Factors) {
      std::string A = atom(*F.Atom, InProduct);
      if (Cpp) {
        for (uint32_t E = 0; E < F.Exp; ++E)
          Text += (Text.empty() ? "" : Sep) + A;
      } else {
        Text += (Text.empty() ? "" : Sep) + A;
        if (F.Exp > 1)
          Text += "^" + std::to_string(F.Exp);
      }
    }
    if (Mag == 1)
      return Text;
    return Cpp ? Text + Sep + Coeff : Coeff + Sep + Text;
  }

  std::string print(const SymSize &S) const {
    if (S.isError())
      return "?";
    if (auto C = S.constant())
      return std::to_string(*C);
    const std::vector<SymTerm> &Terms = S.expr()->Terms;
    std::string Text;
    // Positive terms first so `8 - n` does not print as `-n + 8`.
    for (bool Positive : {true, false})
      for (const SymTerm &T : Terms) {
        if ((T.Coeff > 0) != Positive)
          continue;
        if (Text.empty())
          Text = Positive ? term(T) : "-" + term(T, /*LeadingMinus=*/true);
        else
          Text += (Positive ? " + " : " - ") + term(T);
      }
    return Text;
  }
};

} // namespace

std::ostream &operator<<(std::ostream &OS, const SymSize &S) {
  return OS << S.toCpp();
}

std::string SymSize::toCpp() const {
  return Printer{true, nullptr}.print(*this);
}

std::string SymSize::toTable(
    const std::function<std::string(const std::string &)> &DisplayName) const {
  return Printer{false, &DisplayName}.print(*this);
}

// ---------------------------------------------------------------- parsing --

namespace {

class SymParser {
public:
  explicit SymParser(std::string_view Text) : S(Text) {}

  std::optional<SymSize> parse(std::string *Error) {
    std::optional<SymSize> R;
    if (S.size() > 65536)
      fail("expression longer than 64 KiB");
    else
      R = expr();
    skipSpace();
    if (Err.empty() && P != S.size())
      fail("unexpected '" + std::string(1, S[P]) + "'");
    if (!Err.empty()) {
      if (Error)
        *Error = "at offset " + std::to_string(ErrAt) + ": " + Err;
      return std::nullopt;
    }
    if (R && R->isError()) {
      if (Error)
        *Error = R->errorReason();
      return std::nullopt;
    }
    return R;
  }

private:
  std::string_view S;
  size_t P = 0;
  int Depth = 0;
  std::string Err;
  size_t ErrAt = 0;

  std::optional<SymSize> fail(std::string Why) {
    if (Err.empty()) {
      Err = std::move(Why);
      ErrAt = P;
    }
    return std::nullopt;
  }
  void skipSpace() {
    while (P < S.size() && std::isspace((unsigned char)S[P]))
      ++P;
  }
  bool eat(std::string_view Tok) {
    skipSpace();
    if (S.substr(P, Tok.size()) != Tok)
      return false;
    P += Tok.size();
    return true;
  }
  bool expect(std::string_view Tok) {
    if (eat(Tok))
      return true;
    fail("expected '" + std::string(Tok) + "'");
    return false;
  }
  static bool identStart(char C) {
    return std::isalpha((unsigned char)C) || C == '_';
  }
  static bool identChar(char C) {
    return std::isalnum((unsigned char)C) || C == '_';
  }
  std::string ident() {
    skipSpace();
    size_t B = P;
    while (P < S.size() &&
           (identChar(S[P]) || (S.substr(P, 2) == "::" && P + 2 < S.size() &&
                                identStart(S[P + 2]))))
      P += S[P] == ':' ? 2 : 1;
    return std::string(S.substr(B, P - B));
  }
  std::optional<int64_t> number() {
    skipSpace();
    int64_t V = 0;
    size_t B = P;
    while (P < S.size() && std::isdigit((unsigned char)S[P])) {
      if (mulOverflows(V, 10, V) || addOverflows(V, S[P] - '0', V)) {
        fail("integer literal out of range");
        return std::nullopt;
      }
      ++P;
    }
    if (P == B) {
      fail("expected a number");
      return std::nullopt;
    }
    // Integer suffixes as C++ writes them (4096L, 2ll, 8u).
    while (P < S.size() && S[P] != '\0' && std::strchr("lLuU", S[P]))
      ++P;
    return V;
  }

  std::optional<SymSize> expr() {
    if (++Depth > 200) {
      fail("expression nests too deeply");
      --Depth;
      return std::nullopt;
    }
    auto L = term();
    while (L) {
      if (eat("+")) {
        auto R = term();
        if (!R)
          L.reset();
        else
          L = *L + *R;
      } else if (eat("-")) {
        auto R = term();
        if (!R)
          L.reset();
        else
          L = *L - *R;
      } else
        break;
    }
    --Depth;
    return L;
  }

  std::optional<SymSize> term() {
    auto L = unary();
    while (L) {
      char Op = 0;
      if (eat("*"))
        Op = '*';
      else if (eat("/"))
        Op = '/';
      else if (eat("%"))
        Op = '%';
      else
        break;
      auto R = unary();
      if (!R)
        return std::nullopt;
      if (Op != '*' && R->constant() == 0)
        return fail(Op == '/' ? "division by zero" : "modulo by zero");
      L = Op == '*'   ? *L * *R
          : Op == '/' ? SymSize::floorDiv(*L, *R)
                      : SymSize::mod(*L, *R);
    }
    return L;
  }

  std::optional<SymSize> unary() {
    if (++Depth > 200) {
      --Depth;
      return fail("expression nests too deeply");
    }
    std::optional<SymSize> R;
    if (eat("-")) {
      R = unary();
      if (R)
        R = -*R;
    } else if (eat("+")) {
      R = unary();
    } else {
      R = primary();
    }
    --Depth;
    return R;
  }

  std::optional<SymSize> primary() {
    skipSpace();
    if (P >= S.size())
      return fail("unexpected end of expression");
    if (std::isdigit((unsigned char)S[P])) {
      auto N = number();
      if (!N)
        return std::nullopt;
      return SymSize(*N);
    }
    if (eat("(")) {
      auto R = expr();
      if (!R || !expect(")"))
        return std::nullopt;
      return R;
    }
    if (!identStart(S[P]))
      return fail("unexpected '" + std::string(1, S[P]) + "'");
    std::string Name = ident();
    if (Name == "std::max" || Name == "std::min") {
      if (eat("<")) {
        std::string T = ident();
        if (T.empty() || !expect(">"))
          return fail("expected a type in std::max<...>");
      }
      if (!expect("("))
        return std::nullopt;
      auto A = expr();
      if (!A || !expect(","))
        return std::nullopt;
      auto B = expr();
      if (!B || !expect(")"))
        return std::nullopt;
      return Name == "std::max" ? SymSize::max(*A, *B) : SymSize::min(*A, *B);
    }
    // A symbol: identifier and member calls with at most one integer
    // argument, spelled without spaces (`x.size(1)`, `x.storage().nbytes()`).
    while (eat(".")) {
      std::string Member = ident();
      if (Member.empty())
        return fail("expected a member name");
      Name += "." + Member;
      if (!expect("("))
        return std::nullopt;
      Name += "(";
      if (!eat(")")) {
        auto N = number();
        if (!N || !expect(")"))
          return std::nullopt;
        Name += std::to_string(*N) + ")";
      } else {
        Name += ")";
      }
    }
    return SymSize::symbol(Name);
  }
};

} // namespace

std::optional<SymSize> parseSymSize(std::string_view Text, std::string *Error) {
  return SymParser(Text).parse(Error);
}


} // namespace tma
