#!/usr/bin/python3
"""Writes a random-weight Hugging Face Llama / Qwen2 / Qwen3 model directory.

The directory holds config.json and model.safetensors (F32, F16 or BF16), or shards named
by model.safetensors.index.json, exactly as transformers would save them, so that surge
(and the PyTorch reference in tests/reference/) can load it. Weights are drawn so that a
forward pass looks like a trained model's in scale: linear weights with std 1/sqrt(fan_in),
RMSNorm weights around 1 with some spread, embeddings with std 1 -- attention is far from
uniform. The same --seed always gives the same bytes.

The safetensors files are written with struct/json/numpy only (no safetensors package).

  make_tiny_model.py --out /tmp/tiny                          # the small default
  make_tiny_model.py --out /tmp/m --preset llama-110m         # 110M Llama for benchmarks
  make_tiny_model.py --out /tmp/q --model-type qwen2 --dtype bf16 --shards 2
  make_tiny_model.py --out /tmp/q3 --preset qwen3-tiny         # q/k norms, head_dim != hidden/heads
  make_tiny_model.py --out /tmp/r --config '{"rope_scaling": {"rope_type": "llama3", ...}}'
  make_tiny_model.py --out /tmp/d --preset deepseek-v3-tiny --dtype bf16 --fp8   # MLA + MoE, FP8
"""
import argparse
import json
import os
import shutil
import struct

import numpy as np

import tiny_deepseek

PRESETS = {
    "tiny": dict(model_type="llama", hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                 max_position_embeddings=512),
    "llama-110m": dict(model_type="llama", hidden_size=768, intermediate_size=2048,
                       num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=12,
                       vocab_size=32000, max_position_embeddings=2048, tie_word_embeddings=False),
    # Qwen3's shape in small: per-head q/k RMSNorm, head_dim (32) wider than
    # hidden_size / num_attention_heads (16), GQA, tied embeddings (as Qwen3-0.6B).
    "qwen3-tiny": dict(model_type="qwen3", hidden_size=64, intermediate_size=160,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                       head_dim=32, vocab_size=256, max_position_embeddings=512,
                       tie_word_embeddings=True),
    **tiny_deepseek.PRESETS,
}

