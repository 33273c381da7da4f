#!/usr/bin/env python3
"""Writes a copy-heavy jsonl workload for `surge bench --dataset FILE` (one completions body
per line, greedy): each prompt quotes a passage of tests/data/held_out_story.txt and then
starts it again (verbatim, or with one name changed: an edit), so a model that copies from
its context continues the passage -- what n-gram (prompt lookup) speculation proposes.

  scripts/make_copy_workload.py OUT.jsonl [--lines 16] [--max-tokens 96]
"""
import argparse
import json
import pathlib
import random

STORY = pathlib.Path(__file__).resolve().parent.parent / "tests/data/held_out_story.txt"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--lines", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sentences = [s.strip() + "." for s in STORY.read_text().replace("\n", " ").split(".") if s.strip()]
    with open(args.out, "w") as out:
        for i in range(args.lines):
            start = rng.randrange(0, max(1, len(sentences) - 6))
            passage = " ".join(sentences[start:start + 6])
            restart = " ".join(sentences[start:start + 1])
            if i % 2 == 1:  # an edit: the same passage with its heroine renamed
                prompt = f"{passage}\n\nThe same story, with Zoe instead of Mia:\n\n{restart.replace('Mia', 'Zoe')}"
            else:
                prompt = f"{passage}\n\nAgain, word for word:\n\n{restart}"
            out.write(json.dumps({"prompt": prompt, "max_tokens": args.max_tokens, "temperature": 0}) + "\n")


if __name__ == "__main__":
    main()
