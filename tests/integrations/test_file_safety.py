#!/usr/bin/env python3
"""The user's files under --fix and --html-out (issue 32, items 5-7),
through the real CLI and LibTorch headers (the preamble cache in the build
directory makes repeats fast).

1. Item 5: one file reached through two hard links (`ln f.cpp g.cpp`),
   named twice on the command line or listed twice by a compile database,
   is analysed and fixed once: its edits were applied twice
   (`.contiguous().viewous().view(...)`).
2. Item 6: a file changed on disk while --fix analyses it is left as the
   user wrote it, and the run says so (exit 1): the fix-its went in at
   stale offsets. A source of 16 KiB or more (the file itself, or a header
   it includes) truncated while it is parsed no longer kills the tool with
   SIGBUS (LLVM mapped it). The moment is made certain, not timed: the
   file includes a named pipe, so clang waits on it until the test has
   changed the file, and only then gets the pipe's text.
   --fix keeps the file's mode, its hard links, a symbolic link to it, and
   another user's ownership; a file in a read-only directory is fixed in
   place; a read-only file is a clear error (exit 1), not a crash, and is
   left as it was. (Run as root, the unwritable cases run the tool as
   nobody: root may write anything.)
3. Item 7: --html-out replaces only a page this tool wrote, recognised by
   its exact first bytes: a user's notes that quote the generator tag, a
   symbolic link (even to a report), a directory, a named pipe are
   refused (exit 2) and left alone, before anything is analysed.
   --html-out=- writes the page to standard output, and is refused with
   another format on standard output (docs/html-report.md's command).

usage: test_file_safety.py <tensor-accountant> <source dir> <build dir>
"""
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time

TOOL, SRC, BUILD = sys.argv[1:4]
CACHE = os.path.join(BUILD, "tests", "integrations", "preamble-cache")
TORCH_API = "/usr/include/torch/csrc/api/include"
failures = []
tmp = tempfile.mkdtemp(prefix="tma-file-safety-")
os.chmod(tmp, 0o755)  # the runs as nobody reach into it


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def write(name, text, mode="w"):
    path = os.path.join(tmp, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)
    return path


def read(name):
    with open(os.path.join(tmp, name)) as f:
        return f.read()


def crashed(p):
    return p.returncode < 0 or "Stack dump" in p.stderr or \
        "PLEASE submit a bug report" in p.stderr


def run(args, cwd=tmp, user=None, cache=True):
    def drop():
        os.setgid(user.pw_gid)
        os.setgroups([])
        os.setuid(user.pw_uid)
    # nobody cannot write the build directory's cache: it parses afresh.
    cache_args = ["--cache-dir", CACHE] if cache and not user else ["--no-cache"]
    p = subprocess.run([TOOL] + cache_args + args, cwd=cwd, capture_output=True,
                       text=True, timeout=900, preexec_fn=drop if user else None)
    check(not crashed(p), "%s: no crash (exit %d)\n%s" % (args, p.returncode, p.stderr))
    return p


RESHAPE = """#include <torch/torch.h>

void f() {
  auto x = torch::randn({4, 8, 16});
  auto q = x.permute({1, 0, 2}).reshape({8, 64});
}
"""
FIXED_LINE = "  auto q = x.permute({1, 0, 2}).contiguous().view({8, 64});"


def fixed_once(text):
    return FIXED_LINE in text.splitlines() and "viewous" not in text and \
        text.count("contiguous()") == 1


# ---- 1. Hard links ----------------------------------------------------------
links = os.path.join(tmp, "links")
write("links/f.cpp", RESHAPE)
os.link(os.path.join(links, "f.cpp"), os.path.join(links, "g.cpp"))
p = run(["--fix", "--format=diagnostics", "f.cpp", "g.cpp"], cwd=links)
check(p.returncode == 0 and p.stderr.count("applied 1 fix-it edit") == 1 and
      fixed_once(read("links/f.cpp")),
      "two hard links named: fixed once (exit %d):\n%s\n%s"
      % (p.returncode, p.stderr, read("links/f.cpp")))
check(os.stat(os.path.join(links, "g.cpp")).st_nlink == 2 and
      read("links/g.cpp") == read("links/f.cpp"),
      "two hard links named: still one file under two names")

write("links/f.cpp", RESHAPE)  # in place: the links stay
flags = "-std=c++17 -isystem %s" % TORCH_API
write("links/build/compile_commands.json", json.dumps([
    {"directory": links, "file": os.path.join(links, name),
     "command": "c++ %s -c %s" % (flags, os.path.join(links, name))}
    for name in ("f.cpp", "g.cpp")]))
p = run(["-p", "build", "--fix", "--format=json"], cwd=links)
try:
    r = json.loads(p.stdout)
except ValueError:
    r = {"functions": [], "diagnostics": []}
check(p.returncode == 0 and len(r["functions"]) == 1 and len(r["diagnostics"]) == 1
      and p.stderr.count("applied 1 fix-it edit") == 1 and
      fixed_once(read("links/f.cpp")),
      "a database listing two hard links: reported and fixed once (exit %d): %s\n%s\n%s"
      % (p.returncode, [fn["file"] for fn in r["functions"]], p.stderr,
         read("links/f.cpp")))


