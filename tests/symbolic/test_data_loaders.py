#!/usr/bin/env python3
"""Data loaders the differential test cannot check (testdata/modules/
data_loaders.cpp checks the full batches against real LibTorch): through
the real tool on tests/symbolic/data/loaders.cpp, JSON output.

  - a batch size that does not divide the dataset: the batch dimension is
    the symbol batch.data.size(0), the rest of the shape and the bytes are
    answered in it;
  - a batch size the analysis cannot derive: the same symbol;
  - a Lambda transform, a loader without Stack<>: unknown, with the reason;
  - every function that builds a dataset has unknown totals (the dataset
    holds storage the totals do not follow).

usage: test_data_loaders.py CLI SOURCE_DIR CACHE_DIR
"""
import json
import os
import subprocess
import sys

FAILURES = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        FAILURES.append(what)
    return ok


def main():
    cli, source, cache = sys.argv[1:4]
    data = os.path.join(source, "tests", "symbolic", "data", "loaders.cpp")
    proc = subprocess.run([cli, "--format=json", "--checks=-*", "--cache-dir", cache, data],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=900)
    if not check(proc.returncode in (0, 1), "the tool exits 0 or 1 (got %d): %s"
                 % (proc.returncode, proc.stderr[-2000:])):
        return 1
    fns = {f["function"]: f for f in json.loads(proc.stdout)["functions"]}

    def row(fn, name):
        for t in fns.get(fn, {}).get("tensors", []):
            if t["name"] == name:
                return t
        check(False, "%s has a row %s" % (fn, name))
        return {}

    short = row("short_last_batch", "images")
    check(short.get("shape") == ["batch.data.size(0)", 784],
          "short last batch: images is (batch.data.size(0), 784): %s" % short.get("shape"))
    check(short.get("dtype") == "float32", "short last batch: float32")
    labels = row("short_last_batch", "labels")
    check(labels.get("shape") == ["batch.data.size(0)"] and labels.get("dtype") == "int64",
          "short last batch: labels is (batch.data.size(0),) int64: %s" % labels)
    check(labels.get("storage_bytes") == "batch.data.size(0) * 8",
          "short last batch: labels' bytes in the symbol: %s" % labels.get("storage_bytes"))
    n = row("unknown_batch_size", "images")
    check(n.get("shape") == ["batch.data.size(0)", 1, 28, 28],
          "batch size n: images is (batch.data.size(0), 1, 28, 28): %s" % n.get("shape"))

    lam = row("lambda_transform", "images")
    check(lam.get("shape") is None and "Lambda" in (lam.get("unknown_reason") or ""),
          "a Lambda transform is not followed, and says so: %s" % lam.get("unknown_reason"))
    first = row("unstacked", "first")
    check(first.get("shape") is None, "without Stack<>: unknown")

    for name, f in sorted(fns.items()):
        if "::lambda" in name:
            continue  # the transform's own body
        s = f["summary"]
        check(s.get("peak_live_bytes") is None and s.get("live_bytes_nothing_freed") is None,
              "%s: totals unknown (%s)" % (name, s.get("unknown_reason")))
    check("holds storage" in (fns["unstacked"]["summary"].get("unknown_reason") or ""),
          "unstacked: the dataset's storage is the reason: %s"
          % fns["unstacked"]["summary"].get("unknown_reason"))
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
