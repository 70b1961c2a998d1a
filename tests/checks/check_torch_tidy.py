#!/usr/bin/env python3
"""Runs one torch-* check test file through one front end and compares the
diagnostics with the file's inline expectations, the way clang-tidy's
check_clang_tidy.py does (without FileCheck, and stricter: every warning and
every note must be expected, at its exact line and column).

Front ends:
  cli         tensor-accountant --format=json (the JSON report's diagnostics)
  clang-tidy  clang-tidy-16 --load=<our module> (its text output, parsed)

Expectations, as comments in the test file (or in a sidecar file given with
--expectations, for test inputs such as the seed that must not change):

  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: <message> [<check>]
  // CHECK-NOTES: :[[@LINE-2]]:11: note: <message>
  // CHECK-FIXES: {{^}}  auto q = p.contiguous().view({4, 8192});{{$}}
  // TIDY-CONFIG: {Checks: '-*,torch-*', CheckOptions: {torch-x.MinBytes: 1}}
  // RUN-CHECKS: -*,torch-contiguous-copy

  // KNOWN-WRONG: :[[@LINE-1]] issue 10 item 17: fires on a view of a live local

KNOWN-WRONG marks a line where the checks are wrong today (a diagnostic
missing there or one that should not be there), with the issue that fixes
it. Differences on a marked line are reported but do not fail the test;
a marked line with no difference fails it ("now right: remove the mark"),
so the mark goes away in the commit that fixes the check.

[[@LINE]], [[@LINE-N]] and [[@LINE+N]] are relative to the comment's line; a
plain number is an absolute line. Messages must match the whole diagnostic
text ("message [check]" for warnings); {{regex}} stands for a regular
expression, everything else is literal. CHECK-NOTES lines may also expect
warnings. CHECK-FIXES lines are searched in order in the fixed file, like
FileCheck: each must match a line after the previous match.

Config modes (files with a TIDY-CONFIG line):
  arg      the YAML goes to --config (both front ends take the same text)
  dotfile  the file is copied into a fresh directory next to a .clang-tidy
           holding the YAML, and neither front end is told anything else
RUN-CHECKS gives both front ends these check globs (--checks, -checks) and
nothing else; a file named after a check (testdata/checks/torch-<name>.cpp)
must enable exactly that check: `-*,torch-<name>`. Without TIDY-CONFIG or
RUN-CHECKS both front ends run with checks '-*,torch-*'.

--combine runs several test files through the front end as one translation
unit (their text concatenated in a temporary file, in the order given), so
clang-tidy-16 parses LibTorch once for all of them instead of once per file
(~10 s of CPU each). Every file needs RUN-CHECKS; the run enables every
torch-* check, and each diagnostic is kept only for the file whose lines it is on
and only when that file's RUN-CHECKS enables its check (a dropped warning
takes its notes with it), so each file is judged as if run alone with its
own checks. Function names must therefore be unique across the files. One
invocation of clang-tidy-16 over several files is no alternative: it
filters every file's diagnostics by the last file's Checks, and it does not
share the parse anyway.

--fix runs the front end's fix mode on a temporary copy (CHECK-* comments
blanked first, as check_clang_tidy.py does), checks the CHECK-FIXES lines,
and with --compile-check runs the CLI on the fixed file, which must still
compile. --compare-fixes-with-cli also runs the CLI's --fix on another copy
and requires the two fixed files to be byte-identical.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

CHECK_RE = re.compile(
    r"//\s*(CHECK-MESSAGES|CHECK-NOTES|CHECK-FIXES|TIDY-CONFIG|RUN-CHECKS|KNOWN-WRONG):\s?(.*)$")
KNOWN_RE = re.compile(r"^:(\d+)\s+(.*?)\s*$")
LINE_RE = re.compile(r"\[\[@LINE(?:([+-])(\d+))?\]\]")
EXPECT_RE = re.compile(r"^\s*(?:\S*?):(\d+):(\d+): (warning|note|error): (.*?)\s*$")
# clang-tidy's text output: "<file>:<line>:<col>: <kind>: <text>".
OUTPUT_RE = re.compile(r"^(.*?):(\d+):(\d+): (warning|note|error): (.*)$")


class Failure(Exception):
    pass


def pattern_regex(text):
    """FileCheck-style: {{re}} is a regular expression, the rest literal."""
    out, pos = [], 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            out.append(re.escape(text[pos:]))
            break
        end = text.find("}}", start + 2)
        if end < 0:
            raise Failure("unterminated {{ in pattern: " + text)
        out.append(re.escape(text[pos:start]))
        out.append("(?:" + text[start + 2:end] + ")")
        pos = end + 2
    return "".join(out)


def parse_expectations(path, absolute_lines=False):
    """(messages, fixes, TIDY-CONFIG or None, known wrong, RUN-CHECKS or None)."""
    messages, fixes, config, known, run_checks = [], [], None, {}, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, start=1):
        m = CHECK_RE.search(line)
        if not m:
            continue
        prefix, body = m.group(1), m.group(2)
        if prefix == "TIDY-CONFIG":
            config = body.strip()
            continue
        if prefix == "RUN-CHECKS":
            run_checks = body.strip()
            continue
        if prefix == "CHECK-FIXES":
            fixes.append((number, body))
            continue

        def at_line(lm):
            if lm.group(1) is None:
                return str(number)
            delta = int(lm.group(2))
            return str(number + delta if lm.group(1) == "+" else number - delta)

        body = LINE_RE.sub(at_line, body)
        if prefix == "KNOWN-WRONG":
            k = KNOWN_RE.match(body)
            if not k:
                raise Failure("%s:%d: cannot read KNOWN-WRONG %r" % (path, number, body))
            known[int(k.group(1))] = (k.group(2), "%s:%d" % (path, number))
            continue
        e = EXPECT_RE.match(body)
        if not e:
            raise Failure("%s:%d: cannot read expectation %r" % (path, number, body))
        if prefix == "CHECK-MESSAGES" and e.group(3) == "note":
            raise Failure("%s:%d: notes belong in CHECK-NOTES" % (path, number))
        messages.append({
            "kind": e.group(3), "line": int(e.group(1)), "column": int(e.group(2)),
            "regex": pattern_regex(e.group(4)), "text": e.group(4),
            "where": "%s:%d" % (path, number)})
    return messages, fixes, config, known, run_checks


def glob_enables(globs, check):
    """clang-tidy's check globs: comma-separated, '-' negates, '*' matches
    anything, the last matching glob decides."""
    enabled = False
    for glob in globs.split(","):
        glob = glob.strip()
        if not glob:
            continue
        negative = glob.startswith("-")
        pattern = "^" + ".*".join(re.escape(p) for p in glob.lstrip("-").split("*")) + "$"
        if re.match(pattern, check):
            enabled = not negative
    return enabled


CHECK_NAME_RE = re.compile(r"\[([a-z0-9.,-]+)\]$")


def keep_enabled(found, globs):
    """The diagnostics whose check the globs enable; notes follow the
    warning before them."""
    kept, keeping = [], True
    for f in found:
        if f[0] != "note":
            m = CHECK_NAME_RE.search(f[4])
            keeping = f[0] == "error" or (m is not None and glob_enables(globs, m.group(1)))
        if keeping:
            kept.append(f)
    return kept


def check_run_checks(path, run_checks, config):
    stem = os.path.splitext(os.path.basename(path))[0]
    if run_checks is not None and config is not None:
        raise Failure("%s: RUN-CHECKS and TIDY-CONFIG together; use one" % path)
    if stem.startswith("torch-") and run_checks != "-*," + stem:
        raise Failure("%s is named after check %s, so it needs the line "
                      "'// RUN-CHECKS: -*,%s' (it has %r)" % (path, stem, stem, run_checks))


def run(cmd, cwd=None):
    start = time.time()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    took = time.time() - start
    print("$ %s  (%.1f s, exit %d)" % (" ".join(cmd), took, p.returncode))
    return p


def cli_diagnostics(args, file, config, extra):
    cmd = [args.cli, "--format=json", "--cache-dir", args.cache_dir]
    if config is not None:
        cmd.append("--config=" + config)
    cmd += extra + [file]
    p = run(cmd)
    if p.returncode != 0 or not p.stdout.strip():
        raise Failure("tensor-accountant failed (exit %d):\n%s" % (p.returncode, p.stderr))
    report = json.loads(p.stdout)
    found = []
    for d in report["diagnostics"]:
        found.append(("warning", d["file"], d["line"], d["column"],
                      "%s [%s]" % (d["message"], d["check"])))
        for n in d["notes"]:
            found.append(("note", n["file"], n["line"], n["column"], n["message"]))
    return found, p


def tidy_diagnostics(args, file, config, extra, run_checks=None):
    cmd = [args.clang_tidy, "--load=" + args.module]
    if config is not None:
        cmd.append("--config=" + config)
    elif run_checks is not None:
        cmd.append("-checks=" + run_checks)
    elif args.config_mode != "dotfile":
        cmd.append("-checks=-*,torch-*")
    cmd += extra + [file, "--", "-std=c++17"] + ["-isystem" + d for d in args.torch_include]
    p = run(cmd)
    found = []
    for line in p.stdout.splitlines():
        m = OUTPUT_RE.match(line)
        if not m:
            continue
        kind, text = m.group(4), m.group(5)
        # clang-tidy's own reporting of -fix, not a diagnostic of ours.
        if kind == "note" and text == "FIX-IT applied suggested code changes":
            continue
        found.append((kind, m.group(1), int(m.group(2)), int(m.group(3)), text))
    # clang-tidy exits 0 with warnings, 1 with compiler errors.
    if p.returncode != 0:
        raise Failure("clang-tidy failed (exit %d):\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
    return found, p


def compare(expected, found, file):
    """Every expected diagnostic found once; nothing else found."""
    errors = []
    base = os.path.basename(file)
    remaining = list(found)
    for e in expected:
        hit = None
        for k, f in enumerate(remaining):
            kind, ffile, line, col, text = f
            if (kind == e["kind"] and line == e["line"] and col == e["column"]
                    and os.path.basename(ffile) == base
                    and re.fullmatch(e["regex"], text)):
                hit = k
                break
        if hit is None:
            near = [f for f in remaining if f[2] == e["line"] and f[0] == e["kind"]]
            errors.append((e["line"], "%s: expected %s not found:\n    :%d:%d: %s: %s%s" % (
                e["where"], e["kind"], e["line"], e["column"], e["kind"], e["text"],
                "".join("\n    got :%d:%d: %s: %s" % (f[2], f[3], f[0], f[4]) for f in near))))
        else:
            remaining.pop(hit)
    for kind, ffile, line, col, text in remaining:
        errors.append((line, "unexpected %s at %s:%d:%d: %s" % (kind, ffile, line, col, text)))
    return errors


def apply_known_wrong(errors, known):
    """Splits (line, text) differences into failures and known-wrong ones;
    a KNOWN-WRONG line without a difference is a failure too."""
    failures, tolerated = [], []
    for line, text in errors:
        if line in known:
            tolerated.append("known wrong (%s): %s" % (known[line][0], text))
        else:
            failures.append(text)
    wrong_lines = {line for line, _ in errors}
    for line, (why, where) in sorted(known.items()):
        if line not in wrong_lines:
            failures.append("%s: line %d is right now (%s): remove the KNOWN-WRONG mark"
                            % (where, line, why))
    return failures, tolerated


def check_fixes(patterns, fixed_text, label):
    errors = []
    lines = fixed_text.split("\n")
    pos = 0
    for number, body in patterns:
        regex = pattern_regex(body)
        for k in range(pos, len(lines)):
            if re.search(regex, lines[k]):
                pos = k + 1
                break
        else:
            errors.append("%s: CHECK-FIXES at line %d not found after line %d of the "
                          "fixed file: %s" % (label, number, pos, body))
    return errors


def blank_checks(text):
    # As check_clang_tidy.py: keep the lines (and so the line numbers), drop
    # the expectations so that they cannot match themselves.
    return re.sub(r"//\s*CHECK-[A-Z0-9-]*:[^\r\n]*", "//", text)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frontend", choices=["cli", "clang-tidy"], required=True)
    ap.add_argument("--cli", required=True, help="the tensor-accountant binary")
    ap.add_argument("--clang-tidy", default="clang-tidy-16")
    ap.add_argument("--module", help="libTensorAccountantTidyModule.so")
    ap.add_argument("--torch-include", action="append",
                    default=[], help="LibTorch include dirs for clang-tidy")
    ap.add_argument("--cache-dir", default=os.path.join(tempfile.gettempdir(),
                                                        "tma-check-tests-cache"))
    ap.add_argument("--config-mode", choices=["none", "arg", "dotfile"], default="none")
    ap.add_argument("--expectations", help="read the expectations from this file")
    ap.add_argument("--fix", action="store_true")
    ap.add_argument("--compile-check", action="store_true")
    ap.add_argument("--compare-fixes-with-cli", action="store_true")
    ap.add_argument("--combine", action="store_true",
                    help="run the test files as one translation unit (see above)")
    ap.add_argument("test_files", nargs="+")
    args = ap.parse_args()
    if not args.torch_include:
        args.torch_include = ["/usr/include/torch/csrc/api/include"]
    if args.frontend == "clang-tidy" and not args.module:
        ap.error("--module is required for clang-tidy")
    if args.combine:
        return run_combined(args)
    if len(args.test_files) != 1:
        ap.error("several test files need --combine")
    args.test_file = args.test_files[0]

    src = os.path.abspath(args.test_file)
    messages, fix_patterns, config, known, run_checks = parse_expectations(
        args.expectations or src)
    check_run_checks(src, run_checks, config)
    if config is None and args.config_mode != "none":
        raise Failure("--config-mode %s needs a TIDY-CONFIG line" % args.config_mode)
    if config is not None and args.config_mode == "none":
        args.config_mode = "arg"
    if not messages and not fix_patterns:
        raise Failure("no expectations in " + (args.expectations or src))

    errors = []
    with tempfile.TemporaryDirectory(prefix="tma-check-") as tmp:
        file = src
        if args.fix or args.config_mode == "dotfile":
            file = os.path.join(tmp, os.path.basename(src))
            with open(src, encoding="utf-8") as f:
                text = f.read()
            with open(file, "w", encoding="utf-8") as f:
                f.write(blank_checks(text) if args.fix else text)
        if args.config_mode == "dotfile":
            with open(os.path.join(tmp, ".clang-tidy"), "w", encoding="utf-8") as f:
                f.write(config + "\n")
        pass_config = config if args.config_mode == "arg" else None
        cli_extra = [] if config is not None else ["--checks=" + (run_checks or "-*,torch-*")]
        if args.frontend == "cli":
            found, _ = cli_diagnostics(args, file, pass_config,
                                       cli_extra + (["--fix"] if args.fix else []))
        else:
            found, _ = tidy_diagnostics(args, file, pass_config,
                                        ["-fix"] if args.fix else [], run_checks)
        errors, tolerated = apply_known_wrong(compare(messages, found, file), known)

        if args.fix:
            with open(file, encoding="utf-8") as f:
                fixed = f.read()
            errors += check_fixes(fix_patterns, fixed, args.frontend + " --fix")
            if args.compare_fixes_with_cli:
                other_dir = os.path.join(tmp, "cli")
                os.mkdir(other_dir)
                other = os.path.join(other_dir, os.path.basename(src))
                with open(src, encoding="utf-8") as f:
                    text = blank_checks(f.read())
                with open(other, "w", encoding="utf-8") as f:
                    f.write(text)
                cli_diagnostics(args, other, pass_config, cli_extra + ["--fix"])
                with open(other, encoding="utf-8") as f:
                    cli_fixed = f.read()
                if cli_fixed != fixed:
                    import difflib
                    errors.append("clang-tidy -fix and tensor-accountant --fix differ:\n" +
                                  "".join(difflib.unified_diff(
                                      cli_fixed.splitlines(True), fixed.splitlines(True),
                                      "tensor-accountant", "clang-tidy")))
            if args.compile_check:
                p = run([args.cli, "--format=diagnostics", "--cache-dir", args.cache_dir,
                         "--checks=-*", file])
                if p.returncode != 0 or "did not compile" in p.stderr:
                    errors.append("the fixed file does not compile:\n" + p.stderr +
                                  "\n--- fixed file ---\n" + fixed)

    if tolerated:
        print("\n".join(tolerated))
    if errors:
        print("\n".join(errors))
        print("FAILED: %s (%s%s)" % (args.test_file, args.frontend, ", fix" if args.fix else ""))
        return 1
    print("PASSED: %s (%s%s): %d expected diagnostics, %d fix lines, %d lines known wrong" % (
        args.test_file, args.frontend, ", fix" if args.fix else "", len(messages),
        len(fix_patterns), len(known)))
    return 0


def run_combined(args):
    """--combine: the test files as one translation unit (module docstring)."""
    if args.fix or args.config_mode != "none" or args.expectations:
        raise Failure("--combine takes plain test files: no --fix, --config-mode "
                      "or --expectations")
    parts, texts, first = [], [], 1
    for path in args.test_files:
        src = os.path.abspath(path)
        messages, fixes, config, known, run_checks = parse_expectations(src)
        check_run_checks(src, run_checks, config)
        if run_checks is None or fixes:
            raise Failure("%s: --combine needs RUN-CHECKS and no CHECK-FIXES" % path)
        if not messages:
            raise Failure("no expectations in " + path)
        with open(src, encoding="utf-8") as f:
            text = f.read()
        if not text.endswith("\n"):
            text += "\n"
        count = text.count("\n")
        parts.append({"path": path, "src": src, "first": first, "count": count,
                      "messages": messages, "known": known, "checks": run_checks,
                      "found": [], "dropped": 0})
        texts.append(text)
        first += count

    outside, failed = [], []
    with tempfile.TemporaryDirectory(prefix="tma-check-") as tmp:
        combined = os.path.join(tmp, "combined-check-tests.cpp")
        with open(combined, "w", encoding="utf-8") as f:
            f.write("".join(texts))
        print("%d files as one translation unit: %s" % (len(parts), combined))
        if args.frontend == "cli":
            found, _ = cli_diagnostics(args, combined, None, ["--checks=-*,torch-*"])
        else:
            found, _ = tidy_diagnostics(args, combined, None, [], "-*,torch-*")

    def part_of(line):
        for p in parts:
            if p["first"] <= line < p["first"] + p["count"]:
                return p
        return None

    keeping = True
    for kind, ffile, line, col, text in found:
        p = part_of(line) if os.path.basename(ffile) == os.path.basename(combined) else None
        if p is None:
            outside.append("unexpected %s outside the test files at %s:%d:%d: %s"
                           % (kind, ffile, line, col, text))
            continue
        if kind != "note":
            m = CHECK_NAME_RE.search(text)
            keeping = kind == "error" or (m is not None and glob_enables(p["checks"], m.group(1)))
        if keeping:
            p["found"].append((kind, p["src"], line - p["first"] + 1, col, text))
        elif kind != "note":
            p["dropped"] += 1

    for p in parts:
        errors, tolerated = apply_known_wrong(
            compare(p["messages"], p["found"], p["src"]), p["known"])
        if tolerated:
            print("\n".join(tolerated))
        if errors:
            print("\n".join(errors))
            print("FAILED: %s (%s, combined, checks %s)" % (p["path"], args.frontend, p["checks"]))
            failed.append(p["path"])
        else:
            print("PASSED: %s (%s, combined, checks %s): %d expected diagnostics, "
                  "%d lines known wrong, %d warnings of other checks dropped" % (
                      p["path"], args.frontend, p["checks"], len(p["messages"]),
                      len(p["known"]), p["dropped"]))
    if outside or failed:
        print("\n".join(outside))
        print("FAILED: %d of %d files%s" % (len(failed), len(parts),
                                            ", and diagnostics outside them" if outside else ""))
        return 1
    print("PASSED: all %d files" % len(parts))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:
        print("FAILED: " + str(e))
        sys.exit(1)
