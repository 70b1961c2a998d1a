#!/usr/bin/env python3
"""--version and -j, through the real CLI.

1. --version names the tool's version (the one the build stamped), the
   Clang it was built with, and the LibTorch headers added to a run whose
   flags do not reach torch/torch.h: a fake LibTorch 2.3.1 under $Torch_DIR is reported as
   such (version from its torch/version.h, and where it was found); with
   no $Torch_DIR, whatever this machine has (Debian's 1.13 here).
2. -jN, -j N and -j=N are the same option: each gives the report -j 1
   gives on two files; -jx and a bare -j are usage errors (exit 2).

usage: test_cli_options.py <tensor-accountant> <source dir> <build dir>
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOOL, SRC, BUILD = sys.argv[1:4]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, **env):
    return subprocess.run([TOOL] + args, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, **env))


work = tempfile.mkdtemp(prefix="tma-cli-options-")
with open(os.path.join(BUILD, "generated/version.txt")) as f:
    version = f.read().strip()

# 1. --version.
env = {k: v for k, v in os.environ.items() if k not in ("Torch_DIR", "CMAKE_PREFIX_PATH")}
p = subprocess.run([TOOL, "--version"], capture_output=True, text=True, env=env)
check(p.returncode == 0 and p.stdout.splitlines()[0] == "tensor-accountant " + version,
      "--version starts with the stamped version %s:\n%s" % (version, p.stdout))
check(re.search(r"Clang: built with 16\.\d+\.\d+", p.stdout),
      "--version names the Clang it was built with:\n" + p.stdout)
if os.path.exists("/usr/include/torch/csrc/api/include/torch/torch.h"):
    check("found as Debian libtorch-dev (/usr/include)" in p.stdout and
          re.search(r"LibTorch headers \(added unless the flags reach torch/torch\.h\): 1\.13\.", p.stdout),
          "--version names Debian's LibTorch headers:\n" + p.stdout)

fake = os.path.join(work, "libtorch")
api = os.path.join(fake, "include/torch/csrc/api/include/torch")
os.makedirs(api)
os.makedirs(os.path.join(fake, "share/cmake/Torch"))
open(os.path.join(api, "torch.h"), "w").close()
with open(os.path.join(api, "version.h"), "w") as f:
    f.write('#pragma once\n#define TORCH_VERSION_MAJOR 2\n#define TORCH_VERSION_MINOR 3\n'
            '#define TORCH_VERSION \\\n  "2.3.1"\n')
p = run(["--version"], Torch_DIR=os.path.join(fake, "share/cmake/Torch"))
check(p.returncode == 0 and
      "LibTorch headers (added unless the flags reach torch/torch.h): 2.3.1, found as $Torch_DIR (%s)"
      % fake in p.stdout and os.path.join(fake, "include") in p.stdout,
      "--version follows $Torch_DIR to LibTorch 2.3.1:\n" + p.stdout)

# 2. -j.
files = [os.path.join(SRC, "testdata/seed/blocks.cpp"),
         os.path.join(SRC, "testdata/ops/factories.cpp")]
cache = ["--cache-dir", os.path.join(work, "cache"), "--format=json"]
reference = run(cache + ["-j", "1"] + files)
check(reference.returncode in (0, 1) and '"functions"' in reference.stdout,
      "-j 1 analyses the files:\n" + reference.stderr)
for spelling in (["-j2"], ["-j", "2"], ["-j=2"]):
    p = run(cache + spelling + files)
    check(p.returncode == reference.returncode and p.stdout == reference.stdout,
          "%s gives the same report as -j 1:\n%s" % (" ".join(spelling), p.stderr))
for bad in (["-jx"], ["-j"]):
    p = run(bad + files)
    check(p.returncode == 2 and "-j" in p.stderr,
          "%s is a usage error (exit 2):\n%s" % (" ".join(bad), p.stderr))

shutil.rmtree(work, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: --version and -j")
