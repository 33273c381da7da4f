"""Headless Chromium for the tests that look at a page (the bench and simulator HTML
reports): CHROMIUM is None when it is not installed (scripts/setup.sh installs it)."""
import shutil
import subprocess
import tempfile

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
