// FunctionEvaluator: evaluates one function body's LibTorch expressions in
// statement order and feeds the Interpreter. It holds the evaluation's
// state and the expression work; the rest is done by collaborators of
// their own (rooms: ArgumentReader, SymbolReader, OpBinder, CallFollower,
// ModuleTracker, TrainingTracker, StatementWalker, Invalidation, each with
// its header in frontend/), which keep no state and read and write this
// class's, so loops and branches still snapshot one state
// (changeableState(), BranchState). The files of frontend/, each with one
// job:
//
//   AstQueries.cpp     what a Clang type or expression is (a tensor, a list)
//   Arguments.cpp      integers, lists, dtypes, devices, options as values
//   Symbols.cpp        parameters as symbols, integers as sizes, facts
//                      from TORCH_CHECK / assert / if-throw
//   ArgBinder.cpp      a call bound to an op's schema (model/ops/OpTable.def)
//   Expressions.cpp    an expression -> the table -> the rule -> the trace
//   Factories.cpp      torch::tensor({...}) literals
//   Slots.cpp          names, references, pointers, members: where a
//                      tensor handle lives, and assignment through them
//   Effects.cpp        code the analysis does not follow, and what it may do
//   Calls.cpp          calls into the translation unit's own functions
//   Modules.cpp        torch::nn layers a function builds or runs
//   Layers.cpp         each built-in layer: its parameters and forward op
//   ModuleMembers.cpp  the layers a user module's constructor builds
//   Training.cpp       backward()'s gradients, optimizers and their state
//   OptionsChains.cpp  torch::nn options objects as named values
//   Declarations.cpp   declarations: tensors, lists, tuples, options, ...
//   Statements.cpp     statement order and control flow, with lifetimes
//   Invalidation.cpp   what a branch or loop may have changed
//   LoopCounts.cpp     a counted loop's trips; lists a loop only appends to
//   Evaluator.cpp      the entry points, per function and per file
//
// Design:
// - Expressions are matched by what Clang resolved them to (the callee's
//   FunctionDecl, the record a type names), never by spelling, so every
//   spelling of an API (torch:: or at::, a using-declaration, an alias)
//   lands on the same rule.
// - Integers are whatever Clang can fold (constexpr, const locals,
//   `16 * 4096`); enumerators (c10::ScalarType, c10::DeviceType) are read by
//   name, so the numbering of the LibTorch headers never matters.
// - Anything not understood becomes an unknown with a reason; the evaluator
//   never substitutes a default it did not see in the source. Default
//   arguments are read from the declaration (torch::randint's `= at::kLong`).
// - Control flow: names assigned in a branch or carried around a loop become
//   unknown after it; allocations inside loops or branches make the totals
//   unknown, with that reason.
#pragma once

#include "frontend/Analyzer.h"
#include "frontend/AstQueries.h"
#include "model/Interpreter.h"
#include "model/ShapeEnv.h"
#include "model/modules/LayerTable.h"
#include "model/ops/OpTable.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace tma {

// The Clang names the evaluator's interface uses.
using clang::AbstractConditionalOperator;
using clang::ASTContext;
using clang::CallExpr;
using clang::CompoundStmt;
using clang::CXXMethodDecl;
using clang::CXXTryStmt;
using clang::DeclStmt;
using clang::Expr;
using clang::FunctionDecl;
using clang::IfStmt;
using clang::LabelDecl;
using clang::QualType;
using clang::SourceLocation;
using clang::SourceManager;
using clang::SourceRange;
using clang::Stmt;
using clang::SwitchStmt;
using clang::ValueDecl;
using clang::VarDecl;

/// A c10::TensorOptions as far as the source determines it.
using Options = OptionsValue;

/// The layer a torch::nn module holder type names ("Linear" for
/// torch::nn::Linear), or nullopt for any other type.
std::optional<std::string> moduleLayer(QualType T);

/// Whether RD derives from torch::nn::Module (directly, or through
/// torch::nn::Cloneable<RD> or another user class).
bool derivesFromModule(const clang::CXXRecordDecl *RD, int Depth = 0);

