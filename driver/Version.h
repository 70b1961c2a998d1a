// What this tensor-accountant is and where its parts are: the version
// string (SARIF, the language server and --version report it), the files an
// installed copy finds next to itself, and the --version report.
//
// An installed tool lives in <prefix>/bin with its documentation and its
// clang-tidy module at fixed places below <prefix> (GNUInstallDirs). They
// are found relative to the running binary rather than at the configure-time
// prefix, so a package unpacked anywhere (dpkg --root, a container layer)
// still finds its own files, and a binary in the build tree finds none.
#pragma once

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tma {

/// "0.1.0~git13.g60d564763105": the project version and the git commit it
/// was built from (cmake/TmaVersion.cmake explains the spelling).
const char *toolVersion();

/// The same as a Semantic Version 2.0 (SARIF's semanticVersion): a
/// snapshot before a release, "0.1.0~git13.g..." in Debian's order, is the
/// pre-release "0.1.0-git13.g..."; "+git5.g..." is already build metadata.
std::string toolSemanticVersion();

/// <prefix>/share/doc/tensor-accountant/docs when this binary is installed
/// and its documentation is there (checks/*.md among it); else "".
std::string installedDocsDir();

/// The installed clang-tidy module next to this binary, or "".
std::string installedTidyModule();

/// --version: the tool, the Clang it was built with and runs on, the
/// builtin headers it parses with, the LibTorch headers a run without -p or
/// `--` would use (and how they were found), and the installed module.
void printVersion(llvm::raw_ostream &OS);

} // namespace tma
