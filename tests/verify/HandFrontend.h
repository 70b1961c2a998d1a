// A stand-in for the Clang frontend, good enough for the test files in this
// directory and for testdata/seed/blocks.cpp: it finds sites by scanning
// lines, the way a person would by hand. It relies on the files' layout:
// functions open with `void name() {` (optionally inside `namespace x {`)
// and close with a `}` in column 0; each binding statement starts a line
// and ends at the first ';' after its start; devices are spelled
// torch::kCUDA or "cuda:0".
#pragma once

#include "verify/Harness.h"

#include <cstring>
#include <regex>
#include <string>

namespace tma::verify::test_support {

inline HarnessFile handFrontend(const std::string &Path, const std::string &Text) {
  HarnessFile F;
  F.Path = Path;
  F.Text = Text;
  static const std::regex Namespace(R"(^namespace (\w+) \{)");
  static const std::regex Function(R"(^(?:void|int) (\w+)\(\) \{)");
  static const std::regex Binding(
      R"(^\s*(?:(?:auto|torch::Tensor|const auto &|auto &)\s+)?(\w+)\s*(?:=[^=]|;))");
  std::string NS, Current;
  size_t Pos = 0;
  unsigned Line = 0;
  while (Pos < Text.size()) {
    size_t End = Text.find('\n', Pos);
    if (End == std::string::npos)
      End = Text.size();
    std::string L = Text.substr(Pos, End - Pos);
    ++Line;
    std::smatch M;
    if (std::regex_search(L, M, Namespace)) {
      NS = M[1].str() + "::";
    } else if (L.rfind("}  // namespace", 0) == 0) {
      NS.clear();
    } else if (std::regex_search(L, M, Function)) {
      Current = M[1] == "main" ? "" : NS + M[1].str();
      if (!Current.empty())
        F.Functions.push_back(Current);
    } else if (!L.empty() && L[0] == '}') {
      Current.clear();
    } else if (!Current.empty() && std::regex_search(L, M, Binding) &&
               M[1] != "return") {
      size_t Semi = Text.find(';', Pos);
      F.Probes.push_back({Current, M[1].str(), Line, Semi + 1});
    }
    Pos = End + 1;
  }
  for (const char *Needle : {"torch::kCUDA", "\"cuda:0\""}) {
    DeviceSite::Kind K = Needle[0] == '"' ? DeviceSite::DeviceStringLiteral
                                          : DeviceSite::DeviceTypeExpr;
    for (size_t At = Text.find(Needle); At != std::string::npos;
         At = Text.find(Needle, At + 1))
      F.Devices.push_back({At, At + std::strlen(Needle), K});
  }
  return F;
}

} // namespace tma::verify::test_support
