#!/usr/bin/env python3
"""Calls into code the analysis cannot see leave what they may write unknown.

Runs the CLI on each file given and reads its `// EXPECT-UNKNOWN: names` and
`// EXPECT-KNOWN: names` lines: they belong to the next function defined
after them. Every name listed as unknown must have an unknown shape with a
reason; every name listed as known must have a shape. A name missing from
the report fails too (a renamed variable must not pass silently).

Exit status 0 when every expectation holds, 1 otherwise.
"""

import argparse
import json
import re
import subprocess
import sys

EXPECT = re.compile(r"^// EXPECT-(UNKNOWN|KNOWN):\s*(.*)$")
FUNCTION = re.compile(r"^[\w:<>]+[\s*&]+(\w+)\s*\(")


def expectations(path):
    """{function: [(kind, name)]} from the file's EXPECT lines."""
    found, pending = {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = EXPECT.match(line.strip())
            if m:
                pending += [(m.group(1), n) for n in m.group(2).split()]
                continue
            m = FUNCTION.match(line)
            if m and pending and not line.rstrip().endswith(";"):
                found[m.group(1)] = pending
                pending = []
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    failures = checked = 0
    for path in args.files:
        expected = expectations(path)
        if not expected:
            print("FAIL: %s has no EXPECT lines" % path)
            failures += 1
            continue
        proc = subprocess.run([args.cli, "--format=json", "--checks=-*",
                               "--cache-dir", args.cache_dir, path],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            print("FAIL: the tool exited %d on %s" % (proc.returncode, path))
            failures += 1
            continue
        report = {f["function"]: f for f in json.loads(proc.stdout)["functions"]}
        for function, names in sorted(expected.items()):
            rows = {t["name"]: t for t in report.get(function, {}).get("tensors", [])}
            for kind, name in names:
                checked += 1
                row = rows.get(name)
                if row is None:
                    print("FAIL: %s: no row for '%s'" % (function, name))
                    failures += 1
                elif kind == "UNKNOWN" and (row.get("shape") is not None or
                                            not row.get("unknown_reason")):
                    print("FAIL: %s: '%s' should be unknown with a reason, got "
                          "shape %s" % (function, name, json.dumps(row.get("shape"))))
                    failures += 1
                elif kind == "KNOWN" and row.get("shape") is None:
                    print("FAIL: %s: '%s' should keep its shape (%s)"
                          % (function, name, row.get("unknown_reason")))
                    failures += 1
                else:
                    print("ok: %s: %s %s%s" % (function, name, kind.lower(),
                          " (" + row["unknown_reason"] + ")" if kind == "UNKNOWN" else ""))
    print("declared-only calls: %d expectations, %d failed" % (checked, failures))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
