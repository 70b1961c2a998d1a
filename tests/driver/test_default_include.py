#!/usr/bin/env python3
"""When the default LibTorch include is added (issue 32, item 8): by
whether the user's include directories already reach <torch/torch.h> (or
ATen/ATen.h of another LibTorch), never by a flag's spelling. Before, any
flag after -- containing "torch" (-I src/pytorch-utils) switched the
default off and every file failed with 'torch/torch.h' file not found.

1. Flags that merely mention torch (-I some/dir/pytorch-utils, relative;
   -isystem joined; --include-directory=) keep the default: a real
   LibTorch file is analysed.
2. A user directory that holds a torch/torch.h (a stand-in here) is
   honoured, and the default is then not added, whichever form names it:
   -I DIR, -IDIR, -isystem DIR, -iquote, -idirafter, --include-directory
   DIR, --include-directory=DIR, $CPATH, $CPLUS_INCLUDE_PATH, a relative
   directory, a symbolic link to the directory. The stand-in fails the
   compile if the default's <torch/nn.h> is reachable.
3. A user directory with another LibTorch's ATen/ATen.h only (no torch/)
   keeps the default off too; -I /usr/include (the default LibTorch's own
   ATen) keeps it on.
4. The same rule for -p's compile database: a command whose flags reach no
   LibTorch (-I pytorch-utils, relative to its "directory") gets the
   default; one whose relative -I holds the stand-in does not.

usage: test_default_include.py <tensor-accountant> <source dir> <build dir>
"""
import json
import os
import subprocess
import sys
import tempfile

TOOL, SRC, BUILD = sys.argv[1:4]
CACHE = os.path.join(BUILD, "tests", "driver", "preamble-cache")
failures = []
tmp = tempfile.mkdtemp(prefix="tma-default-include-")


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


def run(args, env_extra=None, cwd=tmp):
    env = dict(os.environ)
    for k in ("CPATH", "CPLUS_INCLUDE_PATH"):
        env.pop(k, None)
    env.update(env_extra or {})
    return subprocess.run([TOOL, "--cache-dir", CACHE, "--format=json"] + args,
                          cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)


def analysed(p, what, functions):
    try:
        names = [f["function"] for f in json.loads(p.stdout)["functions"]]
    except (ValueError, KeyError):
        names = None
    return check(p.returncode == 0 and names is not None and
                 set(functions) <= set(names),
                 "%s: analysed (exit %d, functions %r)\n%s" %
                 (what, p.returncode, names, p.stderr[-2000:]))


REAL = write("real.cpp", """#include <torch/torch.h>

void real() {
  auto x = torch::randn({4, 8});
  auto y = x.t().contiguous();
}
""")
write("some/dir/pytorch-utils/utils.h", "inline int helper() { return 1; }\n")
write("pytorch_ext/csrc/ext.h", "inline int ext() { return 2; }\n")

# 1. Mentions of torch are no LibTorch.
p = run([REAL, "--", "-std=c++17", "-I", "some/dir/pytorch-utils"])
analysed(p, "-I some/dir/pytorch-utils", ["real"])
check("file not found" not in p.stderr, "-I some/dir/pytorch-utils: no "
      "'torch/torch.h' file not found")
p = run([REAL, "--", "-std=c++17", "-isystem" + os.path.join(tmp, "pytorch_ext/csrc"),
         "--include-directory=some/dir/pytorch-utils", "-DUSE_TORCH=1"])
analysed(p, "-isystem.../pytorch_ext/csrc --include-directory=...pytorch-utils",
         ["real"])

