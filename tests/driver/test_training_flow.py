#!/usr/bin/env python3
"""backward() and step() the analysis cannot count once (issue 36,
docs/modules.md): in a branch that may not run, in a loop whose count is
not a constant (a constant count is unrolled), a second backward through a graph the first released
(LibTorch throws). Each function of testdata/training-flow/flow.cpp must
have unknown totals with the reason, never the figures of one pass; the
last function checks the same code without the hazard is answered, so the
test fails if the reasons come from elsewhere.

Usage: test_training_flow.py CLI SOURCE_DIR BUILD_DIR
"""
import json
import os
import subprocess
import sys

CLI, SRC, BUILD = sys.argv[1:4]
CACHE = os.path.join(BUILD, "tests", "driver", "flow-preamble-cache")
INPUT = os.path.join("testdata", "training-flow", "flow.cpp")
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


p = subprocess.run([CLI, "--cache-dir", CACHE, "--format=json", INPUT],
                   cwd=SRC, capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "exits 0 (got %d)\n%s" % (p.returncode, p.stderr[-2000:]))
report = json.loads(p.stdout or "{}")
fns = {f["function"]: f["summary"] for f in report.get("functions", [])}

expected = {
    "backward_in_a_branch": "runs in a branch",
    "backward_in_a_loop_retaining_the_graph": "runs in a loop",
    "step_in_a_branch": "runs in a branch",
    "second_backward_without_retain_graph": "already released what it saved",
}
for name, reason in expected.items():
    s = fns.get(name)
    check(s is not None, "%s is in the report" % name)
    if s is None:
        continue
    check(s.get("peak_live_bytes") is None,
          "%s: the peak is unknown (got %s)" % (name, s.get("peak_live_bytes")))
    check(reason in (s.get("unknown_reason") or ""),
          "%s: the reason says '%s' (got %r)" % (name, reason, s.get("unknown_reason")))
s = fns.get("the_same_step_straight", {})
check(isinstance(s.get("peak_live_bytes"), int),
      "the_same_step_straight is answered (got %r, %r)"
      % (s.get("peak_live_bytes"), s.get("unknown_reason")))

s = fns.get("loop_too_long_to_sum", {})
check(s.get("peak_live_bytes") == 4096 and s.get("live_bytes_nothing_freed") is None and
      "more than int64 counts" in (s.get("unknown_reason") or ""),
      "a loop of 4e18 iterations: the peak of one, the total unknown with the reason "
      "(got %r, %r, %r)" % (s.get("peak_live_bytes"), s.get("live_bytes_nothing_freed"),
                             s.get("unknown_reason")))

# --cuda-available answers torch::cuda::is_available() for a device picked
# by it (testdata/training/tutorial.cpp), stated among the assumptions;
# without it that device is unknown; a value that is not yes or no is a
# usage error.
TUTORIAL = os.path.join("testdata", "training", "tutorial.cpp")


def tutorial(*flags):
    p = subprocess.run([CLI, "--cache-dir", CACHE, "--format=json", *flags, TUTORIAL],
                       cwd=SRC, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "tutorial %s exits 0 (got %d)" % (flags, p.returncode))
    return json.loads(p.stdout or "{}").get("functions", [{}])[0]


for flag, device, answered in [("--cuda-available=no", "cpu", True),
                               ("--cuda-available=yes", "cuda", False), (None, None, False)]:
    f = tutorial(*([flag] if flag else []))
    rows = {t["name"]: t for t in f.get("tensors", [])}
    check(rows.get("x_train", {}).get("device") == device,
          "%s: x_train is on %s (got %r)" % (flag, device, rows.get("x_train", {}).get("device")))
    peak = f.get("summary", {}).get("peak_live_bytes")
    check(isinstance(peak, int) == answered,
          "%s: the peak is %s (got %r)" % (flag, "answered" if answered else "unknown", peak))
    stated = [a for a in f.get("assumptions", []) if "is_available" in a]
    want = ["torch::cuda::is_available() == %s" % ("false" if device == "cpu" else "true")] \
        if flag else []
    check(stated == want, "%s: the assumption is stated (got %r)" % (flag, stated))
p = subprocess.run([CLI, "--cuda-available=maybe", TUTORIAL], cwd=SRC,
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 2 and "--cuda-available takes yes or no" in p.stderr,
      "--cuda-available=maybe is a usage error (got %d: %s)" % (p.returncode, p.stderr))

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("all checks passed")
