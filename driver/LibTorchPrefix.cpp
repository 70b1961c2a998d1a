#include "driver/LibTorchPrefix.h"

#include <cstring>

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <set>

namespace tma {
namespace {

std::string absolute(llvm::StringRef Path, llvm::StringRef WorkingDirectory) {
  llvm::SmallString<256> P;
  if (!llvm::sys::path::is_absolute(Path) && !WorkingDirectory.empty())
    P = WorkingDirectory;
  llvm::sys::path::append(P, Path);
  llvm::sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

bool isLibTorchName(llvm::StringRef Name) {
  llvm::StringRef Root = Name.split('/').first;
  return Name.contains('/') && (Root == "torch" || Root == "ATen" ||
                                Root == "c10" || Root == "caffe2");
}

/// The directive lines that open Text, as the preprocessor sees them:
/// backslash-newlines joined, comments removed, trimmed. Stops at the first
/// line that is not a directive (EndsInCode) or at the end.
std::vector<std::string>
leadingDirectives(llvm::StringRef Text, bool &EndsInCode, bool &Unterminated) {
  EndsInCode = Unterminated = false;
  if (Text.startswith("\xEF\xBB\xBF"))
    Text = Text.drop_front(3);
  std::vector<std::string> Lines;
  std::string Cur;
  bool InString = false;
  auto Flush = [&]() {
    llvm::StringRef T = llvm::StringRef(Cur).trim();
    bool Keep = true;
    if (!T.empty()) {
      if (T[0] != '#') {
        EndsInCode = true;
        Keep = false;
      } else {
        Lines.push_back(T.str());
      }
    }
    Cur.clear();
    InString = false;
    return Keep;
  };
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    char Next = I + 1 < Text.size() ? Text[I + 1] : '\0';
    if (C == '\\' && (Next == '\n' || (Next == '\r' && I + 2 < Text.size() &&
                                       Text[I + 2] == '\n'))) {
      I += Next == '\r' ? 2 : 1;
      continue;
    }
    if (!InString && C == '/' && Next == '/') {
      while (I + 1 < Text.size() && Text[I + 1] != '\n')
        ++I;
      continue;
    }
    if (!InString && C == '/' && Next == '*') {
      size_t End = Text.find("*/", I + 2);
      if (End == llvm::StringRef::npos) {
        Unterminated = true;
        return Lines;
      }
      Cur += ' ';
      I = End + 1;
      continue;
    }
    if (C == '\n') {
      if (!Flush())
        return Lines;
      continue;
    }
    if (C == '"')
      InString = !InString;
    Cur += C;
  }
  Flush();
  return Lines;
}

/// "#  include <x>" -> ("include", "<x>").
std::pair<llvm::StringRef, llvm::StringRef>
splitDirective(llvm::StringRef Line) {
  llvm::StringRef Body = Line.drop_front(1).ltrim();
  size_t End = 0;
  while (End < Body.size() && (llvm::isAlnum(Body[End]) || Body[End] == '_'))
    ++End;
  return {Body.take_front(End), Body.drop_front(End).trim()};
}

class PrefixWalker {
public:
  PrefixWalker(const KeyedCommand &Command, llvm::vfs::FileSystem &FS)
      : Command(Command), FS(FS) {}

  enum class Step { Found, Continue, Refuse };

