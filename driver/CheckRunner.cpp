#include "driver/CheckRunner.h"
#include "checks/Registry.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

#include <algorithm>

namespace tma {

namespace {

std::string scalarText(llvm::yaml::Node *N) {
  llvm::SmallString<64> Storage;
  if (auto *S = llvm::dyn_cast_or_null<llvm::yaml::ScalarNode>(N))
    return S->getValue(Storage).str();
  if (auto *B = llvm::dyn_cast_or_null<llvm::yaml::BlockScalarNode>(N))
    return B->getValue().str();
  return {};
}

class MapOptions : public OptionSource {
public:
  MapOptions(const CheckConfig &Config, std::string Check)
      : Config(Config), Check(std::move(Check)) {}
  std::optional<std::string> get(const std::string &LocalName) const override {
    auto It = Config.Options.find(Check + "." + LocalName);
    if (It == Config.Options.end())
      return std::nullopt;
    return It->second;
  }

private:
  const CheckConfig &Config;
  std::string Check;
};

/// Lines are 1-based; returns the text of Line without its newline.
llvm::StringRef lineText(llvm::StringRef Text, unsigned Line) {
  for (unsigned L = 1; L < Line; ++L) {
    size_t NL = Text.find('\n');
    if (NL == llvm::StringRef::npos)
      return {};
    Text = Text.drop_front(NL + 1);
  }
  return Text.take_until([](char C) { return C == '\n'; });
}

bool globMatches(llvm::StringRef Glob, llvm::StringRef Name) {
  return checkEnabled(Glob.trim().str(), Name.str());
}

/// Finds `Marker` (NOLINT, NOLINTNEXTLINE, ...) in Line and whether it
/// applies to Check: a bare marker applies to all checks; a marker with a
/// parenthesised list applies to the checks its globs name.
bool markerApplies(llvm::StringRef Line, llvm::StringRef Marker,
                   const std::string &Check) {
  size_t Pos = 0;
  while ((Pos = Line.find(Marker, Pos)) != llvm::StringRef::npos) {
    llvm::StringRef Rest = Line.drop_front(Pos + Marker.size());
    Pos += Marker.size();
    // NOLINT must not match NOLINTNEXTLINE / NOLINTBEGIN.
    if (!Rest.empty() && std::isalpha(static_cast<unsigned char>(Rest[0])))
      continue;
    if (!Rest.startswith("("))
      return true;
    llvm::StringRef List = Rest.drop_front().take_until([](char C) { return C == ')'; });
    llvm::SmallVector<llvm::StringRef, 4> Globs;
    List.split(Globs, ',');
    for (llvm::StringRef G : Globs)
      if (globMatches(G, Check))
        return true;
  }
  return false;
}

} // namespace

std::optional<CheckConfig> parseClangTidyConfig(llvm::StringRef Text,
                                                std::string &Error) {
  CheckConfig Config;
  Config.Source = ".clang-tidy";
  llvm::SourceMgr SM;
  std::string Diag;
  llvm::raw_string_ostream DiagOS(Diag);
  SM.setDiagHandler(
      [](const llvm::SMDiagnostic &D, void *Ctx) {
        *static_cast<llvm::raw_string_ostream *>(Ctx) << D.getMessage();
      },
      &DiagOS);
  llvm::yaml::Stream Stream(Text, SM);
  auto Doc = Stream.begin();
  if (Doc == Stream.end() || !Doc->getRoot())
    return Config;
  auto *Root = llvm::dyn_cast<llvm::yaml::MappingNode>(Doc->getRoot());
  if (!Root) {
    if (llvm::isa<llvm::yaml::NullNode>(Doc->getRoot()))
      return Config;
    Error = "the configuration is not a YAML mapping";
    return std::nullopt;
  }
  for (auto &KV : *Root) {
    std::string Key = scalarText(KV.getKey());
    if (Key == "Checks") {
      Config.Checks = scalarText(KV.getValue());
    } else if (Key == "CheckOptions") {
      llvm::yaml::Node *V = KV.getValue();
      if (auto *Seq = llvm::dyn_cast<llvm::yaml::SequenceNode>(V)) {
        for (llvm::yaml::Node &Item : *Seq) {
          auto *M = llvm::dyn_cast<llvm::yaml::MappingNode>(&Item);
          if (!M)
            continue;
          std::string OptKey, OptValue;
          for (auto &P : *M) {
            std::string K = scalarText(P.getKey());
            if (K == "key")
              OptKey = scalarText(P.getValue());
            else if (K == "value")
              OptValue = scalarText(P.getValue());
          }
          if (!OptKey.empty())
            Config.Options[OptKey] = OptValue;
        }
      } else if (auto *Map = llvm::dyn_cast<llvm::yaml::MappingNode>(V)) {
        for (auto &P : *Map)
          Config.Options[scalarText(P.getKey())] = scalarText(P.getValue());
      }
    }
  }
  DiagOS.flush();
  if (Stream.failed()) {
    Error = Diag.empty() ? "invalid YAML" : Diag;
    return std::nullopt;
  }
  return Config;
}

CheckConfig findConfigFor(const std::string &File, std::string &Error) {
  llvm::SmallString<256> Dir(File);
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_filename(Dir);
  while (!Dir.empty()) {
    llvm::SmallString<256> Candidate(Dir);
    llvm::sys::path::append(Candidate, ".clang-tidy");
    if (llvm::sys::fs::exists(Candidate)) {
      auto Buffer = llvm::MemoryBuffer::getFile(Candidate);
      if (!Buffer) {
        Error = "cannot read " + std::string(Candidate);
        return {};
      }
      std::string ParseError;
      auto Config = parseClangTidyConfig((*Buffer)->getBuffer(), ParseError);
      if (!Config) {
        Error = std::string(Candidate) + ": " + ParseError;
        return {};
      }
      Config->Source = std::string(Candidate);
      return *Config;
    }
    // parent_path points into Dir: copy before assigning back.
    std::string Parent = llvm::sys::path::parent_path(Dir).str();
    if (Parent.empty() || Parent == Dir)
      break;
    Dir = Parent;
  }
  return {};
}

bool isSuppressed(const std::string &Text, unsigned Line,
                  const std::string &Check) {
  llvm::StringRef T(Text);
  if (markerApplies(lineText(T, Line), "NOLINT", Check))
    return true;
  if (Line > 1 && markerApplies(lineText(T, Line - 1), "NOLINTNEXTLINE", Check))
    return true;
  // NOLINTBEGIN/END: an open BEGIN for this check above the line.
  int Depth = 0;
  for (unsigned L = 1; L < Line; ++L) {
    llvm::StringRef LT = lineText(T, L);
    if (markerApplies(LT, "NOLINTBEGIN", Check))
      ++Depth;
    if (markerApplies(LT, "NOLINTEND", Check) && Depth > 0)
      --Depth;
  }
  return Depth > 0;
}

std::vector<Diagnostic> runChecks(const std::vector<FunctionTrace> &Traces,
                                  const CheckConfig &Config,
                                  const std::string &FileText) {
  std::vector<Diagnostic> All;
  for (const CheckInfo &Info : checkRegistry()) {
    if (!checkEnabled(Config.Checks, Info.Name))
      continue;
    MapOptions Opts(Config, Info.Name);
    std::unique_ptr<TorchCheck> Check = Info.Create(Opts);
    for (const FunctionTrace &T : Traces) {
      std::vector<Diagnostic> Found;
      Check->check(T, Found);
      for (Diagnostic &D : Found) {
        D.Where.File = T.File;
        for (DiagnosticNote &N : D.Notes)
          N.Where.File = T.File;
        if (!isSuppressed(FileText, D.Where.Line, D.Check))
          All.push_back(std::move(D));
      }
    }
  }
  std::stable_sort(All.begin(), All.end(), [](const Diagnostic &A,
                                              const Diagnostic &B) {
    return std::tie(A.Where.Line, A.Where.Column, A.Check) <
           std::tie(B.Where.Line, B.Where.Column, B.Check);
  });
  return All;
}

void printDiagnostics(llvm::raw_ostream &OS, const std::vector<Diagnostic> &Diags,
                      const std::string &FileText) {
  auto Excerpt = [&](const SourceSpan &S) {
    llvm::StringRef Line = lineText(FileText, S.Line);
    if (Line.empty() || S.Column == 0)
      return;
    OS << Line << "\n";
    OS.indent(S.Column - 1) << "^\n";
  };
  for (const Diagnostic &D : Diags) {
    OS << D.Where.File << ":" << D.Where.Line << ":" << D.Where.Column
       << ": warning: " << renderMessage(D.Format, D.Args) << " [" << D.Check
       << "]\n";
    Excerpt(D.Where);
    for (const DiagnosticNote &N : D.Notes) {
      OS << N.Where.File << ":" << N.Where.Line << ":" << N.Where.Column
         << ": note: " << renderMessage(N.Format, N.Args) << "\n";
      Excerpt(N.Where);
    }
  }
}

std::string applyFixes(const std::string &Text,
                       const std::vector<Diagnostic> &Diags, unsigned &Applied) {
  struct Edit {
    size_t Begin, End;
    std::string With;
  };
  std::vector<Edit> Edits;
  for (const Diagnostic &D : Diags) {
    // A diagnostic's fixes go in together or not at all.
    std::vector<Edit> Mine;
    bool Ok = true;
    for (const FixIt &F : D.Fixes) {
      if (F.Where.BeginOffset == ~size_t(0) || F.Where.EndOffset == ~size_t(0) ||
          F.Where.BeginOffset > F.Where.EndOffset || F.Where.EndOffset > Text.size() ||
          F.Where.InMacro)
        Ok = false;
      else
        Mine.push_back({F.Where.BeginOffset, F.Where.EndOffset, F.Replacement});
    }
    for (const Edit &M : Mine)
      for (const Edit &E : Edits)
        if (M.Begin < E.End && E.Begin < M.End)
          Ok = false;
    if (!Ok)
      continue;
    Edits.insert(Edits.end(), Mine.begin(), Mine.end());
  }
  std::sort(Edits.begin(), Edits.end(),
            [](const Edit &A, const Edit &B) { return A.Begin > B.Begin; });
  std::string Out = Text;
  for (const Edit &E : Edits)
    Out.replace(E.Begin, E.End - E.Begin, E.With);
  Applied = static_cast<unsigned>(Edits.size());
  return Out;
}

} // namespace tma
