#!/usr/bin/env python3
"""scripts/add-check on a scratch copy of the tree (ctest checks.add-check).

1. The copy holds what a check touches and compiles against: checks/,
   model/, docs/checks/, testdata/checks/, tests/checks/, scripts/.
2. add-check torch-scratch-example '...' must exit 0 and write the check's
   .h/.cpp, docs page and test input; put its include and entry<...>() line
   in checks/Registry.cpp and its source in checks/CMakeLists.txt, each in
   name order; declare the name and summary once (in the class); and give
   the test input the RUN-CHECKS line and file name that
   tests/checks/CMakeLists.txt's glob (testdata/checks/torch-*.cpp) turns
   into ctest checks.cli.<name>.
3. The generated check and the edited registry compile, with the flags the
   build uses for checks/Registry.cpp (compile_commands.json), at -O0.
4. Bad names, empty or multi-line summaries and a second add of the same
   check exit 1 with a message saying why, and change no file.
Limit: the new check is compiled, not linked into the tool and run (that
would rebuild the driver on the scratch copy); its test input runs as
ctest checks.cli.<name> in a real tree once the check is added there.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

COPIED = ["checks", "model", "docs/checks", "testdata/checks", "tests/checks", "scripts"]
CHECK = "torch-scratch-example"
CLASS = "ScratchExampleCheck"
SUMMARY = 'an example check "the test" adds'

failures = []


def expect(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def snapshot(root):
    """Every file under root with its bytes (to show a refusal changed none)."""
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def add_check(root, *args):
    return subprocess.run(
        [sys.executable, os.path.join(root, "scripts", "add-check"), "--root", root] + list(args),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def compile_command(build, source_root, scratch, rel, obj):
    """The build's command for checks/Registry.cpp, turned to compile rel in
    the scratch copy into obj."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    model = [e for e in entries
             if os.path.realpath(e["file"]) ==
             os.path.realpath(os.path.join(source_root, "checks", "Registry.cpp"))]
    if not model:
        sys.exit("no compile command for checks/Registry.cpp in %s" % build)
    args = shlex.split(model[0]["command"]) if "command" in model[0] else model[0]["arguments"]
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c"):
            skip = True
            continue
        if a.startswith("-O") or a == "-g":
            continue
        if a == "-I" + source_root:
            a = "-I" + scratch
        out.append(a)
    return out + ["-O0", "-c", os.path.join(scratch, rel), "-o", obj]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source-root", required=True)
    parser.add_argument("--build-dir", required=True)
    opts = parser.parse_args()
    source_root = os.path.realpath(opts.source_root)
    build = os.path.realpath(opts.build_dir)

    work = tempfile.mkdtemp(prefix="add-check-")
    try:
        scratch = os.path.join(work, "tree")
        for d in COPIED:
            shutil.copytree(os.path.join(source_root, d), os.path.join(scratch, d))

        done = add_check(scratch, CHECK, SUMMARY)
        print(done.stdout + done.stderr)
        expect(done.returncode == 0, "add-check %s exits 0" % CHECK)
        files = ["checks/%s.h" % CLASS, "checks/%s.cpp" % CLASS,
                 "docs/checks/%s.md" % CHECK, "testdata/checks/%s.cpp" % CHECK]
        for rel in files:
            expect(os.path.isfile(os.path.join(scratch, rel)), "wrote " + rel)
        if failures:
            return 1

        def read(rel):
            with open(os.path.join(scratch, rel), encoding="utf-8") as f:
                return f.read()

        registry, cmake = read("checks/Registry.cpp"), read("checks/CMakeLists.txt")
        header = read("checks/%s.h" % CLASS)
        includes = re.findall(r'#include "checks/(\w+Check)\.h"', registry)
        entries = re.findall(r"entry<(\w+)>\(\)", registry)
        sources = re.findall(r"^  (\w+Check)\.cpp$", cmake, re.M)
        sources = [s for s in sources if s != "TorchCheck"]
        expect(CLASS in includes and includes == sorted(includes),
               "Registry.cpp includes the check, in order")
        expect(CLASS in entries and entries == sorted(entries),
               "Registry.cpp has entry<%s>(), in order" % CLASS)
        expect(CLASS in sources and sources == sorted(sources),
               "checks/CMakeLists.txt builds %s.cpp, in order" % CLASS)
        expect(header.count('"%s"' % CHECK) == 1 and
               'CheckSummary =\n      "an example check \\"the test\\" adds";' in header,
               "the name and summary are declared once, in the class")
        everywhere = "".join(read(p) for p in ["checks/Registry.cpp", "checks/%s.cpp" % CLASS])
        expect('"%s"' % CHECK not in everywhere,
               "neither the registry nor the .cpp repeats the name")
        test_input = read("testdata/checks/%s.cpp" % CHECK)
        expect(re.search(r"^// RUN-CHECKS: -\*,%s$" % re.escape(CHECK), test_input, re.M)
               is not None, "the test input enables only the new check")
        glob_line = read("tests/checks/CMakeLists.txt")
        expect("${CHECKS_DATA}/torch-*.cpp" in glob_line and CHECK.startswith("torch-"),
               "tests/checks/CMakeLists.txt's glob registers the test input")

        # Refusals: exit 1, a reason, no file changed.
        before = snapshot(scratch)
        for args, reason in [
                ([CHECK, "again"], "already exists"),
                (["Torch-x", "s"], "is not a check name"),
                (["torch-", "s"], "is not a check name"),
                (["torch-a_b", "s"], "is not a check name"),
                (["reshape-copy", "s"], "is not a check name"),
                (["torch-ok-name", "  "], "summary is empty"),
                (["torch-ok-name", "two\nlines"], "one line")]:
            done = add_check(scratch, *args)
            expect(done.returncode == 1 and reason in done.stderr,
                   "add-check %r refused (%s): exit %d, %s" % (
                       args, reason, done.returncode, done.stderr.strip()))
        expect(snapshot(scratch) == before, "the refusals changed no file")

        # The generated check and the edited registry compile.
        for rel in ["checks/%s.cpp" % CLASS, "checks/Registry.cpp"]:
            obj = os.path.join(work, os.path.basename(rel) + ".o")
            command = compile_command(build, source_root, scratch, rel, obj)
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True)
            expect(done.returncode == 0 and os.path.isfile(obj),
                   "%s compiles%s" % (rel, "" if done.returncode == 0 else
                                       ":\n" + done.stdout[-3000:]))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if failures:
        print("\n%d failure(s)" % len(failures))
        return 1
    print("\nscripts/add-check works on a scratch copy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