/// When a declaration of type T initialised by Init constructs a new
/// module (a user module, a torch::nn holder, std::make_shared of a
/// module): the class's name; empty otherwise (a copy, an empty holder,
/// anything else).
std::string constructedModule(QualType T, const Expr *Init);

/// The layer a Sequential holder Object (a local or a member with an
/// in-class initialiser) is constructed with first, or nullopt.
std::optional<std::string> sequentialFirstLayer(const Expr *Object);

/// The declaration an expression names: a variable (`fc`), or a member of
/// the object the method runs on (`fc`, `this->fc`); null otherwise.
const ValueDecl *namedDecl(const Expr *E);

/// E without the copies and moves of a value around it (a holder passed
/// by value, `torch::nn::Linear(opts)` as a functional cast).
const Expr *throughCopies(const Expr *E);
/// The construction of the holder E makes or copies, or null.
const clang::CXXConstructExpr *holderConstruction(const Expr *E);
/// A layer's construction with a register_module("fc", ...) around it
/// looked through (ModuleMembers.cpp).
const Expr *throughRegistration(const Expr *E);
/// `fc = ...` (a statement of a constructor's body): the assigned
/// expression, a register_module around it looked through; else null.
const Expr *assignedLayer(const Expr *E, const clang::FieldDecl *Field);

/// Adds the declarations Body may change (assign, increment, take the
/// address of, bind to a non-const reference) to Out.
void collectMutations(const Stmt *Body, std::set<const ValueDecl *> &Out);

// The evaluator's rooms: classes of their own that keep no state and read
// and write the evaluator's, each reached through an accessor below
// (args(), symbols(), ...) and declared in the header of its name.
class ArgumentReader;
class SymbolReader;
class TrainingTracker;
class ModuleTracker;
class Invalidation;
class StatementWalker;
class CallFollower;
class OpBinder;

class FunctionEvaluator {
public:
  /// Name overrides the qualified name (lambdas: "f::lambda@L12").
  FunctionEvaluator(ASTContext &Ctx, const FunctionDecl &FD,
                    const AnalysisOptions &Opts, const std::string &Name = "")
      : Ctx(Ctx), SM(Ctx.getSourceManager()), FD(FD), Opts(Opts),
        I(Opts.DisplayFile,
          Name.empty() ? FD.getQualifiedNameAsString() : Name,
          span(FD.getSourceRange())) {
    I.setAutogradSaves(Opts.Saves);
  }

  FunctionTrace run();
  /// Tensor parameters of unknown rank whose view to a full shape showed
  /// their rank (viewRankHints), for a second run of the same function.
  void setRankHints(std::map<std::string, int64_t> Hints) {
    RankHints = std::move(Hints);
  }
  /// The facts an earlier run of the same function found its code to
  /// state (ShapeEnv::seedFacts), known from the first statement on.
  void seedFacts(const ShapeEnv &From) { Env->seedFacts(From); }
  /// After run(): tensor parameters whose rank was stated, not shown (a
  /// layer's documented rank, a matrix for t(), a rank from a view), by
  /// name, with that rank.
  const std::map<std::string, int64_t> &statedRanks() const {
    return StatedRanks;
  }
  /// After run(): those of them a statement showed to have another rank
  /// (it read x.size(2) of an x stated to be 2-d: LibTorch throws there).
  const std::set<std::string> &statedRanksRefuted() const {
    return StatedRankRefuted;
  }
  /// Parameters no rank fits (every one tried was refuted): unknown, with
  /// this reason.
  void setRankUnknown(std::string Name, std::string Reason) {
    RankUnknown[std::move(Name)] = std::move(Reason);
  }
  /// After run(): each tensor parameter of unknown rank whose element count
  /// the code showed to be the product of its first k sizes
  /// (`x.view({x.size(0), x.size(1) / 4, 4, x.size(2)})` goes on only
  /// then), with k: on the default assumption that a size is at least 2,
  /// such a parameter has exactly k dims.
  std::map<std::string, int64_t> viewRankHints() const;

