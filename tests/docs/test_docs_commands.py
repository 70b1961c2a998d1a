#!/usr/bin/env python3
"""Every command line README.md and docs/ tell a user to type, run.

Documentation rots silently: a renamed flag, a moved install path, a
script that no longer exists. This test reads README.md and docs/**/*.md,
extracts every command a user would copy, and requires each one to be in
COMMANDS (docs_commands_table.py) with what the test does with it:

  Run(...)           run it in a sandbox (see below) and check its exit
                     status, and the output the doc shows next to it;
  Covered(ctest)     another ctest runs it (that test must exist: ctest -N);
  BuiltHere(why)     it builds this repository: the build that runs this
                     test made it (ninja targets it names must exist);
  Synopsis()         a usage line: every option in it must be in --help;
  Lsp()              an editor's server command: started, it must answer
                     initialize and shut down cleanly;
  NotRunnable(why)   cannot run on a CI machine (GitHub-only, needs a GPU,
                     no Bazel in Debian): the reason is the record.

What counts as a command (extraction is strict on purpose: a command the
table does not list fails the test with its file and line, and an entry
whose command is no longer in its doc fails as stale):

  - every logical line (backslash continuations joined) of a fenced block
    marked sh/bash/shell/console;
  - `$ ` lines anywhere (the lines after one, up to the next, are its
    documented output);
  - lines of other fenced or indented blocks whose first word is a
    program (KNOWN_PROGRAMS) or a path to a script or binary;
  - in YAML blocks: `run:` and `entry:` values, `uses:` of this action,
    a pre-commit hook's `args:`; in any block: a CXX_CLANG_TIDY setting;
  - in editor configs (js, lua, elisp, json): the server's argv.

Every repository path a command names (scripts/..., testdata/...,
build/... artefacts, installed /usr/... paths) must exist, and so must
every repository path in the prose's `code` spans.

The sandbox: a temporary user project (a git repository, a CMake project
with src/model.cpp, a model.cpp, the seed, the docs' split_heads.cpp)
whose build/ holds its compile_commands.json and links to this build
tree's module and binary (build/checks/plugin/..., build/driver/...).
The tool is installed into the sandbox with the documented
`cmake --install build --prefix /usr/local` (prefix mapped into the
sandbox), and that install is what `tensor-accountant` on PATH and the
package's /usr/... paths resolve to (package_deb checks that the package
installs the same files). sudo is dropped. The preamble cache is shared
($XDG_CACHE_HOME, in the build tree) so LibTorch is parsed once per flag
set; the samples the clang-tidy commands lint include <ATen/core/Tensor.h>
(a few seconds a parse, there is no cache in clang-tidy) except README's
model.cpp, which includes <torch/torch.h> as its flags promise.

Adding a documented command: add one line to COMMANDS under its doc.

usage: test_docs_commands.py --source DIR --build DIR [--cache-root DIR]
                             [--work-dir DIR] [--static-only] [--keep]
                             [--only REGEX]
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time


from docs_commands_samples import (
    SAMPLE_ATEN,
    SAMPLE_CMAKE,
    SAMPLE_TORCH,
    SKIP_COMPILE,
)
from docs_commands_table import (
    BuiltHere,
    CMAKE_LANGS,
    CODE_LANGS,
    COMMANDS,
    Covered,
    EDITOR_LANGS,
    INSTALL_PATH,
    KNOWN_PROGRAMS,
    KNOWN_PROGRAM_NAMES,
    Lsp,
    NotRunnable,
    PLACEHOLDER_TOOL,
    Run,
    SHELL_LANGS,
    Synopsis,
    YAML_LANGS,
)


# ---------------------------------------------------------------- extraction

class Occurrence:
    """One documented command: text is the table's key, raw what runs."""

    def __init__(self, doc, line, raw, origin):
        self.doc, self.line, self.raw, self.origin = doc, line, raw, origin
        self.text = normalise(raw)
        self.output = []          # documented output lines (`$ ` blocks)
        self.next_block = None    # the doc's next code block's lines
        self.disposition = None

    @property
    def where(self):
        return "%s:%d" % (self.doc, self.line)


