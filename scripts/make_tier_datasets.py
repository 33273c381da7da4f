#!/usr/bin/python3
"""Writes the tiered-overload workloads of bench_tiers.sh and bench_route_tiers.sh:
OUT_PREFIX.batch.jsonl and OUT_PREFIX.realtime.jsonl, one completion body per line (a
120-word prompt, 32 tokens, the tier in `priority`).
  make_tier_datasets.py OUT_PREFIX NUM_BATCH NUM_REALTIME"""
import json
import random
import sys

WORDS = ("the of and to in is that it was for on are as with his they at be this from have or by one had "
         "not but what all were when we there can an your which their said if do will each about how up out").split()


def main():
    out, num_batch, num_realtime = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    random.seed(4)
    for tier, n in (("batch", num_batch), ("realtime", num_realtime)):
        with open(f"{out}.{tier}.jsonl", "w") as f:
            for _ in range(n):
                prompt = " ".join(random.choice(WORDS) for _ in range(120))
                f.write(json.dumps({"prompt": prompt, "max_tokens": 32, "ignore_eos": True, "priority": tier}) + "\n")


if __name__ == "__main__":
    main()
