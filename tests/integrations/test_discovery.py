#!/usr/bin/env python3
"""Compile database discovery (issue 33): without -p, a file's
compile_commands.json is found above it (in a directory on the way up, or
in its build/ subdirectory), as clang-tidy and clangd find it, by the CLI,
by both hooks and by the language server.

The project: proj/build/compile_commands.json lists proj/src/main.cpp
only, with -I proj/include and -DMODEL_COLS=32; proj/src/model.cpp
needs both (its header gives 64 rows; without MODEL_COLS it is an #error),
so only its database's (interpolated) command analyses it, and the
finding's "8 KiB" (64 x 32 floats) says which flags were used.

1. CLI from proj/src, no -p: the finding; --analysis-stats names the
   database. From proj with src/model.cpp: the same. Without the
   database: the file does not compile. Flags after -- win ("16 KiB").
2. A database that is not valid JSON, or lists nothing: exit 2 with a
   message naming it, nothing analysed with other flags.
3. A file with no database above it gets the default flags (C++17 and
   LibTorch); a compile_commands.json two directories up (not in build/)
   is found too.
4. The plain git hook, with no tensor-accountant.buildDir, and the
   pre-commit framework's hook script, run from the repository root:
   both print the finding made with the project's flags.
5. The language server started in proj/src, no -p: the finding; a file
   with no database: the default; a broken database: one error
   diagnostic naming it, the server goes on; a database written while
   the server runs is used from the next analysis. `-p build` from proj/src
   (where there is no build/) is resolved against the workspace root;
   `-p no-such-dir` is logged, not fatal, and discovery is used.

usage: test_discovery.py <tensor-accountant> <source dir>
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client  # noqa: E402

TOOL, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


tmp = os.path.realpath(tempfile.mkdtemp(prefix="tma-discovery-"))
CACHE = os.path.join(tmp, "cache")
proj = os.path.join(tmp, "proj")
src = os.path.join(proj, "src")
for d in ("src", "include", "build"):
    os.makedirs(os.path.join(proj, d))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


write(os.path.join(proj, "include/sizes.h"), "#pragma once\nconstexpr long kRows = 64;\n")
MODEL = """#include <torch/torch.h>
#include "sizes.h"
#ifndef MODEL_COLS
#error "MODEL_COLS comes from the build's compile command"
#endif
void f() {
  auto x = torch::randn({kRows, MODEL_COLS});
  auto a = x.transpose(0, 1);
  auto b = a.contiguous();
}
"""
model = write(os.path.join(src, "model.cpp"), MODEL)
write(os.path.join(src, "main.cpp"), "int main() { return 0; }\n")
DB = os.path.join(proj, "build/compile_commands.json")
DB_TEXT = json.dumps([{
    "directory": os.path.join(proj, "build"),
    "file": os.path.join(src, "main.cpp"),
    "arguments": ["c++", "-std=c++17", "-I" + os.path.join(proj, "include"),
                  "-DMODEL_COLS=32", "-c", os.path.join(src, "main.cpp")]}])
write(DB, DB_TEXT)
FINDING = "model.cpp:9:14: warning: contiguous() copies 8 KiB"


def run(args, cwd):
    p = subprocess.run([TOOL, "--cache-dir", CACHE] + args, cwd=cwd,
                       capture_output=True, text=True, timeout=900)
    check(p.returncode >= 0 and "Stack dump" not in p.stderr,
          "no crash: %s\n%s" % (args, p.stderr))
    return p


# 1. The CLI.
p = run(["--analysis-stats", "model.cpp"], src)
check(p.returncode == 0 and FINDING in p.stdout,
      "from a subdirectory, no -p: the database's flags are used:\n%s%s"
      % (p.stdout, p.stderr))
check("compile commands for 1 file from '%s'" % DB in p.stderr,
      "--analysis-stats names the database:\n" + p.stderr)
p = run(["src/model.cpp"], proj)
check(p.returncode == 0 and "src/" + FINDING in p.stdout,
      "from the project root: the same:\n%s%s" % (p.stdout, p.stderr))
p = run(["model.cpp", "--", "-std=c++17", "-I../include", "-DMODEL_COLS=64"], src)
check(p.returncode == 0 and "contiguous() copies 16 KiB" in p.stdout,
      "flags after -- win over the database:\n%s%s" % (p.stdout, p.stderr))
os.rename(DB, DB + ".away")
p = run(["model.cpp"], src)
check(p.returncode == 1 and "did not compile" in p.stderr and FINDING not in p.stdout,
      "without the database the file does not compile (the test needs it):\n"
      "%s%s" % (p.stdout, p.stderr))

# 2. A database that is not valid: an error, never other flags.
for text, needle in (("{ not json", "is not a valid compilation database"),
                     ("[]", "(it lists no files)")):
    write(DB, text)
    p = run(["model.cpp"], src)
    check(p.returncode == 2 and needle in p.stderr and DB in p.stderr and
          p.stdout == "", "database %r: exit 2 naming it:\n%s%s"
          % (text, p.stdout, p.stderr))
os.remove(DB)
os.rename(DB + ".away", DB)

# 3. No database above: the default flags; one two levels up is found.
plain_dir = os.path.join(tmp, "plain")
os.makedirs(plain_dir)
PLAIN = MODEL.replace('#include "sizes.h"\n', "").replace(
    "#ifndef MODEL_COLS\n#error \"MODEL_COLS comes from the build's compile command\"\n#endif\n",
    "").replace("{kRows, MODEL_COLS}", "{64, 32}")
plain = write(os.path.join(plain_dir, "plain.cpp"), PLAIN)
p = run(["--analysis-stats", "plain.cpp"], plain_dir)
check(p.returncode == 0 and "plain.cpp:5:14: warning: contiguous() copies 8 KiB" in p.stdout,
      "no database above: the default flags:\n%s%s" % (p.stdout, p.stderr))
check("from the default flags" in p.stderr, "--analysis-stats says the default:\n" + p.stderr)
up = os.path.join(tmp, "up")
os.makedirs(os.path.join(up, "a/b"))
write(os.path.join(up, "a/b/model.cpp"), MODEL)
write(os.path.join(up, "compile_commands.json"), json.dumps([{
    "directory": up, "file": os.path.join(up, "main.cpp"),
    "arguments": ["c++", "-std=c++17", "-I" + os.path.join(proj, "include"),
                  "-DMODEL_COLS=16", "-c", os.path.join(up, "main.cpp")]}]))
p = run(["model.cpp"], os.path.join(up, "a/b"))
check(p.returncode == 0 and "contiguous() copies 4 KiB" in p.stdout,
      "a compile_commands.json two directories up:\n%s%s" % (p.stdout, p.stderr))

# 4. The hooks, with no build directory configured.
env = dict(os.environ, TENSOR_ACCOUNTANT=TOOL,
           GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
           GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org",
           GIT_CONFIG_NOSYSTEM="1", HOME=tmp)


def git(*args):
    return subprocess.run(["git"] + list(args), cwd=proj, env=env,
                          capture_output=True, text=True, timeout=900)


git("init", "-q")
git("config", "tensor-accountant.args", "--cache-dir " + CACHE)
hook = os.path.join(proj, ".git/hooks/pre-commit")
shutil.copy(os.path.join(SRC, "integrations/git-hooks/pre-commit"), hook)
os.chmod(hook, 0o755)
git("add", "src/model.cpp")
p = git("commit", "-m", "model")
check(p.returncode != 0 and "src/" + FINDING in p.stdout + p.stderr,
      "the git hook uses the project's database without buildDir:\n%s%s"
      % (p.stdout, p.stderr))
p = subprocess.run(["bash", os.path.join(SRC, "integrations/pre-commit/tensor-accountant-hook"),
                    "--cache-dir", CACHE, "src/model.cpp"],
                   cwd=proj, env=env, capture_output=True, text=True, timeout=900)
check(p.returncode == 1 and "src/" + FINDING in p.stdout,
      "the pre-commit framework's hook uses the project's database:\n%s%s"
      % (p.stdout, p.stderr))

# 5. The language server, started in a subdirectory.
def codes(params):
    return [(d.get("code"), d["message"]) for d in params["diagnostics"]]


c = Client(TOOL, ["--cache-dir", CACHE], src, check)
c.initialize(proj)
c.open(model, MODEL)
got = c.published("file://" + model, "diagnostics for model.cpp")
check(any(code == "torch-contiguous-copy" and "8 KiB" in msg for code, msg in codes(got)),
      "lsp from a subdirectory, no -p: the database's flags: %s" % codes(got))
check(any("with compile commands from " + DB in line for line in c.log_lines()),
      "the server's log names the database: %s" % c.log_lines())
c.open(plain, PLAIN)
got = c.published("file://" + plain, "diagnostics for plain.cpp")
check(any(code == "torch-contiguous-copy" and "8 KiB" in msg for code, msg in codes(got)),
      "lsp, no database above: the default flags: %s" % codes(got))
broken = os.path.join(tmp, "broken")
os.makedirs(os.path.join(broken, "build"))
write(os.path.join(broken, "build/compile_commands.json"), "{ not json")
bfile = write(os.path.join(broken, "b.cpp"), PLAIN)
c.open(bfile, PLAIN)
got = c.published("file://" + bfile, "diagnostics for a broken database")
check(len(got["diagnostics"]) == 1 and got["diagnostics"][0]["severity"] == 1 and
      "is not a valid compilation database" in got["diagnostics"][0]["message"],
      "lsp, broken database: one error naming it: %s" % codes(got))
# A build configured after the server started: used from the next analysis.
late = os.path.join(tmp, "late")
os.makedirs(os.path.join(late, "src"))
lfile = write(os.path.join(late, "src/model.cpp"), MODEL)
c.open(lfile, MODEL)
got = c.published("file://" + lfile, "diagnostics before the build is configured")
check(len(got["diagnostics"]) == 1 and "did not compile" in got["diagnostics"][0]["message"],
      "lsp, no database yet: the default flags, which do not compile it: %s" % codes(got))
os.makedirs(os.path.join(late, "build"))
write(os.path.join(late, "build/compile_commands.json"), DB_TEXT)
c.notify("textDocument/didSave", {"textDocument": {"uri": "file://" + lfile}})
got = c.published("file://" + lfile, "diagnostics after the build is configured")
check(any(code == "torch-contiguous-copy" and "8 KiB" in msg for code, msg in codes(got)),
      "lsp: a database made after the server started is found: %s" % codes(got))
check(c.finish() == 0, "lsp exits 0 after shutdown")

c = Client(TOOL, ["--cache-dir", CACHE, "-p", "build"], src, check)
c.initialize(proj)
c.open(model, MODEL)
got = c.published("file://" + model, "diagnostics with -p build")
check(any(code == "torch-contiguous-copy" and "8 KiB" in msg for code, msg in codes(got)),
      "lsp -p build from a subdirectory: resolved against the root: %s" % codes(got))
check(c.finish() == 0, "lsp -p build exits 0")

c = Client(TOOL, ["--cache-dir", CACHE, "-p", "no-such-dir"], src, check)
r = c.initialize(proj)
check(r is not None and "result" in r, "-p no-such-dir: the server starts")
warn = c.wait(lambda m: m.get("method") == "window/showMessage", "the -p warning")
check(warn and warn["params"]["type"] == 2 and "no-such-dir" in warn["params"]["message"],
      "-p no-such-dir: a warning shown: %s" % warn)
c.open(model, MODEL)
got = c.published("file://" + model, "diagnostics with a missing -p")
check(any(code == "torch-contiguous-copy" and "8 KiB" in msg for code, msg in codes(got)),
      "lsp, -p missing: discovery is used: %s" % codes(got))
check(c.finish() == 0, "lsp -p no-such-dir exits 0")

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: discovery")
