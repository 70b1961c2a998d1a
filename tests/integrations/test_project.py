#!/usr/bin/env python3
"""Whole-project runs (docs/integrations/ci.md): `-p build/` with no files
analyses every entry of compile_commands.json, once each, in a stable
order; --files-from adds a list; --shard i/n splits the entries so that the
shards cover every entry exactly once; a progress line appears on a
terminal and nowhere else; the cache options check their values.

The sources include no LibTorch header (each parses in milliseconds): what
is tested is which files run, not the analysis.

usage: test_project.py <tensor-accountant>
"""
import json
import os
import pty
import shutil
import subprocess
import sys
import tempfile

TOOL = sys.argv[1]
failures = []
tmp = tempfile.mkdtemp(prefix="tma-project-")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def write(path, text):
    full = os.path.join(tmp, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)
    return full


def run(args, **kw):
    return subprocess.run([TOOL] + args, cwd=tmp, capture_output=True,
                          text=True, timeout=300, **kw)


def analysed(p):
    """The files of a JSON report, in report order."""
    try:
        report = json.loads(p.stdout)
    except ValueError:
        check(False, "JSON report expected:\n%s\n%s" % (p.stdout, p.stderr))
        return []
    return [f["file"] for f in report["functions"]]


# Seven sources in two directories, one listed twice (as CMake does for a
# source built into a static and a shared library), in no sorted order.
names = ["src/b.cpp", "src/a.cpp", "lib/z.cpp", "lib/m.cpp", "src/c.cpp",
         "lib/k.cpp", "src/d.cpp"]
sources = [write(n, "void f%d() { int x = %d; }\n" % (i, i))
           for i, n in enumerate(names)]
entries = [{"directory": tmp, "file": s,
            "command": "clang++ -std=c++17 -c %s -o x.o" % s}
           for s in sources + [sources[2]]]
write("build/compile_commands.json", json.dumps(entries))
everything = sorted(sources)

# -p with no files: every entry once, sorted.
p = run(["-p", "build", "--no-cache", "--format=json", "-j", "2"])
check(p.returncode == 0, "-p build: exit %d\n%s" % (p.returncode, p.stderr))
check(analysed(p) == everything,
      "-p build analyses every entry once, sorted: %s" % analysed(p))
check("\r" not in p.stderr, "no progress line when stderr is not a terminal")

# --shard: disjoint shards that together are the whole database.
for n in (1, 3, 7, 9):
    seen = []
    for i in range(1, n + 1):
        p = run(["-p", "build", "--no-cache", "--format=json",
                 "--shard", "%d/%d" % (i, n)])
        check(p.returncode == 0, "--shard %d/%d: exit %d\n%s"
              % (i, n, p.returncode, p.stderr))
        files = analysed(p)
        check(files == sorted(files), "--shard %d/%d sorted" % (i, n))
        seen += files
    check(sorted(seen) == everything,
          "%d shards cover every entry exactly once: %s" % (n, sorted(seen)))

# --files-from: a list (blank lines and comments skipped), or stdin.
listing = write("changed.txt", "# changed files\n%s\n\n%s\n"
                % (sources[1], sources[4]))
p = run(["-p", "build", "--no-cache", "--format=json", "--files-from",
         listing])
check(analysed(p) == [sources[1], sources[4]],
      "--files-from analyses the list: %s %s" % (analysed(p), p.stderr))
p = run(["-p", "build", "--no-cache", "--format=json", "--files-from", "-"],
        input=sources[0] + "\n")
check(analysed(p) == [sources[0]], "--files-from - reads stdin")
p = run(["-p", "build", "--no-cache", "--format=json", "--files-from",
         write("empty.txt", "\n")])
check(p.returncode == 0 and analysed(p) == [],
      "an empty list (no changed file) is not an error: %d %s"
      % (p.returncode, p.stderr))

# A progress line on a terminal.
master, slave = pty.openpty()
p = subprocess.run([TOOL, "-p", "build", "--no-cache", "--format=json"],
                   cwd=tmp, stdout=subprocess.PIPE, stderr=slave, timeout=300)
os.close(slave)
tty = b""
try:
    while True:
        chunk = os.read(master, 65536)
        if not chunk:
            break
        tty += chunk
except OSError:
    pass
os.close(master)
check(b"[7/7]" in tty, "a progress line on a terminal: %r" % tty[-200:])
check(b'"functions"' in p.stdout and b"[7/7]" not in p.stdout,
      "the report stays clean")


def expect_error(args, needle, what):
    p = run(args)
    check(p.returncode == 2, "%s: exit %d, want 2\n%s"
          % (what, p.returncode, p.stderr))
    check(needle in p.stderr, "%s: stderr says %r\n%s"
          % (what, needle, p.stderr))


for bad in ("0/3", "4/3", "1/0", "x", "2"):
    expect_error(["-p", "build", "--shard", bad], "--shard wants i/n",
                 "--shard " + bad)
expect_error(["-p", "build", "--files-from", os.path.join(tmp, "none.txt")],
             "cannot read the file list", "missing --files-from")
write("nodb/compile_commands.json", "[]")
expect_error(["-p", "nodb"], "lists no files", "an empty database")
expect_error(["--cache-size=lots", sources[0]], "--cache-size wants",
             "bad --cache-size")
cache = os.path.join(tmp, "cache")
write("cache/tensor-accountant.conf", "max_size = -5\n")
expect_error(["--cache-dir", cache, sources[0]], "max_size",
             "bad max_size in the cache's configuration")
write("cache/tensor-accountant.conf", "max_size = 300M\n")
p = run(["--cache-dir", cache, "--cache-stats"])
check(p.returncode == 0 and "of 300.0 MiB limit" in p.stdout,
      "--cache-stats reads max_size: %s %s" % (p.stdout, p.stderr))
write("cache/preamble-0123.pch", "x" * 1000)
write("cache/preamble-0123.deps", "y")
write("cache/keep.txt", "not the cache's")
p = run(["--cache-dir", cache, "--cache-clear"])
check(p.returncode == 0 and "removed 2 cache files" in p.stderr,
      "--cache-clear: %s" % p.stderr)
check(sorted(os.listdir(cache)) == ["keep.txt", "tensor-accountant.conf"],
      "--cache-clear removes only entries: %s" % os.listdir(cache))

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: whole-project runs")
