#!/usr/bin/env python3
"""Module objects the differential test cannot check, through the real tool
on tests/symbolic/data/objects.cpp, JSON output:

  - a user module rebound to another object, or handed to code that may
    change its parameters, is not followed into its methods, and the
    callee's rows say which of the two (not only that the construction is
    not followed); one constructed and only run is followed;
  - an LSTM whose num_layers is a parameter: output and c_n have shapes
    (c_n with `layers` rows), its parameters are not listed: their count
    and bytes are a formula in `layers`; gradient bytes and the optimizer's
    state are unknown with that reason, and so are the totals (never a sum
    without them).

usage: test_objects.py CLI SOURCE_DIR CACHE_DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_checks import check, finish, functions, row as row_of  # noqa: E402


def main():
    cli, source, cache = sys.argv[1:4]
    data = os.path.join(source, "tests", "symbolic", "data", "objects.cpp")
    fns = functions(cli, cache, data)
    if fns is None:
        return 1

    def row(fn, name):
        return row_of(fns, fn, name)

    for name in ("a", "b"):
        r = row("reassigned_module", name)
        # The line the reason names is the declaration's (22), said so.
        check(r.get("shape") is None and "'net' (constructed at line 22) is "
              "assigned again later" in (r.get("unknown_reason") or ""),
              "reassigned module: %s says it is assigned again: %s"
              % (name, r.get("unknown_reason")))
    c = row("module_passed_on", "c")
    check(c.get("shape") is None and "other than by forward()" in (c.get("unknown_reason") or ""),
          "module handed to torch::save: c says how it is used: %s" % c.get("unknown_reason"))
    d = row("module_only_run", "d")
    check(d.get("shape") == [2, 3], "module only run: d is (2, 3): %s" % d.get("shape"))

    out = row("lstm_of_depth", "out")
    check(out.get("shape") == [5, 2, 6] and out.get("storage_bytes") == 240,
          "LSTM of symbolic depth: out (5, 2, 6), 240 B: %s %s"
          % (out.get("shape"), out.get("storage_bytes")))
    c_n = row("lstm_of_depth", "c_n")
    check(c_n.get("shape") == ["layers", 2, 6] and c_n.get("base") is None
          and c_n.get("kind") in ("alloc", "copy"),
          "LSTM of symbolic depth: c_n (layers, 2, 6), its own storage: %s" % c_n)
    fn = fns.get("lstm_of_depth", {})
    lstm = [m for m in fn.get("modules", []) if m.get("name") == "lstm"]
    if check(len(lstm) == 1, "LSTM of symbolic depth: one summary row"):
        m = lstm[0]
        # LSTM(4, 6): 4*6*4 + 4*6*6 + 2*4*6 = 288 elements in the first
        # layer, 4*6*6 + 4*6*6 + 48 = 336 in each later one.
        check(m.get("parameter_elements") == "layers * 336 - 48"
              and m.get("parameter_bytes") == "layers * 1344 - 192"
              and m.get("parameters") == [],
              "LSTM of symbolic depth: parameters not listed, their count a formula: %s" % m)
        opts = m.get("optimizers", [])
        check(len(opts) == 1 and opts[0].get("state_bytes") is None
              and "not listed" in (opts[0].get("unknown_reason") or ""),
              "LSTM of symbolic depth: the optimizer's state is unknown with the reason: %s"
              % opts)
        check(m.get("gradient_bytes") is None and "not listed" in
              (m.get("gradient_unknown_reason") or ""),
              "LSTM of symbolic depth: gradient bytes unknown with the reason: %s"
              % m.get("gradient_unknown_reason"))
    s = fn.get("summary", {})
    check(s.get("peak_live_bytes") is None and s.get("live_bytes_nothing_freed") is None,
          "LSTM of symbolic depth: totals unknown: %s" % s.get("unknown_reason"))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
