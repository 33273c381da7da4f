#!/usr/bin/python3
"""GET /dashboard in headless Chromium, on a live `surge serve` (models/stories260K) and on a
live `surge route` in front of it (tiers on), while a bounded load runs: the page logs
nothing to the console, its charts draw points (window.__surgeDashboard), the router page
fills the backend and tier tables, and a screenshot of each is kept in OUTPUT_DIR.
The page's parser and histogram quantile are also checked on a fixed exposition.
Usage: dashboard_browser_test.py SURGE OUTPUT_DIR. Exits 77 (skipped) without Chromium."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chromium_util import CHROMIUM, DevToolsPage, decode_png  # noqa: E402
from live_fleet import Load, http, start_engine, start_router  # noqa: E402

SURGE = sys.argv[1] if len(sys.argv) > 1 else "build/surge"
OUTPUT_DIR = sys.argv[2] if len(sys.argv) > 2 else "build/tests/dashboard_browser_test"
ENGINE_CHARTS = ("qps", "ttft", "tpot", "tokens", "batch", "kv", "queue", "busy")
ROUTER_CHARTS = ("qps", "ttft", "queue", "backend_rps")
MIN_POINTS = 3
SERIES_COLORS = [(0x1F, 0x77, 0xB4), (0xD6, 0x27, 0x28)]  # the page's first two series colours

# Two polls 2 s apart of one histogram (buckets 0.1, 0.5, 1, +Inf): increases 10, 30, 40, 50.
# As Prometheus computes it: rank 0.5 * 50 = 25 lies in (0.1, 0.5] -> 0.1 + 0.4 * 15 / 20 = 0.4;
# rank 0.7 * 50 = 35 in (0.5, 1] -> 0.5 + 0.5 * 5 / 10 = 0.75; rank 47.5 is in +Inf -> 1.
EXPOSITION = """# TYPE h histogram
h_bucket{{le="0.1"}} {}
h_bucket{{le="0.5"}} {}
h_bucket{{le="1"}} {}
h_bucket{{le="+Inf"}} {}
h_count {}
# TYPE c counter
c_total{{code="200",path="a\\"b"}} {}
"""
BEFORE = EXPOSITION.format(5, 5, 5, 5, 5, 10)
AFTER = EXPOSITION.format(15, 35, 45, 55, 55, 16)

def wait_for_charts(page, charts, timeout_s=30):
    """The dashboard's status once every chart in `charts` has MIN_POINTS points."""
    deadline = time.monotonic() + timeout_s
    while True:
        status = page.evaluate("window.__surgeDashboard")
        points = {c: (status or {}).get("charts", {}).get(c, {}).get("points", 0) for c in charts}
        if status and min(points.values()) >= MIN_POINTS or time.monotonic() > deadline:
            return status, points
        time.sleep(0.25)


def colored_pixels(png_path):
    with open(png_path, "rb") as file:
        pixels = [p for row in decode_png(file.read()) for p in row]
    return [sum(1 for p in pixels if sum(abs(p[i] - c[i]) for i in range(3)) < 40) for c in SERIES_COLORS]


class DashboardBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(OUTPUT_DIR, exist_ok=True)
        cls.engine = start_engine(SURGE)
        try:
            cls.router = start_router(SURGE, "--backend", cls.engine.url, "--tiers", "default,default,default")
        except Exception:
            cls.engine.stop()
            raise
        cls.load = Load(cls.router.url, concurrency=2)

    @classmethod
    def tearDownClass(cls):
        statuses = cls.load.stop()
        print("load:", statuses)
        cls.router.stop()
        cls.engine.stop()

    def load_dashboard(self, url, charts, name):
        status_code, html = http("GET", url + "/dashboard")
        self.assertEqual(status_code, 200)
        self.assertNotRegex(html, r"(src|href)=\"?(https?:)?//", "the page must load nothing from elsewhere")
        with DevToolsPage() as page:
            page.navigate(url + "/dashboard")
            status, points = wait_for_charts(page, charts)
            screenshot = os.path.join(OUTPUT_DIR, name + ".png")
            page.screenshot(screenshot)
            self.assertEqual(page.evaluate("1"), 1)  # drains the events that came before
            self.assertEqual(page.problems, [], "the page logged problems")
        print(f"{name}: {status}; screenshot {screenshot}")
        self.assertEqual(status["errors"], 0, status["last_error"])
        for chart, count in points.items():
            self.assertGreaterEqual(count, MIN_POINTS, f"chart {chart} drew {count} points: {status}")
        blue, red = colored_pixels(screenshot)
        self.assertGreater(blue, 300, "the first series colour is barely on the screenshot")
        self.assertGreater(red, 100, "the second series colour is barely on the screenshot")
        return status

    def test_engine_dashboard_draws_its_charts(self):
        status = self.load_dashboard(self.engine.url, ENGINE_CHARTS, "engine")
        self.assertEqual(status["role"], "engine")
        self.assertEqual(status["num_backends"], 0)
        self.assertEqual(status["alarms"], "off")

    def test_router_dashboard_shows_backends_and_tiers(self):
        status = self.load_dashboard(self.router.url, ROUTER_CHARTS, "router")
        self.assertEqual(status["role"], "router")
        self.assertEqual(status["num_backends"], 1)
        self.assertEqual(status["num_tiers"], 3)
        self.assertNotIn("tpot", status["charts"], "a router has no engine families")

    def test_parser_and_quantiles_match_prometheus(self):
        with DevToolsPage() as page:
            page.navigate(self.engine.url + "/dashboard")
            time.sleep(0.5)
            script = (f"prev = parseMetrics({BEFORE!r}); prev.time_ms = 0; cur = parseMetrics({AFTER!r}); "
                      "dtSeconds = 2; [quantile('h', 0.5), quantile('h', 0.7), quantile('h', 0.95), "
                      "sumRate('c_total'), cur.series.c_total[0].labels.path, cur.types.h]")
            got = page.evaluate(script)
        self.assertAlmostEqual(got[0], 0.4)
        self.assertAlmostEqual(got[1], 0.75)
        self.assertEqual(got[2], 1)
        self.assertAlmostEqual(got[3], 3.0)
        self.assertEqual(got[4:], ['a"b', "histogram"])


if __name__ == "__main__":
    if CHROMIUM is None:
        print("chromium not installed (scripts/setup.sh installs it): skipped")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1], verbosity=2)