def strip_comment(line):
    """The line without a trailing shell comment (quote-aware)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"':
                continue
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def normalise(text):
    return " ".join(text.split())


def logical_lines(lines):
    """(index of first line, text) with backslash continuations joined."""
    out, buf, start = [], None, 0
    for i, l in enumerate(lines):
        if buf is None:
            start, buf = i, ""
        s = l.rstrip()
        if s.endswith("\\"):
            buf += s[:-1] + " "
            continue
        buf += s
        out.append((start, buf))
        buf = None
    if buf is not None:
        out.append((start, buf))
    return out


def first_word(text):
    words = text.split()
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]          # VAR=value before the program
    return words[0] if words else ""


def looks_like_command(text, top_dirs):
    w = first_word(text)
    if not w:
        return False
    if w in KNOWN_PROGRAMS or re.match(KNOWN_PROGRAM_NAMES, w):
        return True
    if w.endswith("/") or ":" in w:
        return False
    if w.startswith("./") or w.endswith((".sh", ".py")):
        return True
    return "/" in w and w.split("/")[0] in top_dirs | {"build", "bench", "scripts"}


def code_blocks(lines):
    """Fenced and indented code blocks: dicts with start (0-based line of
    the first content line), lines, lang, fenced."""
    blocks, i, n = [], 0, len(lines)
    while i < n:
        m = re.match(r"^(\s*)(```+|~~~+)\s*([\w+-]*)", lines[i])
        if m:
            fence, lang, body = m.group(2), m.group(3).lower(), []
            j = i + 1
            while j < n and not re.match(r"^\s*" + re.escape(fence) + r"\s*$", lines[j]):
                body.append(lines[j])
                j += 1
            indent = len(m.group(1))
            body = [b[indent:] if b[:indent].strip() == "" else b for b in body]
            blocks.append(dict(start=i + 1, lines=body, lang=lang, fenced=True))
            i = j + 1
            continue
        if re.match(r"^( {4,}|\t)\S", lines[i]) and (i == 0 or lines[i - 1].strip() == ""):
            j, body = i, []
            while j < n and (lines[j].startswith("    ") or
                             (lines[j].strip() == "" and j + 1 < n and lines[j + 1].startswith("    "))):
                body.append(lines[j])
                j += 1
            indent = min(len(b) - len(b.lstrip()) for b in body if b.strip())
            blocks.append(dict(start=i, lines=[b[indent:] for b in body], lang="", fenced=False))
            i = j
            continue
        i += 1
    return blocks


def yaml_commands(block, doc, errors):
    """run:/entry: values, uses: of this action, a pre-commit hook's args."""
    out, lines = [], block["lines"]
    hook_id = None
    i = 0
    while i < len(lines):
        l = lines[i]
        m = re.match(r"^(\s*)(?:-\s+)?(run|entry|uses|args|id):\s*(.*)$", l)
        if not m:
            i += 1
            continue
        indent, key, value = len(m.group(1)), m.group(2), strip_comment(m.group(3)).strip()
        line_no = block["start"] + i + 1
        if key == "id":
            hook_id = value
        elif key in ("run", "entry") and value in ("|", "|-", ">", ">-"):
            j, body = i + 1, []
            while j < len(lines) and (not lines[j].strip() or
                                      len(lines[j]) - len(lines[j].lstrip()) > indent):
                body.append(lines[j].strip())
                j += 1
            if value.startswith(">"):
                out.append((line_no, " ".join(b for b in body if b), "yaml " + key))
            else:
                for k, b in enumerate(body):
                    if b and not b.startswith("#"):
                        out.append((line_no + 1 + k, b, "yaml " + key))
            i = j
            continue
        elif key in ("run", "entry"):
            out.append((line_no, value, "yaml " + key))
        elif key == "uses" and "tensor-accountant" in value:
            out.append((line_no, "uses: " + value, "yaml uses"))
        elif key == "args":
            fm = re.match(r"^\[(.*)\]$", value)
            if not fm or not hook_id:
                errors.append("%s:%d: a hook's args the test cannot read: %s" % (doc, line_no, value))
            else:
                args = [a.strip().strip("'\"") for a in fm.group(1).split(",") if a.strip()]
                out.append((line_no, " ".join(["pre-commit hook", hook_id] + args), "pre-commit args"))
        i += 1
    return out


