#!/usr/bin/python3
"""Issue 37: a vLLM user's habits against `surge serve`.

1. vLLM's documented `vllm serve` command lines, unchanged but for the model (swapped for
   the bundled SmolLM2 GGUF, and a chat template path for the bundled one), start or are
   refused with a message naming the flag. The environment carries what a test needs and a
   vLLM user would not type (SURGE_PORT=0, SURGE_THREADS=1, SURGE_KV_CACHE_MEMORY): the
   SURGE_<FLAG> mechanism itself.
2. A --config YAML file and SURGE_ variables start an engine; unknown keys are refused.
3. A real Prometheus scrapes an engine started with --metrics-compat vllm under load and
   evaluates the PromQL of vLLM's own Grafana dashboard and of the KEDA / llm-d examples
   written for vLLM: each returns a finite value.
Usage: vllm_compat_test.py SURGE. Part 3 is skipped where prometheus is not installed."""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_fleet import CHAT_TEMPLATE, Load, SurgeProcess, http, start_engine  # noqa: E402

SURGE = sys.argv[1] if len(sys.argv) > 1 else "build/surge"
MODEL = "models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
TEST_ENV = {"SURGE_PORT": "0", "SURGE_HOST": "127.0.0.1", "SURGE_THREADS": "1", "SURGE_KV_CACHE_MEMORY": "64MiB"}

# (where vLLM documents it, the command line after `vllm serve MODEL`, the message of a refusal
# or None when it must start). vLLM's model ids are replaced by MODEL.
COMMAND_LINES = [
    ("docs: quickstart, OpenAI-compatible server", [], None),
    ("docs: OpenAI-compatible server (API key)", ["--dtype", "auto", "--api-key", "token-abc123"], None),
    ("docs: CPU installation (bfloat16)", ["--dtype=bfloat16"], None),
    ("docs: CPU installation (tensor parallel)", ["-tp=2", "--distributed-executor-backend", "mp"],
     "--distributed-executor-backend is not supported"),  # the first refusal met
    ("docs: CPU installation (tensor parallel, -tp only)", ["-tp", "2"], "--tensor-parallel-size 2 is not supported"),
    ("docs: tool calling (Llama 3.1 JSON)", ["--enable-auto-tool-choice", "--tool-call-parser", "llama3_json",
                                             "--chat-template", CHAT_TEMPLATE], None),
    ("examples: production monitoring", ["--max-model-len", "2048", "--disable-log-requests"], None),
    ("docs: automatic prefix caching", ["--enable-prefix-caching"], None),
    ("docs: engine arguments (seed, served name)", ["--seed", "0", "--served-model-name", "smol",
                                                   "--max-num-seqs", "16", "--enforce-eager",
                                                   "--trust-remote-code", "--uvicorn-log-level", "warning"], None),
    ("docs: quantization (AWQ)", ["--quantization", "awq"], "--quantization is not supported"),
    ("docs: engine arguments (swap space)", ["--swap-space", "16"], "--swap-space is not supported"),
    ("docs: FP8 KV cache", ["--kv-cache-dtype", "fp8"], "no fp8 KV kernels here"),
    ("docs: engine arguments (context too long)", ["--max-model-len", "1000000"], "longer than the model's context"),
]


def run_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SURGE_", "VLLM_"))}
    env.update(TEST_ENV)
    env.update(extra or {})
    return env


