#!/usr/bin/python3
"""`surge plan` as a user runs it: the hand-computed fixture cases through the CLI (text and
--json), every flag's effect, usage errors (exit 2) and bad inputs (exit 1) with clear
messages; and a plan from a real `surge bench --json` run against `surge serve` on the
bundled model, so the planner reads what the bench actually writes."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

SURGE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "build/surge"
del sys.argv[1:2]
BASIC = "autoscale/testdata/bench_basic.json"
PROFILE = "autoscale/testdata/profile_half_day.json"


def plan(*args, timeout=30):
    return subprocess.run([SURGE, "plan", *[str(a) for a in args]], capture_output=True, text=True, timeout=timeout)


def plan_json(*args):
    proc = plan(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


class PlanCliTest(unittest.TestCase):
    def test_flat_plan_text(self):
        proc = plan("--bench", BASIC, "--target-qps", 100, "--slo-ttft-p95", 0.5, "--price", "spot=0.9",
                    "--price=on-demand=3.2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout
        self.assertIn("per instance: 8.5 req/s at concurrency 6, interpolated between c=4 and c=8", out)
        self.assertIn("concurrency per instance: 6", out)
        self.assertIn("instances at peak      12", out)
        self.assertIn("cost per month on spot:        $7884.00", out)
        self.assertIn("cost per month on on-demand:   $28032.00", out)
        self.assertNotIn("with caching", out)

    def test_each_flag_takes_effect(self):
        base = ("--bench", BASIC, "--target-qps", 100, "--slo-ttft-p95", 0.5)
        self.assertEqual(plan_json(*base)["scenarios"][0]["peak_instances"], 12)
        e2e = plan_json(*base, "--slo-e2e-p95", 1.0)
        self.assertAlmostEqual(e2e["capacity"]["qps"], 7.5)
        self.assertEqual(e2e["scenarios"][0]["peak_instances"], 14)  # ceil(100 / 7.5)
        cached = plan_json(*base, "--cache-hit-rate", 0.2)["scenarios"]
        self.assertEqual([s["peak_instances"] for s in cached], [12, 10])
        prefix = plan_json(*base, "--cache-hit-rate", 0.2, "--prefix-hit-rate", 0.5)["scenarios"]
        self.assertEqual(prefix[1]["peak_instances"], 9)
        self.assertAlmostEqual(prefix[1]["throughput_factor"], 1 / 0.92)
        hourly = plan_json(*base, "--profile", PROFILE, "--price", "spot=0.9")["scenarios"][0]
        self.assertEqual([h["instances"] for h in hourly["hours"]], [12] * 12 + [6] * 12)
        self.assertAlmostEqual(hourly["usd_per_month"]["spot"], 216 / 24 * 730 * 0.9)
        self.assertEqual(plan_json(*base, "--profile", "flat")["scenarios"][0]["hours"], [])
        text = plan(*base, "--profile", PROFILE).stdout
        self.assertIn("a fixed fleet for the peak would run 288 (following the profile saves 25%)", text)

    def test_usage_errors_exit_2(self):
        cases = [
            ((), "--bench is required"),
            (("--bench", BASIC, "--target-qps", 10), "--slo-ttft-p95 is required"),
            (("--bench", BASIC, "--target-qps", "ten", "--slo-ttft-p95", 1), "--target-qps: expected a number"),
            (("--bench", BASIC, "--target-qps", 10, "--slo-ttft-p95", 1, "--price", "spot"),
             "--price: expected CLASS=USD_PER_HOUR like spot=0.9, got 'spot'"),
            (("--bench", BASIC, "--target-qps", 10, "--slo-ttft-p95", 1, "--price", "a=1", "--price", "a=2"),
             "--price: class 'a' given twice"),
            (("--bench", BASIC, "--target-qps", 10, "--slo-ttft-p95", 1, "--price"), "--price: missing value"),
            (("--bench", BASIC, "--target-qps", 10, "--slo-ttft-p95", 1, "--profil", "flat"), "unknown flag --profil"),
            (("--bench", BASIC, "--target-qps", 10, "--slo-ttft-p95", 1, "--profile", "/nonexistent.json"),
             "--profile: /nonexistent.json: cannot open profile"),
            (("--bench", BASIC, "--target-qps", 10, "--slo-ttft-p95", 1, "--slo-e2e-p95", 0),
             "--slo-e2e-p95 must be > 0 seconds"),
            (("--bench", BASIC, "--target-qps", 10, "--slo-ttft-p95", 1, "--cache-hit-rate", 1.5),
             "--cache-hit-rate must be in [0, 1)"),
            (("--bench", BASIC, "--target-qps", 10, "--slo-ttft-p95", 1, "--prefix-hit-rate", -0.1),
             "--prefix-hit-rate must be in [0, 1)"),
        ]
        for args, message in cases:
            proc = plan(*args)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertIn(message, proc.stderr, args)

    def test_bad_inputs_exit_1(self):
        cases = [
            (("--bench", BASIC, "--target-qps", 10, "--slo-ttft-p95", 0.05),
             "no measured point meets the SLO (P95 TTFT <= 0.05 s): the lowest P95 TTFT measured is 0.1 s"),
            (("--bench", "autoscale/testdata/bench_missing_field.json", "--target-qps", 10, "--slo-ttft-p95", 1),
             "bench report: rounds[2].ttft_ms.p95: missing"),
            (("--bench", PROFILE, "--target-qps", 10, "--slo-ttft-p95", 1),
             "not a `surge bench --json` report"),
            (("--bench", "/nonexistent.json", "--target-qps", 10, "--slo-ttft-p95", 1), "cannot open bench report"),
        ]
        for args, message in cases:
            proc = plan(*args)
            self.assertEqual(proc.returncode, 1, (args, proc.stderr))
            self.assertIn(message, proc.stderr, args)

    def test_help(self):
        proc = plan("--help")
        self.assertEqual(proc.returncode, 0)
        for flag in ("--bench", "--target-qps", "--slo-ttft-p95", "--slo-e2e-p95", "--price", "--profile",
                     "--prefix-hit-rate", "--cache-hit-rate", "--json"):
            self.assertIn(flag, proc.stdout)


class PlanFromRealBenchTest(unittest.TestCase):
    """surge serve (stories260K) -> surge bench --json -> surge plan."""

    def test_plan_from_a_real_sweep(self):
        server = subprocess.Popen([SURGE, "serve", "models/stories260K", "--host", "127.0.0.1", "--port", "0",
                                   "--threads", "2", "--chat-template", "tests/data/chat_template_simple.jinja"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        temp = tempfile.mkdtemp(prefix="surge_plan_test_")
        try:
            match = re.search(r"ready on (http://\S+)", server.stdout.readline())
            self.assertTrue(match, "surge serve did not start")
            report = os.path.join(temp, "bench.json")
            bench = subprocess.run([SURGE, "bench", "--url", match.group(1), "--concurrency", "1,4", "--num-requests",
                                    "12", "--input-len", "32", "--output-len", "8", "--json", report],
                                   capture_output=True, text=True, timeout=50)
            self.assertEqual(bench.returncode, 0, bench.stderr)
            with open(report, encoding="utf-8") as file:
                rounds = json.load(file)["rounds"]
            best = max(r["request_throughput"] for r in rounds)
            loose = plan_json("--bench", report, "--target-qps", 1000, "--slo-ttft-p95", 60)
            # A loose SLO: the best measured point, and ceil(QPS / its throughput) instances.
            self.assertAlmostEqual(loose["capacity"]["qps"], best)
            self.assertEqual(loose["scenarios"][0]["peak_instances"], -(-1000 // best))
            tight = plan("--bench", report, "--target-qps", 10, "--slo-ttft-p95", 1e-6)
            self.assertEqual(tight.returncode, 1)
            self.assertIn("no measured point meets the SLO", tight.stderr)
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
            server.stdout.close()
            server.stderr.close()
            shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
