// What Clang types and expressions are, as the evaluator asks: a tensor, a
// list or tuple of tensors, options; the nodes that do not change a value.
// Types are recognised by the records they name (at::Tensor, std::vector of
// them), never by spelling.
#pragma once

#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Type.h"

#include <string>

namespace tma {

/// The qualified name of the record or enum a type names ("at::Tensor").
std::string recordName(clang::QualType T);
bool isTensorType(clang::QualType T);
bool isOptionsType(clang::QualType T);
/// std::vector<at::Tensor>.
bool isTensorVectorType(clang::QualType T);
/// std::tuple / std::pair whose elements are all tensors (or references to
/// tensors, as std::tie makes).
bool isTensorTupleType(clang::QualType T);
/// Why calls to a lambda are not followed (its captures are the enclosing
/// function's; a generic one has no single body), or "" when they are.
std::string lambdaNotFollowed(const clang::CXXRecordDecl *Closure);
/// A struct of the program whose members are all tensors (`struct VAEOutput
/// { torch::Tensor reconstruction, mu, log_var; };`), read as a tuple of
/// them in member order; null for any other type.
const clang::CXXRecordDecl *tensorRecord(clang::QualType T);
/// The top-level namespace a declaration lives in ("at", "torch", "c10").
std::string topNamespace(const clang::Decl *D);
bool isLibTorchDecl(const clang::Decl *D);
/// Whether the parse keeps D's function body: the user's code (the main
/// file, project headers, a companion source) is read in full so calls and
/// modules defined there can be followed; library code (system headers,
/// LibTorch's headers wherever they are found) is declarations only, which
/// is most of what makes a parse fast.
bool keepsFunctionBody(const clang::Decl *D);
/// A CUDA kernel (`__global__`) or a function for the device alone
/// (`__device__` without `__host__`): its body is device code, which the
/// analysis does not read (the host code that launches it is analysed).
bool isDeviceOnlyFunction(const clang::Decl *D);

/// Strips the nodes that do not change a value: parentheses, implicit
/// casts, temporaries, cleanups, default arguments.
const clang::Expr *strip(const clang::Expr *E);

/// The braced list an argument is written as (`{B, T, C}`), through the
/// ArrayRef and std::initializer_list constructors that carry it to a
/// LibTorch parameter; null when it is not one.
const clang::InitListExpr *bracedList(const clang::Expr *E);
bool isDefaultArg(const clang::Expr *E);
std::string calleeName(const clang::FunctionDecl *FD);
/// Whether E does any tensor work (a tensor-typed subexpression that is not
/// just a name), so that a statement is worth opening for it.
bool hasTensorWork(const clang::Expr *E);
/// Whether any subexpression of E below E itself (a name included) is or
/// holds a tensor.
bool mentionsTensor(const clang::Expr *E);
/// `t.data_ptr<float>()` (and mutable_/const_data_ptr): a raw pointer to
/// t's memory, which the code past it may read as a flat array.
bool takesRawPointer(const clang::CXXMemberCallExpr *MC);
/// A tensor method that changes its object's sizes, strides or storage in
/// place (`unsqueeze_`, `t_`, `resize_`, `set_`): every handle to that
/// tensor sees the change.
bool changesGeometryInPlace(llvm::StringRef MethodName);
/// The expression whose tensor E is a handle to: through copies and moves
/// of a torch::Tensor (a by-value argument), `std::move`, `std::forward`
/// and casts to a reference.
const clang::Expr *handleSource(const clang::Expr *E);
/// A type that holds tensors another function may reach: a standard or
/// c10 container, a tuple or pair, an ArrayRef or initializer_list, an
/// optional, or a reference to one (not a tensor itself).
bool holdsTensors(clang::QualType T);
/// holdsTensors, or a record of the program with a member that is or
/// holds a tensor (`struct Box { torch::Tensor t; int k; };`).
bool mayHoldTensor(clang::QualType T, int Depth = 0);

/// Also looks through converting constructors with one argument
/// (c10::optional<int64_t>(3), TensorOptions(kHalf), Scalar(1.5)) until
/// Stop says it has reached the expression it wants.
template <typename Pred>
const clang::Expr *stripConversions(const clang::Expr *E, Pred Stop) {
  while (true) {
    E = strip(E);
    if (!E || Stop(E))
      return E;
    const auto *CE = clang::dyn_cast<clang::CXXConstructExpr>(E);
    if (!CE || CE->getNumArgs() == 0)
      return E;
    // Only the first argument carries the value for the conversions we look
    // through; the rest must be defaults.
    for (unsigned I = 1; I < CE->getNumArgs(); ++I)
      if (!clang::isa<clang::CXXDefaultArgExpr>(CE->getArg(I)))
        return E;
    E = CE->getArg(0);
  }
}


/// The value inside an optional argument (c10::optional<T>, SymInt, ...),
/// or null when the argument is absent: a default, c10::nullopt, `{}`.
/// IsValue says when the unwrapping has reached the value itself.
template <typename Pred>
const clang::Expr *presentOptional(const clang::Expr *E, Pred IsValue) {
  if (!E)
    return nullptr;
  const clang::Expr *S = stripConversions(E, [&](const clang::Expr *X) {
    std::string T = recordName(X->getType());
    return IsValue(X) || T == "c10::nullopt_t" || T == "std::nullopt_t";
  });
  if (!S)
    return nullptr;
  std::string T = recordName(S->getType());
  if (T == "c10::nullopt_t" || T == "std::nullopt_t")
    return nullptr;
  if (const auto *CE = clang::dyn_cast<clang::CXXConstructExpr>(S); CE && CE->getNumArgs() == 0)
    return nullptr;
  return S;
}

} // namespace tma