  // The rest is the evaluation's state and the expression work, spread
  // over the files of frontend/ (each names what it defines at its top),
  // and the accessors of the rooms (args(), symbols(), ...).
  struct Flow {
    bool InLoop = false;
    bool InBranch = false;
    /// Every loop around is unrolled (StatementWalker::unrolledLoop):
    /// the trace gets one copy of the statement per iteration.
    bool Unrolled = false;
    /// Whether the statement runs once per copy the trace makes of it.
    bool oncePerCopy() const { return !InLoop || Unrolled; }
  };
  /// How a statement ends, as C++ defines it: normally, or by a jump that
  /// skips what follows it.
  struct Completion {
    enum Kind { Normal, Break, Continue, Return, Goto, Throw } K = Normal;
    const LabelDecl *Label = nullptr; // Goto
    const Stmt *Where = nullptr;      // the jump
    QualType Thrown;                  // Throw: the exception's type
    bool abrupt() const { return K != Normal; }
  };

  // Statements (StatementWalker, Invalidation).
  /// The storage each name that Body may assign holds now.
  using StorageSnapshot = std::map<std::string, StorageId>;
  /// What a branch arm may change and the next arm must not see: the
  /// value each name holds, tensor lists and tuples, option and device
  /// variables. Each arm of an if starts from the state before the if.
  struct BranchState {
    std::map<std::string, ValueId> Names;
    std::map<std::string, std::vector<ValueId>> TensorLists, TensorTuples;
    std::map<std::string, Options> OptionVars;
    std::map<std::string, std::optional<Device>> DeviceVars;
  };
  /// A list or tuple local holds its tensors under hidden names, so they
  /// stay alive with it; nullopt forgets what it held.
  void holdElements(const std::string &Key,
                    const std::optional<std::vector<ValueId>> &Elements,
                    std::map<std::string, std::vector<ValueId>> &Into);
  /// Holds the Index-th element of the list or tuple Key for as long as
  /// the container lives: in the scope it was declared in (ListScopes),
  /// wherever the element was put in (`{ v.push_back(t); }`).
  void holdElement(const std::string &Key, size_t Index, ValueId Element);
  /// The scope (Interpreter::scopeDepth()) each local list or tuple was
  /// declared in, by key.
  std::map<std::string, size_t> ListScopes;
  /// Evaluates the tensor work inside an expression that is not itself a
  /// tensor (`int64_t n = x.sum().item<int64_t>()`, a condition, `(void)`).
  void sideEffects(const Expr *E);

  // Where a tensor handle lives: a named variable, a member of an
  // aggregate local, an element of a tensor vector, a heap object. A
  // reference or a pointer resolves to the slot it names, so assigning
  // through it rebinds that slot (issue 10 item 4).
  struct Slot {
    std::string Key;     // the Interpreter's name key
    std::string Display; // how the source names it
    std::string Vector;  // set for an element of a tensor vector
    size_t Index = 0;
    bool Known = true;   // false: one of Candidates, or unknown
    std::vector<std::string> Candidates;
    std::string Why;     // Known == false: why
  };
  std::optional<Slot> slotOf(const Expr *E);
  ValueId readSlot(const Slot &S, const Expr *E);
  void assignSlot(const Slot &S, ValueId V, const SourceSpan &Where,
                  const SourceSpan &NameWhere);
  void forgetSlot(const std::string &Key, const std::string &Display,
                  const std::string &Why, const SourceSpan &Where);
  /// Key, changed by Why, is a parameter of a followed call: the caller's
  /// argument changed too (summarizeCall reads ChangedParameters).
  void parameterChanged(const std::string &Key, const std::string &Why);
  ValueId assignment(const Expr *E, const Expr *LHS, const Expr *RHS);
  std::string resolveKey(const ValueDecl *D) const;

