#include "cli/FileSelection.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <set>

namespace tma {

std::optional<std::pair<unsigned, unsigned>> parseShard(llvm::StringRef Text) {
  auto [IndexText, CountText] = Text.split('/');
  unsigned Index, Count;
  if (IndexText.getAsInteger(10, Index) || CountText.getAsInteger(10, Count) ||
      Count == 0 || Index == 0 || Index > Count)
    return std::nullopt;
  return std::make_pair(Index, Count);
}

bool readFileList(llvm::StringRef Path, std::vector<std::string> &Files,
                  std::string &Error) {
  auto Buffer = Path == "-"
                    ? llvm::MemoryBuffer::getSTDIN()
                    : llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buffer) {
    Error = "cannot read the file list '" + Path.str() +
            "': " + Buffer.getError().message();
    return false;
  }
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  (*Buffer)->getBuffer().split(Lines, '\n');
  for (llvm::StringRef Line : Lines) {
    Line = Line.trim();
    if (!Line.empty() && !Line.startswith("#"))
      Files.push_back(Line.str());
  }
  return true;
}

std::vector<std::string>
databaseFiles(const clang::tooling::CompilationDatabase &DB) {
  std::vector<std::string> Files = DB.getAllFiles();
  std::sort(Files.begin(), Files.end());
  Files.erase(std::unique(Files.begin(), Files.end()), Files.end());
  return Files;
}

std::vector<std::string> uniqueFiles(const std::vector<std::string> &Files) {
  std::vector<std::string> Unique;
  std::set<llvm::sys::fs::UniqueID> SeenFiles;
  std::set<std::string> SeenNames;
  for (const std::string &F : Files) {
    // Device and inode: hard links have no path in common.
    llvm::sys::fs::file_status Status;
    bool New = llvm::sys::fs::status(F, Status)
                   ? SeenNames.insert(F).second
                   : SeenFiles.insert(Status.getUniqueID()).second;
    if (New)
      Unique.push_back(F);
  }
  return Unique;
}

std::vector<std::string> shardOf(std::vector<std::string> Files, unsigned Index,
                                 unsigned Count) {
  std::sort(Files.begin(), Files.end());
  Files.erase(std::unique(Files.begin(), Files.end()), Files.end());
  std::vector<std::string> Shard;
  for (size_t I = Index - 1; I < Files.size(); I += Count)
    Shard.push_back(Files[I]);
  return Shard;
}

} // namespace tma
