// The trace: the one interface between the analysis and everything that
// reports on it (table, JSON, checks, verify).
//
// The frontend evaluates a function body statement by statement; each op it
// meets becomes an OpEvent, each value an entry in Values, each name bound a
// Binding. Storages carry their bytes and who made them; the ledger's
// results (live, peak) land in the Summary. Consumers read this structure
// and never go back to the AST to rediscover a shape.
//
// Source positions are plain data (file, line, column) plus the opaque
// encodings of the frontend's begin/end locations, so a check can emit a
// diagnostic at the exact spot without the model knowing what a
// SourceLocation is.
#pragma once

#include "model/Tensor.h"
#include "model/ops/OpCode.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tma {

class ShapeEnv;

/// The LibTorch version of the headers being analysed. Rules that changed
/// between releases (aten-rules.md section 7) branch on it.
struct TorchVersion {
  int Major = 1;
  int Minor = 13;
  bool atLeast(int Ma, int Mi) const {
    return Major > Ma || (Major == Ma && Minor >= Mi);
  }
};

struct SourceSpan {
  std::string File;
  unsigned Line = 0;
  unsigned Column = 0;
  unsigned EndLine = 0;
  unsigned EndColumn = 0;
  /// Opaque frontend encodings (clang::SourceLocation raw values).
  uint64_t BeginRaw = 0;
  uint64_t EndRaw = 0;
  /// File offsets of the span (for rewriting: verify's probes and device
  /// substitution, fix-its). ~0 when unknown.
  size_t BeginOffset = ~size_t(0);
  size_t EndOffset = ~size_t(0);
  bool InMacro = false;
};

using ValueId = int;
using OpId = int;
constexpr ValueId NoValue = -1;
constexpr OpId NoOp = -1;

enum class OpKind {
  Alloc,   // a factory: new storage from nothing
  Copy,    // new storage computed from other tensors
  View,    // new tensor sharing an input's storage
  Self,    // returns an input itself (contiguous() of a contiguous tensor)
  InPlace, // writes into an input, returns it
  Throws,  // LibTorch raises at run time
  Unknown, // not modelled: the reason is in the value
  Use,     // tensors handed to code the analysis does not follow (a call
           // returning no tensor); recorded so checks see the use
};
const char *opKindName(OpKind K);

/// One argument of a table op's call by its ATen schema name ("self",
/// "mat2", "exponent"): autograd's backward nodes name what they save after
/// these (model/AutogradSaves.h), so they tell which overload's node the
/// call records and which saved member is which tensor.
struct OpArgument {
  std::string Name;
  bool IsTensor = false; // a tensor or a list of tensors
  /// A single tensor given for it (NoValue: absent, a list, not a tensor).
  ValueId Tensor = NoValue;
  /// A number given for it, when a constant (an int, a bool, a Scalar):
  /// what a backward formula reads (pow's exponent, softmax's dim).
  std::optional<double> Number;
  /// Not given: the schema's default.
  bool Absent = false;
};

struct OpEvent {
  OpId Id = NoOp;
  std::string Name;         // "contiguous", "reshape", "randn", "index", ...
  /// The table op that made the event (model/ops/OpTable.def); NoOpCode for
  /// anything else (an unmodelled call, a handle copy, a use).
  OpCode Code = NoOpCode;
  SourceSpan Where;         // the call expression
  SourceSpan NameWhere;     // the callee name token (for diagnostics)
  /// The receiver (for member calls) then each explicit argument, as
  /// written; fix-its rewrite around these.
  std::vector<SourceSpan> ArgWhere;
  /// A factory whose dtype came from the default dtype because its options
  /// named none (torch::randint with options but no dtype is float32).
  bool DTypeDefaulted = false;
  /// Gradient mode was on where the op ran: no NoGradGuard, InferenceMode
  /// or AutoGradMode(false) in a scope around it (model/Autograd.h).
  bool GradModeOn = true;
  /// The result requires grad by itself: a factory given
  /// requires_grad(true), requires_grad_(), set_requires_grad(true).
  bool MakesGradLeaf = false;
  /// The call's arguments by schema name, where the frontend knows them
  /// (table ops); empty otherwise.
  std::vector<OpArgument> Args;
  unsigned Statement = 0;   // index into FunctionTrace::Statements
  std::vector<ValueId> Inputs;
  ValueId Result = NoValue;
  OpKind Kind = OpKind::Unknown;
  /// Bytes of the new storage (Alloc/Copy); nullopt when unknown.
  std::optional<SymSize> AllocatedBytes;
  std::optional<SymSize> ReadBytes;
  std::optional<SymSize> WrittenBytes;
  /// Allocated and released inside the op (matmul's folding copy): 0 when
  /// none, nullopt when unknown.
  std::optional<SymSize> TransientBytes = SymSize(0);
  /// The sum of what was allocated and freed inside, when that is not
  /// TransientBytes (a followed call: TransientBytes is its peak).
  std::optional<SymSize> TransientTotalBytes;
  /// OpOutcome::Intermediates.
  std::vector<SymSize> Intermediates;
  std::string Note;  // why it copies, why it returns self, ...
  std::string Error; // Kind == Throws: what LibTorch says
};

