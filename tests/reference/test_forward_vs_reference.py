#!/usr/bin/python3
"""surge's forward pass (through model/dump_logits_tool) against hf_reference.py.

For each configuration a random-weight model is generated with tools/make_tiny_model.py,
and the C++ logits of every position are compared with the PyTorch reference's:
  - "prefill": all ids in one pass;
  - "decode": a prefix, then one token per pass through the paged KV (block size 4,
    shuffled block tables);
  - "batched": the decode schedule again while a second sequence prefills in chunks in
    the same passes -- its logits must equal "decode" bit for bit (batch invariance), and
    the second sequence's logits are compared with the reference too.
Metric, per position: max_i |surge_i - ref_i| / max_i |ref_i|; a configuration passes
when the largest over all positions and modes is below 1e-4. The bundled stories260K
runs the same comparison, and the reference itself is checked against its goldens.

  test_forward_vs_reference.py --tool build/model/dump_logits_tool
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import hf_reference  # noqa: E402
import make_tiny_model  # noqa: E402

TOLERANCE = 1e-4
STORIES = os.path.join(ROOT, "models", "stories260K")

SMALL = dict(hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
             vocab_size=300, max_position_embeddings=512)
# (name, config overrides, file dtype, number of safetensors files)
CONFIGS = [
    ("llama_gqa_untied", dict(SMALL, num_key_value_heads=2), "F32", 1),
    ("llama_mha_tied", dict(SMALL, num_key_value_heads=4, tie_word_embeddings=True), "F32", 1),
    ("llama_gqa8_biases_bf16", dict(SMALL, hidden_size=128, num_attention_heads=8, num_key_value_heads=1,
                                    head_dim=16, attention_bias=True, mlp_bias=True, vocab_size=1000,
                                    num_hidden_layers=3), "BF16", 1),
    ("qwen2_biases_f16_sharded", dict(SMALL, model_type="qwen2", hidden_size=96, num_attention_heads=6,
                                      num_key_value_heads=2, intermediate_size=200, vocab_size=500,
                                      rope_theta=1000000.0), "F16", 3),
    ("qwen2_tied_head_dim", dict(SMALL, model_type="qwen2", num_attention_heads=2, num_key_value_heads=1,
                                 head_dim=48, tie_word_embeddings=True), "F32", 1),
    ("qwen3_qk_norm_tied_head_dim", dict(SMALL, model_type="qwen3", num_key_value_heads=2, head_dim=32,
                                         tie_word_embeddings=True, rope_theta=1000000.0), "F32", 1),
    ("qwen3_bias_untied_bf16", dict(SMALL, model_type="qwen3", hidden_size=96, num_attention_heads=6,
                                    num_key_value_heads=3, head_dim=24, attention_bias=True,
                                    vocab_size=500), "BF16", 2),
    ("llama3_rope_scaling", dict(SMALL, num_attention_heads=2, num_key_value_heads=1, rope_theta=10000.0,
                                 rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                                   high_freq_factor=4.0,
                                                   original_max_position_embeddings=64)), "F32", 1),
    ("linear_rope_scaling_sharded", dict(SMALL, num_key_value_heads=2,
                                         rope_scaling=dict(type="linear", factor=4.0)), "BF16", 2),
]


def max_relative_error(got, want):
    """Largest over rows of max|got - want| / max|want|."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.max(np.max(np.abs(got - want), axis=1) / np.max(np.abs(want), axis=1)))


def run_tool(tool, model_dir, ids, other_ids, prefix):
    command = [tool, "--model", model_dir, "--ids", ",".join(map(str, ids)),
               "--other-ids", ",".join(map(str, other_ids)), "--prefix", str(prefix),
               "--block-size", "4", "--chunk", "3", "--threads", "2"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr}")
    return json.loads(result.stdout)


def compare(name, tool, model_dir, ids, other_ids):
    """Returns (max relative error over the modes, failure messages)."""
    ref = hf_reference.Reference(model_dir)
    want = ref.logits(ids).numpy()
    want_other = ref.logits(other_ids).numpy()
    got = run_tool(tool, model_dir, ids, other_ids, prefix=len(ids) // 3)
    errors = {mode: max_relative_error(got[mode], want) for mode in ("prefill", "decode")}
    errors["batched_b"] = max_relative_error(got["batched_b"], want_other)
    failures = [f"{name}: {mode} max relative error {e:.3g} > {TOLERANCE}"
                for mode, e in errors.items() if not e < TOLERANCE]
    if np.asarray(got["batched_a"], dtype=np.float32).tobytes() != np.asarray(got["decode"], dtype=np.float32).tobytes():
        failures.append(f"{name}: logits changed when other sequences shared the batch")
    print(f"  {name:32s} " + "  ".join(f"{m} {e:.2e}" for m, e in errors.items()) + "  batched==decode: "
          + ("yes" if not any("shared" in f for f in failures) else "NO"))
    return max(errors.values()), failures


def random_ids(rng, vocab, length):
    return [int(t) for t in rng.integers(0, vocab, size=length)]


def check_reference_against_goldens():
    """The reference reproduces stories260K's goldens (made by another PyTorch forward and
    cross-checked with llama2.c): top-5 logits within 1e-4."""
    with open(os.path.join(STORIES, "goldens.json")) as f:
        goldens = json.load(f)
    ref, worst = hf_reference.Reference(STORIES), 0.0
    for case in goldens["cases"][:3]:
        logits = ref.logits(case["input_ids"] + case["output_ids"][:2]).numpy()
        for step in case["top5_logits"]:
            for top in step["top"]:
                worst = max(worst, abs(logits[step["position"], top["id"]] - top["logit"]))
    print(f"  reference vs stories260K goldens: max |diff| of top-5 logits {worst:.2e}")
    return [] if worst < 1e-4 else [f"reference disagrees with goldens.json by {worst}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True, help="path to dump_logits_tool")
    args = parser.parse_args()
    start, failures = time.time(), check_reference_against_goldens()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="surge_reference_") as tmp:
        for i, (name, overrides, dtype, shards) in enumerate(CONFIGS):
            model_dir = os.path.join(tmp, name)
            config = make_tiny_model.make_model(model_dir, overrides, dtype, shards, seed=i)
            ids = random_ids(rng, config["vocab_size"], int(rng.integers(20, 41)))
            other = random_ids(rng, config["vocab_size"], int(rng.integers(10, 30)))
            failures += compare(name, args.tool, model_dir, ids, other)[1]
    with open(os.path.join(STORIES, "goldens.json")) as f:
        case = json.load(f)["cases"][1]
    stories_ids = (case["input_ids"] + case["output_ids"])[:36]
    failures += compare("stories260K", args.tool, STORIES, stories_ids, case["output_ids"][5:30])[1]
    print(f"  {len(CONFIGS) + 1} models in {time.time() - start:.1f}s; tolerance {TOLERANCE}")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
