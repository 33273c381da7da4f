#!/usr/bin/env python3
"""Writes the three workloads of the side-by-side comparison (docs/PEERS.md) as jsonl files of
/v1/completions bodies (greedy, ignore_eos, fixed max_tokens), exact in the model's tokens:

  chat.jsonl    ShareGPT-like lengths: prompt tokens ~ lognormal(median 96, sigma 1.1) clipped to
                [8, 2048], output tokens ~ lognormal(median 128, sigma 0.9) clipped to [8, --output-cap]
                (the shape of ShareGPT's first turns as vLLM's benchmarks sample them: a long right
                tail of prompts, answers of one to a few hundred tokens)
  prefix.jsonl  one shared 1,000-token system prompt, then a user turn of 16..64 tokens; 64 output
  long.jsonl    decodes (32-token prompts, 256 output) and one 4,096-token prompt (16 output)
                placed at the middle of the file, so it arrives while the others decode

Each file is written twice: NAME.jsonl (bodies for `surge bench --workload jsonl`) and
NAME.guidellm.jsonl (GuideLLM's columns: prompt, prompt_tokens_count, output_tokens_count).
Prompts are random words of the model's vocabulary, cut to the exact token count, drawn from
--seed: give each run its own seed so that no run meets prompts an earlier one left in a prefix
cache. The system prompt comes from --prefix-seed alone, the same in every run.

  scripts/peers/make_workloads.py --tokenizer HF_DIR --out DIR [--requests 128] [--seed 1]
"""
import argparse
import json
import math
import pathlib
import random

from tokenizers import Tokenizer


def word_ids(tokenizer):
    """Token ids of plain lower-case words with a leading space: random text that stays text."""
    ids = []
    for token, token_id in tokenizer.get_vocab().items():
        if token.startswith("\u0120") and token[1:].isalpha() and token[1:].islower() and len(token) > 3:
            ids.append(token_id)
    return sorted(ids)


def text_of(tokenizer, rng, vocab, num_tokens):
    """Text that the tokenizer turns into exactly num_tokens tokens (no BOS: SmolLM2 adds none)."""
    ids = [rng.choice(vocab) for _ in range(num_tokens + 8)]
    text = tokenizer.decode(ids)
    exact = tokenizer.encode(text, add_special_tokens=False).ids[:num_tokens]
    return tokenizer.decode(exact)


def lognormal(rng, median, sigma, low, high):
    return int(min(high, max(low, round(math.exp(rng.gauss(math.log(median), sigma))))))


def chat(tokenizer, rng, vocab, n, cap):
    for _ in range(n):
        yield (text_of(tokenizer, rng, vocab, lognormal(rng, 96, 1.1, 8, 2048)),
               lognormal(rng, 128, 0.9, 8, cap))


def prefix(tokenizer, rng, vocab, n, cap, prefix_seed=0):
    system = "System: " + text_of(tokenizer, random.Random(f"system/{prefix_seed}"), vocab, 998)
    for _ in range(n):
        yield system + "\nUser:" + text_of(tokenizer, rng, vocab, rng.randint(16, 64)), min(64, cap)


def long(tokenizer, rng, vocab, n, cap):
    for i in range(n):
        if i == n // 2:
            yield text_of(tokenizer, rng, vocab, 4096), 16
        else:
            yield text_of(tokenizer, rng, vocab, 32), min(256, cap)


WORKLOADS = {"chat": chat, "prefix": prefix, "long": long}


def write(out_dir, name, entries, tokenizer):
    with open(out_dir / f"{name}.jsonl", "w") as bodies, open(out_dir / f"{name}.guidellm.jsonl", "w") as rows:
        for prompt, max_tokens in entries:
            body = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True}
            bodies.write(json.dumps(body) + "\n")
            row = {"prompt": prompt, "prompt_tokens_count": len(tokenizer.encode(prompt, add_special_tokens=False).ids),
                   "output_tokens_count": max_tokens}
            rows.write(json.dumps(row) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", required=True, help="directory holding tokenizer.json")
    parser.add_argument("--out", required=True, help="directory to write the files into")
    parser.add_argument("--requests", type=int, default=128, help="requests per file")
    parser.add_argument("--output-cap", type=int, default=256, help="most output tokens of one request")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--prefix-seed", type=int, default=0, help="seed of the shared system prompt")
    parser.add_argument("--only", choices=sorted(WORKLOADS), action="append", help="write only these workloads")
    args = parser.parse_args()
    tokenizer = Tokenizer.from_file(str(pathlib.Path(args.tokenizer) / "tokenizer.json"))
    vocab = word_ids(tokenizer)
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in args.only or sorted(WORKLOADS):
        rng = random.Random(f"{args.seed}/{name}")
        extra = {"prefix_seed": args.prefix_seed} if name == "prefix" else {}
        entries = WORKLOADS[name](tokenizer, rng, vocab, args.requests, args.output_cap, **extra)
        write(out_dir, name, list(entries), tokenizer)


if __name__ == "__main__":
    main()
