#!/usr/bin/env python3
"""Truth rows for testdata/ops/<file>.cpp from real LibTorch.

Writes what Debian's LibTorch reports for every named tensor of the given
functions, in the truth files' format (one JSON object per binding: f, n,
line, shape, strides, offset, dtype, device, bytes, base; a function that
throws has {"f": ..., "throws": message}). It builds the program --verify
would (--emit-harness), runs it on the CPU, and replaces those functions'
rows in testdata/ops/<file>.truth.jsonl, keeping every other row as it is.

    tests/frontend/ops-truth.py build/driver/tensor-accountant views detach_shares

Run it after adding a function to a testdata/ops file; OpsTest then
compares the analysis with those rows (and fails on one it cannot match).
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    tool, name, functions = os.path.abspath(sys.argv[1]), sys.argv[2], set(sys.argv[3:])
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    source = "testdata/ops/%s.cpp" % name
    truth = os.path.join(root, "testdata/ops/%s.truth.jsonl" % name)
    with tempfile.TemporaryDirectory() as work:
        harness = os.path.join(work, "harness")
        subprocess.run([tool, "--no-cache", "--verify=meta", "--emit-harness=" + harness,
                        source], cwd=root, check=True, stdout=subprocess.DEVNULL)
        build = os.path.join(work, "build")
        subprocess.run(["cmake", "-S", harness, "-B", build, "-G", "Ninja"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", build], check=True, stdout=subprocess.DEVNULL)
        out = subprocess.run([os.path.join(build, "harness"), "--mode", "cpu"],
                             check=True, stdout=subprocess.PIPE, text=True).stdout
    measured = {f["function"]: f for f in json.loads(out)["functions"]}
    missing = functions - set(measured)
    if missing:
        raise SystemExit("not run by the harness: " + ", ".join(sorted(missing)))
    rows = []
    for f in sorted(functions, key=lambda n: measured[n]["tensors"][0]["line"]
                    if measured[n].get("tensors") else 0):
        m = measured[f]
        for t in m.get("tensors", []):
            rows.append({"f": f, "n": t["name"], "line": t["line"], "shape": t["shape"],
                         "strides": t["strides"], "offset": t["storage_offset"],
                         "dtype": t["dtype"], "device": t["device"],
                         "bytes": t["storage_bytes"], "base": t.get("base") or ""})
        if m.get("error"):
            rows.append({"f": f, "throws": m["error"]})
    kept = []
    with open(truth, encoding="utf-8") as old:
        for line in old:
            if line.strip() and json.loads(line)["f"] not in functions:
                kept.append(line.rstrip("\n"))
    with open(truth, "w", encoding="utf-8") as new:
        for line in kept + [json.dumps(r, separators=(",", ":")) for r in rows]:
            new.write(line + "\n")
    print("%s: %d rows for %s" % (truth, len(rows), ", ".join(sorted(functions))))


if __name__ == "__main__":
    main()
