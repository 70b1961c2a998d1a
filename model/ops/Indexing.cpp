// Indexing (TensorIndexing.cpp, TensorAdvancedIndexing.cpp): basic indices
// give views, tensor indices gather into a new tensor.
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
#include "model/ops/LossCommon.h"
#include "model/ops/OpTable.h"
#include "model/ops/OpsDetail.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tma {

using namespace detail;

// nonzero() refuses a tensor of INT_MAX elements or more (its CPU kernel
// counts in int): the throw, or an unknown result of Like's dtype when that
// is not decidable; nullopt when it fits (stated for symbolic sizes).
static std::optional<OpOutcome> nonzeroRefuses(const SymSize &Elements,
                                               const TensorValue &Like) {
  SymSize Limit(std::numeric_limits<int>::max());
  Tri Fits = requireLt(Elements, Limit);
  if (Fits == Tri::False)
    return throws("nonzero is not supported for tensors with more than "
                  "INT_MAX elements, file a support request");
  if (Fits == Tri::Unknown)
    return unknownCopy(undecided("<", Elements, Limit), Like.Type, Like.Dev);
  return std::nullopt;
}

namespace {
/// A tensor index and the dim of the (sliced) source it indexes.
struct Advanced {
  int64_t Dim;
  TensorValue Index;
};
} // namespace

// A boolean mask at dim Dim of Cur (expandTensors in
// TensorAdvancedIndexing.cpp): its sizes must be Cur's from Dim on, or
// LibTorch raises an IndexError; it selects u elements, u known only at run
// time, and becomes one int64 column of its nonzero() per dim it covers.
// False with Refused set when the mask does not fit or u cannot be named.
static bool maskColumns(const TensorValue &Cur, int64_t Dim,
                        const TensorValue &Mask, std::vector<Advanced> &Into,
                        OpOutcome &Refused) {
  const Shape &M = *Mask.Sizes;
  for (size_t J = 0; J < M.size(); ++J) {
    const SymSize &Src = (*Cur.Sizes)[Dim + static_cast<int64_t>(J)];
    Tri Fits = requireEq(M[J], Src);
    if (Fits == Tri::False) {
      Refused = throws("The shape of the mask " + dimsText(M) + " at index " +
                       std::to_string(J) +
                       " does not match the shape of the indexed tensor " +
                       dimsText(*Cur.Sizes) + " at index " +
                       std::to_string(Dim + static_cast<int64_t>(J)));
      return false;
    }
    if (Fits == Tri::Unknown) {
      Refused = unknownCopy(undecided("==", M[J], Src), Cur.Type, Cur.Dev);
      return false;
    }
  }
  SymSize Elements = numel(M);
  if (auto No = nonzeroRefuses(Elements, Cur)) {
    Refused = *No;
    return false;
  }
  std::optional<SymSize> U = dataDependentCount("a boolean mask", Elements);
  if (!U) {
    Refused = unknownCopy("a boolean mask selects a number of elements known "
                          "only at run time",
                          Cur.Type, Cur.Dev);
    return false;
  }
  for (size_t J = 0; J < M.size(); ++J) {
    TensorValue Column;
    Column.Sizes = Shape{*U};
    Column.Strides = Shape{SymSize(1)};
    Column.Offset = *U * SymSize(static_cast<int64_t>(J));
    Column.Type = DType::Int64;
    Column.Dev = Mask.Dev;
    Into.push_back({Dim + static_cast<int64_t>(J), Column});
  }
  return true;
}

