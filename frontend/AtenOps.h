// Which ATen op a LibTorch call is, read from the headers being parsed.
//
// Design:
//  1. Every ATen op overload is a struct in namespace at::_ops
//     (ATen/ops/<op>_ops.h) whose static member `schema_str` is
//     initialised with the op's schema; its `name` member is "aten::<op>".
//     Both are read from the AST (the initialisers, not function bodies:
//     the tool skips the bodies of library functions).
//  2. A C++ entry point (`at::swapaxes`, `Tensor::swapaxes`, `at::mm_out`,
//     `at::mm_outf`) names its parameters as the schema names its
//     arguments, so the op is the struct named after the callee (or after
//     its op without the `_out`/`_outf` suffix) whose `call` takes
//     parameters of the same names (a method's receiver is `self`), of the
//     same types where several overloads share the names. The names also
//     give each C++ argument its schema argument (`mm_out(out, self, mat2)`
//     is `call(self, mat2, out)`).
//  3. Answers are cached per callee, and the index of the structs per
//     ASTContext, for as long as that context lives.
#pragma once

#include "model/ops/AtenSchema.h"

#include <vector>

namespace clang {
class ASTContext;
class FunctionDecl;
} // namespace clang

namespace tma {

/// A LibTorch callee resolved to its ATen op.
struct AtenCallee {
  AtenSchema Schema;
  AtenResultFacts Facts;
  /// For each parameter of the callee, the index of its schema argument.
  std::vector<size_t> SchemaArgOfParam;
  /// A method: the index of `self`, which its receiver binds to.
  std::optional<size_t> SelfArg;
};

/// The ATen op Callee calls, or null when it is none that can be told
/// (not an entry point of an ATen op, or ambiguous).
const AtenCallee *atenCallee(clang::ASTContext &Ctx,
                             const clang::FunctionDecl *Callee);

} // namespace tma
