#!/usr/bin/env python3
"""How much of a real LibTorch code base the tool answers for.

Runs tensor-accountant --format=json on every .cpp, .cc and .cu file under
a directory, one process per file (so a crash is counted, not fatal), and
prints:
files, files that failed to compile, crashes, functions, named tensors
(undefined ones, `torch::Tensor out;` before its assignment, apart), the
share with a shape and the share with storage bytes, diagnostics, and
the most common unknown reasons. With --diagnostics every diagnostic is
listed so a person can judge it.

    bench/corpus-coverage.py build/driver/tensor-accountant /path/to/repo \
        [--diagnostics] [--json out.json] [-- extra compiler flags]

Every directory named `include` in the tree is added with -I (how most
LibTorch example repositories lay out their headers), the one nearest
the file first; pass more flags after `--`. Nothing is written into the analysed tree.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tool")
    ap.add_argument("root")
    ap.add_argument("--diagnostics", action="store_true",
                    help="list every diagnostic")
    ap.add_argument("--json", help="write the per-file results here")
    ap.add_argument("--unanswered", action="store_true",
                    help="list every named tensor without a shape, with "
                         "its line and reason")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--cache-dir",
                    help="the tool's preamble cache (one LibTorch parse shared by the files)")
    args = ap.parse_args(argv)

    files, includes = [], []
    for d, subdirs, names in os.walk(args.root):
        subdirs[:] = sorted(s for s in subdirs if not s.startswith("."))
        if os.path.basename(d) == "include":
            includes.append(d)
        # .cu too: the tool analyses CUDA host code (docs/cuda.md).
        files += [os.path.join(d, n) for n in sorted(names)
                  if n.endswith((".cpp", ".cc", ".cu"))]

    def flags_for(source):
        # A file's own project's headers first: several examples in one
        # tree often have headers of the same name (include/nnet.h).
        def closeness(inc):
            return -len(os.path.commonpath([source, os.path.dirname(inc)]))
        return ["-std=c++17"] + ["-I" + i for i in sorted(includes, key=closeness)] + extra

    totals = collections.Counter()
    reasons = collections.Counter()
    diagnostics, per_file, unanswered = [], [], []
    t0 = time.time()
    for f in files:
        cmd = [args.tool, "--format=json"]
        if args.cache_dir:
            cmd += ["--cache-dir", args.cache_dir]
        cmd += [f, "--"] + flags_for(f)
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=args.timeout)
        except subprocess.TimeoutExpired:
            totals["timeouts"] += 1
            per_file.append({"file": f, "status": "timeout"})
            continue
        totals["files"] += 1
        if p.returncode < 0 or p.returncode >= 128:
            totals["crashes"] += 1
            per_file.append({"file": f, "status": "crash",
                             "rc": p.returncode, "stderr": p.stderr[-2000:]})
            continue
        try:
            report = json.loads(p.stdout)
        except ValueError:
            totals["no_report"] += 1
            per_file.append({"file": f, "status": "no report",
                             "rc": p.returncode, "stderr": p.stderr[-2000:]})
            continue
        if p.returncode != 0:
            totals["files_not_compiling"] += 1
        entry = {"file": f, "status": "ok", "rc": p.returncode,
                 "tensors": 0, "shape": 0, "bytes": 0}
        for fn in report.get("functions", []):
            totals["functions"] += 1
            for t in fn.get("tensors", []):
                # `torch::Tensor out;` holds no tensor until assigned: a
                # known state, counted apart, not an unanswered row.
                if t.get("kind") == "undefined":
                    totals["undefined"] += 1
                    continue
                totals["tensors"] += 1
                entry["tensors"] += 1
                if t.get("shape") is not None:
                    totals["with_shape"] += 1
                    entry["shape"] += 1
                if t.get("storage_bytes") is not None:
                    totals["with_bytes"] += 1
                    entry["bytes"] += 1
                r = t.get("unknown_reason") or t.get("reason")
                if r and t.get("shape") is None:
                    reasons[r] += 1
                if t.get("shape") is None:
                    unanswered.append("%s:%s: %s in %s: %s" % (
                        f, t.get("line"), t.get("name"), fn.get("function"),
                        r or "(no reason given)"))
        for d in report.get("diagnostics", []):
            totals["diagnostics"] += 1
            diagnostics.append(d)
        per_file.append(entry)
    elapsed = time.time() - t0

    def share(n):
        return "%d (%.0f%%)" % (n, 100.0 * n / totals["tensors"]) \
            if totals["tensors"] else "0"

    print("root: %s" % args.root)
    print("files: %d (not compiling: %d, crashes: %d, timeouts: %d, "
          "no report: %d)" % (totals["files"], totals["files_not_compiling"],
                              totals["crashes"], totals["timeouts"],
                              totals["no_report"]))
    print("functions: %d" % totals["functions"])
    print("named tensors: %d (and %d undefined: declared without a value, "
          "moved from)" % (totals["tensors"], totals["undefined"]))
    print("with a shape: %s" % share(totals["with_shape"]))
    print("with storage bytes: %s" % share(totals["with_bytes"]))
    print("diagnostics: %d" % totals["diagnostics"])
    print("wall time: %.0f s" % elapsed)
    if reasons:
        print("most common reasons a shape is unknown:")
        for r, n in reasons.most_common(12):
            print("  %4d  %s" % (n, r))
    if args.diagnostics:
        for d in diagnostics:
            print("%s:%s:%s: %s [%s]" % (d.get("file"), d.get("line"),
                                         d.get("column"), d.get("message"),
                                         d.get("check")))
    if args.unanswered:
        print("named tensors without a shape:")
        for u in unanswered:
            print("  " + u)
    for e in per_file:
        if e["status"] != "ok":
            print("%s: %s (rc %s)" % (e["file"], e["status"], e.get("rc")))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"totals": totals, "files": per_file,
                       "diagnostics": diagnostics,
                       "reasons": reasons.most_common()}, out, indent=1)
    return 1 if totals["crashes"] or totals["timeouts"] else 0


if __name__ == "__main__":
    sys.exit(main())