// Tensor::index (ATen/TensorIndexing.h, applySlicing + dispatch_index).
OpOutcome index(const TensorValue &In, const std::vector<IndexSpec> &Indices) {
  if (!In.hasLayout()) {
    OpOutcome Out;
    Out.Kind = OpKind::Unknown;
    keepDType(Out.Value, In);
    Out.Value.Dev = In.Dev;
    Out.Value.markUnknown(In.UnknownReason.empty() ? "shape of the input is unknown"
                                                   : In.UnknownReason);
    return Out;
  }
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  // Count the dims the indices consume (everything but None and Ellipsis;
  // a bool consumes none either).
  int64_t Specified = 0;
  int Ellipses = 0;
  for (const IndexSpec &I : Indices) {
    if (I.K == IndexSpec::Ellipsis)
      ++Ellipses;
    else if (I.K == IndexSpec::Tensor && I.TensorIndex.Sizes &&
             I.TensorIndex.Type &&
             (*I.TensorIndex.Type == DType::Bool ||
              *I.TensorIndex.Type == DType::UInt8))
      Specified += static_cast<int64_t>(I.TensorIndex.Sizes->size());
    else if (I.K != IndexSpec::None && I.K != IndexSpec::Boolean)
      ++Specified;
  }
  if (Ellipses > 1)
    return throws("An index can only have a single ellipsis ('...')");
  if (Specified > Rank)
    return throws("too many indices for tensor of dimension " +
                  std::to_string(Rank));

  TensorValue Cur = In;
  int64_t Dim = 0;
  std::vector<Advanced> TensorIndices;
  // The nonzero() of each boolean mask lives as long as the op.
  std::optional<SymSize> MaskScratch = SymSize(0);
  for (const IndexSpec &I : Indices) {
    if (I.Unknown) {
      OpOutcome Out = viewOf(In);
      Out.Kind = OpKind::Unknown;
      Out.Value.markUnknown("an index bound could not be derived");
      return Out;
    }
    OpOutcome Step;
    switch (I.K) {
    case IndexSpec::Integer:
      Step = select(Cur, Dim, I.Int);
      break;
    case IndexSpec::Slice:
      Step = slice(Cur, Dim, I.Start, I.Stop, I.Step);
      ++Dim;
      break;
    case IndexSpec::None:
      Step = unsqueeze(Cur, Dim);
      ++Dim;
      break;
    case IndexSpec::Ellipsis:
      Dim += Rank - Specified;
      continue;
    case IndexSpec::Boolean: {
      Step = unsqueeze(Cur, Dim);
      if (!I.Bool && Step.Kind == OpKind::View)
        Step = slice(Step.Value, Dim, 0, 0, 1);
      ++Dim;
      break;
    }
    case IndexSpec::Tensor: {
      const TensorValue &T = I.TensorIndex;
      if (!T.Sizes || !T.Type) {
        OpOutcome Out;
        Out.Kind = OpKind::Unknown;
        keepDType(Out.Value, In);
        Out.Value.Dev = In.Dev;
        Out.Value.markUnknown("shape or dtype of the index tensor is unknown");
        return Out;
      }
      // A 0-dim integral (not bool/uint8) index is item() + select: a view.
      if (T.Sizes->empty() && isIntegral(*T.Type, false) &&
          *T.Type != DType::UInt8) {
        OpOutcome Out = viewOf(In);
        Out.Kind = OpKind::Unknown;
        Out.Value.markUnknown("a 0-dim index tensor selects at a value known "
                              "only at run time");
        return Out;
      }
      if ((*T.Type == DType::Bool || *T.Type == DType::UInt8) &&
          !T.Sizes->empty()) {
        // expandTensors: a mask becomes the columns of its nonzero(), one
        // int64 index of [u] per dim it covers, adjacent; nonzero's output
        // is Fortran-ordered, so each column has stride 1.
        OpOutcome Refused;
        if (!maskColumns(Cur, Dim, T, TensorIndices, Refused))
          return Refused;
        for (size_t J = TensorIndices.size() - T.Sizes->size();
             J < TensorIndices.size(); ++J)
          MaskScratch = addSizes(MaskScratch, TensorIndices[J].Index.logicalBytes());
        Dim += static_cast<int64_t>(T.Sizes->size());
        continue;
      }
      if (*T.Type == DType::Bool || *T.Type == DType::UInt8) {
        OpOutcome Out;
        Out.Kind = OpKind::Copy;
        keepDType(Out.Value, In);
        Out.Value.Dev = In.Dev;
        Out.Value.markUnknown("a boolean mask selects a data-dependent number "
                              "of elements");
        Out.Note = "boolean mask indexing copies";
        return Out;
      }
      if (!isIntegral(*T.Type, false))
        return throws("tensors used as indices must be long, int, byte or "
                      "bool tensors");
      TensorIndices.push_back({Dim, T});
      ++Dim;
      continue;
    }
    }
    if (Step.Kind == OpKind::Throws)
      return Step;
    Cur = Step.Value;
  }

  if (TensorIndices.empty()) {
    OpOutcome Out = viewOf(In);
    Out.Value.Sizes = Cur.Sizes;
    Out.Value.Strides = Cur.Strides;
    Out.Value.Offset = Cur.Offset;
    Out.Note = "basic indexing: a view";
    return Out;
  }

  // Advanced indexing (AdvancedIndex in TensorAdvancedIndexing.cpp): index
  // tensors broadcast together; adjacent ones replace their dims in place,
  // separated ones move the broadcast dims to the front.
  std::optional<Shape> IndexShape = *TensorIndices.front().Index.Sizes;
  for (const Advanced &A : TensorIndices) {
    Shape Both;
    Tri Broadcasts = broadcastShapes(*IndexShape, *A.Index.Sizes, Both);
    if (Broadcasts == Tri::Unknown)
      return unknownCopy("whether the index tensors " + dimsText(*IndexShape) +
                             " and " + dimsText(*A.Index.Sizes) +
                             " broadcast is not decidable",
                         In.Type, In.Dev);
    if (Broadcasts == Tri::False)
      return throws("shape mismatch: indexing tensors could not be broadcast "
                    "together");
    IndexShape = std::move(Both);
  }
  for (const Advanced &A : TensorIndices)
    if (A.Dim >= static_cast<int64_t>(Cur.Sizes->size()))
      return throws("too many indices for tensor");
  bool Adjacent = true;
  for (size_t I = 1; I < TensorIndices.size(); ++I)
    if (TensorIndices[I].Dim != TensorIndices[I - 1].Dim + 1)
      Adjacent = false;
  const Shape &Src = *Cur.Sizes;
  const Shape &SrcStrides = *Cur.Strides;
  int64_t First = TensorIndices.front().Dim;
  int64_t Last = TensorIndices.back().Dim;
  int64_t IndexRank = static_cast<int64_t>(IndexShape->size());
  Shape OutSizes;
  // The restrided source (restride_src): indexed dims replaced by the index
  // shape with stride 0. Its operand order decides the output layout.
  Shape RestrideStrides;
  int64_t IndexPos;
  if (Adjacent) {
    for (int64_t D = 0; D < First; ++D) {
      OutSizes.push_back(Src[D]);
      RestrideStrides.push_back(SrcStrides[D]);
    }
    IndexPos = First;
    for (const SymSize &S : *IndexShape) {
      OutSizes.push_back(S);
      RestrideStrides.push_back(0);
    }
    for (int64_t D = Last + 1; D < static_cast<int64_t>(Src.size()); ++D) {
      OutSizes.push_back(Src[D]);
      RestrideStrides.push_back(SrcStrides[D]);
    }
  } else {
    // Separated indices: the source is first permuted so indexed dims lead.
    IndexPos = 0;
    for (const SymSize &S : *IndexShape) {
      OutSizes.push_back(S);
      RestrideStrides.push_back(0);
    }
    std::vector<bool> Indexed(Src.size(), false);
    for (const Advanced &A : TensorIndices)
      Indexed[A.Dim] = true;
    for (size_t D = 0; D < Src.size(); ++D)
      if (!Indexed[D]) {
        OutSizes.push_back(Src[D]);
        RestrideStrides.push_back(SrcStrides[D]);
      }
  }
  std::vector<IterOperand> Operands;
  Operands.push_back({OutSizes, RestrideStrides});
  for (const Advanced &A : TensorIndices) {
    // reshape_indexer: the broadcast index gets size-1 dims around it; after
    // TensorIterator broadcasting those are stride 0.
    Shape IdxStrides(OutSizes.size(), 0);
    // Only an index of the broadcast shape itself keeps its strides; the
    // others are expanded, and an expanded dim has stride 0. (Equal shapes
    // by canonical form: a symbolic one the facts prove equal is expanded
    // all the same, but its strides then matter only for the layout, which
    // tensorIteratorOutputStrides decides or leaves unknown.)
    const Shape &IdxSizes = *A.Index.Sizes;
    if (A.Index.Strides && IdxSizes == *IndexShape)
      for (int64_t K = 0; K < IndexRank; ++K) {
        Tri One = sizeEq(IdxSizes[K], 1);
        if (One == Tri::Unknown)
          return unknownCopy(undecided("==", IdxSizes[K], 1), In.Type, In.Dev);
        IdxStrides[IndexPos + K] =
            One == Tri::True ? SymSize(0) : (*A.Index.Strides)[K];
      }
    Operands.push_back({OutSizes, IdxStrides});
  }
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  Out.Value.Sizes = OutSizes;
  Out.Value.Strides = tensorIteratorOutputStrides(OutSizes, Operands);
  Out.Value.Offset = 0;
  keepDType(Out.Value, In);
  Out.Value.Dev = In.Dev;
  Out.Note = "indexing with a tensor gathers: a new tensor, not a view";
  Out.WrittenBytes = Out.Value.logicalBytes();
  std::optional<SymSize> IndexBytes = SymSize(0);
  for (const Advanced &A : TensorIndices)
    IndexBytes = addSizes(IndexBytes, A.Index.logicalBytes());
  if (!Out.Value.Strides)
    Out.Value.markUnknown("the layout of the gathered output is not decidable");
  Out.ReadBytes = addSizes(Out.WrittenBytes, IndexBytes);
  // Measured on the CPU (1.13): the masks' nonzero() results are held
  // until the output is written. Other devices' scratch is not modelled.
  if (!MaskScratch || MaskScratch->constant() != 0) {
    Out.TransientBytes = MaskScratch;
    if (!In.Dev || In.Dev->Kind != DeviceKind::CPU)
      Out.TransientBytes.reset();
  }
  return Out;
}

