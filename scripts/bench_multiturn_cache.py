#!/usr/bin/env python3
"""Multi-turn chat against a running `surge serve` (docs/BENCH.md, "Multi-turn chat on
SmolLM2"): each answer is fed back as the assistant message, several turns, greedy (or
--temperature T, seeded). Per turn:
usage.prompt_tokens_details.cached_tokens against the conversation's tokens so far, and
whether re-tokenizing the previous answer inside the new prompt gives the ids the model
generated (if not, the prefix cache can reuse only the blocks before the first difference).

  .venv/bin/python scripts/bench_multiturn_cache.py --url http://127.0.0.1:8000 [--turns 6] [--conversations 8]

The generated ids come from the answer's logprobs (each token's bytes, mapped through the
vocabulary of the server's own /tokenize-consistent tokenizer, rebuilt from the GGUF by
tests/reference/tokenizer_hf_reference.py); the new prompt's ids from POST /tokenize with the
messages. Block size 16 (the server's default).
"""
import argparse
import json
import os
import sys
import urllib.request

import openai

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
from tokenizer_hf_reference import load  # noqa: E402

QUESTIONS = ["What is the capital of France?", "Tell me one fact about it.", "How many people live there?",
             "Name a famous museum there.", "What else should I visit?", "Thank you! Summarize our chat.",
             "Write a haiku about the sea.", "Make it about mountains instead.", "Explain gravity simply.",
             "Give an example.", "What is 12 times 7?", "And divided by 3?"]


def post(url, path, body):
    request = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.load(response)


def byte_map(tokenizer):
    """bytes of a token's text -> id, for the byte-level BPE vocabulary."""
    out = {}
    for token, i in tokenizer.get_vocab(True).items():
        text = tokenizer.decode([i], skip_special_tokens=False)
        out.setdefault(text.encode("utf-8", "surrogatepass"), i)
    return out


def common_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def conversation(client, args, model, ids_of, start):
    messages, previous, rows = [], None, []
    for turn in range(args.turns):
        question = QUESTIONS[(start + turn) % len(QUESTIONS)]
        if turn == 0:  # numbered, so that no two conversations share more than the system prompt
            question = f"({start + 1}) {question}"
        messages.append({"role": "user", "content": question})
        prompt = post(args.url, "/tokenize", {"model": model, "messages": messages,
                                              "add_generation_prompt": True})["tokens"]
        reply = client.chat.completions.create(model=model, messages=messages, temperature=args.temperature,
                                               seed=start * 1000 + turn, max_tokens=args.max_tokens, logprobs=True)
        choice = reply.choices[0]
        generated = [ids_of[bytes(t.bytes)] for t in choice.logprobs.content]
        if choice.finish_reason == "stop" and generated[-1:] != [args.eos_id]:
            generated.append(args.eos_id)  # the stop token, when logprobs leave it out
        row = {"turn": turn + 1, "prompt_tokens": reply.usage.prompt_tokens,
               "cached_tokens": reply.usage.prompt_tokens_details.cached_tokens}
        if previous is not None:  # what this prompt shares with the last one + its answer
            row["shared"] = common_prefix(previous, prompt)
            row["history"] = len(previous)
            if row["shared"] < row["history"]:
                row["break"] = {"generated": previous[row["shared"]:row["shared"] + 4],
                                "retokenized": prompt[row["shared"]:row["shared"] + 4]}
        rows.append(row)
        previous = prompt + generated
        messages.append({"role": "assistant", "content": choice.message.content})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--model-file", default=os.path.join(ROOT, "models/SmolLM2-135M-Instruct/"
                                                                   "SmolLM2-135M-Instruct.Q4_1.gguf"))
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--eos-id", type=int, default=2)
    parser.add_argument("--temperature", type=float, default=0.0)
    args = parser.parse_args()
    client = openai.OpenAI(base_url=args.url + "/v1", api_key="unused", max_retries=0, timeout=300)
    model = client.models.list().data[0].id
    ids_of = byte_map(load(args.model_file))
    totals = {"turns": 0, "breaks": 0, "cached": 0, "prompt": 0, "reusable": 0}
    for c in range(args.conversations):
        for row in conversation(client, args, model, ids_of, start=c):
            print(json.dumps(row))
            if "shared" not in row:
                continue
            totals["turns"] += 1
            totals["breaks"] += row["shared"] < row["history"]
            totals["cached"] += row["cached_tokens"]
            totals["prompt"] += row["prompt_tokens"]
            totals["reusable"] += row["history"] // 16 * 16
    print(json.dumps({"later_turns": totals["turns"], "answer_retokenization_breaks": totals["breaks"],
                      "cached_tokens": totals["cached"], "prompt_tokens": totals["prompt"],
                      "full_blocks_of_history": totals["reusable"]}))


if __name__ == "__main__":
    main()