class CommandLineTest(unittest.TestCase):
    def start(self, args, env):
        return SurgeProcess(SURGE, ["serve", MODEL, *args], timeout_s=120, env=env)

    def test_documented_command_lines(self):
        for where, args, refusal in COMMAND_LINES:
            with self.subTest(where=where):
                if refusal:
                    done = subprocess.run([SURGE, "serve", MODEL, *args], env=run_env(), capture_output=True,
                                          text=True, timeout=120)
                    self.assertNotEqual(done.returncode, 0, where)
                    self.assertIn(refusal, done.stderr, where)
                    continue
                engine = self.start(args, run_env())
                try:
                    key = args[args.index("--api-key") + 1] if "--api-key" in args else None
                    headers = {"Authorization": f"Bearer {key}"} if key else {}
                    status, body = http("GET", engine.url + "/v1/models", headers=headers)
                    self.assertEqual(status, 200, body)
                    if key:
                        self.assertEqual(http("GET", engine.url + "/v1/models")[0], 401)
                    if "--max-model-len" in args:
                        self.assertEqual(json.loads(body)["data"][0]["max_model_len"], 2048)
                        status, body = http("POST", engine.url + "/v1/completions",
                                            {"prompt": "hi", "max_tokens": 2048})
                        self.assertEqual(status, 400)
                        self.assertIn("2048", body)
                finally:
                    self.assertEqual(engine.stop(), 0)

    def test_config_file_and_environment(self):
        with tempfile.TemporaryDirectory() as dir:
            config = os.path.join(dir, "serve.yaml")
            with open(config, "w") as file:
                file.write(f"model: {MODEL}\nmax_model_len: 1024\nserved-model-name: from-file\n")
            engine = SurgeProcess(SURGE, ["serve", "--config", config], timeout_s=120, env=run_env({"SURGE_SERVED_MODEL_NAME": "from-env",
                                                                              "SURGE_API_KEY": "k1,k2"}))
            try:
                status, body = http("GET", engine.url + "/v1/models", headers={"Authorization": "Bearer k2"})
                self.assertEqual(status, 200, body)
                model = json.loads(body)["data"][0]
                self.assertEqual(model["id"], "from-env")  # the environment above the file
                self.assertEqual(model["max_model_len"], 1024)
            finally:
                self.assertEqual(engine.stop(), 0)
            with open(config, "a") as file:
                file.write("max_modle_len: 5\n")
            done = subprocess.run([SURGE, "serve", "--config", config], env=run_env(), capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(done.returncode, 2)
            self.assertIn("unknown key 'max_modle_len'", done.stderr)

    def test_version(self):
        done = subprocess.run([SURGE, "--version"], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 0)
        self.assertRegex(done.stdout, r"^surge \d+\.\d+\.\d+")


# PromQL as vLLM users run it, $model_name substituted. Sources:
#   vLLM's Grafana dashboard: vllm-project/vllm examples/online_serving/prometheus_grafana/grafana.json
#   KEDA: vllm-project/production-stack docs/source/use_cases/autoscaling-keda.rst (ScaledObject
#     prometheus trigger on the queue length)
#   llm-d / Gateway API Inference Extension endpoint picker: the per-pod metrics it scrapes
#     (queue length, running requests, KV cache usage)
def promql(model):
    q = f'{{model_name="{model}"}}'
    rate = "[10s]"
    dashboard = []
    for family in ("e2e_request_latency_seconds", "time_per_output_token_seconds", "time_to_first_token_seconds"):
        for quantile in ("0.99", "0.95", "0.9", "0.5"):
            dashboard.append(f"histogram_quantile({quantile}, sum by(le) (rate(vllm:{family}_bucket{q}{rate})))")
        dashboard.append(f"rate(vllm:{family}_sum{q}{rate})\n/\nrate(vllm:{family}_count{q}{rate})")
    dashboard += [
        f"rate(vllm:prompt_tokens_total{q}{rate})",
        f"rate(vllm:generation_tokens_total{q}{rate})",
        f"vllm:num_requests_running{q}",
        f"vllm:num_requests_swapped{q}",
        f"vllm:num_requests_waiting{q}",
        f"vllm:gpu_cache_usage_perc{q}",
        f"vllm:cpu_cache_usage_perc{q}",
        f"sum by(le) (increase(vllm:request_prompt_tokens_bucket{q}{rate}))",
        f"sum by(le) (increase(vllm:request_generation_tokens_bucket{q}{rate}))",
        f"sum by(finished_reason) (increase(vllm:request_success_total{q}{rate}))",
        f"rate(vllm:request_queue_time_seconds_sum{q}{rate})",
        f"rate(vllm:request_prefill_time_seconds_sum{q}{rate})",
        f"rate(vllm:request_decode_time_seconds_sum{q}{rate})",
        "label_values: model_name",  # the dashboard's variable: label_values(model_name)
    ]
    keda = ["vllm:num_requests_waiting", f"sum(vllm:num_requests_waiting{q})"]
    picker = [f"vllm:num_requests_waiting{q}", f"vllm:num_requests_running{q}", f"vllm:kv_cache_usage_perc{q}",
              f"rate(vllm:prefix_cache_hits_total{q}{rate}) / rate(vllm:prefix_cache_queries_total{q}{rate})",
              f"histogram_quantile(0.95, sum by(le) (rate(vllm:inter_token_latency_seconds_bucket{q}{rate})))"]
    return [("grafana.json", e) for e in dashboard] + [("KEDA", e) for e in keda] + [("llm-d", e) for e in picker]


@unittest.skipIf(shutil.which("prometheus") is None, "prometheus not installed (Debian package prometheus)")
class VllmPromqlTest(unittest.TestCase):
    def test_vllm_dashboard_and_autoscaler_queries(self):
        from prometheus_scrape_test import Prometheus  # noqa: E402 (needs PyYAML, as that test)
        engine = start_engine(SURGE, "--metrics-compat", "vllm")
        prometheus, load = None, None
        try:
            prometheus = Prometheus([engine.url], None)
            ok = {"model": "stories260K", "prompt": "Once upon a time", "max_tokens": 24, "temperature": 0.8}
            load = Load(engine.url, concurrency=3, requests=[(ok, {}), ({**ok, "prompt": "Once upon a time, a"}, {})])
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                scrapes = prometheus.query("count_over_time(up[1m])")
                if scrapes and float(scrapes[0]["value"][1]) >= 12:
                    break
                time.sleep(0.5)
            failures = []
            for where, expr in promql("stories260K"):
                if expr.startswith("label_values"):
                    status, body = http("GET", prometheus.url + "/api/v1/label/model_name/values")
                    if "stories260K" not in json.loads(body)["data"]:
                        failures.append(f"{where}: label model_name has no stories260K: {body}")
                    continue
                values = [float(r["value"][1]) for r in prometheus.query(expr)]
                if not any(math.isfinite(v) for v in values):
                    failures.append(f"{where}: no finite value ({values}) for {expr}")
            self.assertEqual(failures, [])
        finally:
            if load:
                print("load:", load.stop())
            if prometheus:
                prometheus.stop()
            engine.stop()


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