# 2. A torch/torch.h of the user's own. The default's torch/nn.h must not
# be reachable when it is honoured.
write("mytorch/torch/torch.h", """#pragma once
#if __has_include(<torch/nn.h>)
#error "the default LibTorch include was added beside the user's torch/torch.h"
#endif
#define USERS_OWN_TORCH 1
""")
os.symlink(os.path.join(tmp, "mytorch"), os.path.join(tmp, "linked-torch"))
STANDIN = write("standin.cpp", """#include <torch/torch.h>
#ifndef USERS_OWN_TORCH
#error "not the user's torch/torch.h"
#endif
void standin() {}
""")
own = os.path.join(tmp, "mytorch")
for what, flags, env in [
    ("-I DIR", ["-I", own], None),
    ("-IDIR", ["-I" + own], None),
    ("-I relative", ["-Imytorch"], None),
    ("-I ./relative/../", ["-I", "./mytorch/../mytorch"], None),
    ("-isystem DIR", ["-isystem", own], None),
    ("-iquote DIR (with #include \"\")", ["-iquote", own], None),
    ("-idirafter DIR", ["-idirafter" + own], None),
    ("--include-directory DIR", ["--include-directory", own], None),
    ("--include-directory=DIR", ["--include-directory=" + own], None),
    ("a symbolic link to the directory", ["-Ilinked-torch"], None),
    ("$CPATH", [], {"CPATH": "/nonexistent:" + own}),
    ("$CPLUS_INCLUDE_PATH", [], {"CPLUS_INCLUDE_PATH": own}),
]:
    source = STANDIN
    if "iquote" in what:
        source = write("standin_quote.cpp",
                       open(STANDIN).read().replace("<torch/torch.h>",
                                                    '"torch/torch.h"'))
    p = run([source, "--", "-std=c++17"] + flags, env)
    analysed(p, "the user's torch/torch.h through " + what, ["standin"])

# 3. ATen alone: another LibTorch's (a stand-in) keeps the default off; the
# default LibTorch's own (-I /usr/include) keeps it on.
write("otheraten/ATen/ATen.h", """#pragma once
#if __has_include(<torch/nn.h>)
#error "the default LibTorch include was added beside another LibTorch's ATen"
#endif
#define OTHER_ATEN 1
""")
ATEN = write("aten.cpp", "#include <ATen/ATen.h>\n#ifndef OTHER_ATEN\n"
             "#error not the user's ATen\n#endif\nvoid aten() {}\n")
analysed(run([ATEN, "--", "-std=c++17", "-Iotheraten"]),
         "another LibTorch's ATen/ATen.h", ["aten"])
if os.path.exists("/usr/include/ATen/ATen.h"):
    analysed(run([REAL, "--", "-std=c++17", "-I", "/usr/include",
                  "-Isome/dir/pytorch-utils"]),
             "-I /usr/include (the default LibTorch's own ATen)", ["real"])

# 4. -p: the same rule per compile command, relative to its directory.
proj = os.path.join(tmp, "proj")
os.makedirs(os.path.join(proj, "build"))
os.makedirs(os.path.join(proj, "pytorch-utils"))
os.symlink(own, os.path.join(proj, "vendored-torch"))
with open(os.path.join(proj, "model.cpp"), "w") as f:
    f.write(open(REAL).read().replace("void real()", "void model()"))
with open(os.path.join(proj, "own.cpp"), "w") as f:
    f.write(open(STANDIN).read().replace("void standin()", "void own()"))
with open(os.path.join(proj, "build", "compile_commands.json"), "w") as f:
    json.dump([
        {"directory": os.path.join(proj, "build"), "file": "../model.cpp",
         "arguments": ["c++", "-std=c++17", "-I", "../pytorch-utils", "-c",
                       "../model.cpp"]},
        {"directory": os.path.join(proj, "build"), "file": "../own.cpp",
         "arguments": ["c++", "-std=c++17", "-I../vendored-torch", "-c",
                       "../own.cpp"]},
    ], f)
p = run(["-p", os.path.join(proj, "build")], cwd=proj)
analysed(p, "-p: a command with -I ../pytorch-utils gets the default, one "
         "with its own torch/torch.h keeps it", ["model", "own"])

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
