// Data loaders: `for (auto &batch : *loader)` over a torch::data loader of
// a built-in dataset whose examples are stacked. Each iteration's
// batch.data and batch.target then have the dataset's geometry with a
// batch dimension in front: for MNIST (B, 1, 28, 28) float32 images and
// (B,) int64 targets, B the loader's batch size, or a symbol when the last
// batch is shorter.
//
// The facts, from LibTorch's sources (torch/csrc/api/src/data/datasets/
// mnist.cpp, torch/data/transforms/{stack,tensor}.h):
//  - MNIST reads exactly 60000 training or 10000 test images (it throws
//    on files of any other count), as `images.to(kFloat32).div_(255)` of
//    shape (N, 1, 28, 28) and targets `.to(kInt64)` of shape (N,); get(i)
//    returns {images[i], targets[i]}.
//  - Normalize<> computes (x - mean) / stddev with float32 (C, 1, 1)
//    tensors: an example keeps its shape and float32.
//  - Stack<> makes one batch with torch::stack of the data and of the
//    targets: new, contiguous storage on the CPU.
//  - A sampler hands out batch_size indices at a time; the last batch has
//    N % batch_size of them unless drop_last.
// Anything else (a lambda transform, another dataset, a loader without
// Stack, a custom sampler) is not followed.
#include "frontend/FunctionEvaluator.h"
#include "frontend/StatementWalker.h"
#include "frontend/ModuleTracker.h"
#include "frontend/SymbolReader.h"
#include "frontend/ArgumentReader.h"

#include "model/Geometry.h"
#include "model/ops/OpCodes.h"
#include "model/ops/OpTable.h"

using namespace clang;

namespace tma {

namespace {

/// E without the wrappers around a dataset or loader argument: std::move,
/// a copy or move construction, temporaries.
const Expr *unwrap(const Expr *E) {
  for (int Depth = 0; E && Depth < 16; ++Depth) {
    E = strip(E);
    if (const auto *CE = dyn_cast<CallExpr>(E)) {
      const FunctionDecl *F = CE->getDirectCallee();
      if (F && CE->getNumArgs() == 1 &&
          F->getQualifiedNameAsString() == "std::move") {
        E = CE->getArg(0);
        continue;
      }
    }
    // `MNIST(root)`: a constructor conversion around the construction.
    if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E)) {
      E = FC->getSubExpr();
      continue;
    }
    if (const auto *CE = dyn_cast<CXXConstructExpr>(E);
        CE && !isa<CXXTemporaryObjectExpr>(CE) && CE->getNumArgs() == 1 &&
        CE->getConstructor()->isCopyOrMoveConstructor()) {
      E = CE->getArg(0);
      continue;
    }
    return E;
  }
  return E;
}

} // namespace

bool ModuleTracker::isDataLoaderCall(const Expr *E) const {
  const auto *CE = dyn_cast_or_null<CallExpr>(strip(E));
  const FunctionDecl *F = CE ? CE->getDirectCallee() : nullptr;
  return F && F->getQualifiedNameAsString() == "torch::data::make_data_loader";
}

