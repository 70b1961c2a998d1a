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
void forEachNode(const Map &Nodes, const std::string &Stem, Visit V) {
  for (auto It = Nodes.lower_bound(Stem);
       It != Nodes.end() && It->first.compare(0, Stem.size(), Stem) == 0; ++It) {
    std::string_view Rest = std::string_view(It->first).substr(Stem.size());
    bool Numbered = !Rest.empty();
    for (char C : Rest)
      Numbered = Numbered && std::isdigit(static_cast<unsigned char>(C));
    if (Numbered)
      V(It->second);
  }
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
