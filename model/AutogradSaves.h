// What autograd saves for backward, read from the LibTorch being parsed
// (issue 36; ../shared/design/engine.md section 1).
//
//  1. torch/csrc/autograd/generated/Functions.h declares one struct per
//     backward node, `struct TORCH_API MmBackward0 : public
//     TraceableFunction { ... SavedVariable self_; ... SavedVariable mat2_;
//     };`. Its SavedVariable members (and std::vector<SavedVariable>
//     lists) are every tensor the node keeps alive until backward releases
//     it; its other members are sizes, scalars and flags, which hold no
//     storage. The header is generated, one struct per line pattern, in
//     every LibTorch release, so a scan of its text is exact.
//  2. A node is named after its ATen op by autograd's code generator:
//     the op name's '_'-separated words in Python's str.title() ("max",
//     "pool2d" -> "MaxPool2D"), then "Backward" and the overload's number.
//     An op's nodes are every struct named so; an op with none (a
//     composite op, which records the nodes of the ops it calls, or an op
//     autograd does not differentiate) is not known here.
//  3. A saved member is named after what it saves: a schema argument
//     (`self_`, `mat2_`, `other_`) or the op's output (`result_`,
//     `result0_`, ...); anything else (`indices_`, `mask_`) is a tensor the
//     op makes internally or returns beside its result.
//  4. Which of an op's nodes a call records: the one whose other members
//     (sizes, scalars, flags) name only arguments the call has, with a
//     tensor where the call passes one (`pow(x, 2)`: PowBackward0 saves
//     `self_` and a Scalar `exponent`; PowBackward1's `exponent_` is a
//     tensor, PowBackward2's `self` a Scalar), the one naming most of them
//     when several do (`mean(x, 1)`: MeanBackward1 names dim and keepdim,
//     MeanBackward0 none). A member `<arg>_sym_sizes` is derived from an
//     argument; a saved tensor no argument names is an output the op
//     makes (`indices_`).
//  5. Which inputs a node saves depends on which inputs require grad: a
//     saved input that one other input's gradient formula alone reads is
//     saved only when that input requires grad (derivatives.yaml and
//     gen_variable_type.py's guard_for); the header does not say which,
//     so inputGuards lists it for the nodes real code meets most.
//  6. An op ATen implements with other ops has
//     ATen/ops/<op>_compositeimplicitautograd_dispatch.h: it records their
//     nodes, not one of its own (isComposite).
//
// This file has no Clang header; the frontend finds the header beside the
// torch/version.h it parsed and hands its text here.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace tma {

class AutogradSaves {
public:
  /// The nodes and their saved members in Functions.h's text (empty: a
  /// header with no node, which answers nothing).
  static AutogradSaves parse(std::string_view FunctionsHeader);

  /// The backward node's name stem for an ATen op ("max_pool2d" ->
  /// "MaxPool2DBackward"): rule 2.
  static std::string nodeStem(std::string_view AtenOp);

  /// The members every node of Op saves, without the trailing '_'
  /// ("self", "mat2", "result"); an empty set: its nodes save no tensor.
  /// nullopt: the header has no node for Op (rule 2).
  std::optional<std::set<std::string>> savedBy(std::string_view AtenOp) const;
  /// The members every one of Op's nodes saves: what its call saves
  /// whichever overload it is (the numbering follows derivatives.yaml, not
  /// the schema, so the overload's own node is not known here).
  std::optional<std::set<std::string>>
  savedByEveryOverload(std::string_view AtenOp) const;

  size_t nodeCount() const { return Nodes.size(); }

  /// Rule 4: the node among Op's that a call with these arguments (schema
  /// name -> whether it is a tensor) records; nullopt when none fits or
  /// several fit equally well.
  std::optional<std::string>
  nodeFor(std::string_view AtenOp,
          const std::map<std::string, bool> &ArgIsTensor) const;
  /// The members Node saves (trailing '_' removed); empty for no node.
  std::set<std::string> savedByNode(const std::string &Node) const;
  /// Rule 5: for each input Node saves, the input whose gradient alone
  /// needs it ("" when every gradient does: saved whenever the node is);
  /// nullopt: not known for this node.
  static std::optional<std::map<std::string, std::string>>
  inputGuards(std::string_view Node);
  /// A member holding the op's output: `result_`, `result1_`.
  static bool isResultMember(const std::string &Member);

  /// Rule 6: ATen implements Op by calling other ops
  /// (CompositeImplicitAutograd): the nodes it records are theirs, and a
  /// node named after it is another kernel's (linear's LinearBackward0
  /// serves MKL-DNN, dense CPU records addmm's).
  bool isComposite(std::string_view AtenOp) const {
    return Composite.count(std::string(AtenOp)) > 0;
  }
  /// Reads ATen/ops/<Op>_compositeimplicitautograd_dispatch.h's text: Op
  /// is composite for plain tensors when one of its declarations takes no
  /// Dimname (overloads for named dimensions alone do not count).
  void noteCompositeDispatch(std::string_view AtenOp, std::string_view Header);

private:
  std::set<std::string> Composite;
  /// Node name -> its saved members (trailing '_' removed).
  std::map<std::string, std::set<std::string>> Nodes;
  /// Node name -> its other members (sizes, scalars, flags).
  std::map<std::string, std::set<std::string>> Plain;
};

} // namespace tma
