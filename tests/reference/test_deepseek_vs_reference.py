#!/usr/bin/python3
"""surge's DeepSeek V2/V3 forward (MLA + MoE, through model/dump_logits_tool) against
deepseek_reference.py, on random-weight models from tools/make_tiny_model.py.

Modes per configuration (see dump_logits_tool): one-pass prefill; step-by-step decode
through the paged latent cache (block size 4, shuffled block tables); the decode
schedule sharing every pass with a second sequence prefilling in chunks (must equal
decode bit for bit: batch invariance); and a third sequence reusing the first one's
cached latent blocks (what prefix caching does) and computing only its tail; and V3's MTP
layer (--mtp) against the reference's mtp_logits. Metric per
position: max_i |surge_i - ref_i| / max_i |ref_i|; pass below 1e-4 for f32 KV. Quantized
KV dtypes run the same schedules with their own looser bounds (measured, stated below).

  test_deepseek_vs_reference.py --tool build/model/dump_logits_tool
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
import make_tiny_model  # noqa: E402
from test_forward_vs_reference import max_relative_error, random_ids  # noqa: E402

TOLERANCE = 1e-4
V2 = make_tiny_model.PRESETS["deepseek-v2-lite-tiny"]
V3 = make_tiny_model.PRESETS["deepseek-v3-tiny"]
# (name, config, file dtype, fp8, tool flags)
CONFIGS = [
    ("v2_lite", dict(V2), "F32", False, []),
    ("v2_lite_expanded", dict(V2), "F32", False, ["--mla-mode", "expanded"]),
    ("v3_mtp_yarn", dict(V3), "F32", False, []),
    ("v3_expanded", dict(V3), "F32", False, ["--mla-mode", "expanded"]),
    ("v3_fp8_bf16", dict(V3), "BF16", True, []),
    # DeepSeek-V2's own gate: softmax with group-limited greedy, every other layer MoE,
    # no shared experts, normalized weights (V2 then skips the scaling factor).
    ("v2_group_limited", dict(V2, topk_method="group_limited_greedy", n_group=4, topk_group=2,
                              n_shared_experts=None, moe_layer_freq=2, first_k_dense_replace=0,
                              norm_topk_prob=True, routed_scaling_factor=16.0,
                              num_experts_per_tok=3), "F32", False, []),
    # Latent rows of 40 + 8 = 48 values, a multiple of 16: the absorbed attention takes the
    # AVX-512 flash tile kernel (the presets' 40 take the portable loop).
    ("v3_latent_48", dict(V3, kv_lora_rank=40), "F32", False, []),
    ("v3_no_yarn_moe_freq", dict(V3, rope_scaling=None, moe_layer_freq=2, num_hidden_layers=4,
                                 routed_scaling_factor=1.5), "F32", False, []),
]
# KV dtypes on the V3 config. A rounded latent can flip a token's expert choice, which
# moves that position's logits a lot (max errors 0.3-0.6 for bf16/int8), so quantized
# dtypes are bounded on the median relative error over positions instead. Measured
# (worst mode, over two input draws): bf16 6.1e-3, f16 4.8e-4, int8 6.4e-2, int4 2.4e-1;
# an unrelated model scores ~1 or more, so a broken scale or row layout fails.
KV_DTYPES = [("bf16", 2e-2), ("f16", 3e-3), ("int8", 1e-1), ("int4", 4e-1)]


def run_tool(tool, model_dir, ids, other, flags):
    command = [tool, "--model", model_dir, "--ids", ",".join(map(str, ids)),
               "--other-ids", ",".join(map(str, other)), "--prefix", str(len(ids) // 2),
               "--block-size", "4", "--chunk", "3", "--threads", "2"] + flags
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr}")
    return json.loads(result.stdout)


def median_relative_error(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return float(np.median(np.max(np.abs(got - want), axis=1) / np.max(np.abs(want), axis=1)))


def compare(name, tool, model_dir, ids, other, flags, tolerance, metric=max_relative_error):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = deepseek_reference.Config(json.load(f))
    weights = deepseek_reference.load_weights(model_dir)
    with torch.no_grad():
        want = deepseek_reference.forward(config, weights, ids).numpy()
        want_other = deepseek_reference.forward(config, weights, other).numpy()
        shared = (len(ids) // 2) // 4 * 4
        cached_ids = ids[:shared] + other
        want_cached = deepseek_reference.forward(config, weights, cached_ids).numpy()[shared:]
    got = run_tool(tool, model_dir, ids, other, flags)
    errors = {mode: metric(got[mode], want) for mode in ("prefill", "decode")}
    errors["batched_b"] = metric(got["batched_b"], want_other)
    errors["cached_b"] = metric(got["cached_b"], want_cached)
    failures = [f"{name}: {mode} {metric.__name__} {e:.3g} > {tolerance}"
                for mode, e in errors.items() if not e < tolerance]
    same = (np.asarray(got["batched_a"], dtype=np.float32).tobytes()
            == np.asarray(got["decode"], dtype=np.float32).tobytes())
    if not same:
        failures.append(f"{name}: logits changed when other sequences shared the batch")
    print(f"  {name:24s} " + "  ".join(f"{m} {e:.2e}" for m, e in errors.items())
          + f"  batched==decode: {'yes' if same else 'NO'}", flush=True)
    return failures


def check_fp8_against_original(tool, tmp, rng):
    """The engine's logits of an FP8 checkpoint against the reference on the BF16 original
    it was quantized from (same seed) are as close as FP8 itself allows: no further than
    the reference's own FP8 logits are from the original (+5%). Median row errors, as
    for the KV dtypes (e4m3 keeps 3 mantissa bits: ~3% per weight)."""
    ids = random_ids(rng, V3["vocab_size"], 32)
    original = os.path.join(tmp, "v3_bf16_original")
    fp8_dir = os.path.join(tmp, "v3_fp8_bf16")
    make_tiny_model.make_model(original, dict(V3), "BF16", seed=4)
    config = deepseek_reference.Config(dict(V3, model_type="deepseek_v3"))
    with torch.no_grad():
        want = deepseek_reference.forward(
            config, deepseek_reference.load_weights(original), ids).numpy()
        ref_fp8 = deepseek_reference.forward(
            config, deepseek_reference.load_weights(fp8_dir), ids).numpy()
    got = run_tool(tool, fp8_dir, ids, ids[:8], [])["prefill"]
    error, ref_error = median_relative_error(got, want), median_relative_error(ref_fp8, want)
    print(f"  {'v3 fp8 vs bf16 original':24s} median {error:.2e} (reference's fp8 {ref_error:.2e})")
    if 0.01 < error < ref_error * 1.05:
        return []
    return [f"FP8 checkpoint: median error {error:.3g} vs its original (reference {ref_error:.3g})"]


def check_mtp(name, tool, model_dir, ids):
    """The MTP layer's logits (dump_logits_tool --mtp: two passes of real rows and one
    chained row through the module's own paged cache) against deepseek_reference.mtp_logits."""
    with open(os.path.join(model_dir, "config.json")) as f:
        config = deepseek_reference.Config(json.load(f))
    with torch.no_grad():
        want = deepseek_reference.mtp_logits(config, deepseek_reference.load_weights(model_dir), ids).numpy()
    command = [tool, "--model", model_dir, "--ids", ",".join(map(str, ids)), "--block-size", "4",
               "--threads", "2", "--mtp"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return [f"{name}: {' '.join(command)} failed:\n{result.stderr}"]
    error = max_relative_error(json.loads(result.stdout)["mtp"], want)
    print(f"  {name + ' mtp':24s} max {error:.2e}", flush=True)
    return [] if error < TOLERANCE else [f"{name}: MTP max_relative_error {error:.3g} > {TOLERANCE}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True, help="path to dump_logits_tool")
    args = parser.parse_args()
    start, failures = time.time(), []
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory(prefix="surge_ds_reference_") as tmp:
        for i, (name, overrides, dtype, fp8, flags) in enumerate(CONFIGS):
            model_dir = os.path.join(tmp, name)
            config = make_tiny_model.make_model(model_dir, overrides, dtype, seed=i, fp8=fp8)
            ids = random_ids(rng, config["vocab_size"], int(rng.integers(24, 41)))
            other = random_ids(rng, config["vocab_size"], int(rng.integers(10, 20)))
            failures += compare(name, args.tool, model_dir, ids, other, flags, TOLERANCE)
            if name in ("v3_mtp_yarn", "v3_fp8_bf16"):
                failures += check_mtp(name, args.tool, model_dir, ids)
        failures += check_fp8_against_original(args.tool, tmp, rng)
        model_dir = os.path.join(tmp, "v3_mtp_yarn")
        ids = random_ids(rng, V3["vocab_size"], 32)
        other = random_ids(rng, V3["vocab_size"], 24)
        for dtype, bound in KV_DTYPES:
            failures += compare(f"v3 kv {dtype} (median)", args.tool, model_dir, ids, other,
                                ["--kv-dtype", dtype], bound, median_relative_error)
    print(f"  {len(CONFIGS)} configs + {len(KV_DTYPES)} KV dtypes in {time.time() - start:.1f}s;"
          f" tolerance {TOLERANCE} (f32 KV)")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
