#!/usr/bin/python3
"""`surge bench` driven as a user runs it, against the scripted server (127.0.0.1 only):
flags, the JSON / CSV / HTML outputs, --compare, error kinds, and the tool's own CPU cost."""
import csv
import unittest

from bench_util import ScriptedServer, bench, read_json, read_text, temp_path

DISTRIBUTIONS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms")
STATS = ("mean", "median", "p90", "p95", "p99", "max")
ROUND_FIELDS = ("point", "concurrency", "request_rate", "duration_s", "num_requests", "completed", "failed", "errors",
                "total_input_tokens", "total_output_tokens", "request_throughput", "input_token_throughput",
                "output_token_throughput", "total_token_throughput", "goodput", "ttft_quantiles_ms",
                "itl_quantiles_ms", "client_cpu_us_per_request") + DISTRIBUTIONS


class UsageTest(unittest.TestCase):
    def test_bad_flags_give_one_line_and_exit_2(self):
        cases = [
            ([], "--url is required"),
            (["--url", "http://127.0.0.1:1", "--bogus", "1"], "unknown flag --bogus"),
            (["--url", "http://127.0.0.1:1", "--concurrency", "0"], "--concurrency"),
            (["--url", "http://127.0.0.1:1", "--concurrency", "1", "--request-rate", "2"], "exclude each other"),
            (["--url", "http://127.0.0.1:1", "--workload", "nope"], "--workload"),
            (["--url", "http://127.0.0.1:1", "--slo", "speed=1"], "--slo"),
            (["--url", "ftp://127.0.0.1:1"], "URL"),
            (["--compare", "http://127.0.0.1:1"], "--compare"),
            (["--url", "http://127.0.0.1:1", "--workload", "multi-turn", "--endpoint", "completions"], "chat"),
            (["--url", "http://127.0.0.1:1", "--workload", "sharegpt"], "--dataset"),
            (["--url", "http://127.0.0.1:1", "--duration", "soon"], "--duration"),
        ]
        for args, needle in cases:
            proc = bench(*args)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertEqual(len(proc.stderr.splitlines()), 1, (args, proc.stderr))
            self.assertTrue(proc.stderr.startswith("surge bench: "), proc.stderr)
            self.assertIn(needle, proc.stderr, args)

    def test_help_lists_the_flags(self):
        proc = bench("--help")
        self.assertEqual(proc.returncode, 0)
        for flag in ("--url", "--compare", "--concurrency", "--request-rate", "--workload", "--slo", "--html"):
            self.assertIn(flag, proc.stdout)

    def test_missing_dataset_is_a_runtime_error(self):
        with ScriptedServer() as server:
            proc = bench("--url", server.url, "--workload", "jsonl", "--dataset", "/nonexistent.jsonl")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("/nonexistent.jsonl", proc.stderr)


