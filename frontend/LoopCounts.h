// LoopCounts: what a loop's source says about how it runs, read before it
// runs: how many times a counted `for` loop iterates, whether its body may
// leave an iteration early, and whether a tensor list is only appended to
// (LoopCounts.cpp). Statement work (StatementWalker::loopAtFixpoint) uses
// them to know a list a loop builds: `for (int64_t i = 0; i < 4; ++i)
// xs.push_back(x.pow(i + 1));` leaves four tensors in xs.
#pragma once

#include "frontend/FunctionEvaluator.h"

#include "clang/AST/Stmt.h"

#include <optional>

namespace tma {

/// The most tensors a loop's appends are followed for: a list built by a
/// longer loop is not known (each element is a value of the trace).
constexpr int64_t MaxElementsBuilt = 4096;

/// How many times `for (T i = A; i < B; ++i)` runs (also `i <= B`,
/// `i != B`, `B > i`, `i++`, `i += 1`) when A and B are integer constants
/// and nothing but the increment changes i; nullopt otherwise.
std::optional<int64_t> constantTripCount(const clang::ForStmt *FS,
                                         FunctionEvaluator &FE);

/// Whether Body may end an iteration or the loop other than by running to
/// its end, or be entered other than from its start: break, continue,
/// return, goto, throw, a label or a case anywhere in it (a `continue`
/// before a push_back would skip an element; a goto from outside to a
/// label inside runs the body of a loop that runs zero times).
bool mayLeaveIterationEarly(const Stmt *Body);

/// Whether every mention of List in Body is the object of a push_back or
/// emplace_back: the body appends to it and reads nothing of it, so what
/// it appends does not depend on what earlier iterations appended.
bool onlyAppendedIn(const Stmt *Body, const clang::ValueDecl *List);

/// Whether D is declared inside Body (a fresh object each iteration).
bool declaredIn(const Stmt *Body, const clang::ValueDecl *D);

} // namespace tma
