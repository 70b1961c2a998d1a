#!/usr/bin/env python3
"""Byte-identical snapshots of the tool's output (issue 11, Done-when: "the
seed table, JSON and diagnostics are byte-identical before and after").

A restructuring of the engine must not change a single byte the user sees.
This runs the CLI over the repository's own test inputs and compares its
stdout byte for byte with golden files in testdata/snapshots/:

  seed.table.txt         testdata/seed/blocks.cpp, default format (the table)
  seed.json              ... --format=json
  seed.diagnostics.txt   ... --format=diagnostics
  seed.sarif             ... --format=sarif
  seed.markdown.md       ... --format=markdown
  seed.github.txt        ... --format=github
  seed.html              ... --format=html
  testdata.json          --format=json over every other testdata/**/*.cpp
                         in one run (one LibTorch parse for all of them)
  seed.json again with --no-cache: parsing from scratch must give the bytes
                         the preamble cache gives.

Nothing machine-specific may reach a golden file: the tool runs in the
source root with relative paths, so names are repository-relative. Two
things the output legitimately carries are replaced before comparing, each
by an exact string, never a pattern: the tool's version (SARIF's driver
version and the HTML page's footer; it changes with every commit) by
@VERSION@, and the working directory's file:// URI (SARIF's
originalUriBaseIds and its help links) by file://@SOURCE_ROOT@/. Only stdout
is compared; stderr (cache notes) is ignored, and the exit status must be
the one recorded here.

  snapshots.py --cli build/driver/tensor-accountant --cache-dir DIR          compare
  snapshots.py --cli build/driver/tensor-accountant --cache-dir DIR --update rewrite

scripts/update-snapshots.sh runs the second form. On a difference the test
prints a unified diff (the first lines of it), for JSON the functions that
differ, and the command that regenerates the files.
"""

import argparse
import difflib
import json
import os
import subprocess
import sys

SEED = "testdata/seed/blocks.cpp"
SNAPSHOT_DIR = "testdata/snapshots"
DIFF_LINES = 80


def other_testdata_files(root):
    """Every testdata/**/*.cpp except the seed and the snapshots themselves,
    sorted byte-wise so the command line is the same on every machine."""
    found = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "testdata")):
        dirnames.sort()
        for name in filenames:
            if name.endswith(".cpp"):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                rel = rel.replace(os.sep, "/")
                if rel != SEED and not rel.startswith(SNAPSHOT_DIR + "/"):
                    found.append(rel)
    return sorted(found)


def runs(root):
    """(golden file, arguments, expected exit status) for every snapshot."""
    seed = [
        ("seed.table.txt", [], 0),
        ("seed.json", ["--format=json"], 0),
        ("seed.diagnostics.txt", ["--format=diagnostics"], 0),
        ("seed.sarif", ["--format=sarif"], 0),
        ("seed.markdown.md", ["--format=markdown"], 0),
        ("seed.github.txt", ["--format=github"], 0),
        ("seed.html", ["--format=html"], 0),
    ]
    out = [(name, args + [SEED], status) for name, args, status in seed]
    out.append(("testdata.json", ["--format=json"] + other_testdata_files(root), 0))
    # The same bytes without the preamble cache (a cache that changed the
    # output would change it for every user who has one).
    out.append(("seed.json", ["--no-cache", "--format=json", SEED], 0))
    return out


def version_of(cli):
    first = subprocess.run([cli, "--version"], stdout=subprocess.PIPE,
                           check=True).stdout.decode("utf-8").split("\n")[0]
    prefix = "tensor-accountant "
    if not first.startswith(prefix) or len(first) == len(prefix):
        sys.exit("cannot read the version from %r" % first)
    return first[len(prefix):]


def normalise(data, version, root):
    text = data.decode("utf-8")
    # SARIF's semanticVersion spells the Debian "~" as "-".
    for spelling in {version, version.replace("~", "-")}:
        text = text.replace(spelling, "@VERSION@")
    uri = "file://" + root.rstrip("/") + "/"
    text = text.replace(uri, "file://@SOURCE_ROOT@/")
    return text.encode("utf-8")


