// Finding a file's compile database when no -p names one. The CLI (and so
// the pre-commit and git hooks, which run it) and the language server use
// this one rule, so a file gets the same compile command from all three:
//
//   from the file's own directory up to the root, the first directory D
//   with D/compile_commands.json or D/compile_flags.txt (what clang-tidy
//   finds: clang's CompilationDatabase::autoDetectFromSource), or with
//   D/build/compile_commands.json or D/build/compile_flags.txt (what
//   clangd also finds: a project configured with `cmake -B build`).
//
// The database found gives the file's command, with clang's interpolation
// for files it lacks (headers) and this machine's LibTorch added to
// commands that reach none, exactly as -p's does (loadBuildDatabase). A
// database that is not valid is an error, never a reason to use another
// one or the default flags: clang's own walk skips it silently, which
// would analyse the file with flags the project does not use.
#pragma once

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tma {

/// The compile_commands.json (else compile_flags.txt) in Dir; "" when it
/// has neither.
std::string databaseFileIn(llvm::StringRef Dir);

/// What the walk found for one file.
struct DatabaseLookup {
  /// The database; null when none was found (DatabaseFile empty) or when
  /// the one found is not valid (Error says why).
  const clang::tooling::CompilationDatabase *DB = nullptr;
  /// The compile_commands.json or compile_flags.txt it was read from.
  std::string DatabaseFile;
  std::string Error;
};

/// The walk above, remembering each directory's answer and each database
/// once loaded. With Refresh (the language server, which runs for a whole
/// editing session), every lookup walks again and a database whose file
/// changed is read again: a build configured, or reconfigured, after the
/// editor started is used from the next analysis on.
class DatabaseDiscovery {
public:
  explicit DatabaseDiscovery(bool Refresh = false) : Refresh(Refresh) {}

  /// File: an absolute path.
  DatabaseLookup find(llvm::StringRef File);

private:
  struct Loaded {
    std::unique_ptr<clang::tooling::CompilationDatabase> DB;
    std::string DatabaseFile;
    std::string Error;
    /// The file's modification time and size when it was read.
    std::string Stamp;
  };
  bool Refresh;
  /// The directory holding the database for files in a directory ("" for
  /// none), for each directory a walk has passed through.
  std::map<std::string, std::string> DatabaseDirOf;
  std::map<std::string, Loaded> Databases;
};

/// The CLI's compile commands when neither -p nor flags after `--` are
/// given: each file's discovered database, else the default flags
/// (makeFixedDatabase: C++17 plus the LibTorch headers found). Null with
/// Error set when a file's database is not valid, has no command for it
/// (an empty one), or a file without one needs the default flags and no
/// LibTorch is found. UsedBy, when given, gets each database file (""
/// for the default flags) and the files that use it, in input order.
std::unique_ptr<clang::tooling::CompilationDatabase>
discoverDatabases(const std::vector<std::string> &Files, std::string &Error,
                  std::map<std::string, std::vector<std::string>> *UsedBy =
                      nullptr);

} // namespace tma