/// Everything Op allocates: its new storage and what it allocates and
/// frees inside (a counting allocator sees both). nullopt when the new
/// storage's size is unknown; a transient of unknown size counts 0, as
/// --verify always counted it (its allocated_bytes then mismatches rather
/// than passes).
std::optional<SymSize> allocatedByOp(const OpEvent &Op);

struct ValueInfo {
  TensorValue Value;
  OpId Producer = NoOp; // NoOp for parameters and unknown sources
  /// The first value of the same C++ tensor (one TensorImpl): a Self or
  /// InPlace result is its input, so a change to the geometry of one
  /// handle (`x.unsqueeze_(0)`) is seen through every name holding it.
  /// NoValue: the value is its own tensor.
  ValueId SameTensorAs = NoValue;
  /// A value that is one of several tensors, chosen at run time (a name
  /// after a branch, `c ? a : b`, a call that returns its argument on some
  /// paths): those tensors' values. A change to the geometry of one of
  /// them may be a change to this one, and back.
  std::vector<ValueId> MayBe;
  /// One of tensors nobody listed (a name reassigned inside a loop, after
  /// it): it may be any tensor of the function.
  bool MayBeAny = false;
  /// Non-empty: the value is no tensor at all (`t.defined()` is false), and
  /// says how it came to be: "default-constructed", "moved from". A known
  /// state, not an unknown: the row says undefined.
  std::string UndefinedBy;
};

/// What a storage is to a training step (the peak's breakdown, issue 36).
enum class StorageRole {
  Tensor,         // an input, an activation, what the function's names hold
  Parameter,      // a leaf that requires grad: a module's parameter, a
                  // tensor made with requires_grad
  Gradient,       // a .grad, or a gradient backward() hands between nodes
  OptimizerState, // momentum buffers, exp_avg, exp_avg_sq
  Scratch,        // a backward formula's or an optimizer step's temporary
};

struct StorageInfo {
  StorageId Id = NoStorage;
  StorageRole Role = StorageRole::Tensor;
  std::optional<SymSize> Bytes;
  std::optional<Device> Dev;
  OpId Producer = NoOp;
  /// Not allocated by this function (a parameter's, a member's).
  bool External = false;
  /// The first name bound to a tensor on this storage, once there is one.
  std::string FirstName;
  /// When the ledger let the storage go (C++ lifetimes): the statement
  /// during or after which its last reference went away. With
  /// ReleasedAtScopeEnd the last name holding it went out of scope after
  /// that statement (for the function's own scope: on return); otherwise
  /// the statement ended a temporary or reassigned the name that held it.
  /// nullopt: never held (external storages).
  std::optional<unsigned> ReleasedAfter;
  bool ReleasedAtScopeEnd = false;
  /// Counted among the unknown live bytes (its size is unknown or would
  /// overflow the sum).
  bool CountedAsUnknown = false;
};

struct Binding {
  std::string Name;
  SourceSpan Where;      // the declaration or assignment statement
  SourceSpan NameWhere;  // the variable name
  ValueId Value = NoValue;
  unsigned Statement = 0;
  bool Reassignment = false;
  bool IsParameter = false;
  /// The earliest named tensor in this function sharing the storage, when
  /// the storage was not new at this binding.
  std::string BaseName;
  /// The last statement during which the name still held this value: the
  /// name's next assignment, or the end of its scope (HeldToScopeEnd).
  /// nullopt only while the function is being evaluated.
  std::optional<unsigned> HeldUntil;
  bool HeldToScopeEnd = false;
  /// A reference holds nothing of its own: a row for the name, no hold.
  bool HoldsValue = true;
  /// A static local: its tensor outlives every call.
  bool IsStatic = false;
};

