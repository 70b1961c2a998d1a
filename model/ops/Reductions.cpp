// Reductions (ReduceOps.cpp, SoftMax.cpp): sum, mean, prod, max/min,
// arg-reductions, cumsum, softmax.
//
// Traffic accounting, the same for every rule:
// - ReadBytes counts each input tensor's logical bytes (numel * itemsize)
//   once, even when broadcasting makes the kernel revisit elements; C++
//   scalars count nothing. Index tensors count their own bytes.
// - WrittenBytes counts the output's logical bytes once.
// - TransientBytes counts storages an op allocates and frees inside itself
//   (matmul's folding copy; on CPU, TensorIterator's promoted copies of
//   inputs whose dtype differs from the common dtype).
#include "model/Ops.h"
#include "model/ops/OpCodes.h"
#include "model/ops/LossCommon.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tma {

using namespace detail;

// Structured reductions (ReduceOps.cpp, resize_reduction): the output is
// allocated directly in its final shape, contiguous, in 1.13.
OpOutcome reduce(const std::string &Op, const TensorValue &In,
                 const std::optional<DimList> &ReduceDims, bool KeepDim,
                 ReduceKind Kind, std::optional<DType> Type) {
  std::optional<DType> OutType = Type;
  if (!OutType && In.Type) {
    switch (Kind) {
    case ReduceKind::Sum:
      OutType = isIntegral(*In.Type, true) ? DType::Int64 : *In.Type;
      break;
    case ReduceKind::Mean:
      if (!isFloating(*In.Type) && !isComplex(*In.Type))
        return throws("mean(): could not infer output dtype. Input dtype must "
                      "be either a floating point or complex dtype. Got: " +
                      std::string(dtypeName(*In.Type)));
      OutType = *In.Type;
      break;
    case ReduceKind::Same:
      OutType = *In.Type;
      break;
    case ReduceKind::Index:
      OutType = DType::Int64;
      break;
    }
  }
  if (Kind == ReduceKind::Index)
    OutType = DType::Int64;
  // A parameter's dtype: kept by max/min/..., and by sum and mean of a
  // floating tensor (an integral one sums to int64; mean throws on it).
  std::string Follow;
  if (!OutType && !In.TypeOf.empty() &&
      (Kind == ReduceKind::Same ||
       ((Kind == ReduceKind::Sum || Kind == ReduceKind::Mean) &&
        requireFloatingParameter(In.TypeOf))))
    Follow = In.TypeOf;
  if (!In.Sizes)
    return unknownCopy(shapeReason(In), OutType, In.Dev);
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  std::vector<bool> Reduced(Rank, false);
  if (!ReduceDims || ReduceDims->empty()) {
    std::fill(Reduced.begin(), Reduced.end(), true);
  } else {
    for (int64_t D : *ReduceDims) {
      auto W = wrapDim(D, Rank);
      if (!W)
        return throws(rangeError(Rank));
      if (Rank > 0 && Reduced[*W])
        return throws("dim " + std::to_string(*W) +
                      " appears multiple times in the list of dims");
      if (Rank > 0)
        Reduced[*W] = true;
    }
  }
  if ((Kind == ReduceKind::Same || Kind == ReduceKind::Index) &&
      numel(*In.Sizes) == 0)
    return unknownCopy("'" + Op + "' of an empty tensor is not modelled",
                       OutType, In.Dev);
  Shape Sizes;
  for (int64_t K = 0; K < Rank; ++K) {
    if (!Reduced[K])
      Sizes.push_back((*In.Sizes)[K]);
    else if (KeepDim)
      Sizes.push_back(1);
  }
  OpOutcome Out = freshContiguous(Sizes, OutType, In.Dev, Follow);
  Out.ReadBytes = In.logicalBytes();
  // make_reduction_from_out_ty (ReduceOps.cpp): a sum, prod or mean whose
  // output dtype differs from the input's reads self.to(out dtype), a full
  // copy made and freed inside the op; on CUDA, float16/bfloat16 summed
  // into float32 is read as it is. (mean on the CPU is sum_out(dtype) then
  // div_, the same copy.)
  if ((Kind == ReduceKind::Sum || Kind == ReduceKind::Mean) && In.Type &&
      OutType && *In.Type != *OutType) {
    bool LowPrecisionToFloatOnCuda =
        In.Dev && In.Dev->Kind == DeviceKind::CUDA &&
        (*In.Type == DType::Float16 || *In.Type == DType::BFloat16) &&
        *OutType == DType::Float32;
    if (!In.Dev)
      Out.TransientBytes.reset();
    else if (!LowPrecisionToFloatOnCuda)
      Out.TransientBytes = denseBytes(*In.Sizes, *OutType);
  } else if ((Kind == ReduceKind::Sum || Kind == ReduceKind::Mean) &&
             (!In.Type || !OutType) && Follow.empty()) {
    Out.TransientBytes.reset();
  }
  return Out;
}

