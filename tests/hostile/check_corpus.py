#!/usr/bin/env python3
"""Judges the tool on the hostile corpus (testdata/hostile/) against what
real LibTorch measured for it (testdata/hostile/measured-cpu.json, made by
make-truth.sh on Debian's libtorch-dev 1.13.1, CPU, counting allocator).

The standard is the project's first rule: never a wrong number. For every
function LibTorch ran:

  - the function is in the JSON report and in the table (a statement form
    the analysis skips must not make a function disappear);
  - every number the report gives is LibTorch's: each named tensor's shape,
    strides, dtype, storage bytes and offset; the peak of live storage; the
    bytes allocated (the sum over the function's ops);
  - what the report does not derive is null with a reason: an unknown
    tensor has an unknown_reason, unknown totals have summary.unknown_reason;
  - a function LibTorch throws in is predicted to throw or has unknown
    totals; one that returns is not predicted to throw;
  - any op whose allocation is unknown makes the totals unknown.

LibTorch wraps a Scalar operand (`x * 2`, `x.add_(1)`) in a 0-dim tensor:
8 bytes, sometimes plus a 4-byte cast copy. The model does not count those,
so measured allocations and peak may exceed the prediction by at most
SCALAR_SLACK bytes per measured allocation, never fall below it.

Functions that are wrong today are listed, with the issue item that fixes
them, in a known-wrong file. The list is strict: a listed function that
is now right fails the test too (remove it from the list), so each fix
shows up as a line removed there, and the test failed before the fix.

Exit status 0 when every function is right or listed, 1 otherwise.
"""

import argparse
import json
import os
import re
import subprocess
import sys

SCALAR_SLACK = 16
TENSOR_FIELDS = ("shape", "strides", "dtype", "storage_bytes", "storage_offset")


def run_cli(cli, cache_dir, fmt, files):
    cmd = [cli, "--format=" + fmt, "--cache-dir", cache_dir, "--checks=-*"] + files
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    # 0: clean; 1: a warning matched --fail-on (none here). A signal or a
    # usage error is a failure of the tool itself.
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr)
        raise SystemExit("FAIL: %s exited %d" % (" ".join(cmd), proc.returncode))
    return proc.stdout


def load_known_wrong(path):
    known = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 1)
            if len(parts) != 2:
                raise SystemExit("%s:%d: expected '<function> <why>'" % (path, number))
            known[parts[0]] = parts[1]
    return known


def within_slack(predicted, measured, allocations):
    return predicted <= measured <= predicted + SCALAR_SLACK * allocations


def check_table_lines(table):
    """Lines the table gives for a function (its unknowns, its bytes
    moved) are lines of its file, at or after the function's first line."""
    wrong = []
    lengths = {}
    current = None
    start = 0
    for row in table.splitlines():
        m = re.match(r"^(\S+):(\d+): (\S+)$", row)
        if m:
            current, start = m.group(1), int(m.group(2))
            if current not in lengths:
                with open(current, encoding="utf-8") as f:
                    lengths[current] = sum(1 for _ in f)
            continue
        m = re.match(r"^\s+line (\d+)[: ]", row)
        if not m or not current:
            continue
        line = int(m.group(1))
        # A function's statements are at or after its first line.
        if line > lengths[current] or line < start:
            wrong.append("%s: %r names line %d, outside the function at "
                         "line %d of a %d-line file"
                         % (current, row.strip(), line, start, lengths[current]))
    return wrong


def judge_invariants(pf, in_table):
    """What must hold for every function, run or not: unknowns have reasons,
    an unknown allocation makes the totals unknown, and a function that runs
    ops is in the table."""
    wrong = []
    summary = pf.get("summary", {})
    peak = summary.get("peak_live_bytes")
    ops = pf.get("ops", [])
    if ops and not in_table:
        wrong.append("missing from the table")
    if peak is None and not summary.get("unknown_reason"):
        wrong.append("totals unknown without a reason")
    if (not pf.get("throws") and peak is not None and
            any(o.get("allocated_bytes", 0) is None for o in ops)):
        wrong.append("an op's allocation is unknown but the totals are not")
    for t in pf.get("tensors", []):
        if t.get("kind") == "undefined":
            # No tensor (`torch::Tensor out;`): a known state, saying how.
            if any(t.get(f) is not None for f in TENSOR_FIELDS) or not t.get("note"):
                wrong.append("%s (line %d): undefined, yet with fields or no note"
                             % (t["name"], t["line"]))
            continue
        if any(t.get(f) is None for f in TENSOR_FIELDS) and not t.get("unknown_reason"):
            wrong.append("%s (line %d): unknown without a reason" % (t["name"], t["line"]))
    return wrong