  // Expressions.
  ValueId tensor(const Expr *E);
  ValueId evaluate(const Expr *S);
  const Expr *spineChild(const Expr *S) const;
  std::optional<std::vector<ValueId>> tensorTuple(const Expr *E);
  std::optional<std::vector<ValueId>> evaluateTuple(const Expr *S);
  ValueId conditional(const AbstractConditionalOperator *CO);
  void opaqueCallEffects(const CallExpr *CE);
  void libTorchWrites(const CallExpr *CE, const FunctionDecl *Callee);
  bool mayAllocateTensors(const FunctionDecl *Callee, int Depth = 0);
  std::map<const FunctionDecl *, bool> MayAllocate;
  ValueId call(const Expr *E, const FunctionDecl *Callee, const Expr *Object,
               llvm::ArrayRef<const Expr *> Args);
  ValueId method(const Expr *E, const CXXMethodDecl *MD, const Expr *Object,
                 llvm::ArrayRef<const Expr *> Args);
  ValueId freeFunction(const Expr *E, const FunctionDecl *FD,
                       llvm::ArrayRef<const Expr *> Args);
  ValueId tensorLiteral(const Expr *E, const FunctionDecl *Callee,
                        llvm::ArrayRef<const Expr *> Args);

  // torch::nn layers the function constructs (Modules.cpp).
  struct ModuleValue {
    std::string Layer; ///< the holder's name: "Linear", "Conv2d"
    std::string Name;  ///< how the source names it: "fc", "this->fc"
    NamedArgs Options;
    /// The parameters reset() creates: name and shape (default dtype).
    std::vector<std::pair<std::string, Shape>> ParamShapes;
    std::map<std::string, ValueId> Params; ///< weight, bias
    std::string Why;   ///< non-empty: not followed, and why
    /// Non-empty: followed (forward has its shapes), but which parameters
    /// reset() makes is not known (an LSTM whose num_layers is a symbol),
    /// and ParamShapes is empty; no count of them may read it as none.
    std::string ParamsWhy;
    /// With ParamsWhy: how many elements (float32) those parameters have
    /// in all, when that is a formula (an LSTM's layers times the elements
    /// of one); the summary's parameter bytes then still have a value.
    std::optional<SymSize> ParamElements;
    SourceSpan Where;  ///< its declaration
    bool Member = false; ///< a member of the method's object
    std::vector<ModuleSummary::Forward> Forwards;
    /// The entries of ParamShapes that are buffers (running_mean,
    /// running_var, num_batches_tracked), not parameters.
    std::set<std::string> Buffers;
    /// The dtypes of the entries of ParamShapes that are not the default
    /// float32 (num_batches_tracked: int64).
    std::map<std::string, DType> ParamTypes;
    /// Sequential: its layers in order; their parameters are the
    /// Sequential's, in ParamShapes and Params as "0.weight", "1.bias".
    std::vector<ModuleValue> Children;
    /// The local variable holding a module the function constructs (its
    /// training mode can be followed); null for a member or a temporary.
    const clang::VarDecl *Local = nullptr;
    /// A temporary built in the expression that runs it: in training mode.
    bool Temporary = false;
    /// Its parameters are autograd leaves the GradientTape follows (a
    /// module the function builds and only runs): what its forward saves
    /// is the tape's to judge, not a reason by itself.
    bool ParamsOnTape = false;
    /// Adds what parameters() returns of it (not its buffers) to S's
    /// parameters, elements and bytes, named Prefix + name. When they are
    /// not listed (ParamsWhy), only their count is added (ParamElements),
    /// or S's counts become unknown and its Why says why, unless it has
    /// one.
    void addParameters(const std::string &Prefix, ModuleSummary &S) const;
    DType paramType(const std::string &P) const {
      auto It = ParamTypes.find(P);
      return It == ParamTypes.end() ? DType::Float32 : It->second;
    }
  };
  /// Keys of Modules in declaration order (the summary's rows).
  std::vector<std::string> ModuleOrder;
  /// In a method of a module: the object's row of the summary.
  std::optional<ModuleSummary> ObjectModule;
  /// By key() of the local variable or of the member field.
  std::map<std::string, ModuleValue> Modules;
  /// Helpers being read by layerFromHelper (a recursive one stops).
  unsigned LayerHelperDepth = 0;
  /// A torch::data loader over a built-in dataset (DataLoaders.cpp): what
  /// each iteration's batch holds.
  struct LoaderBatches {
    int Line = 0;
    std::string Why; ///< not followed: why (every member is then unknown)
    SymSize Batch = 1;
    bool Full = false; ///< every batch has Batch examples
    Shape DataSizes;   ///< one example's data
    DType DataType = DType::Float32;
    DType TargetType = DType::Int64;
    std::string Variable; ///< the loop variable's name
    std::map<std::string, ValueId> Values; ///< data, target
  };
  std::map<std::string, LoaderBatches> Loaders, BatchVariables;

