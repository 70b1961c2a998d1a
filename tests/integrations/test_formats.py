#!/usr/bin/env python3
"""CI formats against the JSON report, on the seed file (real LibTorch headers).

--format=sarif must validate against the SARIF 2.1.0 schema shipped in
tests/integrations/data/ and carry every diagnostic of --format=json (same
count, check, line, column, message, bytes, notes, fixes). --format=github
must give one annotation per diagnostic with the same position and check,
and --format=markdown the summary tables. A file that could not be
analysed is in every format: JSON failed_files, a SARIF invocation with
executionSuccessful false and a notification, a github error annotation,
a markdown list.

usage: test_formats.py <tensor-accountant> <source dir>
"""
import json
import os
import re
import subprocess
import sys
import copy

import jsonschema

TOOL, SRC = sys.argv[1], sys.argv[2]
FILE = "testdata/seed/blocks.cpp"
SCHEMA = os.path.join(SRC, "tests/integrations/data/sarif-schema-2.1.0.json")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(fmt):
    p = subprocess.run([TOOL, "--no-cache", "--format=" + fmt, FILE], cwd=SRC,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        print(p.stderr)
        sys.exit("tensor-accountant --format=%s exited %d" % (fmt, p.returncode))
    return p.stdout


report = json.loads(run("json"))
diags = report["diagnostics"]
check(len(diags) >= 3, "the seed has findings (got %d)" % len(diags))

# ---- SARIF ------------------------------------------------------------------
sarif = json.loads(run("sarif"))
with open(SCHEMA) as f:
    schema = json.load(f)
Validator = jsonschema.validators.validator_for(schema)
Validator.check_schema(schema)
errors = list(Validator(schema).iter_errors(sarif))
for e in errors[:5]:
    print("schema error at", list(e.absolute_path), ":", e.message)
check(not errors, "SARIF validates against the 2.1.0 schema")
# The validator is not vacuous: a wrong level must be refused.
broken = copy.deepcopy(sarif)
if broken["runs"][0]["results"]:
    broken["runs"][0]["results"][0]["level"] = "catastrophic"
    check(list(Validator(schema).iter_errors(broken)),
          "the schema rejects an invalid level")

run0 = sarif["runs"][0]
rules = run0["tool"]["driver"]["rules"]
rule_ids = [r["id"] for r in rules]
listed = subprocess.run([TOOL, "--list-checks", "--checks=*"], cwd=SRC,
                        capture_output=True, text=True).stdout.split()
check(set(r for r in listed if r.startswith("torch-")) <= set(rule_ids),
      "every registered check is a rule")
for r in rules:
    check(r["shortDescription"]["text"] and r["help"]["text"],
          "rule %s has help text" % r["id"])
    check(r.get("helpUri", "").endswith("docs/checks/%s.md" % r["id"]),
          "rule %s has a helpUri to its doc page" % r["id"])
# Code scanning shows helpUri as the rule's link: an https page of the
# configured repository (TMA_REPOSITORY_URL) at this version's release tag,
# naming a page that exists in docs/checks/ (a file:// URI on the machine
# that ran the analysis opens nothing on GitHub).
with open(os.path.join(SRC, "CMakeLists.txt")) as f:
    cmake_text = f.read()
project_version = re.search(r"project\(TensorMemoryAccountant VERSION ([0-9.]+)",
                            cmake_text).group(1)
repository = re.search(r'set\(TMA_REPOSITORY_URL "([^"]+)"', cmake_text).group(1)
for r in rules:
    uri = r.get("helpUri", "")
    prefix = "%s/blob/v%s/docs/checks/" % (repository, project_version)
    check(uri.startswith("https://") and uri == prefix + r["id"] + ".md",
          "rule %s's helpUri is its page at the release tag: %s" % (r["id"], uri))
    check(os.path.isfile(os.path.join(SRC, "docs/checks", uri[len(prefix):])),
          "rule %s's helpUri names a page in docs/checks/: %s" % (r["id"], uri))
    check("](%s)" % uri in r["help"]["markdown"],
          "rule %s's help.markdown links the same page" % r["id"])

# SARIF counts columns and offsets in code points (columnKind
# unicodeCodePoints); the JSON report in bytes. The seed has non-ASCII
# comments (em dashes), so convert.
with open(os.path.join(SRC, FILE), "rb") as f:
    source = f.read()
source_lines = source.split(b"\n")


def cp_offset(byte_offset):
    return len(source[:byte_offset].decode("utf-8"))


def cp_column(line, byte_column):
    return len(source_lines[line - 1][:byte_column - 1].decode("utf-8")) + 1


check(run0["columnKind"] == "unicodeCodePoints", "columnKind")
results = run0["results"]
check(len(results) == len(diags),
      "SARIF has every diagnostic (%d vs %d)" % (len(results), len(diags)))
for d, r in zip(diags, results):
    where = "%s:%d" % (d["check"], d["line"])
    loc = r["locations"][0]["physicalLocation"]
    region = loc["region"]
    check(r["ruleId"] == d["check"], where + " ruleId")
    check(rule_ids[r["ruleIndex"]] == d["check"], where + " ruleIndex")
    check(r["level"] == "warning", where + " level")
    check(r["message"]["text"] == d["message"], where + " message")
    check(region["startLine"] == d["line"], where + " startLine")
    check(region["startColumn"] == cp_column(d["line"], d["column"]),
          where + " startColumn")
    check(region.get("endLine", 0) >= region["startLine"], where + " endLine")
    check(loc["artifactLocation"]["uri"] == d["file"], where + " uri")
    check(r.get("properties", {}).get("bytes") == d["bytes"], where + " bytes")
    related = r.get("relatedLocations", [])
    check(len(related) == len(d["notes"]), where + " notes")
    for n, rl in zip(d["notes"], related):
        check(rl["message"]["text"] == n["message"] and
              rl["physicalLocation"]["region"]["startLine"] == n["line"] and
              rl["physicalLocation"]["region"]["startColumn"] ==
              cp_column(n["line"], n["column"]),
              where + " note " + n["message"])
    if d["fixes"]:
        reps = r["fixes"][0]["artifactChanges"][0]["replacements"]
        check([(x["deletedRegion"]["charOffset"], x["deletedRegion"]["charLength"],
                x["insertedContent"]["text"]) for x in reps] ==
              [(cp_offset(x["offset"]),
                cp_offset(x["offset"] + x["length"]) - cp_offset(x["offset"]),
                x["replacement"]) for x in d["fixes"]],
              where + " fixes")
    else:
        check("fixes" not in r, where + " has no fixes")

# ---- GitHub workflow commands ---------------------------------------------
lines = run("github").splitlines()
check(len(lines) == len(diags), "one annotation per diagnostic")
pattern = re.compile(r"^::(warning|error) file=([^,]*),line=(\d+),col=(\d+)"
                     r"(?:,endLine=(\d+),endColumn=(\d+))?,title=([^:]*)::(.*)$")
for d, line in zip(diags, lines):
    m = pattern.match(line)
    check(m is not None, "workflow command syntax: " + line)
    if not m:
        continue
    check(m.group(2) == d["file"] and int(m.group(3)) == d["line"] and
          int(m.group(4)) == d["column"] and m.group(7) == d["check"],
          "annotation position and title: " + line)
    message = m.group(8).replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")
    check(message.split("\n")[0] == d["message"], "annotation message: " + line)
    check(message.count("\nnote: ") == len(d["notes"]), "annotation notes: " + line)

# ---- markdown ---------------------------------------------------------------
md = run("markdown")
check(md.startswith("### tensor-accountant"), "markdown heading")
check("#### Worst copies" in md and "#### Findings per check" in md,
      "markdown tables")
for c in set(d["check"] for d in diags):
    n = sum(1 for d in diags if d["check"] == c)
    check(("| `%s` | %d |" % (c, n)) in md, "markdown count for " + c)
worst = max((d for d in diags if d["bytes"]), key=lambda d: d["bytes"])
first_row = md.split("|---:|---|---|---|\n", 1)[1].split("\n", 1)[0]
check(":%d`" % worst["line"] in first_row, "the worst copy comes first")

check(run0["invocations"] == [{"executionSuccessful": True}],
      "SARIF: one successful invocation when every file was analysed: %s"
      % run0.get("invocations"))
check(report["failed_files"] == [], "JSON: no failed files for the seed")

# ---- a file that is not analysed (issue 10, item 21) -------------------------
# It vanished from JSON and SARIF, so code scanning showed "no findings".
# Without LibTorch: a file that compiles, one that does not, one whose
# compile command the compiler refuses.
import tempfile
work = tempfile.mkdtemp(prefix="tma-formats-failed-")
for name, text in (("good.cpp", "int good() { return 1; }\n"),
                   ("broken.cpp", "int broken() { return 1 + ; }\n")):
    with open(os.path.join(work, name), "w") as f:
        f.write(text)


def run_failed(fmt, *extra):
    return subprocess.run([TOOL, "--no-cache", "--format=" + fmt, "good.cpp",
                           "broken.cpp", "--", "-std=c++17"] + list(extra),
                          cwd=work, capture_output=True, text=True, timeout=600)


p = run_failed("json")
failed = json.loads(p.stdout)
check(p.returncode == 1 and [f["file"] for f in failed["failed_files"]] == ["broken.cpp"]
      and "did not compile" in failed["failed_files"][0]["reason"] and
      [f["function"] for f in failed["functions"]] == ["good"],
      "JSON: the broken file is in failed_files, the good one analysed (exit %d): %s"
      % (p.returncode, failed.get("failed_files")))
p = run_failed("json", "--no-such-flag")
refused = json.loads(p.stdout)
check(p.returncode == 1 and [f["file"] for f in refused["failed_files"]] ==
      ["good.cpp", "broken.cpp"] and refused["functions"] == [],
      "JSON: a refused compile command fails every file, none half-analysed: %s"
      % refused.get("failed_files"))
p = run_failed("sarif")
failed_sarif = json.loads(p.stdout)
errors = list(Validator(schema).iter_errors(failed_sarif))
for e in errors[:5]:
    print("schema error at", list(e.absolute_path), ":", e.message)
check(p.returncode == 1 and not errors, "SARIF with a failed file validates")
inv = failed_sarif["runs"][0]["invocations"]
notes = inv[0].get("toolExecutionNotifications", []) if inv else []
check(len(inv) == 1 and inv[0]["executionSuccessful"] is False and len(notes) == 1 and
      notes[0]["level"] == "error" and "broken.cpp" in notes[0]["message"]["text"] and
      notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] ==
      "broken.cpp",
      "SARIF: executionSuccessful false and a notification naming the file: %s" % inv)