  /// Walks one file's leading directives; Prefix grows as it goes.
  Step walk(llvm::StringRef Text, llvm::StringRef Path, bool IsHeader,
            unsigned Depth) {
    bool EndsInCode, Unterminated;
    std::vector<std::string> Lines =
        leadingDirectives(Text, EndsInCode, Unterminated);
    if (Unterminated)
      return refuse("an unterminated comment in " + Path.str());
    bool InGuard = false;
    for (size_t I = 0; I < Lines.size(); ++I) {
      auto [Name, Rest] = splitDirective(Lines[I]);
      if (Name == "pragma" && Rest == "once")
        continue;
      if (IsHeader && I == 0 && Name == "ifndef" && I + 1 < Lines.size()) {
        auto [NextName, NextRest] = splitDirective(Lines[I + 1]);
        if (NextName == "define" && NextRest == Rest) {
          if (llvm::is_contained(Command.DefinedMacros, Rest.str()))
            return refuse("the include guard of " + Path.str() +
                          " is defined on the command line");
          InGuard = true;
          ++I;
          continue;
        }
      }
      if (Name == "endif" && InGuard && Rest.empty()) {
        InGuard = false;
        continue;
      }
      if (Name != "include")
        return refuse("#" + Name.str() + " in " + Path.str() +
                      " comes before LibTorch");
      if (Rest.startswith("<")) {
        size_t Close = Rest.find('>');
        if (Close == llvm::StringRef::npos ||
            !Rest.drop_front(Close + 1).trim().empty())
          return refuse("an #include this reader does not follow");
        llvm::StringRef Header = Rest.slice(1, Close);
        if (isLibTorchName(Header)) {
          Prefix += "#include <" + Header.str() + ">\n";
          return Step::Found;
        }
        if (!isStandardHeaderName(Header))
          return refuse("<" + Header.str() + "> comes before LibTorch");
        for (const IncludeDir &D : Command.Dirs)
          if (D.Flag != "-iquote" && exists(D.Path + "/" + Header.str()))
            return refuse("<" + Header.str() + "> is in " + D.Path +
                          ", not only in the standard library");
        Prefix += "#include <" + Header.str() + ">\n";
        continue;
      }
      if (Rest.startswith("\"")) {
        size_t Close = Rest.find('"', 1);
        if (Close == llvm::StringRef::npos ||
            !Rest.drop_front(Close + 1).trim().empty())
          return refuse("an #include this reader does not follow");
        llvm::StringRef Header = Rest.slice(1, Close);
        std::optional<std::string> Found = resolveQuoted(Header, Path);
        if (!Found) {
          // Not in the includer's directory, -iquote or -I: the quoted
          // lookup falls through to the directories <...> searches.
          if (isLibTorchName(Header)) {
            Prefix += "#include <" + Header.str() + ">\n";
            return Step::Found;
          }
          return refuse("cannot find \"" + Header.str() + "\"");
        }
        if (!Visited.insert(*Found).second)
          return refuse(*Found + " is included twice before LibTorch");
        if (Depth > 32)
          return refuse("project headers nested too deeply");
        auto Buffer = FS.getBufferForFile(*Found);
        if (!Buffer)
          return refuse("cannot read " + *Found);
        Step S = walk((*Buffer)->getBuffer(), *Found, true, Depth + 1);
        if (S != Step::Continue)
          return S;
        continue;
      }
      return refuse("an #include this reader does not follow");
    }
    if (EndsInCode)
      return refuse("code in " + Path.str() + " comes before LibTorch");
    return Step::Continue;
  }

  std::string Prefix;
  std::string Why;

private:
  Step refuse(std::string Reason) {
    Why = std::move(Reason);
    return Step::Refuse;
  }

  bool exists(const std::string &Path) {
    auto S = FS.status(Path);
    return S && S->getType() != llvm::sys::fs::file_type::directory_file;
  }

  std::optional<std::string> resolveQuoted(llvm::StringRef Header,
                                           llvm::StringRef Includer) {
    if (llvm::sys::path::is_absolute(Header))
      return exists(Header.str()) ? std::optional<std::string>(Header.str())
                                  : std::nullopt;
    std::vector<std::string> Candidates;
    Candidates.push_back(
        absolute(Header, llvm::sys::path::parent_path(Includer)));
    for (const char *Flag : {"-iquote", "-I"})
      for (const IncludeDir &D : Command.Dirs)
        if (D.Flag == Flag)
          Candidates.push_back(absolute(Header, D.Path));
    for (const std::string &C : Candidates)
      if (exists(C))
        return C;
    return std::nullopt;
  }

