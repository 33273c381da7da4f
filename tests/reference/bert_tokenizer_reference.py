#!/usr/bin/env python3
"""The HF `tokenizers` (Rust) reference for BERT-family tokenizer.json files, written in
the JSON format tokenizer/tokenizer_diff_check.cc compares: ids with and without special
tokens, decodes with and without skipping them, over tests/reference/bert_corpus.py, plus
seeded random id lists. tokenizer.json's truncation and padding are turned off (surge's
tokenizer applies neither; the server truncates).

  .venv/bin/python tests/reference/bert_tokenizer_reference.py OUT.json NAME=DIR [NAME=DIR ...]
"""
import json
import os
import random
import sys

import tokenizers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bert_corpus  # noqa: E402


def reference(name, directory, corpus):
    tok = tokenizers.Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    out = {"name": name, "dir": directory, "encode": [], "encode_plain": [], "decode_skip": [], "decode_keep": []}
    for text in corpus:
        ids = tok.encode(text).ids
        out["encode"].append(ids)
        out["encode_plain"].append(tok.encode(text, add_special_tokens=False).ids)
        out["decode_skip"].append(tok.decode(ids, skip_special_tokens=True))
        out["decode_keep"].append(tok.decode(ids, skip_special_tokens=False))
    rng = random.Random(7)
    vocab_size = tok.get_vocab_size()
    out["random_ids"] = [[rng.randrange(vocab_size) for _ in range(rng.randint(1, 20))] for _ in range(200)]
    out["random_decode_skip"] = [tok.decode(ids, skip_special_tokens=True) for ids in out["random_ids"]]
    out["random_decode_keep"] = [tok.decode(ids, skip_special_tokens=False) for ids in out["random_ids"]]
    return out


def main():
    out_path, pairs = sys.argv[1], sys.argv[2:]
    corpus = bert_corpus.corpus()
    result = {"generator": f"tokenizers {tokenizers.__version__} (Rust)", "corpus": corpus, "tokenizers": []}
    for pair in pairs:
        name, directory = pair.split("=", 1)
        result["tokenizers"].append(reference(name, directory, corpus))
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