p = run_failed("github")
check(p.returncode == 1 and "::error file=broken.cpp,title=tensor-accountant::could "
      "not analyse this file: it did not compile" in p.stdout,
      "github: an error annotation on the failed file:\n" + p.stdout)
p = run_failed("markdown")
check(p.returncode == 1 and "**1 file could not be analysed**" in p.stdout and
      "- `broken.cpp`: it did not compile" in p.stdout,
      "markdown: the failed file is listed:\n" + p.stdout)
subprocess.run(["rm", "-rf", work])

# ---- the module summary in markdown (docs/modules.md) ----------------------
# Every top-level row of the JSON "modules" is a row of the folded table,
# with the same parameter count.
LAYERS = "testdata/modules/layers.cpp"
both = {}
for fmt in ("json", "markdown"):
    p = subprocess.run([TOOL, "--no-cache", "--format=" + fmt, LAYERS], cwd=SRC,
                       capture_output=True, text=True, timeout=600)
    check(p.returncode in (0, 1), "%s on %s exits 0 or 1: %s" % (fmt, LAYERS, p.stderr))
    both[fmt] = p.stdout
rows = [(f["function"], m) for f in json.loads(both["json"])["functions"]
        for m in f.get("modules", []) if m["parent"] is None]
check(len(rows) >= 5, "layers.cpp has module rows in the JSON: %d" % len(rows))
check("<summary>Module parameters</summary>" in both["markdown"],
      "markdown: the module parameters table")