def judge_function(pf, mf, in_table):
    """The wrong numbers in one function's report, as strings."""
    if pf is None:
        return ["missing from the JSON report"]
    wrong = judge_invariants(pf, in_table)
    if mf is None:
        return wrong
    if not in_table and "missing from the table" not in wrong:
        wrong.append("missing from the table")
    summary = pf.get("summary", {})
    peak = summary.get("peak_live_bytes")
    throws = pf.get("throws")
    error = mf.get("error")
    ops = pf.get("ops", [])

    if error:
        if not throws and peak is not None:
            wrong.append("LibTorch throws (%s); the report predicts a return "
                         "with known totals" % error[:80])
    else:
        if throws:
            wrong.append("predicted to throw (%s); LibTorch returns" % throws[:80])
        allocations = mf.get("allocations", 0)
        if peak is not None and not within_slack(peak, mf["peak_live_bytes"], allocations):
            wrong.append("peak: predicted %d, measured %d" % (peak, mf["peak_live_bytes"]))
        if peak is not None and all(o.get("allocated_bytes") is not None for o in ops):
            allocated = sum(o["allocated_bytes"] + (o.get("transient_bytes") or 0)
                            for o in ops)
            if not within_slack(allocated, mf["allocated_bytes"], allocations):
                wrong.append("allocated: predicted %d, measured %d"
                             % (allocated, mf["allocated_bytes"]))

    # Tensors by (name, line), in order of occurrence; a prediction compared
    # with the first observation (a probe in a loop fires per iteration).
    observed = {}
    for t in mf.get("tensors", []):
        observed.setdefault((t["name"], t["line"]), []).append(t)
    seen = {}
    for t in pf.get("tensors", []):
        key = (t["name"], t["line"])
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        obs = observed.get(key, [])
        if occurrence >= len(obs):
            continue  # not reached (a branch not taken, a throw, a macro)
        m = obs[occurrence if occurrence < len(obs) else 0]
        if m.get("probe_error"):
            continue
        if t.get("kind") == "undefined":
            if m.get("defined", True) is not False:
                wrong.append("%s (line %d): predicted undefined, measured a tensor"
                             % key)
            continue
        for f in TENSOR_FIELDS:
            if t.get(f) is not None and m.get(f) is not None and t[f] != m[f]:
                wrong.append("%s (line %d): %s predicted %s, measured %s"
                             % (key[0], key[1], f, json.dumps(t[f]), json.dumps(m[f])))
    return wrong


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--known-wrong", required=True)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()

    with open(args.truth, encoding="utf-8") as f:
        truth = json.load(f)
    known = load_known_wrong(args.known_wrong)

    report = json.loads(run_cli(args.cli, args.cache_dir, "json", args.files))
    table = run_cli(args.cli, args.cache_dir, "table", args.files)
    headers = set(re.findall(r"^\S+:\d+: (\S+)$", table, re.M))
    # Every line the table gives is a line of the file it names (issue 10
    # item 22: text from another file was reported at that file's lines).
    line_failures = check_table_lines(table)

    predicted = {}
    for pf in report.get("functions", []):
        predicted[(os.path.basename(pf["file"]), pf["function"])] = pf

    counts = {"right": 0, "known wrong": 0}
    failures = []
    judged = set()

    def verdict(name, wrong):
        judged.add(name)
        if wrong and name in known:
            counts["known wrong"] += 1
            print("known wrong: %s [%s]" % (name, known[name]))
        elif wrong:
            failures.append(name)
            print("WRONG: %s" % name)
        elif name in known:
            failures.append(name)
            print("NOW RIGHT: %s is listed as known wrong [%s]; remove it from %s"
                  % (name, known[name], args.known_wrong))
        else:
            counts["right"] += 1
        for w in wrong:
            print("    " + w)

    measured_keys = set()
    for mf in truth["functions"]:
        key = (os.path.basename(mf["file"]), mf["function"])
        measured_keys.add(key)
        verdict(key[1], judge_function(predicted.get(key), mf, key[1] in headers))
    # Functions LibTorch did not run (parameters, methods, lambdas): the
    # invariants still hold.
    for key, pf in sorted(predicted.items()):
        if key not in measured_keys:
            verdict(key[1], judge_function(pf, None, key[1] in headers))
    for name in sorted(set(known) - judged):
        failures.append(name)
        print("STALE: %s is listed as known wrong but is not in the report" % name)

    for w in line_failures:
        failures.append(w)
        print("WRONG LINE: " + w)

    print("hostile corpus: %d functions judged (%d against LibTorch): %d right, "
          "%d known wrong, %d failures" % (len(judged), len(measured_keys), counts["right"],
                                           counts["known wrong"], len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