// Tensor::operator[](const Tensor&) (TensorBody.h): the index must be a
// 0-dim integral tensor; it is item() + select.
OpOutcome subscriptWithTensor(const TensorValue &In, const TensorValue &Index) {
  if (Index.Sizes && !Index.Sizes->empty())
    return throws("Can only index with tensors that are scalars (zero-dim)");
  if (Index.Type && !isIntegral(*Index.Type, false))
    return throws("Can only index with tensors that are integral scalars");
  OpOutcome Out = viewOf(In);
  Out.Kind = OpKind::View;
  Out.Value.markUnknown("a 0-dim index tensor selects at a value known only at "
                        "run time");
  return Out;
}

// index_select (TensorAdvancedIndexing.cpp): the dim takes the index's
// length; a fresh contiguous output.
OpOutcome indexSelect(const TensorValue &In, int64_t Dim,
                      const TensorValue &Index) {
  if (Index.Type && *Index.Type != DType::Int64 && *Index.Type != DType::Int32)
    return throws("index_select(): Expected dtype int32 or int64 for index");
  if (!requireIndexParameter(Index))
    return unknownCopy("whether the index is int64 is not known", In.Type, In.Dev);
  if (!In.Sizes || !Index.Sizes)
    return unknownCopy(shapeReason(In.Sizes ? Index : In), In.Type, In.Dev);
  if (Index.Sizes->size() > 1)
    return throws("index_select(): Index is supposed to be a vector");
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (Rank == 0)
    return unknownCopy("index_select of a 0-dim tensor is not modelled",
                       In.Type, In.Dev);
  auto D = wrapDim(Dim, Rank);
  if (!D)
    return throws(rangeError(Rank));
  Shape Sizes = *In.Sizes;
  Sizes[*D] = numel(*Index.Sizes);
  OpOutcome Out = freshContiguous(Sizes, In.Type, In.Dev, In.TypeOf);
  // Each selected slice is read once, plus the index itself.
  Out.ReadBytes = addSizes(Out.WrittenBytes, Index.logicalBytes());
  return Out;
}