// max.dim / min.dim (ReduceOps.cpp, resize_reduction_with_indices): values
// of the input's dtype and int64 indices, each fresh and contiguous in the
// reduced shape. The op reads its input once: the read is counted on the
// values.
std::vector<OpOutcome> reduceWithIndices(const std::string &Op,
                                         const TensorValue &In, int64_t Dim,
                                         bool KeepDim) {
  OpOutcome Values = reduce(Op, In, DimList{Dim}, KeepDim, ReduceKind::Same,
                            std::nullopt);
  if (Values.Kind == OpKind::Throws)
    return {Values};
  OpOutcome Indices = reduce(Op, In, DimList{Dim}, KeepDim, ReduceKind::Index,
                             std::nullopt);
  Indices.ReadBytes = 0;
  return {Values, Indices};
}

// cumsum (ReduceOps.cpp, meta_func_cum_ops + impl_func_cum_ops): the
// output is fresh and contiguous with the input's shape, of dtype= or, for
// an integral or bool input, int64. The kernel runs on self.to(out dtype),
// a copy freed inside the op when the dtypes differ (not for 0-dim or
// empty inputs, which are filled directly). LibTorch 1.13's CPU kernel
// has no float16 ("cumsum_out_cpu" not implemented for 'Half'); later
// releases changed which reduced-precision types it takes, so those are
// left unknown there.
OpOutcome cumsum(const TensorValue &In, int64_t Dim, std::optional<DType> Type,
                 const TorchVersion &Version) {
  std::optional<DType> OutType = Type;
  if (!OutType && In.Type)
    OutType = isIntegral(*In.Type, true) ? DType::Int64 : *In.Type;
  if (!In.Sizes)
    return unknownCopy(shapeReason(In), OutType, In.Dev);
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (!wrapDim(Dim, Rank))
    return throws(rangeError(Rank));
  bool Direct = Rank == 0 || numel(*In.Sizes) == 0;
  if (!Direct && OutType &&
      (*OutType == DType::Float16 || *OutType == DType::BFloat16)) {
    if (!In.Dev)
      return unknownCopy("device of the input is unknown", OutType, In.Dev);
    if (In.Dev->Kind == DeviceKind::CPU) {
      if (!Version.atLeast(2, 0) && *OutType == DType::Float16)
        return throws("\"cumsum_out_cpu\" not implemented for 'Half'");
      return unknownCopy("cumsum of " + std::string(dtypeName(*OutType)) +
                             " on the CPU is not modelled for this LibTorch",
                         OutType, In.Dev);
    }
  }
  OpOutcome Out = freshContiguous(*In.Sizes, OutType, In.Dev);
  Out.ReadBytes = In.logicalBytes();
  if (!Direct && In.Type && OutType && *In.Type != *OutType)
    Out.TransientBytes = denseBytes(*In.Sizes, *OutType);
  else if (!Direct && (!In.Type || !OutType))
    Out.TransientBytes.reset();
  return Out;
}

