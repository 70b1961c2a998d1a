#!/usr/bin/env python3
"""scripts/add-op on a scratch copy of the tree: the three edits, and the
refusals (a duplicate op, an unknown family) with a message and exit 2.

    test_add_op.py --source DIR
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)


def run(root, *args):
    return subprocess.run([sys.executable, os.path.join(root, "scripts/add-op"),
                           "--root", root] + list(args),
                          capture_output=True, text=True)


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    src = ap.parse_args().source
    with tempfile.TemporaryDirectory() as tmp:
        for rel in ("scripts", "model/ops", "testdata/ops"):
            shutil.copytree(os.path.join(src, rel), os.path.join(tmp, rel))
        before = {rel: read(tmp, rel) for rel in
                  ("model/ops/OpTable.def", "model/ops/Reductions.cpp",
                   "testdata/ops/reductions.cpp", "model/ops/Views.cpp")}

        # --dry-run writes nothing.
        r = run(tmp, "--dry-run", "reductions",
                "nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
        check(r.returncode == 0, "--dry-run exits 0: " + r.stderr)
        check("TMA_OP(nanmean, Reductions, Copy" in r.stdout, "--dry-run prints the entry")
        check(read(tmp, "model/ops/OpTable.def") == before["model/ops/OpTable.def"],
              "--dry-run leaves OpTable.def alone")

        # The three edits.
        r = run(tmp, "reductions",
                "nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
        check(r.returncode == 0, "add-op exits 0: " + r.stderr)
        table = read(tmp, "model/ops/OpTable.def")
        entry = ('TMA_OP(nanmean, Reductions, Copy, NoTags, "nanmean", "",\n'
                 '       "nanmean(Tensor self, int[]? dim=None, bool keepdim=False, '
                 'ScalarType? dtype=None)")\n')
        check(entry in table, "OpTable.def has the entry in native_functions.yaml's "
              "types translated (int[1]? -> int[]?, no '*', no return)")
        sections = [m.start() for m in re.finditer(r"^// ---- ", table, re.M)]
        red = table.index("(model/ops/Reductions.cpp)")
        nxt = min(s for s in sections if s > red)
        check(red < table.index(entry) < nxt, "the entry is in the Reductions section")
        check(table.replace(entry, "", 1) == before["model/ops/OpTable.def"],
              "OpTable.def changes by the entry alone")
        rules = read(tmp, "model/ops/Reductions.cpp")
        check(re.search(r"RuleResult rule_nanmean\(const OpCall &C\) \{\n  return notModelled",
                        rules) is not None, "Reductions.cpp has the stub rule")
        check(rules.rstrip().endswith("} // namespace tma"), "the stub is inside namespace tma")
        data = read(tmp, "testdata/ops/reductions.cpp")
        check(data.startswith(before["testdata/ops/reductions.cpp"].rstrip("\n")),
              "testdata keeps what it had")
        check("void nanmean_op() {" in data and "torch::nanmean(x)" in data,
              "testdata/ops/reductions.cpp has a function calling the op")
        check("ops-truth.py build/driver/tensor-accountant reductions nanmean_op" in data,
              "the testdata stub says how to write its truth rows")

        # A shared rule: TMA_OP_AS, no stub.
        r = run(tmp, "reductions", "nansum(Tensor self) -> Tensor", "--rule-of", "nanmean")
        check(r.returncode == 0, "--rule-of exits 0: " + r.stderr)
        check('TMA_OP_AS(nansum, nanmean, Reductions, Copy, NoTags, "nansum", ""'
              in read(tmp, "model/ops/OpTable.def"), "--rule-of writes TMA_OP_AS")
        check("rule_nansum" not in read(tmp, "model/ops/Reductions.cpp"),
              "--rule-of writes no stub rule")

        # A view, from the return's alias annotation, with a tag.
        r = run(tmp, "views", "diag_view(Tensor(a) self) -> Tensor(a)", "--tags", "SliceLike")
        check(r.returncode == 0, "a view op exits 0: " + r.stderr)
        check('TMA_OP(diag_view, Views, View, SliceLike, "diag_view"'
              in read(tmp, "model/ops/OpTable.def"), "Tensor(a) is a View, tagged")

        # Refusals: nothing written, a message, exit 2.
        snapshot = {rel: read(tmp, rel) for rel in before}
        for args, message in (
                (["reductions", "sum(Tensor self) -> Tensor"], "already in model/ops/OpTable.def"),
                (["reductions", "nanmean(Tensor self) -> Tensor"], "already in model/ops/OpTable.def"),
                (["reductions", "swapaxes(Tensor self) -> Tensor"], "already in model/ops/OpTable.def"),
                (["nosuchfamily", "frob(Tensor self) -> Tensor"], "unknown family 'nosuchfamily'"),
                (["reductions", "frob(Tensor self) -> Tensor", "--tags", "Bogus"], "unknown tag"),
                (["reductions", "frob(Tensor self) -> Tensor", "--rule-of", "nope"], "no op 'nope'"),
                (["reductions", "not a schema"], "not a schema")):
            r = run(tmp, *args)
            check(r.returncode == 2, "%s exits 2 (got %d)" % (args, r.returncode))
            check(message in r.stderr, "%s says %r (said %r)" % (args, message, r.stderr))
        check({rel: read(tmp, rel) for rel in before} == snapshot,
              "a refusal writes nothing")
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("add-op: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
