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
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_checks import check, finish, functions, row as row_of  # noqa: E402


def main():
    cli, source, cache = sys.argv[1:4]
    data = os.path.join(source, "tests", "symbolic", "data", "loaders.cpp")
    fns = functions(cli, cache, data)
    if fns is None:
        return 1

    def row(fn, name):
        return row_of(fns, fn, name)

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
    return finish()


if __name__ == "__main__":
    sys.exit(main())