def editor_commands(block, doc, errors):
    """The language server's argv in an editor's configuration."""
    text = "\n".join(block["lines"])
    found = []
    for m in re.finditer(r"command:\s*\"([^\"]+)\"\s*,\s*args:\s*\[([^\]]*)\]", text):
        found.append((m.start(), [m.group(1)] + re.findall(r"\"([^\"]*)\"", m.group(2)), m.end()))
    for m in re.finditer(r"\"command\"\s*:\s*\"([^\"]+)\"\s*,\s*\"args\"\s*:\s*\[([^\]]*)\]", text):
        found.append((m.start(), [m.group(1)] + re.findall(r"\"([^\"]*)\"", m.group(2)), m.end()))
    for m in re.finditer(r"\bcmd\s*=\s*\{([^}]*)\}", text):
        found.append((m.start(), re.findall(r"\"([^\"]*)\"", m.group(1)), m.end()))
    for m in re.finditer(r"\((\"tensor-accountant\"(?:\s+\"[^\"]*\")*)\)", text):
        found.append((m.start(), re.findall(r"\"([^\"]*)\"", m.group(1)), m.end()))
    spans = [(s, e) for s, _, e in found]
    # Strict: an option string outside every argv read is a command line
    # this extractor does not understand.
    for m in re.finditer(r"\"(--?[A-Za-z][^\"]*)\"", text):
        if not any(s <= m.start() < e for s, e in spans):
            errors.append("%s:%d: an option %s in a %s block outside any command the test reads" %
                          (doc, block["start"] + text[:m.start()].count("\n") + 1, m.group(1),
                           block["lang"]))
    return [(block["start"] + text[:s].count("\n") + 1, shlex.join(argv), block["lang"] + " argv")
            for s, argv, _ in found]


def extract(src, doc, errors):
    top_dirs = {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))
                and not d.startswith(".")}
    lines = open(os.path.join(src, doc), encoding="utf-8").read().split("\n")
    occurrences = []
    if doc.endswith((".yml", ".yaml")):      # a whole file users copy
        blocks = [dict(start=0, lines=lines, lang="yaml", fenced=False)]
    else:
        blocks = code_blocks(lines)
    for bi, block in enumerate(blocks):
        lang, body, start = block["lang"], block["lines"], block["start"]
        found = []   # (line_no, text, origin, output lines)
        if lang in YAML_LANGS:
            found = [(n, t, o, []) for n, t, o in yaml_commands(block, doc, errors)]
        elif lang in EDITOR_LANGS:
            found = [(n, t, o, []) for n, t, o in editor_commands(block, doc, errors)]
        elif lang in CODE_LANGS or lang in CMAKE_LANGS:
            pass
        elif lang and lang not in SHELL_LANGS:
            errors.append("%s:%d: a ```%s block: the test does not know whether it holds "
                          "commands (add the language to test_docs_commands.py)" % (doc, start, lang))
            continue
        else:
            console = any(l.startswith("$ ") for l in body)
            current = None
            for k, text in logical_lines(body):
                line_no = start + k + 1
                if console:
                    if text.startswith("$ "):
                        current = [line_no, strip_comment(text[2:]), "console", []]
                        found.append(current)
                    elif current is not None:
                        current[3].append(text)
                    continue
                code = strip_comment(text).strip()
                if not code:
                    continue
                if lang in SHELL_LANGS or looks_like_command(code, top_dirs):
                    found.append([line_no, code, "shell" if lang else "indented", []])
        # A CXX_CLANG_TIDY setting anywhere must come out as a command.
        for k, l in enumerate(body):
            if "CXX_CLANG_TIDY" in l and not any(
                    "CXX_CLANG_TIDY" in f[1] for f in found):
                errors.append("%s:%d: a CXX_CLANG_TIDY setting the test does not extract" %
                              (doc, start + k + 1))
        for line_no, text, origin, output in found:
            occ = Occurrence(doc, line_no, text, origin)
            occ.output = output
            if bi + 1 < len(blocks):
                occ.next_block = blocks[bi + 1]["lines"]
            occurrences.append(occ)
    return occurrences