  const KeyedCommand &Command;
  llvm::vfs::FileSystem &FS;
  std::set<std::string> Visited;
};

} // namespace

KeyedCommand splitCommand(llvm::ArrayRef<std::string> Args,
                          llvm::StringRef MainFile,
                          llvm::StringRef WorkingDirectory) {
  KeyedCommand K;
  std::string AbsMain = absolute(MainFile, WorkingDirectory);
  bool MainSeen = false;
  std::string SelectedLanguage;
  static const char *const DirFlags[] = {"-I", "-iquote", "-isystem",
                                         "-idirafter"};
  static const char *const PathFlags[] = {"--sysroot",       "-isysroot",
                                          "--gcc-toolchain", "-resource-dir",
                                          "-ivfsoverlay",    "-B"};
  // Flags whose separate value is a name, not a path.
  static const char *const NameValued[] = {"-x", "-target", "-arch"};
  for (size_t I = 0; I < Args.size(); ++I) {
    llvm::StringRef A = Args[I];
    if (I == 0) {
      K.Flags.push_back(A.str());
      continue;
    }
    if (A == MainFile ||
        (!A.startswith("-") && absolute(A, WorkingDirectory) == AbsMain)) {
      MainSeen = true;
      continue;
    }
    // -x applies to the inputs after it; "-x none" goes back to extensions.
    // (The flag itself stays in Flags below.)
    if (!MainSeen) {
      std::optional<llvm::StringRef> X;
      if ((A == "-x" || A == "--language") && I + 1 < Args.size())
        X = llvm::StringRef(Args[I + 1]);
      else if (A.startswith("--language="))
        X = A.drop_front(strlen("--language="));
      else if (A.startswith("-x") && A.size() > 2)
        X = A.drop_front(2);
      if (X)
        SelectedLanguage = *X == "none" ? "" : X->str();
    }
    bool Handled = false;
    for (const char *Flag : DirFlags) {
      llvm::StringRef F(Flag);
      if (A == F && I + 1 < Args.size()) {
        K.Dirs.push_back({F.str(), absolute(Args[++I], WorkingDirectory)});
        Handled = true;
      } else if (A.startswith(F) && A.size() > F.size() &&
                 // -isystem is not -I + "system"
                 !(F == "-I" &&
                   (A.startswith("-iquote") || A.startswith("-isystem") ||
                    A.startswith("-idirafter")))) {
        K.Dirs.push_back(
            {F.str(), absolute(A.drop_front(F.size()), WorkingDirectory)});
        Handled = true;
      }
      if (Handled)
        break;
    }
    if (Handled)
      continue;
    if (A == "-include" || A == "-imacros" || A == "-include-pch" ||
        A.startswith("--include=") || A.startswith("-include-pch="))
      K.ForcedInclude = true;
    if (A.startswith("-D")) {
      llvm::StringRef Def = A.drop_front(2);
      if (Def.empty() && I + 1 < Args.size())
        Def = Args[I + 1];
      K.DefinedMacros.push_back(Def.split('=').first.str());
    }
    for (const char *Flag : PathFlags) {
      llvm::StringRef F(Flag);
      if (A == F && I + 1 < Args.size()) {
        K.Flags.push_back(A.str());
        K.Flags.push_back(absolute(Args[++I], WorkingDirectory));
        Handled = true;
      } else if (A.startswith(F.str() + "=")) {
        K.Flags.push_back(
            F.str() + "=" +
            absolute(A.drop_front(F.size() + 1), WorkingDirectory));
        Handled = true;
      }
      if (Handled)
        break;
    }
    if (Handled)
      continue;
    // A bare word that is not the value of a name-valued flag may be a
    // relative path (an input, a -include's file, ...).
    if (!A.startswith("-") &&
        !llvm::is_contained(NameValued, llvm::StringRef(Args[I - 1])))
      K.NeedsWorkingDirectory = true;
    K.Flags.push_back(A.str());
  }
  K.Language = !SelectedLanguage.empty()
                   ? "-x " + SelectedLanguage
                   : "extension " + llvm::sys::path::extension(MainFile).str();
  return K;
}

std::optional<std::string> findLibTorchPrefix(llvm::StringRef MainText,
                                              llvm::StringRef MainPath,
                                              const KeyedCommand &Command,
                                              llvm::vfs::FileSystem &FS,
                                              std::string *WhyNot) {
  auto Refuse = [&](std::string Why) -> std::optional<std::string> {
    if (WhyNot)
      *WhyNot = std::move(Why);
    return std::nullopt;
  };
  if (Command.ForcedInclude)
    return Refuse("the command includes a file before the main file");
  PrefixWalker W(Command, FS);
  switch (W.walk(MainText, MainPath, /*IsHeader=*/false, 0)) {
  case PrefixWalker::Step::Found:
    return W.Prefix;
  case PrefixWalker::Step::Refuse:
    return Refuse(W.Why);
  case PrefixWalker::Step::Continue:
    break;
  }
  return Refuse("no LibTorch include opens the file");
}

bool directoryMayShadow(llvm::StringRef Dir, llvm::ArrayRef<std::string> Names,
                        llvm::vfs::FileSystem &FS) {
  auto S = FS.status(Dir);
  if (!S)
    return false; // searching a missing directory finds nothing
  if (S->getType() != llvm::sys::fs::file_type::directory_file)
    return true; // a header map or something stranger: assume it matters
  for (const std::string &N : Names)
    if (!N.empty() && FS.status(Dir.str() + "/" + N))
      return true;
  return false;
}

bool isStandardHeaderName(llvm::StringRef Name) {
  return !Name.empty() && llvm::all_of(Name, [](char C) {
    return (C >= 'a' && C <= 'z') || (C >= '0' && C <= '9') || C == '_';
  });
}

std::string includeNameRoot(llvm::StringRef IncludeName) {
  if (IncludeName.empty() || llvm::sys::path::is_absolute(IncludeName))
    return "";
  return IncludeName.split('/').first.str();
}

} // namespace tma