FunctionEvaluator::LoaderBatches
ModuleTracker::dataLoader(const Expr *Init) {
  LoaderBatches L;
  L.Line = FE.span(Init->getSourceRange()).Line;
  // The dataset it owns holds storage of its own (MNIST reads every image
  // into one tensor when it is constructed): not counted.
  FE.I.totalsUnknown("the data loader's dataset (line " + std::to_string(L.Line) +
                  ") holds storage the totals do not follow");
  const auto *CE = cast<CallExpr>(strip(Init));
  // make_data_loader(dataset, batch_size | options): a custom sampler
  // object (three arguments) is not followed.
  if (CE->getNumArgs() != 2) {
    L.Why = "a data loader with a sampler argument is not followed";
    return L;
  }
  // The dataset: a chain of .map(transform) on a built-in dataset, inline
  // or in a local nothing changes after its declaration.
  std::vector<std::string> Transforms;
  const Expr *D = unwrap(CE->getArg(0));
  const CXXConstructExpr *Base = nullptr;
  for (int Depth = 0; D && Depth < 16 && !Base; ++Depth) {
    D = unwrap(D);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(D)) {
      const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
      if (!VD || !VD->hasLocalStorage() || !VD->hasInit() ||
          VD->getType()->isReferenceType())
        break;
      D = VD->getInit();
    } else if (const auto *MC = dyn_cast<CXXMemberCallExpr>(D)) {
      const CXXMethodDecl *MD = MC->getMethodDecl();
      if (!MD || !MD->getIdentifier() || MD->getName() != "map" ||
          MC->getNumArgs() != 1)
        break;
      Transforms.insert(Transforms.begin(), recordName(MC->getArg(0)->getType()));
      D = MC->getImplicitObjectArgument();
    } else if (const auto *C = dyn_cast<CXXConstructExpr>(D)) {
      Base = C;
    } else {
      break;
    }
  }
  if (!Base || recordName(Base->getType()) != "torch::data::datasets::MNIST") {
    // Name the dataset: a user's own one (its get() reads files) is the
    // common case, and the reason should say which.
    std::string Dataset = Base ? recordName(Base->getType()) : "";
    L.Why = "the data loader's dataset" +
            (Dataset.empty() ? std::string() : " '" + Dataset + "'") +
            " is not one the analysis follows (it follows "
            "torch::data::datasets::MNIST)";
    return L;
  }
  // MNIST(root, mode = kTrain).
  std::optional<int64_t> Count = 60000;
  if (Base->getNumArgs() >= 2 && !isDefaultArg(Base->getArg(1))) {
    std::string Mode = FE.args().enumeratorName(Base->getArg(1)).value_or("");
    Count = Mode == "kTrain" ? std::optional<int64_t>(60000)
            : Mode == "kTest" ? std::optional<int64_t>(10000)
                              : std::nullopt;
  }
  bool Stacked = false;
  for (size_t K = 0; K < Transforms.size(); ++K) {
    const std::string &T = Transforms[K];
    if (T == "torch::data::transforms::Stack" && K + 1 == Transforms.size()) {
      Stacked = true;
    } else if (T != "torch::data::transforms::Normalize") {
      L.Why = "the dataset's transform '" + T + "' is not followed";
      return L;
    }
  }
  if (!Stacked) {
    L.Why = "the dataset's batches are not stacked (no Stack<> transform "
            "last): each batch is a vector of examples";
    return L;
  }
  // The batch size: an integer, or DataLoaderOptions(n)[.batch_size(n)]
  // [.drop_last(b)][.workers(n)]...
  const Expr *B = strip(CE->getArg(1));
  std::optional<SymSize> Batch;
  bool DropLast = false;
  if (recordName(B->getType()) == "torch::data::DataLoaderOptions") {
    for (int Depth = 0; B && Depth < 16; ++Depth) {
      B = unwrap(B);
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(B)) {
        const CXXMethodDecl *MD = MC->getMethodDecl();
        std::string N = MD && MD->getIdentifier() ? MD->getName().str() : "";
        if (N == "batch_size" && MC->getNumArgs() == 1 && !Batch)
          Batch = FE.symbols().sizeValue(MC->getArg(0));
        else if (N == "drop_last" && MC->getNumArgs() == 1) {
          auto V = FE.args().integer(MC->getArg(0));
          if (!V) {
            L.Why = "the data loader's drop_last could not be derived";
            return L;
          }
          DropLast = *V != 0;
        } else if (N != "workers" && N != "max_jobs" && N != "timeout" &&
                   N != "enforce_ordering") {
          L.Why = "the data loader's option '" + N + "' is not followed";
          return L;
        }
        B = MC->getImplicitObjectArgument();
      } else if (const auto *C = dyn_cast<CXXConstructExpr>(B)) {
        if (C->getNumArgs() >= 1 && !isDefaultArg(C->getArg(0)) && !Batch)
          Batch = FE.symbols().sizeValue(C->getArg(0));
        else if (!Batch)
          Batch = SymSize(1); // DataLoaderOptions() batches one example
        break;
      } else {
        Batch.reset();
        break;
      }
    }
  } else if (B->getType()->isIntegerType()) {
    Batch = FE.symbols().sizeValue(B);
  }
  if (!Batch) {
    L.Why = "the data loader's batch size could not be derived";
    return L;
  }
  L.Batch = *Batch;
  // Every batch is full when drop_last is set or the count is a multiple.
  auto BatchInt = Batch->constant();
  L.Full = DropLast || (Count && BatchInt && *BatchInt > 0 && *Count % *BatchInt == 0);
  L.DataSizes = {SymSize(1), SymSize(28), SymSize(28)};
  L.DataType = DType::Float32;
  L.TargetType = DType::Int64;
  return L;
}