  // Training (Training.cpp): gradients after backward(), optimizers over
  // a module's parameters and their state after step().
  /// Whether a tensor (a .grad, an optimizer state entry) exists for a
  /// parameter at the current point of the body.
  struct Holding {
    enum State { No, Yes, Maybe } H = No;
    std::string Why; ///< Maybe: why it is not known
  };
  /// Per module key, per parameter name: whether its .grad is defined.
  std::map<std::string, std::map<std::string, Holding>> Grads;
  /// A backward() was called (or may have been: GradsWhy).
  bool BackwardSeen = false;
  /// Non-empty: no gradient is known in this function, and why.
  std::string GradsWhy;
  struct OptimizerValue {
    std::string Name, Type;
    unsigned Line = 0;
    std::string ModuleKey; ///< the module whose parameters() it holds
    std::string Why;       ///< non-empty: its state is not known
    /// Tensors of its state per parameter, each of the parameter's shape
    /// and dtype; AtConstruction: made by the constructor for every
    /// parameter (Adagrad), else by the first step() for a parameter
    /// with a .grad.
    unsigned PerParameter = 0;
    bool AtConstruction = false;
    /// What step() reads to follow its allocations (model/Optimizers.h).
    OptimizerKind Kind;
    /// Declared in the function body's outermost block: its state lives
    /// until the function returns.
    bool LivesToReturn = false;
    std::map<std::string, Holding> State;
  };
  std::map<std::string, OptimizerValue> Optimizers;
  std::vector<std::string> OptimizerOrder;
  /// The backward / step / zero_grad calls evaluated as statements; any
  /// other such call in the body leaves the gradients unknown.
  std::set<const Expr *> TrainingCalls;

