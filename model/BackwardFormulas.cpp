// Each backward node's gradients and temporaries, as LibTorch 1.13's
// formulas make them (FunctionsManual.cpp, derivatives.yaml), measured
// with a counting CPU allocator; AutogradBackward.cpp runs the nodes.
#include "model/BackwardPass.h"

#include "model/DType.h"
#include "model/ops/OpCodes.h"

#include <algorithm>

namespace tma {
namespace backward_pass {

/// The gradient formulas of 1.13 whose allocations are followed: each
/// computes the gradients of the node's inputs that require grad, with the
/// temporaries the formula makes, in order. Returns why not, or "".
std::string backwardFormula(PassLedger &L, const NodeCall &C, Gradients &Out) {
  auto Bytes = [&](ValueId V) { return C.value(V).logicalBytes(); };
  auto IsFloat = [&](ValueId V) {
    return C.value(V).Type == std::optional<DType>(DType::Float32);
  };
  Layout G = L.layout(C.Grad);
  bool GradElementwise = G == Layout::Dense || G == Layout::Expanded;
  ValueId Self = C.tensor("self"), Result = C.Op.Result;
  auto Dense = [&](ValueId V) { return layoutOf(C.value(V)) == Layout::Dense; };
  const std::string NotFollowed = "its backward (" + C.Node + ") ";

  // A gradient of the input's size, computed elementwise from the
  // gradient and saved tensors laid out densely (TensorIterator's output
  // is then dense).
  auto Elementwise = [&](ValueId Input, std::vector<ValueId> Reads) -> std::string {
    if (!GradElementwise)
      return NotFollowed + "reads a gradient laid out in a way not followed";
    for (ValueId R : Reads)
      if (R == NoValue || !Dense(R))
        return NotFollowed + "reads a tensor whose layout is not dense";
    auto B = Bytes(Input);
    if (!B)
      return NotFollowed + "makes a gradient of unknown size";
    Out.push_back({Input, L.fresh(*B, Input)});
    return "";
  };

  if (C.Node == "ReluBackward0" || C.Node == "SigmoidBackward0" ||
      C.Node == "TanhBackward0")
    return C.Needs("self") ? Elementwise(Self, {Result}) : "";
  if (C.Node == DropoutNode) // grad * noise
    return C.Needs("self") ? Elementwise(Self, {}) : "";
  if (C.Node == "GeluBackward0")
    return C.Needs("self") ? Elementwise(Self, {Self}) : "";
  if (C.Node == "NegBackward0")
    return C.Needs("self") ? Elementwise(Self, {}) : "";
  if (C.Node == "SoftmaxBackward0" || C.Node == "LogSoftmaxBackward0") {
    // _softmax_backward_data over the last dimension of dense tensors
    // makes its output and nothing else.
    const OpArgument *Dim = C.arg("dim");
    auto Rank = C.value(Result).rank();
    if (!Dim || !Dim->Number || !Rank ||
        (*Dim->Number != -1 && *Dim->Number != static_cast<double>(*Rank - 1)))
      return NotFollowed + "runs over a dimension other than the last";
    if (G != Layout::Dense)
      return NotFollowed + "reads a gradient that is not dense";
    return C.Needs("self") ? Elementwise(Self, {Result}) : "";
  }
  if (C.Node == "SumBackward0") {
    // grad.expand(self's sizes): a view of the gradient, every stride 0.
    if (!C.Needs("self"))
      return "";
    auto N = C.value(Self).elementCount();
    if (!N || !N->constant() || *N->constant() < 2)
      return NotFollowed + "expands to a tensor whose element count is not "
                           "known to be over 1";
    L.retain(C.Grad);
    int H = L.handle(L.buffer(C.Grad), Layout::Expanded, Self);
    L.release(C.Grad);
    Out.push_back({Self, H});
    return "";
  }
  if (C.Node == "EmbeddingBackward0") {
    // embedding_dense_backward: zeros(num_weights, dim), rows added from
    // the gradient made contiguous (a dense gradient: no copy).
    ValueId Weight = C.tensor("weight");
    if (!C.Needs("weight"))
      return "";
    for (const char *Flag : {"scale_grad_by_freq", "sparse"}) {
      const OpArgument *A = C.arg(Flag);
      if (!A || A->Number != std::optional<double>(0.0))
        return NotFollowed + "is followed without " + Flag + " only";
    }
    if (G != Layout::Dense)
      return NotFollowed + "copies a gradient that is not dense, which is "
                           "not measured";
    auto B = Bytes(Weight);
    if (!B)
      return NotFollowed + "makes a gradient of unknown size";
    Out.push_back({Weight, L.fresh(*B, Weight)});
    return "";
  }
  if (C.Node == "MeanBackward0" || C.Node == "MeanBackward1") {
    // grad.expand(sizes) / numel (over dim: grad unsqueezed and expanded,
    // divided by the dims' count): the count as a wrapped int64 scalar (8
    // bytes), converted to float (4), then the quotient.
    if (!C.Needs("self"))
      return "";
    if (!IsFloat(Self))
      return NotFollowed + "divides by a scalar converted to a dtype other "
                           "than float, which is not measured";
    auto B = Bytes(Self);
    if (!B)
      return NotFollowed + "makes a gradient of unknown size";
    int Count = L.fresh(SymSize(8), NoValue), AsFloat = L.fresh(SymSize(4), NoValue);
    int H = L.fresh(*B, Self);
    L.release(AsFloat);
    L.release(Count);
    Out.push_back({Self, H});
    return "";
  }
  if (C.Node == "PowBackward0") {
    // grad * (exponent * self.pow(exponent - 1)): two temporaries of
    // self's size, the exponent as a wrapped double converted to float.
    const OpArgument *Exponent = C.arg("exponent");
    if (!C.Needs("self"))
      return "";
    if (!Exponent || !Exponent->Number || *Exponent->Number == 0)
      return NotFollowed + "depends on an exponent not known to be non-zero";
    if (!IsFloat(Self) || !GradElementwise || !Dense(Self))
      return NotFollowed + "is followed for dense float tensors only";
    auto B = Bytes(Self);
    if (!B)
      return NotFollowed + "makes a gradient of unknown size";
    int Power = L.fresh(*B, NoValue);
    int Scalar = L.fresh(SymSize(8), NoValue), AsFloat = L.fresh(SymSize(4), NoValue);
    int Scaled = L.fresh(*B, NoValue);
    L.release(AsFloat);
    L.release(Scalar);
    int H = L.fresh(*B, Self);
    L.release(Scaled);
    L.release(Power);
    Out.push_back({Self, H});
    return "";
  }
  if (C.Node == "AddBackward0" || C.Node == "SubBackward0") {
    const OpArgument *Alpha = C.arg("alpha");
    if (Alpha && !Alpha->Absent && Alpha->Number != std::optional<double>(1.0))
      return NotFollowed + "scales by an alpha not known to be 1";
    // self's gradient is the gradient itself; other's too (add) or its
    // negation (sub).
    if (C.Needs("self")) {
      L.retain(C.Grad);
      Out.push_back({Self, C.Grad});
    }
    if (C.Needs("other")) {
      ValueId Other = C.tensor("other");
      if (C.Node == "AddBackward0") {
        L.retain(C.Grad);
        Out.push_back({Other, C.Grad});
      } else {
        if (!GradElementwise)
          return NotFollowed + "reads a gradient laid out in a way not followed";
        auto B = Bytes(Result);
        if (!B)
          return NotFollowed + "makes a gradient of unknown size";
        Out.push_back({Other, L.fresh(*B, Result)});
      }
    }
    return "";
  }
  if (C.Node == "MulBackward0") {
    // grad * other for self, grad * self for other: of the result's shape.
    ValueId Other = C.tensor("other");
    if (!GradElementwise)
      return NotFollowed + "reads a gradient laid out in a way not followed";
    auto B = Bytes(Result);
    if (!B)
      return NotFollowed + "makes a gradient of unknown size";
    if (C.Needs("self"))
      Out.push_back({Self, L.fresh(*B, Result)});
    if (C.Needs("other"))
      Out.push_back({Other, L.fresh(*B, Result)});
    return "";
  }
  if (C.Node == "MseLossBackward0") {
    // mse_loss_backward: zeros_like(self), written by one TensorIterator
    // (the norm is a double argument of the kernel, not a tensor).
    if (C.Needs("target"))
      return NotFollowed + "computes the target's gradient, which is not "
                           "measured";
    return C.Needs("self") ? Elementwise(Self, {}) : "";
  }
  if (C.Node == "MmBackward0" || C.Node == "AddmmBackward0") {
    // Each matrix's gradient is a product laid out as that matrix
    // (mm_mat1_backward, mm_mat2_backward); a gradient BLAS cannot read
    // (stride 0, from sum()) is first copied to a dense one, for each
    // product. mm computes mat2's then self's; addmm mat1's then mat2's,
    // then bias's: the gradient itself, summed to the bias's shape.
    //
    // Linear records addmm(bias, input, weight.t()) (mm without a bias):
    // mat2 is the weight's transpose, and TBackward0 hands its gradient,
    // laid out as the transpose, to the weight as a dense tensor.
    bool Addmm = C.Node == "AddmmBackward0";
    bool OfLinear = C.Op.Code == OpCode::linear;
    const char *First = Addmm ? "mat1" : "self";
    ValueId Mat1 = C.tensor(First), Mat2 = C.tensor("mat2");
    auto OperandLayout = [&](ValueId M) -> std::optional<Layout> {
      std::optional<Layout> Own = layoutOf(C.value(M));
      if (M != Mat2 || !OfLinear || !Own)
        return Own;
      return *Own == Layout::Dense ? std::optional<Layout>(Layout::Transposed)
                                   : std::nullopt;
    };
    for (ValueId M : {Mat1, Mat2}) {
      const TensorValue &V = C.value(M);
      if (M == NoValue || !OperandLayout(M) || !V.Sizes || V.Sizes->size() != 2)
        return NotFollowed + "reads a matrix whose layout is not followed";
      // BLAS reads a dense matrix or its transpose (a size of 1 too:
      // measured with Linear(16, 1)); an empty one takes other paths.
      for (const SymSize &D : *V.Sizes)
        if (!D.constant() || *D.constant() < 1)
          return NotFollowed + "multiplies matrices with a size not known "
                               "to be over 0";
    }
    if (Addmm)
      for (const char *Scale : {"beta", "alpha"}) {
        const OpArgument *A = C.arg(Scale);
        if (A && !A->Absent && A->Number != std::optional<double>(1.0))
          return NotFollowed + "scales by a " + Scale + " not known to be 1";
      }
    if (G == Layout::Transposed)
      return NotFollowed + "reads a gradient laid out in a way not followed";
    auto ResultBytes = Bytes(Result);
    if (!ResultBytes)
      return NotFollowed + "reads a gradient of unknown size";
    std::vector<ValueId> Order = Addmm ? std::vector<ValueId>{Mat1, Mat2}
                                       : std::vector<ValueId>{Mat2, Mat1};
    Gradients Products;
    for (ValueId In : Order) {
      if (!C.Needs(In == Mat1 ? First : "mat2"))
        continue;
      auto B = Bytes(In);
      if (!B)
        return NotFollowed + "makes a gradient of unknown size";
      Layout Laid = In == Mat2 && OfLinear ? Layout::Dense : *OperandLayout(In);
      int H = L.fresh(*B, In, Laid);
      if (G == Layout::Expanded)
        L.release(L.fresh(*ResultBytes, NoValue));
      Products.push_back({In, H});
    }
    // The gradients go in the inputs' order: self (the bias), mat1, mat2.
    if (Addmm && C.Needs("self")) {
      L.retain(C.Grad);
      Out.push_back({Self, C.Grad});
    }
    for (ValueId In : {Mat1, Mat2})
      for (const auto &P : Products)
        if (P.first == In)
          Out.push_back(P);
    return "";
  }
  if (C.Node == "TBackward0") {
    if (!C.Needs("self"))
      return "";
    Layout Swapped = G == Layout::Dense        ? Layout::Transposed
                     : G == Layout::Transposed ? Layout::Dense
                                               : Layout::Expanded;
    L.retain(C.Grad);
    int H = L.handle(L.buffer(C.Grad), Swapped, Self);
    L.release(C.Grad);
    Out.push_back({Self, H});
    return "";
  }
  if (C.Node == LayerNormNode)
    // Measured: the input's, weight's and bias's gradients, then a
    // {2, threads, features} scratch buffer (LayerNormBackwardKernelImpl),
    // whose size is the thread count's.
    return NotFollowed + "makes a scratch of 2 x threads x features "
                         "elements, whose size depends on the thread count "
                         "at run time";
  return NotFollowed + "allocates what the analysis does not follow";
}

} // namespace backward_pass
} // namespace tma