def documents(src):
    """README.md, docs/**/*.md, and the files in docs/ users copy whole
    (docs/**/*.yml: a workflow)."""
    return ["README.md"] + sorted(
        os.path.relpath(p, src) for pattern in ("docs/**/*.md", "docs/**/*.yml")
        for p in glob.glob(os.path.join(src, pattern), recursive=True))


# ---------------------------------------------------------------- static checks

def path_tokens(text):
    """Pieces of a command that may be paths: each shell word, split at
    = and ; (options, CMake lists), less -I/-isystem prefixes."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    for w in words:
        for piece in re.split(r"[=;]", w):
            piece = re.sub(r"^-(isystem|I|L|idirafter)", "", piece)
            if piece:
                yield piece


def check_paths(src, build, occ, errors, install_root=None):
    """Repository and system paths (install_root None), or the package's
    install paths against the sandbox's install (install_root given)."""
    # .git is the user's repository in a documented command, never ours
    # (and a file, not a directory, in a git worktree).
    top = {d for d in os.listdir(src)
           if os.path.isdir(os.path.join(src, d)) and d != ".git"}
    for p in path_tokens(occ.text):
        q = p[2:] if p.startswith("./") else p
        if "<" in q or "$" in q or q.startswith("/path/to/"):
            continue
        first = q.split("/")[0]
        if install_root is not None and not INSTALL_PATH.match(q):
            continue
        if "/" in q and first in top and first != "build":
            if not glob.glob(os.path.join(src, q.rstrip("/"))):
                errors.append("%s: `%s` names %s, which is not in the repository" %
                              (occ.where, occ.text, q))
        elif q.startswith("build/") and re.search(r"tensor-accountant$|TensorAccountant\w*\.so$", q) \
                and not q.startswith("build/package/"):
            if not os.path.exists(os.path.join(build, q[len("build/"):])):
                errors.append("%s: `%s` names %s, which this build tree does not have" %
                              (occ.where, occ.text, q))
        elif q.startswith("/usr/"):
            m = INSTALL_PATH.match(q)
            if m:
                if install_root is None:
                    continue
                if not os.path.exists(os.path.join(install_root, m.group(1))):
                    errors.append("%s: `%s` names %s, which the package does not install "
                                  "(cmake --install puts nothing at %s)" %
                                  (occ.where, occ.text, q, m.group(1)))
            elif not glob.glob(q):
                errors.append("%s: `%s` names %s, which does not exist on this machine" %
                              (occ.where, occ.text, q))
    if install_root is not None:
        return
    # VAR=value before a script: the script must read VAR.
    words = occ.text.split()
    env = []
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        env.append(words.pop(0).split("=")[0])
    if env and words and os.path.isfile(os.path.join(src, words[0])):
        script = open(os.path.join(src, words[0]), encoding="utf-8", errors="replace").read()
        for var in env:
            if not re.search(r"\b%s\b" % re.escape(var), script):
                errors.append("%s: `%s` sets %s, which %s never reads" %
                              (occ.where, occ.text, var, words[0]))


def check_inline_paths(src, doc, errors):
    """Repository paths in the prose's `code` spans (a script to run, a
    test to read) must exist too; build/ outputs are not in the sources."""
    if not doc.endswith(".md"):
        return
    top = {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))
           and not d.startswith(".") and d != "build"}
    lines = open(os.path.join(src, doc), encoding="utf-8").read().split("\n")
    in_block = set()
    for b in code_blocks(lines):
        in_block.update(range(b["start"] - 1, b["start"] + len(b["lines"]) + 1))
    for i, l in enumerate(lines):
        if i in in_block:
            continue
        for m in re.finditer(r"`([^`]+)`", l):
            for w in m.group(1).split():
                w = w.strip("(),;:'\"")
                if "/" not in w or w.split("/")[0] not in top or re.search(r"[<>$*{]", w):
                    continue
                if not os.path.exists(os.path.join(src, w.split("#")[0])):
                    errors.append("%s:%d: `%s` names %s, which is not in the repository" %
                                  (doc, i + 1, m.group(1), w))


