#!/usr/bin/env python3
"""--assume SYM=VALUE and CheckOptions tensor-accountant.Assume, through
the real CLI on tests/driver/assume.cpp (issue 12).

Every number is derived here, independently of the tool: byte counts from
the sizes (2 * B * T * C for a float16 copy), JSON formulas evaluated with
tests/symbolic/cppexpr.py (written from the report's contract).

1. Bad values (no symbol, not a number, negative, beyond int64) exit 2 with
   a message naming them, on the command line and in --config; no crash.
2. Table: the formula and its number (`2·B·T·C B (128 MiB at B=16, ...)`).
3. JSON: assumed_values; every byte formula's `*_assumed` is its value under
   the values; diagnostics carry bytes_assumed; no `*_assumed` without values.
4. Diagnostics append the number; torch-memory-budget fires on a bound peak
   over MaxPeakBytes, not on one under it, and as before on a partly bound one.
5. Values that break a stated fact (C % n_heads) or an assumption
   (x.size(1) >= 2) warn on stderr and give no numbers for that function.
6. A value that names no symbol warns on stderr (exit 0).
7. The config's values, and --assume over them.
8. A value a checked fact requires (TORCH_CHECK(x.size(1) == 1), then
   --assume x.size(1)=1) is accepted: no assumption contradicts the fact.

usage: test_assume.py <tensor-accountant> <source dir> <build dir>
"""
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile

TOOL, SRC, BUILD = [os.path.abspath(a) for a in sys.argv[1:4]]
sys.path.insert(0, os.path.join(SRC, "tests/symbolic"))
import cppexpr  # noqa: E402

FIXTURE = os.path.join(SRC, "tests/driver/assume.cpp")
CACHE = ["--cache-dir", os.path.join(BUILD, "tests/driver/assume-cache")]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, cwd=None):
    return subprocess.run([TOOL] + CACHE + args, capture_output=True, text=True,
                          timeout=900, cwd=cwd)


def crashed(p):
    return p.returncode < 0 or "Stack dump" in p.stderr or "PLEASE submit" in p.stderr


def function(report, name):
    for f in report["functions"]:
        if f["function"] == name:
            return f
    raise AssertionError("no function %s in the report" % name)


def mib(n):
    assert n % (1 << 20) == 0
    return "%d MiB" % (n >> 20)


B, T, C, H = 16, 1024, 4096, 8
QC_BYTES = 2 * B * T * C  # float16 (B, C, T), contiguous copy
VALUES = ["--assume", "B=%d" % B, "--assume", "T=%d" % T,
          "--assume", "x.size(2)=%d" % C, "--assume", "n_heads=%d" % H]

# 1. Bad values.
for bad in ["=3", "B=abc", "B=-1", "B=99999999999999999999", "B", "B=", "2*B=3"]:
    p = run(["--assume", bad, FIXTURE])
    check(p.returncode == 2 and not crashed(p) and "--assume" in p.stderr and
          "'%s'" % bad in p.stderr,
          "--assume %s is a usage error naming it (exit 2):\n%s" % (bad, p.stderr))
p = run(["--config", "{CheckOptions: {tensor-accountant.Assume: 'B=16, T=x'}}", FIXTURE])
check(p.returncode == 2 and "tensor-accountant.Assume" in p.stderr and "'T=x'" in p.stderr,
      "a bad tensor-accountant.Assume in --config exits 2:\n" + p.stderr)

# 2. Table.
p = run(VALUES + [FIXTURE])
check(p.returncode == 0 and not p.stderr, "the table with values runs quietly:\n" + p.stderr)
expected = "2·B·T·C B (%s at B=%d, T=%d, C=%d)" % (mib(QC_BYTES), B, T, C)
qc_rows = [l for l in p.stdout.splitlines() if l.strip().startswith("qc ")]
check(len(qc_rows) == 1 and expected in qc_rows[0],
      "the table gives qc's formula and number %r:\n%s" % (expected, p.stdout))
check("peak live storage (C++ lifetimes): " + expected in p.stdout,
      "the peak has its number too:\n" + p.stdout)
