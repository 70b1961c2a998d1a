// The push_back calls that build a Sequential member in its constructor
// (SequentialPushes.cpp; used by ModuleMembers.cpp).
#pragma once

#include "frontend/FunctionEvaluator.h"

namespace tma {

/// The push_back calls onto Sequential member F (Pushes of them in the
/// class's methods) that Ctor's body runs, in order, into Run, given the
/// constructor's arguments bound in FE.IntVars; or why they are not known
/// (then Run is not to be used).
std::string pushedLayers(FunctionEvaluator &FE, const clang::FieldDecl *F,
                         const clang::CXXConstructorDecl *Ctor,
                         const clang::Stmt *CtorBody, unsigned Pushes,
                         std::vector<const clang::CXXMemberCallExpr *> &Run);

} // namespace tma