struct Statement {
  SourceSpan Where;
  /// File offset right after the statement's ';' (for probes); ~0 if none.
  size_t EndOffset = ~size_t(0);
  bool InLoop = false;
  bool InBranch = false;
  /// In a loop whose iterations the trace holds one copy each of (an
  /// unrolled loop, StatementWalker::unrolledLoop): each copy runs once,
  /// so autograd and the ledger read it as straight-line code.
  bool Unrolled = false;
  /// A later iteration's copy: the index of the statement it repeats.
  /// foldRepeatedIterations removes the copies when the function ends,
  /// leaving one row per statement of the source.
  int RepeatOf = -1;
  /// Whether the trace has one copy of this statement per time it runs.
  bool runsOncePerCopy() const { return !InLoop || Unrolled; }
  /// Whether the statement is a direct child of a compound statement, so
  /// that code may be inserted after it.
  bool Insertable = true;
  std::vector<OpId> Ops;
  SymSize LiveBytesAfter = 0;
  bool LiveKnown = true;
};

/// Something the analysis could not derive: the report prints it with '?'.
struct Unknown {
  SourceSpan Where;
  std::string What;
  std::string Reason;
};

/// A device expression in the source (torch::kCUDA, "cuda:0"), so verify
/// can run the code on another device.
struct DeviceMention {
  SourceSpan Where;
  bool IsStringLiteral = false;
  Device Named;
};

/// What the CUDA caching allocator would hold for the function's own
/// allocations (model/CudaMemory.h): torch.cuda.max_memory_allocated()
/// and max_memory_reserved() over the call, starting from an empty cache.
/// Present only for a function with a tensor on CUDA.
struct CudaAllocatorSummary {
  std::optional<int64_t> PeakAllocatedBytes;
  std::optional<int64_t> PeakReservedBytes;
  /// Why the figures are unknown, when they are.
  std::string UnknownReason;
};

/// The storage alive at the peak by what it is (PeakLive's bytes, and the
/// op's transient then): they add up to PeakLiveBytes.
struct PeakBreakdown {
  SymSize Parameters = 0;
  SymSize Gradients = 0;
  SymSize OptimizerState = 0;
  /// What only autograd holds then (PeakSavedForBackward).
  SymSize SavedForBackward = 0;
  /// Inside the op at the peak (its transient bytes) and the scratch of a
  /// backward formula or optimizer step.
  SymSize Temporaries = 0;
  /// Everything else: inputs, activations, what names hold.
  SymSize Tensors = 0;
};

/// A counted loop the trace unrolled: its first iteration and, when they
/// differ, its later ones (a training step allocates its gradients and
/// optimizer state in the first).
struct UnrolledLoopSummary {
  SourceSpan Where;
  int64_t Iterations = 0;
  /// The most storage live during the first iteration, and during each
  /// later one (nullopt: unknown, or a loop of one iteration).
  std::optional<SymSize> FirstIterationPeak;
  std::optional<SymSize> LaterIterationPeak;
};

struct TraceSummary {
  std::optional<SymSize> LiveBytesNothingFreed;
  /// Every byte the function's ops allocate, their transient copies
  /// included: what a counting allocator sees over the call.
  std::optional<SymSize> AllocatedBytes;
  std::optional<SymSize> PeakLiveBytes;
  /// When PeakLiveBytes was reached, and the storages alive then.
  unsigned PeakStatement = 0;
  /// False when which statement reaches the peak depends on the sizes
  /// (PeakLiveBytes is then a max over the candidates).
  bool PeakStatementKnown = true;
  std::vector<StorageId> PeakLive;
  /// Of PeakLive, the storages only autograd holds then: what a backward
  /// node saved, past its C++ lifetime (model/Autograd.h).
  std::vector<StorageId> PeakSavedForBackward;
  /// PeakLiveBytes by what each storage is; nullopt when the peak is not
  /// one moment or a size is unknown.
  std::optional<PeakBreakdown> PeakParts;
  std::string UnknownTotalsReason;
  int Unknowns = 0;
  /// The loops unrolled for the totals, in source order.
  std::vector<UnrolledLoopSummary> Loops;
  std::optional<CudaAllocatorSummary> CudaAllocator;
};

/// A storage's lifetime opening or closing, in the order the ledger saw
/// them (the CUDA caching allocator's answer depends on that order, not
/// only on what is live at the peak).
struct StorageEvent {
  enum Kind { Allocated, Released };
  Kind What = Allocated;
  StorageId Storage = NoStorage;
};

