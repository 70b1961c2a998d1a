#include "cli/TidyFlags.h"
#include "checks/Registry.h"

#include "clang/Tooling/Core/Diagnostic.h"
#include "clang/Tooling/DiagnosticsYaml.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/YAMLTraits.h"

#include <map>
#include <set>

namespace tma {

std::string nearestName(llvm::StringRef Name,
                        llvm::ArrayRef<std::string> Candidates) {
  // A transposition costs two edits ("quite" -> "quiet"); a short name
  // gets one, so that "-q" never suggests "-p".
  unsigned MaxDistance = Name.size() <= 3 ? 1 : Name.size() < 12 ? 2 : 3;
  std::string Best;
  unsigned BestDistance = MaxDistance + 1;
  for (const std::string &C : Candidates) {
    unsigned D = Name.edit_distance(C, /*AllowReplacements=*/true,
                                    /*MaxEditDistance=*/MaxDistance + 1);
    if (D < BestDistance && D < Name.size()) {
      Best = C;
      BestDistance = D;
    }
  }
  return Best;
}

std::string unknownOptionError(llvm::ArrayRef<const char *> Args,
                               llvm::ArrayRef<std::string> Visible) {
  llvm::StringMap<llvm::cl::Option *> &Registered =
      llvm::cl::getRegisteredOptions();
  for (size_t I = 1; I < Args.size(); ++I) {
    llvm::StringRef A = Args[I];
    if (!A.startswith("-") || A == "-")
      continue; // a file
    llvm::StringRef Dashes = A.startswith("--") ? "--" : "-";
    llvm::StringRef Body = A.drop_front(Dashes.size());
    auto [Name, Value] = Body.split('=');
    bool HasValue = Body.contains('=');
    auto It = Registered.find(Name);
    if (It != Registered.end()) {
      // "-p build", "--checks -*": the next argument is this one's value,
      // whatever it looks like, as LLVM's parser takes it.
      if (!HasValue &&
          It->second->getValueExpectedFlag() == llvm::cl::ValueRequired)
        ++I;
      continue;
    }
    bool Prefixed = false; // -j2: a cl::Prefix option with its value joined
    for (auto &KV : Registered) {
      llvm::cl::FormattingFlags F = KV.second->getFormattingFlag();
      if ((F == llvm::cl::Prefix || F == llvm::cl::AlwaysPrefix) &&
          !KV.getKey().empty() && Name.startswith(KV.getKey()))
        Prefixed = true;
    }
    if (Prefixed)
      continue;
    std::string Message = "unknown option '" + A.str() + "'";
    std::string Near = nearestName(Name, Visible);
    if (!Near.empty())
      Message += "; did you mean '" + (Near.size() == 1 ? "-" : Dashes.str()) +
                 Near + (HasValue ? "=" + Value.str() : "") + "'?";
    else
      Message += " (--help lists the options)";
    return Message;
  }
  return "";
}

namespace {

std::vector<std::string> splitGlobs(llvm::StringRef Globs) {
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  Globs.split(Parts, ',');
  std::vector<std::string> Out;
  for (llvm::StringRef P : Parts)
    if (!P.trim().empty())
      Out.push_back(P.trim().str());
  return Out;
}

std::vector<std::string> registeredNames() {
  std::vector<std::string> Names;
  for (const CheckInfo &Info : checkRegistry())
    Names.push_back(Info.Name);
  return Names;
}

} // namespace

std::string checkSelectionProblem(const CheckConfig &Config,
                                  llvm::StringRef CommandLineChecks) {
  std::vector<std::string> Names = registeredNames();
  bool AnyEnabled = false;
  for (const std::string &N : Names)
    AnyEnabled |= checkEnabled(Config.Checks, N);
  std::set<std::string> FromCommandLine;
  for (const std::string &G : splitGlobs(CommandLineChecks))
    FromCommandLine.insert(G);
  for (const std::string &G : splitGlobs(Config.Checks)) {
    if (G[0] == '-')
      continue;
    if (!llvm::StringRef(G).startswith("torch") && !FromCommandLine.count(G))
      continue; // another tool's checks in a shared .clang-tidy
    bool Matches = false;
    for (const std::string &N : Names)
      Matches |= checkEnabled(G, N);
    if (Matches)
      continue;
    std::string Where = FromCommandLine.count(G) ? "--checks" : Config.Source;
    std::string Message =
        (AnyEnabled ? "" : "no checks enabled: ") + ("'" + G + "' (" + Where +
                                                     ") names no check");
    std::string Near = G.find('*') == std::string::npos
                           ? nearestName(G, Names)
                           : std::string();
    if (!Near.empty())
      Message += "; did you mean '" + Near + "'?";
    else
      Message += " (--list-checks --checks='*' lists them)";
    return Message;
  }
  return "";
}

void writeExportFixes(llvm::raw_ostream &OS,
                      const std::vector<ExportedFile> &Files) {
  namespace tooling = clang::tooling;
  tooling::TranslationUnitDiagnostics TUD;
  if (!Files.empty())
    TUD.MainSourceFile = Files.front().Path;
  for (const ExportedFile &F : Files) {
    LineIndex Lines(F.Source);
    // The offset of a line and column (clang's columns count bytes), as
    // clang-tidy writes a diagnostic's location.
    auto OffsetOf = [&](const SourceSpan &S) -> unsigned {
      if (S.Line > 0 && S.Column > 0)
        return static_cast<unsigned>(Lines.start(S.Line) + S.Column - 1);
      return S.BeginOffset == ~size_t(0) ? 0
                                         : static_cast<unsigned>(S.BeginOffset);
    };
    for (size_t I = 0; I < F.Diagnostics.size(); ++I) {
      const Diagnostic &D = F.Diagnostics[I];
      tooling::DiagnosticMessage Message(renderMessage(D.Format, D.Args));
      Message.FilePath = F.Path;
      Message.FileOffset = OffsetOf(D.Where);
      if (I < F.FixesExported.size() && F.FixesExported[I])
        for (const FixIt &Fix : D.Fixes) {
          tooling::Replacement R(
              F.Path, static_cast<unsigned>(Fix.Where.BeginOffset),
              static_cast<unsigned>(Fix.Where.EndOffset - Fix.Where.BeginOffset),
              Fix.Replacement);
          // One finding's fix-its never overlap each other; if they did,
          // the later one would be left out rather than abort the export.
          llvm::consumeError(Message.Fix[F.Path].add(R));
        }
      llvm::SmallVector<tooling::DiagnosticMessage, 1> Notes;
      for (const DiagnosticNote &N : D.Notes) {
        tooling::DiagnosticMessage Note(renderMessage(N.Format, N.Args));
        Note.FilePath = F.Path;
        Note.FileOffset = OffsetOf(N.Where);
        Notes.push_back(Note);
      }
      bool Error = I < F.AsError.size() && F.AsError[I];
      TUD.Diagnostics.emplace_back(
          D.Check, Message, Notes,
          Error ? tooling::Diagnostic::Error : tooling::Diagnostic::Warning,
          F.BuildDirectory);
    }
  }
  llvm::yaml::Output YAML(OS);
  YAML << TUD;
}

namespace {

/// A scalar as LLVM's YAML writer (and so clang-tidy) quotes it: plain when
/// it can be, '' for numbers, empty strings and flow characters.
std::string yamlScalar(llvm::StringRef S) {
  switch (llvm::yaml::needsQuotes(S)) {
  case llvm::yaml::QuotingType::None:
    return S.str();
  case llvm::yaml::QuotingType::Single: {
    std::string Out = "'";
    for (char C : S)
      Out += C == '\'' ? std::string("''") : std::string(1, C);
    return Out + "'";
  }
  case llvm::yaml::QuotingType::Double:
    return "\"" + llvm::yaml::escape(S) + "\"";
  }
  return S.str();
}

/// The option values a check reads, from a configuration.
class ConfigOptions : public OptionSource {
public:
  ConfigOptions(const CheckConfig &Config, std::string Check)
      : Config(Config), Check(std::move(Check)) {}
  std::optional<std::string> get(const std::string &Local) const override {
    auto It = Config.Options.find(Check + "." + Local);
    if (It == Config.Options.end())
      return std::nullopt;
    return It->second;
  }

private:
  const CheckConfig &Config;
  std::string Check;
};

} // namespace

void dumpConfig(llvm::raw_ostream &OS, const CheckConfig &Config,
                llvm::StringRef WarningsAsErrors,
                llvm::StringRef HeaderFilterRegex) {
  // Keys padded to one column, as LLVM's YAML writer pads a mapping's keys.
  auto Key = [&](llvm::StringRef K) {
    OS << K << ":";
    OS.indent(K.size() + 1 < 17 ? 17 - (K.size() + 1) : 1);
  };
  OS << "---\n";
  Key("Checks");
  OS << yamlScalar(Config.Checks) << "\n";
  Key("WarningsAsErrors");
  OS << yamlScalar(WarningsAsErrors) << "\n";
  Key("HeaderFilterRegex");
  OS << yamlScalar(HeaderFilterRegex) << "\n";
  // Every enabled check's options as it reads them (its default where
  // nothing sets one), as clang-tidy dumps them, and whatever else the
  // configuration sets (tensor-accountant.Assume, other tools' options in
  // a shared file).
  std::map<std::string, std::string> Options = Config.Options;
  for (const CheckInfo &Info : checkRegistry()) {
    if (!checkEnabled(Config.Checks, Info.Name))
      continue;
    ConfigOptions Opts(Config, Info.Name);
    OptionMap Values;
    Info.Create(Opts)->storeOptions(Values);
    for (const auto &KV : Values)
      Options[Info.Name + "." + KV.first] = KV.second;
  }
  OS << "CheckOptions:\n";
  for (const auto &KV : Options)
    OS << "  " << yamlScalar(KV.first) << ": " << yamlScalar(KV.second) << "\n";
  OS << "...\n";
}

} // namespace tma
