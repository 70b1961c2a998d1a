#!/usr/bin/env python3
"""The HTML report in a real browser (Debian's chromium, headless).

One run of the tool on the seed prints the JSON report and writes the HTML
(--html-out); chromium loads the page from a file:// URL and the test reads
the DOM it built, over the DevTools protocol:

- one chart per function of the JSON report;
- the peak marker at the JSON's peak line with its bytes and storages, drawn
  inside that line's column; for block1 also the seed's 640 MiB
  (testdata/seed/blocks.expected.md);
- one band per storage of the JSON report, with its bytes, first and last
  line, drawn from its first line's column to its last line's; each
  alloc/copy row of the JSON tensors (and, for block1, each new/copy row of
  the seed's expected table) starts a band at its line with its bytes;
- every statement column is keyboard-focusable and shows its line on focus;
  every chart has a text alternative; every warning links to its line;
- no console error, and no request but the page itself;
- the layout (issue 33), on the seed and on html_layout.cpp, whose
  functions brought out each problem: every visible text of a chart (axis,
  peak, band and line labels, and each statement's readout when focused)
  inside its chart and the page; no two visible labels of a chart
  overlapping (their getBoundingClientRect boxes); no paragraph of four
  words or more wrapped to a word or two per line (a constructor's section,
  which has a sentence instead of a chart, did).

The expected values come from the JSON report and the seed's answers, not
from the HTML. A screenshot of block1's section is written for the docs.

usage: test_html_report.py <tensor-accountant> <source dir>
           [--cache-dir DIR] [--screenshot block1.png]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless_chromium import Browser, ProtocolError  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("tool")
parser.add_argument("src")
parser.add_argument("--cache-dir", help="the preamble cache (else --no-cache)")
parser.add_argument("--screenshot", help="write block1's section here (PNG)")
args = parser.parse_args()
TOOL, SRC, SHOT = args.tool, args.src, args.screenshot
CACHE = ["--cache-dir=" + args.cache_dir] if args.cache_dir else ["--no-cache"]
SEED = "testdata/seed/blocks.cpp"
LAYOUT = "tests/integrations/html_layout.cpp"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def mib_of(text):
    """'128 MiB' -> bytes (the units of blocks.expected.md)."""
    m = re.match(r"\s*(\d+) (B|KiB|MiB|GiB)\b", text)
    if not m:
        return None
    return int(m.group(1)) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20,
                              "GiB": 1 << 30}[m.group(2)]


def expected_block1():
    """block1's storages (new/copy rows) and its live total from the seed."""
    with open(os.path.join(SRC, "testdata/seed/blocks.expected.md")) as f:
        text = f.read()
    section = text.split("## block1", 1)[1].split("\n## ", 1)[0]
    storages = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and re.match(r"(new|copy)\b", cells[4]):
            storages.append((cells[0], mib_of(cells[3])))
    live = re.search(r"nothing freed: .*= (\d+ MiB)", section)
    return storages, mib_of(live.group(1)) if live else None


# The DOM as the browser built it: per function section, its chart's
# elements with their data attributes and on-screen boxes.
READ_DOM = r"""
(() => {
  const box = e => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const data = e => Object.fromEntries([...e.attributes]
      .filter(a => a.name.startsWith('data-')).map(a => [a.name.slice(5), a.value]));
  return [...document.querySelectorAll('section.fn')].map(s => {
    const svg = s.querySelector('figure.chart svg');
    const described = svg ? (svg.getAttribute('aria-describedby') || '')
        .split(/\s+/).filter(Boolean).map(id => {
          const e = document.getElementById(id);
          return e ? e.textContent.trim() : null; }) : [];
    const columns = [...s.querySelectorAll('.sts a')].map(a => {
      a.focus();
      const tip = a.querySelector('text');
      return {data: data(a), box: box(a.querySelector('rect')),
              focused: document.activeElement === a,
              shown: getComputedStyle(tip).visibility,
              name: tip.textContent};
    });
    if (document.activeElement) document.activeElement.blur();
    const peak = s.querySelector('.peak');
    return {
      fn: s.getAttribute('data-function'),
      charts: s.querySelectorAll('figure.chart').length,
      svgs: s.querySelectorAll('figure.chart svg').length,
      described,
      columns,
      hiddenTip: columns.length ? getComputedStyle(
          s.querySelector('.sts a text')).visibility : null,
      bands: [...s.querySelectorAll('path.band')].map(
          b => ({data: data(b), box: box(b)})),
      peak: peak ? {data: data(peak), box: box(peak.querySelector('path'))} : null,
      warnings: [...s.querySelectorAll('ul.w li[data-check]')].map(li => {
        const a = li.querySelector('a');
        const t = a && document.getElementById(a.getAttribute('href').slice(1));
        return {line: li.getAttribute('data-line'),
                target: t ? t.getAttribute('data-line') : null}; }),
      sectionBox: box(s),
    };
  });
})()
"""