// softmax / log_softmax (SoftMax.cpp): a fresh contiguous output; dtype=
// casts the input first.
OpOutcome softmax(const std::string &Op, const TensorValue &In, int64_t Dim,
                  std::optional<DType> Type) {
  std::optional<DType> OutType = Type ? Type : In.Type;
  std::string Follow;
  if (!OutType && !In.TypeOf.empty() &&
      requireFloatingParameter(In.TypeOf))
    Follow = In.TypeOf;
  if (OutType && !isFloating(*OutType))
    return unknownCopy("'" + Op + "' of a " + std::string(dtypeName(*OutType)) +
                           " tensor is not modelled",
                       OutType, In.Dev);
  if (!In.Sizes)
    return unknownCopy(shapeReason(In), OutType, In.Dev);
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (!wrapDim(Dim, Rank))
    return throws(rangeError(Rank));
  OpOutcome Out = freshContiguous(*In.Sizes, OutType, In.Dev, Follow);
  Out.ReadBytes = In.logicalBytes();
  if (Type && In.Type && *Type != *In.Type)
    Out.TransientBytes = denseBytes(*In.Sizes, *Type);
  return Out;
}

} // namespace tma

// ---- Rules (OpTable.def) ------------------------------------------------------------
//
// sum, prod, mean, max, min, amax and amin are bound by their C++ types:
// their overloads differ in which of dims, keepdim and dtype they spell,
// f(dtype), f(dims, keepdim, dtype), prod(int dim, keepdim, dtype),
// amax(dims = {}, keepdim).