DTYPES = {"f32": "F32", "f16": "F16", "bf16": "BF16"}
TORCH_DTYPE_NAMES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def build_config(overrides, dtype="F32"):
    """A complete config.json dict: the preset/overrides plus transformers' usual keys."""
    if overrides.get("model_type", "").startswith("deepseek"):
        return tiny_deepseek.build_config(dict(overrides), TORCH_DTYPE_NAMES[dtype])
    c = dict(PRESETS["tiny"])
    c.update(overrides)
    qwen = c["model_type"] in ("qwen2", "qwen3")
    classes = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}
    defaults = dict(
        architectures=[classes[c["model_type"]]],
        hidden_act="silu", rms_norm_eps=1e-6 if qwen else 1e-5, rope_theta=10000.0,
        rope_scaling=None, tie_word_embeddings=False, initializer_range=0.02, use_cache=True,
        bos_token_id=1, eos_token_id=2, torch_dtype=TORCH_DTYPE_NAMES[dtype],
        attention_dropout=0.0)
    if qwen:
        defaults.update(use_sliding_window=False, sliding_window=None,
                        max_window_layers=c["num_hidden_layers"])
        if c["model_type"] == "qwen3":
            defaults.update(attention_bias=False)
    else:
        defaults.update(attention_bias=False, mlp_bias=False, pretraining_tp=1)
    for key, value in defaults.items():
        c.setdefault(key, value)
    c.setdefault("head_dim", c["hidden_size"] // c["num_attention_heads"])
    return c


def tensor_specs(c):
    """(name, shape, kind) for every tensor, in the order transformers lists them."""
    if c["model_type"].startswith("deepseek"):
        return tiny_deepseek.tensor_specs(c)
    hidden, inter, head_dim = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q_size = c["num_attention_heads"] * head_dim
    kv_size = c["num_key_value_heads"] * head_dim
    qkv_bias = c["model_type"] == "qwen2" or c.get("attention_bias", False)
    o_bias = c["model_type"] in ("llama", "qwen3") and c.get("attention_bias", False)
    qk_norm = c["model_type"] == "qwen3"
    mlp_bias = c["model_type"] == "llama" and c.get("mlp_bias", False)
    specs = [("model.embed_tokens.weight", (c["vocab_size"], hidden), "embed")]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        linears = [("self_attn.q_proj", q_size, hidden, qkv_bias),
                   ("self_attn.k_proj", kv_size, hidden, qkv_bias),
                   ("self_attn.v_proj", kv_size, hidden, qkv_bias),
                   ("self_attn.o_proj", hidden, q_size, o_bias),
                   ("mlp.gate_proj", inter, hidden, mlp_bias),
                   ("mlp.up_proj", inter, hidden, mlp_bias),
                   ("mlp.down_proj", hidden, inter, mlp_bias)]
        specs.append((p + "input_layernorm.weight", (hidden,), "norm"))
        for name, out_features, in_features, bias in linears:
            specs.append((p + name + ".weight", (out_features, in_features), "linear"))
            if bias:
                specs.append((p + name + ".bias", (out_features,), "bias"))
            if qk_norm and name == "self_attn.k_proj":
                specs.append((p + "self_attn.q_norm.weight", (head_dim,), "norm"))
                specs.append((p + "self_attn.k_norm.weight", (head_dim,), "norm"))
        specs.append((p + "post_attention_layernorm.weight", (hidden,), "norm"))
    specs.append(("model.norm.weight", (hidden,), "norm"))
    if not c["tie_word_embeddings"]:
        specs.append(("lm_head.weight", (c["vocab_size"], hidden), "linear"))
    return specs


def random_tensor(rng, shape, kind):
    x = rng.standard_normal(shape, dtype=np.float32)
    if kind in ("linear", "router", "head"):
        return x / np.float32(np.sqrt(shape[1]))
    if kind == "norm":
        return np.float32(1.0) + np.float32(0.2) * x
    if kind == "bias":
        return np.float32(0.2) * x
    return x  # embeddings: std 1


def file_dtype(name, array, dtype):
    """The dtype a tensor is stored in: FP8 codes and their block scales keep theirs."""
    if array.dtype == np.uint8:
        return "F8_E4M3"
    return "F32" if name.endswith("_scale_inv") else dtype


def encode(array, dtype):
    """Little-endian bytes of a float32 array in the file dtype (BF16 rounds to nearest even)."""
    if dtype == "F8_E4M3":
        return array.astype(np.uint8).tobytes()
    if dtype == "F32":
        return array.astype("<f4").tobytes()
    if dtype == "F16":
        return array.astype("<f2").tobytes()
    bits = array.astype("<f4").view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2").tobytes()


def write_safetensors(path, tensors, dtype):
    """tensors: list of (name, float32 array). Header padded with spaces to 8 bytes."""
    header, offset, sizes = {"__metadata__": {"format": "pt"}}, 0, []
    for name, array in tensors:
        stored = file_dtype(name, array, dtype)
        size = array.size * {"F32": 4, "F8_E4M3": 1}.get(stored, 2)
        header[name] = {"dtype": stored, "shape": list(array.shape),
                        "data_offsets": [offset, offset + size]}
        offset += size
        sizes.append(size)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name, array in tensors:
            f.write(encode(array, file_dtype(name, array, dtype)))
    return offset


def split_shards(tensors, num_shards):
    """Consecutive groups of about equal element count."""
    total = sum(a.size for _, a in tensors)
    shards, current, filled = [[] for _ in range(num_shards)], 0, 0
    for name, array in tensors:
        if filled >= total * (current + 1) / num_shards and current < num_shards - 1:
            current += 1
        shards[current].append((name, array))
        filled += array.size
    return [s for s in shards if s]


def make_model(out_dir, overrides=None, dtype="F32", num_shards=1, seed=0, tokenizer_from=None,
               fp8=False):
    """Writes the model directory and returns its config dict."""
    config = build_config(overrides or {}, dtype)
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    specs = tensor_specs(config)
    tensors = [(name, random_tensor(rng, shape, kind)) for name, shape, kind in specs]
    if fp8:
        tensors = to_fp8(tensors, tiny_deepseek.fp8_targets(specs))
        config["quantization_config"] = {"activation_scheme": "dynamic", "fmt": "e4m3",
                                         "quant_method": "fp8", "weight_block_size": [128, 128]}
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    if num_shards <= 1:
        write_safetensors(os.path.join(out_dir, "model.safetensors"), tensors, dtype)
    else:
        write_shards(out_dir, tensors, dtype, num_shards)
    if tokenizer_from:
        for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            if os.path.exists(os.path.join(tokenizer_from, name)):
                shutil.copy(os.path.join(tokenizer_from, name), out_dir)
    return config


def to_fp8(tensors, targets):
    """Replaces each target weight by its e4m3fn codes and NAME.weight_scale_inv."""
    out = []
    for name, array in tensors:
        if name not in targets:
            out.append((name, array))
            continue
        codes, scale_inv = tiny_deepseek.quantize_fp8(array)
        out += [(name, codes), (name + "_scale_inv", scale_inv)]
    return out


def write_shards(out_dir, tensors, dtype, num_shards):
    shards = split_shards(tensors, num_shards)
    weight_map, total = {}, 0
    for i, shard in enumerate(shards):
        file = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        total += write_safetensors(os.path.join(out_dir, file), shard, dtype)
        weight_map.update({name: file for name, _ in shard})
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="output directory (created)")
    p.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    p.add_argument("--config", help="JSON object (or a path to a JSON file) of config.json overrides")
    p.add_argument("--model-type", choices=["llama", "qwen2", "qwen3"])
    for flag in ("hidden-size", "intermediate-size", "num-hidden-layers", "num-attention-heads",
                 "num-key-value-heads", "head-dim", "vocab-size", "max-position-embeddings"):
        p.add_argument("--" + flag, type=int)
    p.add_argument("--rope-theta", type=float)
    p.add_argument("--rope-scaling", help='JSON, e.g. {"rope_type": "linear", "factor": 2.0}')
    p.add_argument("--tie", dest="tie_word_embeddings", action="store_true", default=None)
    p.add_argument("--no-tie", dest="tie_word_embeddings", action="store_false")
    p.add_argument("--attention-bias", action="store_true", default=None)
    p.add_argument("--mlp-bias", action="store_true", default=None)
    p.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    p.add_argument("--shards", type=int, default=1, help="number of safetensors files")
    p.add_argument("--fp8", action="store_true",
                   help="DeepSeek models: store decoder linear weights as float8_e4m3fn with "
                        "128x128 block scales, as the official V3/R1 checkpoints do")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tokenizer-from", help="copy tokenizer.json (+ config files) from this directory")
    return p.parse_args()


def main():
    args = parse_args()
    overrides = dict(PRESETS[args.preset])
    if args.config:
        text = open(args.config).read() if os.path.exists(args.config) else args.config
        overrides.update(json.loads(text))
    for key in ("model_type", "hidden_size", "intermediate_size", "num_hidden_layers",
                "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size",
                "max_position_embeddings", "rope_theta", "tie_word_embeddings", "attention_bias",
                "mlp_bias"):
        if getattr(args, key, None) is not None:
            overrides[key] = getattr(args, key)
    if args.rope_scaling:
        overrides["rope_scaling"] = json.loads(args.rope_scaling)
    config = make_model(args.out, overrides, DTYPES[args.dtype], args.shards, args.seed,
                        args.tokenizer_from, args.fp8)
    num_params = sum(np.prod(shape) for _, shape, _ in tensor_specs(config))
    print(f"wrote {args.out}: {config['model_type']}, {num_params / 1e6:.2f}M parameters, "
          f"{DTYPES[args.dtype]}, {max(1, args.shards)} file(s)")


if __name__ == "__main__":
    main()
