#!/usr/bin/env python3
"""Reference outputs of HF `tokenizers` (the Rust library, through its Python binding) for
surge's tokenizer differential check (tokenizer/tokenizer_diff_check.cc reads the JSON).

  tokenizer_hf_reference.py [--checker tokenizer_diff_check] OUT.json NAME=PATH [NAME=PATH ...]

With --checker, runs it on OUT.json afterwards and exits with its status (the ctest entry
tokenizer_hf_differential).

PATH is a directory holding tokenizer.json, or a .gguf file. For a .gguf the reference
tokenizer is built here from the file's metadata, read with the `gguf` package
(tokenizer.ggml.tokens / token_type / merges / pre / add_bos_token), into the tokenizer.json
that the model's publisher ships for that pre-tokenizer (PRE_TOKENIZERS below, written from
the published Hugging Face files) -- independent of surge's own GGUF -> tokenizer code.
The corpus is tests/reference/tokenizer_corpus.py's (seeded).

Decoding is transformers' (the Rust decode, then clean_up_tokenization_spaces when the
directory's tokenizer_config.json asks for it). Not compared (null in the JSON, counted by
the checker): decodes of id lists holding a run of byte-fallback tokens (<0xNN>) that is
not valid UTF-8 or starts with a byte-order mark. There the two references disagree by
design -- Rust writes one U+FFFD per byte and keeps the mark, tokenizers.js (whose choice
surge follows, tokenizer/decoder.h) replaces maximal invalid subsequences and drops the
mark -- and tokenizer_differential already holds surge to tokenizers.js on them.
"""
import json
import os
import random
import subprocess
import sys
import time

import gguf
from tokenizers import Tokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_corpus  # noqa: E402

_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
# tokenizer.ggml.pre -> the pre_tokenizer of the publisher's tokenizer.json.
PRE_TOKENIZERS = {
    # HuggingFaceTB/SmolLM2-*: digits one by one, then GPT-2's byte-level split.
    "smollm": {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}, _BYTE_LEVEL]},
    "gpt-2": _BYTE_LEVEL,
}
CONTROL, USER_DEFINED = 3, 4  # llama.cpp's token types


def _array(reader, key):
    field = reader.fields[key]
    values = [field.parts[i] for i in field.data]
    if field.types[-1] == gguf.GGUFValueType.STRING:
        return [bytes(v).decode("utf-8") for v in values]
    return [v.tolist()[0] for v in values]


def _scalar(reader, key, default=None):
    field = reader.fields.get(key)
    if field is None:
        return default
    part = field.parts[field.data[0]]
    return bytes(part).decode("utf-8") if field.types[0] == gguf.GGUFValueType.STRING else part.tolist()[0]


def tokenizer_json_from_gguf(path):
    reader = gguf.GGUFReader(path)
    if _scalar(reader, "tokenizer.ggml.model") != "gpt2":
        raise ValueError(f"{path}: only byte-level BPE (tokenizer.ggml.model gpt2) is built here")
    pre = _scalar(reader, "tokenizer.ggml.pre")
    if pre not in PRE_TOKENIZERS:
        raise ValueError(f"{path}: no reference pre-tokenizer for tokenizer.ggml.pre = {pre}")
    tokens = _array(reader, "tokenizer.ggml.tokens")
    types = _array(reader, "tokenizer.ggml.token_type")
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": types[i] == CONTROL} for i, t in enumerate(tokens) if types[i] in (CONTROL, USER_DEFINED)]
    post = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}
    if _scalar(reader, "tokenizer.ggml.add_bos_token", False):
        bos = tokens[_scalar(reader, "tokenizer.ggml.bos_token_id")]
        bos_id = _scalar(reader, "tokenizer.ggml.bos_token_id")
        post = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                                                         {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}}}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": PRE_TOKENIZERS[pre], "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(tokens)},
                  "merges": _array(reader, "tokenizer.ggml.merges")},
    }


