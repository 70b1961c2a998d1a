#include "driver/Assume.h"
#include "model/ShapeEnv.h"

namespace tma {

std::optional<std::vector<AssumeBinding>>
configBindings(const CheckConfig &Config, std::string &Error) {
  auto It = Config.Options.find(AssumeOptionKey);
  if (It == Config.Options.end())
    return std::vector<AssumeBinding>();
  std::string Why;
  auto Parsed = parseAssumeList(It->second, Why);
  if (!Parsed)
    Error = Config.Source + ": " + AssumeOptionKey + ": " + Why;
  return Parsed;
}

std::string bindingViolationText(const FunctionTrace &T) {
  if (!T.Env || !T.Env->hasBindings())
    return "";
  std::vector<ShapeEnv::Violation> Broken = T.Env->violationDetails();
  if (Broken.empty())
    return "";
  std::string At;
  const SymBindings &Values = T.Env->userBindings();
  for (const SymbolInfo *I : T.Env->symbolsInOrder()) {
    auto V = Values.find(I->Name);
    if (V == Values.end())
      continue;
    std::string Shown = !I->Display.empty() ? I->Display : I->Name;
    At += (At.empty() ? "" : ", ") + Shown + "=" + std::to_string(V->second);
  }
  std::string Text = "no numbers at " + At + ": " +
                     (T.Env->userBindings().size() == 1 ? "it breaks "
                                                        : "they break ");
  for (size_t K = 0; K < Broken.size(); ++K)
    Text += (K ? ", " : "") + Broken[K].Cpp +
            (Broken[K].Stated ? " (checked by the code: it would throw)"
                              : " (assumed by the analysis)");
  return Text;
}

void warnViolatedBindings(llvm::raw_ostream &OS,
                          const std::vector<FunctionTrace> &Traces) {
  for (const FunctionTrace &T : Traces) {
    std::string Text = bindingViolationText(T);
    if (!Text.empty())
      OS << "tensor-accountant: warning: " << T.File << ":" << T.Where.Line
         << ": " << T.Name << ": " << Text << "\n";
  }
}

} // namespace tma
