#!/usr/bin/env python3
"""The comparison harness's own logic (issue 33), with no peer installed: the report from canned
`surge bench` and GuideLLM results, serve.sh starting surge (GET /health, exit when killed) and
the peers' command lines it would run, the GuideLLM scenario, and the workloads' exact lengths.

  .venv/bin/python scripts/peers/peers_test.py build/surge
"""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
GGUF = REPO / "models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
SURGE = None  # from argv


def surge_bench_json(tok_s, ttft_p95):
    dist = {"count": 4, "mean": 10.0, "median": 10.0, "p90": 12.0, "p95": ttft_p95, "p99": 13.0, "max": 14.0,
            "min": 9.0, "stddev": 1.0}
    return {"tool": "surge bench", "rounds": [{
        "num_requests": 8, "completed": 8, "failed": 0, "errors": {}, "error_examples": {}, "duration_s": 2.0,
        "output_token_throughput": tok_s, "total_input_tokens": 100, "total_output_tokens": 2 * tok_s,
        "ttft_ms": dist, "itl_ms": dist, "tpot_ms": dist}]}


def guidellm_json(tok_s, ttft_p95, errored=0):
    def dist(mean, p95):
        return {"successful": {"mean": mean, "total_sum": 100.0, "percentiles": {"p50": mean, "p95": p95}}}
    return {"benchmarks": [{"duration": 3.0, "requests": {"errored": [{"error": "HTTPStatusError 400"}] * errored},
                            "metrics": {
        "request_totals": {"successful": 8 - errored, "errored": errored, "incomplete": 0, "total": 8},
        "output_tokens_per_second": dist(tok_s, tok_s), "prompt_token_count": dist(1, 1),
        "output_token_count": dist(1, 1), "time_to_first_token_ms": dist(50.0, ttft_p95),
        "inter_token_latency_ms": dist(5.0, 6.0), "time_per_output_token_ms": dist(5.0, 6.0)}}]}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PeersTest(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="peers_test_"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, path, data):
        path = self.tmp / path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data))

    def test_report_from_canned_results(self):
        self.write("meta.json", {"cpu": "test cpu", "BM_Limits": {"read_GB/s": 9.5}, "loadavg_before": "1 1 1"})
        for engine, tok_s, ttft in [("surge", 300.0, 100.0), ("vllm", 100.0, 400.0)]:
            self.write(f"{engine}/serve.log", "")
            for c in (1, 32):
                self.write(f"{engine}/chat/surge_c{c}.json", surge_bench_json(tok_s * c, ttft))
                self.write(f"{engine}/chat/guidellm_c{c}.json", guidellm_json(tok_s * c, ttft, errored=engine == "vllm"))
        self.write("surge/metrics_before.txt", "surge_prefix_cache_queries_total 0\nsurge_prefix_cache_hits_total 0\n")
        self.write("surge/metrics_after.txt", "surge_prefix_cache_queries_total 5000\nsurge_prefix_cache_hits_total 3000\n")
        self.write("vllm/metrics_after.txt", 'vllm:prefix_cache_hits_total{engine="0",model_name="m"} 7.0\n')
        self.write("llamacpp/error.txt", "llamacpp did not answer GET /health")
        self.write("workloads/guidellm_c1/chat.jsonl", "")
        subprocess.run([sys.executable, str(HERE / "report.py"), str(self.tmp)], check=True, capture_output=True)
        data = json.loads((self.tmp / "peers.json").read_text())
        self.assertEqual(sorted(data["engines"]), ["llamacpp", "surge", "vllm"])
        self.assertEqual(data["engines"]["surge"]["prefix_cache_after"]["surge_prefix_cache_hits_total"], 3000)
        self.assertEqual(data["engines"]["vllm"]["prefix_cache_after"]["vllm:prefix_cache_hits_total"], 7)
        self.assertIn("did not answer", data["engines"]["llamacpp"]["error"])
        self.assertEqual(len(data["points"]), 8)
        guided = [p for p in data["points"] if p["engine"] == "vllm" and p["client"] == "guidellm"]
        self.assertEqual(guided[0]["failed"], 1)
        self.assertEqual(guided[0]["errors"], {"HTTPStatusError 400": 1})
        table = data["table_markdown"]
        self.assertIn("| 32 | 9,600.0 | 3,200.0 | - | 100 | 400 | - | 3.00x | - | 4.00x | - |", table)
        page = (self.tmp / "peers.html").read_text()
        self.assertEqual(page.count("<svg"), 8)  # 4 charts x (chat, guidellm) and (chat, surge)
        self.assertIn("test cpu", page)
        self.assertIn("read_GB/s", page)
        self.assertIn("did not answer", page)
        self.assertIn("3,000", page)

    def test_serve_surge_answers_health_and_exits_when_killed(self):
        if not GGUF.exists():
            self.skipTest(f"{GGUF} is not installed (scripts/setup.sh)")
        port = free_port()
        env = dict(os.environ, SURGE=SURGE, PEERS_KV_GIB="1", PEERS_MAX_SEQS="4", PEERS_THREADS="1")
        server = subprocess.Popen([str(HERE / "serve.sh"), "surge", str(GGUF), str(port)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for _ in range(600):
                self.assertIsNone(server.poll(), "serve.sh exited before answering /health")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                        if r.status == 200:
                            break
                except OSError:
                    time.sleep(0.2)
            body = json.dumps({"model": "SmolLM2-135M-Instruct", "prompt": "Hi", "max_tokens": 2}).encode()
            request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", body,
                                             {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=60) as r:
                self.assertEqual(json.load(r)["usage"]["completion_tokens"], 2)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
        self.assertEqual(server.returncode, 0, server.stderr.read().decode()[-2000:])

    def dry_run(self, engine, extra=None):
        env = dict(os.environ, PEERS_DRY_RUN="1", PEERS_THREADS="4", LLAMA_SERVER="/opt/llama-server", **(extra or {}))
        run = subprocess.run([str(HERE / "serve.sh"), engine, "M", "9"], env=env, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout.split()

    def test_peers_get_the_same_budget(self):
        vllm = self.dry_run("vllm", {"VLLM_VENV": "/opt/vllm"})
        self.assertIn("VLLM_CPU_KVCACHE_SPACE=1", vllm)
        self.assertIn("VLLM_CPU_OMP_THREADS_BIND=0-3", vllm)
        for flag in ["--enable-prefix-caching", "--max-model-len 8192", "--max-num-seqs 64", "--port 9"]:
            self.assertIn(flag, " ".join(vllm))
        llama = " ".join(self.dry_run("llamacpp"))
        # 1 GiB of 16-bit K and V at 23,040 bytes per SmolLM2 token: the tokens surge and vLLM get.
        for flag in ["-c 46603", "-np 64", "--kv-unified", "-t 4", "-ctk f16", "--metrics", "--port 9"]:
            self.assertIn(flag, llama)
        surge = " ".join(self.dry_run("surge"))
        for flag in ["--kv-cache-memory 1GiB", "--kv-cache-dtype bf16", "--max-model-len 8192", "--threads 4"]:
            self.assertIn(flag, surge)
        self.assertNotIn("--no-prefix-caching", surge)
        wrong = subprocess.run([str(HERE / "serve.sh"), "sglang", "M", "9"], capture_output=True, text=True)
        self.assertEqual(wrong.returncode, 2)
        self.assertIn("surge, vllm or llamacpp", wrong.stderr)

    def test_guidellm_scenario(self):
        fake = self.tmp / "guidellm"
        fake.write_text(f'#!/bin/sh\ncp "$3" {self.tmp}/scenario.json\n')
        fake.chmod(0o755)
        env = dict(os.environ, GUIDELLM=str(fake))
        subprocess.run(["bash", str(HERE / "guidellm.sh"), "http://127.0.0.1:1", "m", "/tok", "/d.jsonl", "16", "32",
                        "/o.json"], env=env, check=True)
        spec = json.loads((self.tmp / "scenario.json").read_text())["spec"]
        self.assertEqual(spec["profile"], {"kind": "concurrent", "streams": [16]})
        self.assertEqual(spec["constraints"], [{"kind": "max_requests", "count": 32}])
        self.assertEqual(spec["backend"]["request_format"], "/v1/completions")
        self.assertEqual(spec["backend"]["extras"]["body"]["temperature"], 0)
        self.assertFalse(spec["backend"]["extras"]["body"]["stream_options"]["continuous_usage_stats"])
        self.assertEqual(spec["tokenizer"], {"kind": "hf_auto", "model": "/tok"})

    def test_workloads_have_exact_lengths(self):
        if not GGUF.exists():
            self.skipTest(f"{GGUF} is not installed (scripts/setup.sh)")
        hf = self.tmp / "hf"
        subprocess.run([SURGE, "convert", str(GGUF), str(hf)], check=True, capture_output=True)
        for seed in (1, 2):
            subprocess.run([sys.executable, str(HERE / "make_workloads.py"), "--tokenizer", str(hf), "--out",
                            str(self.tmp / f"w{seed}"), "--requests", "8", "--seed", str(seed)], check=True)
        rows = {(s, n): [json.loads(line) for line in (self.tmp / f"w{s}/{n}.guidellm.jsonl").read_text().splitlines()]
                for s in (1, 2) for n in ("chat", "prefix", "long")}
        self.assertEqual([r["prompt_tokens_count"] for r in rows[1, "long"]][4], 4096)
        self.assertEqual(sorted(r["prompt_tokens_count"] for r in rows[1, "long"])[:7], [32] * 7)
        self.assertTrue(all(8 <= r["prompt_tokens_count"] <= 2048 for r in rows[1, "chat"]))
        self.assertTrue(all(8 <= r["output_tokens_count"] <= 256 for r in rows[1, "chat"]))
        system = rows[1, "prefix"][0]["prompt"].split("\nUser:")[0]
        self.assertTrue(all(r["prompt"].startswith(system) for r in rows[1, "prefix"] + rows[2, "prefix"]))
        self.assertNotEqual(rows[1, "chat"][0]["prompt"], rows[2, "chat"][0]["prompt"])
        bodies = [json.loads(line) for line in (self.tmp / "w1/chat.jsonl").read_text().splitlines()]
        self.assertEqual({(b["temperature"], b["ignore_eos"]) for b in bodies}, {(0, True)})
        self.assertEqual([b["max_tokens"] for b in bodies], [r["output_tokens_count"] for r in rows[1, "chat"]])


if __name__ == "__main__":
    SURGE = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else str(REPO / "build/surge")
    unittest.main()