# ---- 2. Files that change while they are analysed ---------------------------
def gated_run(args, cwd, change, gate):
    """Runs the tool, which blocks reading the named pipe `gate`; once it
    has opened it, calls change(), then lets the parse go on."""
    os.mkfifo(gate)
    proc = subprocess.Popen([TOOL, "--cache-dir", CACHE] + args, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.time() + 900
    fd = None
    while fd is None and proc.poll() is None and time.time() < deadline:
        try:  # without a reader, a non-blocking open for writing fails
            fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            time.sleep(0.05)
    if fd is not None:
        change()
        os.write(fd, b"\n")
        os.close(fd)
    out, err = proc.communicate(timeout=900)
    p = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    check(fd is not None, "%s: the tool opened the gate (exit %s)\n%s"
          % (args, proc.returncode, err))
    check(not crashed(p), "%s: no crash (exit %d)\n%s" % (args, p.returncode, err))
    return p


# The gate comes after the first function: outside the preamble (cached),
# read when clang reaches it, after it has read the file itself.
race = os.path.join(tmp, "race")
write("race/a.cpp", RESHAPE + '#include "gate.h"\n')
users_text = "// a line the user added while the tool ran\n" + RESHAPE + \
    '#include "gate.h"\n'
p = gated_run(["--fix", "--format=diagnostics", "a.cpp"], race,
              lambda: write("race/a.cpp", users_text), os.path.join(race, "gate.h"))
check(p.returncode == 1 and "'a.cpp' changed on disk while it was analysed" in p.stderr
      and "applied 1 fix-it" not in p.stderr and read("race/a.cpp") == users_text,
      "a file changed during --fix is left as the user wrote it (exit %d):\n%s\n%s"
      % (p.returncode, p.stderr, read("race/a.cpp")))

# Over 16 KiB (and not a multiple of the page size) so LLVM would map it;
# truncated in place while clang is past the first page.
padding = "".join("// padding line %05d to make the file large enough to map\n" % i
                  for i in range(400))
big = RESHAPE + padding + '#include "gate.h"\n' + padding + "int after_gate;\n"
assert len(big) > 16 * 1024 and len(big) % 4096
write("bigmain/a.cpp", big)
p = gated_run(["--fix", "--format=diagnostics", "a.cpp"], os.path.join(tmp, "bigmain"),
              lambda: write("bigmain/a.cpp", "int truncated;\n"),
              os.path.join(tmp, "bigmain", "gate.h"))
check(p.returncode == 1 and "changed on disk while it was analysed" in p.stderr and
      read("bigmain/a.cpp") == "int truncated;\n",
      "a large file truncated during --fix: no crash, left alone (exit %d):\n%s"
      % (p.returncode, p.stderr[-3000:]))

header = '#include "gate.h"\n' + padding + "inline int after_gate() { return 1; }\n"
assert len(header) > 16 * 1024 and len(header) % 4096
write("bighdr/big.h", header)
write("bighdr/a.cpp", RESHAPE + '#include "big.h"\n')
p = gated_run(["--format=json", "a.cpp"], os.path.join(tmp, "bighdr"),
              lambda: write("bighdr/big.h", "// emptied\n"),
              os.path.join(tmp, "bighdr", "gate.h"))
check(p.returncode == 0 and '"torch-reshape-copy"' in p.stdout,
      "a large header truncated while it is parsed: analysed as read (exit %d):\n%s"
      % (p.returncode, p.stderr[-3000:]))

# Mode, links, owner.
keep = os.path.join(tmp, "keep")
write("keep/a.cpp", RESHAPE)
os.chmod(os.path.join(keep, "a.cpp"), 0o640)
os.symlink("a.cpp", os.path.join(keep, "link.cpp"))
p = run(["--fix", "--format=diagnostics", "link.cpp"], cwd=keep)
st = os.lstat(os.path.join(keep, "a.cpp"))
check(p.returncode == 0 and fixed_once(read("keep/a.cpp")) and
      stat.S_IMODE(st.st_mode) == 0o640 and
      os.path.islink(os.path.join(keep, "link.cpp")) and
      sorted(os.listdir(keep)) == ["a.cpp", "link.cpp"],
      "--fix through a symbolic link: the file fixed, its mode 0640 kept (%o), the "
      "link a link, no temporary left: %s (exit %d)\n%s"
      % (stat.S_IMODE(st.st_mode), sorted(os.listdir(keep)), p.returncode, p.stderr))

root = os.geteuid() == 0
nobody = pwd.getpwnam("nobody") if root else None
if root:
    # Another user's file: rewritten in place, still theirs.
    theirs = os.path.join(tmp, "theirs")
    write("theirs/a.cpp", RESHAPE)
    os.chown(os.path.join(theirs, "a.cpp"), nobody.pw_uid, nobody.pw_gid)
    p = run(["--fix", "--format=diagnostics", "a.cpp"], cwd=theirs)
    st = os.stat(os.path.join(theirs, "a.cpp"))
    check(p.returncode == 0 and fixed_once(read("theirs/a.cpp")) and
          (st.st_uid, st.st_gid) == (nobody.pw_uid, nobody.pw_gid),
          "another user's file: fixed, still theirs (%d:%d, exit %d)\n%s"
          % (st.st_uid, st.st_gid, p.returncode, p.stderr))

# Unwritable places, as a user the permissions bind.
ro = os.path.join(tmp, "readonly")
write("readonly/dir/a.cpp", RESHAPE)
write("readonly/file/a.cpp", RESHAPE)
if root:
    for path in ("readonly", "readonly/dir", "readonly/dir/a.cpp",
                 "readonly/file", "readonly/file/a.cpp"):
        os.chown(os.path.join(tmp, path), nobody.pw_uid, nobody.pw_gid)
os.chmod(os.path.join(ro, "dir"), 0o555)
os.chmod(os.path.join(ro, "file", "a.cpp"), 0o444)
p = run(["--fix", "--format=diagnostics", "a.cpp"], cwd=os.path.join(ro, "dir"),
        user=nobody)
check(p.returncode == 0 and fixed_once(read("readonly/dir/a.cpp")),
      "a file in a read-only directory is fixed in place (exit %d)\n%s"
      % (p.returncode, p.stderr))
p = run(["--fix", "--format=diagnostics", "a.cpp"], cwd=os.path.join(ro, "file"),
        user=nobody)
check(p.returncode == 1 and "error: cannot write 'a.cpp'" in p.stderr and
      "not applied" in p.stderr and read("readonly/file/a.cpp") == RESHAPE,
      "a read-only file: a clear error, exit 1, left alone (exit %d)\n%s"
      % (p.returncode, p.stderr))
os.chmod(os.path.join(ro, "dir"), 0o755)


# ---- 3. --html-out ----------------------------------------------------------
html = os.path.join(tmp, "html")
write("html/m.cpp", RESHAPE)
p = run(["--format=diagnostics", "--html-out=mine.html", "m.cpp"], cwd=html)
with open(os.path.join(html, "mine.html")) as f:
    page = f.read()
check(p.returncode == 0 and page.startswith("<!DOCTYPE html>"),
      "--html-out writes a page (exit %d)\n%s" % (p.returncode, p.stderr))
prefix = page[:page.index('content="tensor-accountant">\n') +
              len('content="tensor-accountant">\n')]
p = run(["--format=diagnostics", "--html-out=mine.html", "m.cpp"], cwd=html)
check(p.returncode == 0, "--html-out replaces its own page (exit %d)\n%s"
      % (p.returncode, p.stderr))

META = '<meta name="generator" content="tensor-accountant">'
hostile = {
    "notes.html": "<!DOCTYPE html>\n" + META + "\n<p>my notes on the report</p>\n",
    "quote.md": "To tell a report: look for `%s` in its head.\n" % META,
    "cut.html": prefix[:-1],
}
for name, text in hostile.items():
    write("html/" + name, text)
os.symlink("mine.html", os.path.join(html, "link.html"))
os.makedirs(os.path.join(html, "adir"))
os.mkfifo(os.path.join(html, "pipe.html"))
report_before = read("html/mine.html")
for name in list(hostile) + ["link.html", "adir", "pipe.html"]:
    p = run(["--format=diagnostics", "--html-out=" + name, "m.cpp"], cwd=html)
    check(p.returncode == 2 and "--html-out" in p.stderr and
          (name not in hostile or read("html/" + name) == hostile[name]),
          "--html-out=%s is refused and left alone (exit %d)\n%s"
          % (name, p.returncode, p.stderr))
check(os.path.islink(os.path.join(html, "link.html")) and
      read("html/mine.html") == report_before,
      "the link is still a link, the report behind it still a report")

# --html-out=- (docs/html-report.md: tensor-accountant --html-out=- model.cpp
# > memory.html).
p = run(["--html-out=-", "m.cpp"], cwd=html)
check(p.returncode == 0 and p.stdout.startswith(prefix) and
      p.stdout.count("<!DOCTYPE html>") == 1 and "torch-reshape-copy" in p.stdout,
      "--html-out=- writes one page to standard output (exit %d)\n%s"
      % (p.returncode, p.stderr))
p = run(["--html-out=-", "--format=html", "m.cpp"], cwd=html)
check(p.returncode == 0 and p.stdout.count("<!DOCTYPE html>") == 1,
      "--html-out=- --format=html: still one page (exit %d)" % p.returncode)
for other in (["--format=json"], ["--format=sarif"], ["--format=table"],
              ["--verify"]):
    p = run(["--html-out=-"] + other + ["m.cpp"], cwd=html)
    check(p.returncode == 2 and "--html-out=- writes the page to standard output"
          in p.stderr and p.stdout == "",
          "--html-out=- with %s is refused (exit %d)\n%s" % (other, p.returncode, p.stderr))
check(not os.path.exists(os.path.join(html, "-")), "no file named '-'")

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: hard links, files changed under --fix, mode/links/owner, unwritable "
      "files, hostile --html-out targets, --html-out=-")