namespace tma {

using namespace detail;

namespace {

ReduceKind kindOf(OpCode Op) {
  if (Op == OpCode::mean)
    return ReduceKind::Mean;
  if (Op == OpCode::max || Op == OpCode::min || Op == OpCode::amax ||
      Op == OpCode::amin)
    return ReduceKind::Same;
  return ReduceKind::Sum; // sum, prod
}

RuleResult reduction(const OpCall &C) {
  const std::string &Name = C.Written; // for messages
  const OpCode Code = C.Op->Code;
  bool MaxOrMin = Code == OpCode::max || Code == OpCode::min;
  const TensorValue &In = C.self().TV;
  size_t N = C.Args.size();
  const ArgValue &A0 = C.arg(1);
  // max(other) is maximum(other).
  if (MaxOrMin && N == 2 && A0.Type == ArgType::Tensor) {
    std::string Op = Code == OpCode::max ? "maximum" : "minimum";
    return one(elementwise(Op, {ElemOperand::tensor(In), ElemOperand::tensor(A0.TV)},
                           ElemDType::Promote),
               Op);
  }
  if (MaxOrMin && N > 1)
    return notModelled(C, Name + "(dim) returns values and indices");
  std::optional<DimList> ReduceDims;
  bool KeepDim = false;
  const ArgValue *DType_ = nullptr;
  if (N == 1) {
    ReduceDims = DimList{};
  } else if (A0.Type == ArgType::OptScalarType) {
    DType_ = &A0; // sum(dtype)
    ReduceDims = DimList{};
  } else if (A0.Type == ArgType::IntList || A0.Type == ArgType::OptIntList ||
             A0.Type == ArgType::Int) {
    if (!A0.given()) // the default: no dims, every dim reduced
      ReduceDims = DimList{};
    else if (!A0.known())
      return notModelled(C, "reduction dims could not be derived");
    else if (A0.K == ArgValue::Kind::Int)
      ReduceDims = DimList{A0.Int};
    else if (auto Dims = A0.dims())
      ReduceDims = *Dims;
    else
      return notModelled(C, "reduction dims could not be derived");
    const ArgValue &K = C.arg(2);
    if (K.given() && !K.known())
      return notModelled(C, "keepdim could not be derived");
    KeepDim = K.given() && K.Bool;
    DType_ = &C.arg(3);
  } else {
    return notModelled(C, Name + " by dimension name is not modelled");
  }
  std::optional<DType> Type;
  if (DType_ && DType_->given()) {
    if (!DType_->known())
      return notModelled(C, "dtype could not be derived");
    Type = DType_->Type_;
  }
  // sum(dims = {}) over an explicit empty list reduces every dim in 1.13.
  return one(reduce(Name, In, ReduceDims, KeepDim, kindOf(Code), Type));
}

} // namespace

RuleResult rule_sum(const OpCall &C) { return reduction(C); }
RuleResult rule_mean(const OpCall &C) { return reduction(C); }
RuleResult rule_max(const OpCall &C) { return reduction(C); }

// max(dim, keepdim) / min(dim, keepdim): values and indices.
RuleResult rule_max_dim(const OpCall &C) {
  const ArgValue &D = C.arg(1), &K = C.arg(2);
  if (D.Type != ArgType::Int || !D.known() || (K.given() && !K.known()))
    return notModelled(C, "'" + C.Written + "' returning a tuple is not "
                          "modelled here");
  RuleResult R;
  R.Outcomes = reduceWithIndices(C.Written, C.self().TV, D.Int,
                                 K.given() && K.Bool);
  return R;
}

// argmax / argmin(dim = None, keepdim = false): int64.
RuleResult rule_argmax(const OpCall &C) {
  const ArgValue &D = C.arg(1), &K = C.arg(2);
  if (D.given() && !D.known())
    return notModelled(C, "dim could not be derived");
  if (K.given() && !K.known())
    return notModelled(C, "keepdim could not be derived");
  return one(reduce(C.Written, C.self().TV, D.known() ? DimList{D.Int} : DimList{},
                    K.given() && K.Bool, ReduceKind::Index, std::nullopt));
}

RuleResult rule_softmax(const OpCall &C) {
  // F::softmax / F::log_softmax(x, SoftmaxFuncOptions(dim).dtype(t)) (or an
  // integer converted to the options): the options' dim and dtype.
  if (C.arg(1).K == ArgValue::Kind::NNOptions) {
    const ArgValue &O = C.arg(1);
    const ArgValue *D = O.option("dim"), *T = O.option("dtype");
    if (!O.Named->Complete || !D || !D->known() ||
        (T && T->K != ArgValue::Kind::Absent && !T->known()))
      return notModelled(C, C.Written + " options could not be derived");
    return one(softmax(C.Written, C.self().TV, D->Int,
                       T && T->known() ? std::optional<DType>(T->Type_)
                                       : std::nullopt));
  }
  if (C.arg(1).Type != ArgType::Int)
    return notModelled(C, C.Written + " by dimension name is not modelled");
  const ArgValue &D = C.arg(1), &T = C.arg(2);
  if (!D.known() || (T.given() && !T.known()))
    return notModelled(C, C.Written + " arguments could not be derived");
  return one(softmax(C.Written, C.self().TV, D.Int,
                     T.known() ? std::optional<DType>(T.Type_) : std::nullopt));
}

RuleResult rule_cumsum(const OpCall &C) {
  if (C.arg(1).Type != ArgType::Int)
    return notModelled(C, "cumsum by dimension name is not modelled");
  const ArgValue &D = C.arg(1), &T = C.arg(2);
  if (!D.known() || (T.given() && !T.known()))
    return notModelled(C, "cumsum arguments could not be derived");
  return one(cumsum(C.self().TV, D.Int,
                    T.known() ? std::optional<DType>(T.Type_) : std::nullopt,
                    C.Version));
}

namespace {

/// Values (self's dtype) and int64 indices of one geometry, as sort and
/// topk make them. On the CPU their kernels work in the outputs (a copy of
/// self into values, then per-row work in std::vector buffers): nothing
/// else is allocated; elsewhere that is not modelled.
std::vector<OpOutcome> valuesAndIndices(const TensorValue &In,
                                        const Shape &Sizes,
                                        const Shape &Strides) {
  OpOutcome Values = freshContiguous(Sizes, In.Type, In.Dev);
  Values.Value.Strides = Strides;
  Values.ReadBytes = In.logicalBytes();
  bool OnCpu = In.Dev && In.Dev->Kind == DeviceKind::CPU;
  if (!OnCpu)
    Values.TransientBytes.reset();
  OpOutcome Indices = freshContiguous(Sizes, DType::Int64, In.Dev);
  Indices.Value.Strides = Strides;
  Indices.ReadBytes = SymSize(0);
  if (!OnCpu)
    Indices.TransientBytes.reset();
  return {Values, Indices};
}

/// The slice topk and kthvalue select k from: dim (argument 2, default -1)
/// wrapped, and its length as a constant (1 for a 0-dim self).
struct Selection {
  int64_t Dim = 0;
  int64_t SliceLength = 0;
};

/// Fills Sel, or gives the result to return instead: k or dim not derived,
/// self's shape unknown, dim out of range (LibTorch's throw), or the
/// slice's length symbolic (Symbolic says so).
std::optional<RuleResult> selection(const OpCall &C, Selection &Sel,
                                    const std::string &Symbolic) {
  const TensorValue &In = C.self().TV;
  const ArgValue &K = C.arg(1), &D = C.arg(2);
  if (!K.known() || (D.given() && !D.known()))
    return notModelled(C, C.Written + " arguments could not be derived");
  if (!In.Sizes)
    return notModelled(C, shapeReason(In));
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  auto Dim = wrapDim(D.given() ? D.Int : -1, Rank);
  if (!Dim)
    return one(throws(rangeError(Rank)));
  auto Length = Rank > 0 ? (*In.Sizes)[*Dim].constant() : std::optional<int64_t>(1);
  if (!Length)
    return notModelled(C, Symbolic);
  Sel = {*Dim, *Length};
  return std::nullopt;
}

} // namespace

// topk(k, dim = -1, largest, sorted) (TensorTopK.cpp, meta topk): values
// and indices of self's sizes with dim's size k, contiguous; k must be in
// [0, size(dim)] (1 for a 0-dim self).
RuleResult rule_topk(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  const ArgValue &K = C.arg(1);
  Selection Sel;
  if (auto Stop = selection(C, Sel, "topk's k against a symbolic size is not modelled"))
    return *Stop;
  if (K.Int < 0 || K.Int > Sel.SliceLength)
    return one(throws("selected index k out of range"));
  Shape Sizes = *In.Sizes;
  if (!Sizes.empty())
    Sizes[Sel.Dim] = K.Int;
  RuleResult R;
  R.Outcomes = valuesAndIndices(In, Sizes, contiguousStrides(Sizes));
  return R;
}

// sort(dim = -1, descending) (Sorting.cpp, meta sort.stable): values and
// indices of self's sizes, with self's strides when self is dense
// (non-overlapping and dense), else at::infer_dense_strides of them.
RuleResult rule_sort(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  const ArgValue &D = C.arg(1);
  if ((D.given() && !D.known()) || (C.arg(2).given() && !C.arg(2).known()))
    return notModelled(C, "sort arguments could not be derived");
  if (!In.Sizes || !In.Strides)
    return notModelled(C, shapeReason(In));
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (!wrapDim(D.given() ? D.Int : -1, Rank))
    return one(throws(rangeError(Rank)));
  std::optional<Shape> Strides;
  switch (isNonOverlappingAndDense(*In.Sizes, *In.Strides)) {
  case Tri::True: Strides = *In.Strides; break;
  case Tri::False: Strides = inferDenseStrides(*In.Sizes, *In.Strides); break;
  case Tri::Unknown: break;
  }
  if (!Strides)
    return notModelled(C, "the layout of sort's outputs could not be derived");
  RuleResult R;
  R.Outcomes = valuesAndIndices(In, *In.Sizes, *Strides);
  return R;
}

// kthvalue(k, dim = -1, keepdim) (Sorting.cpp, kthvalue_out_impl_cpu):
// values and int64 indices reduced over dim (kept as 1 with keepdim),
// contiguous; 1 <= k <= size(dim). On the CPU it selects in a contiguous
// clone of self beside an int64 index tensor of self's sizes, both freed
// before it returns (a 0-dim self is copied directly).
RuleResult rule_kthvalue(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  const ArgValue &K = C.arg(1), &Keep = C.arg(3);
  if (Keep.given() && !Keep.known())
    return notModelled(C, "kthvalue arguments could not be derived");
  Selection Sel;
  if (auto Stop = selection(C, Sel, "kthvalue over symbolic sizes is not modelled"))
    return *Stop;
  auto Count = numel(*In.Sizes).constant();
  if (!Count)
    return notModelled(C, "kthvalue over symbolic sizes is not modelled");
  if (*Count == 0)
    return notModelled(C, "kthvalue of an empty tensor is not modelled");
  if (K.Int < 1 || K.Int > Sel.SliceLength)
    return one(throws("kthvalue(): selected number k out of range for dimension " +
                      std::to_string(Sel.Dim)));
  RuleResult R;
  R.Outcomes = reduceWithIndices(C.Written, In, Sel.Dim, Keep.given() && Keep.Bool);
  if (R.Outcomes.size() != 2)
    return R;
  OpOutcome &Values = R.Outcomes[0];
  bool OnCpu = In.Dev && In.Dev->Kind == DeviceKind::CPU;
  auto Copy = In.Type ? denseBytes(*In.Sizes, *In.Type) : std::nullopt;
  auto Indices = denseBytes(*In.Sizes, DType::Int64);
  if (In.Sizes->empty())
    Values.TransientBytes = SymSize(0);
  else if (OnCpu && Copy && Indices)
    Values.TransientBytes = *Copy + *Indices;
  else
    Values.TransientBytes.reset();
  return R;
}

// norm(p, dim, keepdim[, dtype]) and norm(p[, dtype]) over every dim
// (ReduceOps.cpp, meta norm.ScalarOpt_dim / norm.ScalarOpt_dim_dtype and
// impl_func_norm): a structured reduction, fresh and contiguous in the
// reduced shape, like sum's. Without dtype, self must be floating or
// complex ("norm(): input dtype should be either floating point or
// complex"); a complex self gives its real type (complex64 -> float32).
// dtype= must be floating or complex and is the result's dtype, of any
// self (an int64 self with dtype=float32 works). A real self whose dtype
// differs from the result's is read through self.to(dtype), a copy freed
// inside the op (make_reduction_from_out_ty), as sum's is. A complex self
// is reduced as it is, except when dtype= casts it or an infinite p on the
// CPU reduces self.abs(): left unknown there.
RuleResult rule_norm(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  const ArgValue &P = C.arg(1);
  std::optional<DimList> ReduceDims = DimList{};
  bool KeepDim = false;
  const ArgValue *DTypeArg = nullptr;
  if (C.arg(2).Type == ArgType::IntList) {
    const ArgValue &D = C.arg(2), &K = C.arg(3);
    if (!D.known())
      return notModelled(C, "norm's dims could not be derived");
    ReduceDims = D.dims();
    if (!ReduceDims)
      return notModelled(C, "norm's dims could not be derived");
    if (K.given() && !K.known())
      return notModelled(C, "keepdim could not be derived");
    KeepDim = K.known() && K.Bool;
    if (C.arg(4).Type == ArgType::ScalarType)
      DTypeArg = &C.arg(4);
  } else if (C.arg(2).Type == ArgType::ScalarType) {
    DTypeArg = &C.arg(2);
  }
  std::optional<DType> Requested;
  if (DTypeArg) {
    if (!DTypeArg->known())
      return notModelled(C, "norm's dtype could not be derived");
    Requested = DTypeArg->Type_;
    if (!isFloating(*Requested) && !isComplex(*Requested))
      return one(throws("norm(): the desired output dtype should be either "
                        "floating point or complex. Got " +
                        loss::c10Name(*Requested) + " instead."));
  } else if (In.Type && !isFloating(*In.Type) && !isComplex(*In.Type)) {
    return one(throws("norm(): input dtype should be either floating point "
                      "or complex. Got " + loss::c10Name(*In.Type) + " instead."));
  }
  bool ComplexIn = In.Type && isComplex(*In.Type);
  std::optional<DType> OutType = Requested;
  if (!OutType && In.Type)
    OutType = toReal(*In.Type);
  // A self of a parameter's dtype (no dtype=): the answer follows it where
  // it is floating, which norm requires (stated by reduce()).
  OpOutcome Out = reduce(C.Written, In, ReduceDims, KeepDim,
                         ReduceKind::Sum, OutType);
  if (Out.Kind == OpKind::Throws)
    return one(Out);
  if (ComplexIn) {
    bool InfiniteP = !P.known() || !P.Number || std::isinf(*P.Number);
    bool OnCpu = In.Dev && In.Dev->Kind == DeviceKind::CPU;
    if ((Requested && *Requested != *In.Type) || (InfiniteP && (!In.Dev || OnCpu)))
      Out.TransientBytes.reset();
    else
      Out.TransientBytes = SymSize(0);
  } else if (!In.Type && !Requested && Out.Value.TypeOf.empty()) {
    Out.TransientBytes.reset();
  }
  return one(Out);
}

// mode(dim = -1, keepdim) (TensorCompare.cpp mode_out, the CPU's
// mode_kernel_impl): values of self's dtype and int64 indices in the
// reduced shape, as max.dim gives them; the kernel sorts each slice in a
// std::vector, not a tensor. Complex inputs have no kernel; an empty slice
// throws (both left unknown with the reason).
RuleResult rule_mode(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  const ArgValue &D = C.arg(1), &K = C.arg(2);
  if ((D.given() && !D.known()) || (K.given() && !K.known()))
    return notModelled(C, "mode arguments could not be derived");
  if (In.Type && isComplex(*In.Type))
    return notModelled(C, "mode of a complex tensor is not modelled");
  RuleResult R;
  R.Outcomes = reduceWithIndices(C.Written, In, D.given() ? D.Int : -1,
                                 K.given() && K.Bool);
  for (OpOutcome &O : R.Outcomes)
    if (O.Kind != OpKind::Throws && !In.Dev)
      O.TransientBytes.reset(); // the kernel is the device's
  return R;
}

// std_mean / var_mean (ReduceOps.cpp std_var_mean_out): (std or var,
// mean), each in the reduced shape of self's dtype, allocated contiguous
// by make_reduction; dim = None (or left out) reduces every dim. unbiased
// and correction change the values only. Integral and bool inputs throw;
// complex (through view_as_real) and reduced-precision inputs are not
// modelled.
RuleResult rule_std_mean(const OpCall &C) {
  const std::string &Name = C.Written;
  const TensorValue &In = C.self().TV;
  std::optional<DimList> Dims = DimList{};
  bool KeepDim = false;
  if (C.Args.size() > 2) {
    const ArgValue &D = C.arg(1), &K = C.arg(3);
    if (D.given() && D.K != ArgValue::Kind::Absent) {
      if (!D.known())
        return notModelled(C, "reduction dims could not be derived");
      Dims = D.dims();
      if (!Dims)
        return notModelled(C, "reduction dims could not be derived");
    }
    if (!C.arg(2).known() && C.arg(2).given())
      return notModelled(C, "unbiased / correction could not be derived");
    if (K.given() && !K.known())
      return notModelled(C, "keepdim could not be derived");
    KeepDim = K.given() && K.Bool;
  }
  if (!In.Type)
    return notModelled(C, In.TypeOf.empty() ? "the input's dtype is unknown"
                                            : "a parameter's dtype is not modelled "
                                              "for " + Name);
  if (!isFloating(*In.Type) && !isComplex(*In.Type))
    return one(throws(Name + " only support floating point and complex dtypes"));
  if (*In.Type != DType::Float32 && *In.Type != DType::Float64)
    return notModelled(C, Name + " of a " + std::string(dtypeName(*In.Type)) +
                              " tensor is not modelled");
  OpOutcome Spread = reduce(Name, In, Dims, KeepDim, ReduceKind::Same, std::nullopt);
  if (Spread.Kind == OpKind::Throws)
    return one(Spread);
  OpOutcome Mean = Spread;
  Mean.ReadBytes = SymSize(0); // one pass reads self for both
  if (!In.Dev) {
    Spread.TransientBytes.reset();
    Mean.TransientBytes.reset();
  }
  RuleResult R;
  R.Outcomes = {Spread, Mean};
  return R;
}

// _unique, _unique2 and unique_consecutive without a dim (Unique.cpp): the
// distinct elements, [u] of self's dtype, u known only at run time (0 <= u
// <= self.numel()), the int64 inverse indices in self's sizes and the int64
// counts [u], contiguous. Measured on the CPU (1.13): what is not asked for
// is an empty [0], except that _unique2 fills the inverse when only the
// counts are asked for; unique_consecutive allocates its output and counts
// for self.numel() elements and shrinks them, so their storages keep that
// many. The scratch of the sorts and hash sets is not modelled.
RuleResult rule_unique(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  bool Consecutive = C.Op->Code == OpCode::unique_consecutive;
  bool WithCounts = C.Op->Code != OpCode::unique;
  auto Flag = [&](unsigned I, bool &Value) {
    const ArgValue &A = C.arg(I);
    Value = A.given() && A.known() && A.Bool;
    return !A.given() || A.known();
  };
  bool Sorted = true, Inverse = false, Counts = false;
  unsigned First = Consecutive ? 1 : 2;
  if ((!Consecutive && !Flag(1, Sorted)) || !Flag(First, Inverse) ||
      (WithCounts && !Flag(First + 1, Counts)))
    return notModelled(C, C.Written + " flags could not be derived");
  if (Consecutive && C.arg(3).given())
    return notModelled(C, "unique_consecutive over a dim is not modelled");
  std::optional<SymSize> Elements = In.elementCount();
  if (!Elements)
    return notModelled(C, shapeReason(In));
  std::optional<SymSize> U = dataDependentCount(C.Written, *Elements);
  if (!U)
    return notModelled(C, "how many distinct elements there are is known "
                          "only at run time");
  auto Made = [&](Shape Sizes, std::optional<DType> Type,
                  const std::string &TypeOf = "") {
    OpOutcome Out = freshContiguous(Sizes, Type, In.Dev, TypeOf);
    Out.ReadBytes = SymSize(0);
    Out.TransientBytes.reset();
    return Out;
  };
  RuleResult R;
  R.Outcomes.push_back(Made({*U}, In.Type, In.TypeOf));
  R.Outcomes.back().ReadBytes = In.logicalBytes();
  bool FillsInverse = Inverse || (C.Op->Code == OpCode::unique2 && Counts);
  R.Outcomes.push_back(
      Made(FillsInverse ? *In.Sizes : Shape{SymSize(0)}, DType::Int64));
  if (WithCounts)
    R.Outcomes.push_back(Made({Counts ? *U : SymSize(0)}, DType::Int64));
  // Measured for numbers, not for bool (whose kernel differs).
  if (Consecutive && In.Type && *In.Type != DType::Bool) {
    R.Outcomes[0].StorageBytes = In.logicalBytes();
    if (Counts)
      R.Outcomes[2].StorageBytes = *Elements * SymSize(8);
  } else if (Consecutive) {
    R.Outcomes[0].StorageBytesUnknown = true;
    R.Outcomes[2].StorageBytesUnknown = Counts;
  }
  return R;
}

} // namespace tma
