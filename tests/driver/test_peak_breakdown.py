#!/usr/bin/env python3
"""The peak by what its storage is (issue 36): parameters, gradients,
optimizer state, what only autograd holds, temporaries and the other
tensors, in the JSON's summary.peak_breakdown, the table's "at the peak"
line and the HTML's facts line, on testdata/training/optim.cpp and
forward_only.cpp (and lifetimes.cpp, one without). The peaks themselves are checked against LibTorch by
ctest training_differential_cpu; this test checks that the parts add up to
them and that each storage lands in its part.

Usage: test_peak_breakdown.py CLI SOURCE_DIR BUILD_DIR
"""
import json
import os
import subprocess
import sys

CLI, SRC, BUILD = sys.argv[1:4]
CACHE = os.path.join(BUILD, "tests", "driver", "breakdown-preamble-cache")
INPUTS = [os.path.join("testdata", "training", f)
          for f in ("optim.cpp", "forward_only.cpp", "lifetimes.cpp")]
PARTS = ("parameters", "gradients", "optimizer_state", "saved_for_backward",
         "temporaries", "other_tensors")
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def run(fmt):
    p = subprocess.run([CLI, "--cache-dir", CACHE, "--format=" + fmt] + INPUTS,
                       cwd=SRC, capture_output=True, text=True, timeout=900)
    check(p.returncode == 0, "--format=%s exits 0 (got %d)\n%s"
          % (fmt, p.returncode, p.stderr[-2000:]))
    return p.stdout


report = json.loads(run("json") or "{}")
fns = {f["function"]: f for f in report.get("functions", [])}

# Every breakdown adds up to its peak, part by part known.
with_parts = 0
for name, f in sorted(fns.items()):
    summary = f.get("summary", {})
    parts = summary.get("peak_breakdown")
    if parts is None:
        continue
    with_parts += 1
    check(sorted(parts) == sorted(PARTS), "%s: the six parts: %r" % (name, sorted(parts)))
    check(all(isinstance(parts.get(p), int) for p in PARTS)
          and sum(parts.get(p, 0) for p in PARTS) == summary.get("peak_live_bytes"),
          "%s: the parts add up to the peak %r: %r"
          % (name, summary.get("peak_live_bytes"), parts))
check(with_parts >= 10, "at least 10 functions have a breakdown (%d)" % with_parts)

# sgd_momentum_step: Linear(32, 8) is 1024 + 32 B of parameters; backward
# gives each its .grad and the first step() clones each gradient as its
# momentum buffer; x (16x32) and y (16x8) and the loss's unreduced buffer
# (16x8, the 0-dim loss's storage) are the other tensors; what the graph
# saved went with backward(). The peak is the step's last clone.
sgd = fns.get("sgd_momentum_step", {}).get("summary", {})
check(sgd.get("peak_breakdown") == {
    "parameters": 1056, "gradients": 1056, "optimizer_state": 1056,
    "saved_for_backward": 0, "temporaries": 0, "other_tensors": 2048 + 512 + 512},
    "sgd_momentum_step: parameters, gradients and momentum buffers of 1056 B "
    "each: %r" % sgd.get("peak_breakdown"))

# saved_sigmoid_forward: sigmoid's unnamed output (64x256 float32) only
# autograd holds; w, made with requires_grad, is a parameter.
fwd = fns.get("saved_sigmoid_forward", {}).get("summary", {}).get("peak_breakdown", {})
check(fwd.get("saved_for_backward") == 65536 and fwd.get("gradients") == 0
      and fwd.get("parameters", 0) > 0,
      "saved_sigmoid_forward: 64 KiB saved for backward, a parameter, no "
      "gradient: %r" % fwd)

# A function with no parameter, gradient, state or saved tensor: none.
plain = fns.get("layer_norm_functional_3d", {}).get("summary", {})
check(plain.get("peak_live_bytes") is not None and "peak_breakdown" not in plain,
      "layer_norm_functional_3d: a peak and no breakdown: %r" % plain)

table = run("table")
check("    at the peak: parameters 1.03 KiB (1056 B), gradients 1.03 KiB "
      "(1056 B), optimizer state 1.03 KiB (1056 B), other tensors 3 KiB\n" in table,
      "the table's line for sgd_momentum_step names the non-zero parts")

html = run("html")
check("parameters 1.03 KiB (1056 B), gradients 1.03 KiB (1056 B), optimizer "
      "state 1.03 KiB (1056 B), other tensors 3 KiB" in html,
      "the HTML's facts line has the breakdown")

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
