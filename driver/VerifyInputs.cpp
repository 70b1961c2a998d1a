// Inputs for --verify of a function with parameters (design in the header).
#include "driver/VerifyInputs.h"
#include "model/ShapeEnv.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

namespace tma {

namespace {

std::string trim(std::string_view S) {
  size_t B = 0, E = S.size();
  while (B < E && std::isspace(static_cast<unsigned char>(S[B])))
    ++B;
  while (E > B && std::isspace(static_cast<unsigned char>(S[E - 1])))
    --E;
  return std::string(S.substr(B, E - B));
}

bool isIdentifier(std::string_view S) {
  if (S.empty() || !(std::isalpha(static_cast<unsigned char>(S[0])) || S[0] == '_'))
    return false;
  return std::all_of(S.begin(), S.end(), [](char C) {
    return std::isalnum(static_cast<unsigned char>(C)) || C == '_';
  });
}

/// `p` when S is `p<Suffix>` for an identifier p, else "".
std::string receiverOf(std::string_view S, std::string_view Suffix) {
  if (S.size() <= Suffix.size() || S.substr(S.size() - Suffix.size()) != Suffix)
    return "";
  std::string_view P = S.substr(0, S.size() - Suffix.size());
  return isIdentifier(P) ? std::string(P) : "";
}

const MadeInput *tensorInput(const InputDraw &D, const std::string &Name) {
  for (const MadeInput &I : D.Inputs)
    if (I.IsTensor && I.Name == Name)
      return &I;
  return nullptr;
}

/// `at::kLong`, `torch::kFloat`, `c10::kHalf`, `torch::kFloat32`.
std::optional<DType> dtypeConstant(std::string_view S) {
  for (std::string_view Prefix : {"at::k", "torch::k", "c10::k", "::at::k", "::torch::k"})
    if (S.substr(0, Prefix.size()) == Prefix) {
      std::string Name(S.substr(Prefix.size()));
      if (auto T = dtypeFromName(Name))
        return T;
      // torch::kFloat32 and friends spell the report's names capitalised.
      for (char &C : Name)
        C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
      return dtypeFromName(Name);
    }
  return std::nullopt;
}

/// The top-level comparison of Cond: its operator's offset and spelling.
std::optional<std::pair<size_t, std::string>> topComparison(std::string_view S) {
  int Depth = 0;
  for (size_t K = 0; K < S.size(); ++K) {
    char C = S[K];
    if (C == '(')
      ++Depth;
    else if (C == ')')
      --Depth;
    if (Depth != 0)
      continue;
    std::string_view Two = S.substr(K, 2);
    if (Two == "==" || Two == "!=" || Two == "<=" || Two == ">=")
      return std::make_pair(K, std::string(Two));
    // `<` and `>` alone, but not std::max<int64_t>'s angle brackets (the
    // only ones the grammar has, always right after the function's name).
    if ((C == '<' || C == '>') && Two != "<<" && Two != ">>") {
      if (C == '<' && S.substr(0, K).size() >= 8 &&
          (S.substr(K - 8, 8) == "std::max" || S.substr(K - 8, 8) == "std::min"))
        continue;
      if (C == '>' && K >= 8 && S.substr(K - 8, 8) == "<int64_t")
        continue;
      if (C == '>' && K >= 1 && S[K - 1] == '-')
        continue; // `->`
      return std::make_pair(K, std::string(1, C));
    }
  }
  return std::nullopt;
}

/// FNV-1a: a seed that is the same on every machine and standard library.
uint64_t stableHash(std::string_view S) {
  uint64_t H = 1469598103934665603ull;
  for (unsigned char C : S) {
    H ^= C;
    H *= 1099511628211ull;
  }
  return H;
}

/// xorshift64*: small, deterministic everywhere (std::uniform_int_distribution
/// is not specified bit for bit).
struct Rng {
  uint64_t State;
  explicit Rng(uint64_t Seed) : State(Seed ? Seed : 0x9e3779b97f4a7c15ull) {}
  uint64_t next() {
    State ^= State >> 12;
    State ^= State << 25;
    State ^= State >> 27;
    return State * 2685821657736338717ull;
  }
  int64_t in(int64_t Lo, int64_t Hi) { // inclusive; Lo <= Hi
    uint64_t Span = static_cast<uint64_t>(Hi - Lo) + 1;
    return Lo + static_cast<int64_t>(next() % Span);
  }
};

/// The float dtype of an element size the user gave, if there is one.
std::optional<DType> floatOfSize(int64_t Bytes) {
  switch (Bytes) {
  case 2: return DType::Float16;
  case 4: return DType::Float32;
  case 8: return DType::Float64;
  default: return std::nullopt;
  }
}

} // namespace

std::string scalarTypeEnumerator(DType T) {
  std::string Cpp = dtypeCpp(T); // "at::kFloat"
  return Cpp.substr(Cpp.find("::k") + 3);
}

std::optional<int64_t> evaluateUnder(std::string_view Expr, const InputDraw &D,
                                     std::string *Error) {
  std::string ParseError;
  std::optional<SymSize> E = parseSymSize(Expr, &ParseError);
  if (!E) {
    if (Error)
      *Error = "'" + std::string(Expr) + "' is not a report expression: " + ParseError;
    return std::nullopt;
  }
  SymSize::Evaluation V = E->evaluate(D.Values);
  if (!V.Value && Error)
    *Error = "'" + std::string(Expr) + "' has no value for these inputs: " + V.Error;
  return V.Value;
}

std::optional<bool> conditionHolds(std::string_view CondIn, const InputDraw &D,
                                   std::string *Error) {
  std::string Cond = trim(CondIn);
  auto Fail = [&](const std::string &Why) -> std::optional<bool> {
    if (Error)
      *Error = Why;
    return std::nullopt;
  };
  // Made inputs are fresh, contiguous and own their storage exactly.
  if (std::string P = receiverOf(Cond, ".is_contiguous()"); !P.empty())
    return tensorInput(D, P) ? std::optional<bool>(true)
                             : Fail("'" + P + "' is not a tensor parameter");
  if (std::string P = receiverOf(Cond, ".is_floating_point()"); !P.empty()) {
    const MadeInput *I = tensorInput(D, P);
    if (!I)
      return Fail("'" + P + "' is not a tensor parameter");
    return isFloating(I->Type);
  }
  auto Cmp = topComparison(Cond);
  if (!Cmp)
    return Fail("'" + Cond + "' is not a comparison this check understands");
  std::string L = trim(std::string_view(Cond).substr(0, Cmp->first));
  std::string R = trim(std::string_view(Cond).substr(Cmp->first + Cmp->second.size()));
  const std::string &Op = Cmp->second;

  // dtypes: p.scalar_type() against another parameter's or a constant.
  auto DTypeOf = [&](const std::string &Side) -> std::optional<DType> {
    if (std::string P = receiverOf(Side, ".scalar_type()"); !P.empty()) {
      if (const MadeInput *I = tensorInput(D, P))
        return I->Type;
      return std::nullopt;
    }
    return dtypeConstant(Side);
  };
  bool LType = L.find("scalar_type()") != std::string::npos || dtypeConstant(L);
  bool RType = R.find("scalar_type()") != std::string::npos || dtypeConstant(R);
  if (LType || RType) {
    auto A = DTypeOf(L), B = DTypeOf(R);
    if (!A || !B || (Op != "==" && Op != "!="))
      return Fail("'" + Cond + "' is not a dtype comparison this check understands");
    return (*A == *B) == (Op == "==");
  }

  std::string EL, ER;
  auto A = evaluateUnder(L, D, &EL);
  if (!A)
    return Fail(EL);
  auto B = evaluateUnder(R, D, &ER);
  if (!B)
    return Fail(ER);
  if (Op == "==") return *A == *B;
  if (Op == "!=") return *A != *B;
  if (Op == "<") return *A < *B;
  if (Op == "<=") return *A <= *B;
  if (Op == ">") return *A > *B;
  return *A >= *B;
}

std::vector<InputDraw> drawInputs(const FunctionTrace &T, const DrawOptions &Opts,
                                  std::string &Reason) {
  // 1. What each parameter is, or why no input can be made for it.
  struct TensorParam {
    size_t Index;
    int64_t Rank;
    std::optional<DType> Type; // stated by the code; else the caller's
  };
  std::vector<TensorParam> Tensors;
  for (size_t K = 0; K < T.Params.size(); ++K) {
    const FunctionTrace::Param &P = T.Params[K];
    std::string Shown = P.Name.empty() ? "#" + std::to_string(K + 1) : "'" + P.Name + "'";
    if (P.K == FunctionTrace::Param::Other) {
      Reason = "parameter " + Shown + " has type " + P.Type +
               "; --verify makes only tensors and integers";
      return {};
    }
    if (P.K != FunctionTrace::Param::Tensor)
      continue;
    const Binding *B = nullptr;
    for (const Binding &X : T.Bindings)
      if (X.IsParameter && X.Name == P.Name && !P.Name.empty()) {
        B = &X;
        break;
      }
    const TensorValue *V = B && B->Value >= 0 ? &T.value(B->Value) : nullptr;
    if (!V || !V->Sizes) {
      Reason = "parameter " + Shown +
               ": its rank is not known, so no input can be made (a check such as "
               "TORCH_CHECK(" + (P.Name.empty() ? std::string("x") : P.Name) +
               ".dim() == N) states it)";
      return {};
    }
    Tensors.push_back({K, static_cast<int64_t>(V->Sizes->size()), V->Type});
  }

  const ShapeEnv *Env = T.Env.get();
  std::vector<std::string> Conditions;
  if (Env) {
    for (const SymRelation &F : Env->facts())
      Conditions.push_back(F.toCpp());
    for (const std::string &A : Env->assumptions())
      Conditions.push_back(A);
    // Values the user gave that break what the function states or assumes
    // cannot be inputs: it would throw, or its answers do not hold.
    if (Env->hasBindings()) {
      std::vector<std::string> Broken = Env->violations();
      if (!Broken.empty()) {
        Reason = "the --assume values break " + Broken.front() +
                 (Broken.size() > 1 ? " (and " + std::to_string(Broken.size() - 1) +
                                          " more)"
                                    : std::string()) +
                 ", so they are no inputs for it";
        return {};
      }
    }
  }

  // 2. dtypes the assumptions pin (`t.scalar_type() == at::kLong`) or tie
  // together (`w.scalar_type() == x.scalar_type()`): union-find over names.
  std::map<std::string, std::string> Parent;
  std::function<std::string(const std::string &)> Find = [&](const std::string &N) {
    auto It = Parent.find(N);
    if (It == Parent.end() || It->second == N)
      return N;
    return It->second = Find(It->second);
  };
  std::map<std::string, DType> Pinned; // by group root
  std::vector<std::pair<std::string, DType>> PinnedNames;
  for (const std::string &C : Conditions) {
    auto Cmp = topComparison(C);
    if (!Cmp || Cmp->second != "==")
      continue;
    std::string L = trim(std::string_view(C).substr(0, Cmp->first));
    std::string R = trim(std::string_view(C).substr(Cmp->first + 2));
    std::string PL = receiverOf(L, ".scalar_type()"), PR = receiverOf(R, ".scalar_type()");
    if (!PL.empty() && !PR.empty())
      Parent[Find(PL)] = Find(PR);
    else if (!PL.empty() && dtypeConstant(R))
      PinnedNames.push_back({PL, *dtypeConstant(R)});
    else if (!PR.empty() && dtypeConstant(L))
      PinnedNames.push_back({PR, *dtypeConstant(L)});
  }
  for (const TensorParam &TP : Tensors)
    if (TP.Type)
      PinnedNames.push_back({T.Params[TP.Index].Name, *TP.Type});
  for (const auto &[Name, Type] : PinnedNames)
    Pinned.emplace(Find(Name), Type);

  // 3. Draw, reject, repeat.
  Rng R(stableHash(T.Name));
  std::vector<InputDraw> Out;
  std::set<std::string> Seen;
  std::map<std::string, unsigned> BrokenCount;
  for (unsigned Try = 0; Try < Opts.MaxTries && Out.size() < Opts.Draws; ++Try) {
    ShapeEnv E = Env ? *Env : ShapeEnv();
    InputDraw D;
    auto Known = [&](const std::string &Name) -> std::optional<int64_t> {
      SymBindings B = E.bindings();
      auto It = B.find(Name);
      if (It != B.end())
        return It->second;
      return std::nullopt;
    };
    // Two tries in three start sizes at 2: 1 always divides and always
    // broadcasts, so uniform draws would favour the least telling inputs;
    // the third try keeps 1 possible where the function allows it.
    bool AllowOne = Try % 3 == 2;
    auto DrawSymbol = [&](const std::string &Name, int64_t Lo, int64_t Hi) {
      if (auto V = Known(Name))
        return *V;
      if (!AllowOne && Lo == 1 && Hi >= 2)
        Lo = 2;
      if (const SymbolInfo *I = E.info(Name)) {
        if (I->Lower && *I->Lower > Lo && *I->Lower <= Hi)
          Lo = *I->Lower;
        if (I->Upper && *I->Upper < Hi && *I->Upper >= Lo)
          Hi = *I->Upper;
      }
      int64_t V = R.in(Lo, Hi);
      E.bind(Name, V); // false for a symbol the function never used: fine
      return V;
    };
    bool Consistent = true;
    std::string Inconsistent;
    // Bind a derived symbol (x.numel()) and check it agrees with what the
    // user or the equalities already gave it.
    auto Derived = [&](const std::string &Name, int64_t V) {
      if (auto Have = Known(Name); Have && *Have != V) {
        Consistent = false;
        Inconsistent = Name + " == " + std::to_string(*Have);
      }
      E.bind(Name, V);
      D.Values[Name] = V;
    };
    // The caller's dtype this draw: the element size the user gave, else
    // float32 on even draws and float64 on odd ones.
    DType CallerType = Out.size() % 2 ? DType::Float64 : DType::Float32;
    for (const TensorParam &TP : Tensors)
      if (!TP.Type)
        if (auto Size = Known(T.Params[TP.Index].Name + ".element_size()"))
          if (auto F = floatOfSize(*Size))
            CallerType = *F;
    size_t NextTensor = 0;
    for (size_t K = 0; K < T.Params.size(); ++K) {
      const FunctionTrace::Param &P = T.Params[K];
      MadeInput I;
      I.Name = P.Name;
      if (P.K == FunctionTrace::Param::Integer) {
        I.IntegerType = P.Type;
        bool Unsigned = P.Type.find("unsigned") != std::string::npos;
        I.Value = P.Name.empty() ? R.in(1, Opts.MaxSize)
                                 : DrawSymbol(P.Name, Unsigned ? 0 : 1, Opts.MaxSize);
        if (!P.Name.empty())
          D.Values[P.Name] = I.Value;
        D.Inputs.push_back(std::move(I));
        continue;
      }
      const TensorParam &TP = Tensors[NextTensor++];
      I.IsTensor = true;
      I.Move = P.RValueRef;
      auto Pin = Pinned.find(Find(P.Name));
      I.Type = Pin != Pinned.end() ? Pin->second : CallerType;
      int64_t Numel = 1;
      for (int64_t Dim = 0; Dim < TP.Rank; ++Dim) {
        std::string Name = P.Name + ".size(" + std::to_string(Dim) + ")";
        int64_t V = DrawSymbol(Name, 1, Opts.MaxSize);
        D.Values[Name] = V;
        I.Sizes.push_back(V);
        if (V < 0 || __builtin_mul_overflow(Numel, V, &Numel)) {
          Consistent = false;
          Inconsistent = "the sizes' product fits in int64_t";
        }
      }
      int64_t Bytes = 0;
      if (__builtin_mul_overflow(Numel, itemSize(I.Type), &Bytes) ||
          __builtin_add_overflow(D.InputBytes, Bytes, &D.InputBytes)) {
        Consistent = false;
        Inconsistent = "the inputs' bytes fit in int64_t";
      }
      Derived(P.Name + ".dim()", TP.Rank);
      Derived(P.Name + ".numel()", Numel);
      Derived(P.Name + ".element_size()", itemSize(I.Type));
      Derived(P.Name + ".storage().nbytes()", Bytes);
      D.Inputs.push_back(std::move(I));
    }
    if (!Consistent) {
      ++BrokenCount[Inconsistent];
      continue;
    }
    // Every fact and assumption, on these very inputs.
    std::string Broken;
    for (const std::string &C : Conditions) {
      std::string Why;
      std::optional<bool> Holds = conditionHolds(C, D, &Why);
      if (!Holds) {
        Reason = "its condition '" + C + "' cannot be checked on made inputs (" + Why +
                 "), so none is made";
        return {};
      }
      if (!*Holds) {
        Broken = C;
        break;
      }
    }
    if (!Broken.empty()) {
      ++BrokenCount[Broken];
      continue;
    }
    for (const MadeInput &I : D.Inputs) {
      if (!D.Text.empty())
        D.Text += ", ";
      if (!I.IsTensor) {
        D.Text += I.Name + "=" + std::to_string(I.Value);
        continue;
      }
      D.Text += I.Name + " (";
      for (size_t K = 0; K < I.Sizes.size(); ++K)
        D.Text += (K ? ", " : "") + std::to_string(I.Sizes[K]);
      D.Text += std::string(I.Sizes.size() == 1 ? ",) " : ") ") + dtypeName(I.Type);
    }
    if (Seen.insert(D.Text).second)
      Out.push_back(std::move(D));
  }
  if (Out.empty()) {
    auto Most = std::max_element(
        BrokenCount.begin(), BrokenCount.end(),
        [](const auto &A, const auto &B) { return A.second < B.second; });
    Reason = "no draw of sizes in 1.." + std::to_string(Opts.MaxSize) + " satisfies its "
             "facts and assumptions in " + std::to_string(Opts.MaxTries) + " tries" +
             (Most == BrokenCount.end() ? std::string()
                                        : " (most often broken: " + Most->first + ")");
  }
  return Out;
}

} // namespace tma
