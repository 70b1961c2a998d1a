// The symbols of one function, what the code tells us about them, and what
// the analysis had to assume: the counterpart of torch's ShapeEnv.
//
// Design:
//  1. Symbols are declared with a kind (a tensor size, an int64_t
//     parameter, a rank, an element size). The kind gives the bounds
//     nobody has to state (a size is >= 0, an element size is 1..16).
//  2. Facts come from the code (TORCH_CHECK, assert, if-throw, a value used
//     as a size): equalities become substitutions (the later-declared
//     symbol is replaced, so `w.size(0) == x.size(1)` prints as
//     `x.size(1)` everywhere), bounds narrow a symbol's range, other
//     inequalities, disequalities and divisibility are kept as facts.
//  3. Decisions are three-valued. They try the facts alone first. Only when
//     the facts cannot settle a decision do they use a default assumption:
//     a size-like symbol is not empty (>= 1), or, where that does not
//     settle it, the one PyTorch itself makes (0/1 specialisation: >= 2).
//     The assumption is recorded for exactly the symbols it was needed for
//     (greedily minimised), each no stricter than needed, and the report
//     lists it (`x.size(0) >= 1`, `x.size(1) >= 2`). A decision neither
//     settles is Unknown: never a silent guess.
//  4. Ranges are proven three ways and the tighter bound wins: interval
//     arithmetic over the atoms; the same after shifting every atom to
//     its lower bound (a = lo + a', a' >= 0), which proves things like
//     B*T - B >= 0 that plain intervals cannot; and after writing a symbol
//     next to its quotient as s = c*q + r (0 <= r < c, r = 0 where c is
//     known to divide s), which proves w - 2*(w/3) >= 0.
//  5. Bindings (--assume B=16) never change the formulas; they only give
//     numbers, and violations() says which facts or assumptions a binding
//     breaks.
#pragma once

#include "model/SymSize.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace tma {

enum class SymbolKind {
  Size,        ///< x.size(i), x.numel(): >= 0; size-like
  Integer,     ///< an int64_t parameter or local: any sign until facts say
  Rank,        ///< x.dim(): >= 0 (0 and 1 are ordinary ranks)
  ElementSize, ///< x.element_size(): 1..16
  Bytes,       ///< x.storage().nbytes(): >= 0
};

struct SymbolInfo {
  std::string Name;    ///< the C++ it stands for: `x.size(0)`, `n`
  std::string Display; ///< the code's name for it (`B`); may be empty
  SymbolKind Kind = SymbolKind::Integer;
  /// Sizes are assumed >= 2 (0/1 specialisation) unless facts say less.
  bool SizeLike = false;
  /// Bounds from the kind and the facts (never from assumptions).
  std::optional<int64_t> Lower, Upper;
  int Order = 0; ///< declaration order
};

/// A comparison over sizes, as a fact, an assumption or a question.
struct SymRelation {
  enum Op { Eq, Ne, Lt, Le, Gt, Ge, Multiple /* L % R == 0 */ };
  Op Kind = Eq;
  SymSize L, R;

  static SymRelation eq(SymSize L, SymSize R) { return {Eq, L, R}; }
  static SymRelation ne(SymSize L, SymSize R) { return {Ne, L, R}; }
  static SymRelation lt(SymSize L, SymSize R) { return {Lt, L, R}; }
  static SymRelation le(SymSize L, SymSize R) { return {Le, L, R}; }
  static SymRelation gt(SymSize L, SymSize R) { return {Gt, L, R}; }
  static SymRelation ge(SymSize L, SymSize R) { return {Ge, L, R}; }
  /// L is a multiple of R (R divides L).
  static SymRelation multiple(SymSize L, SymSize R) { return {Multiple, L, R}; }

  /// `x.size(0) == n`, `x.size(2) % n_head == 0`.
  std::string toCpp() const;
  /// Under concrete values; Unknown when a symbol is unbound.
  Tri evaluate(const SymBindings &Values) const;
};

