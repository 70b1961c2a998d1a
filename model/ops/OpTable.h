// The op table: what the analysis knows about each LibTorch op, as data.
//
// Design, in the spirit of ATen's native_functions.yaml and
// torch/_meta_registrations.py:
//  1. One entry per op in OpTable.def: its canonical name and aliases, the
//     family whose file holds its rule, the kind of result it declares,
//     the tags checks ask about, and its overloads as schemas written in
//     native_functions.yaml's notation ("transpose(Tensor self, int dim0,
//     int dim1)"). Adding an op is one entry, one rule, one test.
//  2. The frontend picks the overload whose parameter types match the C++
//     callee's, binds each argument by the schema's type into an ArgValue
//     (its side of the contract: integers, lists, dtypes, tensors), and
//     calls the op's rule. A method call binds its receiver to `self`.
//  3. A rule is one small function per op (rule_<op>, in its family's
//     file): bound arguments in, outcomes out. ATen's errors, defaults and
//     dtype quirks live there, next to the geometry it calls (model/Ops.h).
//  4. Op identity is this table: checks ask hasTag(Op.Code, Tag) or compare
//     OpEvent::Code with an OpCode, never op-name strings.
#pragma once

#include "model/Ops.h"
#include "model/ops/OpCode.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tma {

/// Where an op's rule lives (model/ops/<Family>.cpp).
enum class OpFamily {
  Views, Layout, Indexing, Linalg, Split, Factories, Concat, Elementwise,
  Reductions, NN, Losses
};

/// The result an op declares; its rule's outcomes are one of these, or
/// Throws / Unknown.
enum class ResultKind {
  View,       // a view of self
  ViewOrCopy, // a view when the layout allows, else a copy (reshape, to)
  Alloc,      // a fresh tensor from nothing (factories)
  Copy,       // a fresh tensor computed from the inputs
  InPlace,    // writes into self and returns it
  Views,      // a list of views (split, chunk, unbind)
  Tuple,      // several fresh tensors (max(dim) -> values, indices)
};

/// What checks ask about an op.
enum OpTag : unsigned {
  NoTags = 0,
  Permuting = 1u << 0,   // reorders dims: transpose, permute, t, movedim
  Cast = 1u << 1,        // converts the dtype: to, toType, type_as
  DeviceMove = 1u << 2,  // moves to a device: cpu, cuda, to(device)
  Compacting = 1u << 3,  // copies into a fresh dense layout: contiguous, clone
  SliceLike = 1u << 4,   // shows part of its input: narrow, select, index
  Gathers = 1u << 5,     // reads elements by index into a new tensor
  Reshaping = 1u << 6,   // reshape-like: a view when it can be, else a copy
  CopiesInput = 1u << 7, // its result holds self's elements, possibly copied
  Factory = 1u << 8,     // makes a tensor from sizes and options
  InPlaceOp = 1u << 9,   // writes into self
  Restrides = 1u << 10,  // gives self new sizes and strides in place
                         // (unsqueeze_, t_), no element read or written
  KeepsRank = 1u << 11,  // rank inference: the result has exactly self's rank
  Broadcasts = 1u << 12, // rank inference: the result has the most dims of its tensor operands
  ReducesOneDim = 1u << 13, // rank inference: (dim, keepdim) drops one dim unless kept
  FailsOnStrides = 1u << 14, // raises where self's strides do not allow it
                             // (view, view_as): a contiguous() before it is
                             // required, not a copy to remove
};


/// A schema argument's type, as native_functions.yaml spells it.
enum class ArgType {
  Tensor, OptTensor, TensorList, Int, OptInt, IntList, OptIntList, Bool,
  Float, // a C++ double (native_functions.yaml's float)
  Scalar, ScalarType, OptScalarType, MemoryFormat, Options, Device, Layout,
  Dimname, DimnameList, Str, TensorIndexList, Generator,
  Any, // factories: each argument is read by its own C++ type
};
const char *argTypeName(ArgType T);

struct SchemaArg {
  std::string Name;
  ArgType Type = ArgType::Any;
  bool HasDefault = false;
};

