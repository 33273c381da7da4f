#!/usr/bin/env python3
"""Writes the jsonl workload behind docs/BENCH.md's "Chunked prefill among decodes": 12 greedy
completions bodies for `surge bench --dataset FILE --workload jsonl` -- every fourth a long
prompt (tests/data/held_out_story.txt five times over, ~1,600 llama2 tokens, max_tokens 4), the
others short prompts that decode 128 tokens, so that long prefills arrive among decodes.

  scripts/make_prefill_mix_workload.py OUT.jsonl
"""
import json
import pathlib
import sys

STORY = pathlib.Path(__file__).resolve().parent.parent / "tests/data/held_out_story.txt"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    story = STORY.read_text().replace("\n", " ")
    with open(sys.argv[1], "w") as out:
        for i in range(12):
            if i % 4 == 3:
                body = {"prompt": f"{i}. " + (story + " ") * 5, "max_tokens": 4}
            else:
                body = {"prompt": f"Story {i}: Once upon a time", "max_tokens": 128}
            body.update(temperature=0, ignore_eos=True)
            out.write(json.dumps(body) + "\n")


if __name__ == "__main__":
    main()
