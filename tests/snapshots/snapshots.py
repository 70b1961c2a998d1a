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
  testdata/<input>.json  --format=json over every other testdata/**/*.cpp, *.cu
                         in one run (one LibTorch parse for all of them),
                         split into one golden file per input file (issue
                         34: a change shows as a small diff of the files it
                         touches, not of one 2 MB report); see below
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

The per-input golden files are the run's report cut by file, losslessly:
1. each list of the report (functions, diagnostics, failed_files, ...) is
   cut by its items' "file"; the other top-level fields (the version) are
   kept whole in every piece; each piece is written in the tool's own JSON
   form (two-space indent, sorted keys);
2. the comparison first checks that the report is in that form (re-dumping
   it gives its bytes) and that the pieces, concatenated in file order,
   give the report back byte for byte: a change of formatting or of the
   order across files fails here, a change inside a file fails in its
   piece, so no byte of the run can change unseen;
3. a golden file that no input produces any more (a removed input) fails
   the comparison, and --update deletes it.

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
# The per-input golden files of the testdata run: PER_FILE_DIR/<input>.json,
# e.g. testdata/snapshots/testdata/checks/fixes.cpp.json.
PER_FILE_DIR = SNAPSHOT_DIR
PER_FILE_ROOT = "testdata/"
DIFF_LINES = 80


def other_testdata_files(root):
    """Every testdata/**/*.cpp and *.cu (CUDA host code) except the seed and
    the snapshots themselves,
    sorted byte-wise so the command line is the same on every machine."""
    found = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "testdata")):
        dirnames.sort()
        for name in filenames:
            if name.endswith((".cpp", ".cu")):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                rel = rel.replace(os.sep, "/")
                if rel != SEED and not rel.startswith(SNAPSHOT_DIR + "/"):
                    found.append(rel)
    return sorted(found)


def runs(root):
    """(golden name, arguments, expected exit status, per_file) for every
    snapshot. A per_file run's golden files are its report cut by input
    file; the name then only labels the run."""
    seed = [
        ("seed.table.txt", [], 0),
        ("seed.json", ["--format=json"], 0),
        ("seed.diagnostics.txt", ["--format=diagnostics"], 0),
        ("seed.sarif", ["--format=sarif"], 0),
        ("seed.markdown.md", ["--format=markdown"], 0),
        ("seed.github.txt", ["--format=github"], 0),
        ("seed.html", ["--format=html"], 0),
    ]
    out = [(name, args + [SEED], status, False) for name, args, status in seed]
    out.append(("testdata/*.json", ["--format=json"] + other_testdata_files(root), 0, True))
    # The same bytes without the preamble cache (a cache that changed the
    # output would change it for every user who has one).
    out.append(("seed.json", ["--no-cache", "--format=json", SEED], 0, False))
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


def dump_json(doc):
    """The tool's own JSON form (llvm::json's pretty printer: two-space
    indent, keys sorted, UTF-8 as is), with its final newline."""
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)
            + "\n").encode("utf-8")


class SplitError(Exception):
    """The report cannot be cut by file without losing a byte."""


def split_by_file(report_bytes, inputs):
    """{golden name: bytes}: the report cut into one JSON document per input
    file (see the module's docstring). Raises SplitError, with the reason,
    where the cut would not be lossless."""
    text = report_bytes.decode("utf-8")
    try:
        report = json.loads(text)
    except ValueError as e:
        raise SplitError("the report is not JSON: %s" % e)
    if not isinstance(report, dict):
        raise SplitError("the report is not a JSON object")
    if dump_json(report) != report_bytes:
        raise SplitError("re-dumping the report does not give its bytes (the "
                         "tool's JSON form changed: two-space indent, sorted "
                         "keys); the golden files are written in that form")
    files = set(inputs)
    lists = {k: v for k, v in report.items() if isinstance(v, list)}
    for key, items in lists.items():
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("file"), str):
                raise SplitError("an item of %r has no \"file\": %r" % (key, item))
            files.add(item["file"])
    for f in files:
        if not f.startswith(PER_FILE_ROOT) or ".." in f.split("/"):
            raise SplitError("%r is not a file under %s; it has no golden file"
                             % (f, PER_FILE_ROOT))
    pieces = {}
    for f in sorted(files):
        piece = {k: v for k, v in report.items() if k not in lists}
        for key, items in lists.items():
            piece[key] = [item for item in items if item["file"] == f]
        pieces[f] = piece
    # The pieces in file order must give the report back: every list was
    # in file order (else the cut loses the order across files).
    joined = {k: v for k, v in report.items() if k not in lists}
    for key in lists:
        joined[key] = [item for f in sorted(files) for item in pieces[f][key]]
    if dump_json(joined) != report_bytes:
        raise SplitError("the report's lists are not in file order, so one "
                         "golden file per input would lose their order")
    return {"%s/%s.json" % (PER_FILE_DIR, f): dump_json(p) for f, p in pieces.items()}


