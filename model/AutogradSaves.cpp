// The scan of Functions.h and the node names (the rules are in
// AutogradSaves.h).
#include "model/AutogradSaves.h"

#include <cctype>

namespace tma {

namespace {

bool isIdentChar(char C) {
  return std::isalnum(static_cast<unsigned char>(C)) || C == '_';
}

/// The identifier that starts at Pos (empty when none does).
std::string_view identifierAt(std::string_view Text, size_t Pos) {
  size_t End = Pos;
  while (End < Text.size() && isIdentChar(Text[End]))
    ++End;
  return Text.substr(Pos, End - Pos);
}

size_t skipSpaces(std::string_view Text, size_t Pos) {
  while (Pos < Text.size() && std::isspace(static_cast<unsigned char>(Text[Pos])))
    ++Pos;
  return Pos;
}

/// The members of one node's body declared with type Type, in order.
void collectMembers(std::string_view Body, std::string_view Type,
                    std::set<std::string> &Out) {
  for (size_t At = Body.find(Type); At != std::string_view::npos;
       At = Body.find(Type, At + 1)) {
    // A whole type name, at the start of a declaration.
    if (At > 0 && (isIdentChar(Body[At - 1]) || Body[At - 1] == ':'))
      continue;
    size_t NamePos = skipSpaces(Body, At + Type.size());
    if (NamePos == At + Type.size())
      continue; // `SavedVariable&` or a longer identifier
    std::string_view Name = identifierAt(Body, NamePos);
    size_t After = skipSpaces(Body, NamePos + Name.size());
    if (Name.empty() || After >= Body.size() || Body[After] != ';')
      continue; // a parameter, a function, an initialised member
    std::string Member(Name);
    if (!Member.empty() && Member.back() == '_')
      Member.pop_back();
    Out.insert(Member);
  }
}

/// The members of one node's body that are no SavedVariable: every line
/// `  <type> <name>;` or `  <type> <name> = <init>;` (functions, using
/// declarations and statements have a parenthesis or a keyword).
void collectPlainMembers(std::string_view Body, std::set<std::string> &Out) {
  size_t Start = 0;
  while (Start < Body.size()) {
    size_t End = Body.find('\n', Start);
    if (End == std::string_view::npos)
      End = Body.size();
    std::string_view Line = Body.substr(Start, End - Start);
    Start = End + 1;
    while (!Line.empty() && std::isspace(static_cast<unsigned char>(Line.back())))
      Line.remove_suffix(1);
    if (Line.empty() || Line.back() != ';' ||
        Line.find('(') != std::string_view::npos ||
        Line.find("SavedVariable") != std::string_view::npos ||
        Line.find("using ") != std::string_view::npos)
      continue;
    Line.remove_suffix(1);
    if (size_t Init = Line.find(" = "); Init != std::string_view::npos)
      Line = Line.substr(0, Init);
    size_t NameStart = Line.size();
    while (NameStart > 0 && isIdentChar(Line[NameStart - 1]))
      --NameStart;
    std::string Member(Line.substr(NameStart));
    if (Member.empty() || NameStart == 0 || Line[NameStart - 1] != ' ')
      continue; // no type before the name
    if (Member.back() == '_')
      Member.pop_back();
    Out.insert(Member);
  }
}

} // namespace

AutogradSaves AutogradSaves::parse(std::string_view Text) {
  AutogradSaves S;
  const std::string_view Opening = "struct TORCH_API ";
  for (size_t At = Text.find(Opening); At != std::string_view::npos;
       At = Text.find(Opening, At + 1)) {
    size_t NamePos = At + Opening.size();
    std::string_view Name = identifierAt(Text, NamePos);
    if (Name.find("Backward") == std::string_view::npos)
      continue;
    size_t Open = Text.find('{', NamePos);
    // Node bodies have no nested braces at the start of a line: the body
    // ends at the first "\n};".
    size_t Close = Text.find("\n};", NamePos);
    if (Open == std::string_view::npos || Close == std::string_view::npos ||
        Close < Open)
      continue;
    std::string_view Body = Text.substr(Open, Close - Open);
    std::set<std::string> &Saved = S.Nodes[std::string(Name)];
    collectMembers(Body, "std::vector<SavedVariable>", Saved);
    collectMembers(Body, "SavedVariable", Saved);
    collectPlainMembers(Body, S.Plain[std::string(Name)]);
  }
  return S;
}

std::string AutogradSaves::nodeStem(std::string_view AtenOp) {
  // Python's str.title() on each '_'-separated word: a letter after a
  // non-letter is upper case, every other letter lower case.
  std::string Stem;
  bool AfterLetter = false;
  for (char C : AtenOp) {
    if (C == '_') {
      AfterLetter = false;
      continue;
    }
    bool Letter = std::isalpha(static_cast<unsigned char>(C));
    if (Letter)
      Stem += AfterLetter ? static_cast<char>(std::tolower(C))
                          : static_cast<char>(std::toupper(C));
    else
      Stem += C;
    AfterLetter = Letter;
  }
  return Stem + "Backward";
}

void AutogradSaves::noteCompositeDispatch(std::string_view AtenOp,
                                          std::string_view Header) {
  for (size_t At = Header.find("TORCH_API"); At != std::string_view::npos;
       At = Header.find("TORCH_API", At + 1)) {
    size_t End = Header.find(';', At);
    std::string_view Declaration = Header.substr(At, End - At);
    if (Declaration.find("Dimname") == std::string_view::npos) {
      Composite.insert(std::string(AtenOp));
      return;
    }
  }
}

namespace {

/// Op's nodes (rule 2): StemN, not "MaxPool2DWithIndicesBackward0" (which
/// does not share the stem) or "ViewBackwardAutogradNestedTensor0" (a
/// kernel for another tensor type).
template <typename Map, typename Visit>
void forEachNodeNamed(const Map &Nodes, const std::string &Stem, Visit V) {
  for (auto It = Nodes.lower_bound(Stem);
       It != Nodes.end() && It->first.compare(0, Stem.size(), Stem) == 0; ++It) {
    std::string_view Rest = std::string_view(It->first).substr(Stem.size());
    bool Numbered = !Rest.empty();
    for (char C : Rest)
      Numbered = Numbered && std::isdigit(static_cast<unsigned char>(C));
    if (Numbered)
      V(It->first, It->second);
  }
}

template <typename Map, typename Visit>
void forEachNode(const Map &Nodes, const std::string &Stem, Visit V) {
  forEachNodeNamed(Nodes, Stem,
                   [&](const std::string &, const auto &Saved) { V(Saved); });
}

/// A member named after argument Arg: `self_sym_sizes`, `tensors_released`.
bool derivedFrom(const std::string &Member, const std::string &Arg) {
  return Member.size() > Arg.size() + 1 && Member.compare(0, Arg.size(), Arg) == 0 &&
         Member[Arg.size()] == '_';
}

} // namespace

std::optional<std::set<std::string>>
AutogradSaves::savedBy(std::string_view AtenOp) const {
  std::optional<std::set<std::string>> Saved;
  forEachNode(Nodes, nodeStem(AtenOp), [&](const std::set<std::string> &S) {
    if (!Saved)
      Saved.emplace();
    Saved->insert(S.begin(), S.end());
  });
  return Saved;
}

std::optional<std::set<std::string>>
AutogradSaves::savedByEveryOverload(std::string_view AtenOp) const {
  std::optional<std::set<std::string>> Saved;
  forEachNode(Nodes, nodeStem(AtenOp), [&](const std::set<std::string> &S) {
    if (!Saved) {
      Saved = S;
      return;
    }
    std::set<std::string> Both;
    for (const std::string &M : *Saved)
      if (S.count(M))
        Both.insert(M);
    Saved = std::move(Both);
  });
  return Saved;
}

} // namespace tma

