#!/usr/bin/env python3
"""By hand, not in `make test` (needs torch + transformers, e.g. /tmp/venvtest): load the
directory `surge convert MODEL.gguf DIR --dtype f32` wrote with transformers'
AutoModelForCausalLM / AutoTokenizer and compare with surge on the same directory:
prompt ids, the logits of every prompt position (surge: dump_logits_tool --decode-out, the
prompt prefilled then decoded through the paged KV cache) and a greedy continuation
(surge generate --json).

Usage: /tmp/venvtest/bin/python tests/reference/check_hf_export_transformers.py DIR \
           --surge build/surge --tool build/dump_logits_tool
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

PROMPT = "The lighthouse keeper climbed the stairs at sunset and"
NEW_TOKENS = 32


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--surge", required=True)
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.dir)
    model = AutoModelForCausalLM.from_pretrained(args.dir, dtype=torch.float32)
    model.eval()
    ids = tokenizer(PROMPT)["input_ids"]
    surge = json.loads(subprocess.run(
        [args.surge, "generate", "--model", args.dir, "--prompt", PROMPT, "--max-tokens", str(NEW_TOKENS),
         "--ignore-eos", "--json", "--threads", "2"], check=True, capture_output=True, text=True).stdout)
    print("prompt ids equal:", surge["prompt_token_ids"] == ids, ids)
    with torch.no_grad():
        hf_logits = model(torch.tensor([ids])).logits[0].numpy()
        greedy = model.generate(torch.tensor([ids]), max_new_tokens=NEW_TOKENS, do_sample=False)[0, len(ids):].tolist()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "logits.bin")
        subprocess.run([args.tool, "--model", args.dir, "--ids", ",".join(map(str, ids)), "--decode-out", out],
                       check=True, capture_output=True)
        surge_logits = np.fromfile(out, dtype=np.float32).reshape(len(ids), -1)
    diff = np.abs(surge_logits - hf_logits)
    print(f"logits: max |diff| {diff.max():.3g}, max |logit| {np.abs(hf_logits).max():.3g}, "
          f"relative {diff.max() / np.abs(hf_logits).max():.3g}; "
          f"argmax equal at {np.mean(surge_logits.argmax(1) == hf_logits.argmax(1)) * 100:.0f}% of positions")
    same = 0
    for a, b in zip(greedy, surge["output_token_ids"]):
        if a != b:
            break
        same += 1
    print(f"greedy: {same} of {NEW_TOKENS} tokens identical")
    print("transformers:", repr(tokenizer.decode(greedy)))
    print("surge:       ", repr(surge["text"]))


if __name__ == "__main__":
    main()
