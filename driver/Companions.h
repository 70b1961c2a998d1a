// Companion sources: where the functions a file calls but does not define
// are defined.
//
// A LibTorch project declares its modules in a header (neural_net.h) and
// defines their constructors and forward() in a source beside it
// (neural_net.cpp); main.cpp includes the header and runs the module. One
// translation unit never holds both, so the analysis of main.cpp could not
// follow `model->forward(images)`. For each project header a file includes
// with quotes, its companion is the source with the same stem next to the
// header, next to the file, or in the src/ directory beside the header's
// include/ directory: the pairing clangd's "switch between header and
// source" makes. The analysis parses the file with its companions appended
// (as a unity build would), follows calls into them, and reports only the
// file's own functions; when the companions do not compile together with
// the file, it parses the file alone.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace tma {

/// The quoted includes written in Text (`#include "a/b.h"`), in order.
std::vector<std::string> quotedIncludes(llvm::StringRef Text);

/// The companion sources of MainFile (absolute): for each quoted include
/// of Text found beside MainFile or in one of IncludeDirs (absolute), the
/// existing sources with its stem (.cpp, .cc, .cxx) beside the header,
/// beside MainFile, or in ../src relative to a header in an include/
/// directory; never MainFile itself, each once, in include order.
std::vector<std::string>
companionSources(const std::string &MainFile, llvm::StringRef Text,
                 const std::vector<std::string> &IncludeDirs);

/// Text with an #include of each companion appended, after a newline, so
/// that nothing in Text moves.
std::string withCompanions(llvm::StringRef Text,
                           const std::vector<std::string> &Companions);

} // namespace tma
