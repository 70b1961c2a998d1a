#include "driver/Companions.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <set>

namespace tma {

std::vector<std::string> quotedIncludes(llvm::StringRef Text) {
  std::vector<std::string> Out;
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Text.split(Lines, '\n');
  for (llvm::StringRef Line : Lines) {
    Line = Line.ltrim(" \t");
    if (!Line.consume_front("#"))
      continue;
    Line = Line.ltrim(" \t");
    if (!Line.consume_front("include"))
      continue;
    Line = Line.ltrim(" \t");
    if (!Line.consume_front("\""))
      continue;
    size_t End = Line.find('"');
    if (End != llvm::StringRef::npos && End > 0)
      Out.push_back(Line.take_front(End).str());
  }
  return Out;
}

/// Path with its symbolic links resolved (itself when that fails): one
/// key per file, however it is reached.
static std::string realPath(const std::string &Path) {
  llvm::SmallString<256> Real;
  if (llvm::sys::fs::real_path(Path, Real))
    return Path;
  return std::string(Real);
}

static bool isRegularFile(const llvm::Twine &Path) {
  return llvm::sys::fs::is_regular_file(Path);
}

std::vector<std::string>
companionSources(const std::string &MainFile, llvm::StringRef Text,
                 const std::vector<std::string> &IncludeDirs) {
  std::vector<std::string> Out;
  auto Normal = [](llvm::StringRef P) {
    llvm::SmallString<256> S(P);
    llvm::sys::fs::make_absolute(S);
    llvm::sys::path::remove_dots(S, /*remove_dot_dot=*/true);
    return std::string(S);
  };
  // The file itself is never its own companion (src/net.cpp including
  // "net.h"), however it is spelled.
  std::string Self = Normal(MainFile);
  std::set<std::string> Seen = {realPath(Self)};
  std::string MainDirText = llvm::sys::path::parent_path(Self).str();
  llvm::StringRef MainDir = MainDirText;
  for (const std::string &Include : quotedIncludes(Text)) {
    // Where the preprocessor finds it: beside the file, then the -I and
    // -iquote directories.
    std::string Header;
    std::vector<std::string> Dirs = {MainDir.str()};
    Dirs.insert(Dirs.end(), IncludeDirs.begin(), IncludeDirs.end());
    for (const std::string &D : Dirs) {
      llvm::SmallString<256> P(D);
      llvm::sys::path::append(P, Include);
      if (isRegularFile(P)) {
        Header = Normal(P);
        break;
      }
    }
    llvm::StringRef Ext = llvm::sys::path::extension(Header);
    if (Header.empty() || !(Ext == ".h" || Ext == ".hpp" || Ext == ".hh" ||
                            Ext == ".hxx"))
      continue;
    llvm::StringRef Stem = llvm::sys::path::stem(Header);
    llvm::StringRef HeaderDir = llvm::sys::path::parent_path(Header);
    std::vector<std::string> Places = {HeaderDir.str(), MainDir.str()};
    // include/<sub>/x.h pairs with src/<sub>/x.cpp (up to three levels of
    // <sub>).
    llvm::SmallString<256> Up(HeaderDir);
    std::string Sub;
    for (int Depth = 0; Depth < 4 && llvm::sys::path::has_parent_path(Up);
         ++Depth) {
      if (llvm::sys::path::filename(Up) == "include") {
        llvm::sys::path::remove_filename(Up);
        llvm::sys::path::append(Up, "src", Sub);
        Places.push_back(Normal(Up));
        break;
      }
      Sub = (llvm::sys::path::filename(Up) + (Sub.empty() ? "" : "/" + Sub)).str();
      llvm::sys::path::remove_filename(Up);
    }
    for (const std::string &Place : Places)
      for (llvm::StringRef SourceExt : {".cpp", ".cc", ".cxx"}) {
        llvm::SmallString<256> P(Place);
        llvm::sys::path::append(P, Stem + SourceExt);
        std::string Path = Normal(P);
        // A header name cannot spell a quote or a line break.
        if (Path.find_first_of("\"\n") == std::string::npos &&
            isRegularFile(Path) && Seen.insert(realPath(Path)).second)
          Out.push_back(Path);
      }
  }
  return Out;
}

std::string withCompanions(llvm::StringRef Text,
                           const std::vector<std::string> &Companions) {
  std::string Out = Text.str();
  Out += "\n// tensor-accountant: companion sources, followed into\n";
  for (const std::string &C : Companions)
    Out += "#include \"" + C + "\"\n";
  return Out;
}

} // namespace tma
