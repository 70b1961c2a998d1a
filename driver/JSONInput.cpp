#include "driver/JSONInput.h"

#include <algorithm>
#include <string>

namespace tma {

unsigned jsonNestingDepth(llvm::StringRef Text, unsigned Limit) {
  unsigned Depth = 0, Deepest = 0;
  bool InString = false;
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (InString) {
      if (C == '\\')
        ++I; // the escaped character, whatever it is
      else if (C == '"')
        InString = false;
      continue;
    }
    if (C == '"') {
      InString = true;
    } else if (C == '[' || C == '{') {
      Deepest = std::max(Deepest, ++Depth);
      if (Deepest > Limit)
        return Deepest;
    } else if ((C == ']' || C == '}') && Depth > 0) {
      --Depth;
    }
  }
  return Deepest;
}

llvm::Expected<llvm::json::Value> parseBoundedJSON(llvm::StringRef Text,
                                                   unsigned MaxDepth) {
  if (jsonNestingDepth(Text, MaxDepth) > MaxDepth)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "JSON nested more than " + std::to_string(MaxDepth) +
            " levels deep; refused before parsing");
  return llvm::json::parse(Text);
}

} // namespace tma