  // Calls into functions the translation unit defines (Calls.cpp).
  /// Why userCall's last nullopt was not a followed call; empty when the
  /// callee is simply not the project's code.
  std::string NotFollowedWhy;
  /// What a followed call did, in the caller's terms: its outcome (a view
  /// of the K-th tensor argument, a new storage, a throw), which tensor
  /// arguments it changed, and its name for the report.
  struct CallSummary {
    OpOutcome Out;
    bool ReturnsTensor = false;
    /// A std::pair / std::tuple of tensors: each element's outcome (the
    /// call's bytes on the first); empty when the elements are not
    /// followed.
    bool ReturnsTuple = false;
    std::vector<OpOutcome> Elements;
    std::vector<std::pair<unsigned, std::string>> Changed; // argument, why
    /// Why the body's totals are unknown (empty: known): what it allocates
    /// or keeps alive (autograd's saved tensors) is then not known either.
    std::string TotalsWhy;
  };
  /// The tensors a followed call returning a std::pair / std::tuple gave,
  /// by call.
  std::map<const Expr *, std::vector<ValueId>> CallTuples;
  /// A value bound to a parameter of a followed call.
  struct BoundArgument {
    std::optional<TensorValue> Tensor;
    std::optional<SymSize> StorageBytes;
    std::optional<SymSize> Integer;
  };
  /// Set when this evaluator runs a callee: its parameters' values.
  std::map<const clang::ParmVarDecl *, BoundArgument> Bound;
  /// The evaluator of the calling function, null at the top.
  FunctionEvaluator *Caller = nullptr;
  /// A followed method called on the caller's own object (`encode(x)` in
  /// a module's forward): its member layers are the caller's.
  bool SameObject = false;
  /// A user module object a function constructs (`NeuralNet model(784,
  /// 500, 10)`, `auto net = std::make_shared<NetImpl>(...)`): the class,
  /// the constructor its arguments pick, and each constructor parameter's
  /// integer value (nullopt: not an integer, or not derived). A method
  /// followed on it builds its member layers from that constructor.
  struct UserObject {
    const clang::CXXRecordDecl *Class = nullptr;
    const clang::CXXConstructorDecl *Ctor = nullptr; // its definition
    std::vector<std::optional<SymSize>> Integers;
    std::string Why; // Ctor null: why not
  };
  std::map<std::string, UserObject> UserObjects;
  /// The object a followed method runs on, when the caller constructed it.
  const UserObject *Construction = nullptr;
  int CallDepth = 0;
  /// Each tensor parameter's value as the body starts, and its storage.
  std::map<const clang::ParmVarDecl *, ValueId> ParameterValues;
  /// Tensor parameters of unknown rank, by name (viewRankHints reads them).
  std::vector<std::string> UnknownRankParameters;
  std::map<std::string, int64_t> RankHints;
  std::map<std::string, int64_t> StatedRanks;
  std::set<std::string> StatedRankRefuted;
  std::map<std::string, std::string> RankUnknown;
  /// The tensors each return statement returns; nullopt: not followed.
  std::vector<std::optional<std::vector<ValueId>>> Returns;
  /// Parameters whose tensor the body changed (rebound by reference,
  /// changed in place beyond what is followed), with the reason.
  std::map<const clang::ParmVarDecl *, std::string> ChangedParameters;
  /// Followed calls already evaluated, by callee and argument values
  /// (the top evaluator's; a callee uses its caller's).
  std::map<std::string, CallSummary> CallMemo;

  // Ops of the table (model/ops/OpTable.def): the binder reads a call's
  // arguments by the chosen overload's schema; the op's rule does the rest.
  struct CallSite {
    const Expr *E = nullptr; // the call
    const FunctionDecl *Callee = nullptr;
    const Expr *Receiver = nullptr; // a method call's object: self
    llvm::SmallVector<const Expr *, 6> Args; // the explicit arguments
    bool Functional = false; // torch::nn::functional's spelling
  };
  std::optional<std::vector<ValueId>> tensorList(const Expr *E);
  std::optional<std::vector<ValueId>> evaluateList(const Expr *S);
  ValueId listElement(const Expr *E, const Expr *List, const Expr *Index);
  void forgetObject(const Expr *Object, const std::string &Why);
  /// The tensor Key holds, and every handle to it, changed unknowably.
  void forgetTensorAt(const std::string &Key, const std::string &Display,
                      const std::string &Why, const SourceSpan &Where);
  void forgetContainedTensors(const Expr *Container, const std::string &Why);
  /// Whether Callee, or what it calls, may change the geometry of a tensor
  /// it was handed (an in-place op, an out= argument, code not seen).
  bool mayReshapeInPlace(const FunctionDecl *Callee, int Depth = 0);
  std::map<const FunctionDecl *, bool> MayReshape;
  ValueId apply(const std::string &Op, const Expr *E,
                const std::vector<ValueId> &Inputs, const OpOutcome &Out);
  /// Whether the op E's outcome Out comes from makes a tensor that
  /// requires grad by itself (OpEvent::MakesGradLeaf).
  bool makesGradLeaf(const Expr *E, const OpOutcome &Out);
  ValueId unmodelledCall(const std::string &Op, const Expr *E,
                         const std::vector<ValueId> &Inputs,
                         const std::string &Reason);
  // SchemaCalls: a LibTorch op outside the hand table, from its ATen schema.
  std::optional<ValueId> schemaOp(const Expr *E, const FunctionDecl *Callee,
                                  const Expr *Receiver,
                                  llvm::ArrayRef<const Expr *> Args,
                                  const std::vector<ValueId> &Inputs);
  std::optional<std::vector<ValueId>>
  schemaViews(const Expr *E, const FunctionDecl *Callee, const Expr *Receiver,
              llvm::ArrayRef<const Expr *> Args);
  std::optional<ValueId> writtenResult(const FunctionDecl *Callee,
                                       const Expr *Receiver,
                                       llvm::ArrayRef<const Expr *> Args);