def ctest_names(build):
    p = subprocess.run(["ctest", "--test-dir", build, "-N"], capture_output=True, text=True)
    return set(re.findall(r"Test\s+#\d+: (\S+)", p.stdout))


def ninja_targets(build):
    if not os.path.exists(os.path.join(build, "build.ninja")):
        return None
    p = subprocess.run(["ninja", "-C", build, "-t", "targets", "all"],
                       capture_output=True, text=True)
    return {l.split(":")[0] for l in p.stdout.splitlines()}


# ---------------------------------------------------------------- the sandbox

def split_heads_source(src):
    """docs/symbolic.md's split_heads, with the TORCH_CHECK its --assume
    example states (on the first check's line, so line numbers stay)."""
    text = open(os.path.join(src, "docs/symbolic.md"), encoding="utf-8").read()
    m = re.search(r"```cpp\n(#include <torch/torch.h>\n\ntorch::Tensor split_heads\(.*?)```", text, re.S)
    if not m:
        return None
    code = m.group(1)
    first = re.search(r"^  TORCH_CHECK\(.*\);$", code, re.M)
    if not first:
        return None
    return (code[:first.end()] + " TORCH_CHECK(x.scalar_type() == at::kHalf);" +
            code[first.end():])


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if mode:
        os.chmod(path, mode)