check("warning: contiguous() copies" in p.stdout and
      "(%s at x.size(0)=%d, x.size(1)=%d, x.size(2)=%d)" % (mib(QC_BYTES), B, T, C)
      in p.stdout,
      "the contiguous-copy warning carries the number:\n" + p.stdout)

# 3. JSON.
plain = json.loads(run(["--format=json", FIXTURE]).stdout)
check("assumed" not in json.dumps(plain),
      "without values the report has no assumed fields")
p = run(VALUES + ["--format=json", FIXTURE])
report = json.loads(p.stdout)
f = function(report, "split_heads")
check(f.get("assumed_values") == {"x.size(0)": B, "x.size(1)": T, "x.size(2)": C,
                                  "n_heads": H},
      "assumed_values lists the values by C++ name: %s" % f.get("assumed_values"))
check("assumed_values_violate" not in f, "no violation reported for valid values")
env = {"x": cppexpr.TensorValue([B, T, C], "float16"), "n_heads": H}
qc = [t for t in f["tensors"] if t["name"] == "qc"][0]
check(qc.get("storage_bytes_assumed") == QC_BYTES,
      "qc's storage_bytes_assumed is 2*B*T*C = %d: %s" % (QC_BYTES, qc))
compared = 0


def compare_assumed(obj, where):
    global compared
    for key, value in list(obj.items()):
        if key.endswith("_assumed") or not isinstance(value, str):
            continue
        if key + "_assumed" not in obj:
            if key.endswith("bytes"):
                check(False, "%s: %s has no %s_assumed" % (where, key, key))
            continue
        want = cppexpr.evaluate(value, env)
        check(obj[key + "_assumed"] == want,
              "%s: %s = %s is %d under the values, the report says %s"
              % (where, key, value, want, obj[key + "_assumed"]))
        compared += 1


for t in f["tensors"]:
    compare_assumed(t, "tensor " + t["name"])
for o in f["ops"]:
    compare_assumed(o, "op at line %d" % o["line"])
for s in f["storages"]:
    compare_assumed(s, "storage %d" % s["id"])
compare_assumed(f["summary"], "summary")
check(compared >= 6, "compared %d formulas with their numbers" % compared)
check(f["summary"].get("peak_live_bytes_assumed") == QC_BYTES,
      "the peak is qc's copy: %s" % f["summary"])
diags = [d for d in report["diagnostics"] if d["check"] == "torch-contiguous-copy"
         and d["line"] == 13]
check(len(diags) == 1 and diags[0].get("bytes_assumed") == QC_BYTES and
      diags[0]["bytes"] is None,
      "the contiguous-copy diagnostic has bytes_assumed %d: %s" % (QC_BYTES, diags))
t = function(report, "transpose_copy")
check("assumed_values" not in t and "_assumed" not in json.dumps(t),
      "a function none of whose symbols is bound has no assumed fields: %s" % t)

# 4. torch-memory-budget on the bound peak (default MaxPeakBytes: 8 GiB).
def budget(values):
    p = run(values + ["--format=json", FIXTURE])
    r = json.loads(p.stdout)
    return [d for d in r["diagnostics"] if d["check"] == "torch-memory-budget"]


big = 65536
# copy_'s block buffer for a transposed float matrix of 60 * 60 elements or
# more on the CPU (the fixture checks the device): 60 * 60 * 4 bytes.
BLOCK = 60 * 60 * 4
d = budget(["--assume", "a.size(0)=%d" % big, "--assume", "a.size(1)=%d" % big])
check(len(d) == 1 and d[0].get("bytes_assumed") == 4 * big * big + BLOCK and
      "(%d.00 GiB (%d B) at a.size(0)=%d, a.size(1)=%d)"
      % (4 * big * big >> 30, 4 * big * big + BLOCK, big, big)
      in d[0]["message"] and "transpose_copy" in d[0]["message"],
      "a bound peak of 16 GiB is over the 8 GiB budget: %s" % d)
check(budget(["--assume", "a.size(0)=1024", "--assume", "a.size(1)=1024"]) == [],
      "a bound peak of 4 MiB is under the budget")
check(budget(["--assume", "a.size(0)=%d" % big]) == [],
      "a partly bound peak is no finding, as without values")
