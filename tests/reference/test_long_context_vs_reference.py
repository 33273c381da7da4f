#!/usr/bin/python3
"""Long-context logits: surge's forward at 8,192 tokens against the PyTorch references
(hf_reference.py for a Llama-shaped GQA model, deepseek_reference.py for DeepSeek V3's MLA
with YaRN), on random-weight models from tools/make_tiny_model.py.

Each model runs through dump_logits_tool --decode-out twice: the first 8,128 tokens
prefilled in chunks of 1,000 (each chunk's attention spans up to 16 key partitions of 512,
kernels/attention.h), then 64 decodes one per pass (flash-decoding's split along the keys);
and the same prefix in one pass. Every position's logits must be within 1e-4 (max relative
error, as test_forward_vs_reference.py) of the reference, and the two schedules must agree
bit for bit (batch invariance at long context).

  test_long_context_vs_reference.py --tool build/model/dump_logits_tool
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
import deepseek_reference  # noqa: E402
import hf_reference  # noqa: E402
import make_tiny_model  # noqa: E402
from test_forward_vs_reference import max_relative_error, random_ids  # noqa: E402

TOLERANCE = 1e-4
NUM_TOKENS = 8192
PREFIX = NUM_TOKENS - 64
# (name, config overrides, reference)
CONFIGS = [
    # head_dim 64: the AVX-512 tile path of prefill attention where the CPU has it.
    ("llama_gqa_8k", dict(hidden_size=128, intermediate_size=256, num_hidden_layers=1, num_attention_heads=2,
                          num_key_value_heads=1, vocab_size=256, max_position_embeddings=NUM_TOKENS + 256,
                          rope_theta=500000.0), "hf"),
    ("deepseek_v3_mla_yarn_8k", dict(make_tiny_model.PRESETS["deepseek-v3-tiny"], num_hidden_layers=2,
                                     num_attention_heads=2, max_position_embeddings=NUM_TOKENS + 256,
                                     rope_scaling=dict(type="yarn", factor=8.0, original_max_position_embeddings=1024,
                                                       beta_fast=32, beta_slow=1, mscale=1.0, mscale_all_dim=1.0)),
     "deepseek"),
]


def reference_logits(kind, model_dir, ids):
    with torch.no_grad():
        if kind == "hf":
            return hf_reference.Reference(model_dir).logits(ids).numpy()
        with open(os.path.join(model_dir, "config.json")) as f:
            config = deepseek_reference.Config(json.load(f))
        return deepseek_reference.forward(config, deepseek_reference.load_weights(model_dir), ids).numpy()


def surge_logits(tool, model_dir, ids, vocab, prefill_chunk, tmp):
    out = os.path.join(tmp, "logits.f32")
    command = [tool, "--model", model_dir, "--ids", ",".join(map(str, ids)), "--prefix", str(PREFIX),
               "--block-size", "16", "--threads", "2", "--decode-out", out]
    if prefill_chunk:
        command += ["--prefill-chunk", str(prefill_chunk)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:3])} ... failed:\n{result.stderr}")
    return np.fromfile(out, dtype=np.float32).reshape(len(ids), vocab)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True, help="path to dump_logits_tool")
    args = parser.parse_args()
    failures, rng = [], np.random.default_rng(8)
    with tempfile.TemporaryDirectory(prefix="surge_long_context_") as tmp:
        for i, (name, overrides, kind) in enumerate(CONFIGS):
            start = time.time()
            model_dir = os.path.join(tmp, name)
            config = make_tiny_model.make_model(model_dir, overrides, "F32", seed=20 + i)
            ids = random_ids(rng, config["vocab_size"], NUM_TOKENS)
            want = reference_logits(kind, model_dir, ids)
            chunked = surge_logits(args.tool, model_dir, ids, config["vocab_size"], 1000, tmp)
            whole = surge_logits(args.tool, model_dir, ids, config["vocab_size"], 0, tmp)
            error = max_relative_error(chunked, want)
            tail = max_relative_error(chunked[-64:], want[-64:])
            same = chunked.tobytes() == whole.tobytes()
            print(f"  {name:26s} max {error:.2e} (last 64 decodes {tail:.2e})  chunked==one pass: "
                  f"{'yes' if same else 'NO'}  {time.time() - start:.1f}s", flush=True)
            if not error < TOLERANCE:
                failures.append(f"{name}: max relative error {error:.3g} > {TOLERANCE}")
            if not same:
                failures.append(f"{name}: chunked prefill changed the logits")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
