#!/usr/bin/env python3
"""Writes one C++ program that runs every function of a testdata/ directory
(symbolic/, modules/) on real LibTorch and prints what each named tensor
really is.

An inputs.json key is a function's name, or "Class::method" for a method of
a user module (a torch::nn::Module subclass) defined out of its class at
column 0. Such an entry has a "construct" list, the constructor's arguments
in order, each {"name": <the constructor parameter's name>, "int": <an
expression over the sizes>}: the program constructs the module with them,
reports its named parameters, then calls the method.

The instrumentation is deliberately independent of the tool under test: it
finds binding statements with a line-based scan of the source (the corpus is
written one statement per line start, braces on every loop body), not with
the tool's frontend, so a binding the tool misses is still measured and
counts as unanswered. After each binding statement `auto q = ...;` (or a
reassignment `h = ...;` of a name declared before, or of a tensor
parameter) it inserts, on the same
line, `::tma_sym::record("fn", "q", line, q);`. record() is a no-op for
values that are not tensors (sizes, vectors, options), so the C++ compiler,
not this script, decides which bindings are tensors. After a torch::nn
layer's declaration (`torch::nn::Linear fc(...);`) it inserts
`::tma_sym::recordLayer("fc", line, fc);` (the module is read when the
function has returned: parameter and gradient bytes), and after
`opt.step();` `::tma_sym::recordOptimizer("opt", line, opt);` (the bytes of
its state).

Each file is pasted into its own namespace after a #line directive, so
compiler errors point into testdata/symbolic/. main() reads the draws (the
sizes the checker chose) from stdin; see runtime.h for the format.

usage: make_harness.py --inputs inputs.json --runtime runtime.h --out harness.cpp FILE.cpp...
"""

import argparse
import json
import os
import re
import sys

DECL = re.compile(r"^(\s*)(?:const\s+)?(?:auto|at::Tensor|torch::Tensor|Tensor|int64_t|int|long|size_t)\s+([A-Za-z_]\w*)\s*=(?!=)")
UNINITIALISED = re.compile(r"^\s*(?:at::Tensor|torch::Tensor|Tensor|long int|long|int64_t|int|size_t)\s+"
                           r"([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*;")
ASSIGN = re.compile(r"^(\s*)([A-Za-z_]\w*)\s*=(?!=)")
# A torch::nn layer the function declares (`torch::nn::Linear fc(784, 10);`):
# the harness keeps the module to read its parameters and their gradients
# once the function has returned.
LAYER = re.compile(r"^(\s*)torch::nn::[A-Z]\w*\s+([A-Za-z_]\w*)\s*[({]")
# `opt.step();`: the optimizer's state is read right after it.
# A branch or loop header whose body is the next statement, unbraced.
BRACELESS = re.compile(r"^\s*(?:\}\s*)?(?:if|else|for|while)\b(?!.*[{;]\s*$)")
STEP = re.compile(r"^(\s*)([A-Za-z_]\w*)\.step\(\s*\)\s*;")
# A function definition starts at column 0 with a return type and a name.
# The name is captured qualified, so a method defined out of its class
# (`torch::Tensor TwoLayerNetImpl::forward(torch::Tensor x) {`) is recorded
# as "TwoLayerNetImpl::forward", the name clang's qualified name gives it in
# the tool's report; the non-greedy return type leaves the whole `A::b` to
# the name.
FUNC = re.compile(r"^(?!#|//|\}|namespace|using|struct|class|template)[A-Za-z_][\w:<>,\s]*?\b([A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*\(")


def statement_end(text, pos):
    """Offset just past the ';' that ends the statement starting at pos
    (brackets balanced, string and character literals skipped)."""
    depth = 0
    i = pos
    n = len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            q = c
            i += 1
            while i < n and text[i] != q:
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            if i < 0:
                break
            continue
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    raise SystemExit("unterminated statement at offset %d" % pos)


