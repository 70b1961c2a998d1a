#include "lsp/MessageReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace tma::lsp {

MessageReader::Result MessageReader::next() {
  if (Resynchronise) {
    Resynchronise = false;
    uint64_t Skipped = 0;
    if (!skipToContentLength(Skipped))
      return {Result::End, "",
              Skipped ? "no message after " + std::to_string(Skipped) +
                            " skipped bytes"
                      : ""};
    PendingHeader = "Content-Length:";
  }
  std::optional<uint64_t> Length;
  std::string BadLength;
  bool SawHeader = false;
  while (true) {
    std::string Line;
    if (PendingHeader) {
      Line = std::move(*PendingHeader);
      PendingHeader.reset();
    }
    bool Complete = readLine(Line);
    if (!Complete && Line.empty())
      return {Result::End, "", ""};
    if (!Line.empty() && Line.back() == '\r')
      Line.pop_back();
    if (Line.size() > MaxHeaderLine)
      return bad("a header line over " + std::to_string(MaxHeaderLine) +
                 " bytes");
    if (!Complete)
      return {Result::End, "",
              "the input ended inside a header block: '" + shown(Line) + "'"};
    if (Line.empty()) {
      if (!SawHeader)
        continue; // a stray blank line between messages
      break;
    }
    SawHeader = true;
    llvm::StringRef Name, Value;
    std::tie(Name, Value) = llvm::StringRef(Line).split(':');
    Name = Name.rtrim(" \t");
    if (!llvm::StringRef(Line).contains(':') || !isHeaderName(Name))
      return badAt(Line, std::string(Length ? "a header block"
                                            : "a header block without "
                                              "Content-Length") +
                             " with a line that is no \"Name: value\" "
                             "header: '" +
                             shown(Line) + "'");
    if (!Name.equals_insensitive("Content-Length"))
      continue; // Content-Type, or a header we need not understand
    llvm::StringRef Digits = Value.trim(" \t");
    uint64_t N = 0;
    bool Number = !Digits.empty() && Digits.size() <= 19 &&
                  llvm::all_of(Digits, llvm::isDigit) &&
                  !Digits.getAsInteger(10, N);
    if (!Number)
      return badAt(Line, "bad Content-Length '" + shown(Digits) + "'");
    if (Length && *Length != N)
      return badAt(Line, "two different Content-Length headers");
    Length = N;
  }
  if (!Length)
    return bad("a header block without Content-Length");
  if (*Length > MaxBody)
    return bad("a message of " + std::to_string(*Length) +
               " bytes is over the 256 MiB limit");
  std::string Body(*Length, '\0');
  std::streamsize Got =
      In.sgetn(Body.data(), static_cast<std::streamsize>(*Length));
  if (static_cast<uint64_t>(Got) != *Length)
    return {Result::End, "",
            "the input ended inside a message body (" + std::to_string(Got) +
                " of " + std::to_string(*Length) + " bytes)"};
  return {Result::Message, std::move(Body), ""};
}

bool MessageReader::isHeaderName(llvm::StringRef Name) {
  return !Name.empty() && llvm::all_of(Name, [](char C) {
    return llvm::isAlnum(C) || llvm::StringRef("!#$%&'*+-.^_`|~").contains(C);
  });
}

std::string MessageReader::shown(llvm::StringRef Text) {
  std::string Out;
  for (unsigned char C : Text.take_front(60)) {
    if (C < 0x20 || C == 0x7f)
      Out += "\\x" + llvm::utohexstr(C, /*LowerCase=*/true, /*Width=*/2);
    else
      Out += static_cast<char>(C);
  }
  if (Text.size() > 60)
    Out += "...";
  return Out;
}

MessageReader::Result MessageReader::bad(std::string Error) {
  Resynchronise = true;
  return {Result::BadBlock, "", std::move(Error)};
}

MessageReader::Result MessageReader::badAt(llvm::StringRef Line, std::string Error) {
  size_t At = Line.drop_front().find_insensitive("content-length:");
  if (At == llvm::StringRef::npos)
    return bad(std::move(Error));
  PendingHeader = Line.drop_front(At + 1).str();
  // The rest of the line was read already; the header goes on from it.
  PendingComplete = true;
  return {Result::BadBlock, "", std::move(Error)};
}

bool MessageReader::readLine(std::string &Line) {
  if (PendingComplete) {
    PendingComplete = false;
    return true;
  }
  while (Line.size() <= MaxHeaderLine) {
    int C = In.sbumpc();
    if (C == std::char_traits<char>::eof())
      return false;
    if (C == '\n')
      return true;
    Line += static_cast<char>(C);
  }
  return true; // too long: the caller reports it
}

bool MessageReader::skipToContentLength(uint64_t &Skipped) {
  static const char Pattern[] = "content-length:";
  const size_t N = sizeof(Pattern) - 1;
  size_t Matched = 0;
  // 'c' occurs in the pattern only at its start, so on a mismatch the
  // match can only restart at the current byte.
  while (Matched < N) {
    int C = In.sbumpc();
    if (C == std::char_traits<char>::eof())
      return false;
    char Lower = llvm::toLower(static_cast<char>(C));
    if (Lower == Pattern[Matched]) {
      ++Matched;
    } else {
      Skipped += Matched + 1;
      Matched = Lower == Pattern[0] ? 1 : 0;
      Skipped -= Matched;
    }
  }
  return true;
}

} // namespace tma::lsp