# Anything that could load from elsewhere.
READ_EXTERNAL = r"""
(() => ({
  elements: [...document.querySelectorAll(
      'script,link,img,iframe,object,embed,video,audio,source')].map(e => e.outerHTML),
  urls: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes])
      .filter(a => /^(src|href|xlink:href|action)$/.test(a.name)
                   && !a.value.startsWith('#')).map(a => a.value),
}))()
"""


# Every chart's visible texts, each statement's readout as focus shows it,
# and the prose blocks of each section, with their on-screen boxes.
READ_LAYOUT = r"""
(() => {
  // Page coordinates: focusing a column scrolls the page.
  const box = e => { const r = e.getBoundingClientRect();
    const x = window.scrollX, y = window.scrollY;
    return {left: r.left + x, right: r.right + x, top: r.top + y,
            bottom: r.bottom + y}; };
  const sections = [...document.querySelectorAll('section.fn')].map(s => {
    const svg = s.querySelector('figure.chart svg');
    const labels = svg ? [...svg.querySelectorAll('text')].filter(t =>
        getComputedStyle(t).visibility === 'visible' && t.textContent.trim())
        .map(t => ({text: t.textContent, box: box(t)})) : [];
    const readouts = svg ? [...svg.querySelectorAll('.sts a')].map(a => {
      a.focus();
      const t = a.querySelector('text');
      const r = {text: t.textContent, box: box(t),
                 shown: getComputedStyle(t).visibility};
      a.blur();
      return r;
    }) : [];
    const prose = [...s.querySelectorAll(
        'figcaption, p.facts, ol.key li, ul.w li')].map(e => {
      const r = e.getBoundingClientRect();
      const lh = parseFloat(getComputedStyle(e).lineHeight);
      return {text: e.textContent.trim(),
              words: e.textContent.trim().split(/\s+/).length,
              width: r.width, lines: Math.round(r.height / lh)};
    });
    const peak = s.querySelector('.peak');
    const first = s.querySelector('.sts a');
    return {fn: s.getAttribute('data-function'), svg: svg ? box(svg) : null,
            labels, readouts, prose,
            bands: s.querySelectorAll('path.band').length,
            peakLine: peak ? peak.getAttribute('data-line') : null,
            firstLine: first ? first.getAttribute('data-line') : null};
  });
  return {width: document.documentElement.clientWidth, sections};
})()
"""


def inside(b, outer, slack=0.5):
    return (b["left"] >= outer["left"] - slack and
            b["right"] <= outer["right"] + slack and
            b["top"] >= outer["top"] - slack and
            b["bottom"] <= outer["bottom"] + slack)


def overlap(a, b, slack=0.5):
    w = min(a["right"], b["right"]) - max(a["left"], b["left"])
    h = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    return w > slack and h > slack


def check_layout(layout, what):
    page = {"left": 0, "right": layout["width"], "top": -1e9, "bottom": 1e9}
    for s in layout["sections"]:
        name = "%s: %s" % (what, s["fn"])
        if s["svg"]:
            for t in s["labels"]:
                check(inside(t["box"], s["svg"]) and inside(t["box"], page),
                      "%s: label %r inside its chart %s and the page (at %s)"
                      % (name, t["text"], s["svg"], t["box"]))
            labels = s["labels"]
            for i in range(len(labels)):
                for j in range(i + 1, len(labels)):
                    check(not overlap(labels[i]["box"], labels[j]["box"]),
                          "%s: labels %r and %r overlap (%s, %s)" % (
                              name, labels[i]["text"], labels[j]["text"],
                              labels[i]["box"], labels[j]["box"]))
            for r in s["readouts"]:
                check(r["shown"] == "visible" and inside(r["box"], s["svg"]),
                      "%s: the readout %r shows inside its chart on focus"
                      % (name, r["text"]))
        for p in s["prose"]:
            if p["words"] >= 4:
                check(p["width"] >= 200 and p["lines"] * 2 <= p["words"],
                      "%s: %r is %dpx wide in %d lines for %d words" % (
                          name, p["text"][:50], p["width"], p["lines"],
                          p["words"]))


