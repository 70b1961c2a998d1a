// Internal to the preamble cache (driver/PreambleCache*.cpp): what a PCH was
// built from, and the manifest that says whether it still matches
// (PreambleCache.h, design point 5). RecordInputs watches the build: the
// files it read, the include names it looked up and, for the LibTorch
// include alone, the standard headers it absorbs (design point 1).
#pragma once

#include "clang/Frontend/PrecompiledPreamble.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tma::preamble {

/// Bump when the manifest format or the way PCHs are built changes.
constexpr const char *FormatTag = "tma-preamble-cache 4";

struct InputFile {
  std::string Path;
  uint64_t Size = 0;
  int64_t MTimeNs = 0;
};

struct Manifest {
  uint64_t PCHSize = 0;
  uint64_t PCHHash = 0;
  /// First components of the include names the parse looked up.
  std::vector<std::string> Names;
  /// Standard headers (<vector>) the LibTorch parse includes itself, so
  /// that a file including them before LibTorch parses the same program
  /// with this entry (AbsorptionRecorder says when).
  std::vector<std::string> Absorbs;
  std::vector<InputFile> Inputs;
};

std::optional<InputFile> statFile(llvm::vfs::FileSystem &FS,
                                  llvm::StringRef Path);

std::string render(const Manifest &M);
std::optional<Manifest> parseManifest(llvm::StringRef Text);

class AbsorptionRecorder;

/// Records every file the parse read (size and mtime as clang saw them),
/// the first component of every include name it looked up, and (for the
/// LibTorch include alone) the standard headers it absorbs.
class RecordInputs : public clang::PreambleCallbacks {
public:
  explicit RecordInputs(bool FindAbsorbed);
  ~RecordInputs() override;
  void BeforeExecute(clang::CompilerInstance &CI) override;
  void AfterExecute(clang::CompilerInstance &CI) override;
  std::unique_ptr<clang::PPCallbacks> createPPCallbacks() override;
  // Project headers in a file's own preamble keep their bodies (a module
  // defined in its header is followed into); LibTorch's do not.
  bool shouldSkipFunctionBody(clang::Decl *D) override;
  struct SeenFile {
    std::string Path;
    uint64_t Size;
    int64_t MTimeSeconds;
  };
  std::vector<SeenFile> Seen;
  std::set<std::string> Names;
  std::vector<std::string> Absorbed;

private:
  class Recorder;
  bool FindAbsorbed;
  std::unique_ptr<AbsorptionRecorder> Absorption;
};

} // namespace tma::preamble