class RunTest(unittest.TestCase):
    def test_sweep_writes_every_metric(self):
        out_json, out_csv, out_html = temp_path("r.json"), temp_path("r.csv"), temp_path("r.html")
        with ScriptedServer("--ttft-ms", 200, "--itl-ms", 40, "--num-tokens", 8) as server:
            proc = bench("--url", server.url, "--concurrency", "1,4", "--num-requests", 8, "--input-len", 32,
                         "--slo", "ttft=400ms,tpot=60ms", "--json", out_json, "--csv", out_csv, "--html", out_html)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("mean TTFT ms", proc.stdout)
        self.assertIn("bench: round 2/2: c=4", proc.stderr)  # stderr is no TTY: plain lines
        report = read_json(out_json)
        self.assertEqual(report["config"]["load"]["concurrency"], [1, 4])
        self.assertEqual(report["config"]["workload"]["tokens_per_word"], 2.0)  # measured via /tokenize
        self.assertEqual([r["concurrency"] for r in report["rounds"]], [1, 4])
        for r in report["rounds"]:
            for field in ROUND_FIELDS:
                self.assertIn(field, r)
            for dist in DISTRIBUTIONS:
                for stat in STATS:
                    self.assertIsInstance(r[dist][stat], float, (dist, stat))
            self.assertEqual(r["completed"], 8)
            self.assertAlmostEqual(r["ttft_ms"]["mean"], 200, delta=10)  # 5 %
            self.assertAlmostEqual(r["itl_ms"]["mean"], 40, delta=2)
            self.assertEqual(r["total_output_tokens"], 64)
            self.assertAlmostEqual(r["goodput"], r["request_throughput"], delta=1e-9)
            self.assertIsNone(r["server_busy_fraction"])  # a server without surge's busy counter
        rows = list(csv.DictReader(read_text(out_csv).splitlines()))
        self.assertEqual([row["point"] for row in rows], ["c=1", "c=4"])
        self.assertTrue(float(rows[1]["ttft_p95_ms"]) > 0)
        self.assertIn('id="report-data"', read_text(out_html))

    def test_errors_are_counted_by_kind(self):
        out_json = temp_path("e.json")
        with ScriptedServer("--num-tokens", 4, "--faults", "none,http500,malformed,close,nodone") as server:
            proc = bench("--url", server.url, "--concurrency", 2, "--num-requests", 10, "--json", out_json)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        r = read_json(out_json)["rounds"][0]
        self.assertEqual(r["errors"], {"http_500": 2, "malformed_sse": 2, "truncated": 4})
        self.assertEqual(r["completed"], 2)
        self.assertIn("http_500 x2", proc.stdout)

    def test_unreachable_server_is_counted_not_fatal(self):
        out_json = temp_path("u.json")
        with ScriptedServer() as server:
            url = server.url
        proc = bench("--url", url, "--concurrency", 2, "--num-requests", 4, "--json", out_json)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("every request failed", proc.stderr)
        self.assertEqual(read_json(out_json)["rounds"][0]["errors"], {"connect": 4})

    def test_compare_alternates_and_reports_ratios(self):
        out_json = temp_path("c.json")
        with ScriptedServer("--ttft-ms", 100, "--num-tokens", 4, "--itl-ms", 5) as a, \
                ScriptedServer("--ttft-ms", 200, "--num-tokens", 4, "--itl-ms", 5) as b:
            proc = bench("--compare", a.url, b.url, "--concurrency", "1,2", "--num-requests", 4, "--json", out_json)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("A/B", proc.stdout)
        report = read_json(out_json)
        self.assertEqual([(r["target"], r["point"]) for r in report["rounds"]],
                         [("A", "c=1"), ("B", "c=1"), ("A", "c=2"), ("B", "c=2")])
        for comparison in report["comparisons"]:
            # No timed assertion: each side measured at least its server's scripted wait,
            # and the ratio is of the two means.
            self.assertGreaterEqual(comparison["a"]["ttft_mean_ms"], 99)
            self.assertGreaterEqual(comparison["b"]["ttft_mean_ms"], 199)
            self.assertAlmostEqual(comparison["ratio"]["ttft_mean_ms"],
                                   comparison["a"]["ttft_mean_ms"] / comparison["b"]["ttft_mean_ms"], delta=0.01)
            self.assertIn("itl_p99_ms", comparison["a"])

    def test_request_rate_and_multi_turn(self):
        out_json = temp_path("m.json")
        with ScriptedServer("--num-tokens", 3, "--no-tokenize") as server:
            proc = bench("--url", server.url, "--request-rate", "100,inf", "--max-concurrency", 4, "--num-requests", 12,
                         "--workload", "multi-turn", "--turns", 3, "--json", out_json)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("assuming 1 token per word", proc.stderr)
        report = read_json(out_json)
        self.assertEqual(report["config"]["endpoint"], "chat")
        self.assertEqual([r["request_rate"] for r in report["rounds"]], [100.0, "inf"])
        self.assertEqual([r["completed"] for r in report["rounds"]], [12, 12])


class OverheadTest(unittest.TestCase):
    def test_cpu_time_per_request_at_5000_requests_per_second(self):
        out_json = temp_path("o.json")
        with ScriptedServer("--num-tokens", 16) as server:
            proc = bench("--url", server.url, "--request-rate", 5000, "--arrival", "constant", "--duration", 3,
                         "--max-concurrency", 256, "--input-len", 64, "--output-len", 16, "--json", out_json)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        r = read_json(out_json)["rounds"][0]
        print(f"\nbench overhead: {r['client_cpu_us_per_request']:.1f} us CPU per request "
              f"({r['num_requests']} requests of 16 streamed tokens, {r['request_throughput']:.0f} req/s achieved)")
        self.assertEqual(r["failed"], 0)
        # The achieved rate is a machine's figure, not an assertion (the test prints it).
        self.assertGreater(r["request_throughput"], 0)
        self.assertLess(r["client_cpu_us_per_request"], 1000)


if __name__ == "__main__":
    unittest.main(verbosity=2)