def main():
    with tempfile.TemporaryDirectory(prefix="tma-html-") as tmp:
        page = os.path.join(tmp, "report.html")
        p = subprocess.run([TOOL, *CACHE, "--format=json",
                            "--html-out=" + page, SEED], cwd=SRC,
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            print(p.stderr)
            sys.exit("tensor-accountant exited %d" % p.returncode)
        report = json.loads(p.stdout)
        # --html-out replaces only a report the tool wrote: a user's file
        # with that name stays as it was, and the run fails saying why.
        theirs = os.path.join(tmp, "notes.html")
        with open(theirs, "w") as f:
            f.write("<p>my notes</p>")
        q = subprocess.run([TOOL, *CACHE, "--format=json",
                            "--html-out=" + theirs, SEED], cwd=SRC,
                           capture_output=True, text=True, timeout=600)
        with open(theirs) as f:
            check(q.returncode == 2 and f.read() == "<p>my notes</p>" and
                  "not a report this tool wrote" in q.stderr,
                  "--html-out leaves a file it did not write alone (exit %d, %s)"
                  % (q.returncode, q.stderr.strip()))
        functions = report["functions"]
        check(len(functions) == 4, "the seed has four functions (got %d)" %
              len(functions))
        with open(page, "rb") as f:
            html = f.read()
        check(b"tensor-accountant" in html[:2000], "the page says who wrote it")

        url = "file://" + page
        with Browser() as browser:
            browser.open_page(width=1440)
            since = browser.navigate(url)
            dom = browser.evaluate(READ_DOM)
            layout = browser.evaluate(READ_LAYOUT)
            external = browser.evaluate(READ_EXTERNAL)
            errors = browser.console_errors(since)
            requests = browser.requests(since)
            if SHOT:
                block1 = next((s for s in dom if s["fn"] == "block1"), None)
                if block1:
                    # With line 14's column focused, as a keyboard user sees it.
                    browser.evaluate("document.querySelector("
                                     "'section[data-function=\"block1\"] "
                                     ".sts a[data-line=\"14\"]').focus()")
                    b = block1["sectionBox"]
                    browser.screenshot(SHOT, {"x": 0, "y": b["top"] - 4,
                                              "width": 1440,
                                              "height": b["bottom"] - b["top"] + 8})
                    print("screenshot:", SHOT)

        check_layout(layout, SEED)
        check(not errors, "no console errors (got %s)" % errors)
        check(requests == [url], "the page requests nothing but itself "
              "(got %s)" % requests)
        check(not external["elements"] and not external["urls"],
              "no element loads anything (got %s)" % external)

        check([s["fn"] for s in dom] == [f["function"] for f in functions],
              "one section per function, in order")
        by_name = {s["fn"]: s for s in dom}
        for f in functions:
            name = f["function"]
            s = by_name.get(name)
            if not s:
                continue
            check(s["charts"] == 1 and s["svgs"] == 1,
                  "%s: one chart (got %d, %d svg)" % (name, s["charts"], s["svgs"]))
            check(len(s["described"]) == 2 and all(s["described"]),
                  "%s: the chart has a text alternative" % name)
            columns = s["columns"]
            check(columns and all(c["focused"] for c in columns),
                  "%s: every statement is focusable" % name)
            check(all(c["shown"] == "visible" for c in columns) and
                  s["hiddenTip"] == "hidden",
                  "%s: a statement's line shows on focus only" % name)
            check(all(c["name"].startswith("line %s: " % c["data"]["line"])
                      for c in columns),
                  "%s: each column is named by its line and text" % name)
            column_at = {}
            for c in columns:
                column_at.setdefault(int(c["data"]["line"]), c["box"])

            # Peak: line, bytes and storages from the JSON; drawn in its column.
            summary = f["summary"]
            peak = s["peak"]
            check(peak is not None, "%s: a peak marker" % name)
            if peak:
                check(int(peak["data"]["line"]) == summary["peak_line"],
                      "%s: peak at line %s (JSON %s)" % (
                          name, peak["data"]["line"], summary["peak_line"]))
                check(int(peak["data"]["bytes"]) == summary["peak_live_bytes"],
                      "%s: peak bytes %s (JSON %s)" % (
                          name, peak["data"]["bytes"], summary["peak_live_bytes"]))
                check(sorted(map(int, peak["data"]["storages"].split())) ==
                      sorted(summary["peak_storages"]),
                      "%s: storages live at the peak" % name)
                col = column_at.get(summary["peak_line"])
                x = (peak["box"]["left"] + peak["box"]["right"]) / 2
                check(col and col["left"] <= x <= col["right"],
                      "%s: the peak marker is drawn in line %s's column" % (
                          name, summary["peak_line"]))

            # Bands: one per storage, with the JSON's lines and bytes.
            bands = {int(b["data"]["storage"]): b for b in s["bands"]}
            check(len(s["bands"]) == len(f["storages"]) == len(bands),
                  "%s: one band per storage (%d bands, %d storages)" % (
                      name, len(s["bands"]), len(f["storages"])))
            for st in f["storages"]:
                b = bands.get(st["id"])
                if not b:
                    check(False, "%s: a band for storage %d" % (name, st["id"]))
                    continue
                d = b["data"]
                check(int(d["first-line"]) == st["allocated_line"] and
                      int(d["last-line"]) == st["released_line"],
                      "%s: storage %s (%s) from line %s to %s (JSON %s to %s)" % (
                          name, st["id"], st["name"], d["first-line"],
                          d["last-line"], st["allocated_line"], st["released_line"]))
                check(d["bytes"] == str(st["bytes"]),
                      "%s: storage %s has %s bytes (JSON %s)" % (
                          name, st["id"], d["bytes"], st["bytes"]))
                first = column_at.get(st["allocated_line"])
                last = column_at.get(st["released_line"])
                check(first and last and
                      abs(b["box"]["left"] - first["left"]) <= 1 and
                      abs(b["box"]["right"] - last["right"]) <= 1,
                      "%s: storage %s is drawn from its first to its last column"
                      % (name, st["id"]))
            # Independently of the storages list: each named new storage of
            # the tensor table starts a band at its line, with its bytes.
            for t in f["tensors"]:
                if t["kind"] in ("alloc", "copy"):
                    check(any(int(b["data"]["first-line"]) == t["line"] and
                              b["data"]["bytes"] == str(t["storage_bytes"])
                              for b in s["bands"]),
                          "%s: %s (%s) starts a band at line %d" % (
                              name, t["name"], t["kind"], t["line"]))

            # Warnings: each links to the column of its line.
            diags = [d for d in report["diagnostics"]
                     if f["line"] <= d["line"] and d["file"] == f["file"]
                     and not any(g["line"] > f["line"] and g["line"] <= d["line"]
                                 for g in functions if g["file"] == f["file"])]
            check(len(s["warnings"]) == len(diags),
                  "%s: %d warnings listed (JSON %d)" % (
                      name, len(s["warnings"]), len(diags)))
            check(all(w["target"] == w["line"] for w in s["warnings"]),
                  "%s: every warning links to its line (%s)" % (name, s["warnings"]))

        # The seed's own answers for block1.
        expected, live = expected_block1()
        b1 = next((f for f in functions if f["function"] == "block1"), None)
        s1 = by_name.get("block1")
        check(len(expected) == 4 and live == 640 << 20,
              "blocks.expected.md gives block1's four storages and 640 MiB")
        if b1 and s1:
            # Nothing in block1 is released before its last line, so its
            # peak is the seed's nothing-freed total.
            check(s1["peak"] and int(s1["peak"]["data"]["bytes"]) == live,
                  "block1: the peak marker says 640 MiB")
            drawn = sorted((b["data"]["bytes"]) for b in s1["bands"])
            check(drawn == sorted(str(bytes_) for _, bytes_ in expected),
                  "block1: bands of the seed's sizes %s (got %s)" % (
                      expected, drawn))
            lines = {t["name"]: t["line"] for t in b1["tensors"]}
            for tensor, bytes_ in expected:
                check(any(int(b["data"]["first-line"]) == lines.get(tensor) and
                          b["data"]["bytes"] == str(bytes_) for b in s1["bands"]),
                      "block1: %s's band starts at its line" % tensor)

        # The layout input: a peak at the first statement, a constructor,
        # many bands close together, bands that step.
        page2 = os.path.join(tmp, "layout.html")
        p = subprocess.run([TOOL, *CACHE, "--format=json",
                            "--html-out=" + page2, LAYOUT], cwd=SRC,
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            print(p.stderr)
            sys.exit("tensor-accountant exited %d on %s" % (p.returncode, LAYOUT))
        with Browser() as browser:
            browser.open_page(width=1440)
            browser.navigate("file://" + page2)
            layout = browser.evaluate(READ_LAYOUT)
        by_fn = {s["fn"]: s for s in layout["sections"]}
        # The input does what it is for.
        first = by_fn.get("peak_first", {})
        check(first.get("peakLine") and
              first.get("peakLine") == first.get("firstLine"),
              "peak_first: the peak is at the first statement (%s, %s)" % (
                  first.get("peakLine"), first.get("firstLine")))
        ctor = by_fn.get("Net::Net", {})
        check(ctor and not ctor["svg"] and ctor["prose"] and
              ctor["prose"][0]["lines"] == 1,
              "Net::Net: the constructor's sentence takes one line (%s)" %
              ctor.get("prose"))
        check(by_fn.get("many_bands", {}).get("bands") == 14,
              "many_bands: fourteen bands")
        check(any(t["text"].startswith("1.5 GiB")
                  for t in first.get("labels", [])),
              "peak_first: the axis names its 1.5 GiB tick in full")
        check_layout(layout, LAYOUT)

    if failures:
        sys.exit("%d failure(s)" % len(failures))
    print("html report: all checks passed")


try:
    main()
except ProtocolError as e:
    sys.exit("browser: %s" % e)