for fn, m in rows:
    count = "?" if m["parameter_elements"] is None else str(m["parameter_elements"])
    check(("| `%s` | `%s` | %s | %s |" % (fn, m["name"], m["layer"], count))
          in both["markdown"], "markdown: module row %s %s (%s)" % (fn, m["name"], count))

# Layers with parameters run with gradients on keep tensors alive for the
# backward pass: Linear's are followed (addmm keeps its input), so the
# totals hold; a convolution's are not, so they are unknown with that
# reason; with a NoGradGuard first they are known.
summaries = {f["function"]: f["summary"] for f in json.loads(both["json"])["functions"]}
mlp = summaries.get("mlp_layers", {})
check(isinstance(mlp.get("peak_live_bytes"), int),
      "mlp_layers: Linear's saves followed with gradients on: %s" % mlp)
conv = summaries.get("conv_layers", {})
check(conv.get("peak_live_bytes") is None and
      "runs with gradients on" in (conv.get("unknown_reason") or ""),
      "conv_layers: peak unknown because of grad mode: %s" % conv)
off = summaries.get("inference_without_gradients", {})
check(isinstance(off.get("peak_live_bytes"), int),
      "inference_without_gradients: peak known under NoGradGuard: %s" % off)

if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: %d diagnostics round-tripped through sarif, github and markdown"
      % len(diags))
