"""Headless Chromium over the DevTools protocol, from Python's standard library.

The browser runs with --remote-debugging-pipe: it reads commands from fd 3
and writes replies and events to fd 4, each a JSON message ended by a NUL
byte. One page (target) is attached in flat mode; every event is kept, so a
caller can ask afterwards what the console said and which requests the page
made.

Used by test_html_report.py (the HTML report in a real browser) and by
bench/html-report.sh (how long the report takes to render).
"""
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time

# As root in a container: no sandbox, no GPU, nothing that talks to the
# network on its own.
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--mute-audio",
    "--hide-scrollbars",
]


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


class ProtocolError(Exception):
    pass


class Browser:
    def __init__(self, timeout=60):
        exe = find_chromium()
        if not exe:
            raise ProtocolError("chromium is not installed "
                                "(bash scripts/install-deps.sh installs it)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="tma-chromium-")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # High numbers first, so that putting them on 3 and 4 in the child
        # cannot clobber one with the other.
        os.dup2(to_browser_r, 100)
        os.dup2(from_browser_w, 101)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def child_fds():
            os.dup2(100, 3)
            os.dup2(101, 4)

        self.proc = subprocess.Popen(
            [exe, *FLAGS, "--user-data-dir=" + self.profile,
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=False,
            preexec_fn=child_fds)
        os.close(100)
        os.close(101)
        self.out = os.fdopen(to_browser_w, "wb", buffering=0)
        self.inp = os.fdopen(from_browser_r, "rb", buffering=0)
        self.next_id = 0
        self.replies = {}
        self.events = []
        self.messages = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.session = None

    def _read(self):
        buf = b""
        while True:
            chunk = self.inp.read(65536)
            if not chunk:
                self.messages.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                self.messages.put(json.loads(raw))

    def _pump(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ProtocolError("no answer from chromium in %ds" % self.timeout)
        try:
            msg = self.messages.get(timeout=remaining)
        except queue.Empty:
            raise ProtocolError("no answer from chromium in %ds" % self.timeout)
        if msg is None:
            raise ProtocolError("chromium closed the pipe (exit %s)" %
                                self.proc.poll())
        if "id" in msg:
            self.replies[msg["id"]] = msg
        else:
            self.events.append(msg)

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self.out.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while self.next_id not in self.replies:
            self._pump(deadline)
        reply = self.replies.pop(self.next_id)
        if "error" in reply:
            raise ProtocolError("%s: %s" % (method, reply["error"]))
        return reply.get("result", {})

    def wait_for(self, method, since=0):
        """The first event `method` of the page at or after index `since`."""
        deadline = time.monotonic() + self.timeout
        while True:
            for e in self.events[since:]:
                if e.get("method") == method and e.get("sessionId") == self.session:
                    return e
            self._pump(deadline)

    def open_page(self, width=1280, height=900):
        target = self.send("Target.createTarget", {"url": "about:blank"},
                           session=False)["targetId"]
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": False})

    def navigate(self, url):
        """Loads url and waits for its load event; returns the event index
        where this navigation's events begin."""
        since = len(self.events)
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired", since)
        return since

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True,
                            "awaitPromise": True})
        if "exceptionDetails" in result:
            raise ProtocolError("evaluate: %s" % result["exceptionDetails"])
        return result["result"].get("value")

    def page_events(self, since=0):
        return [e for e in self.events[since:]
                if e.get("sessionId") == self.session]

    def console_errors(self, since=0):
        """Console errors, uncaught exceptions and error log entries."""
        errors = []
        for e in self.page_events(since):
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                errors.append("exception: %s" % p.get("exceptionDetails", {}).get("text"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console.%s: %s" % (p["type"], p.get("args")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                errors.append("log: %s" % p["entry"].get("text"))
        return errors

    def requests(self, since=0):
        """URLs of every request the page made."""
        return [e["params"]["request"]["url"] for e in self.page_events(since)
                if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path, clip=None):
        import base64
        params = {"format": "png", "captureBeyondViewport": True}
        if clip:
            params["clip"] = dict(clip, scale=1)
        data = self.send("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except ProtocolError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
