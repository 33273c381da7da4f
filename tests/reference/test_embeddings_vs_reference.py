#!/usr/bin/python3
"""surge's /v1/embeddings (a real `surge serve`) against hf_reference.py's pooling.

For each model -- random-weight Qwen3 (q/k norms, head_dim != hidden/heads, tied) and
Llama (GQA) models from tools/make_tiny_model.py, and the bundled stories260K -- and each
--pooling (last, mean), a server is started with --max-num-batched-tokens 8, so that the
inputs (random token ids, 5..60 tokens, sent as one list) are chunked across passes and
batched with each other. The reference computes the hidden states after the final norm,
pools them (the last row, or the mean over all rows) and L2-normalizes. Metric per vector:
max_i |surge_i - ref_i| / max_i |ref_i|; everything must be below 1e-4, as the logits
reference test requires. `dimensions` is checked against the reference truncated and
renormalized.

  test_embeddings_vs_reference.py --surge build/surge
"""
import argparse
import json
import os
import sys
import tempfile
import time
import urllib.request

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # tests/: live_fleet
sys.path.insert(0, os.path.join(ROOT, "tools"))
import hf_reference  # noqa: E402
import make_tiny_model  # noqa: E402
from live_fleet import SurgeProcess  # noqa: E402

TOLERANCE = 1e-4
STORIES = os.path.join(ROOT, "models", "stories260K")
MODELS = [
    ("qwen3_tiny", dict(make_tiny_model.PRESETS["qwen3-tiny"], vocab_size=512)),
    ("llama_gqa", dict(make_tiny_model.PRESETS["tiny"], vocab_size=512, num_hidden_layers=3)),
]


def start_server(surge, model_dir, pooling):
    return SurgeProcess(surge, ["serve", model_dir, "--host", "127.0.0.1", "--port", "0", "--threads", "2",
                                "--pooling", pooling, "--max-num-batched-tokens", "8", "--tokenizer", STORIES,
                                # the reference keeps K/V in f32; serve's default (auto) is f16 since issue 34
                                "--kv-cache-dtype", "f32"])


def embed(base_url, body):
    request = urllib.request.Request(base_url + "/v1/embeddings", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def relative_error(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def check_model(name, surge, model_dir, rng):
    ref = hf_reference.Reference(model_dir)
    inputs = [[int(t) for t in rng.integers(3, 512, size=int(rng.integers(5, 61)))] for _ in range(6)]
    failures, worst = [], 0.0
    for pooling in ("last", "mean"):
        server = start_server(surge, model_dir, pooling)
        try:
            response = embed(server.url, {"input": inputs})
            truncated = embed(server.url, {"input": inputs[0], "dimensions": 8})["data"][0]["embedding"]
        finally:
            if server.stop() != 0:
                failures.append(f"{name}/{pooling}: surge serve did not exit 0")
        if response["usage"]["prompt_tokens"] != sum(len(i) for i in inputs):
            failures.append(f"{name}/{pooling}: usage {response['usage']}")
        for i, ids in enumerate(inputs):
            want = ref.embedding(ids, pooling).numpy()
            error = relative_error(response["data"][i]["embedding"], want)
            worst = max(worst, error)
            if not error < TOLERANCE:
                failures.append(f"{name}/{pooling}: input {i} ({len(ids)} tokens) relative error {error:.3g}")
        want8 = ref.embedding(inputs[0], pooling).numpy()[:8]
        error = relative_error(truncated, want8 / np.linalg.norm(want8))
        if not error < TOLERANCE:
            failures.append(f"{name}/{pooling}: dimensions 8 relative error {error:.3g}")
    print(f"  {name:16s} last+mean, {len(inputs)} inputs chunked by 8: max relative error {worst:.2e}")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--surge", required=True, help="path to the surge binary")
    args = parser.parse_args()
    rng, failures, start = np.random.default_rng(0), [], time.time()
    with tempfile.TemporaryDirectory(prefix="surge_embed_reference_") as tmp:
        for i, (name, overrides) in enumerate(MODELS):
            model_dir = os.path.join(tmp, name)
            make_tiny_model.make_model(model_dir, overrides, seed=i)
            failures += check_model(name, args.surge, model_dir, rng)
    failures += check_model("stories260K", args.surge, STORIES, rng)
    print(f"  {len(MODELS) + 1} models in {time.time() - start:.1f}s; tolerance {TOLERANCE}")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
