#!/usr/bin/env python3
"""Writes a llama GGUF's weights, dequantized by the `gguf` package, as a float32 Hugging Face
directory (model.safetensors, config.json, tokenizer.json, tokenizer_config.json,
generation_config.json), so that surge can load the same weights as f32 or bf16 (`--dtype
bf16`) -- the speculative-decoding measurements' bf16 target in docs/BENCH.md. A stand-in
written with the references here (gguf_llama_numpy.py, tokenizer_hf_reference.py), not
`surge convert`.

  gguf_llama_to_hf.py MODEL.gguf OUT_DIR

Q and K rows are un-permuted from llama.cpp's adjacent-pair RoPE layout back to Hugging
Face's rotate-half layout.
"""
import json
import os
import sys

import numpy as np
from safetensors.numpy import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_llama_numpy import GgufLlama  # noqa: E402
from tokenizer_hf_reference import tokenizer_json_from_gguf  # noqa: E402


def unpermute(w, num_heads):
    """Inverse of llama.cpp's convert permute: [heads * d, in] adjacent pairs -> halves."""
    rows, cols = w.shape
    return w.reshape(num_heads, rows // num_heads // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def hf_tensors(m):
    out = {"model.embed_tokens.weight": m.w["token_embd.weight"], "model.norm.weight": m.w["output_norm.weight"]}
    if "output.weight" in m.w:
        out["lm_head.weight"] = m.w["output.weight"]
    names = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm", "attn_v": "self_attn.v_proj",
             "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
             "ffn_down": "mlp.down_proj"}
    for i in range(m.num_layers):
        p, q = f"blk.{i}.", f"model.layers.{i}."
        for src, dst in names.items():
            out[q + dst + ".weight"] = m.w[p + src + ".weight"]
        out[q + "self_attn.q_proj.weight"] = unpermute(m.w[p + "attn_q.weight"], m.num_heads)
        out[q + "self_attn.k_proj.weight"] = unpermute(m.w[p + "attn_k.weight"], m.num_kv_heads)
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in out.items()}


def main(gguf_path, out_dir):
    write_hf_dir(GgufLlama(gguf_path), gguf_path, out_dir)


def write_hf_dir(m, gguf_path, out_dir):
    tok = tokenizer_json_from_gguf(gguf_path)
    meta = m.meta
    bos, eos = int(meta["tokenizer.ggml.bos_token_id"]), int(meta["tokenizer.ggml.eos_token_id"])
    vocab = {i: t for t, i in tok["model"]["vocab"].items()}
    os.makedirs(out_dir, exist_ok=True)
    save_file(hf_tensors(m), os.path.join(out_dir, "model.safetensors"))
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": m.hidden,
              "intermediate_size": int(meta["llama.feed_forward_length"]), "num_hidden_layers": m.num_layers,
              "num_attention_heads": m.num_heads, "num_key_value_heads": m.num_kv_heads, "rms_norm_eps": m.eps,
              "rope_theta": m.rope_base, "max_position_embeddings": int(meta["llama.context_length"]),
              "vocab_size": len(vocab), "tie_word_embeddings": "output.weight" not in m.w, "hidden_act": "silu",
              "bos_token_id": bos, "eos_token_id": eos, "torch_dtype": "float32"}
    files = {"config.json": config, "tokenizer.json": tok,
             "generation_config.json": {"bos_token_id": bos, "eos_token_id": eos},
             "tokenizer_config.json": {"bos_token": vocab[bos], "eos_token": vocab[eos], "add_bos_token": False,
                                       "chat_template": meta.get("tokenizer.chat_template"),
                                       "tokenizer_class": "GPT2Tokenizer"}}
    for name, value in files.items():
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            json.dump(value, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
