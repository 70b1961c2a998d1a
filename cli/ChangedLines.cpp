#include "cli/ChangedLines.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

namespace tma {

namespace {

/// "b/dir/f.cpp" -> "dir/f.cpp"; strips a trailing tab + timestamp and
/// git's quoting of unusual names.
std::optional<std::string> diffPath(llvm::StringRef Rest) {
  Rest = Rest.split('\t').first.rtrim("\r");
  std::string Path;
  if (Rest.size() >= 2 && Rest.front() == '"' && Rest.back() == '"') {
    llvm::StringRef Q = Rest.drop_front().drop_back();
    for (size_t I = 0; I < Q.size(); ++I) {
      char C = Q[I];
      if (C == '\\' && I + 1 < Q.size()) {
        char N = Q[++I];
        if (N >= '0' && N <= '7' && I + 2 < Q.size()) {
          Path += static_cast<char>((N - '0') * 64 + (Q[I + 1] - '0') * 8 +
                                    (Q[I + 2] - '0'));
          I += 2;
        } else {
          Path += N == 't' ? '\t' : N == 'n' ? '\n' : N;
        }
      } else {
        Path += C;
      }
    }
  } else {
    Path = Rest.str();
  }
  if (Path == "/dev/null")
    return std::nullopt;
  llvm::StringRef P(Path);
  if (P.startswith("b/") || P.startswith("a/"))
    P = P.drop_front(2);
  return P.str();
}

/// "@@ -a,b +c,d @@" -> (b, c, d); counts default to 1.
bool parseHunkHeader(llvm::StringRef Line, unsigned &OldCount,
                     unsigned &NewStart, unsigned &NewCount) {
  if (!Line.consume_front("@@ -"))
    return false;
  llvm::StringRef Old, New;
  std::tie(Old, Line) = Line.split(' ');
  if (!Line.consume_front("+"))
    return false;
  std::tie(New, Line) = Line.split(' ');
  auto Range = [](llvm::StringRef R, unsigned &Start, unsigned &Count) {
    llvm::StringRef S, C;
    std::tie(S, C) = R.split(',');
    Count = 1;
    if (S.getAsInteger(10, Start))
      return false;
    return C.empty() || !C.getAsInteger(10, Count);
  };
  unsigned OldStart;
  return Range(Old, OldStart, OldCount) && Range(New, NewStart, NewCount) &&
         Line.startswith("@@");
}

bool pathMatches(llvm::StringRef Absolute, llvm::StringRef DiffPath) {
  if (DiffPath.empty())
    return false;
  if (Absolute == DiffPath)
    return true;
  return Absolute.endswith(DiffPath) &&
         Absolute[Absolute.size() - DiffPath.size() - 1] == '/';
}

} // namespace

ChangedLines ChangedLines::parseUnifiedDiff(llvm::StringRef Diff) {
  ChangedLines Result;
  std::optional<std::string> File;
  unsigned OldLeft = 0, NewLeft = 0, NewLine = 0;
  while (!Diff.empty()) {
    llvm::StringRef Line;
    std::tie(Line, Diff) = Diff.split('\n');
    if (OldLeft > 0 || NewLeft > 0) {
      // Inside a hunk: every line is a body line, even "+++ x".
      char Kind = Line.empty() ? ' ' : Line[0];
      if (Kind == '\\')
        continue; // "\ No newline at end of file"
      if (Kind == '+' && NewLeft > 0) {
        if (File) {
          auto &Ranges = Result.Files[*File];
          if (!Ranges.empty() && Ranges.back().second + 1 == NewLine)
            Ranges.back().second = NewLine;
          else
            Ranges.push_back({NewLine, NewLine});
        }
        ++NewLine;
        --NewLeft;
      } else if (Kind == '-' && OldLeft > 0) {
        --OldLeft;
      } else if (Kind == ' ' && OldLeft > 0 && NewLeft > 0) {
        ++NewLine;
        --OldLeft;
        --NewLeft;
      } else {
        OldLeft = NewLeft = 0; // malformed hunk: resynchronise on headers
      }
      continue;
    }
    if (Line.startswith("+++ ")) {
      File = diffPath(Line.drop_front(4));
      if (File)
        Result.Files[*File]; // a file with only deletions is still "in" the diff
      continue;
    }
    unsigned NewStart, NewCount;
    if (parseHunkHeader(Line, OldLeft, NewStart, NewCount)) {
      NewLeft = NewCount;
      NewLine = NewStart;
    }
  }
  return Result;
}

std::optional<ChangedLines> ChangedLines::load(const std::string &Spec,
                                               std::string &Error) {
  if (Spec.empty()) {
    Error = "--changed-lines-only needs a git revision, 'staged', a diff file "
            "or '-'";
    return std::nullopt;
  }
  if (Spec == "-" || (Spec != "staged" && llvm::sys::fs::is_regular_file(Spec))) {
    auto Buffer = Spec == "-" ? llvm::MemoryBuffer::getSTDIN()
                              : llvm::MemoryBuffer::getFile(Spec);
    if (!Buffer) {
      Error = "cannot read the diff '" + Spec + "': " + Buffer.getError().message();
      return std::nullopt;
    }
    return parseUnifiedDiff((*Buffer)->getBuffer());
  }
  auto Git = llvm::sys::findProgramByName("git");
  if (!Git) {
    Error = "--changed-lines-only=" + Spec +
            ": not a diff file, and git was not found to diff against a "
            "revision";
    return std::nullopt;
  }
  llvm::SmallString<128> OutPath, ErrPath;
  if (llvm::sys::fs::createTemporaryFile("tma-diff", "txt", OutPath) ||
      llvm::sys::fs::createTemporaryFile("tma-diff", "err", ErrPath)) {
    Error = "cannot create a temporary file for git diff";
    return std::nullopt;
  }
  std::vector<llvm::StringRef> Args = {*Git,          "diff",
                                       "--no-color",   "--no-ext-diff",
                                       "-U0",          "--src-prefix=a/",
                                       "--dst-prefix=b/"};
  if (Spec == "staged")
    Args.push_back("--cached");
  else
    Args.push_back(Spec);
  Args.push_back("--");
  std::optional<llvm::StringRef> Redirects[] = {llvm::StringRef(""),
                                                llvm::StringRef(OutPath),
                                                llvm::StringRef(ErrPath)};
  std::string ExecError;
  int RC = llvm::sys::ExecuteAndWait(*Git, Args, std::nullopt, Redirects, 0, 0,
                                     &ExecError);
  auto Out = llvm::MemoryBuffer::getFile(OutPath);
  auto Err = llvm::MemoryBuffer::getFile(ErrPath);
  llvm::sys::fs::remove(OutPath);
  llvm::sys::fs::remove(ErrPath);
  if (RC != 0 || !Out) {
    std::string Why = Err ? (*Err)->getBuffer().trim().str() : ExecError;
    Error = "--changed-lines-only=" + Spec + ": 'git diff" +
            (Spec == "staged" ? std::string(" --cached") : " " + Spec) +
            "' failed" + (Why.empty() ? "" : ": " + Why);
    return std::nullopt;
  }
  return parseUnifiedDiff((*Out)->getBuffer());
}

bool ChangedLines::touches(llvm::StringRef File, unsigned Line,
                           unsigned EndLine) const {
  if (EndLine < Line)
    EndLine = Line;
  llvm::SmallString<256> Abs(File);
  llvm::sys::fs::make_absolute(Abs);
  llvm::sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  for (const auto &[Path, Ranges] : Files) {
    if (!pathMatches(Abs, Path) && File != Path)
      continue;
    for (const auto &[First, Last] : Ranges)
      if (First <= EndLine && Line <= Last)
        return true;
  }
  return false;
}

std::vector<Diagnostic>
ChangedLines::filter(const std::vector<Diagnostic> &Diags) const {
  std::vector<Diagnostic> Kept;
  for (const Diagnostic &D : Diags)
    if (touches(D.Where.File, D.Where.Line, D.Where.Line))
      Kept.push_back(D);
  return Kept;
}

} // namespace tma
