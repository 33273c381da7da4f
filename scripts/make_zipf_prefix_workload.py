#!/usr/bin/env python3
"""Writes the multi-tenant shared-prefix workload of scripts/bench_gateways.sh: completions
bodies for `surge bench --dataset FILE --workload jsonl`, each a tenant's system prompt
(NUM_PROMPTS distinct ones, PREFIX_WORDS words each, the tenant drawn with Zipf popularity
of exponent S: tenant k with weight 1/k^S) followed by a short question of its own, greedy,
MAX_TOKENS each. Deterministic for a seed.

  scripts/make_zipf_prefix_workload.py OUT.jsonl MODEL_NAME [--num-prompts 32] [--prefix-words 200]
      [--num-requests 256] [--zipf 1.1] [--max-tokens 8] [--seed 1]
"""
import argparse
import json
import random

WORDS = ("system policy account billing order refund shipping product customer support agent answer "
         "question tenant service language polite short helpful safety privacy record ticket status "
         "invoice plan upgrade device network password reset schedule meeting calendar report travel").split()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("model")
    parser.add_argument("--num-prompts", type=int, default=32)
    parser.add_argument("--prefix-words", type=int, default=200)
    parser.add_argument("--num-requests", type=int, default=256)
    parser.add_argument("--zipf", type=float, default=1.1, help="popularity exponent S (tenant k: 1/k^S)")
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    prompts = [f"You are tenant {k}'s assistant. " + " ".join(rng.choice(WORDS) for _ in range(args.prefix_words))
               for k in range(args.num_prompts)]
    weights = [1.0 / (k + 1) ** args.zipf for k in range(args.num_prompts)]
    with open(args.out, "w") as out:
        for i in range(args.num_requests):
            tenant = rng.choices(range(args.num_prompts), weights)[0]
            question = " ".join(rng.choice(WORDS) for _ in range(8))
            body = {"model": args.model, "prompt": f"{prompts[tenant]}\nUser {i}: {question}?\nAssistant:",
                    "max_tokens": args.max_tokens, "temperature": 0}
            out.write(json.dumps(body) + "\n")


if __name__ == "__main__":
    main()
