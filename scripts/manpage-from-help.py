#!/usr/bin/env python3
"""Writes tensor-accountant's man page, gzipped, from its --help.

usage: manpage-from-help.py <tensor-accountant> <version.txt> <out.1.gz>

The options and their descriptions are documented once, in cli/Options.cpp;
this script only typesets what `--help` prints (LLVM's option layout):

    OVERVIEW: <one line>              -> NAME and the start of DESCRIPTION
    USAGE: ...                        (replaced by USAGE FORMS)
    <Category>:                       -> OPTIONS, one .TP per option
      --name=<value>   - description
        =choice        -   what the choice means
    USAGE FORMS:                      -> SYNOPSIS (the command lines) and
      tensor-accountant ...              DESCRIPTION (the paragraphs after)
    EXIT STATUS: / ENVIRONMENT: / SEE ALSO: ...
                                      -> sections of the same name; a line
      <term>  <text>                     "  term  text" becomes a .TP entry

The gzip stream has no timestamp or file name, so rebuilding the same
binary gives a byte-identical page (and package).
"""
import gzip
import re
import subprocess
import sys

PROGRAM = "tensor-accountant"


def roff(text):
    """Escapes text for roff: backslashes, hyphens (so options copy-paste as
    ASCII '-'), and a leading '.' or "'" that would read as a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text[:1] in (".", "'"):
        text = "\\&" + text
    return text


def option_entries(lines):
    """(term, description, [(choice, description)]) for each option line."""
    entries = []
    for line in lines:
        m = re.match(r"^    =(\S*)\s+-\s+(.*)$", line)
        if m and entries:
            entries[-1][2].append((m.group(1), m.group(2)))
            continue
        m = re.match(r"^  (-\S.*?)\s+- (.*)$", line)
        if m:
            entries.append((m.group(1), m.group(2), []))
    return entries


def split_sections(text):
    """[(heading, [lines])] in order; the text before the first heading is
    under ''. A heading is an unindented line ending in ':'."""
    sections = [("", [])]
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z][A-Za-z -]*):(?:\s(.*))?$", line)
        if m and not line.startswith(" "):
            sections.append((m.group(1), [m.group(2)] if m.group(2) else []))
        else:
            sections[-1][1].append(line)
    return sections


def paragraphs(lines):
    """Blank-line separated paragraphs, each joined into one string."""
    out, cur = [], []
    for line in lines + [""]:
        if line.strip():
            cur.append(line.strip())
        elif cur:
            out.append(" ".join(cur))
            cur = []
    return out


def term_entries(lines):
    """'  term  text' lines (two spaces inside) with their indented
    continuation lines, as .TP entries; other paragraphs stay text."""
    out, after_blank = [], True
    for line in lines:
        m = re.match(r"^  (\S(?:.*?\S)?)\s{2,}(\S.*)$", line)
        if not line.strip():
            after_blank = True
            continue
        if m and not line.startswith("   "):
            out.append([m.group(1), m.group(2)])
        elif out and not after_blank and (line.startswith("   ") or
                                          out[-1][0] is None):
            out[-1][1] += " " + line.strip()
        else:
            out.append([None, line.strip()])
        after_blank = False
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[2])
    binary, version_file, output = sys.argv[1:]
    with open(version_file) as f:
        version = f.read().strip()
    help_text = subprocess.run([binary, "--help"], check=True,
                               capture_output=True, text=True,
                               timeout=60).stdout
    sections = split_sections(help_text)
    named = {h: lines for h, lines in sections}
    overview = " ".join(named.get("OVERVIEW", [])).strip()
    summary = re.sub(r"^Tensor Memory Accountant:\s*", "", overview).rstrip(".")
    if not summary or "USAGE FORMS" not in named:
        sys.exit("manpage-from-help.py: '%s --help' has no OVERVIEW or no "
                 "USAGE FORMS section" % binary)

    out = []
    out.append('.TH TENSOR\\-ACCOUNTANT 1 "" "%s %s" "User Commands"'
               % (PROGRAM, roff(version)))
    out.append(".SH NAME")
    out.append("%s \\- %s" % (PROGRAM, roff(summary)))

    usage_lines = named["USAGE FORMS"]
    synopsis = [l.strip() for l in usage_lines
                if l.strip().startswith(PROGRAM + " ")]
    out.append(".SH SYNOPSIS")
    for i, line in enumerate(synopsis):
        if i:
            out.append(".br")
        words = line.split(" ", 1)
        out.append(".B %s" % words[0])
        if len(words) > 1:
            out.append(roff(words[1]))
    out.append(".SH DESCRIPTION")
    out.append(roff(overview))
    rest = [l for l in usage_lines if l.strip() not in synopsis]
    for para in paragraphs(rest):
        out.append(".PP")
        out.append(roff(para))

    out.append(".SH OPTIONS")
    for heading, lines in sections:
        entries = option_entries(lines)
        if not entries:
            continue
        out.append(".SS %s" % roff(heading))
        for term, desc, choices in entries:
            out.append(".TP")
            out.append("\\fB%s\\fR" % roff(term))
            out.append(roff(desc))
            for choice, choice_desc in choices:
                out.append(".RS")
                out.append(".TP")
                out.append("\\fB=%s\\fR" % roff(choice or "<empty>"))
                out.append(roff(choice_desc))
                out.append(".RE")

    skip = {"", "OVERVIEW", "USAGE", "OPTIONS", "USAGE FORMS"}
    for heading, lines in sections:
        if heading in skip or option_entries(lines):
            continue
        out.append(".SH %s" % roff(heading.upper()))
        for term, text in term_entries(lines):
            if term is None:
                out.append(".PP")
            else:
                out.append(".TP")
                out.append("\\fB%s\\fR" % roff(term))
            out.append(roff(text))

    page = "\n".join(out) + "\n"
    with open(output, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                           compresslevel=9) as z:
            z.write(page.encode())


if __name__ == "__main__":
    main()