class ShapeEnv {
public:
  // ---- symbols --------------------------------------------------------
  /// Declares Name (idempotent: a second declaration keeps the first kind)
  /// and returns its symbol, as written (not simplified by later facts).
  SymSize declare(const std::string &Name, SymbolKind Kind);
  SymSize tensorSize(const std::string &Tensor, int64_t Dim);
  SymSize tensorNumel(const std::string &Tensor);
  SymSize tensorDim(const std::string &Tensor);
  SymSize tensorElementSize(const std::string &Tensor);
  SymSize tensorStorageBytes(const std::string &Tensor);
  SymSize integer(const std::string &Name);
  /// A bool parameter as the integer C++ promotes it to: 0 or 1 (`train ?
  /// 50000 : 10000` is `10000 + 40000 * train`).
  SymSize boolean(const std::string &Name);
  /// The value was used as a size (at::zeros({n})): it is >= 0 from here
  /// on (ATen would have thrown), and the 0/1 specialisation applies.
  void markSizeLike(const std::string &Name);
  /// The table's name for a symbol (`B` for x.size(0)); the first wins.
  void setDisplayName(const std::string &Name, const std::string &Display);
  const SymbolInfo *info(const std::string &Name) const;
  /// A size only a run knows: how many elements nonzero(), masked_select()
  /// or a boolean mask finds. A fresh size symbol named as PyTorch names an
  /// unbacked size (`u0`, `u1`, ... in the order made; a name the function
  /// already uses is skipped), with 0 <= u <= AtMost as facts the op
  /// guarantees, not facts the code states (facts() leaves them out).
  SymSize dataDependentSize(const std::string &Op, const SymSize &AtMost);
  struct DataDependentSize {
    std::string Name;  ///< `u0`
    std::string Op;    ///< what finds it: `nonzero`, `a boolean mask`
    SymSize AtMost;    ///< the count it cannot exceed (the mask's numel)
  };
  /// In the order made.
  const std::vector<DataDependentSize> &dataDependentSizes() const {
    return DataDependent;
  }
  /// In declaration order.
  std::vector<const SymbolInfo *> symbolsInOrder() const;

  // ---- facts and assumptions -------------------------------------------
  enum class FactResult {
    Added,
    AlreadyKnown,
    /// The facts already say the opposite: the code after it is
    /// unreachable (it always throws). Nothing is added.
    Contradicts,
    /// Added, but it contradicts an assumption recorded earlier: answers
    /// that relied on it no longer hold.
    ContradictsAssumption,
  };
  FactResult addFact(const SymRelation &R);
  /// The facts as the code stated them, in order.
  const std::vector<SymRelation> &facts() const { return FactLog; }
  /// Whether a fact the code states (addFact) contradicted an assumption
  /// recorded before it: what was answered on that assumption holds for no
  /// input that gets past the fact.
  bool factContradictedAssumption() const { return FactAgainstAssumption; }
  /// Starts an empty environment with the facts From's code stated, for
  /// an analysis of the same function again: its decisions then never
  /// assume against them, before the statement that states them as after
  /// (an input that fails the check never gets past it). Their symbols are
  /// declared first, in From's order and with From's kinds, so that the
  /// equalities substitute the same way.
  void seedFacts(const ShapeEnv &From);

  /// States an assumption the analysis needs (`x.size(2) % n == 0` before a
  /// view): recorded for the report and then used as a fact.
  void assume(const SymRelation &R);
  /// An assumption that is not about sizes (`x.is_contiguous()`).
  void assume(const std::string &CppCondition);
  /// C++ boolean expressions over the parameters, in the order first made.
  std::vector<std::string> assumptions() const;
  /// The symbols an assumption holds at 2 or more (`x.size(1) >= 2`: the
  /// 0/1 specialisation), in the order first assumed.
  std::vector<std::string> symbolsAssumedNotOne() const;

  // ---- simplification and decisions -------------------------------------
  /// Equalities substituted, divisibility facts applied (x % n -> 0,
  /// n * (x / n) -> x), max/min resolved where facts or the default
  /// assumptions decide them (recording what was assumed).
  SymSize simplify(const SymSize &E);
  /// Decides R: facts first, then the default assumptions (recorded when
  /// they were needed). Unknown when neither settles it.
  Tri decide(const SymRelation &R);
  /// Decides R from the facts alone; never assumes, never records.
  Tri decideFromFacts(const SymRelation &R) const;
  /// What the facts and every default (sizes >= 2) together say of R,
  /// recording nothing.
  Tri decideWithDefaults(const SymRelation &R) const;
  Tri eq(const SymSize &A, const SymSize &B) {
    return decide(SymRelation::eq(A, B));
  }
  Tri lt(const SymSize &A, const SymSize &B) {
    return decide(SymRelation::lt(A, B));
  }
  Tri le(const SymSize &A, const SymSize &B) {
    return decide(SymRelation::le(A, B));
  }
  /// max/min, resolved when a decision settles which side is larger.
  SymSize max(const SymSize &A, const SymSize &B);
  SymSize min(const SymSize &A, const SymSize &B);

  struct Range {
    std::optional<int64_t> Lo, Hi; ///< nullopt: unbounded
  };
  /// Proven bounds of E; with Defaults the 0/1 specialisation counts.
  Range range(const SymSize &E, bool Defaults = false) const;

