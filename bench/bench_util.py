"""Shared by bench's Python tests: the binaries under test and a scripted server process."""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SURGE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "build/surge"
SCRIPTED = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else "build/bench/loadgen_scripted_server"
del sys.argv[1:3]  # leave the rest to unittest


class ScriptedServer:
    """loadgen_scripted_server as a context manager; `.url` once it listens."""

    def __init__(self, *flags):
        self.flags = [str(flag) for flag in flags]

    def __enter__(self):
        # stdin is a pipe we hold: the server exits when it closes, even if this test dies.
        self.proc = subprocess.Popen([SCRIPTED, *self.flags], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        match = re.search(r"listening on (http://\S+)", line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"scripted server did not start: {line!r}")
        self.url = match.group(1)
        return self

    def __exit__(self, *exc):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def bench(*args, timeout=60):
    """Runs `surge bench ARGS`; returns the CompletedProcess (text mode)."""
    return subprocess.run([SURGE, "bench", *[str(a) for a in args]], capture_output=True, text=True,
                          timeout=timeout)


_TEMP_DIR = tempfile.mkdtemp(prefix="surge_bench_test_")
atexit.register(shutil.rmtree, _TEMP_DIR, ignore_errors=True)


def temp_path(name):
    """A fresh path in this run's temporary directory (removed at exit)."""
    stem, ext = os.path.splitext(name)
    return tempfile.mktemp(prefix=stem + "_", suffix=ext, dir=_TEMP_DIR)


def read_text(path):
    with open(path, encoding="utf-8") as file:
        return file.read()


def read_json(path):
    return json.loads(read_text(path))
