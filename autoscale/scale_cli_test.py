#!/usr/bin/python3
"""`surge scale simulate` end to end: a hand-checkable CSV trace through the CLI (its JSON
summary), the seed day (>= 99% of minutes within the SLO, fewer replica-hours than the fixed
fleet), flag errors, and the HTML report in headless Chromium (the page's script marks
<html data-ok="1"> when its charts are there; no console message). Chromium missing: those
checks are skipped, saying so."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from chromium_util import CHROMIUM, run_chromium  # noqa: E402
SURGE = sys.argv.pop(1) if len(sys.argv) > 1 else "build/surge"
TMP = tempfile.mkdtemp(prefix="scale_cli_test_")
BENCH_TWO = "autoscale/testdata/bench_two_points.json"   # 10 QPS at 0.5 s, 20 QPS at 1.5 s
BENCH_SEED = "autoscale/testdata/bench_seed_engine.json"


def path(name):
    return os.path.join(TMP, name)


def simulate(*args):
    return subprocess.run([SURGE, "scale", "simulate", *map(str, args)], capture_output=True, text=True, timeout=60)


class ScaleSimulateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        proc = simulate("--bench", BENCH_SEED, "--trace", "diurnal", "--policy", "autoscale/examples/seed_day.json",
                        "--html", path("seed.html"), "--json", path("seed.json"))
        assert proc.returncode == 0, proc.stderr
        cls.seed_stdout = proc.stdout
        with open(path("seed.json")) as f:
            cls.seed = json.load(f)

    def test_seed_day_meets_the_slo_with_fewer_replica_hours(self):
        a, fixed = self.seed["autoscaled"], self.seed["fixed"]
        self.assertEqual(a["minutes"], 1440)
        self.assertGreaterEqual(a["fraction_meeting_slo"], 0.99)
        self.assertLess(a["replica_hours"], fixed["replica_hours"])
        self.assertEqual(fixed["replicas"], 20)  # ceil(500 / 25.5)
        self.assertAlmostEqual(fixed["replica_hours"], 480, places=6)
        self.assertEqual(self.seed["autoscaled"]["slo_ttft_p95_s"], 1.5)  # the pool's ttft_p95 target
        self.assertEqual(sorted(self.seed["series"]["ready_by_class"]), ["on-demand", "spot"])
        self.assertIn("autoscaled:", self.seed_stdout)

    def test_hand_checkable_csv_trace(self):
        # One replica (min = max = 1), 25 QPS for 10 minutes against 20 of capacity: the
        # backlog grows 5 a second to 3000, then drains at 20 a second once demand stops.
        with open(path("step.csv"), "w") as f:
            f.write("minute,qps\n" + "".join(f"{m},{25 if m < 10 else 0}\n" for m in range(20)))
        with open(path("one.json"), "w") as f:
            json.dump({"pools": {"one": {"min_replicas": 1, "max_replicas": 1, "targets": {"busy_fraction": 0.75}}}}, f)
        proc = simulate("--bench", BENCH_TWO, "--trace", path("step.csv"), "--policy", path("one.json"),
                        "--slo-ttft-p95", 1, "--html", path("step.html"), "--json", path("step.json"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(path("step.json")) as f:
            report = json.load(f)
        queue = report["series"]["queue"]
        self.assertEqual([queue[0], queue[9], queue[10], queue[11], queue[12]], [300, 3000, 1800, 600, 0])
        self.assertAlmostEqual(report["series"]["ttft_p95_s"][9], 151.5)
        self.assertEqual(report["autoscaled"]["minutes_meeting_slo"], 7)
        self.assertAlmostEqual(report["autoscaled"]["replica_hours"], 20 / 60)
        self.assertEqual(report["model"]["instance_max_qps"], 20)
        self.assertAlmostEqual(report["model"]["instance_slo_qps"], 15)

    def test_errors_name_the_flag(self):
        base = ["--bench", BENCH_TWO, "--policy", "autoscale/examples/seed_day.json", "--html", path("x.html")]
        cases = [
            ([*base], 2, "--trace is required"),
            ([*base, "--trace", "sine"], 2, "expected diurnal, ramp, spike or a .csv file, got 'sine'"),
            ([*base, "--trace", path("none.csv")], 1, "none.csv"),
            ([*base, "--trace", "ramp", "--startup-delay", "soon"], 2, "--startup-delay"),
            ([*base, "--trace", "ramp", "--pool", "batch"], 2, "no pool 'batch'"),
            ([*base, "--trace", "ramp", "--slo-ttft-p95", "0.1"], 2, "SLO"),
            ([*base, "--trace", "ramp", "--start", "tuesday"], 2, "--start"),
            ([*base, "--trace", "ramp", "--colour", "red"], 2, "colour"),
        ]
        with open(path("bad.csv"), "w") as f:
            f.write("qps\n1\nlots\n")
        cases.append(([*base, "--trace", path("bad.csv"), "--peak-qps", "5"], 2, "built-in traces only"))
        cases.append(([*base, "--trace", path("bad.csv")], 2, "trace line 3: 'lots' is not a QPS"))
        for args, code, message in cases:
            proc = simulate(*args)
            self.assertEqual(proc.returncode, code, (args, proc.stderr))
            self.assertIn(message, proc.stderr, args)

    @unittest.skipIf(CHROMIUM is None, "chromium not installed")
    def test_html_loads_in_chromium_without_errors(self):
        proc = run_chromium("--dump-dom", "file://" + path("seed.html"))
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        root = re.search(r"<html[^>]*>", proc.stdout).group(0)
        self.assertIn('data-ok="1"', root)
        console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
        self.assertEqual(console, [], "the page logged to the console")
        self.assertEqual(proc.stdout.count("<svg"), 5)  # demand, replicas, queue, TTFT, cost
        for title in ("Demand (QPS)", "Replicas per class", "Queue", "P95 TTFT", "Cost (USD per hour)"):
            self.assertIn(title, proc.stdout)
        self.assertNotRegex(proc.stdout, r"<(script|link|img)[^>]+(src|href)=\"?https?:")  # self-contained
        png = path("seed.png")
        run_chromium("--screenshot=" + png, "--window-size=1280,1400", "file://" + path("seed.html"))
        self.assertGreater(os.path.getsize(png), 20000)  # charts, not a blank page


if __name__ == "__main__":
    if CHROMIUM is None:
        print("chromium not found: the browser check is skipped")
    try:
        unittest.main(verbosity=2)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
