#!/usr/bin/env python3
"""What autograd saves for backward in the report (issue 36,
docs/modules.md): the peak of a forward with gradients on counts the
tensors a backward node keeps past their C++ lifetime, and the report
names them (summary.peak_saved_for_backward, the table's "of which saved
for backward" line). The peaks themselves are checked against LibTorch by
ctest training_differential_cpu; this test checks what the report says
about them, on testdata/training/forward_only.cpp.

Usage: test_saved_for_backward.py CLI SOURCE_DIR BUILD_DIR
"""
import json
import os
import subprocess
import sys

CLI, SRC, BUILD = sys.argv[1:4]
CACHE = os.path.join(BUILD, "tests", "driver", "saved-preamble-cache")
INPUT = os.path.join("testdata", "training", "forward_only.cpp")
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def run(fmt):
    p = subprocess.run([CLI, "--cache-dir", CACHE, "--format=" + fmt, INPUT],
                       cwd=SRC, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "--format=%s exits 0 (got %d)\n%s"
          % (fmt, p.returncode, p.stderr[-2000:]))
    return p.stdout


report = json.loads(run("json") or "{}")
fns = {f["function"]: f for f in report.get("functions", [])}


def saved(name):
    f = fns.get(name, {})
    storages = {s["id"]: s for s in f.get("storages", [])}
    return [storages.get(i) for i in f.get("summary", {}).get("peak_saved_for_backward", [])]


# sigmoid's unnamed output (64x256 float32) is kept by s's graph.
s = saved("saved_sigmoid_forward")
check(len(s) == 1 and s[0] and s[0]["op"] == "sigmoid" and s[0]["bytes"] == 65536
      and s[0]["name"] is None,
      "saved_sigmoid_forward: sigmoid's 64 KiB output is saved for backward at the peak: %r" % s)
check(fns.get("saved_sigmoid_forward", {}).get("summary", {}).get("peak_live_bytes") == 524292,
      "saved_sigmoid_forward: the peak counts it (524292 B, LibTorch's)")
# gelu saves its input, the unnamed mm output (16x96 float32).
g = saved("gelu_forward_return_activation")
check(len(g) == 1 and g[0] and g[0]["op"] == "mm" and g[0]["bytes"] == 6144,
      "gelu_forward_return_activation: gelu saves the 6 KiB mm output: %r" % g)
# Nothing saved past its C++ lifetime: no field.
for name in ("nodes_that_save_nothing", "saved_by_names_to_the_end", "inference_mode_forward"):
    summary = fns.get(name, {}).get("summary", {})
    check(summary.get("peak_live_bytes") is not None and
          "peak_saved_for_backward" not in summary,
          "%s: a peak, and nothing saved past its C++ lifetime: %r" % (name, summary))

table = run("table")
check("of which saved for backward, past their C++ lifetime: 64 KiB "
      "(sigmoid's result, line 14)" in table,
      "the table names what autograd keeps at saved_sigmoid_forward's peak")

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
