#!/usr/bin/env python3
"""By hand, not in `make test` (needs torch + transformers, e.g. /tmp/venvtest): llama-perplexity's
figure computed by transformers' own forward on a Hugging Face directory (for SmolLM2: the one
`surge convert MODEL.gguf DIR --dtype f32` writes), to set beside
`surge perplexity --model DIR --file TEXT --dtype f32 --kv-cache-dtype f32`.

Same method as apps/perplexity.h: the whole text tokenized (add_special_tokens, so BOS only
when the tokenizer adds one), floor(n / ctx) windows of ctx tokens, each window's first token
replaced by BOS when the tokenizer adds one, logits of positions [ctx/2, ctx-1) scored against
the next token; PPL = exp(mean NLL), error PPL * sqrt((mean(NLL^2) - mean(NLL)^2) / (count - 1)).

Usage: /tmp/venvtest/bin/python tests/reference/check_perplexity_transformers.py DIR TEXT [--context 512]
"""
import argparse
import json
import math

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("text")
    parser.add_argument("--context", type=int, default=512)
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.dir)
    model = AutoModelForCausalLM.from_pretrained(args.dir, dtype=torch.float32).eval()
    tokens = tokenizer(open(args.text, encoding="utf-8").read())["input_ids"]
    bos = tokenizer.bos_token_id if tokens and tokens[0] == tokenizer.bos_token_id else None
    ctx, first = args.context, args.context // 2
    total = total_sq = 0.0
    count = 0
    for w in range(len(tokens) // ctx):
        window = tokens[w * ctx:(w + 1) * ctx]
        ids = list(window)
        if bos is not None:
            ids[0] = bos
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].double()
        logp = torch.log_softmax(logits[first:ctx - 1], dim=-1)
        nll = -logp[torch.arange(ctx - 1 - first), torch.tensor(window[first + 1:ctx])]
        total += nll.sum().item()
        total_sq += (nll * nll).sum().item()
        count += nll.numel()
        print(f"[{w + 1}]{math.exp(total / count):.4f},", end="", flush=True)
    mean = total / count
    ppl = math.exp(mean)
    err = ppl * math.sqrt(max(total_sq / count - mean * mean, 0) / (count - 1))
    print()
    print(json.dumps({"ppl": ppl, "stderr": err, "mean_nll": mean, "tokens": len(tokens), "scored_tokens": count}))


if __name__ == "__main__":
    main()
