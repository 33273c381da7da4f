#!/usr/bin/python3
"""surge's GGUF models against llama.cpp itself (node-llama-cpp's prebuilt CPU build).

Six Hugging Face models -- a random llama (GQA, untied lm_head, hidden 256 so that Q4_K
rows hold whole 256-blocks), a random qwen2 (q/k/v biases), a random qwen3 (q/k norms,
head_dim 128 != hidden / heads), the bundled stories260K
(tied embeddings; 64 wide, so its k-quant rows fall back as llama-quantize's would), and
random DeepSeek V2-Lite- and V3-shaped models (llama.cpp's deepseek2: MLA with q_lora_rank
null / set, softmax-greedy / sigmoid-noaux_tc MoE with shared experts, YaRN) -- are
converted by `surge convert` to F32, F16, Q8_0, Q4_0 and Q4_K_M (the DeepSeek models to
F32 and BF16: DEEPSEEK_TYPES says why). tests/node/llamacpp_logits_reference.mjs loads
every file in llama.cpp, prefills each prompt and decodes NEW_TOKENS tokens greedily, recording llama.cpp's log-softmax at
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
  DeepSeek: F32 1e-4 as above (measured 1.3e-5 V2-Lite, 1.4e-5 V3). BF16 files have no
        err bound (err_bound: llama.cpp rounds activations to bf16, which re-routes
        near-tied tokens to other experts); they must keep decisive top-1 >= 0.9 and an
        rms error vs the F32 file no larger than llama.cpp's (measured: surge 0.005-0.007,
        llama.cpp 0.007-0.07).

  test_gguf_vs_llamacpp.py --surge build/surge --tool build/model/dump_logits_tool \
      [--models deepseek-v2-lite,deepseek-v3] [--work DIR]
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
BOUNDS = {"f32": 1e-4, "f16": 1e-2, "bf16": 3e-2, "q8_0": 0.3, "q4_0": 0.3, "q4_k_m": 0.3}
# surge's rms error vs the F32 file may exceed llama.cpp's by this factor: Q4_0/Q4_K blocks
# are executed as they are (measured ratio 1.00); Q8_0 is requantized per output row at
# load, a second rounding, and its activations are quantized per row, not per 32 (1.2-1.5).
ACCURACY_RATIO = {"f16": 1.1, "bf16": 1.1, "q8_0": 2.0, "q4_0": 1.1, "q4_k_m": 1.1}
MIN_TOP1 = {"f32": 1.0, "f16": 1.0, "bf16": 0.9, "q8_0": 0.9, "q4_0": 0.9, "q4_k_m": 0.9}
COMMON = ["--hidden-size", "256", "--intermediate-size", "512", "--num-hidden-layers", "2",
          "--num-attention-heads", "4", "--num-key-value-heads", "2", "--vocab-size", "32000"]
# DeepSeek in llama.cpp's deepseek2 layout (MLA + MoE + YaRN): the tools' tiny V2-Lite and
# V3 presets widened so that every matrix row is whole 32-blocks (Q8_0/Q4_0; rows of 256
# for Q4_K where hidden is the row), with the llama2 vocabulary for llama.cpp's tokenizer.
DEEPSEEK = ["--vocab-size", "32000", "--config", json.dumps(dict(
    hidden_size=256, intermediate_size=512, kv_lora_rank=64, qk_nope_head_dim=32,
    qk_rope_head_dim=16, v_head_dim=32, moe_intermediate_size=64))]
# The DeepSeek files: F32, and BF16 for a lower-precision one. F16, Q8_0, Q4_0 and Q4_K attn_k_b
# tensors crash this llama.cpp build on CPUs with AMX (GGML_ASSERT(*cur_backend_id != -1) in
# ggml-backend.cpp: the weight lands in the AMX buffer, whose kernels do not take MLA's batched
# per-head k_b product); BF16 has no AMX kernel and stays in the plain CPU buffer.
DEEPSEEK_TYPES = ["f32", "bf16"]
# name -> make_tiny_model.py flags (None: the bundled model). Untied: a tied 256-wide random
# embedding gives logits of std ~16, a one-hot softmax with nothing left to compare.
MODELS = {
    "llama": COMMON + ["--no-tie", "--seed", "1"],
    "qwen2": COMMON + ["--model-type", "qwen2", "--no-tie", "--seed", "2"],
    # q/k norms; head_dim 128 != 256 / 4 travels as attention.key_length.
    "qwen3": COMMON + ["--model-type", "qwen3", "--head-dim", "128", "--no-tie", "--seed", "5"],
    "stories260K": None,
    "deepseek-v2-lite": ["--preset", "deepseek-v2-lite-tiny"] + DEEPSEEK + ["--seed", "3"],
    "deepseek-v3": (["--preset", "deepseek-v3-tiny"] + DEEPSEEK[:-1] +
                    [json.dumps({**json.loads(DEEPSEEK[-1]), "q_lora_rank": 64}), "--seed", "4"]),
}
PROMPTS = ["Once upon a time, there was a little girl named Lily.",
           "The cat sat on the mat and"]


def types_of(name):
    """The file types compared for model `name` (see DEEPSEEK_TYPES)."""
    return DEEPSEEK_TYPES if name.startswith("deepseek") else TYPES


def make_models(work, surge, models):
    """Writes WORK/NAME-TYPE.gguf for every model and type; returns the node spec models."""
    specs = []
    for name, flags in models.items():
        hf_dir = os.path.join(ROOT, "models", "stories260K")
        if flags is not None:
            hf_dir = os.path.join(work, name)
            subprocess.run([sys.executable, os.path.join(ROOT, "tools", "make_tiny_model.py"),
                            "--out", hf_dir, "--tokenizer-from", LLAMA2_TOKENIZER] + flags,
                           check=True, stdout=subprocess.DEVNULL)
        for t in types_of(name):
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


def err_bound(name, t):
    """The bound on err, or None: for an MoE model a file computed in lower precision on
    either side may route a near-tied token to another expert, which moves that token's
    logits by about their std -- err then says nothing about the loader, and the accuracy
    and decisive top-1 checks carry the comparison (F32 keeps its bound)."""
    return None if name.startswith("deepseek") and t != "f32" else BOUNDS[t]


def check(name, t, s):
    """Prints one file's line; returns whether it passes."""
    top1 = s["agree"] / s["counted"] if s["counted"] else 1.0
    bound = err_bound(name, t)
    ok = (bound is None or s["err"] <= bound) and top1 >= MIN_TOP1[t]
    bound_text = "n/a: MoE" if bound is None else f"{bound:g}"
    line = (f"{name:16s} {t:7s} max|dlogp|/std {s['err']:.2g} (bound {bound_text}); "
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
    p.add_argument("--models", help="comma-separated subset of " + ",".join(MODELS))
    args = p.parse_args()
    if args.work:
        os.makedirs(args.work, exist_ok=True)
        return run(args, args.work)
    with tempfile.TemporaryDirectory(prefix="surge_llamacpp_") as work:
        return run(args, work)


def run(args, work):
    start = time.time()
    models = {n: MODELS[n] for n in (args.models.split(",") if args.models else MODELS)}
    spec = dict(new_tokens=NEW_TOKENS, models=make_models(work, args.surge, models))
    spec_path, out_dir = os.path.join(work, "spec.json"), os.path.join(work, "llamacpp")
    json.dump(spec, open(spec_path, "w"))
    node = subprocess.run([args.node, NODE_SCRIPT, spec_path, out_dir])
    if node.returncode == 77:
        return 77
    if node.returncode != 0:
        print(f"FAIL: {NODE_SCRIPT} exited {node.returncode}")
        return 1
    reference_done, failures = time.time() - start, 0
    for name in models:
        for t in types_of(name):
            failures += not check(name, t, compare(args.tool, work, name, t, out_dir))
    print(f"{sum(len(types_of(n)) for n in models)} files in {time.time() - start:.1f}s "
          f"(converted and run in llama.cpp in {reference_done:.1f}s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