void ModuleTracker::loaderBatchValues(const CXXForRangeStmt *RFS, Flow F) {
  // `*loader` of a loader this function declared: the loop variable's
  // members are its batches (unknown with the loader's reason when it is
  // not followed).
  const Expr *R = strip(RFS->getRangeInit());
  const auto *OC = dyn_cast_or_null<CXXOperatorCallExpr>(R);
  const auto *DRE = OC && OC->getOperator() == OO_Star && OC->getNumArgs() == 1
                        ? dyn_cast<DeclRefExpr>(strip(OC->getArg(0)))
                        : nullptr;
  const VarDecl *Var = RFS->getLoopVariable();
  auto Loader = DRE ? FE.Loaders.find(FE.key(DRE->getDecl())) : FE.Loaders.end();
  if (!Var || Loader == FE.Loaders.end())
    return;
  LoaderBatches &L = FE.BatchVariables[FE.key(Var)] = Loader->second;
  L.Variable = Var->getName().str();
  if (!L.Why.empty())
    return;
  // Full batches have the batch size; otherwise the batch dimension is a
  // symbol between 1 and the batch size (the last batch is shorter).
  SymSize N = L.Batch;
  if (!L.Full) {
    N = FE.Env->tensorSize(L.Variable + ".data", 0);
    FE.Env->addFact(SymRelation::ge(N, 1));
    FE.Env->addFact(SymRelation::le(N, L.Batch));
  }
  // Each iteration's batch is new storage: Stack<> stacks the examples
  // (what the dataset and its transforms allocate per example on the way
  // is not followed: the peak is then unknown). The loop variable holds
  // it for the iteration.
  FE.statements().openStatement(RFS->getLoopVarStmt(), F, false);
  for (const char *Member : {"data", "target"}) {
    Shape Sizes{N};
    bool Data = std::string(Member) == "data";
    if (Data)
      Sizes.insert(Sizes.end(), L.DataSizes.begin(), L.DataSizes.end());
    OpOutcome Out;
    Out.Kind = OpKind::Alloc;
    Out.Value = makeContiguous(Sizes, Data ? L.DataType : L.TargetType,
                               Device{DeviceKind::CPU, -1});
    Out.ReadBytes = std::nullopt;
    Out.WrittenBytes = Out.Value.logicalBytes();
    Out.TransientBytes = std::nullopt;
    Out.Note = "the data loader's batch (" + L.Variable + "." + Member +
               "), stacked by Stack<>";
    SourceSpan Where = FE.span(RFS->getLoopVarStmt()->getSourceRange());
    ValueId V = FE.I.apply(opInfo(OpCode::stack).Name, Where, Where, {}, Out);
    FE.I.hold(FE.key(Var) + "." + Member, V);
    L.Values[Member] = V;
  }
  FE.I.endStatement();
}

std::optional<ValueId> ModuleTracker::loaderBatchMember(const MemberExpr *ME) {
  const auto *DRE = dyn_cast<DeclRefExpr>(strip(ME->getBase()));
  if (!DRE)
    return std::nullopt;
  auto It = FE.BatchVariables.find(FE.key(DRE->getDecl()));
  if (It == FE.BatchVariables.end())
    return std::nullopt;
  LoaderBatches &L = It->second;
  std::string Member = ME->getMemberDecl()->getName().str();
  if (Member != "data" && Member != "target")
    return std::nullopt;
  if (auto V = L.Values.find(Member); V != L.Values.end())
    return V->second;
  return FE.I.unknown(L.Variable + "." + Member,
                   L.Why.empty() ? "the data loader's batch is not followed" : L.Why,
                   FE.span(ME->getSourceRange()), Interpreter::Provenance::Computed);
}

} // namespace tma
