#!/usr/bin/env python3
"""Companion sources (driver/Companions.h) through the real CLI, on the
fixture in tests/driver/companions/ (include/conv_net.h declares a module and
a helper; src/conv_net.cpp defines them; src/main.cpp uses them).

1. With companions, main.cpp's calls into conv_net.cpp are followed, and
   the answers are exactly those for the same code written as one file
   (the single-file analysis is what the differential tests check against
   LibTorch); only main.cpp's own functions are reported.
2. --no-companions: the calls into conv_net.cpp are unknown again, with
   the reason; the header's inline body is still followed.
3. A companion that does not compile with the file (two static scale()):
   a note on stderr, the file analysed alone, exit 0; of two companions,
   the one that compiles is still followed.
4. Nothing is written into the user's tree.

usage: test_companions.py <tensor-accountant> <source dir> <build dir>
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

TOOL, SRC, BUILD = [os.path.abspath(a) for a in sys.argv[1:4]]
FIXTURE = os.path.join(SRC, "tests/driver/companions")
CACHE = ["--cache-dir", os.path.join(BUILD, "tests/driver/companions-cache")]
FLAGS = ["--", "-std=c++17", "-I" + os.path.join(FIXTURE, "include")]
FIELDS = ("shape", "dtype", "storage_bytes", "kind", "base", "strides")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args):
    return subprocess.run([TOOL] + CACHE + args, capture_output=True, text=True,
                          timeout=900)


def report(path, *options):
    p = run(["--format=json", *options, path] + FLAGS)
    check(p.returncode == 0, "%s %s exits 0 (got %d): %s"
          % (os.path.basename(path), " ".join(options), p.returncode, p.stderr[-2000:]))
    try:
        return json.loads(p.stdout), p.stderr
    except ValueError:
        check(False, "%s gives a JSON report" % path)
        return {"functions": []}, p.stderr


def rows(rep, function):
    for fn in rep["functions"]:
        if fn["function"] == function:
            return {t["name"]: t for t in fn["tensors"]}
    check(False, "the report has %s (it has %s)"
          % (function, [f["function"] for f in rep["functions"]]))
    return {}


def tree_digest():
    h = hashlib.sha256()
    for d, _, names in sorted(os.walk(FIXTURE)):
        for n in sorted(names):
            p = os.path.join(d, n)
            h.update(p.encode())
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def without_include(text, header):
    return re.sub(r'^#include "%s"\s*$' % re.escape(header), "", text, flags=re.M)


def main():
    before = tree_digest()
    main_cpp = os.path.join(FIXTURE, "src/main.cpp")

    # 1. Followed into the companion, as if one file.
    rep, _ = report(main_cpp)
    names = [f["function"] for f in rep["functions"]]
    check(names == ["classify"], "only main.cpp's own function is reported: %s" % names)
    got = rows(rep, "classify")
    for name in ("inputs", "logits", "flat", "best"):
        check(got.get(name, {}).get("shape") is not None,
              "%s has a shape with companions: %s" % (name, got.get(name)))
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(FIXTURE, "include/conv_net.h")) as f:
            header = f.read().replace("#pragma once", "")
        with open(os.path.join(FIXTURE, "src/conv_net.cpp")) as f:
            source = without_include(f.read(), "conv_net.h")
        with open(main_cpp) as f:
            user = without_include(f.read(), "conv_net.h")
        single = os.path.join(work, "single.cpp")
        with open(single, "w") as f:
            f.write(header + source + user)
        one, _ = report(single, "--no-companions")
        want = rows(one, "classify")
        check(sorted(want) == sorted(got), "the same names: %s vs %s" % (sorted(got), sorted(want)))
        for name in want:
            for field in FIELDS:
                check(got.get(name, {}).get(field) == want[name].get(field),
                      "classify %s %s: with companions %r, as one file %r"
                      % (name, field, got.get(name, {}).get(field), want[name].get(field)))
        check(len(one["functions"]) == 5,
              "the single file reports its 5 functions (%s)"
              % [f["function"] for f in one["functions"]])

    # 2. Alone.
    alone, _ = report(main_cpp, "--no-companions")
    got = rows(alone, "classify")
    for name in ("inputs", "logits"):
        check(got.get(name, {}).get("shape") is None and
              got.get(name, {}).get("unknown_reason"),
              "%s is unknown, with a reason, without companions: %s" % (name, got.get(name)))
    check(got.get("flat", {}).get("shape") == [16, 784],
          "the header's inline flatten_batch is followed alone too: %s" % got.get("flat"))

    # 3. A companion that does not compile with the file.
    clash, err = report(os.path.join(FIXTURE, "src/clash_main.cpp"))
    check("does not compile with it; calls into it are not followed" in err and
          "clash.cpp" in err,
          "a note names the companion analysed without: %r" % err[-600:])
    got = rows(clash, "use_doubled")
    check(got.get("x", {}).get("shape") == [4, 3], "x is (4, 3): %s" % got.get("x"))
    check(got.get("y", {}).get("shape") is None, "doubled() is not followed: %s" % got.get("y"))

    # A companion that compiles is kept when another does not.
    mixed, err = report(os.path.join(FIXTURE, "src/mixed_main.cpp"))
    check("broken.cpp does not compile with it" in err and "conv_net.cpp" not in err,
          "the note names broken.cpp only: %r" % err[-600:])
    got = rows(mixed, "classify_batch")
    check(got.get("logits", {}).get("shape") == [8, 4],
          "conv_net.cpp is still followed: %s" % got.get("logits"))

    # The companion's own analysis: it is not its own companion.
    own, err = report(os.path.join(FIXTURE, "src/conv_net.cpp"))
    check("companion" not in err, "src/conv_net.cpp has no companion note: %r" % err[-400:])
    check(sorted(f["function"] for f in own["functions"]) ==
          ["ConvNetImpl::ConvNetImpl", "ConvNetImpl::forward", "standardize"],
          "src/conv_net.cpp reports its own functions: %s"
          % [f["function"] for f in own["functions"]])

    # 4. The user's files.
    check(tree_digest() == before, "the fixture tree is unchanged")

    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("companions: all checks passed")


if __name__ == "__main__":
    main()