def existing_per_file_goldens(root):
    """Every golden file now under PER_FILE_DIR/testdata/ (repository-relative)."""
    top = os.path.join(root, PER_FILE_DIR, PER_FILE_ROOT)
    found = []
    for dirpath, _, filenames in os.walk(top):
        for name in filenames:
            if name.endswith(".json"):
                found.append(os.path.relpath(os.path.join(dirpath, name), root)
                             .replace(os.sep, "/"))
    return sorted(found)


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


def show_difference(path, expected, actual):
    print("--- %s differs (%d bytes expected, %d now)" % (path, len(expected), len(actual)))
    if path.endswith(".json"):
        for key in json_functions_that_differ(expected, actual)[:20]:
            print("    changed: " + key)
    diff = difflib.unified_diff(
        expected.decode("utf-8", "replace").splitlines(True),
        actual.decode("utf-8", "replace").splitlines(True),
        fromfile="%s (golden)" % path,
        tofile="%s (now)" % path)
    lines = list(diff)
    for line in lines[:DIFF_LINES]:
        sys.stdout.write(line if line.endswith("\n") else line + "\n\\ no newline\n")
    if len(lines) > DIFF_LINES:
        print("... %d more diff lines" % (len(lines) - DIFF_LINES))


def read_golden(root, path):
    try:
        with open(os.path.join(root, path), "rb") as f:
            return f.read()
    except FileNotFoundError:
        print("--- %s is missing" % path)
        return b""


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
    failures, written, compared = [], {}, 0
    # CUDA sources are parsed with the tool's own CUDA declarations on
    # every machine, whatever toolkit it has (docs/cuda.md).
    env = dict(os.environ, CUDA_HOME=os.path.join(root, "testdata", "no-cuda-toolkit"))
    env.pop("CUDA_PATH", None)
    for name, args, status, per_file in runs(root):
        command = [cli, "--cache-dir=" + os.path.abspath(opts.cache_dir)] + args
        shown = "tensor-accountant " + " ".join(args if len(args) < 8 else
                                                 args[:3] + ["... (%d files)" % (len(args) - 1)])
        done = subprocess.run(command, cwd=root, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
        if done.returncode != status:
            print("--- %s: exit status %d, expected %d\n%s" % (
                shown, done.returncode, status,
                done.stderr.decode("utf-8", "replace")[-4000:]))
            failures.append(name)
            continue
        actual = normalise(done.stdout, version, root)
        if per_file:
            try:
                goldens = split_by_file(actual, [a for a in args if not a.startswith("-")])
            except SplitError as e:
                print("--- %s: %s" % (shown, e))
                failures.append(name + " (" + shown + ")")
                continue
            stale = [p for p in existing_per_file_goldens(root) if p not in goldens]
        else:
            goldens = {"%s/%s" % (SNAPSHOT_DIR, name): actual}
            stale = []
        if opts.update:
            for path, data in goldens.items():
                if path in written:
                    # A second run into the same golden file (--no-cache)
                    # must agree with the first: never write a file two ways.
                    if written[path] != data:
                        show_difference(path, written[path], data)
                        failures.append(path + " (" + shown + ")")
                    continue
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                with open(os.path.join(root, path), "wb") as f:
                    f.write(data)
                written[path] = data
            for path in stale:
                os.remove(os.path.join(root, path))
                print("removed %s (no input produces it)" % path)
            print("wrote %s (%d bytes) from %s" % (
                name if per_file else list(goldens)[0],
                sum(len(d) for d in goldens.values()), shown) +
                  (" as %d files" % len(goldens) if per_file else ""))
            continue
        differ = []
        for path, data in sorted(goldens.items()):
            compared += 1
            expected = read_golden(root, path)
            if expected != data:
                show_difference(path, expected, data)
                differ.append(path)
        for path in stale:
            print("--- %s: no input produces it any more (a removed input?)" % path)
            differ.append(path)
        if differ:
            failures.extend(p + " (" + shown + ")" for p in differ)
        elif per_file:
            print("same  %-22s %8d bytes  %s, in %d files" % (
                name, len(actual), shown, len(goldens)))
        else:
            print("same  %-22s %8d bytes  %s" % (name, len(actual), shown))

    if failures:
        print("\nFAILED: %d snapshot(s) differ: %s" % (len(failures), ", ".join(failures)))
        if not opts.update:
            print("If the change is intended (issue 11's restructuring must not change\n"
                  "a byte), regenerate them and commit the diff with the change:\n"
                  "    scripts/update-snapshots.sh %s" % os.path.dirname(
                      os.path.dirname(cli)))
        return 1
    if not opts.update:
        print("all %d golden files byte-identical" % compared)
    return 0


if __name__ == "__main__":
    sys.exit(main())
