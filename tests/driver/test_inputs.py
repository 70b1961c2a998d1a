#!/usr/bin/env python3
"""Which files a run analyses, under which names, in which language (issue
10): through the real CLI and LibTorch headers (the preamble cache in the
build directory makes repeats fast).

1. Item 7: one file named three ways (f.cpp ./f.cpp and a symbolic link),
   or listed twice by a compile database (as CMake does for a source in a
   static and a shared library, here under two spellings), is analysed,
   reported and fixed once: --fix used to apply its edits twice and write
   `.contiguous().viewous().view(...)`.
2. Item 19: a database whose paths are relative to each entry's
   "directory" (meson's "../src/m.cpp", "-c m.cpp"): findings name the
   file as the user did, NOLINT is honoured, --fix edits the file; a file
   the database lacks (clang interpolates its command, which ends in
   "-- <file>") is analysed with the cache on, without spurious -Xclang
   errors.
3. Item 20: a `.h` header is C++ (clang's driver took it for C: "-std=c++17
   not allowed with 'C'"), with the default flags and with flags after --;
   a C standard after -- keeps it C.
4. Item 23: a PyTorch extension (torch/extension.h: Python.h, pybind11)
   is analysed with the default flags; with flags that lack Python's
   headers, the error names the package to install.

usage: test_inputs.py <tensor-accountant> <source dir> <build dir>
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOOL, SRC, BUILD = sys.argv[1:4]
CACHE = os.path.join(BUILD, "tests", "driver", "preamble-cache")
TORCH_API = "/usr/include/torch/csrc/api/include"
failures = []
tmp = tempfile.mkdtemp(prefix="tma-inputs-")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def write(name, text):
    path = os.path.join(tmp, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def read(name):
    with open(os.path.join(tmp, name)) as f:
        return f.read()


def run(args, cwd=tmp):
    return subprocess.run([TOOL, "--cache-dir", CACHE] + args, cwd=cwd,
                          capture_output=True, text=True, timeout=900)


def report(p, what):
    try:
        return json.loads(p.stdout)
    except ValueError:
        check(False, "%s: a JSON report (exit %d)\n%s" % (what, p.returncode, p.stderr))
        return {"functions": [], "diagnostics": []}


RESHAPE = """#include <torch/torch.h>

void f() {
  auto x = torch::randn({4, 8, 16});
  auto q = x.permute({1, 0, 2}).reshape({8, 64});
  auto c = x.t().contiguous(); // NOLINT(torch-contiguous-copy)
}
"""
FIXED_LINE = "  auto q = x.permute({1, 0, 2}).contiguous().view({8, 64});"

# 1. One file under several names.
write("dup/f.cpp", RESHAPE)
os.symlink("f.cpp", os.path.join(tmp, "dup/link.cpp"))
names = ["f.cpp", "./f.cpp", "link.cpp"]
dup = os.path.join(tmp, "dup")
p = run(["--format=json"] + names, cwd=dup)
r = report(p, "three names")
check(p.returncode == 0, "three names: exit %d\n%s" % (p.returncode, p.stderr))
check([fn["file"] for fn in r["functions"]] == ["f.cpp"],
      "three names: the file's functions once, under its first name: %s"
      % [fn["file"] for fn in r["functions"]])
check([(d["file"], d["line"]) for d in r["diagnostics"]] == [("f.cpp", 5)],
      "three names: the finding once: %s" % r["diagnostics"])
p = run(["--fix", "--format=diagnostics"] + names, cwd=dup)
fixed = read("dup/f.cpp")
check(p.returncode == 0 and p.stderr.count("applied 1 fix-it edit") == 1,
      "three names: --fix edits once:\n" + p.stderr)
check(FIXED_LINE in fixed.splitlines() and "viewous" not in fixed,
      "three names: the fixed line is right:\n" + fixed)
check(os.path.islink(os.path.join(dup, "link.cpp")), "the link is still a link")

# The same file twice in a database, as /dup/f.cpp and /dup/sub/../f.cpp.
os.makedirs(os.path.join(dup, "sub"))
write("dup/f.cpp", RESHAPE)
flags = "-std=c++17 -isystem %s" % TORCH_API
db = [{"directory": dup, "file": os.path.join(dup, spelling),
       "command": "c++ %s -o %s.o -c %s" % (flags, lib, os.path.join(dup, spelling))}
      for spelling, lib in (("f.cpp", "static"), ("sub/../f.cpp", "shared"),
                            ("link.cpp", "other"))]
write("dup/build/compile_commands.json", json.dumps(db))
p = run(["-p", "build", "--fix", "--format=json"], cwd=dup)
r = report(p, "a database listing one file three times")
fixed = read("dup/f.cpp")
check(p.returncode == 0 and len(r["functions"]) == 1 and len(r["diagnostics"]) == 1,
      "a database listing one file three times: reported once (exit %d): %s\n%s"
      % (p.returncode, [(fn["file"], fn["function"]) for fn in r["functions"]], p.stderr))
check(p.stderr.count("applied 1 fix-it edit") == 1 and
      FIXED_LINE in fixed.splitlines() and "viewous" not in fixed,
      "a database listing one file three times: fixed once:\n%s\n%s" % (p.stderr, fixed))

# 2. Meson's database: paths relative to each entry's "directory".
write("meson/src/m.cpp", RESHAPE)
write("meson/src/n.cpp", RESHAPE.replace("void f()", "void g()"))
write("meson/src/missing.cpp", RESHAPE.replace("void f()", "void h()"))
meson = os.path.join(tmp, "meson")
write("meson/build/compile_commands.json", json.dumps([
    {"directory": os.path.join(meson, "build"), "file": "../src/m.cpp",
     "command": "c++ %s -o m.o -c ../src/m.cpp" % flags},
    {"directory": os.path.join(meson, "src"), "file": "n.cpp",
     "arguments": ["c++"] + flags.split() + ["-c", "n.cpp"]}]))
p = run(["-p", "build", "--format=json"], cwd=meson)
r = report(p, "meson database")
check(p.returncode == 0, "meson database: exit %d\n%s" % (p.returncode, p.stderr))
got = sorted((d["file"], d["line"], d["check"]) for d in r["diagnostics"])
want = [(os.path.join(meson, "src", n), 5, "torch-reshape-copy") for n in ("m.cpp", "n.cpp")]
check(got == want, "meson database: findings name real files, NOLINT honoured: %s" % got)
p = run(["-p", "build", "--format=diagnostics", "src/m.cpp"], cwd=meson)
check(p.returncode == 0 and p.stdout.startswith("src/m.cpp:5:33: warning: reshape()")
      and "torch-contiguous-copy" not in p.stdout,
      "meson database, file named: its name, NOLINT honoured:\n" + p.stdout + p.stderr)
p = run(["-p", "build", "--fix", "--format=diagnostics", "src/m.cpp"], cwd=meson)
check(p.returncode == 0 and "applied 1 fix-it edit to src/m.cpp" in p.stderr and
      FIXED_LINE in read("meson/src/m.cpp").splitlines(),
      "meson database: --fix edits the file:\n" + p.stderr)
p = run(["-p", "build", "--format=json", "src/missing.cpp"], cwd=meson)
r = report(p, "a file the database lacks")
check(p.returncode == 0 and "-Xclang" not in p.stderr and
      [(d["file"], d["line"]) for d in r["diagnostics"]] == [("src/missing.cpp", 5)],
      "a file the database lacks, cache on: analysed, no -Xclang errors (exit %d):\n%s"
      % (p.returncode, p.stderr))

# 3. Headers are C++.
HEADER = """#pragma once
#include <torch/torch.h>