struct Schema {
  std::string Text;            // as written in OpTable.def
  std::vector<SchemaArg> Args; // self included
  bool Variadic = false;       // "(...)": bound by the C++ types alone
};

struct OpInfo {
  OpCode Code;
  std::string Name; // canonical
  std::vector<std::string> Aliases;
  OpFamily Family;
  ResultKind Result;
  unsigned Tags = NoTags;
  std::vector<Schema> Overloads;
};

/// The entry for a name as written (canonical or alias), or null.
const OpInfo *lookupOp(std::string_view Name);
const OpInfo &opInfo(OpCode Code);
/// Whether the op a trace event names (as written) has the tag.
bool hasTag(std::string_view OpName, OpTag Tag);
/// Whether the table op has the tag; NoOpCode (not a table op) has none.
bool hasTag(OpCode Code, OpTag Tag);
/// Every entry, in OpTable.def order.
const std::vector<OpInfo> &allOps();

// ---- Bound arguments ------------------------------------------------------------

struct NamedArgs;

/// TensorOptions as far as the source determines them: each field absent
/// (not set in the options), derived, or set but not derivable.
struct OptionsValue {
  bool HasType = false;
  std::optional<DType> Type;
  /// HasType with Type unknown: the parameter whose dtype it is
  /// (`x.options()`), or empty.
  std::string TypeOf;
  bool HasDevice = false;
  std::optional<Device> Dev;
  bool HasFormat = false;
  std::optional<MemoryFormat> Fmt;
  /// requires_grad: false unless set; nullopt when set to a flag that is
  /// not derivable (storage-neutral; autograd reads it, model/Autograd.h).
  std::optional<bool> RequiresGrad = false;
  std::string UnknownReason;
  bool Known = true; // false: the options object itself is not understood
};

/// One argument as the frontend bound it. Absent: an empty optional
/// (`c10::nullopt`, `{}`, an undefined Tensor()) or not there at all.
/// Unknown: there but not derivable, with the reason. A default argument is
/// read from the declaration (Defaulted).
struct ArgValue {
  enum class Kind {
    Absent, Unknown, Tensor, TensorList, Int, IntList, Bool, Scalar, DType,
    Device, MemoryFormat, Options, Indices, Number, Other,
    /// An integer known as a symbolic size (`x.size(1) / 2`), not a
    /// number: only rules that read size() accept it; known() is false.
    SymInt,
    /// A torch::nn options object (`F::Conv2dFuncOptions().stride(2)`):
    /// its options by name in Named.
    NNOptions
  };
  Kind K = Kind::Absent;
  ArgType Type = ArgType::Any; // the schema's (or, variadic, the C++ one's)
  std::string Reason;          // Unknown: why
  /// Tensor: its value id in the trace and its value; TensorList: each.
  ValueId Tensor = NoValue;
  TensorValue TV;
  std::vector<ValueId> Tensors;
  std::vector<TensorValue> TVs;
  int64_t Int = 0;
  /// Int and SymInt: the value as a size (Int: the constant).
  SymSize Size;
  /// The integer as a size, constant or symbolic; nullopt otherwise.
  std::optional<SymSize> size() const {
    if (K == Kind::Int || K == Kind::SymInt)
      return Size;
    return std::nullopt;
  }
  /// int[]: the sizes, each an integer or a symbolic size. A rule reads
  /// them as a Shape (view, expand) or, through dims(), as a DimList
  /// (permute, a reduction's dims), which must be integers.
  Shape List;
  /// List as dimension indices: nullopt when one is not an integer.
  std::optional<DimList> dims() const {
    if (auto C = constantShape(List))
      return *C;
    return std::nullopt;
  }
  bool Bool = false;
  ElemOperand Scalar;            // Scalar (as an elementwise operand)
  std::optional<double> Number;  // Scalar: its value when a constant
  /// Other read from a std::vector<double> option (interpolate's
  /// scale_factor): its elements.
  std::vector<double> Numbers;
  bool Floating = false;         // Scalar: written as a floating value
  std::optional<DType> LiteralType; // Scalar: the C++ literal's dtype
  /// Scalar of a C++ integer type: its value, a number or a symbolic size
  /// (`T` where `auto T = x.size(1)`); nullopt when not derivable.
  std::optional<SymSize> Integral;
  DType Type_ = DType::Float32;
  /// A ScalarType argument that is a tensor parameter's dtype
  /// (`x.scalar_type()`, x's dtype the caller's): the parameter. The
  /// argument is then Unknown (there is no Type_ to read), so only rules
  /// that look here follow it.
  std::string TypeOf;
  Device Dev;
  tma::MemoryFormat Fmt = tma::MemoryFormat::Preserve;
  OptionsValue Options;
  std::vector<IndexSpec> Indices;
  /// Str: the string, when a literal.
  std::optional<std::string> Str;
  /// NNOptions: the options the object sets, by their LibTorch names.
  std::shared_ptr<const NamedArgs> Named;
  /// NNOptions: the option called Name (set by the source or the options
  /// class's default), or null when the object has no such option.
  const ArgValue *option(const std::string &Name) const;

