#!/usr/bin/env python3
"""How big the HTML report of all of testdata/ is, and how fast it renders.

Writes the report of every testdata/**/*.cpp in one run of the tool
(--format=html), prints its size against the 1 MB budget, then loads it in
headless chromium (the browser test's, tests/integrations/headless_chromium.py)
several times, side by side with an empty page and with the seed's report,
and prints per page the median of:

  load      the load event's end (performance timing), ms from navigation
  paint     first contentful paint, ms ('-' when chromium reports none)
  frame     the second animation frame after load: layout and paint done

A number, not a test: nothing here fails on time.

usage: bench/html-report.py [tensor-accountant] [--runs N] [--cache-dir DIR]
  (default tool: build/driver/tensor-accountant; run from the source root)
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integrations"))
from headless_chromium import Browser  # noqa: E402

BUDGET = 1 << 20

TIMING = r"""
new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const fcp = performance.getEntriesByType('paint')
      .find(e => e.name === 'first-contentful-paint');
  done({load: nav ? nav.loadEventEnd : null, paint: fcp ? fcp.startTime : null,
        frame: performance.now(),
        charts: document.querySelectorAll('figure.chart svg').length,
        nodes: document.getElementsByTagName('*').length});
})))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool", nargs="?",
                    default=os.path.join(ROOT, "build/driver/tensor-accountant"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache-dir", default=os.path.join(ROOT, "build/bench-cache"))
    args = ap.parse_args()

    sources = sorted(glob.glob("testdata/**/*.cpp", root_dir=ROOT, recursive=True))
    with tempfile.TemporaryDirectory(prefix="tma-html-bench-") as tmp:
        pages = {}
        for name, files in (("seed", ["testdata/seed/blocks.cpp"]),
                            ("testdata", sources)):
            path = os.path.join(tmp, name + ".html")
            t0 = time.monotonic()
            with open(path, "w") as out:
                p = subprocess.run([args.tool, "--cache-dir=" + args.cache_dir,
                                    "--format=html", *files], cwd=ROOT,
                                   stdout=out, stderr=subprocess.PIPE, text=True)
            if p.returncode not in (0, 1):
                sys.exit("tensor-accountant exited %d: %s" % (p.returncode, p.stderr))
            pages[name] = path
            print("%-9s %3d files  %8d bytes  (%.0f%% of 1 MB)  written in %.1f s"
                  % (name, len(files), os.path.getsize(path),
                     100.0 * os.path.getsize(path) / BUDGET,
                     time.monotonic() - t0))
        empty = os.path.join(tmp, "empty.html")
        with open(empty, "w") as f:
            f.write("<!DOCTYPE html><meta charset=utf-8><title>empty</title><p>.")
        size = os.path.getsize(pages["testdata"])
        print("testdata/ report: %s the 1 MB budget" %
              ("under" if size < BUDGET else "OVER"))

        results = {name: [] for name in ("empty", "seed", "testdata")}
        with Browser() as browser:
            browser.open_page()
            for _ in range(args.runs):
                # Interleaved, so that a busy machine slows all alike.
                for name, path in (("empty", empty), ("seed", pages["seed"]),
                                   ("testdata", pages["testdata"])):
                    browser.navigate("file://" + path)
                    results[name].append(browser.evaluate(TIMING))
        print("\nmedian of %d loads in headless chromium (ms from navigation):"
              % args.runs)
        print("%-9s %7s %7s %7s %7s %8s" % ("page", "load", "paint", "frame",
                                            "charts", "elements"))
        base = None
        for name, runs in results.items():
            med = {}
            for k in ("load", "paint", "frame"):
                values = [r[k] for r in runs if r[k] is not None]
                med[k] = statistics.median(values) if values else None
            base = base or med
            cell = lambda v: "%7.1f" % v if v is not None else "%7s" % "-"
            print("%-9s %s %s %s %7d %8d   frame %.1fx the empty page's"
                  % (name, cell(med["load"]), cell(med["paint"]),
                     cell(med["frame"]), runs[0]["charts"], runs[0]["nodes"],
                     med["frame"] / base["frame"] if base["frame"] else 0))
        frame = statistics.median(r["frame"] for r in results["testdata"])
        print("testdata/ report: %s a second to its first frame after load"
              % ("under" if frame < 1000 else "OVER"))


if __name__ == "__main__":
    main()
