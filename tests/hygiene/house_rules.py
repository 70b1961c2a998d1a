#!/usr/bin/env python3
"""The house rules of issue 34, checked over the tracked sources (ctest
house_rules):

  (a) lines     no source file (C++, Python, CMake, shell) over 800 lines;
                testdata/ (test inputs, golden snapshots) is not source.
  (b) members   no C++ class or struct of the project with more than 60
                member functions.
  (c) literal   no string literal in frontend/, checks/ or the driver rooms
                (driver/, cli/, lsp/, report/, tidy/) equal to an op name or
                alias of model/ops/OpTable.def or a layer name: op and layer
                identity lives in the registries.

Design:
1. Every violation is printed (file, line, what), so the state of the tree
   is visible in one run: `python3 tests/hygiene/house_rules.py`.
2. tests/hygiene/known-violations.txt lists the violations left by work in
   progress, one per line ("lines: PATH", "members: CLASS", "literal: PATH
   \"NAME\"", one line per occurrence). The test passes only when what it
   finds is exactly that list: a new violation fails, and so does a listed
   one that is fixed (remove its line). --write-known rewrites the list.
3. tests/hygiene/not-op-names.txt exempts literals that are not names of
   ops or layers but spell one ("div" an HTML element, "cpu" a --verify
   value): "FILE-NAME \"LITERAL\" reason", by file name (not path, so a file
   moved between rooms keeps its exemption). An exemption nothing uses
   fails the test.

Limits of the scanners (regular expressions and brace depth, no parser):
- (b) counts, in each class body, the declarations and inline definitions
  whose text before the first '(' ends in a name or an operator, without
  '=' (a data member's initialiser) and not `friend`, `using`, `typedef`
  or `= delete`; constructors and destructors count. Members a macro
  declares are not seen; a class name defined twice (in two files) is
  counted per definition, and out-of-line definitions `Class::name(` of an
  undeclared name are added only to a class name defined once.
- (c) sees string literals after comments are removed; raw strings
  (R"(...)") are read as ordinary literals; a name built by concatenation
  is not seen.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

MAX_LINES = 800
MAX_MEMBERS = 60
SOURCE_EXT = (".cpp", ".h", ".hpp", ".cc", ".def", ".inc", ".py", ".cmake", ".sh")
LITERAL_ROOMS = ("frontend/", "checks/", "driver/", "cli/", "lsp/", "report/", "tidy/")
CXX_EXT = (".cpp", ".h", ".hpp", ".cc", ".def", ".inc")
HERE = os.path.dirname(os.path.abspath(__file__))
KNOWN = os.path.join(HERE, "known-violations.txt")
NOT_NAMES = os.path.join(HERE, "not-op-names.txt")
NN_MODULES = "/usr/include/torch/csrc/api/include/torch/nn/modules"


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=True).stdout
        files = [f for f in out.decode("utf-8").split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for dirpath, dirnames, names in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "build"]
            files += [os.path.relpath(os.path.join(dirpath, n), root) for n in names]
    return sorted(f for f in files if os.path.isfile(os.path.join(root, f)))


def is_source(root, rel):
    if rel.startswith("testdata/"):
        return False
    name = os.path.basename(rel)
    if name == "CMakeLists.txt" or rel.endswith(SOURCE_EXT):
        return True
    # A script without an extension (scripts/add-check): by its #! line.
    if "." not in name:
        try:
            with open(os.path.join(root, rel), "rb") as f:
                first = f.readline()
        except OSError:
            return False
        return first.startswith(b"#!") and (b"python" in first or b"sh" in first)
    return False


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        return f.read()


# ---- C++ text: comments out, literals kept or blanked ------------------------------

LEXEME = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\((?:.|\n)*?\)\1"|"(?:[^"\\\n]|\\.)*"|'
                    r"'(?:[^'\\\n]|\\.)*'", re.S)


def strip_comments(text):
    """Comments become spaces (newlines kept, so lines still count)."""
    def repl(m):
        s = m.group(0)
        return s if s[0] in "\"'R" else re.sub(r"[^\n]", " ", s)
    return LEXEME.sub(repl, text)


def blank_literals(text):
    """Comments and literals become spaces: what is left is code."""
    return LEXEME.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def string_literals(text):
    """(line, value) of each string literal outside comments."""
    out = []
    for m in LEXEME.finditer(text):
        s = m.group(0)
        if s.startswith('"'):
            out.append((text.count("\n", 0, m.start()) + 1, s[1:-1]))
        elif s.startswith('R"'):
            body = s[2:]
            delim = body[:body.index("(")]
            out.append((text.count("\n", 0, m.start()) + 1,
                        body[len(delim) + 1:len(body) - len(delim) - 2]))
    return out


# ---- (a) lines -----------------------------------------------------------------------

def long_files(root, files):
    found = []
    for rel in files:
        if is_source(root, rel):
            n = read(root, rel).count("\n")
            if n > MAX_LINES:
                found.append((rel, n))
    return found


# ---- (b) member functions ------------------------------------------------------------

CLASS_HEAD = re.compile(r"(?:^|[^\w])(?:class|struct)\s+(?:alignas\s*\([^)]*\)\s*)?"
                        r"(\w+)(?:\s+final)?\s*(?::[^{;]*)?$", re.S)
NOT_MEMBER = re.compile(r"^\s*(friend|using|typedef|static_assert|enum|class|struct|"
                        r"template\s*<[^>]*>\s*(friend|class|struct|using))\b")
OUT_OF_LINE = re.compile(r"\b(\w+)\s*::\s*(~?\w+|operator\s*[^\s(]+)\s*\($")


def declares_function(head):
    """Whether a member declaration's text (up to ';' or '{') declares a
    member function."""
    head = re.sub(r"\b(public|private|protected)\s*:", " ", head).strip()
    head = re.sub(r"^template\s*<.*?>\s*", "", head, flags=re.S)
    if not head or NOT_MEMBER.match(head) or "(" not in head:
        return False
    before = head[:head.index("(")]
    if "=" in before and "operator" not in before:
        return False
    if re.search(r"=\s*delete\s*$", head):
        return False
    return re.search(r"(\b\w+|operator\s*\S+|~\s*\w+)\s*$", before) is not None


def class_members(rel, code):
    """[(class name, declared function names, line)] for each class body,
    and [(class, name)] for out-of-line definitions at namespace scope."""
    classes, out_of_line = [], []
    stack = []  # each: ["class", name, names] or ["other"] or ["ns"]
    head_start = 0
    i, n = 0, len(code)
    paren = 0
    while i < n:
        c = code[i]
        if c == "(":
            paren += 1
        elif c == ")":
            paren = max(paren - 1, 0)
        elif c in ";{}" and paren == 0:
            head = code[head_start:i]
            top = stack[-1] if stack else ["ns"]
            if c == "{":
                m = CLASS_HEAD.search(head)
                if m and not re.search(r"\benum\s+(class|struct)\s+\w+", head) and "(" not in head:
                    stack.append(["class", m.group(1), [], code.count("\n", 0, i) + 1])
                elif top[0] == "class" and declares_function(head):
                    top[2].append(head)
                    stack.append(["other"])
                elif top[0] == "ns" and re.search(r"\bnamespace\b[\w:\s]*$|extern\s*\"C\"\s*$", head):
                    stack.append(["ns"])
                elif top[0] == "ns":
                    flat = head.split("(")[0] + "("
                    m = OUT_OF_LINE.search(flat.strip())
                    if m:
                        out_of_line.append((m.group(1), re.sub(r"\s+", "", m.group(2))))
                    stack.append(["other"])
                else:
                    stack.append(["other"])
            elif c == "}":
                if stack:
                    done = stack.pop()
                    if done[0] == "class":
                        classes.append((done[1], done[2], done[3]))
            elif c == ";" and top[0] == "class" and declares_function(head):
                top[2].append(head)
            head_start = i + 1
        i += 1

    def name_of(head):
        before = head[:head.index("(")]
        m = re.search(r"(operator\s*\S+|~\s*\w+|\w+)\s*$", before)
        return re.sub(r"\s+", "", m.group(1)) if m else "?"
    return ([(name, [name_of(h) for h in heads], line) for name, heads, line in classes],
            out_of_line)


def big_classes(root, files):
    bodies, outside = [], []
    for rel in files:
        if rel.endswith(CXX_EXT) and not rel.startswith("testdata/") and is_source(root, rel):
            found, defs = class_members(rel, blank_literals(read(root, rel)))
            bodies += [(rel, name, names, line) for name, names, line in found]
            outside += defs
    defined = collections.Counter(name for _, name, _, _ in bodies)
    result = []
    for rel, name, names, line in bodies:
        count = len(names)
        if defined[name] == 1:
            declared = set(names)
            count += len({m for c, m in outside if c == name and m not in declared})
        if count > MAX_MEMBERS:
            result.append((rel, line, name, count))
    return result


# ---- (c) op and layer names as literals ------------------------------------------

def op_names(root):
    text = strip_comments(read(root, "model/ops/OpTable.def"))
    names = set()
    for m in re.finditer(r'TMA_OP\(\s*\w+\s*,\s*\w+\s*,\s*\w+\s*,\s*[\w\s|]+,\s*"([^"]*)"\s*,\s*"([^"]*)"',
                         text):
        names.add(m.group(1))
        names.update(a.strip() for a in m.group(2).split(",") if a.strip())
    if not names:
        sys.exit("house_rules: no TMA_OP entry read from model/ops/OpTable.def")
    return names


def layer_names(root):
    """The layer table's names (model/modules/*.def: the first string of
    each entry) when there is one, and the torch::nn holders LibTorch
    declares (TORCH_MODULE(Name), or a class deriving ModuleHolder), which
    are the layers users write."""
    names = set()
    modules = os.path.join(root, "model", "modules")
    if os.path.isdir(modules):
        for entry in sorted(os.listdir(modules)):
            if entry.endswith(".def"):
                text = strip_comments(read(root, "model/modules/" + entry))
                names.update(re.findall(r'^\s*[A-Z_]+\(\s*\w+\s*,\s*"([A-Z]\w*)"', text, re.M))
    if os.path.isdir(NN_MODULES):
        for dirpath, _, files in os.walk(NN_MODULES):
            for f in files:
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as h:
                    text = strip_comments(h.read())
                names.update(re.findall(r"\bTORCH_MODULE\((\w+)\)", text))
                # Holders written out (Sequential, ModuleList, ModuleDict).
                names.update(re.findall(
                    r"\bclass\s+(\w+)\s*:\s*public\s+(?:torch::nn::)?ModuleHolder<", text))
    return names


def read_not_names():
    """{(file name, literal): reason}"""
    out = {}
    if os.path.exists(NOT_NAMES):
        with open(NOT_NAMES, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                m = re.match(r'^(\S+)\s+"([^"]*)"\s+(.+)$', line)
                if not m:
                    sys.exit("house_rules: %s: cannot read %r (FILE-NAME \"LITERAL\" reason)"
                             % (NOT_NAMES, line))
                out[(m.group(1), m.group(2))] = m.group(3)
    return out


def name_literals(root, files, names, not_names):
    found, used = [], set()
    for rel in files:
        if not rel.startswith(LITERAL_ROOMS) or not rel.endswith(CXX_EXT):
            continue
        for line, value in string_literals(read(root, rel)):
            if value in names:
                key = (os.path.basename(rel), value)
                if key in not_names:
                    used.add(key)
                else:
                    found.append((rel, line, value))
    return found, used


# ---- the comparison with the known list ----------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source-root", default=os.path.dirname(os.path.dirname(HERE)))
    parser.add_argument("--write-known", action="store_true",
                        help="rewrite known-violations.txt with what is found now")
    opts = parser.parse_args()
    root = os.path.realpath(opts.source_root)
    files = tracked_files(root)

    found = []  # (key, shown)
    for rel, n in long_files(root, files):
        found.append(("lines: %s" % rel, "%s: %d lines (at most %d)" % (rel, n, MAX_LINES)))
    for rel, line, name, count in big_classes(root, files):
        found.append(("members: %s" % name, "%s:%d: class %s has %d member functions (at most %d)"
                      % (rel, line, name, count, MAX_MEMBERS)))
    names = op_names(root) | layer_names(root)
    not_names = read_not_names()
    literals, used = name_literals(root, files, names, not_names)
    for rel, line, value in literals:
        found.append(('literal: %s "%s"' % (rel, value),
                      '%s:%d: "%s" is an op or layer name as a string literal (ask the '
                      'registry: op identity, tags, the layer table)' % (rel, line, value)))

    print("house rules: %d violation(s) in %d tracked files" % (len(found), len(files)))
    for _, shown in found:
        print("  " + shown)

    if opts.write_known:
        with open(KNOWN, "w", encoding="utf-8") as f:
            f.write("# Violations of the house rules (tests/hygiene/house_rules.py) left by\n"
                    "# work in progress; the test fails unless this is exactly what it finds.\n"
                    "# Remove a line when its violation is fixed.\n")
            for key in sorted(k for k, _ in found):
                f.write(key + "\n")
        print("wrote %s (%d lines)" % (os.path.relpath(KNOWN, root), len(found)))
        return 0

    known = collections.Counter()
    if os.path.exists(KNOWN):
        with open(KNOWN, encoding="utf-8") as f:
            known.update(l.strip() for l in f if l.strip() and not l.startswith("#"))
    now = collections.Counter(k for k, _ in found)
    new, fixed = now - known, known - now
    stale_exemptions = sorted(set(not_names) - used)
    ok = True
    if new:
        ok = False
        print("\nNEW violations (fix them; work in progress may list them in %s):"
              % os.path.relpath(KNOWN, root))
        for key, count in sorted(new.items()):
            print("  %s%s" % (key, "" if count == 1 else "  (x%d)" % count))
    if fixed:
        ok = False
        print("\nFIXED, so remove from %s:" % os.path.relpath(KNOWN, root))
        for key, count in sorted(fixed.items()):
            print("  %s%s" % (key, "" if count == 1 else "  (x%d)" % count))
    if stale_exemptions:
        ok = False
        print("\nexemptions in %s that no literal uses (remove them):"
              % os.path.relpath(NOT_NAMES, root))
        for f, v in stale_exemptions:
            print('  %s "%s"' % (f, v))
    if ok:
        print("\nexactly the %d known violation(s) (%s); %d literal(s) exempt as not names"
              % (sum(known.values()), os.path.relpath(KNOWN, root), len(used)))
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