namespace model {
inline void g() {
  auto x = torch::randn({4, 8, 16});
  auto q = x.permute({1, 0, 2}).reshape({8, 64});
}
}  // namespace model
"""
write("hdr/model.h", HEADER)
hdr = os.path.join(tmp, "hdr")
for extra in ([], ["--", "-std=c++17", "-isystem", TORCH_API]):
    p = run(["--format=json", "model.h"] + extra, cwd=hdr)
    r = report(p, "a .h header %s" % extra)
    check(p.returncode == 0 and "not allowed with 'C'" not in p.stderr and
          [(d["line"], d["check"]) for d in r["diagnostics"]] == [(7, "torch-reshape-copy")],
          "a .h header is analysed as C++ %s (exit %d):\n%s" % (extra, p.returncode, p.stderr))
write("hdr/plain.h", "#pragma once\nstruct point { int x, y; };\nint norm(struct point p);\n")
p = run(["--format=json", "plain.h", "--", "-std=c11"], cwd=hdr)
check(p.returncode == 0 and "not allowed" not in p.stderr,
      "a C header with -std=c11 stays C (exit %d):\n%s" % (p.returncode, p.stderr))

# 4. A PyTorch extension.
EXTENSION = """#include <torch/extension.h>

torch::Tensor scaled(int64_t n) {
  auto x = torch::randn({n, 16});
  auto y = x.t().contiguous();
  return y * 2;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scaled", &scaled); }
"""
write("ext/scaled.cpp", EXTENSION)
ext = os.path.join(tmp, "ext")
p = run(["--format=json", "scaled.cpp", "--", "-std=c++17",
         "-DTORCH_EXTENSION_NAME=scaled"], cwd=ext)
r = report(p, "torch/extension.h, default LibTorch flags")
# PYBIND11_MODULE defines PyInit_scaled and pybind11_init_scaled too.
check(p.returncode == 0 and "scaled" in [fn["function"] for fn in r["functions"]] and
      [(d["line"], d["check"]) for d in r["diagnostics"]] == [(5, "torch-contiguous-copy")],
      "a file including torch/extension.h is analysed (exit %d):\n%s"
      % (p.returncode, p.stderr[-3000:]))
p = run(["--format=json", "scaled.cpp", "--", "-std=c++17", "-isystem", TORCH_API,
         "-DTORCH_EXTENSION_NAME=scaled"], cwd=ext)
check(p.returncode == 1 and "'Python.h' file not found" in p.stderr and
      "install python3-dev" in p.stderr,
      "without Python's headers the error names python3-dev (exit %d):\n%s"
      % (p.returncode, p.stderr[-3000:]))

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: file names, databases, headers and extensions")