  // ---- bindings -----------------------------------------------------------
  /// Binds a symbol by its name (`x.size(1)`, `n`) or display name (`B`).
  /// False (with a message) when this function has no such symbol.
  bool bind(const std::string &NameOrDisplay, int64_t Value,
            std::string *Error = nullptr);
  /// The user's bindings plus what the equalities derive from them.
  SymBindings bindings() const;
  /// E's value under the bindings (after the equalities).
  SymSize::Evaluation evaluate(const SymSize &E) const;
  /// Facts and assumptions (as C++) that the bindings make false.
  std::vector<std::string> violations() const;
  struct Violation {
    std::string Cpp;
    /// The code states it (a TORCH_CHECK, an assert): with these values the
    /// function throws. Otherwise the analysis assumed it: its answers do
    /// not hold for these values.
    bool Stated = false;
  };
  /// violations(), saying which kind each one is.
  std::vector<Violation> violationDetails() const;
  /// Whether the user bound any of this function's symbols.
  bool hasBindings() const { return !Bound.empty(); }
  /// The user's bindings, by symbol name (not what equalities derive).
  const SymBindings &userBindings() const { return Bound; }
  /// Numbers may be given: some symbol is bound and no fact or assumption
  /// is broken by the values.
  bool bindingsUsable() const;
  /// E's value under usable bindings; nullopt when they are not usable or
  /// leave a symbol of E unbound (or the value overflows int64).
  std::optional<int64_t> boundValue(const SymSize &E) const;
  /// ` (128 MiB at B=16, T=1024)` for a symbolic E with a boundValue, else
  /// empty. DisplayNames: the table's names (`B`); otherwise the C++ ones
  /// (`x.size(0)`), as the checks' messages print their formulas.
  std::string boundSuffix(const SymSize &E, bool DisplayNames = true) const;

  // ---- printing -------------------------------------------------------------
  /// The JSON form: C++ over the parameters (locals never appear).
  std::string toCpp(const SymSize &E) const { return E.toCpp(); }
  /// The table form, with display names: `8192·B·T`.
  std::string toTable(const SymSize &E) const;
  /// `8192·B·T B (128 MiB at B=16, T=1024)`; a plain byte count when E is
  /// a number; without the parenthesis when some symbol is unbound.
  std::string formatBytes(const SymSize &E) const;

private:
  struct Mode {
    bool Defaults = false;
    /// With Defaults: the bound each size-like symbol is assumed to reach
    /// (1: not empty; 2: PyTorch's 0/1 specialisation).
    int64_t Floor = 2;
    /// With Defaults: only these symbols get a default, each its own
    /// floor (all of them get Floor when null).
    const std::map<std::string, int64_t> *Only = nullptr;
  };
  struct Assumption {
    std::string Cpp;
    std::optional<SymRelation> Rel;
    /// A default a decision needed (decide), not used as a fact: a fact
    /// stated later that implies it makes it no assumption (listed()).
    bool FromDefaults = false;
  };
  bool listed(const Assumption &A) const;

  FactResult addFactImpl(const SymRelation &R, bool Log);
  SymSize reduce(const SymSize &E) const;
  SymSize reduceAtoms(const SymSize &E) const;
  SymSize applyQuotientFacts(const SymSize &E) const;
  Tri decideWith(const SymRelation &R, const Mode &M) const;
  Tri nonNegative(const SymSize &P, const Mode &M) const;
  Tri isZero(const SymSize &D, const Mode &M) const;
  Tri knownMultiple(const SymSize &A, const SymSize &B) const;
  SymSize pruneMinMax(const SymSize &E, bool Record);
  std::optional<int64_t> defaultLower(const SymbolInfo &S, const Mode &M) const;
  std::optional<std::map<std::string, int64_t>>
  weakestDefaults(const SymRelation &R, Tri Answer) const;
  void recordAssumption(Assumption A);
  void addSubstitution(const std::string &Name, const SymSize &Value);
  void invalidate() { ReduceCache.clear(); }

  friend struct RangeProver;

  std::map<std::string, SymbolInfo> Symbols;
  int NextOrder = 0;
  std::map<std::string, SymSize> Substitutions; ///< fully reduced right sides
  std::vector<SymSize> NonNegative;             ///< each >= 0
  std::vector<SymSize> NonZero;                 ///< each != 0
  std::vector<std::pair<SymSize, SymSize>> Multiples; ///< first % second == 0
  std::vector<SymRelation> FactLog;
  std::vector<DataDependentSize> DataDependent;
  /// How many dataDependentSize() made in this analysis: an environment
  /// seeded from an earlier one makes the same names again.
  size_t DataDependentMade = 0;
  std::vector<Assumption> Assumptions;
  SymBindings Bound;
  bool FactAgainstAssumption = false;
  mutable std::unordered_map<SymSize, SymSize> ReduceCache;
};

/// Every symbol of Env (kinds, display names) and the facts the code
/// stated, without one assumption: a question decided again there records
/// exactly the assumptions its answer needs (symbolsAssumedNotOne).
ShapeEnv factsOnly(const ShapeEnv &Env);

} // namespace tma
