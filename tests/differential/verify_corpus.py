#!/usr/bin/env python3
"""Runs `tensor-accountant --verify=cpu` over a corpus (the hostile corpus
testdata/hostile/, the seed and testdata/ops/) and judges it by the rules of
tests/hostile/check_corpus.py, with LibTorch measured live instead of read
from a checked-in truth (issue 10, "Done when": allocation and peak
compared, 0 wrong numbers).

One harness is built for all files. For every function the harness runs,
each verdict the tool prints (tensor fields, throws, peak live bytes and
allocated bytes, the latter two allowing LibTorch's 16 bytes per measured
allocation for scalar wrappers) must be a match or unverified. A function
the harness stopped at its memory limit counts as wrong: its prediction was
under --verify-max-bytes, LibTorch's need was not.

Functions wrong today are listed in a known-wrong file (for the hostile
corpus the same file check_corpus.py reads, so it stays the one record).
The list is strict both ways: an unlisted function with a mismatch fails,
and a listed function that --verify now finds right fails too ("remove it
from the list"), unless its line says `[verify-blind]`: its wrong answer is
one --verify cannot see (a function missing from the table, a reason
missing), which check_corpus.py still judges.

The rules that keep a verify run safe are checked as well: no function may
crash or time out (none of the corpora does either), and no function's
measured peak may pass --verify-max-bytes (the overflowing shapes must
throw or be stopped, never allocate for real).

With --peaks (the training corpus), the CLI also runs once without
--verify (same parse cache) and the test prints, per function the harness
can call, the predicted peak against the measured one, or the tool's reason
for an unknown peak; an unknown peak without a reason fails, and so does a
share of answered peaks under --min-answered-peaks. --verify=cpu runs only
functions whose peak is predicted, so an unknown one has no measurement;
with --peaks a listed function that did not run fails too (its answer is
unknown now: remove it from the list).

Exit status 0 when every function is right or listed, 1 otherwise.
"""

import argparse
import json
import os
import subprocess
import sys

MAX_BYTES = 1 << 30
BLIND_TAG = "[verify-blind]"


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


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--known-wrong", required=True)
    ap.add_argument("--name", default="corpus", help="what to call the corpus in the summary")
    ap.add_argument("--peaks", action="store_true",
                    help="print each function's predicted and measured peak and the share "
                         "answered; an unknown peak must have a reason")
    ap.add_argument("--min-answered-peaks", type=int, default=0, metavar="PERCENT",
                    help="with --peaks: fail when fewer functions have their peak answered")
    ap.add_argument("--tool-arg", action="append", default=[], metavar="ARG",
                    help="an option for every run of the tool (repeatable), such as "
                         "--cuda-available=no on a machine without CUDA")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    known = load_known_wrong(args.known_wrong)

    cmd = [args.cli, "--cache-dir", args.cache_dir, "--verify=cpu", "--format=json",
           "--verify-max-bytes=%d" % MAX_BYTES, "--verify-timeout=120"] + args.tool_arg + args.files
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(proc.stderr)
    # 0: everything verified matches; 1: a mismatch (judged below).
    if proc.returncode not in (0, 1):
        raise SystemExit("FAIL: %s exited %d" % (" ".join(cmd), proc.returncode))
    report = json.loads(proc.stdout)
    if report.get("mode") != "cpu":
        raise SystemExit("FAIL: the harness ran in mode %r, not cpu" % report.get("mode"))

    failures = []
    counts = {"right": 0, "known wrong": 0, "blind": 0}
    ran = set()
    # A function with parameters runs once per draw of inputs: it is judged
    # once, wrong when any of its draws is.
    wrong_by_name = {}
    order = []
    for fn in report["functions"]:
        name = fn["function"]
        if name not in wrong_by_name:
            wrong_by_name[name] = []
            order.append(name)
        ran.add(name)
        wrong = wrong_by_name[name]
        draw = (" with " + fn["inputs"] + ":") if fn.get("inputs") else ""
        for v in fn["verdicts"]:
            if v["result"] == "mismatch":
                what = v["field"] if not v["name"] else "%s (line %d) %s" % (
                    v["name"], v["line"], v["field"])
                wrong.append("%s%s: predicted %s, measured %s %s"
                             % (draw, what, v["predicted"], v["measured"],
                                ("(" + v["note"] + ")") if v["note"] else ""))
        error = fn.get("error") or ""
        if fn.get("stopped"):
            wrong.append("stopped by the harness (%s): %s" % (fn["stopped"], error))
        unsafe = [e for e in ("crashed", "timed out") if error.startswith(e)]
        if unsafe:
            failures.append(name)
            print("UNSAFE: %s: %s" % (name, error))
        for v in fn["verdicts"]:
            if v["field"] == "peak_live_bytes" and v["measured"].isdigit() and \
                    int(v["measured"]) > MAX_BYTES:
                failures.append(name)
                print("UNSAFE: %s held %s bytes, over --verify-max-bytes"
                      % (name, v["measured"]))
    for name in order:
        wrong = wrong_by_name[name]
        listed = known.get(name)
        if wrong and listed:
            counts["known wrong"] += 1
            print("known wrong: %s [%s]" % (name, listed))
        elif wrong:
            failures.append(name)
            print("WRONG: %s" % name)
        elif listed and BLIND_TAG in listed:
            counts["blind"] += 1
            print("known wrong, invisible to --verify: %s [%s]" % (name, listed))
        elif listed:
            failures.append(name)
            print("NOW RIGHT under --verify: %s is listed as known wrong [%s]; remove it "
                  "from %s (or tag it %s if --verify cannot see what is wrong)"
                  % (name, listed, args.known_wrong, BLIND_TAG))
        else:
            counts["right"] += 1
        for w in wrong:
            print("    " + w)
    for s in report["not_verified"]:
        print("not run: %s: %s" % (s["function"], s["reason"]))
    if args.peaks:
        # A listed function whose peak is now unknown (so the harness no
        # longer runs it) is no longer wrong either.
        for name, listed in known.items():
            if name in ran or BLIND_TAG in listed:
                continue
            failures.append(name)
            print("NOT RUN ANY MORE: %s is listed as known wrong [%s] but --verify=cpu did "
                  "not run it (its peak is unknown now, or it left the corpus); remove it "
                  "from %s" % (name, listed, args.known_wrong))

    if args.peaks:
        failures += report_peaks(args, report)
    print("%s under --verify=cpu: %d functions ran: %d right, %d known wrong, "
          "%d known wrong where --verify cannot see it; %d not run; %d failures"
          % (args.name, len(ran), counts["right"], counts["known wrong"], counts["blind"],
             len(report["not_verified"]), len(failures)))
    return 1 if failures else 0