  // What ArgumentReader (frontend/ArgumentReader.h) returns.
  struct Number {
    double Value;
    bool Floating;
  };
  struct OptTensor {
    bool Present = false;
    bool Understood = true;
    const Expr *E = nullptr;
  };
  struct OptInt {
    bool Present = false;
    std::optional<int64_t> Value;
    std::optional<SymSize> Size; ///< when Value is not a constant
  };
  struct OptDType {
    bool Present = false;
    std::optional<DType> Value;
    /// `p.scalar_type()` of a tensor whose dtype is parameter p's: p.
    std::string TypeOf;
  };

  // The rooms (each keeps no state; a copy of one is a reference to this
  // evaluator).
  /// Arguments as values: integers, lists, dtypes, devices, options
  /// (ArgumentReader.h, Arguments.cpp).
  ArgumentReader args();

  /// Parameters as symbols, integers as sizes, facts from checks
  /// (SymbolReader.h: SymbolicValues.cpp, Symbols.cpp, IntegerCalls.cpp).
  SymbolReader symbols();

  /// backward()'s gradients, optimizers and their state (TrainingTracker.h,
  /// Training.cpp).
  TrainingTracker training();

  /// torch::nn layers the function builds or runs, a user module's member
  /// layers, data loaders (ModuleTracker.h: Modules.cpp, ModuleMembers.cpp,
  /// DataLoaders.cpp).
  ModuleTracker modules();

  /// What a branch or loop may have changed, and the join after the arms
  /// of a branch (Invalidation.h: Invalidation.cpp, Effects.cpp).
  Invalidation invalidation();

  /// Statement order and control flow, with lifetimes: blocks, branches,
  /// loops (to a fixpoint), try, declarations (StatementWalker.h:
  /// Statements.cpp, Declarations.cpp, ExpressionStatements.cpp).
  StatementWalker statements();

  /// Calls into the translation unit's own functions, followed with the
  /// caller's values (CallFollower.h, Calls.cpp; docs/calls.md).
  CallFollower calls();

  /// Calls of table ops bound to an overload's schema and run through the
  /// op's rule (OpBinder.h: ArgBinder.cpp, Expressions.cpp).
  OpBinder binder();

public:
  SourceSpan span(SourceRange R) const;
  SourceLocation inMainFile(SourceLocation L) const;
  /// The statement being evaluated (openStatement), for locations that
  /// are not in the analysed file.
  SourceRange CurrentStatement;
  SourceSpan nameSpan(const Expr *E) const;
  std::string key(const ValueDecl *D) const {
    return std::to_string(reinterpret_cast<uintptr_t>(D->getCanonicalDecl()));
  }

