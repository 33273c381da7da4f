#!/usr/bin/python3
"""`surge bench` against `surge serve` on the bundled model (models/stories260K, 127.0.0.1,
a port the kernel picks): a concurrency sweep 1, 4, 16 completes without errors, the
JSON holds every metric, and /tokenize calibration sizes prompts as asked."""
import re
import signal
import subprocess
import unittest

from bench_util import SURGE, bench, read_json, temp_path

MODEL = "models/stories260K"
CHAT_TEMPLATE = "tests/data/chat_template_simple.jinja"
DISTRIBUTIONS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms")
STATS = ("mean", "median", "p90", "p95", "p99", "max")
ROUND_FIELDS = ("point", "concurrency", "duration_s", "num_requests", "completed", "failed", "errors",
                "total_input_tokens", "total_output_tokens", "request_throughput", "input_token_throughput",
                "output_token_throughput", "total_token_throughput", "goodput", "num_good", "usage_reported",
                "ttft_quantiles_ms", "itl_quantiles_ms", "client_cpu_us_per_request") + DISTRIBUTIONS


class ServeBenchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = subprocess.Popen(
            [SURGE, "serve", MODEL, "--host", "127.0.0.1", "--port", "0", "--threads", "2",
             "--chat-template", CHAT_TEMPLATE],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = cls.server.stdout.readline()
        match = re.search(r"ready on (http://\S+)", line)
        if not match:
            cls.server.kill()
            raise RuntimeError("surge serve did not start: " + line + cls.server.stderr.read())
        cls.url = match.group(1)

    @classmethod
    def tearDownClass(cls):
        cls.server.send_signal(signal.SIGTERM)
        try:
            cls.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            cls.server.kill()
        cls.server.stdout.close()
        cls.server.stderr.close()

    def test_concurrency_sweep(self):
        out_json, out_html = temp_path("serve.json"), temp_path("serve.html")
        proc = bench("--url", self.url, "--concurrency", "1,4,16", "--num-requests", 32, "--input-len", 48,
                     "--output-len", 16, "--slo", "ttft=2s,tpot=500ms,e2e=20s", "--json", out_json,
                     "--html", out_html, timeout=50)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        report = read_json(out_json)
        self.assertEqual(report["targets"][0]["model"], "stories260K")  # from /v1/models
        workload = report["config"]["workload"]
        self.assertTrue(workload["tokens_per_word_measured"], workload["calibration"])
        self.assertGreater(workload["tokens_per_word"], 1.0)  # a 512-token vocabulary splits words
        self.assertEqual([r["concurrency"] for r in report["rounds"]], [1, 4, 16])
        for r in report["rounds"]:
            for field in ROUND_FIELDS:
                self.assertIn(field, r)
            for dist in DISTRIBUTIONS:
                for stat in STATS:
                    self.assertIsInstance(r[dist][stat], float, (r["point"], dist, stat))
            self.assertEqual((r["completed"], r["failed"], r["errors"]), (32, 0, {}), r["error_examples"])
            self.assertEqual(r["usage_reported"], 32)
            self.assertEqual(r["total_output_tokens"], 32 * 16)  # ignore_eos: exactly max_tokens
            self.assertGreater(r["goodput"], 0)
            # The engine's busy fraction, read from its /metrics around the round.
            self.assertIsInstance(r["server_busy_fraction"], float, r["point"])
            self.assertGreater(r["server_busy_fraction"], 0)
            self.assertLessEqual(r["server_busy_fraction"], 1)
            # Calibrated prompts: about 48 tokens each (BOS included).
            self.assertAlmostEqual(r["total_input_tokens"] / 32, 48, delta=48 * 0.15)

    def test_multi_turn_chat(self):
        out_json = temp_path("turns.json")
        proc = bench("--url", self.url, "--workload", "multi-turn", "--turns", 3, "--concurrency", 4,
                     "--num-requests", 12, "--input-len", 16, "--output-len", 8, "--json", out_json, timeout=50)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        r = read_json(out_json)["rounds"][0]
        self.assertEqual((r["completed"], r["errors"]), (12, {}), r["error_examples"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
