#!/usr/bin/env python3
"""Deep expressions through every front end (issue 10 item 10).

Clang parses `x.t().t()...` with 1,500 calls and a sum of 2,000 terms; the
analysis must too, in the CLI, inside clang-tidy-16 (our module) and in the
language server: no stack overflow, and every number either LibTorch's or
unknown with a reason.

What LibTorch does with the generated file (C++ temporaries live to the end
of the full-expression, so every partial sum is alive at the `;`):
  deep_chain: y = x transposed 1,500 times: shape [4, 8], strides [8, 1],
              a view of x (128 bytes), nothing allocated but x.
  long_sum:   y = x + x + ... (2,000 terms): shape [4, 8], 1,999 new
              128-byte storages, all alive at the end of the statement:
              peak 128 * 2,000 = 256,000 bytes.

--known-crashes lists the front ends that still crash (strict: a listed
one that no longer crashes fails the test too, so the fix removes it).

usage: deep_expressions.py --cli TA --clang-tidy CT --module SO
                           --cache-dir DIR [--known-crashes cli,clang-tidy,lsp]
"""
import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading

CHAIN = 1500
TERMS = 2000
TENSOR_BYTES = 4 * 8 * 4

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def source():
    chain = "x" + ".t()" * CHAIN
    terms = " + ".join(["x"] * TERMS)
    return ("#include <torch/torch.h>\n\n"
            "void deep_chain() {\n"
            "  auto x = torch::randn({4, 8});\n"
            "  auto y = %s;\n"
            "}\n\n"
            "void long_sum() {\n"
            "  auto x = torch::randn({4, 8});\n"
            "  auto y = %s;\n"
            "}\n" % (chain, terms))


def crashed(rc, stderr):
    return rc < 0 or rc >= 128 or "Stack dump" in stderr or \
        "PLEASE submit a bug report" in stderr


def judge_cli_report(report):
    """Each number is LibTorch's or null with a reason."""
    fns = {f["function"]: f for f in report.get("functions", [])}
    for name in ("deep_chain", "long_sum"):
        if not check(name in fns, "cli: %s is in the report" % name):
            continue
        rows = {t["name"]: t for t in fns[name]["tensors"]}
        y = rows.get("y")
        if not check(y is not None, "cli: %s has a row for y" % name):
            continue
        if y.get("shape") is None:
            check(bool(y.get("unknown_reason")),
                  "cli: %s: y unknown without a reason" % name)
        else:
            check(y["shape"] == [4, 8], "cli: %s: y shape %s" % (name, y["shape"]))
            if name == "deep_chain":
                check(y.get("strides") in (None, [8, 1]),
                      "cli: deep_chain: y strides %s" % y.get("strides"))
                check(y.get("kind") in (None, "view"),
                      "cli: deep_chain: y kind %s" % y.get("kind"))
        summary = fns[name]["summary"]
        peak = summary.get("peak_live_bytes")
        want = TENSOR_BYTES if name == "deep_chain" else TENSOR_BYTES * TERMS
        if peak is None:
            check(bool(summary.get("unknown_reason")),
                  "cli: %s: totals unknown without a reason" % name)
        else:
            check(peak == want, "cli: %s: peak %d, LibTorch %d" % (name, peak, want))
        print("cli: %s: y %s, peak %s%s" % (
            name, y.get("shape"), peak,
            "" if peak is not None else " (%s)" % summary.get("unknown_reason")))


def run_cli(args, path):
    p = subprocess.run([args.cli, "--format=json", "--cache-dir", args.cache_dir, path],
                       capture_output=True, text=True, timeout=900)
    if crashed(p.returncode, p.stderr):
        return True
    if check(p.returncode in (0, 1), "cli: exit status %d\n%s" % (p.returncode, p.stderr[-2000:])):
        judge_cli_report(json.loads(p.stdout))
    return False


def run_clang_tidy(args, path):
    p = subprocess.run([args.clang_tidy, "--load=" + args.module, "-checks=-*,torch-*",
                        path, "--", "-std=c++17", "-isystem", "/usr/include/torch/csrc/api/include"],
                       capture_output=True, text=True, timeout=1800)
    if crashed(p.returncode, p.stderr):
        return True
    check(p.returncode in (0, 1), "clang-tidy: exit status %d\n%s"
          % (p.returncode, p.stderr[-2000:]))
    return False


class LspClient:
    def __init__(self, cmd, cwd):
        self.p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.q = queue.Queue()
        self.err = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True).start()
        self.next_id = 1

    def _read(self):
        out = self.p.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.q.put(None)
                    return
                line = line.decode().rstrip("\r\n")
                if not line:
                    break
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
            self.q.put(json.loads(out.read(int(headers["content-length"]))))

    def send(self, method, params=None, request=False):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if request:
            msg["id"] = self.next_id
            self.next_id += 1
        body = json.dumps(msg).encode()
        try:
            self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.p.stdin.flush()
        except BrokenPipeError:
            pass
        return msg.get("id")

    def wait(self, pred, timeout=900):
        while True:
            try:
                m = self.q.get(timeout=timeout)
            except queue.Empty:
                return None
            if m is None or pred(m):
                return m


def run_lsp(args, path):
    c = LspClient([args.cli, "--lsp", "--cache-dir", args.cache_dir], os.path.dirname(path))
    uri = "file://" + path
    i = c.send("initialize", {"processId": None, "rootUri": None, "capabilities": {}},
               request=True)
    check(c.wait(lambda m: m.get("id") == i) is not None, "lsp: initialize answered")
    c.send("initialized", {})
    with open(path) as f:
        text = f.read()
    c.send("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "cpp", "version": 1, "text": text}})
    got = c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    if got is None:
        c.p.wait(timeout=60)
        return crashed(c.p.returncode if c.p.returncode is not None else 0,
                       b"".join(c.err).decode(errors="replace"))
    i = c.send("shutdown", None, request=True)
    c.wait(lambda m: m.get("id") == i)
    c.send("exit")
    try:
        rc = c.p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        c.p.kill()
        check(False, "lsp: did not exit after shutdown/exit")
        return False
    if crashed(rc, b"".join(c.err).decode(errors="replace")):
        return True
    check(rc == 0, "lsp: exit status %d" % rc)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--clang-tidy", required=True)
    ap.add_argument("--module", required=True)
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--known-crashes", default="")
    args = ap.parse_args()
    args.cli = os.path.abspath(args.cli)
    args.module = os.path.abspath(args.module)
    args.cache_dir = os.path.abspath(args.cache_dir)
    known = set(filter(None, args.known_crashes.split(",")))

    tmp = tempfile.mkdtemp(prefix="tma-deep-")
    try:
        path = os.path.join(tmp, "deep.cpp")
        with open(path, "w") as f:
            f.write(source())
        for name, run in (("cli", run_cli), ("clang-tidy", run_clang_tidy),
                          ("lsp", run_lsp)):
            did_crash = run(args, path)
            if name in known:
                check(did_crash, "%s no longer crashes: remove it from --known-crashes" % name)
                print("%s: crashes (known)" % name)
            else:
                check(not did_crash, "%s crashed on deep expressions" % name)
                print("%s: %s" % (name, "crashed" if did_crash else "no crash"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("deep expressions: every front end behaves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
