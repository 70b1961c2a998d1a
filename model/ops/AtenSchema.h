// ATen operator schemas, as LibTorch's headers carry them, and what they
// say about an op's result when no hand rule models the op.
//
// Design:
//  1. Every ATen op overload has a schema string (`schema_str` of
//     `at::_ops::<op>[_<overload>]` in ATen/ops/<op>_ops.h), in
//     native_functions.yaml's notation with alias annotations:
//     `swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)`,
//     `mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)`.
//     parseAtenSchema reads it into arguments and returns, each with its
//     alias set and whether it is written.
//  2. atenResultFacts derives the op's result from the annotations alone:
//     a return sharing an argument's alias set is a view of it (`Tensor(a)`)
//     or a list of views (`Tensor(a)[]`); a written one (`Tensor(a!)`) is
//     that argument itself, written in place (in-place self_, out=); an
//     unannotated one is new storage.
//  3. Where the annotation does not tell the whole story, the registry
//     below says so by the op's ATen name, and the fact is Unknown: ops
//     annotated as aliases that copy when the layout asks (reshape,
//     flatten, contiguous...), unannotated ones that may return an input
//     or a view of it (atleast_1d, einsum, dropout...), ATen's private ops
//     (a leading underscore). In-place ops tagged `inplace_view` in
//     native_functions.yaml change self's geometry (changesSelfGeometry).
//  4. No Clang here: the frontend reads the strings from the AST
//     (frontend/AtenOps.h) and hands them to this file.
#pragma once

#include "model/Ops.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tma {

/// One argument or return of a schema.
struct AtenSchemaArg {
  std::string Type;      // without the alias annotation: "Tensor", "int[]", "Tensor[]", "Tensor?"
  std::string Name;      // empty for an unnamed return
  std::string AliasSet;  // "a" of `Tensor(a)` / `Tensor(a!)` / `Tensor(a -> *)`; empty: none
  bool IsWrite = false;  // `(a!)`
  bool KwargOnly = false;
  std::optional<std::string> Default; // as written after '='
  /// A Tensor or an optional Tensor.
  bool isTensor() const;
  /// A list of tensors (Tensor[], Tensor?[]).
  bool isTensorList() const;
};

struct AtenSchema {
  std::string Name;     // "mm"
  std::string Overload; // "out"; empty for the default overload
  std::vector<AtenSchemaArg> Arguments;
  std::vector<AtenSchemaArg> Returns;
  /// The op's identity: "aten::mm.out", "aten::swapaxes".
  std::string id() const;
  /// The index of the argument called Name, or nullopt.
  std::optional<size_t> argument(std::string_view ArgName) const;
};

/// Parses a schema string; nullopt (with Error set) when it is not one.
std::optional<AtenSchema> parseAtenSchema(std::string_view Text,
                                          std::string *Error = nullptr);

/// What one return of an op is, from the schema.
struct AtenReturnFact {
  enum class Kind {
    NotTensor,  // an int, a bool, a scalar...
    NewStorage, // a fresh tensor (or list of them)
    ViewOf,     // a view of Arguments[Argument]
    ViewsOf,    // a list of views of Arguments[Argument]
    Written,    // Arguments[Argument] itself, which the op writes
    Unknown,    // the schema does not tell (Why says why)
  } K = Kind::Unknown;
  size_t Argument = 0;
};

/// What an op does to its arguments and returns, from its schema.
struct AtenResultFacts {
  std::vector<AtenReturnFact> Returns;
  /// Arguments the op writes (`Tensor(a!)`): in place or out=.
  std::vector<size_t> Written;
  /// The op changes self's sizes/strides in place (ATen's inplace_view).
  bool ChangesSelfGeometry = false;
  /// Why a return is Unknown; empty otherwise.
  std::string Why;
};

AtenResultFacts atenResultFacts(const AtenSchema &S);

/// Whether op Name (no "aten::", no overload) changes self's geometry in
/// place: ATen's `inplace_view` ops (squeeze_, t_...) and resize_, set_.
bool isInplaceViewOp(std::string_view Name);

/// The outcome of an op no hand rule models whose schema says its result
/// is a view of Base: Base's storage and device, no bytes read or
/// written, the geometry (and the dtype: view_as_real changes it) unknown
/// for want of a shape rule.
OpOutcome schemaViewOutcome(const AtenSchema &S, const TensorValue &Base);
/// The same for a result in new storage: Alloc when the op has no tensor
/// input, else Copy; its bytes, and what the op allocates inside, unknown.
OpOutcome schemaNewStorageOutcome(const AtenSchema &S, bool HasTensorInputs);
/// The reason a schema-only result's geometry is unknown.
std::string noShapeRule(const AtenSchema &S);

} // namespace tma
