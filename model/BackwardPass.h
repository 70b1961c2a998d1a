// The pieces AutogradBackward.cpp's engine and BackwardFormulas.cpp's
// node formulas share: the pass's buffers and handles, the layouts the
// formulas read, one node's call. Internal to the model's backward pass.
#pragma once

#include "model/Autograd.h"
#include "model/Geometry.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tma {
namespace backward_pass {


/// How a gradient tensor lies in its buffer: what the BLAS calls of mm's
/// formulas and AccumulateGrad's layout contract look at.
enum class Layout { Dense, Transposed, Expanded };

/// The first value of V's C++ tensor (ValueInfo::SameTensorAs).
inline ValueId tensorOf(const FunctionTrace &T, ValueId V) {
  ValueId Same = T.Values.at(V).SameTensorAs;
  return Same == NoValue ? V : Same;
}

inline std::string lineOf(const OpEvent &Op) {
  return "'" + Op.Name + "' (line " + std::to_string(Op.Where.Line) + ")";
}

/// The gradient buffers and tensor handles of one pass, and the steps they
/// make. A handle is a C++ tensor (its use_count is Refs); a buffer is a
/// storage, freed when its last handle goes.
class PassLedger {
public:
  std::vector<BackwardStep> Steps;

  int allocate(const SymSize &Bytes, ValueId Of) {
    BackwardStep S;
    S.K = BackwardStep::Kind::Allocate;
    S.Buffer = static_cast<int>(Buffers.size());
    S.Bytes = Bytes;
    S.Of = Of;
    Steps.push_back(S);
    Buffers.push_back(0);
    return S.Buffer;
  }
  /// A new handle on Buffer, held once.
  int handle(int Buffer, Layout L, ValueId ShapeOf) {
    ++Buffers[Buffer];
    Handles.push_back({Buffer, L, ShapeOf, 1});
    return static_cast<int>(Handles.size() - 1);
  }
  int fresh(const SymSize &Bytes, ValueId Of, Layout L = Layout::Dense) {
    return handle(allocate(Bytes, Of), L, Of);
  }
  void retain(int H) { ++Handles[H].Refs; }
  void release(int H) {
    if (--Handles[H].Refs > 0)
      return;
    int B = Handles[H].Buffer;
    if (--Buffers[B] == 0) {
      BackwardStep S;
      S.K = BackwardStep::Kind::Free;
      S.Buffer = B;
      Steps.push_back(S);
    }
  }
  /// Buffer becomes Leaf's .grad (KeepAsGrad: held for as long as the
  /// leaf) or an optimizer's state of parameter Leaf (KeepAsState).
  void keep(int Buffer, ValueId Leaf,
            BackwardStep::Kind As = BackwardStep::Kind::KeepAsGrad) {
    ++Buffers[Buffer];
    BackwardStep S;
    S.K = As;
    S.Buffer = Buffer;
    S.Of = Leaf;
    Steps.push_back(S);
  }
  void releaseSaved(OpId Op, int Member = -1) {
    BackwardStep S;
    S.K = BackwardStep::Kind::ReleaseSaved;
    S.Op = Op;
    S.Member = Member;
    Steps.push_back(S);
  }
  Layout layout(int H) const { return Handles[H].L; }
  ValueId shapeOf(int H) const { return Handles[H].ShapeOf; }
  int buffer(int H) const { return Handles[H].Buffer; }
  int refs(int H) const { return Handles[H].Refs; }
  /// Every buffer but the leaves' .grad was freed.
  bool balanced(const std::set<int> &Kept) const {
    for (size_t B = 0; B < Buffers.size(); ++B)
      if (Buffers[B] != (Kept.count(static_cast<int>(B)) ? 1 : 0))
        return false;
    return true;
  }

private:
  struct Handle {
    int Buffer;
    Layout L;
    ValueId ShapeOf; // the tensor whose shape the gradient has
    int Refs;
  };
  std::vector<int> Buffers; // references to each
  std::vector<Handle> Handles;
};

/// A tensor's layout as a gradient formula sees it; nullopt when it is
/// none of these or not known.
inline std::optional<Layout> layoutOf(const TensorValue &V) {
  if (!V.Sizes || !V.Strides)
    return std::nullopt;
  if (isContiguous(*V.Sizes, *V.Strides) == Tri::True)
    return Layout::Dense;
  if (V.Sizes->size() == 2) {
    Shape Sizes = {(*V.Sizes)[1], (*V.Sizes)[0]};
    Shape Strides = {(*V.Strides)[1], (*V.Strides)[0]};
    if (isContiguous(Sizes, Strides) == Tri::True)
      return Layout::Transposed;
  }
  return std::nullopt;
}

/// Whether two shapes are the same (nullopt: not decidable here).
inline std::optional<bool> sameShape(const TensorValue &A, const TensorValue &B) {
  if (!A.Sizes || !B.Sizes)
    return std::nullopt;
  if (A.Sizes->size() != B.Sizes->size())
    return false;
  bool Equal = true;
  for (size_t D = 0; D < A.Sizes->size(); ++D) {
    auto CA = (*A.Sizes)[D].constant(), CB = (*B.Sizes)[D].constant();
    if (CA && CB) {
      Equal = Equal && *CA == *CB;
      continue;
    }
    if (!((*A.Sizes)[D] == (*B.Sizes)[D]))
      return std::nullopt;
  }
  return Equal;
}


/// One node's call: what its formula reads.
struct NodeCall {
  const FunctionTrace &T;
  const OpEvent &Op;
  const std::string &Node;
  const std::vector<OpArgument> &Args;
  int Grad; // the handle of the gradient it receives
  /// Whether the argument's tensor requires grad (its gradient is computed).
  std::function<bool(const std::string &)> Needs;

  const OpArgument *arg(const std::string &Name) const {
    for (const OpArgument &A : Args)
      if (A.Name == Name)
        return &A;
    return nullptr;
  }
  ValueId tensor(const std::string &Name) const {
    const OpArgument *A = arg(Name);
    return A ? A->Tensor : NoValue;
  }
  const TensorValue &value(ValueId V) const { return T.value(V); }
};

using Gradients = std::vector<std::pair<ValueId, int>>;

/// The gradient formulas of 1.13 whose allocations are followed
/// (BackwardFormulas.cpp). Returns why not, or "".
std::string backwardFormula(PassLedger &L, const NodeCall &C, Gradients &Out);

} // namespace backward_pass
} // namespace tma
