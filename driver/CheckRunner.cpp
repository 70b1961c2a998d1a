#include "driver/CheckRunner.h"
#include "checks/Registry.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

#include <algorithm>
#include <iterator>
#include <set>

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
  void invalidValue(const std::string &LocalName, const std::string &Value,
                    const std::string &Expected) const override {
    if (Problem.empty())
      Problem = Check + "." + LocalName + ": '" + Value + "' is not " +
                Expected;
  }
  /// The first invalid value seen, or empty.
  mutable std::string Problem;

private:
  const CheckConfig &Config;
  std::string Check;
};

bool globMatches(llvm::StringRef Glob, llvm::StringRef Name) {
  return checkEnabled(Glob.trim().str(), Name.str());
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
    } else if (Key == "HeaderFilterRegex") {
      Config.HeaderFilterRegex = scalarText(KV.getValue());
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

std::string validateCheckOptions(const CheckConfig &Config) {
  for (const CheckInfo &Info : checkRegistry()) {
    if (!checkEnabled(Config.Checks, Info.Name))
      continue;
    MapOptions Opts(Config, Info.Name);
    Info.Create(Opts); // reads every option it has
    if (!Opts.Problem.empty())
      return Config.Source + ": " + Opts.Problem;
  }
  return "";
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

LineIndex::LineIndex(llvm::StringRef Text) : Text(Text), Starts{0} {
  for (size_t I = 0; I < Text.size(); ++I)
    if (Text[I] == '\n')
      Starts.push_back(I + 1);
}

size_t LineIndex::start(unsigned Line) const {
  if (Line == 0)
    return 0;
  return Line <= Starts.size() ? Starts[Line - 1] : Text.size();
}

llvm::StringRef LineIndex::line(unsigned Line) const {
  if (Line == 0 || Line > Starts.size())
    return {};
  return Text.substr(Starts[Line - 1])
      .take_until([](char C) { return C == '\n'; });
}

unsigned LineIndex::lineOf(size_t Offset) const {
  return static_cast<unsigned>(
      std::upper_bound(Starts.begin(), Starts.end(), Offset) - Starts.begin());
}

bool NolintIndex::Marker::appliesTo(const std::string &Check) const {
  if (AllChecks)
    return true;
  for (const std::string &G : Globs)
    if (globMatches(G, Check))
      return true;
  return false;
}

NolintIndex::NolintIndex(llvm::StringRef Text) {
  LineIndex Lines(Text);
  for (unsigned L = 1; L <= Lines.size(); ++L) {
    llvm::StringRef Line = Lines.line(L);
    size_t Pos = 0;
    while ((Pos = Line.find("NOLINT", Pos)) != llvm::StringRef::npos) {
      Pos += 6;
      // The marker is NOLINT plus the letters that follow it: NOLINTFOO is
      // no marker at all.
      llvm::StringRef Rest = Line.drop_front(Pos);
      llvm::StringRef Suffix = Rest.take_while(
          [](char C) { return std::isalpha(static_cast<unsigned char>(C)); });
      Rest = Rest.drop_front(Suffix.size());
      Marker M;
      if (Suffix.empty())
        M.K = Kind::SameLine;
      else if (Suffix == "NEXTLINE")
        M.K = Kind::NextLine;
      else if (Suffix == "BEGIN")
        M.K = Kind::Begin;
      else if (Suffix == "END")
        M.K = Kind::End;
      else
        continue;
      M.AllChecks = !Rest.startswith("(");
      if (!M.AllChecks) {
        llvm::StringRef List =
            Rest.drop_front().take_until([](char C) { return C == ')'; });
        llvm::SmallVector<llvm::StringRef, 4> Globs;
        List.split(Globs, ',');
        for (llvm::StringRef G : Globs)
          M.Globs.push_back(G.str());
      }
      bool Region = M.K == Kind::Begin || M.K == Kind::End;
      std::vector<Marker> &Here = Markers[L];
      Here.push_back(std::move(M));
      if (Region && (RegionLines.empty() || RegionLines.back() != L))
        RegionLines.push_back(L);
    }
  }
}

bool NolintIndex::lineHas(unsigned Line, Kind K,
                          const std::string &Check) const {
  auto It = Markers.find(Line);
  if (It == Markers.end())
    return false;
  for (const Marker &M : It->second)
    if (M.K == K && M.appliesTo(Check))
      return true;
  return false;
}

const std::vector<std::pair<unsigned, int>> &
NolintIndex::regionsOf(const std::string &Check) const {
  auto It = Regions.find(Check);
  if (It != Regions.end())
    return It->second;
  std::vector<std::pair<unsigned, int>> Depths;
  int Depth = 0;
  for (unsigned L : RegionLines) {
    // A line opens at most one region and closes at most one, BEGIN first.
    if (lineHas(L, Kind::Begin, Check))
      ++Depth;
    if (lineHas(L, Kind::End, Check) && Depth > 0)
      --Depth;
    Depths.push_back({L, Depth});
  }
  return Regions.emplace(Check, std::move(Depths)).first->second;
}

bool NolintIndex::suppresses(unsigned Line, const std::string &Check) const {
  if (lineHas(Line, Kind::SameLine, Check))
    return true;
  if (Line > 1 && lineHas(Line - 1, Kind::NextLine, Check))
    return true;
  // NOLINTBEGIN/END: a region for this check open after the last marker
  // line above Line.
  const auto &Depths = regionsOf(Check);
  auto After = std::lower_bound(
      Depths.begin(), Depths.end(), Line,
      [](const std::pair<unsigned, int> &D, unsigned L) { return D.first < L; });
  return After != Depths.begin() && std::prev(After)->second > 0;
}

bool isSuppressed(const std::string &Text, unsigned Line,
                  const std::string &Check) {
  return NolintIndex(Text).suppresses(Line, Check);
}

std::vector<Diagnostic> runChecks(const std::vector<FunctionTrace> &Traces,
                                  const CheckConfig &Config,
                                  const std::string &FileText) {
  std::vector<Diagnostic> All;
  NolintIndex Nolint(FileText);
  for (const CheckInfo &Info : checkRegistry()) {
    if (!checkEnabled(Config.Checks, Info.Name))
      continue;
    MapOptions Opts(Config, Info.Name);
    std::unique_ptr<TorchCheck> Check = Info.Create(Opts);
    for (const FunctionTrace &T : Traces) {
      std::vector<Diagnostic> Found;
      Check->checkFunction(T, Found);
      for (Diagnostic &D : Found) {
        D.Where.File = T.File;
        for (DiagnosticNote &N : D.Notes)
          N.Where.File = T.File;
        if (!Nolint.suppresses(D.Where.Line, D.Check))
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
                      const std::string &FileText,
                      const std::string &ErrorChecks) {
  LineIndex Lines(FileText);
  auto Excerpt = [&](const SourceSpan &S) {
    llvm::StringRef Line = Lines.line(S.Line);
    if (Line.empty() || S.Column == 0)
      return;
    OS << Line << "\n";
    OS.indent(S.Column - 1) << "^\n";
  };
  for (const Diagnostic &D : Diags) {
    bool AsError = !ErrorChecks.empty() && checkEnabled(ErrorChecks, D.Check);
    OS << D.Where.File << ":" << D.Where.Line << ":" << D.Where.Column
       << (AsError ? ": error: " : ": warning: ")
       << renderMessage(D.Format, D.Args) << " [" << D.Check
       << (AsError ? ",-warnings-as-errors]\n" : "]\n");
    Excerpt(D.Where);
    for (const DiagnosticNote &N : D.Notes) {
      OS << N.Where.File << ":" << N.Where.Line << ":" << N.Where.Column
         << ": note: " << renderMessage(N.Format, N.Args) << "\n";
      Excerpt(N.Where);
    }
  }
}

namespace {
/// Whether [Begin, End) overlaps an accepted edit (two edits overlap when
/// each begins before the other ends; an insertion at an edit's edge does
/// not). Accepted edits never overlap each other, so among those that begin
/// before Begin the last one reaches furthest: a lookup, not a scan of all
/// of them, for files with thousands of fix-its.
bool overlapsAccepted(const std::set<std::pair<size_t, size_t>> &Accepted,
                      size_t Begin, size_t End) {
  auto It = Accepted.lower_bound({Begin, 0});
  if (It != Accepted.begin() && std::prev(It)->second > Begin)
    return true;
  for (; It != Accepted.end() && It->first < End; ++It)
    if (It->second > Begin)
      return true;
  return false;
}
} // namespace

std::string applyFixes(const std::string &Text,
                       const std::vector<Diagnostic> &Diags, unsigned &Applied,
                       std::vector<bool> *Accepted) {
  struct Edit {
    size_t Begin, End;
    std::string With;
  };
  std::vector<Edit> Edits;
  std::set<std::pair<size_t, size_t>> Taken; // [begin, end) of Edits
  if (Accepted)
    Accepted->assign(Diags.size(), false);
  for (size_t I = 0; I < Diags.size(); ++I) {
    const Diagnostic &D = Diags[I];
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
      Ok = Ok && !overlapsAccepted(Taken, M.Begin, M.End);
    if (!Ok)
      continue;
    for (const Edit &M : Mine)
      Taken.insert({M.Begin, M.End});
    if (Accepted && !Mine.empty())
      (*Accepted)[I] = true;
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
