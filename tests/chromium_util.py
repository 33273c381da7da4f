"""Headless Chromium for the tests that look at a page (the bench and simulator HTML
reports, the live /dashboard): CHROMIUM is None when it is not installed (scripts/setup.sh
installs it)."""
import base64
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
import zlib

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def run_chromium(*args):
    """Runs headless Chromium with a throwaway profile; the CompletedProcess (text output)."""
    profile = tempfile.mkdtemp(prefix="surge_chromium_")
    try:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0", *args],
            capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(profile, ignore_errors=True)



def decode_png(data):
    """Pixels of an 8-bit, non-interlaced RGB or RGBA PNG as a list of rows of (r, g, b)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    channels = 3 if color == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        prev = line
    return rows


class DevToolsPage:
    """One headless Chromium with a page driven over the DevTools protocol on a pipe
    (--remote-debugging-pipe: NUL-terminated JSON on fds 3 and 4), for tests that watch a
    live page: evaluate(expression), screenshot(path), and every console message,
    exception and error log entry the page produced (`problems`). Use as a context manager."""

    def __init__(self, width=1280, height=1400):
        self.problems, self._buffer, self._next_id = [], b"", 0
        self._profile = tempfile.mkdtemp(prefix="surge_chromium_")
        to_browser, self._to_browser = os.pipe()
        self._from_browser, from_browser = os.pipe()

        def child_fds():  # dup first: dup2 onto a fd it already has would keep CLOEXEC
            read_end, write_end = os.dup(to_browser), os.dup(from_browser)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self._proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--window-size={width},{height}", "--remote-debugging-pipe", "--user-data-dir=" + self._profile,
             "about:blank"],
            preexec_fn=child_fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        targets = self._call("Target.getTargets")["targetInfos"]
        page = next(t["targetId"] for t in targets if t["type"] == "page")
        self._session = self._call("Target.attachToTarget", {"targetId": page, "flatten": True})["sessionId"]
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            self._call(domain, session=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)

    def navigate(self, url):
        self._call("Page.navigate", {"url": url}, session=True)

    def evaluate(self, expression):
        """The expression's value (JSON-serialisable), awaiting it when it is a promise."""
        result = self._call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                 "awaitPromise": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path):
        data = self._call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=True)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data["data"]))

    def _call(self, method, params=None, session=False, timeout_s=30):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._next_id:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply["result"]
                self._note(reply)
            ready, _, _ = select.select([self._from_browser], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(self._from_browser, 1 << 20) if ready else b""
            if not chunk:
                raise RuntimeError(f"{method}: no answer from Chromium within {timeout_s} s")
            self._buffer += chunk

    def _note(self, event):
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.problems.append(f"console.{params.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            self.problems.append("exception: " + json.dumps(params.get("exceptionDetails", {}))[:2000])
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            entry = params["entry"]
            self.problems.append(f"log {entry.get('source')} {entry.get('level')}: {entry.get('text')} {entry.get('url', '')}")