def cpp_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def instrument(path, text, wanted):
    """Returns (hoisted include lines, instrumented text, {function: [bindings]}).

    Only the functions in `wanted` (those inputs.json calls) record their
    bindings: a helper they call is observed through its callers' names,
    as the report answers for it at each call site."""
    lines = text.split("\n")
    offsets = []
    off = 0
    for line in lines:
        offsets.append(off)
        off += len(line) + 1
    includes = []
    inserts = []  # (offset, text)
    bindings = {}
    function = None
    declared = set()
    depth = 0
    previous = ""
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("#include"):
            includes.append((number, stripped))
            lines[number - 1] = " " * len(line)
            continue
        if depth == 0:
            m = FUNC.match(line)
            if m:
                function = m.group(1) if m.group(1) in wanted else None
                # A tensor parameter reassigned (`z = z.view(...)`) is
                # recorded from then on, as a local is.
                declared = {p["name"] for p in wanted[function].get("params", [])
                            if "shape" in p} if function else set()
                if function:
                    bindings.setdefault(function, [])
            elif line[:1].isalpha() or line[:1] == "_":
                # Any other declaration at column 0 (a struct or class, a
                # namespace) ends the function before it: a class body's
                # member initialisations are not the function's bindings,
                # and a probe pasted into a class body does not compile.
                # Indented lines at depth 0 are a signature's continuation.
                function = None
        elif function and (LAYER.match(line) or STEP.match(line)):
            m = LAYER.match(line)
            probe = "recordLayer"
            if not m:
                m = STEP.match(line)
                probe = "recordOptimizer"
            start = offsets[number - 1] + len(m.group(1))
            end = statement_end(text, start)
            inserts.append((end, " ::tma_sym::%s(%s, %d, %s);" % (
                probe, cpp_string(m.group(2)), number, m.group(2))))
        elif function and not stripped.startswith(("for", "if", "while", "return", "//")):
            m = DECL.match(line)
            name = None
            bare = UNINITIALISED.match(line)
            if bare:
                # `torch::Tensor y, z;` (or an integer `long N;`): undefined
                # until a later `y = ...;`, which is recorded.
                declared.update(n.strip() for n in bare.group(1).split(","))
            if m:
                name = m.group(2)
                declared.add(name)
            else:
                m = ASSIGN.match(line)
                if m and m.group(2) in declared:
                    name = m.group(2)
            if name and BRACELESS.match(previous):
                # The probe goes after the statement's ';': it would run
                # when the branch or loop body did not.
                raise SystemExit("%s:%d: the binding of '%s' is the body of `%s` without braces; "
                                 "write the body in braces so the harness records it only when "
                                 "it runs" % (path, number, name, previous.strip()))
            if name:
                start = offsets[number - 1] + len(m.group(1))
                end = statement_end(text, start)
                inserts.append((end, " ::tma_sym::record(%s, %s, %d, %s);" % (
                    cpp_string(function), cpp_string(name), number, name)))
                bindings[function].append((name, number))
        # Brace depth after this line (the corpus has no braces in strings).
        code = line.split("//", 1)[0]
        if code.strip():
            previous = code
        depth += code.count("{") - code.count("}")
    # Include lines were blanked to spaces of the same length, so the
    # offsets of the original text still hold.
    body = "\n".join(lines)
    out = []
    copied = 0
    for o, t in sorted(inserts):
        out.append(body[copied:o])
        out.append(t)
        copied = o
    out.append(body[copied:])
    return includes, "".join(out), bindings


def method_call(ns, fn, s, args_cpp):
    """The call of a user module's method "Class::method": construct the
    module with the drawn constructor arguments, report its parameters and
    buffers (runtime.h's recordModule), then call the method, unless the
    checker only asked for the module (BUILD, to evaluate assumptions on its
    parameters before it draws). The module lives in a shared_ptr, as
    TORCH_MODULE's holder keeps it: Module methods that need
    shared_from_this() work; for the method it is the same `Class obj(...);
    obj.method(...)`."""
    cls, _, method = fn.rpartition("::")
    names = [p["name"] for p in s["params"]]
    ctor = []
    for i, c in enumerate(s["construct"]):
        if set(c) != {"name", "int"}:
            raise SystemExit("%s: construct[%d] must be {\"name\", \"int\"}: %s" % (fn, i, c))
        if c["name"] in names:
            raise SystemExit("%s: constructor argument %s has a parameter's name" % (fn, c["name"]))
        names.append(c["name"])
        ctor.append("a.ctor(%d)" % i)
    return ("[](::tma_sym::Args &a) { auto obj = std::make_shared<::%s::%s>(%s); "
            "::tma_sym::recordModule(*obj); if (a.BuildOnly) return; (void)obj->%s(%s); }" % (
                ns, cls, ", ".join(ctor), method, ", ".join(args_cpp)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--runtime", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()

    spec = json.load(open(args.inputs, encoding="utf-8"))["functions"]
    hoisted = []
    blocks = []
    where = {}  # function -> namespace
    for index, path in enumerate(sorted(args.files)):
        text = open(path, encoding="utf-8").read()
        includes, body, bindings = instrument(path, text, spec)
        shown = os.path.relpath(path, os.path.dirname(os.path.dirname(os.path.dirname(args.inputs))))
        for number, inc in includes:
            hoisted.append('#line %d %s\n%s\n' % (number, cpp_string(shown), inc))
        ns = "tma_sym_u%d" % index
        blocks.append("namespace %s {\n#line 1 %s\n%s\n} // namespace %s\n" % (
            ns, cpp_string(shown), body, ns))
        for fn in bindings:
            where[fn] = (ns, shown)

    missing = [fn for fn in spec if fn not in where]
    if missing:
        raise SystemExit("inputs.json names functions no file defines: %s" % ", ".join(missing))

    entries = []
    for fn, s in spec.items():
        ns, shown = where[fn]
        args_cpp = []
        for i, p in enumerate(s["params"]):
            args_cpp.append("a.tensor(%d)" % i if "shape" in p else "a.integer(%d)" % i)
        if "construct" in s:
            entries.append('  {%s, %s, %s},' % (cpp_string(fn), cpp_string(shown),
                                                method_call(ns, fn, s, args_cpp)))
        else:
            entries.append('  {%s, %s, [](::tma_sym::Args &a) { (void)::%s::%s(%s); }},' % (
                cpp_string(fn), cpp_string(shown), ns, fn, ", ".join(args_cpp)))

    out = ["// Generated by tests/symbolic/make_harness.py. Do not edit.",
           "#include <torch/torch.h>",
           open(args.runtime, encoding="utf-8").read()]
    out += hoisted
    out += blocks
    out.append('#line 1 "symbolic-harness-main"')
    out.append("static const ::tma_sym::Entry tma_sym_entries[] = {")
    out += entries
    out.append("};")
    out.append("int main() { return ::tma_sym::run(tma_sym_entries, %d); }" % len(entries))
    text = "\n".join(out) + "\n"
    if not os.path.exists(args.out) or open(args.out, encoding="utf-8").read() != text:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
