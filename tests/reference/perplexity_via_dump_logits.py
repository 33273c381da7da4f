#!/usr/bin/env python3
"""By hand: llama-perplexity's figure from model/dump_logits_tool's logits, one window per run
(the window's first ctx - 1 tokens prefilled in one pass, then one decode step), so that load
options the `surge` CLI does not expose can be measured -- e.g. `--gguf-q8 f32`, a GGUF's
Q8_0 tensors (SmolLM2's tied embedding / lm_head) kept in f32 instead of requantized to int8
per row. Token ids from `surge tokenize`. Same method and figures as `surge perplexity`.

Usage: .venv/bin/python tests/reference/perplexity_via_dump_logits.py --surge build/surge \
           --tool build/model/dump_logits_tool --model M --file TEXT [--context 512] [-- TOOL FLAGS]
"""
import argparse
import json
import math
import os
import subprocess
import tempfile

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--surge", required=True)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--context", type=int, default=512)
    parser.add_argument("tool_flags", nargs="*")
    args = parser.parse_args()
    text = open(args.file, encoding="utf-8").read()
    tokenized = json.loads(subprocess.run([args.surge, "tokenize", "--model", args.model, "--text", text],
                                          check=True, capture_output=True, text=True).stdout)["ids"]
    ctx, first = args.context, args.context // 2
    nlls = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "logits.bin")
        for w in range(len(tokenized) // ctx):
            window = tokenized[w * ctx:(w + 1) * ctx]  # the SmolLM2 tokenizer adds no BOS
            subprocess.run([args.tool, "--model", args.model, "--ids", ",".join(map(str, window)),
                            "--prefix", str(ctx - 1), "--decode-out", out] + args.tool_flags,
                           check=True, capture_output=True)
            logits = np.fromfile(out, dtype=np.float32).reshape(ctx, -1).astype(np.float64)
            rows = logits[first:ctx - 1]
            rows = rows - rows.max(axis=1, keepdims=True)
            logp = rows - np.log(np.exp(rows).sum(axis=1, keepdims=True))
            nlls.extend(-logp[np.arange(ctx - 1 - first), window[first + 1:ctx]])
            print(f"[{w + 1}]{math.exp(np.mean(nlls)):.4f},", end="", flush=True)
    nll = np.array(nlls)
    ppl = math.exp(nll.mean())
    print()
    print(json.dumps({"ppl": ppl, "stderr": ppl * math.sqrt(max(nll.var(), 0) / (len(nll) - 1)),
                      "mean_nll": nll.mean(), "scored_tokens": len(nll)}))


if __name__ == "__main__":
    main()