/// A torch::nn module the function builds, or the object a module's method
/// runs on and its members: the table torchinfo prints (issue 13). Its
/// parameters are storages of the module; each forward seen gives an
/// output.
struct ModuleSummary {
  std::string Name;   ///< "fc1"; "this" for the method's object
  std::string Layer;  ///< "Linear", or the user class ("TwoLayerNetImpl")
  std::string Parent; ///< "this" for a member; empty otherwise
  SourceSpan Where;   ///< its declaration
  struct Parameter {
    std::string Name; ///< "weight", or "fc1.weight" for the object
    std::optional<Shape> Sizes;
    std::optional<DType> Type;
  };
  std::vector<Parameter> Parameters;
  /// Elements and bytes of what parameters() returns; nullopt when some
  /// parameter is unknown or may be one the analysis does not see (Why).
  std::optional<SymSize> ParameterElements;
  std::optional<SymSize> ParameterBytes;
  std::string Why;
  struct Forward {
    unsigned Line = 0;
    ValueId Output = NoValue;
  };
  std::vector<Forward> Forwards;
  /// Training (docs/modules.md): whether the function calls backward() or
  /// builds an optimizer over its parameters; then the bytes of the .grad
  /// tensors its parameters hold once backward() has run (nullopt with
  /// GradientWhy when unknown).
  bool HasGradients = false;
  std::optional<SymSize> GradientBytes;
  std::string GradientWhy;
  /// An optimizer constructed over its parameters(), and the bytes of the
  /// tensors its state() holds for them once step() has run.
  struct Optimizer {
    std::string Name; ///< the variable: "opt"
    std::string Type; ///< "SGD", "Adam", "AdamW", "RMSprop", "Adagrad"
    unsigned Line = 0;
    std::optional<SymSize> StateBytes;
    std::string Why;
  };
  std::vector<Optimizer> Optimizers;
};

struct FunctionTrace {
  std::string File;
  std::string Name;          // qualified: "Net::forward"
  std::string CallableName;  // how to call it from file scope; empty if not
  SourceSpan Where;
  bool HasParameters = false;
  /// The parameters in order, so that --verify can make inputs and call
  /// the function (docs/verify.md): what kind of argument each takes.
  struct Param {
    enum Kind {
      Tensor,  ///< at::Tensor by value, const&, & or &&
      Integer, ///< a built-in integer type by value or const& (not bool)
      Other,   ///< anything else: --verify cannot make it
    };
    std::string Name;
    Kind K = Other;
    /// The type as C++ spells it with no typedef (`long`, `at::Tensor &`),
    /// for messages and for the harness's integer casts.
    std::string Type;
    bool RValueRef = false; ///< `at::Tensor &&`: the call must std::move
  };
  std::vector<Param> Params;
  /// The function's symbols, facts and assumptions (ShapeEnv); every
  /// symbolic size in the trace is over its symbols. Null when the
  /// function has none.
  std::shared_ptr<ShapeEnv> Env;
  std::vector<Statement> Statements;
  std::vector<OpEvent> Ops;
  std::vector<ValueInfo> Values;
  std::vector<StorageInfo> Storages;
  std::vector<Binding> Bindings;
  std::vector<Unknown> Unknowns;
  std::vector<DeviceMention> Devices;
  /// Every storage of this function the ledger retained for the first
  /// time or released for the last, in order.
  std::vector<StorageEvent> StorageEvents;
  /// Values that leave the function (returned), so they outlive it.
  std::vector<ValueId> Returned;
  /// Non-empty when the function certainly throws at run time.
  std::string Throws;
  TraceSummary Summary;
  /// The modules it builds or runs on, in declaration order.
  std::vector<ModuleSummary> Modules;
  /// The LibTorch its rules followed, for checks that ask a rule again
  /// with other operands (would this matmul copy that input?).
  TorchVersion Version;

  const TensorValue &value(ValueId Id) const { return Values.at(Id).Value; }
  const OpEvent *producer(ValueId Id) const {
    if (Id < 0 || Values.at(Id).Producer == NoOp)
      return nullptr;
    return &Ops.at(Values[Id].Producer);
  }
  const StorageInfo *storageOf(ValueId Id) const {
    StorageId S = value(Id).Storage;
    return S == NoStorage ? nullptr : &Storages.at(S);
  }
};

} // namespace tma