p = run(["--assume", "a.size(0)=1024", "--assume", "a.size(1)=1024",
         "--config", "{CheckOptions: {torch-memory-budget.MaxPeakBytes: '1048576'}}",
         "--format=json", FIXTURE])
d = [x for x in json.loads(p.stdout)["diagnostics"] if x["check"] == "torch-memory-budget"]
check(len(d) == 1 and d[0].get("bytes_assumed") == 4 * 1024 * 1024 + BLOCK,
      "4 MiB is over a 1 MiB budget: %s" % d)

# 5. Values that break a fact or an assumption.
p = run(["--assume", "B=16", "--assume", "T=1", "--assume", "C=12",
         "--assume", "n_heads=8", FIXTURE])
check(p.returncode == 0 and "warning:" in p.stderr and "split_heads" in p.stderr and
      "x.size(1) >= 2 (assumed by the analysis)" in p.stderr and
      "x.size(2) % n_heads == 0 (checked by the code" in p.stderr,
      "broken facts and assumptions warn, naming them:\n" + p.stderr)
block = p.stdout.split("transpose_copy")[0]
check(not re.search(r"\(\d+(\.\d+)? [KMGTPE]?i?B( \(\d+ B\))? at ", block) and
      "no numbers at B=16, T=1, C=12, n_heads=8" in block,
      "the function's table gives no numbers and says why:\n" + block)
r = json.loads(run(["--assume", "T=1", "--assume", "B=4", "--format=json", FIXTURE]).stdout)
f = function(r, "split_heads")
check(f.get("assumed_values_violate") == ["x.size(1) >= 2"] and
      "_assumed" not in json.dumps(f["tensors"]) + json.dumps(f["summary"]),
      "JSON: assumed_values_violate, and no numbers: %s" % f)

# 6. A value for no symbol.
p = run(["--assume", "Q=3", "--assume", "B=2", FIXTURE])
check(p.returncode == 0 and "warning: --assume Q=3 names no symbol" in p.stderr and
      "B=2" not in p.stderr,
      "--assume Q=3 warns that nothing has that symbol:\n" + p.stderr)

# 7. The config file, and the command line over it.
work = tempfile.mkdtemp(prefix="tma-assume-")
shutil.copy(FIXTURE, work)
with open(os.path.join(work, ".clang-tidy"), "w") as out:
    out.write("Checks: '-*,torch-contiguous-copy'\nCheckOptions:\n"
              "  tensor-accountant.Assume: 'B=%d, T=%d; x.size(2)=%d, n_heads=%d'\n"
              % (B, T, C, H))
p = run(["assume.cpp"], cwd=work)
check(p.returncode == 0 and expected in p.stdout,
      "the .clang-tidy's values give the numbers:\n" + p.stdout + p.stderr)
p = run(["--assume", "B=%d" % (2 * B), "assume.cpp"], cwd=work)
check("(%s at B=%d, T=%d, C=%d)" % (mib(2 * QC_BYTES), 2 * B, T, C) in p.stdout,
      "--assume B=32 wins over the config's B=16:\n" + p.stdout)
shutil.rmtree(work)

# 8. The value a check requires.
N1, H1, W1 = 2, 3, 5
ONE = ["--assume", "x.size(0)=%d" % N1, "--assume", "x.size(1)=1",
       "--assume", "x.size(2)=%d" % H1, "--assume", "x.size(3)=%d" % W1]
r = json.loads(run(ONE + ["--format=json", FIXTURE]).stdout)
f = function(r, "single_channel")
check(not any(re.match(r"x\.size\(1\) >= ", a) for a in f.get("assumptions", [])) and
      not f.get("assumed_values_violate"),
      "single_channel: nothing assumed against x.size(1) == 1: %s" % f)
p = run(ONE + [FIXTURE])
block = p.stdout.split("single_channel")[1] if "single_channel" in p.stdout else ""
check(p.returncode == 0 and "single_channel" not in p.stderr and
      "(%d B at " % (4 * N1 * H1 * W1) in block,
      "--assume x.size(1)=1 gives single_channel's numbers (%d B), no warning:\n%s%s"
      % (4 * N1 * H1 * W1, block, p.stderr))

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("all --assume checks passed")