// embedding (native/Embedding.cpp): weight.index_select(0,
// indices.reshape(-1)).view(indices.sizes() + [dim]). The reshape copies a
// non-viewable index tensor (a transient).
OpOutcome embedding(const TensorValue &Weight, const TensorValue &Indices) {
  if (Indices.Type && *Indices.Type != DType::Int64 &&
      *Indices.Type != DType::Int32)
    return throws("Expected tensor for argument #1 'indices' to have one of "
                  "the following scalar types: Long, Int");
  if (!requireIndexParameter(Indices))
    return unknownCopy("whether the indices are int64 is not known",
                       Weight.Type, Weight.Dev);
  if (!Weight.Sizes || !Indices.Sizes)
    return unknownCopy(shapeReason(Weight.Sizes ? Indices : Weight),
                       Weight.Type, Weight.Dev);
  if (Weight.Sizes->size() != 2)
    return throws("'weight' must be 2-D");
  Shape Sizes = *Indices.Sizes;
  Sizes.push_back((*Weight.Sizes)[1]);
  OpOutcome Out = freshContiguous(Sizes, Weight.Type, Weight.Dev, Weight.TypeOf);
  Out.TransientBytes = SymSize(0);
  Shape FlatStrides;
  Tri Viewable = Indices.Strides
                     ? computeStride(*Indices.Sizes, *Indices.Strides,
                                     {numel(*Indices.Sizes)}, FlatStrides)
                     : Tri::Unknown;
  if (Viewable == Tri::False && Indices.Type)
    Out.TransientBytes = denseBytes(*Indices.Sizes, *Indices.Type);
  else if (Viewable == Tri::Unknown)
    Out.TransientBytes.reset();
  Out.ReadBytes = addSizes(Out.WrittenBytes, Indices.logicalBytes());
  return Out;
}

