#!/usr/bin/python3
"""The HTML report in headless Chromium: the page's script finishes without an exception
or console message (it marks <html data-ok="1">), and the screenshot shows the charts.
Exits 77 (ctest: skipped) when Chromium is not installed (scripts/setup.sh installs it)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from chromium_util import CHROMIUM, decode_png, run_chromium  # noqa: E402
from bench_util import ScriptedServer, bench, temp_path

# Series colours the charts draw with (A and B): they must show up in the screenshot.
SERIES_COLORS = [(0x1F, 0x77, 0xB4), (0xD6, 0x27, 0x28)]


class HtmlReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.html = temp_path("report.html")
        with ScriptedServer("--ttft-ms", 10, "--itl-ms", 3, "--num-tokens", 6) as a, \
                ScriptedServer("--ttft-ms", 20, "--itl-ms", 6, "--num-tokens", 6, "--faults", "none,none,http500") as b:
            proc = bench("--compare", a.url, b.url, "--concurrency", "1,2,4", "--num-requests", 9,
                         "--slo", "ttft=15ms", "--html", cls.html)
        assert proc.returncode == 0, proc.stderr

    def test_script_renders_without_errors(self):
        proc = run_chromium("--dump-dom", "file://" + self.html)
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        root = re.search(r"<html[^>]*>", proc.stdout).group(0)
        self.assertIn('data-ok="1"', root, proc.stdout[:3000])
        self.assertNotIn("data-error", root)
        console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
        self.assertEqual(console, [], "the page logged to the console")
        self.assertGreaterEqual(proc.stdout.count("<svg"), 6)  # 2 sweep + 2 TTFT + 2 ITL charts
        self.assertIn("c=4 A/B", proc.stdout)

    def test_screenshot_shows_the_charts(self):
        png = temp_path("report.png")
        proc = run_chromium("--screenshot=" + png, "--window-size=1280,2000", "file://" + self.html)
        self.assertTrue(os.path.exists(png), proc.stderr[-2000:])
        with open(png, "rb") as file:
            rows = decode_png(file.read())
        self.assertEqual((len(rows[0]), len(rows)), (1280, 2000))
        pixels = [p for row in rows for p in row]
        colors = set(pixels)
        background = max(colors, key=pixels.count) if len(colors) < 50 else (250, 250, 250)
        inked = sum(1 for p in pixels if abs(p[0] - background[0]) + abs(p[1] - background[1]) > 30)
        self.assertGreater(len(colors), 100, "a blank or nearly blank page")
        self.assertGreater(inked / len(pixels), 0.02)
        for color in SERIES_COLORS:
            near = sum(1 for p in pixels if sum(abs(p[i] - color[i]) for i in range(3)) < 40)
            self.assertGreater(near, 500, f"series colour {color} barely drawn")


if __name__ == "__main__":
    if CHROMIUM is None:
        print("chromium not installed (scripts/setup.sh installs it): skipped")
        sys.exit(77)
    unittest.main(verbosity=2)