def report_peaks(args, verified):
    """The --peaks table and share; returns the names that fail it."""
    cmd = [args.cli, "--cache-dir", args.cache_dir, "--format=json"] + args.tool_arg + args.files
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit("FAIL: %s exited %d" % (" ".join(cmd), proc.returncode))
    predicted = {f["function"]: f for f in json.loads(proc.stdout)["functions"]}
    # The functions the harness can call: those it ran, and those it left
    # out only because their peak is unknown.
    measured = {}
    for fn in verified["functions"]:
        for v in fn["verdicts"]:
            if v["field"] == "peak_live_bytes":
                measured[fn["function"]] = v
        measured.setdefault(fn["function"], None)
    callable_names = list(measured)
    callable_names += [s["function"] for s in verified["not_verified"]
                       if "predicted peak unknown" in s["reason"]]
    failures = []
    answered = 0
    print("peak per function (predicted against measured; --verify=cpu runs only "
          "functions whose peak is predicted):")
    for name in callable_names:
        summary = predicted.get(name, {}).get("summary", {})
        peak = summary.get("peak_live_bytes")
        v = measured.get(name)
        if peak is not None:
            answered += 1
            got = v["measured"] if v else "not measured"
            diff = ""
            # A formula over the parameters' sizes is measured per draw.
            if (v and v["measured"].isdigit() and isinstance(peak, int)
                    and int(v["measured"]) != peak):
                diff = " (%+d B)" % (int(v["measured"]) - peak)
            print("  %-36s predicted %10s  measured %10s%s  line %s"
                  % (name, peak, got, diff, summary.get("peak_line", "?")))
            continue
        reason = summary.get("unknown_reason", "")
        print("  %-36s predicted    unknown  not run: %s" % (name, reason or "NO REASON"))
        if not reason:
            failures.append(name)
            print("UNKNOWN WITHOUT A REASON: %s" % name)
    total = len(callable_names)
    share = 100.0 * answered / total if total else 0.0
    print("%s: peak answered for %d of %d functions (%.0f%%), unknown with a reason for %d"
          % (args.name, answered, total, share, total - answered - len(failures)))
    if share < args.min_answered_peaks:
        failures.append("(share)")
        print("FAIL: %.0f%% of the peaks answered, under --min-answered-peaks %d%%"
              % (share, args.min_answered_peaks))
    return failures


if __name__ == "__main__":
    sys.exit(main())