// gather (TensorAdvancedIndexing.cpp): output of the index's shape, fresh
// and contiguous.
OpOutcome gather(const TensorValue &In, int64_t Dim, const TensorValue &Index) {
  if (Index.Type && *Index.Type != DType::Int64)
    return throws("gather(): Expected dtype int64 for index");
  if (!requireIndexParameter(Index))
    return unknownCopy("whether the index is int64 is not known", In.Type, In.Dev);
  if (!In.Sizes || !Index.Sizes)
    return unknownCopy(shapeReason(In.Sizes ? Index : In), In.Type, In.Dev);
  int64_t Rank = static_cast<int64_t>(In.Sizes->size());
  if (!wrapDim(Dim, Rank))
    return throws(rangeError(Rank));
  if (static_cast<int64_t>(Index.Sizes->size()) != std::max<int64_t>(Rank, 1) &&
      !(Rank == 0 && Index.Sizes->empty()))
    return throws("Index tensor must have the same number of dimensions as "
                  "input tensor");
  OpOutcome Out = freshContiguous(*Index.Sizes, In.Type, In.Dev, In.TypeOf);
  Out.ReadBytes = addSizes(Out.WrittenBytes, Index.logicalBytes());
  return Out;
}

} // namespace tma

// ---- Rules (OpTable.def) ------------------------------------------------------------