  ASTContext &Ctx;
  SourceManager &SM;
  const FunctionDecl &FD;
  const AnalysisOptions &Opts;
  Interpreter I;
  std::map<std::string, Options> OptionVars;
  /// The body's parent links, made on the first op (gradModeOnAt).
  std::unique_ptr<clang::ParentMap> Parents;
  std::map<std::string, std::optional<Device>> DeviceVars;
  /// Elements of std::vector<Tensor> locals (chunk/split/unbind results).
  std::map<std::string, std::vector<ValueId>> TensorLists;
  /// Elements of std::tuple / std::pair locals of tensors.
  std::map<std::string, std::vector<ValueId>> TensorTuples;
  /// Each expression node is evaluated once per statement: an operand
  /// read twice (once for its dtype, once for its value) must not count
  /// its allocation twice (issue 10 item 1).
  std::map<const Expr *, ValueId> Evaluated;
  std::map<const Expr *, std::optional<std::vector<ValueId>>> EvaluatedLists;
  std::map<const Expr *, std::optional<std::vector<ValueId>>> EvaluatedTuples;
  /// References: the slot each one names (its key maps to the target's).
  std::map<std::string, Slot> References;
  /// Pointers to tensors: the slot each points to (Known false: unknown).
  std::map<std::string, Slot> Pointers;
  /// Slots whose address was taken: an assignment through an unknown
  /// pointer may have changed any of them.
  std::map<std::string, std::string> AddressTaken;
  /// A branch may have left the function or jumped (line and what): later
  /// allocations happen on some paths only.
  std::string MayHaveLeft;
  size_t MayHaveLeftOps = 0;
  /// Labels that a goto jumps back to: a goto to one ends an iteration.
  std::set<const LabelDecl *> BackEdges;
  /// Depth of options()/device() calls following global initializers.
  int FollowDepth = 0;
  /// The function's symbols, facts and assumptions (Symbols.cpp).
  std::shared_ptr<ShapeEnv> Env = std::make_shared<ShapeEnv>();
  /// Integer variables and parameters nothing changes after their
  /// declaration, by key: their value as a size.
  std::map<std::string, SymSize> IntVars;
  /// Local lists of integers nothing changes after their declaration
  /// (listNeverChanged), by key: their sizes (`std::vector<int64_t> shape =
  /// {B, -1}`, `auto sz = x.sizes();`).
  std::map<std::string, Shape> ListVars;
  /// Declarations the body may change after they are declared.
  std::set<const ValueDecl *> Mutated;
  /// Tensor parameters changed only by whole assignments outside loops
  /// (parametersOnlyReassigned): while the name holds the caller's tensor,
  /// its sizes are the caller's.
  std::set<const clang::ParmVarDecl *> OnlyReassigned;
  /// Integer locals declared without a value and assigned once at the
  /// body's top level (integersAssignedOnce): that assignment is their
  /// value, as an initializer would be.
  std::set<const VarDecl *> AssignedOnce;
  /// The tensor parameter E names while E holds the caller's tensor (the
  /// value Held): unchanged, or not yet reassigned. Null otherwise.
  const clang::ParmVarDecl *callerTensorHeld(const Expr *E, ValueId Held) const;
  /// Tuples and structs of tensors changed other than as a whole (`p.second
  /// = y`, `std::get<1>(p) = y`, passed by reference): their elements are
  /// not followed (declareParameters), with the line of the first change.
  std::map<const ValueDecl *, unsigned> TuplesChangedInPart;
  /// The line of D's first change in part, when it has one (a reference to
  /// a tuple resolves to the tuple it names).
  std::optional<unsigned> changedInPart(const ValueDecl *D) const {
    auto It = TuplesChangedInPart.find(llvm::cast<ValueDecl>(D->getCanonicalDecl()));
    if (It == TuplesChangedInPart.end())
      return std::nullopt;
    return It->second;
  }
  /// Tensor parameters a top-level check gives one shape (a.sizes() ==
  /// b.sizes()).
  std::vector<std::pair<const clang::ParmVarDecl *, const clang::ParmVarDecl *>>
      SameRank;
  int SizeDepth = 0;

  // ---- loops iterated to a fixpoint (StatementWalker, Statements.cpp) --
  /// Everything a statement's evaluation may change, as references: a
  /// loop's trial pass copies it out and, when the loop is not at a
  /// fixpoint, assigns the copy back.
  auto changeableState() {
    return std::tie(I, *Env, OptionVars, DeviceVars, TensorLists, TensorTuples,
                    Evaluated, EvaluatedLists, EvaluatedTuples, References,
                    Pointers, AddressTaken, MayHaveLeft, MayHaveLeftOps, IntVars, ListVars,
                    ModuleOrder, Modules, Loaders, BatchVariables, Grads,
                    BackwardSeen, GradsWhy, Optimizers, OptimizerOrder,
                    TrainingCalls, NotFollowedWhy, UserObjects, Returns,
                    ChangedParameters, CallTuples);
  }
  int FixpointDepth = 0;
  /// How many unrolled loops enclose the statement being evaluated.
  int UnrollDepth = 0;
};

} // namespace tma