def json_functions_that_differ(expected, actual):
    """For a JSON report: which functions (file:line name) changed, so a
    one-number difference in a 1 MB report names its function."""
    try:
        old, new = json.loads(expected), json.loads(actual)
    except ValueError:
        return []

    def by_key(doc):
        return {"%s:%s %s" % (f.get("file"), f.get("line"), f.get("function")): f
                for f in doc.get("functions", [])}

    a, b = by_key(old), by_key(new)
    changed = [k for k in a if k in b and a[k] != b[k]]
    changed += ["only before: " + k for k in a if k not in b]
    changed += ["only now: " + k for k in b if k not in a]
    if old.get("diagnostics") != new.get("diagnostics"):
        changed.append("the diagnostics list")
    return changed


def show_difference(name, expected, actual):
    print("--- %s differs (%d bytes expected, %d now)" % (name, len(expected), len(actual)))
    if name.endswith(".json"):
        for key in json_functions_that_differ(expected, actual)[:20]:
            print("    changed: " + key)
    diff = difflib.unified_diff(
        expected.decode("utf-8", "replace").splitlines(True),
        actual.decode("utf-8", "replace").splitlines(True),
        fromfile="%s/%s (golden)" % (SNAPSHOT_DIR, name),
        tofile="%s (now)" % name)
    lines = list(diff)
    for line in lines[:DIFF_LINES]:
        sys.stdout.write(line if line.endswith("\n") else line + "\n\\ no newline\n")
    if len(lines) > DIFF_LINES:
        print("... %d more diff lines" % (len(lines) - DIFF_LINES))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", required=True, help="the tensor-accountant binary")
    parser.add_argument("--cache-dir", required=True,
                        help="preamble cache directory (in the build directory)")
    parser.add_argument("--source-root",
                        default=os.path.dirname(os.path.dirname(
                            os.path.dirname(os.path.abspath(__file__)))))
    parser.add_argument("--update", action="store_true",
                        help="rewrite the golden files instead of comparing")
    opts = parser.parse_args()

    root = os.path.realpath(opts.source_root)
    cli = os.path.abspath(opts.cli)
    version = version_of(cli)
    snapshot_dir = os.path.join(root, SNAPSHOT_DIR)
    failures, written = [], {}
    for name, args, status in runs(root):
        command = [cli, "--cache-dir=" + os.path.abspath(opts.cache_dir)] + args
        shown = "tensor-accountant " + " ".join(args if len(args) < 8 else
                                                 args[:3] + ["... (%d files)" % (len(args) - 1)])
        done = subprocess.run(command, cwd=root, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        if done.returncode != status:
            print("--- %s: exit status %d, expected %d\n%s" % (
                shown, done.returncode, status,
                done.stderr.decode("utf-8", "replace")[-4000:]))
            failures.append(name)
            continue
        actual = normalise(done.stdout, version, root)
        path = os.path.join(snapshot_dir, name)
        if opts.update:
            if name in written:
                # A second run into the same golden file (--no-cache) must
                # agree with the first: never write a file two ways.
                if written[name] != actual:
                    show_difference(name, written[name], actual)
                    failures.append(name + " (" + shown + ")")
                continue
            os.makedirs(snapshot_dir, exist_ok=True)
            with open(path, "wb") as f:
                f.write(actual)
            written[name] = actual
            print("wrote %s/%s (%d bytes) from %s" % (SNAPSHOT_DIR, name, len(actual), shown))
            continue
        try:
            with open(path, "rb") as f:
                expected = f.read()
        except FileNotFoundError:
            expected = b""
            print("--- %s/%s is missing" % (SNAPSHOT_DIR, name))
        if expected == actual:
            print("same  %-22s %8d bytes  %s" % (name, len(actual), shown))
            continue
        show_difference(name, expected, actual)
        failures.append(name + " (" + shown + ")")

    if failures:
        print("\nFAILED: %d snapshot(s) differ: %s" % (len(failures), ", ".join(failures)))
        if not opts.update:
            print("If the change is intended (issue 11's restructuring must not change\n"
                  "a byte), regenerate them and commit the diff with the change:\n"
                  "    scripts/update-snapshots.sh %s" % os.path.dirname(
                      os.path.dirname(cli)))
        return 1
    if not opts.update:
        print("all %d snapshots byte-identical" % len(runs(root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