namespace tma {

using namespace detail;

RuleResult rule_index(const OpCall &C) {
  const ArgValue &L = C.arg(1);
  if (!L.known())
    return notModelled(C, L.Reason.empty() ? "index list could not be derived"
                                           : L.Reason);
  return one(index(C.self().TV, L.Indices));
}

// Tensor::operator[]: an integer selects along dim 0; a tensor must be a
// 0-dim integral one.
RuleResult rule_subscript(const OpCall &C) {
  const ArgValue &I = C.arg(1);
  if (I.Type == ArgType::Tensor)
    return one(subscriptWithTensor(C.self().TV, I.TV));
  if (I.size() && !I.size()->constant())
    return one(select(C.self().TV, 0, *I.size()));
  if (!I.known())
    return notModelled(C, "index could not be derived");
  return one(select(C.self().TV, 0, I.Int));
}

/// index_select / gather: (self, int dim, Tensor index, ...).
static RuleResult byIndex(const OpCall &C, bool Gather) {
  const ArgValue &D = C.arg(1);
  if (D.Type == ArgType::Dimname)
    return notModelled(C, C.Written + " by dimension name is not modelled");
  if (!D.known())
    return notModelledOnAll(C, "dim could not be derived");
  if (Gather && C.arg(3).given() && (!C.arg(3).known() || C.arg(3).Bool))
    return notModelledOnAll(C, "sparse_grad gather is not modelled");
  const TensorValue &Index = C.arg(2).TV;
  return one(Gather ? gather(C.self().TV, D.Int, Index)
                    : indexSelect(C.self().TV, D.Int, Index));
}

RuleResult rule_index_select(const OpCall &C) { return byIndex(C, false); }
RuleResult rule_gather(const OpCall &C) { return byIndex(C, true); }

// at::embedding(weight, indices, ...), but
// torch::nn::functional::embedding(input, weight, options).
RuleResult rule_embedding(const OpCall &C) {
  bool Functional = C.Overload == 1;
  size_t W = Functional ? 1 : 0, I = Functional ? 0 : 1;
  RuleResult R;
  R.Inputs = std::vector<size_t>{W, I};
  if (Functional && C.arg(2).given()) {
    R.Outcomes.push_back(unmodelled(C.Written));
    R.Outcomes[0].Value.UnknownReason = "embedding options are not modelled";
  } else {
    R.Outcomes.push_back(embedding(C.arg(W).TV, C.arg(I).TV));
  }
  return R;
}

// multinomial(num_samples, replacement, generator) (Distributions.cpp,
// multinomial and multinomial_out): int64 sample indices, fresh and
// contiguous, (num_samples) for a 1-D self and (rows, num_samples) for a
// 2-D one. LibTorch's checks, in its order: self 1-D or 2-D, floating
// (float16 not on the CPU), num_samples > 0, at most size(-1) samples
// without replacement, at most 2^24 categories. Which elements are drawn
// is data; so are the throws for negative, infinite or all-zero
// probabilities (assumed not to happen), except that zero categories with
// replacement always sum to zero. Inside the op, the CPU's paths allocate
// and free several temporaries (a tensor of self's sizes for the
// exponential draw, 0-dim checks, topk's values): the transient bytes are
// not modelled.
RuleResult rule_multinomial(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  const ArgValue &N = C.arg(1), &Replace = C.arg(2);
  if (!In.Sizes)
    return notModelled(C, shapeReason(In));
  size_t Rank = In.Sizes->size();
  if (Rank != 1 && Rank != 2)
    return one(throws("prob_dist must be 1 or 2 dim"));
  if (In.Type && !isFloating(*In.Type))
    return one(throws("multinomial only supports floating-point dtypes for "
                      "input, got: " + loss::c10Name(*In.Type)));
  if (In.Type && *In.Type == DType::Float16) {
    if (!In.Dev)
      return notModelled(C, "multinomial of float16 on an unknown device is "
                            "not modelled");
    if (In.Dev->Kind == DeviceKind::CPU)
      return one(throws("multinomial is not implemented for half on CPU"));
  }
  if (N.K != ArgValue::Kind::Int)
    return notModelled(C, "num_samples could not be derived");
  if (Replace.given() && !Replace.known())
    return notModelled(C, "replacement could not be derived");
  bool WithReplacement = Replace.known() && Replace.Bool;
  if (N.Int <= 0)
    return one(throws("cannot sample n_sample <= 0 samples"));
  const SymSize &Categories = In.Sizes->back();
  if (!WithReplacement) {
    Tri Fits = requireLe(SymSize(N.Int), Categories);
    if (Fits == Tri::False)
      return one(throws("cannot sample n_sample > prob_dist.size(-1) samples "
                        "without replacement"));
    if (Fits == Tri::Unknown)
      return notModelled(C, undecided("<=", SymSize(N.Int), Categories));
  }
  const int64_t MaxCategories = int64_t(1) << 24; // FLOAT32_MAX_CONSECUTIVE_INT
  Tri Few = requireLe(Categories, SymSize(MaxCategories));
  if (Few == Tri::False)
    return one(throws("number of categories cannot exceed 2^24"));
  if (Few == Tri::Unknown)
    return notModelled(C, undecided("<=", Categories, SymSize(MaxCategories)));
  Shape Sizes;
  if (Rank == 2)
    Sizes.push_back((*In.Sizes)[0]);
  Sizes.push_back(SymSize(N.Int));
  // Zero categories with replacement (without, N > 0 has thrown): the
  // probabilities sum to zero, which throws unless there is no row to
  // sample (a 2-D self of 0 rows returns its empty result first). A
  // symbolic number of categories is stated to be positive.
  if (WithReplacement) {
    if (auto Count = Categories.constant(); Count && *Count == 0) {
      Tri NoRows = Rank == 2 ? sizeEq((*In.Sizes)[0], SymSize(0)) : Tri::False;
      if (NoRows == Tri::False)
        return one(throws("invalid multinomial distribution (sum of "
                          "probabilities <= 0)"));
      if (NoRows == Tri::Unknown)
        return notModelled(C, "multinomial over zero categories with a "
                              "symbolic number of rows is not modelled");
    } else if (!Count && requireLt(SymSize(0), Categories) != Tri::True) {
      return notModelled(C, undecided("<", SymSize(0), Categories));
    }
  }
  OpOutcome Out = freshContiguous(Sizes, DType::Int64, In.Dev);
  Out.ReadBytes = In.logicalBytes();
  Out.TransientBytes.reset();
  Out.Note = "the temporaries multinomial allocates inside itself are not "
             "modelled";
  return one(Out);
}

} // namespace tma

