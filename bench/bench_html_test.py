#!/usr/bin/python3
"""The HTML report in headless Chromium: the page's script finishes without an exception
or console message (it marks <html data-ok="1">), and the screenshot shows the charts.
Exits 77 (ctest: skipped) when Chromium is not installed (scripts/setup.sh installs it)."""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from chromium_util import CHROMIUM, run_chromium  # noqa: E402
from bench_util import ScriptedServer, bench, temp_path

# Series colours the charts draw with (A and B): they must show up in the screenshot.
SERIES_COLORS = [(0x1F, 0x77, 0xB4), (0xD6, 0x27, 0x28)]


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
