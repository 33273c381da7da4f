#!/usr/bin/python3
"""surge's GGUF models against llama.cpp itself (node-llama-cpp's prebuilt CPU build).

Three Hugging Face models -- a random llama (GQA, untied lm_head, hidden 256 so that Q4_K
rows hold whole 256-blocks), a random qwen2 (q/k/v biases) and the bundled stories260K
(tied embeddings; 64 wide, so its k-quant rows fall back as llama-quantize's would) -- are
converted by `surge convert` to F32, F16, Q8_0, Q4_0 and
Q4_K_M. tests/node/llamacpp_logits_reference.mjs loads every file in llama.cpp, prefills
each prompt and decodes NEW_TOKENS tokens greedily, recording llama.cpp's log-softmax at
every position; model/dump_logits_tool runs surge on the same file with the same ids (the
prompt in one pass, then one token per pass through the paged KV cache). Per file:

  - err: max over positions and tokens of |logp_surge - logp_llamacpp| / std(surge's logit
    row), over tokens whose llama.cpp probability is above e^-30 (llama.cpp's float softmax
    underflows to 0 below ~e^-87). Log-probabilities are logits minus a per-row constant,
    so this is a logit error relative to the logits' spread that ignores the shift.
    A loader bug (Q/K permutation, a lost bias, a wrong rope or block scale) moves logits
    by about their std (err ~ 1); rounding differences stay far below.
  - greedy top-1: the share of decode positions where surge's argmax is llama.cpp's greedy
    token. It must be 1 for F32/F16 (the greedy sequences match exactly); for quantized
    files it is required only where llama.cpp's top-1 margin exceeds 2 * err's bound
    ("decisive"), since closer calls may flip under either side's rounding -- the random
    models' 32000-token distributions are flat (logit std ~1), so most are close calls.
  - accuracy (not F32): rms over positions/tokens of (logp - logp of the F32 file, run by
    surge on the same ids) / std, for surge and for llama.cpp; surge's may exceed
    llama.cpp's by ACCURACY_RATIO at most.

Bounds on err (measured values in docs/PERF.md, GGUF section):
  F32   1e-4: both sides compute in f32 (llama.cpp with an F32 K/V cache here) and differ
        only in summation order (measured <= 1.5e-5).
  F16   1e-2: the same f16 weights; llama.cpp may round activations to f16 in its F16
        matmul (measured 1.2e-5 on the 256-wide models, 3.8e-3 on stories260K).
  Q8_0, Q4_0, Q4_K_M  0.3: the weight blocks are the same, but llama.cpp multiplies them
        with activations quantized to 8 bits per 32 (Q8_0/Q4_0) or 256 (Q4_K) values, surge
        per token row, and surge requantizes Q8_0 per output row at load
        (LoadOptions::gguf_wide_quant_dtype); measured 0.10-0.16.

  test_gguf_vs_llamacpp.py --surge build/surge --tool build/model/dump_logits_tool
Exits 77 (skipped) when node-llama-cpp is not installed.
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
NODE_SCRIPT = os.path.join(ROOT, "tests", "node", "llamacpp_logits_reference.mjs")
LLAMA2_TOKENIZER = os.path.join(ROOT, "tests", "node", "node_modules", "@lenml",
                                "tokenizer-llama2", "models")
NEW_TOKENS = 32
TYPES = ["f32", "f16", "q8_0", "q4_0", "q4_k_m"]
BOUNDS = {"f32": 1e-4, "f16": 1e-2, "q8_0": 0.3, "q4_0": 0.3, "q4_k_m": 0.3}
# surge's rms error vs the F32 file may exceed llama.cpp's by this factor: Q4_0/Q4_K blocks
# are executed as they are (measured ratio 1.00); Q8_0 is requantized per output row at
# load, a second rounding, and its activations are quantized per row, not per 32 (1.2-1.5).
ACCURACY_RATIO = {"f16": 1.1, "q8_0": 2.0, "q4_0": 1.1, "q4_k_m": 1.1}
MIN_TOP1 = {"f32": 1.0, "f16": 1.0, "q8_0": 0.9, "q4_0": 0.9, "q4_k_m": 0.9}
COMMON = ["--hidden-size", "256", "--intermediate-size", "512", "--num-hidden-layers", "2",
          "--num-attention-heads", "4", "--num-key-value-heads", "2", "--vocab-size", "32000"]
# name -> make_tiny_model.py flags (None: the bundled model). Untied: a tied 256-wide random
# embedding gives logits of std ~16, a one-hot softmax with nothing left to compare.
MODELS = {
    "llama": COMMON + ["--no-tie", "--seed", "1"],
    "qwen2": COMMON + ["--model-type", "qwen2", "--no-tie", "--seed", "2"],
    "stories260K": None,
}
PROMPTS = ["Once upon a time, there was a little girl named Lily.",
           "The cat sat on the mat and"]


def make_models(work, surge):
    """Writes WORK/NAME-TYPE.gguf for every model and type; returns the node spec models."""
    specs = []
    for name, flags in MODELS.items():
        hf_dir = os.path.join(ROOT, "models", "stories260K")
        if flags is not None:
            hf_dir = os.path.join(work, name)
            subprocess.run([sys.executable, os.path.join(ROOT, "tools", "make_tiny_model.py"),
                            "--out", hf_dir, "--tokenizer-from", LLAMA2_TOKENIZER] + flags,
                           check=True, stdout=subprocess.DEVNULL)
        for t in TYPES:
            path = os.path.join(work, f"{name}-{t}.gguf")
            subprocess.run([surge, "convert", hf_dir, path, "--type", t], check=True,
                           stdout=subprocess.DEVNULL)
            specs.append(dict(name=f"{name}-{t}", path=path, prompts=PROMPTS))
    return specs


def log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def surge_logits(tool, gguf, ids, prompt_len, out_path, rows):
    """surge's raw logits [rows, vocab] for `ids`: the prompt in one pass, then decode."""
    subprocess.run([tool, "--model", gguf, "--ids", ",".join(map(str, ids)), "--prefix",
                    str(prompt_len), "--decode-out", out_path, "--threads", "1"], check=True)
    return np.fromfile(out_path, np.float32).reshape(len(ids), -1)[:rows].astype(np.float64)


def rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


def compare(tool, work, name, t, out_dir):
    """Statistics over all prompts of one file (see the module docstring)."""
    result = json.load(open(os.path.join(out_dir, f"{name}-{t}.json")))
    vocab = result["vocab_size"]
    stats = dict(err=0.0, d_surge=[], d_llama=[], agree=0, counted=0, agree_all=0, rows=0)
    for r, run in enumerate(result["runs"]):
        ids = run["ids"]
        prompt_len = len(ids) - NEW_TOKENS
        ref = np.fromfile(os.path.join(out_dir, f"{name}-{t}.{r}.logprobs.f32"),
                          np.float32).reshape(-1, vocab).astype(np.float64)
        base = os.path.join(work, f"{name}-{t}.{r}")
        raw = surge_logits(tool, os.path.join(work, f"{name}-{t}.gguf"), ids, prompt_len,
                           base + ".surge.f32", len(ref))
        mine, scale = log_softmax(raw), raw.std(axis=1, keepdims=True)  # [rows, 1]
        mask = ref > -30.0
        stats["err"] = max(stats["err"], float((np.abs(mine - ref) / scale)[mask].max()))
        if t != "f32":  # the F32 file's logits on the same ids: the accuracy yardstick
            truth = log_softmax(surge_logits(tool, os.path.join(work, f"{name}-f32.gguf"), ids,
                                             prompt_len, base + ".truth.f32", len(ref)))
            stats["d_surge"].append(((mine - truth) / scale)[mask])
            stats["d_llama"].append(((ref - truth) / scale)[mask])
        # Row i predicts ids[i + 1]; from the prompt's end on, that is llama.cpp's choice.
        top2 = np.sort(ref, axis=1)[:, -2:]
        margin = (top2[:, 1] - top2[:, 0]) / scale[:, 0]
        for i in range(prompt_len - 1, len(ref)):
            hit = int(mine[i].argmax() == ids[i + 1])
            stats["agree_all"] += hit
            stats["rows"] += 1
            if t in ("f32", "f16") or margin[i] > 2 * BOUNDS[t]:
                stats["counted"] += 1
                stats["agree"] += hit
    for key in ("d_surge", "d_llama"):
        stats[key] = rms(np.concatenate(stats[key])) if stats[key] else 0.0
    return stats


def check(name, t, s):
    """Prints one file's line; returns whether it passes."""
    top1 = s["agree"] / s["counted"] if s["counted"] else 1.0
    ok = s["err"] <= BOUNDS[t] and top1 >= MIN_TOP1[t]
    line = (f"{name:12s} {t:7s} max|dlogp|/std {s['err']:.2g} (bound {BOUNDS[t]:g}); "
            f"greedy top-1 {s['agree_all']}/{s['rows']}, decisive {s['agree']}/{s['counted']}")
    if t != "f32":
        # surge's quantization error (vs the F32 file) must not be much above llama.cpp's.
        ok = ok and s["d_surge"] <= ACCURACY_RATIO[t] * s["d_llama"] + 1e-3
        line += f"; rms err vs F32: surge {s['d_surge']:.3g}, llama.cpp {s['d_llama']:.3g}"
    print(("ok   " if ok else "FAIL ") + line)
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--surge", required=True)
    p.add_argument("--tool", required=True)
    p.add_argument("--node", default="node")
    p.add_argument("--work", help="keep the files here (default: a temporary directory)")
    args = p.parse_args()
    if args.work:
        os.makedirs(args.work, exist_ok=True)
        return run(args, args.work)
    with tempfile.TemporaryDirectory(prefix="surge_llamacpp_") as work:
        return run(args, work)


def run(args, work):
    start = time.time()
    spec = dict(new_tokens=NEW_TOKENS, models=make_models(work, args.surge))
    spec_path, out_dir = os.path.join(work, "spec.json"), os.path.join(work, "llamacpp")
    json.dump(spec, open(spec_path, "w"))
    node = subprocess.run([args.node, NODE_SCRIPT, spec_path, out_dir])
    if node.returncode == 77:
        return 77
    if node.returncode != 0:
        print(f"FAIL: {NODE_SCRIPT} exited {node.returncode}")
        return 1
    reference_done, failures = time.time() - start, 0
    for name in MODELS:
        for t in TYPES:
            failures += not check(name, t, compare(args.tool, work, name, t, out_dir))
    print(f"{len(MODELS) * len(TYPES)} files in {time.time() - start:.1f}s "
          f"(converted and run in llama.cpp in {reference_done:.1f}s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