def clean_up_tokenization(text):
    """transformers' PreTrainedTokenizerBase.clean_up_tokenization."""
    for before, after in [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                          (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]:
        text = text.replace(before, after)
    return text


def wants_clean_up(path):
    config = os.path.join(path, "tokenizer_config.json")
    if path.endswith(".gguf") or not os.path.exists(config):
        return False
    with open(config, encoding="utf-8") as f:
        return bool(json.load(f).get("clean_up_tokenization_spaces", False))


def byte_fallback_values(tok):
    """id -> byte for the <0xNN> tokens."""
    values = {}
    for token, i in tok.get_vocab(True).items():
        if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
            try:
                values[i] = int(token[3:5], 16)
            except ValueError:
                pass
    return values


def references_disagree(ids, byte_values):
    """A byte-fallback run that is invalid UTF-8 or starts with a byte-order mark."""
    runs, run = [], bytearray()
    for i in ids:
        if i in byte_values:
            run.append(byte_values[i])
        elif run:
            runs.append(bytes(run))
            run = bytearray()
    if run:
        runs.append(bytes(run))
    for r in runs:
        if r.startswith(b"\xef\xbb\xbf"):
            return True
        try:
            r.decode("utf-8")
        except UnicodeDecodeError:
            return True
    return False


def load(path):
    if path.endswith(".gguf"):
        return Tokenizer.from_str(json.dumps(tokenizer_json_from_gguf(path)))
    return Tokenizer.from_file(os.path.join(path, "tokenizer.json"))


def random_id_lists(rng, vocab_size, special_ids, count):
    lists = []
    for _ in range(count):
        ids = []
        for _ in range(1 + rng.randrange(12)):
            r = rng.random()
            if r < 0.1 and special_ids:
                ids.append(rng.choice(special_ids))
            elif r < 0.4:
                ids.append(rng.randrange(min(vocab_size, 300)))
            else:
                ids.append(rng.randrange(vocab_size))
        lists.append(ids)
    return lists


def reference(name, path, corpus):
    tok = load(path)
    clean = clean_up_tokenization if wants_clean_up(path) else (lambda text: text)
    byte_values = byte_fallback_values(tok)

    def decode(ids, skip):
        if references_disagree(ids, byte_values):
            return None
        return clean(tok.decode(ids, skip_special_tokens=skip)) if ids else ""

    out = {"name": name, "dir": path, "encode": [], "encode_plain": [], "decode_skip": [], "decode_keep": []}
    for text in corpus:
        ids = tok.encode(text).ids
        out["encode"].append(ids)
        out["encode_plain"].append(tok.encode(text, add_special_tokens=False).ids)
        out["decode_skip"].append(decode(ids, True))
        out["decode_keep"].append(decode(ids, False))
    special_ids = sorted(t.id if hasattr(t, "id") else i for i, t in tok.get_added_tokens_decoder().items()
                         if t.special) if hasattr(tok, "get_added_tokens_decoder") else []
    out["random_ids"] = random_id_lists(random.Random(7 + len(name)), tok.get_vocab_size(True), special_ids, 400)
    out["random_decode_skip"] = [decode(ids, True) for ids in out["random_ids"]]
    out["random_decode_keep"] = [decode(ids, False) for ids in out["random_ids"]]
    return out


def main(argv):
    checker = None
    if len(argv) > 2 and argv[1] == "--checker":
        checker, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    import tokenizers
    corpus = tokenizer_corpus.corpus()
    result = {"generator": f"HF tokenizers {tokenizers.__version__} (Python binding)", "corpus": corpus,
              "tokenizers": []}
    for spec in argv[2:]:
        name, path = spec.split("=", 1)
        start = time.time()
        result["tokenizers"].append(reference(name, path, corpus))
        print(f"{name}: {len(corpus)} strings in {time.time() - start:.1f} s")
    with open(argv[1], "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False)
    return subprocess.run([checker, argv[1]]).returncode if checker else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