namespace tma {

bool AutogradSaves::isResultMember(const std::string &Member) {
  if (Member.compare(0, 6, "result") != 0)
    return false;
  for (size_t K = 6; K < Member.size(); ++K)
    if (!std::isdigit(static_cast<unsigned char>(Member[K])))
      return false;
  return true;
}

std::optional<std::string>
AutogradSaves::nodeFor(std::string_view AtenOp,
                       const std::map<std::string, bool> &ArgIsTensor) const {
  std::optional<std::string> Best;
  int BestScore = -1;
  bool Tie = false;
  forEachNodeNamed(Nodes, nodeStem(AtenOp), [&](const std::string &Node,
                                                const std::set<std::string> &Saved) {
    auto PlainIt = Plain.find(Node);
    static const std::set<std::string> None;
    const std::set<std::string> &Others = PlainIt == Plain.end() ? None : PlainIt->second;
    int Score = 0, Outputs = 0;
    // Every member names an argument the call has, of its kind, or is
    // derived from one; a saved tensor may also be an output.
    auto Fits = [&](const std::string &Member, bool IsTensor) {
      if (IsTensor && isResultMember(Member))
        return true;
      if (auto It = ArgIsTensor.find(Member); It != ArgIsTensor.end()) {
        Score += It->second == IsTensor;
        return It->second == IsTensor;
      }
      for (const auto &[Arg, _] : ArgIsTensor)
        if (derivedFrom(Member, Arg))
          return true;
      Outputs += IsTensor;
      return IsTensor; // an output the op makes besides its result
    };
    for (const std::string &M : Saved)
      if (!Fits(M, true))
        return;
    for (const std::string &M : Others)
      if (!Fits(M, false))
        return;
    // Outputs beside the result, and no argument named: more likely
    // arguments named otherwise (a wrapper's `input`) than this node.
    if (Outputs > 0 && Score == 0)
      return;
    if (Score > BestScore) {
      Best = Node;
      BestScore = Score;
      Tie = false;
    } else if (Score == BestScore) {
      Tie = true;
    }
  });
  if (Tie)
    return std::nullopt;
  return Best;
}

std::set<std::string> AutogradSaves::savedByNode(const std::string &Node) const {
  auto It = Nodes.find(Node);
  return It == Nodes.end() ? std::set<std::string>{} : It->second;
}

std::optional<std::map<std::string, std::string>>
AutogradSaves::inputGuards(std::string_view Node) {
  // derivatives.yaml's formulas, by the input whose gradient reads each
  // saved input: `mm: self: mm_mat1_backward(grad, mat2, ...)` reads mat2
  // for self's gradient alone, so MmBackward0 saves mat2 only when self
  // requires grad. Measured on LibTorch 1.13.1 for mm, mul and addmm
  // (../shared/design/training.md); the rest by the same rule, checked
  // by training_differential_cpu.
  static const std::map<std::string, std::map<std::string, std::string>,
                        std::less<>>
      Guards = {
          {"MmBackward0", {{"self", "mat2"}, {"mat2", "self"}}},
          {"BmmBackward0", {{"self", "mat2"}, {"mat2", "self"}}},
          {"MulBackward0", {{"self", "other"}, {"other", "self"}}},
          {"AddmmBackward0", {{"mat1", "mat2"}, {"mat2", "mat1"}}},
          {"MvBackward0", {{"self", "vec"}, {"vec", "self"}}},
          {"DotBackward0", {{"self", "tensor"}, {"tensor", "self"}}},
          // div_tensor_other_backward(grad, self, other) reads both.
          {"DivBackward0", {{"self", "other"}, {"other", ""}}},
          // mse_loss_backward(grad, self, target, ...) for either input.
          {"MseLossBackward0", {{"self", ""}, {"target", ""}}},
          // embedding_backward(grad, indices, weight.size(0), ...) for the
          // weight (1.13 saves the weight to read its size); indices are
          // non_differentiable.
          {"EmbeddingBackward0", {{"indices", "weight"}, {"weight", "weight"}}},
      };
  auto It = Guards.find(Node);
  if (It == Guards.end())
    return std::nullopt;
  return It->second;
}

} // namespace tma
