#!/usr/bin/env python3
"""`surge convert MODEL.gguf OUT_DIR` on SmolLM2-135M-Instruct (Q4_1), checked with the
project environment's independent readers (.venv: gguf, safetensors, tokenizers):

  - model.safetensors (f32) holds every HF tensor of the config with the values the `gguf`
    package dequantizes from the file, q_proj/k_proj rows un-permuted with numpy (the
    inverse of convert_hf_to_gguf.py's LlamaModel.permute); the bf16 file holds exactly
    those values rounded to nearest even;
  - config.json / generation_config.json say what the GGUF metadata says;
  - HF `tokenizers` loads the written tokenizer.json and gives the ids `surge tokenize`
    gives with the GGUF's own tokenizer, on a few hundred strings.

Exit 77 (skipped) when the model or the packages are not installed (scripts/setup.sh).
Usage: .venv/bin/python tests/reference/test_gguf_to_hf.py --surge build/surge
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

GGUF = "models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
SEPARATOR = "<|endoftext|>"

try:
    import numpy as np
    import gguf
    from gguf.quants import dequantize
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer
except ImportError as error:
    print(f"skipped: {error} (run scripts/setup.sh and use .venv/bin/python)")
    sys.exit(77)


def unpermute(w, n_head):
    """GGUF q/k rows -> HF rows: the inverse of reshape(n_head, 2, d/2, ...).swapaxes(1, 2)."""
    rows = w.shape[0]
    return w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def hf_name(gguf_name):
    if gguf_name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if gguf_name == "output_norm.weight":
        return "model.norm.weight"
    if gguf_name == "output.weight":
        return "lm_head.weight"
    _, layer, rest = gguf_name.split(".", 2)
    names = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
             "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
             "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
             "ffn_down": "mlp.down_proj"}
    base, kind = rest.rsplit(".", 1)
    return f"model.layers.{layer}.{names[base]}.{kind}"


def check_weights(reader, f32_dir, bf16_dir, config):
    tensors = load_file(os.path.join(f32_dir, "model.safetensors"))
    expected = {hf_name(t.name) for t in reader.tensors}
    assert set(tensors) == expected, sorted(set(tensors) ^ expected)
    for t in reader.tensors:
        want = dequantize(t.data, t.tensor_type).reshape([int(d) for d in reversed(t.shape)])
        if t.name.endswith("attn_q.weight"):
            want = unpermute(want, config["num_attention_heads"])
        elif t.name.endswith("attn_k.weight"):
            want = unpermute(want, config["num_key_value_heads"])
        got = tensors[hf_name(t.name)]
        assert got.shape == want.shape, (t.name, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=t.name)
    with open(os.path.join(bf16_dir, "model.safetensors"), "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
        data = f.read()
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        assert entry["dtype"] == "BF16", name
        begin, end = entry["data_offsets"]
        got = np.frombuffer(data[begin:end], dtype=np.uint16).reshape(entry["shape"])
        bits = tensors[name].view(np.uint32).astype(np.uint64)
        want = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        assert np.array_equal(got, want), name
    print(f"weights: {len(tensors)} tensors equal to gguf's dequantization (f32) and its bf16 rounding")


def check_config(reader, out_dir):
    config = json.load(open(os.path.join(out_dir, "config.json")))
    field = lambda key: reader.fields[key].contents()
    assert config["architectures"] == ["LlamaForCausalLM"] and config["model_type"] == "llama", config
    assert config["num_hidden_layers"] == field("llama.block_count")
    assert config["hidden_size"] == field("llama.embedding_length")
    assert config["num_key_value_heads"] == field("llama.attention.head_count_kv")
    assert config["rope_theta"] == 100000.0 and config["rms_norm_eps"] == 1e-05, config
    assert config["tie_word_embeddings"] is True and config["vocab_size"] == 49152
    assert config["torch_dtype"] == "bfloat16"
    generation = json.load(open(os.path.join(out_dir, "generation_config.json")))
    assert generation["eos_token_id"] == field("tokenizer.ggml.eos_token_id"), generation
    tokenizer_config = json.load(open(os.path.join(out_dir, "tokenizer_config.json")))
    assert tokenizer_config["chat_template"] == field("tokenizer.chat_template")
    print("config: ok")
    return config


def corpus():
    texts = ["Hello, world!", " leading space", "trailing  ", "\n\n\tindent", "x = [1, 22, 333, 4444]",
             "I'm sure you'll like it; they've said so.", "Größe naïve café", "Привет мир", "你好，世界",
             "こんにちは", "emoji 😀🎉👍🏽", "<|im_start|>user\nHi there<|im_end|>\n", "def f(a, b):\n    return a + b\n",
             "https://example.com/a?b=c&d=e", "3.14159 2,718 1e-5 0x1F", "   ", "ALL CAPS", "tab\tseparated\tvalues"]
    words = ["the", "Model", "  ", "12", "é", "🙂", "\n", "don't", "x_1", "—", "中文", "...", "<|im_end|>", "\t"]
    for i in range(260):
        texts.append("".join(words[(i * 13 + j * 7) % len(words)] + (" " if (i + j) % 3 else "")
                             for j in range(1 + i % 11)))
    return texts


def check_tokenizer(surge, out_dir):
    """Both tokenizers split text at special tokens first and encode the pieces apart, so the
    corpus joined by <|endoftext|> is checked in one `surge tokenize` run; on a difference,
    each string alone says which."""
    hf = Tokenizer.from_file(os.path.join(out_dir, "tokenizer.json"))
    texts = corpus()

    def surge_ids(text):
        out = subprocess.run([surge, "tokenize", "--model", GGUF, "--text", text],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)["ids"]

    joined = SEPARATOR.join(texts)
    if surge_ids(joined) != hf.encode(joined).ids:
        bad = [(t, surge_ids(t), hf.encode(t).ids) for t in texts]
        bad = [b for b in bad if b[1] != b[2]]
        for t, w, g in bad[:5]:
            print(f"differs: {t!r}: surge {w} tokenizers {g}")
        raise AssertionError(f"{len(bad)} of {len(texts)} strings differ")
    print(f"tokenizer: {len(texts)} strings, ids identical to surge's")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--surge", required=True)
    args = parser.parse_args()
    if not os.path.exists(GGUF):
        print(f"skipped: {GGUF} is not installed (scripts/setup.sh)")
        return 77
    tmp = tempfile.mkdtemp(prefix="gguf_to_hf_")
    try:
        f32_dir, bf16_dir = os.path.join(tmp, "f32"), os.path.join(tmp, "bf16")
        subprocess.run([args.surge, "convert", GGUF, f32_dir, "--dtype", "f32"], check=True)
        subprocess.run([args.surge, "convert", GGUF, bf16_dir], check=True)
        reader = gguf.GGUFReader(GGUF)
        config = check_config(reader, bf16_dir)
        check_weights(reader, f32_dir, bf16_dir, config)
        check_tokenizer(args.surge, bf16_dir)
    finally:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
