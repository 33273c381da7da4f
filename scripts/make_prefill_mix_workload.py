#!/usr/bin/env python3
"""Writes the jsonl workloads behind docs/BENCH.md's "Chunked prefill among decodes": greedy
completions bodies for `surge bench --dataset FILE --workload jsonl` -- every EVERY-th a long
prompt (tests/data/held_out_story.txt REPEATS times over, ~320 llama2 tokens per repeat,
max_tokens 4), the others short prompts that decode SHORT_TOKENS tokens, so that long
prefills arrive among decodes.

  scripts/make_prefill_mix_workload.py OUT.jsonl    # 12 requests, every 4th ~1,600 tokens
  scripts/make_prefill_mix_workload.py OUT.jsonl --requests 9 --every 9 --repeats 50 \\
      --short-tokens 384                             # one ~16K-token prompt among 8 decodes
"""
import argparse
import json
import pathlib

STORY = pathlib.Path(__file__).resolve().parent.parent / "tests/data/held_out_story.txt"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--requests", type=int, default=12)
    parser.add_argument("--every", type=int, default=4, help="request i is long when i %% EVERY == EVERY - 1")
    parser.add_argument("--repeats", type=int, default=5, help="times the story is repeated in a long prompt")
    parser.add_argument("--short-tokens", type=int, default=128, help="max_tokens of the short requests")
    args = parser.parse_args()
    story = STORY.read_text().replace("\n", " ")
    with open(args.out, "w") as out:
        for i in range(args.requests):
            if i % args.every == args.every - 1:
                body = {"prompt": f"{i}. " + (story + " ") * args.repeats, "max_tokens": 4}
            else:
                body = {"prompt": f"Story {i}: Once upon a time", "max_tokens": args.short_tokens}
            body.update(temperature=0, ignore_eos=True)
            out.write(json.dumps(body) + "\n")


if __name__ == "__main__":
    main()
