// A size as the analysis knows it: an int64, or a canonical expression over
// named symbols, in the spirit of c10::SymInt and the sympy expressions of
// torch's ShapeEnv.
//
// Design:
//  1. A SymSize is a value (cheap to copy; immutable shared nodes), so it can
//     stand wherever an int64_t size stood: sizes, strides, offsets, numel,
//     byte counts. A concrete value carries no node at all.
//  2. Symbols are named by the C++ expression over the function's
//     parameters that they stand for (`x.size(0)`, `n`, `x.numel()`), which
//     is exactly how the JSON report must print them (symbolic.md). Display
//     names for the table (`B` where the code wrote `auto B = x.size(0)`)
//     belong to ShapeEnv, not to the value.
//  3. Canonical form: an integer polynomial, a sum of coefficient * product
//     of atoms^k, terms in graded-lex order. Atoms are symbols and the
//     opaque operations floor division, modulo, max and min, each itself
//     canonical. So equal sizes written differently (`B*T*C/H` vs
//     `C/H*T*B`) are the same value and compare equal with ==. Structural
//     equality implies equal values; the converse needs facts (ShapeEnv).
//  4. Division is floor division (sympy's FloorDiv). It is exact when the
//     divisor divides every term; otherwise the divisible part is pulled
//     out (floor((c*q + r)/c) = q + floor(r/c) for integral q) and the rest
//     stays an opaque FloorDiv atom after common factors are cancelled.
//     Remainders are kept non-negative, so that for non-negative symbols the
//     printed C++ (truncating `/` and `%`) computes the same value.
//  5. Checked arithmetic: a constant that overflows int64, a division by
//     zero, or an expression beyond the size limits is an error value, never
//     a wrapped number. Errors propagate through every operation; callers
//     turn them into `throws` (overflow, division by zero: ATen would throw
//     too) or unknown (too complex).
//
// The model has no Clang header; this file has no LibTorch either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tma {

/// A three-valued answer: Unknown when neither the canonical form nor the
/// facts (and, in ShapeEnv, the stated assumptions) settle it.
enum class Tri { False, True, Unknown };

inline Tri triOf(bool B) { return B ? Tri::True : Tri::False; }
inline Tri operator!(Tri T) {
  return T == Tri::Unknown ? T : (T == Tri::True ? Tri::False : Tri::True);
}
/// Kleene conjunction / disjunction: False && Unknown is False.
Tri triAnd(Tri A, Tri B);
Tri triOr(Tri A, Tri B);
const char *triName(Tri T);

enum class SymErrorKind {
  None,
  Overflow,       ///< a constant left int64's range
  DivisionByZero, ///< a divisor that is the constant 0
  TooComplex,     ///< beyond the expression size limits (an analysis limit)
};

/// Concrete values for symbols, keyed by symbol name (`x.size(0)`, `n`).
using SymBindings = std::map<std::string, int64_t>;

namespace detail {
struct SymExpr;
struct SymAtom;
} // namespace detail

class SymSize {
public:
  /// The constant 0.
  SymSize() = default;
  /// A concrete size. Implicit on purpose: `Shape{B, 4096}` reads as code.
  SymSize(int64_t Value) : Value(Value) {}

  /// A named symbol. The name is the C++ expression it stands for.
  static SymSize symbol(std::string Name);
  static SymSize error(SymErrorKind Kind, std::string Reason);

  bool isConstant() const { return !Expr; }
  bool isSymbolic() const;
  bool isError() const;
  /// The value when it is a known constant.
  std::optional<int64_t> constant() const {
    if (Expr)
      return std::nullopt;
    return Value;
  }
  SymErrorKind errorKind() const;
  /// Why this is an error; empty when it is not.
  std::string errorReason() const;
  /// The symbol's name when this value is exactly one symbol.
  std::optional<std::string> symbolName() const;

  friend SymSize operator+(const SymSize &A, const SymSize &B);
  friend SymSize operator-(const SymSize &A, const SymSize &B);
  friend SymSize operator*(const SymSize &A, const SymSize &B);
  SymSize operator-() const;
  SymSize &operator+=(const SymSize &O) { return *this = *this + O; }
  SymSize &operator-=(const SymSize &O) { return *this = *this - O; }
  SymSize &operator*=(const SymSize &O) { return *this = *this * O; }

  /// Floor division (C++ `/` on non-negative operands).
  static SymSize floorDiv(const SymSize &A, const SymSize &B);
  /// Ceiling division for a positive divisor: floor((A + B - 1) / B).
  static SymSize ceilDiv(const SymSize &A, const SymSize &B);
  /// Floor modulo, same sign as the divisor (C++ `%` on non-negative
  /// operands).
  static SymSize mod(const SymSize &A, const SymSize &B);
  static SymSize max(const SymSize &A, const SymSize &B);
  static SymSize min(const SymSize &A, const SymSize &B);

