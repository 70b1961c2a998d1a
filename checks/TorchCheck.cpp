#include "checks/TorchCheck.h"
#include "checks/Registry.h"
#include "model/Decide.h"
#include "model/ShapeEnv.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace tma {

void TorchCheck::checkFunction(const FunctionTrace &T,
                               std::vector<Diagnostic> &Out) const {
  if (!T.Env) {
    check(T, Out);
    return;
  }
  DecisionScope Decisions(*T.Env);
  check(T, Out);
}

std::string renderMessage(const std::string &Format,
                          const std::vector<std::string> &Args) {
  std::string Out;
  for (size_t I = 0; I < Format.size(); ++I) {
    if (Format[I] == '%' && I + 1 < Format.size() && Format[I + 1] >= '0' &&
        Format[I + 1] <= '9') {
      size_t K = Format[I + 1] - '0';
      if (K < Args.size())
        Out += Args[K];
      ++I;
      continue;
    }
    Out += Format[I];
  }
  return Out;
}

Diagnostic &TorchCheck::report(std::vector<Diagnostic> &Out,
                               const SourceSpan &Where,
                               const std::string &Format) const {
  Diagnostic D;
  D.Check = Name;
  D.Where = Where;
  D.Format = Format;
  Out.push_back(std::move(D));
  return Out.back();
}

int64_t TorchCheck::intOption(const OptionSource &Opts, const std::string &Key,
                              int64_t Default) {
  auto V = Opts.get(Key);
  if (!V || V->empty())
    return Default;
  // Every integer option counts bytes or notes: "lots", "-5" or "1e9" is a
  // mistake to report, not a value to drop silently (issue 10, item 24).
  char *End = nullptr;
  errno = 0;
  long long N = std::strtoll(V->c_str(), &End, 10);
  if (End && *End == '\0' && errno == 0 && N >= 0 && (*V)[0] != '-')
    return N;
  Opts.invalidValue(Key, *V, "a non-negative integer");
  return Default;
}

double TorchCheck::realOption(const OptionSource &Opts, const std::string &Key,
                              double Default) {
  auto V = Opts.get(Key);
  if (!V || V->empty())
    return Default;
  char *End = nullptr;
  double D = std::strtod(V->c_str(), &End);
  if (End && *End == '\0')
    return D;
  Opts.invalidValue(Key, *V, "a number");
  return Default;
}

bool TorchCheck::boolOption(const OptionSource &Opts, const std::string &Key,
                            bool Default) {
  auto V = Opts.get(Key);
  if (!V || V->empty())
    return Default;
  std::string Lower;
  for (char C : *V)
    Lower += static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  if (Lower == "true" || Lower == "1")
    return true;
  if (Lower == "false" || Lower == "0")
    return false;
  Opts.invalidValue(Key, *V, "true or false");
  return Default;
}

namespace {
// fnmatch-style '*' only, as clang-tidy's check globs.
bool globMatch(const char *P, const char *S) {
  if (*P == '\0')
    return *S == '\0';
  if (*P == '*')
    return globMatch(P + 1, S) || (*S && globMatch(P, S + 1));
  return *S == *P && globMatch(P + 1, S + 1);
}
} // namespace

bool checkEnabled(const std::string &Globs, const std::string &Name) {
  bool Enabled = false;
  size_t Start = 0;
  while (Start <= Globs.size()) {
    size_t End = Globs.find(',', Start);
    if (End == std::string::npos)
      End = Globs.size();
    std::string G = Globs.substr(Start, End - Start);
    // Trim spaces and newlines (YAML block scalars).
    while (!G.empty() && std::isspace(static_cast<unsigned char>(G.front())))
      G.erase(G.begin());
    while (!G.empty() && std::isspace(static_cast<unsigned char>(G.back())))
      G.pop_back();
    if (!G.empty()) {
      bool Negative = G[0] == '-';
      if (Negative)
        G.erase(G.begin());
      if (globMatch(G.c_str(), Name.c_str()))
        Enabled = !Negative;
    }
    Start = End + 1;
  }
  return Enabled;
}

} // namespace tma
