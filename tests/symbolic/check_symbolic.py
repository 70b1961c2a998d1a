#!/usr/bin/env python3
"""The differential test of symbolic shapes (issue 12): the tool's report on
testdata/symbolic/ against real LibTorch, with random sizes.

For every function of testdata/symbolic/inputs.json:
  1. the tool reports on the corpus (--format=json): each named tensor's
     shape, strides, storage offset, dtype, storage bytes, contiguity, kind
     and base, as integers, C++ expressions over the parameters (report
     version 2), or null when unknown; and the function's "assumptions";
  2. this script draws --draws random size bindings per function from the
     ranges in inputs.json, keeping only draws under which every stated
     assumption of the report holds (evaluated as C++);
  3. the harness (make_harness.py's program, built against LibTorch) calls
     the function with fresh contiguous tensors of those sizes and records
     every named tensor after each binding statement, every loop iteration;
     for a user module's method ("Class::method" with a "construct" list)
     it first constructs the module with the drawn constructor arguments
     and reports its parameters and buffers: the constructor's argument
     names are integer symbols, and member tensors are "fc1->weight", both
     in the assumptions (checked on a module built before drawing, BUILD)
     and in the answers;
  4. every non-null field of the report is evaluated under the draw and
     compared with every observation of that binding; for a module's method
     the module summary's parameter bytes of `this` are compared with the
     sum of p.nbytes() over the module's parameters().

A disagreement is any evaluated field that differs from LibTorch, an
expression this script cannot read, a kind that says new storage where the
storage is a parameter's or an earlier tensor's, or a row the report has
that LibTorch observed with a different rank. The test fails on any
disagreement, and when the corpus is smaller than the issue asks for. It
prints the share of named tensors the report answers (shape, dtype, storage
bytes and kind all known), and the share of those a report can answer:
a named tensor LibTorch gives two ranks (in calls inputs.json's variants
make), two values within one call (a loop's iterations), or storage shared
with a parameter in some calls only has no single answer over the
parameters (no_single_answer: any answer would be wrong in some call), and
is listed with the reason; --min-answered is a requirement on that share.

It also proves it can fail: the first answered storage byte count and shape
entry are perturbed by one and the comparison must then disagree.

Exit status 0 when there are no disagreements, 1 otherwise.
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cppexpr  # noqa: E402
from cppexpr import ExprError, TensorValue, evaluate  # noqa: E402

FIELDS = ("shape", "strides", "storage_offset", "dtype", "storage_bytes",
          "contiguous", "base")
ANSWER_FIELDS = ("shape", "dtype", "storage_bytes", "kind")


def write_mnist_fixture(root):
    """MNIST's four files as torch::data::datasets::MNIST reads them (big-
    endian int32 magic, count, and for images rows and columns, then one
    byte per pixel or label), with MNIST's own counts, which the reader
    insists on: 60000 training and 10000 test examples. The pixels are
    zeros; the labels cycle through 0-9. Written once per build tree."""
    import struct
    os.makedirs(root, exist_ok=True)
    for prefix, count in (("train", 60000), ("t10k", 10000)):
        images = os.path.join(root, prefix + "-images-idx3-ubyte")
        labels = os.path.join(root, prefix + "-labels-idx1-ubyte")
        if not os.path.exists(images) or os.path.getsize(images) != 16 + count * 784:
            with open(images, "wb") as f:
                f.write(struct.pack(">iiii", 2051, count, 28, 28))
                f.write(bytes(count * 784))
        if not os.path.exists(labels) or os.path.getsize(labels) != 8 + count:
            with open(labels, "wb") as f:
                f.write(struct.pack(">ii", 2049, count))
                f.write(bytes(k % 10 for k in range(count)))


def run_cli(cli, cache_dir, files):
    cmd = [cli, "--format=json", "--checks=-*"]
    if cache_dir:
        cmd += ["--cache-dir", cache_dir]
    cmd += files
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr)
        raise SystemExit("FAIL: %s exited %d" % (" ".join(cmd), proc.returncode))
    return json.loads(proc.stdout)


def spec_value(text, symbols):
    return evaluate(str(text), symbols)


def variants(spec):
    """The function's input variants: the base one (None), then each of
    "variants" (other ranks or dtypes for some parameters, the calls the
    code accepts as well)."""
    return [None] + spec.get("variants", [])


def draw_once(rng, spec, variant=None):
    symbols = {name: rng.randint(lo, hi) for name, (lo, hi) in sorted(spec["sizes"].items())}
    for cond in spec.get("where", []) + (variant or {}).get("where", []):
        if not spec_value(cond, symbols):
            return None
    # A module method's constructor arguments come first, in order: the
    # harness constructs the module with them ("C" lines), and the report
    # uses their names as integer symbols, as it does an int parameter's.
    params = [{"name": c["name"], "kind": "construct", "value": spec_value(c["int"], symbols)}
              for c in spec.get("construct", [])]
    for p in spec["params"]:
        p = dict(p, **(variant or {}).get("params", {}).get(p["name"], {}))
        if "shape" in p:
            dtype = p.get("dtype", "float32")
            if isinstance(dtype, list):
                dtype = rng.choice(dtype)
            shape = [spec_value(s, symbols) for s in p["shape"]]
            fill = None
            if "randint" in p:
                fill = [spec_value(b, symbols) for b in p["randint"]]
                if fill[1] <= fill[0]:
                    return None
            params.append({"name": p["name"], "kind": "tensor", "shape": shape,
                           "dtype": dtype, "randint": fill})
        else:
            params.append({"name": p["name"], "kind": "int",
                           "value": spec_value(p["int"], symbols)})
    return params


def environment(params, module=None, integers=None):
    """The names a report's expressions may use: the parameters, the
    constructor's arguments, a module method's member tensors as the
    harness measured them after construction ("fc1.weight" is
    "fc1->weight", as the method's code reaches it), and, after a run, the
    integer locals it bound (a report names a value only a run knows,
    `auto n = t.item<int64_t>()`, after its variable)."""
    env = dict(integers or {})
    for p in params:
        env[p["name"]] = (TensorValue(p["shape"], p["dtype"]) if p["kind"] == "tensor"
                          else p["value"])
    # A tensor registered on the module itself ("weight") has no "->"; a
    # parameter or constructor argument of the same name is what the
    # method's code means by it, so it is not replaced.
    for t in (module or {}).get("parameters", []) + (module or {}).get("buffers", []):
        env.setdefault(t["name"].replace(".", "->"), TensorValue(t["shape"], t["dtype"]))
    return env


def run_outside_assumptions(report_fn, params, measured):
    """The first assumption of the report that names an integer local and
    does not hold for this run's value of it (the draw could not choose
    it), or None: the report says nothing of such a run."""
    integers = measured.get("integers") or {}
    env = environment(params, measured["module"], integers)
    for a in (report_fn or {}).get("assumptions", []):
        if not any(re.search(r"\b%s\b" % re.escape(n), a) for n in integers):
            continue
        try:
            if not evaluate(a, env):
                return a
        except ExprError:
            continue
    return None


def bind_data_dependent(cmp, fn, report_fn, params, measured):
    """Sizes only a run knows (`u0`: how many elements nonzero() or a
    boolean mask found) take their values from the run: each from the
    first row, in line order, whose shape has it as a whole entry. They
    join the run's integer values, so every other row's formula over them
    is checked against LibTorch, and each must lie within the bounds the
    report gives it (0 <= u <= at_most)."""
    integers = measured["integers"] = measured.get("integers") or {}
    observed = {(o["name"], o["line"]): o for o in measured["tensors"]
                if o.get("defined") is not False}
    rows = sorted((report_fn or {}).get("tensors", []), key=lambda r: r["line"])
    for d in (report_fn or {}).get("data_dependent_sizes", []):
        sym = d["symbol"]
        for r in rows:
            obs, shape = observed.get((r["name"], r["line"])), r.get("shape") or []
            if obs is not None and sym in shape and len(obs["shape"]) == len(shape):
                integers[sym] = obs["shape"][shape.index(sym)]
                break
        if sym in integers:
            cmp.scalar("%s (draw %s: %s)" % (fn, measured["draw"], describe(params)),
                       "%s <= at_most" % sym, "%s <= %s" % (sym, d["at_most"]), True,
                       environment(params, measured["module"], integers))


def constructor_args(params):
    return tuple(p["value"] for p in params if p["kind"] == "construct")


class ModuleProbe:
    """Constructs a user module in the harness (BUILD: no call) and returns
    what it measured of its parameters and buffers, so that draws can be
    kept only where the report's assumptions on them hold (they state one
    per member layer, `fc1->weight.scalar_type() == torch::kFloat`). The
    module depends only on the constructor's arguments, so one probe per
    distinct argument list; the harness process stays up between probes."""

    def __init__(self, harness):
        self.harness = harness
        self.proc = None
        self.cache = {}

    def module(self, fn, params):
        key = (fn, constructor_args(params))
        if key not in self.cache:
            if self.proc is None:
                self.proc = subprocess.Popen([self.harness], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, text=True)
            ctor = [p for p in params if p["kind"] == "construct"]
            self.proc.stdin.write(harness_input([(fn, "probe", ctor)], go="BUILD"))
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("FAIL: the harness exited %s while constructing %s(%s)" % (
                    self.proc.wait(), fn.rpartition("::")[0], describe(ctor)))
            m = json.loads(line)
            self.cache[key] = (m["module"], m["error"])
        return self.cache[key]

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()


def draws_for(rng, fn, spec, assumptions, count, problems, probe, notes):
    """count draws that satisfy inputs.json and the report's assumptions,
    the variants taken in turn (draw k is variant k modulo their number).
    A variant no draw of which satisfies the report's assumptions is
    dropped with a note: the report does not answer for those calls (it
    states so), so they cannot test it."""
    out = []
    seen = set()
    kinds = list(range(len(variants(spec))))
    misses = {k: 0 for k in kinds}
    for attempt in range(5000):
        if not kinds:
            break
        kind = kinds[len(out) % len(kinds)]
        if misses[kind] > 1000:
            kinds.remove(kind)
            notes.append("%s: variant %d is outside the report's assumptions %s" % (
                fn, kind, assumptions))
            continue
        params = draw_once(rng, spec, variants(spec)[kind])
        if params is None:
            misses[kind] += 1
            continue
        module = None
        if "construct" in spec:
            module, error = probe.module(fn, params)
            if error is not None:
                problems.append("%s: constructing the module threw on LibTorch (%s): %s" % (
                    fn, describe(params), error))
                return out
        env = environment(params, module)
        ok = True
        for a in assumptions:
            try:
                if not evaluate(a, env):
                    ok = False
                    break
            except ExprError as e:
                # A value only the run knows (an integer local): checked
                # once the harness has run (run_outside_assumptions).
                if "unknown name" in str(e):
                    continue
                problems.append("%s: assumption %r cannot be evaluated: %s" % (fn, a, e))
                return out
        if not ok:
            misses[kind] += 1
            continue
        misses[kind] = 0
        key = json.dumps(params, sort_keys=True)
        if key in seen and attempt < 4000:
            continue
        seen.add(key)
        out.append(params)
        if len(out) == count:
            break
    if len(out) < count:
        problems.append("%s: only %d of %d draws satisfy inputs.json and the assumptions %s"
                        % (fn, len(out), count, assumptions))
    return out


def harness_input(runs, go="GO"):
    lines = []
    for fn, index, params in runs:
        lines.append("RUN %s %s" % (fn, index))
        for p in params:
            if p["kind"] == "construct":
                lines.append("C %s %d" % (p["name"], p["value"]))
            elif p["kind"] == "tensor":
                fill = ("randint %d %d" % tuple(p["randint"])) if p["randint"] else "randn"
                lines.append("T %s %s %s %d %s" % (p["name"], p["dtype"], fill, len(p["shape"]),
                                                   " ".join(str(s) for s in p["shape"])))
            else:
                lines.append("I %s %d" % (p["name"], p["value"]))
        lines.append(go)
    return "\n".join(lines) + "\n"


def value_of(predicted, env):
    """An int/bool/str answer, or the value of a C++ expression string."""
    if isinstance(predicted, str):
        if predicted in cppexpr.ELEMENT_SIZE:  # a dtype name
            return predicted
        return evaluate(predicted, env)
    return predicted


class Comparison:
    def __init__(self):
        self.disagreements = []
        self.checked = 0

    def wrong(self, where, field, predicted, measured, why=""):
        self.disagreements.append("%s: %s: predicted %s, LibTorch %s%s" % (
            where, field, json.dumps(predicted), json.dumps(measured),
            (" (" + why + ")") if why else ""))

    def field(self, where, field, predicted, measured, env):
        if predicted is None:
            return
        if field in ("shape", "strides"):
            if len(predicted) != len(measured):
                self.wrong(where, field, predicted, measured, "rank")
                return
            for i, (p, m) in enumerate(zip(predicted, measured)):
                if p is None:
                    continue
                self.scalar(where, "%s[%d]" % (field, i), p, m, env)
            return
        self.scalar(where, field, predicted, measured, env)

    def scalar(self, where, field, predicted, measured, env):
        try:
            value = value_of(predicted, env)
        except ExprError as e:
            self.wrong(where, field, predicted, measured, "unreadable: %s" % e)
            return
        self.checked += 1
        if value != measured:
            self.wrong(where, field, predicted, measured,
                       "evaluates to %s" % json.dumps(value) if value != predicted else "")

    def tensor(self, where, row, obs, env):
        for f in ("shape", "strides", "storage_offset", "dtype", "storage_bytes", "contiguous"):
            self.field(where, f, row.get(f), obs[f], env)
        kind = row.get("kind")
        if kind is None:
            return
        self.checked += 1
        if kind in ("alloc", "copy") and obs["base"] is not None:
            self.wrong(where, "kind", kind, "shares the storage of " + obs["base"])
        elif row.get("base") != obs["base"]:
            self.wrong(where, "base", row.get("base"), obs["base"])


def compare_run(cmp, fn, report_fn, params, measured):
    env = environment(params, measured["module"], measured.get("integers"))
    rows = {}
    if report_fn:
        for row in report_fn.get("tensors", []):
            rows.setdefault((row["name"], row["line"]), row)
    for obs in measured["tensors"]:
        row = rows.get((obs["name"], obs["line"]))
        if row is None or obs.get("defined") is False:
            continue
        where = "%s:%d %s (draw %s: %s)" % (fn, obs["line"], obs["name"], measured["draw"],
                                           describe(params))
        cmp.tensor(where, row, obs, env)


class Training:
    """Issue 13's module summary in free functions, against the layers and
    optimizers the harness kept: each layer's parameter bytes (sum of
    p.nbytes() over parameters()) and gradient bytes (sum of
    p.grad().nbytes() over parameters with a gradient, when the function
    has returned), and each optimizer's state bytes (nbytes of the tensors
    in its state() after its last step())."""

    def __init__(self):
        self.layers = set()             # (fn, name)
        self.params_answered = set()
        self.grads_measured = set()     # layers of functions with training rows
        self.grads_answered = set()
        self.optimizers = set()         # (fn, name)
        self.optimizers_answered = set()

    def report(self):
        if not self.layers and not self.optimizers:
            return
        print("layers built by functions: %d; parameter bytes compared for %d; gradient bytes "
              "compared for %d of %d in training code; optimizer state bytes compared for %d of %d%s"
              % (len(self.layers), len(self.params_answered), len(self.grads_answered),
                 len(self.grads_measured), len(self.optimizers_answered), len(self.optimizers),
                 "" if self.optimizers_answered == self.optimizers else
                 "; not answered: " + ", ".join("%s %s" % o for o in sorted(
                     self.optimizers - self.optimizers_answered))))

    def planted(self, report_by_fn, results):
        """One answered state byte count, perturbed by one, must disagree."""
        for fn, params, measured in results:
            for obs in measured.get("optimizers", []):
                row = optimizer_row(report_by_fn.get(fn), obs["name"])
                if row is None or row.get("state_bytes") is None:
                    continue
                value = row["state_bytes"]
                bad = value + 1 if isinstance(value, int) else "(%s) + 1" % value
                cmp = Comparison()
                cmp.scalar("planted", "state_bytes", bad, obs["state_bytes"],
                           environment(params, measured["module"], measured.get("integers")))
                if not cmp.disagreements:
                    return ["a planted wrong optimizer state (%s) was not caught" % bad]
                print("planted wrong optimizer state caught")
                return []
        return []


def module_row(report_fn, name, line):
    for r in (report_fn or {}).get("modules", []):
        if r["name"] == name and r["line"] == line and r.get("parent") is None:
            return r
    return None


def optimizer_row(report_fn, name):
    for r in (report_fn or {}).get("modules", []):
        for o in r.get("optimizers", []):
            if o["name"] == name:
                return o
    return None


def compare_layers(cmp, fn, report_fn, params, measured, training):
    env = environment(params, measured["module"], measured.get("integers"))
    for obs in measured.get("layers", []):
        key = (fn, obs["name"])
        training.layers.add(key)
        row = module_row(report_fn, obs["name"], obs["line"])
        if row is None:
            continue
        where = "%s:%d module %s (draw %s)" % (fn, obs["line"], obs["name"], measured["draw"])
        if row.get("parameter_bytes") is not None:
            training.params_answered.add(key)
            cmp.scalar(where, "parameter_bytes", row["parameter_bytes"], obs["parameter_bytes"], env)
        if "gradient_bytes" in row:
            training.grads_measured.add(key)
            if row["gradient_bytes"] is not None:
                training.grads_answered.add(key)
                cmp.scalar(where, "gradient_bytes", row["gradient_bytes"],
                           obs["gradient_bytes"], env)
        elif obs["gradient_bytes"]:
            # No training columns: the report says nothing of gradients,
            # which LibTorch has.
            cmp.wrong(where, "gradient_bytes", None, obs["gradient_bytes"],
                      "the summary has no gradient column")
    for obs in measured.get("optimizers", []):
        key = (fn, obs["name"])
        training.optimizers.add(key)
        row = optimizer_row(report_fn, obs["name"])
        if row is None or row.get("state_bytes") is None:
            continue
        training.optimizers_answered.add(key)
        cmp.scalar("%s:%d optimizer %s (draw %s)" % (fn, obs["line"], obs["name"], measured["draw"]),
                   "state_bytes", row["state_bytes"], obs["state_bytes"], env)


def describe(params):
    parts = []
    ctor = ["%s=%d" % (p["name"], p["value"]) for p in params if p["kind"] == "construct"]
    if ctor:
        parts.append("module(%s)" % ", ".join(ctor))
    for p in params:
        if p["kind"] == "tensor":
            parts.append("%s %s%s" % (p["name"], p["dtype"] if p["dtype"] != "float32" else "",
                                      tuple(p["shape"])))
        elif p["kind"] == "int":
            parts.append("%s=%d" % (p["name"], p["value"]))
    return ", ".join(parts)


def no_single_answer(observations):
    """Why no report (version 2: one shape list, dtype, storage byte count
    and kind per row, as expressions over the parameters) can answer this
    named tensor in full, proved by what LibTorch did; None when an answer
    may exist. observations: [(draw, observation)] over all draws and every
    loop iteration.
      - Calls with different ranks: a shape is a list of one length.
      - Two values in one call (a loop's iterations): the parameters, and
        so every expression over them, are the same in both.
      - The storage shared with a parameter or earlier tensor in some calls
        and not in others, or with different ones: a kind and a base are
        one answer for every call."""
    ranks = {len(o["shape"]) for _, o in observations}
    if len(ranks) > 1:
        return "its rank differs between calls (%s)" % ", ".join(str(r) for r in sorted(ranks))
    per_call = {}
    for draw, o in observations:
        per_call.setdefault(draw, set()).add(
            (tuple(o["shape"]), o["dtype"], o["storage_bytes"]))
    for draw, values in sorted(per_call.items()):
        if len(values) > 1:
            return "it differs between loop iterations of one call (draw %d: shapes %s)" % (
                draw, ", ".join(str(list(v[0])) for v in sorted(values)))
    bases = {o["base"] for _, o in observations}
    if len(bases) > 1:
        return "its storage is %s depending on the call" % " or ".join(
            sorted("new" if b is None else "%s's" % b for b in bases))
    return None


def self_test_no_single_answer():
    """no_single_answer can say yes and no."""
    def obs(shape, base=None, nbytes=4):
        return {"shape": shape, "dtype": "float32", "storage_bytes": nbytes, "base": base}
    assert no_single_answer([(0, obs([2, 3])), (1, obs([4, 5]))]) is None
    assert "rank" in no_single_answer([(0, obs([2, 3])), (1, obs([2, 3, 4]))])
    assert "iterations" in no_single_answer([(0, obs([2])), (0, obs([3]))])
    assert no_single_answer([(0, obs([2])), (1, obs([3]))]) is None
    assert "storage" in no_single_answer([(0, obs([2], "x")), (1, obs([2]))])
    assert no_single_answer([(0, obs([2], "x")), (1, obs([3], "x"))]) is None


def answered(row):
    if row is None:
        return {f: False for f in ANSWER_FIELDS}
    out = {}
    for f in ANSWER_FIELDS:
        v = row.get(f)
        out[f] = v is not None and not (isinstance(v, list) and any(x is None for x in v))
    return out


def planted_checks(report_by_fn, results):
    """Perturbs one answered storage byte count and one shape entry: the
    comparison must disagree. Returns the failures of this self-check."""
    failures = []
    done = set()
    for fn, params, measured in results:
        report_fn = report_by_fn.get(fn)
        if not report_fn:
            continue
        rows = {(r["name"], r["line"]): r for r in report_fn.get("tensors", [])}
        for obs in measured["tensors"]:
            row = rows.get((obs["name"], obs["line"]))
            if not row or obs.get("defined") is False:
                continue
            for field in ("storage_bytes", "shape"):
                if field in done:
                    continue
                value = row.get(field)
                if field == "shape":
                    if not value or value[0] is None:
                        continue
                    bad = dict(row)
                    first = value[0]
                    bad["shape"] = [first + 1 if isinstance(first, int) else "(%s) + 1" % first] + value[1:]
                else:
                    if value is None:
                        continue
                    bad = dict(row)
                    bad[field] = value + 1 if isinstance(value, int) else "(%s) + 1" % value
                cmp = Comparison()
                cmp.tensor("planted", bad, obs, environment(params, measured["module"], measured.get("integers")))
                if not cmp.disagreements:
                    failures.append("a planted wrong %s (%s) was not caught" % (field, bad[field]))
                done.add(field)
            if len(done) == 2:
                return failures, done
    return failures, done


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--harness", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--cache-dir")
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--min-functions", type=int, default=15)
    ap.add_argument("--min-tensors", type=int, default=120)
    ap.add_argument("--min-answered", type=float, default=0.0,
                    help="required share of named tensors fully answered (0..1)")
    ap.add_argument("--min-optimizers", type=int, default=0,
                    help="optimizers whose state bytes must be compared")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    if any("datasets::MNIST" in open(f).read() for f in args.files):
        write_mnist_fixture("mnist")

    cppexpr.self_test()
    self_test_no_single_answer()
    spec = json.load(open(args.inputs, encoding="utf-8"))["functions"]
    report = run_cli(args.cli, args.cache_dir, args.files)
    print("report version %s" % report.get("version"))
    report_by_fn = {}
    for f in report["functions"]:
        report_by_fn.setdefault(f["function"], f)

    problems = []
    notes = []
    rng = random.Random(args.seed)
    runs = []
    probe = ModuleProbe(args.harness)
    for fn in sorted(spec):
        assumptions = (report_by_fn.get(fn) or {}).get("assumptions", [])
        for i, params in enumerate(draws_for(rng, fn, spec[fn], assumptions, args.draws,
                                             problems, probe, notes)):
            runs.append((fn, i, params))
    probe.close()

    proc = subprocess.run([args.harness], input=harness_input(runs), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit("FAIL: the harness exited %d" % proc.returncode)
    measured = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if len(measured) != len(runs):
        raise SystemExit("FAIL: %d runs asked, %d reported" % (len(runs), len(measured)))

    cmp = Comparison()
    results = []
    compared_functions = set()
    tensors = {}  # (fn, name, line) -> report row or None
    observed_rows = set()
    observations = {}  # (fn, name, line) -> [(draw, observation)]
    modules = []  # (fn, draw, parameter bytes) for issue 13's module bytes check
    training = Training()
    module_bytes_answered = set()
    for (fn, index, params), m in zip(runs, measured):
        if m["error"] is not None:
            problems.append("%s threw on LibTorch (draw %d: %s): %s" % (
                fn, index, describe(params), m["error"]))
            continue
        report_fn = report_by_fn.get(fn)
        if m["module"] is not None:
            modules.append((fn, index, m["module"]["parameter_bytes"]))
            # The summary's row for the object: what parameters() holds.
            this = [r for r in (report_fn or {}).get("modules", []) if r["name"] == "this"]
            if this and this[0].get("parameter_bytes") is not None:
                module_bytes_answered.add(fn)
                cmp.scalar("%s: module summary (draw %d: %s)" % (fn, index, describe(params)),
                           "parameter_bytes", this[0]["parameter_bytes"],
                           m["module"]["parameter_bytes"], environment(params, m["module"], m.get("integers")))
            # The draw was chosen on the probe's module; the one the method
            # ran with must satisfy the assumptions too.
            env = environment(params, m["module"], m.get("integers"))
            for a in (report_fn or {}).get("assumptions", []):
                try:
                    if not evaluate(a, env):
                        problems.append("%s (draw %d: %s): assumption %r does not hold for "
                                        "the module the method ran on" % (
                                            fn, index, describe(params), a))
                except ExprError as e:
                    problems.append("%s: assumption %r cannot be evaluated: %s" % (fn, a, e))
        bind_data_dependent(cmp, fn, report_fn, params, m)
        outside = run_outside_assumptions(report_fn, params, m)
        if outside:
            notes.append("%s (draw %d: %s): not compared, the run is outside the report's "
                         "assumption %r" % (fn, index, describe(params), outside))
            continue
        compared_functions.add(fn)
        compare_layers(cmp, fn, report_fn, params, m, training)
        compare_run(cmp, fn, report_fn, params, m)
        results.append((fn, params, m))
        rows = {(r["name"], r["line"]): r for r in (report_fn or {}).get("tensors", [])}
        for obs in m["tensors"]:
            if obs.get("defined") is False:
                continue
            key = (obs["name"], obs["line"])
            tensors[(fn,) + key] = rows.get(key)
            observed_rows.add((fn,) + key)
            observations.setdefault((fn,) + key, []).append((index, obs))

    # A function whose every run fell outside its report's assumptions on
    # run-time values was not tested: that is a problem, not a pass.
    for fn in sorted({fn for fn, _, _ in runs} - compared_functions):
        if all(m["error"] is None for (f, _, _), m in zip(runs, measured) if f == fn):
            problems.append("%s: no run satisfies the report's assumptions on its run-time "
                            "values, so none was compared" % fn)
    unobserved = []
    for fn in spec:
        for r in (report_by_fn.get(fn) or {}).get("tensors", []):
            if (fn, r["name"], r["line"]) not in observed_rows:
                unobserved.append("%s:%d %s" % (fn, r["line"], r["name"]))

    counts = {f: 0 for f in ANSWER_FIELDS}
    full = 0
    missing_rows = 0
    unanswerable = {}  # (fn, name, line) -> why no report can answer it
    for key, row in tensors.items():
        a = answered(row)
        missing_rows += row is None
        for f in ANSWER_FIELDS:
            counts[f] += a[f]
        full += all(a.values())
        why = no_single_answer(observations[key])
        if why:
            unanswerable[key] = why
            if all(a.values()):
                # Unreachable while the comparison is right: an answer
                # cannot agree with LibTorch on all of these observations.
                problems.append("%s:%d %s is answered, but %s" % (key[0], key[2], key[1], why))
    n = len(tensors)
    functions = len({k[0] for k in tensors})
    print("functions: %d; named tensors observed: %d; runs: %d (%d draws each, seed %d)" % (
        functions, n, len(runs), args.draws, args.seed))
    print("fields compared with LibTorch: %d; disagreements: %d" % (
        cmp.checked, len(cmp.disagreements)))
    if n:
        print("answered: %.1f%% of named tensors fully (%d of %d); by field: %s; rows missing: %d"
              % (100.0 * full / n, full, n,
                 ", ".join("%s %.1f%%" % (f, 100.0 * counts[f] / n) for f in ANSWER_FIELDS),
                 missing_rows))
    answerable = n - len(unanswerable)
    if unanswerable:
        print("named tensors no report can answer in full (LibTorch gave them values no "
              "single answer over the parameters matches): %d" % len(unanswerable))
        for key in sorted(unanswerable):
            print("  %s:%d %s: %s" % (key[0], key[2], key[1], unanswerable[key]))
    if answerable:
        print("answered: %.1f%% of the named tensors a report can answer (%d of %d)" % (
            100.0 * full / answerable, full, answerable))
    if modules:
        methods = sorted({m[0] for m in modules})
        print("module methods: %d (%d runs); parameter bytes of the module summary compared "
              "with sum(p.nbytes()) over parameters() for %d of them%s" % (
                  len(methods), len(modules), len(module_bytes_answered),
                  "" if len(module_bytes_answered) == len(methods) else
                  "; not answered: " + ", ".join(f for f in methods
                                                 if f not in module_bytes_answered)))
    training.report()
    for u in unobserved:
        print("note: report row never reached on LibTorch: %s" % u)

    planted_failures, planted = planted_checks(report_by_fn, results)
    planted_failures += training.planted(report_by_fn, results)
    if planted:
        print("planted wrong answers caught: %s" % ", ".join(sorted(planted)))
    else:
        print("note: no answered storage_bytes or shape to plant a wrong value in")

    failed = False
    for d in cmp.disagreements:
        print("DISAGREE: " + d)
        failed = True
    for p in problems + planted_failures:
        print("FAIL: " + p)
        failed = True
    if functions < args.min_functions:
        print("FAIL: %d functions, the corpus must have at least %d" % (functions, args.min_functions))
        failed = True
    if n < args.min_tensors:
        print("FAIL: %d named tensors, the corpus must have at least %d" % (n, args.min_tensors))
        failed = True
    if len(training.optimizers_answered) < args.min_optimizers:
        print("FAIL: optimizer state compared for %d optimizers, at least %d required" % (
            len(training.optimizers_answered), args.min_optimizers))
        failed = True
    if answerable and full < args.min_answered * answerable:
        print("FAIL: %.1f%% of the answerable named tensors answered, at least %.1f%% required" % (
            100.0 * full / answerable, 100.0 * args.min_answered))
        failed = True
    for note in notes:
        print("note: " + note)
    print("FAILED" if failed else "PASSED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