class Sandbox:
    MARKER = ".tma-docs-sandbox"

    def __init__(self, src, build, cache_root, keep, work_dir=None):
        self.src, self.build = src, build
        self.keep = keep
        if work_dir:
            # A fixed place (in the build tree), because the preamble cache's
            # key holds the tool's path: the same install path every run
            # keeps the LibTorch parse cached from one run to the next.
            # Only a sandbox this test made is ever removed.
            if os.path.exists(work_dir):
                if not os.path.exists(os.path.join(work_dir, self.MARKER)):
                    sys.exit("FAIL: --work-dir %s exists and is not this test's sandbox" % work_dir)
                shutil.rmtree(work_dir)
            os.makedirs(work_dir)
            self.root = work_dir
        else:
            self.root = tempfile.mkdtemp(prefix="tma-docs-")
        open(os.path.join(self.root, self.MARKER), "w").close()
        self.project = os.path.join(self.root, "project")
        self.tidy_project = os.path.join(self.root, "tidy-project")
        self.install = os.path.join(self.root, "install/usr/local")
        os.makedirs(os.path.join(self.root, "home"))
        self.env = dict(os.environ)
        self.env.update({
            "HOME": os.path.join(self.root, "home"),
            "XDG_CACHE_HOME": cache_root,
            "PATH": os.path.join(self.install, "bin") + os.pathsep + os.environ.get("PATH", ""),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "docs test", "GIT_AUTHOR_EMAIL": "docs@test.invalid",
            "GIT_COMMITTER_NAME": "docs test", "GIT_COMMITTER_EMAIL": "docs@test.invalid",
        })
        self.env.pop("TENSOR_ACCOUNTANT", None)
        self.env.pop("CMAKE_CXX_COMPILER_LAUNCHER", None)

    def sh(self, cmd, cwd, env=None):
        e = dict(self.env)
        e.update(env or {})
        return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", cmd], cwd=cwd, env=e,
                              capture_output=True, text=True, timeout=900)

    def setup(self, install_command, errors):
        p = self.project
        write(os.path.join(p, "CMakeLists.txt"), SAMPLE_CMAKE)
        write(os.path.join(p, "src/model.cpp"), SAMPLE_ATEN)
        write(os.path.join(p, "model.cpp"), SAMPLE_TORCH)
        write(os.path.join(p, "path/to/model.cpp"), SAMPLE_TORCH)
        write(os.path.join(p, "changed.txt"), "src/model.cpp\n")
        split = split_heads_source(self.src)
        if split:
            write(os.path.join(p, "split_heads.cpp"), split)
        else:
            errors.append("docs/symbolic.md: its split_heads example (a ```cpp block starting "
                          "#include <torch/torch.h>, then split_heads with a TORCH_CHECK) is gone: "
                          "the --assume command's split_heads.cpp is made from it")
        os.makedirs(os.path.join(p, "testdata/seed"))
        shutil.copy(os.path.join(self.src, "testdata/seed/blocks.cpp"), os.path.join(p, "testdata/seed"))
        os.makedirs(os.path.join(p, "testdata/training"))
        shutil.copy(os.path.join(self.src, "testdata/training/tutorial.cpp"),
                    os.path.join(p, "testdata/training"))
        shutil.copytree(p, self.tidy_project, ignore=shutil.ignore_patterns("path", "testdata"))
        write(os.path.join(self.root, "skip-compile.sh"), SKIP_COMPILE, 0o755)
        steps = [
            # The install every documented command uses (install.md's command).
            (install_command, self.root),
            ("cmake -S . -B build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON", p),
            ("mkdir -p build/checks/plugin build/driver && "
             "ln -s %s build/checks/plugin/ && ln -s %s build/driver/" % (
                 shlex.quote(os.path.join(self.build, "checks/plugin/libTensorAccountantTidyModule.so")),
                 shlex.quote(os.path.join(self.build, "driver/tensor-accountant"))), p),
            # A repository with a change against origin/main.
            ("printf 'build/\\n' > .gitignore && git init -q -b main . && git add -A && "
             "git commit -q -m sample && git update-ref refs/remotes/origin/main HEAD && "
             "printf '// changed\\n' >> src/model.cpp", p),
        ]
        for cmd, cwd in steps:
            r = self.sh(cmd, cwd)
            if r.returncode != 0:
                sys.exit("FAIL: sandbox setup `%s` exited %d:\n%s%s" %
                         (cmd, r.returncode, r.stdout[-3000:], r.stderr[-3000:]))

    def map_command(self, text, disposition):
        """The documented command as it runs here: install paths into the
        sandbox's install, the placeholder tool path to it, no sudo."""
        cmd = INSTALL_PATH.sub(lambda m: os.path.join(self.install, m.group(1)), text)
        cmd = cmd.replace(PLACEHOLDER_TOOL, os.path.join(self.install, "bin/tensor-accountant"))
        cmd = re.sub(r"(^|&&\s*|;\s*|\|\s*)sudo\s+", r"\1", cmd)
        for a, b in getattr(disposition, "subst", {}).items():
            cmd = cmd.replace(a, b)
        return cmd

    def unmap_output(self, text):
        return text.replace(self.install + "/", "/usr/")

    def close(self):
        if self.keep:
            print("sandbox kept:", self.root)
        else:
            shutil.rmtree(self.root, ignore_errors=True)


def output_regex(doc_line, varies):
    """A documented output line as a regex: whitespace-insensitive, `...`
    any text, the per-build substrings any word, matching the start of a
    printed line (a doc may show a table's first columns only)."""
    parts = re.split(r"(\.\.\.|\s+|%s)" % "|".join(re.escape(v) for v in varies)
                     if varies else r"(\.\.\.|\s+)", doc_line.strip())
    out = []
    for part in parts:
        if not part:
            continue
        if part == "...":
            out.append(".*")
        elif part.isspace():
            out.append(r"\s+")
        elif part in varies:
            out.append(r"\S+")
        else:
            out.append(re.escape(part))
    # A documented row may leave out trailing columns.
    return re.compile(r"^\s*" + "".join(out))


def check_output(occ, shown, actual, varies, errors):
    lines = [l for l in actual.splitlines()]
    for d in shown:
        if not d.strip() or d.strip() == "...":
            continue
        rx = output_regex(d, varies)
        if not any(rx.match(l) for l in lines):
            errors.append("%s: `%s` does not print the documented line\n    %s" %
                          (occ.where, occ.text, d.strip()))


