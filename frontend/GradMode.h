// Autograd's inputs from the source (issue 36): whether gradient mode is
// on where an expression runs, which tensors a call makes require grad,
// and what the parsed LibTorch's autograd saves (model/AutogradSaves.h).
//
//  1. Gradient mode is LibTorch's thread-local flag: a guard object
//     (NoGradGuard; AutoGradMode(false); InferenceMode, whose argument
//     defaults to true) turns it off from its declaration to the end of
//     its scope. The innermost, latest guard before an expression in the
//     scopes around it decides; with none the function runs as its caller
//     left the mode, taken as on (the default, and the answer that claims
//     least: a recorded op can only make the totals unknown).
//  2. A guard whose flag is not a constant is taken as on, for the same
//     reason.
#pragma once

#include "model/AutogradSaves.h"

#include <memory>

namespace clang {
class ParentMap;
class Preprocessor;
class Stmt;
} // namespace clang

namespace tma {

/// Whether gradient mode is on where S runs; Parents spans the body S is
/// in (an S outside it is taken as on).
bool gradModeOnAt(const clang::ParentMap &Parents, const clang::Stmt *S);

/// What autograd saves in the LibTorch the preprocessor parsed: the
/// Functions.h under the include directory of its torch/version.h, read
/// once per path. Null when
/// no torch/version.h was included or the header is not there.
std::shared_ptr<const AutogradSaves>
autogradSavesFor(const clang::Preprocessor &PP);

} // namespace tma
