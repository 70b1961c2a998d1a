// Finding a file's compile database (design in DatabaseDiscovery.h).
#include "driver/DatabaseDiscovery.h"
#include "driver/Analysis.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace clang::tooling;

namespace tma {

// compile_commands.json first, as clang's loadFromDirectory tries it first.
std::string databaseFileIn(llvm::StringRef Dir) {
  for (const char *Name : {"compile_commands.json", "compile_flags.txt"}) {
    llvm::SmallString<256> File(Dir);
    llvm::sys::path::append(File, Name);
    if (llvm::sys::fs::exists(File))
      return std::string(File);
  }
  return "";
}

namespace {

std::string stampOf(const std::string &File) {
  llvm::sys::fs::file_status Status;
  if (llvm::sys::fs::status(File, Status))
    return "";
  return std::to_string(Status.getLastModificationTime().time_since_epoch().count()) +
         "/" + std::to_string(Status.getSize());
}

} // namespace

DatabaseLookup DatabaseDiscovery::find(llvm::StringRef File) {
  llvm::SmallString<256> Start = llvm::sys::path::parent_path(File);
  llvm::sys::path::remove_dots(Start, /*remove_dot_dot=*/true);
  std::vector<std::string> Walked;
  std::string Found;
  for (std::string Dir(Start); !Dir.empty();) {
    auto Known = DatabaseDirOf.find(Dir);
    if (!Refresh && Known != DatabaseDirOf.end()) {
      Found = Known->second;
      break;
    }
    Walked.push_back(Dir);
    llvm::SmallString<256> Build(Dir);
    llvm::sys::path::append(Build, "build");
    if (!databaseFileIn(Dir).empty()) {
      Found = Dir;
      break;
    }
    if (!databaseFileIn(Build).empty()) {
      Found = std::string(Build);
      break;
    }
    std::string Parent = llvm::sys::path::parent_path(Dir).str();
    if (Parent == Dir)
      break;
    Dir = std::move(Parent);
  }
  // Every directory on the way has the same answer as the one walked from.
  for (const std::string &Dir : Walked)
    DatabaseDirOf[Dir] = Found;
  if (Found.empty())
    return {};
  auto It = Databases.find(Found);
  if (It != Databases.end() && Refresh &&
      (It->second.DatabaseFile != databaseFileIn(Found) ||
       It->second.Stamp != stampOf(It->second.DatabaseFile))) {
    Databases.erase(It);
    It = Databases.end();
  }
  if (It == Databases.end()) {
    Loaded L;
    L.DatabaseFile = databaseFileIn(Found);
    L.Stamp = stampOf(L.DatabaseFile);
    L.DB = loadBuildDatabase(Found, L.Error);
    It = Databases.emplace(Found, std::move(L)).first;
  }
  DatabaseLookup Result;
  Result.DB = It->second.DB.get();
  Result.DatabaseFile = It->second.DatabaseFile;
  Result.Error = It->second.Error;
  return Result;
}

namespace {

/// Each file's discovered database, else the default flags. Every file's
/// lookup was made (and checked) by discoverDatabases before this is used.
class DiscoveredDatabases : public CompilationDatabase {
public:
  std::vector<CompileCommand>
  getCompileCommands(llvm::StringRef File) const override {
    DatabaseLookup L = Discovery.find(File);
    if (L.DB)
      return L.DB->getCompileCommands(File);
    if (Default && L.Error.empty())
      return Default->getCompileCommands(File);
    return {};
  }

  mutable DatabaseDiscovery Discovery;
  std::unique_ptr<CompilationDatabase> Default;
};

} // namespace

std::unique_ptr<CompilationDatabase>
discoverDatabases(const std::vector<std::string> &Files, std::string &Error,
                  std::map<std::string, std::vector<std::string>> *UsedBy) {
  auto Result = std::make_unique<DiscoveredDatabases>();
  for (const std::string &F : Files) {
    llvm::SmallString<256> Abs(F);
    llvm::sys::fs::make_absolute(Abs);
    DatabaseLookup L = Result->Discovery.find(Abs);
    if (!L.Error.empty()) {
      Error = "'" + F + "': " + L.Error +
              " (the compile database found above the file; fix it, name "
              "another with -p, or give flags after --)";
      return nullptr;
    }
    if (L.DB) {
      Error = missingCommandProblem(*L.DB, F, L.DatabaseFile);
      if (!Error.empty()) {
        Error += ", the compile database found above it";
        return nullptr;
      }
    }
    if (!L.DB && !Result->Default) {
      Result->Default = makeFixedDatabase({}, /*HaveUserFlags=*/false, Error);
      if (!Result->Default)
        return nullptr;
    }
    if (UsedBy)
      (*UsedBy)[L.DatabaseFile].push_back(F);
  }
  return Result;
}

} // namespace tma