namespace tma {

using namespace detail;

// nonzero (TensorAdvancedIndexing.cpp, nonzero_out_cpu; argwhere is
// nonzero): the int64 coordinates of the elements that are not zero,
// [u, self.dim()], where u is known only at run time (0 <= u <=
// self.numel()). The output is Fortran-ordered, strides {1, u} (gh-46224:
// resize_output then as_strided_), in a storage of u * dim * 8 B. The CPU
// kernel counts per thread in plain arrays: nothing transient; other
// devices' scratch is not modelled.
RuleResult rule_nonzero(const OpCall &C) {
  const TensorValue &In = C.self().TV;
  std::optional<SymSize> Elements = In.elementCount();
  if (!Elements)
    return notModelled(C, shapeReason(In));
  if (auto No = nonzeroRefuses(*Elements, In)) {
    if (No->Kind != OpKind::Throws)
      No->Value.Type = DType::Int64;
    return one(*No);
  }
  std::optional<SymSize> U = dataDependentCount(C.Op->Name, *Elements);
  if (!U)
    return notModelled(C, "how many elements are not zero is known only at "
                          "run time");
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  Out.Value.Sizes = Shape{*U, SymSize(static_cast<int64_t>(In.Sizes->size()))};
  Out.Value.Strides = Shape{SymSize(1), *U};
  Out.Value.Offset = 0;
  Out.Value.Type = DType::Int64;
  Out.Value.Dev = In.Dev;
  Out.ReadBytes = In.logicalBytes();
  Out.WrittenBytes = Out.Value.logicalBytes();
  if (!In.Dev || In.Dev->Kind != DeviceKind::CPU)
    Out.TransientBytes.reset();
  Out.Note = "nonzero: how many rows only a run knows";
  return one(Out);
}

// masked_select (TensorAdvancedIndexing.cpp, masked_select_out_impl_cpu):
// the elements of self where the (bool or uint8) mask is set, self and
// mask broadcast together, as a fresh 1-d tensor of self's dtype: [u], u
// known only at run time (0 <= u <= the broadcast numel). Its scratch is
// not modelled: measured on the CPU (1.13), the mask's sum first converts
// it to int64 (8 B per element) before the output exists, and a strided or
// broadcast operand, or a large input on several threads, takes the
// parallel kernel, which holds two more int64 tensors of the broadcast
// shape beside the output; which kernel runs depends on the thread count.
RuleResult rule_masked_select(const OpCall &C) {
  const TensorValue &In = C.self().TV, &Mask = C.arg(1).TV;
  if (Mask.Type && *Mask.Type != DType::Bool && *Mask.Type != DType::UInt8)
    return one(throws("masked_select: expected BoolTensor or ByteTensor for "
                      "mask"));
  if (!In.Sizes || !Mask.Sizes)
    return notModelled(C, shapeReason(In.Sizes ? Mask : In));
  if (!Mask.Type)
    return notModelled(C, "dtype of the mask is unknown");
  Shape Both;
  Tri Broadcasts = broadcastShapes(*In.Sizes, *Mask.Sizes, Both);
  if (Broadcasts == Tri::False)
    return one(throws("The size of tensor a must match the size of tensor b "
                      "at non-singleton dimension"));
  if (Broadcasts == Tri::Unknown)
    return notModelled(C, "whether self " + dimsText(*In.Sizes) +
                              " and the mask " + dimsText(*Mask.Sizes) +
                              " broadcast is not decidable");
  std::optional<SymSize> Elements = checkedNumel(Both);
  if (!Elements)
    return notModelled(C, "the broadcast shape has more elements than int64 "
                          "holds");
  std::optional<SymSize> U = dataDependentCount(C.Op->Name, *Elements);
  if (!U)
    return notModelled(C, "how many elements the mask selects is known only "
                          "at run time");
  OpOutcome Out;
  Out.Kind = OpKind::Copy;
  Out.Value.Sizes = Shape{*U};
  Out.Value.Strides = Shape{SymSize(1)};
  Out.Value.Offset = 0;
  keepDType(Out.Value, In);
  Out.Value.Dev = In.Dev;
  auto Read = sumBytes({&In, &Mask});
  Out.ReadBytes = Read;
  Out.WrittenBytes = Out.Value.logicalBytes();
  Out.TransientBytes.reset();
  Out.Note = "masked_select: how many elements only a run knows";
  return one(Out);
}

} // namespace tma