def lsp_handshake(sandbox, argv):
    """Start the server as the editor does and see it answer initialize."""
    def frame(obj):
        body = json.dumps(obj).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body
    root = "file://" + sandbox.project
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": root, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    p = subprocess.run(argv, input=b"".join(frame(m) for m in msgs), cwd=sandbox.project,
                       env=sandbox.env, capture_output=True, timeout=120)
    replies, data = [], p.stdout
    while data:
        m = re.match(rb"Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*?\r\n", data)
        if not m:
            break
        n = int(m.group(1))
        replies.append(json.loads(data[m.end():m.end() + n]))
        data = data[m.end() + n:]
    init = [r for r in replies if r.get("id") == 1]
    ok = (p.returncode == 0 and init and "capabilities" in init[0].get("result", {}) and
          any(r.get("id") == 2 and "error" not in r for r in replies))
    return ok, "exit %d, replies %s, stderr %s" % (p.returncode, json.dumps(replies)[:400],
                                                   p.stderr.decode(errors="replace")[-400:])


def run_one(sandbox, occ, disp, errors, log):
    cwd = {"project": sandbox.project, "tidy-project": sandbox.tidy_project}[disp.cwd]
    env = dict(disp.env)
    if disp.cwd == "tidy-project":
        env["CMAKE_CXX_COMPILER_LAUNCHER"] = os.path.join(sandbox.root, "skip-compile.sh")
    variants = [{}]
    for placeholder, values in disp.expand.items():
        variants = [dict(v, **{placeholder: x}) for v in variants for x in values]
    for variant in variants:
        files = list(disp.files)
        cmd = sandbox.map_command(occ.raw, disp)
        for placeholder, value in variant.items():
            cmd = cmd.replace(placeholder, value)
            files = [f.replace(placeholder, value) for f in files]
        for f in files:
            path = os.path.join(cwd, f)
            if os.path.exists(path):
                os.remove(path)
        started = time.monotonic()
        r = sandbox.sh(cmd, cwd, env)
        log("%s: $ %s  [exit %d, %.1f s]" % (occ.where, cmd, r.returncode, time.monotonic() - started))
        out = sandbox.unmap_output(r.stdout + r.stderr)
        if r.returncode != disp.rc:
            errors.append("%s: `%s` exited %d, not %d:\n%s" %
                          (occ.where, occ.text, r.returncode, disp.rc, out[-4000:]))
            continue
        for rx in disp.expect:
            if not re.search(rx, out, re.M):
                errors.append("%s: `%s` printed nothing matching /%s/:\n%s" %
                              (occ.where, occ.text, rx, out[-3000:]))
        for f in files:
            if not os.path.exists(os.path.join(cwd, f)):
                errors.append("%s: `%s` did not write %s" % (occ.where, occ.text, f))
        shown = occ.output or (occ.next_block if disp.output_next else [])
        if disp.output_next and not shown:
            errors.append("%s: no code block after `%s` to compare its output with" %
                          (occ.where, occ.text))
        # A terminal shows both streams; the docs show what a terminal does.
        check_output(occ, shown, out, disp.varies, errors)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--cache-root", help="$XDG_CACHE_HOME for the runs (shared preamble cache)")
    ap.add_argument("--static-only", action="store_true",
                    help="extract and classify, check paths and ctest names; run nothing")
    ap.add_argument("--keep", action="store_true", help="keep the sandbox")
    ap.add_argument("--work-dir", help="the sandbox's place (default: a temporary directory); "
                    "a fixed one keeps the preamble cache warm across runs")
    ap.add_argument("--only", help="run only commands matching this regex")
    args = ap.parse_args()
    src, build = os.path.abspath(args.source), os.path.abspath(args.build)
    errors = []

    occurrences = []
    for doc in documents(src):
        occurrences += extract(src, doc, errors)

    # Every extracted command is in the table; every table entry is in its doc.
    seen = set()
    for occ in occurrences:
        occ.disposition = COMMANDS.get(occ.doc, {}).get(occ.text)
        if occ.disposition is None:
            errors.append("%s: a documented command the test does not know (%s):\n    %s\n"
                          "  add it to COMMANDS in tests/docs/test_docs_commands.py: Run() it, "
                          "name the ctest that covers it, or say why it cannot run here" %
                          (occ.where, occ.origin, occ.text))
        else:
            seen.add((occ.doc, occ.text))
    for doc, entries in COMMANDS.items():
        for text in entries:
            if (doc, text) not in seen:
                errors.append("%s: stale entry in COMMANDS, the doc no longer has: %s" % (doc, text))

    for doc in documents(src):
        check_inline_paths(src, doc, errors)
    tests = ctest_names(build)
    targets = ninja_targets(build)
    help_text = subprocess.run([os.path.join(build, "driver/tensor-accountant"), "--help"],
                               capture_output=True, text=True).stdout
    for occ in occurrences:
        d = occ.disposition
        check_paths(src, build, occ, errors)
        if isinstance(d, Covered) and d.ctest not in tests:
            errors.append("%s: `%s` is said to be covered by ctest %s, which does not exist" %
                          (occ.where, occ.text, d.ctest))
        if isinstance(d, BuiltHere) and targets is not None:
            m = re.match(r"^ninja -C build (.+)$", occ.text)
            for t in (m.group(1).split() if m else []):
                if t not in targets:
                    errors.append("%s: `%s` names target %s, which this build does not have" %
                                  (occ.where, occ.text, t))
        if isinstance(d, Synopsis):
            for opt in re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", occ.text):
                if not re.search(r"(^|\s)%s(\b|=|\s)" % re.escape(opt), help_text, re.M):
                    errors.append("%s: the synopsis `%s` names %s, which --help does not list" %
                                  (occ.where, occ.text, opt))
    counts = {}
    for occ in occurrences:
        if occ.disposition:
            k = type(occ.disposition).__name__
            counts[k] = counts.get(k, 0) + 1
    print("%d documented commands in %d docs: %s" % (
        len(occurrences), len({o.doc for o in occurrences}),
        ", ".join("%s %d" % kv for kv in sorted(counts.items()))))

    if not args.static_only:
        install_occ = [o for o in occurrences if o.doc == "docs/install.md" and
                       o.text == "sudo cmake --install build --prefix /usr/local"]
        sandbox = Sandbox(src, build, os.path.abspath(args.cache_root or
                                                      os.path.join(build, "tests/docs/cache")),
                          args.keep, args.work_dir and os.path.abspath(args.work_dir))
        try:
            if not install_occ:
                errors.append("docs/install.md: no `sudo cmake --install build --prefix /usr/local` "
                              "to install the sandbox with")
                install_cmd = "cmake --install %s --prefix /usr/local" % shlex.quote(build)
            else:
                install_cmd = install_occ[0].text
            install_cmd = re.sub(r"^sudo\s+", "", install_cmd)
            install_cmd = install_cmd.replace(" build ", " %s " % shlex.quote(build)).replace(
                "/usr/local", shlex.quote(sandbox.install))
            print("sandbox:", sandbox.root, "\n$", install_cmd, flush=True)
            sandbox.setup(install_cmd, errors)
            for occ in occurrences:
                check_paths(src, build, occ, errors, install_root=sandbox.install)
            for occ in occurrences:
                d = occ.disposition
                if args.only and not re.search(args.only, occ.text):
                    continue
                if isinstance(d, Run):
                    run_one(sandbox, occ, d, errors, lambda s: print(s, flush=True))
                elif isinstance(d, Lsp):
                    argv = shlex.split(occ.text)
                    argv[0] = shutil.which(argv[0], path=sandbox.env["PATH"]) or argv[0]
                    print("%s: lsp %s" % (occ.where, occ.text), flush=True)
                    ok, why = lsp_handshake(sandbox, argv)
                    if not ok:
                        errors.append("%s: the editor's server command `%s` did not answer "
                                      "initialize and shut down: %s" % (occ.where, occ.text, why))
        finally:
            sandbox.close()

    for e in errors:
        print("FAIL:", e)
    if errors:
        print("%d problem(s)" % len(errors))
        return 1
    print("ok: every documented command is run, covered by a named ctest, or says why not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
