"""Live `surge serve` engines and a `surge route` in front of them, on 127.0.0.1 with ports
the kernel picks, plus a bounded request load: shared by the tests that watch a running
fleet (tests/dashboard_browser_test.py, tests/prometheus_scrape_test.py)."""
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

MODEL_DIR = "models/stories260K"
MODEL = "stories260K"
CHAT_TEMPLATE = "tests/data/chat_template_simple.jinja"


class SurgeProcess:
    """One surge subcommand; `url` once it printed its ready line. Logs go to files (a pipe
    nobody reads would block it)."""

    def __init__(self, surge, args, timeout_s=60, env=None):
        self.log_dir = tempfile.mkdtemp(prefix="surge_fleet_")
        self._stdout = open(os.path.join(self.log_dir, "stdout"), "w+")
        self._stderr = open(os.path.join(self.log_dir, "stderr"), "w+")
        self.proc = subprocess.Popen([surge, *args], stdout=self._stdout, stderr=self._stderr, text=True, env=env)
        deadline = time.monotonic() + timeout_s
        while True:
            match = re.search(r"ready on (http://\S+)", open(self._stdout.name).read())
            if match:
                self.url = match.group(1)
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"surge {args[0]} did not start: {self.stderr()[-3000:]}")
            time.sleep(0.05)

    def stderr(self):
        return open(self._stderr.name).read()

    def stop(self):
        """SIGTERM (graceful drain), SIGKILL after 20 s; the exit code."""
        terminate(self.proc, timeout_s=20)
        self._stdout.close()
        self._stderr.close()
        return self.proc.returncode


def terminate(proc, timeout_s):
    """SIGTERM, then SIGKILL after `timeout_s`; waits for the exit."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_engine(surge, *extra):
    return SurgeProcess(surge, ["serve", MODEL_DIR, "--host", "127.0.0.1", "--port", "0", "--threads", "1",
                                "--chat-template", CHAT_TEMPLATE, *extra])


def start_router(surge, *args):
    return SurgeProcess(surge, ["route", "--host", "127.0.0.1", "--port", "0", *args], timeout_s=30)


def http(method, url, body=None, headers=None, timeout_s=30):
    """(status, body text) of one request; HTTP errors are answers, not exceptions."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


class Load:
    """`concurrency` threads sending short completions to `url` (round robin over the
    `requests` templates), each pausing `pause_s` between requests (the bundled model
    answers in milliseconds: without a pause the load would take every core), until stop();
    `statuses` counts the answers."""

    def __init__(self, url, concurrency=3, requests=None, max_tokens=24, pause_s=0.02):
        default = [({"model": MODEL, "prompt": "Once upon a time", "max_tokens": max_tokens, "temperature": 0.8}, {})]
        self._requests, self._url, self._stop, self._pause_s = requests or default, url, threading.Event(), pause_s
        self.statuses, self._lock = {}, threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(concurrency)]
        for thread in self._threads:
            thread.start()

    def _run(self, index):
        n = index
        while not self._stop.is_set():
            body, headers = self._requests[n % len(self._requests)]
            n += 1
            try:
                status, _ = http("POST", self._url + "/v1/completions", body, headers)
            except OSError:
                status = "connection error"
            with self._lock:
                self.statuses[status] = self.statuses.get(status, 0) + 1
            self._stop.wait(self._pause_s)

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)
        return dict(self.statuses)