  /// The value is the declaration's default argument, not written at the
  /// call: known, but not given.
  bool Defaulted = false;

  /// Written at the call (not absent, not a default).
  bool given() const { return K != Kind::Absent && !Defaulted; }
  /// Has a value (written or the declaration's default).
  bool known() const {
    return K != Kind::Absent && K != Kind::Unknown && K != Kind::SymInt;
  }
};

/// The options of a torch::nn options object, by name, each an ArgValue:
/// Int, IntList (an ExpandingArray: `3` for a 2-D option is [3, 3]),
/// Bool, Number (double), Str, DType, Tensor, Unknown (written but not
/// derived), Other (set, of a kind not read: an enum variant is its name in
/// Str). Values the source does not set carry the options class's default
/// (Defaulted).
struct NamedArgs {
  std::string Record; // "torch::nn::Conv2dOptions", "...::Conv2dFuncOptions"
  std::map<std::string, ArgValue> Values;
  /// False: some part of the chain was not understood (Why); what was read
  /// may be incomplete, so a rule should not trust defaults.
  bool Complete = true;
  std::string Why;
};

/// An op call, bound: what a rule sees.
struct OpCall {
  const OpInfo *Op = nullptr;
  unsigned Overload = 0;
  std::string Written; // the name as written (alias or canonical)
  bool IsMethod = false;
  /// torch::nn::functional's spelling (its argument order differs).
  bool Functional = false;
  std::vector<ArgValue> Args; // in the overload's schema order, self first
  TorchVersion Version;
  /// The bytes of a storage, when known (as_strided's bound check).
  std::optional<SymSize> SelfStorageBytes;

  /// Argument K, or an absent one past the end.
  const ArgValue &arg(size_t K) const;
  /// The argument the schema calls `self` (the receiver of a method call).
  const ArgValue &self() const { return arg(selfIndex()); }
  size_t selfIndex() const;
  /// The schema's name for argument K of the chosen overload.
  const std::string &argName(size_t K) const;
};

/// What a rule returns: one outcome per result tensor.
struct RuleResult {
  std::vector<OpOutcome> Outcomes;
  /// The name the trace records; empty: as written.
  std::string Name;
  /// Indices into OpCall::Args of the tensors that are the op's inputs, in
  /// order; unset: every tensor argument in schema order (scalars are
  /// not inputs). Views share the storage of the first input.
  std::optional<std::vector<size_t>> Inputs;
  /// The op changed self in a way the rule does not follow (an in-place
  /// op it does not model): the frontend forgets what it knew of it.
  bool ForgetSelf = false;
  /// Self's geometry changed in place to the outcome's (unsqueeze_): every
  /// name holding self's tensor holds the result from here on.
  bool SelfTakesResult = false;
};

/// Runs the rule of C.Op on its bound arguments.
RuleResult applyRule(const OpCall &C);

/// A rule's single outcome.
RuleResult one(OpOutcome Out, std::string Name = "");
/// The op with these arguments is not modelled: an unknown outcome whose
/// only input is self.
RuleResult notModelled(const OpCall &C, const std::string &Why);
/// The same, with every tensor argument as an input.
RuleResult notModelledOnAll(const OpCall &C, const std::string &Why);

} // namespace tma