  /// Same canonical form. Equal values that only facts show equal (`n` and
  /// `x.size(0)` after TORCH_CHECK(n == x.size(0))) are ShapeEnv's business.
#ifdef TMA_FIND_SYMSIZE_EQUALITY
  // Building with this defined lists every structural comparison, to check
  // which ones a rule meant as a decision (model/Decide.h).
  bool operator==(const SymSize &O) const = delete;
  bool operator!=(const SymSize &O) const = delete;
#else
  bool operator==(const SymSize &O) const;
  bool operator!=(const SymSize &O) const { return !(*this == O); }
#endif
  /// Same canonical form (operator== spelled out).
  bool identical(const SymSize &O) const;
  /// A total order on canonical forms, for containers (not a size order).
  int compare(const SymSize &O) const;
  struct Less {
    bool operator()(const SymSize &A, const SymSize &B) const {
      return A.compare(B) < 0;
    }
  };
  size_t hash() const;

  /// The C++ expression of symbolic.md's grammar: `x.size(0) * 4096`,
  /// `(x.size(2) + 1) / 2`, `std::max<int64_t>(n, 1)`. The explicit
  /// template argument keeps std::max well-formed when one side is a
  /// literal. "?" for an error value.
  std::string toCpp() const;
  /// The table's form: products with `·`, the coefficient first
  /// (`8192·B·T`), symbols by display name when DisplayName gives one.
  std::string toTable(const std::function<std::string(const std::string &)>
                          &DisplayName = {}) const;

  /// The value under Bindings, or why there is none (an unbound symbol, an
  /// overflow, a division by zero). Floor semantics throughout.
  struct Evaluation {
    std::optional<int64_t> Value;
    std::string Error;
  };
  Evaluation evaluate(const SymBindings &Bindings) const;

  /// Replaces each symbol for which Replace answers, and re-canonicalises.
  SymSize substitute(
      const std::function<std::optional<SymSize>(const std::string &)> &Replace)
      const;
  SymSize substitute(const SymBindings &Values) const;
  /// The names of the symbols this value mentions, each once, in symbol
  /// order (including those inside divisions, max and min).
  std::vector<std::string> symbols() const;
  /// The number of distinct terms (1 for a constant): a size measure.
  size_t termCount() const;

  /// The canonical node; null for constants. For ShapeEnv and printers.
  const detail::SymExpr *expr() const { return Expr.get(); }

private:
  explicit SymSize(std::shared_ptr<const detail::SymExpr> E);
  friend struct SymSizeAccess;
  int64_t Value = 0;
  std::shared_ptr<const detail::SymExpr> Expr;
};

/// Prints toCpp() (for test failure messages and debugging).
std::ostream &operator<<(std::ostream &OS, const SymSize &S);

/// Orders symbol names naturally: digit runs compare as numbers, so
/// `x.size(2)` comes before `x.size(10)`.
int compareSymbolNames(std::string_view A, std::string_view B);

/// Parses the C++ expression grammar toCpp prints (integer literals, + - * /
/// % with parentheses, unary minus, std::max / std::min with or without
/// `<int64_t>`, and symbols: identifiers with member-call chains such as
/// `x.size(1)` or `x.storage().nbytes()`, whitespace removed). `/` and `%`
/// parse as floor division and modulo. nullopt with a message on bad input.
std::optional<SymSize> parseSymSize(std::string_view Text,
                                    std::string *Error = nullptr);

namespace detail {

enum class AtomKind { Symbol, FloorDiv, Mod, Max, Min };

/// One atom of a monomial. Symbol has a Name; the others have Args
/// (dividend and divisor, or the sorted operands of max/min).
struct SymAtom {
  AtomKind Kind;
  std::string Name;
  std::vector<SymSize> Args;
  size_t Hash = 0;
  int Depth = 0; ///< nesting of operations inside, 0 for a symbol
};
using AtomRef = std::shared_ptr<const SymAtom>;

struct SymFactor {
  AtomRef Atom;
  uint32_t Exp = 1;
};

/// Coeff * product of Factors; Factors sorted by atom order, no atom twice.
/// An empty Factors list is the constant term.
struct SymTerm {
  std::vector<SymFactor> Factors;
  int64_t Coeff = 0;
};

/// A canonical polynomial (at least one non-constant term), or an error.
struct SymExpr {
  std::vector<SymTerm> Terms; ///< graded-lex order, highest first
  size_t Hash = 0;
  SymErrorKind Error = SymErrorKind::None;
  std::string Reason;
};

int compareAtoms(const SymAtom &A, const SymAtom &B);

} // namespace detail
} // namespace tma

template <> struct std::hash<tma::SymSize> {
  size_t operator()(const tma::SymSize &S) const { return S.hash(); }
};
