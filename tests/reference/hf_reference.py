#!/usr/bin/python3
"""An independent PyTorch forward pass of Hugging Face LlamaForCausalLM / Qwen2ForCausalLM /
Qwen3ForCausalLM.

Written from the transformers modeling semantics, not from surge's code, and reading the
model directory itself (config.json; model.safetensors or the shards of
model.safetensors.index.json; F32/F16/BF16 widened to f32):
  - RMSNorm in f32: weight * (x * rsqrt(mean(x^2) + eps));
  - RoPE with rotate_half (dims i and i + head_dim/2 pair up), inverse frequencies
    computed as transformers does in f32, with "linear" (inv_freq / factor) and "llama3"
    (_compute_llama3_parameters) scaling;
  - GQA through repeat_kv (query head h reads kv head h // (num_heads / num_kv_heads)),
    scores scaled by head_dim^-0.5, causal mask, softmax in f32;
  - q/k/v biases (Qwen2 always, Llama with attention_bias, which also biases o_proj),
    mlp_bias, tied or untied lm_head (tied: lm_head is embed_tokens);
  - Qwen3 (modeling_qwen3.Qwen3Attention): q_norm / k_norm, RMSNorms of head_dim applied to
    every head of q and k after the projection (view [T, heads, head_dim]) and before RoPE;
    attention_bias (default false) biases q, k, v and o; no MLP bias; head_dim defaults
    to 128 (Qwen3Config);
  - embeddings: the final-normed hidden states (model.norm output), pooled "last" (the
    last token's row, as Qwen3-Embedding) or "mean" (over all tokens), then L2-normalized
    (torch.nn.functional.normalize).

  hf_reference.py MODEL_DIR --ids 1,2,3  ->  JSON {"logits": [[...], ...]} for every position
  hf_reference.py MODEL_DIR --ids 1,2,3 --embed mean  ->  JSON {"embedding": [...]}
"""
import argparse
import json
import math
import os
import struct

import numpy as np
import torch

NUMPY_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "F8_E4M3": "u1"}


def fp8_e4m3fn_to_f32(raw):
    """float8_e4m3fn bytes -> float32: bias 7, no infinities, S.1111.111 is NaN."""
    raw = raw.astype(np.uint32)
    sign = np.where(raw & 0x80, -1.0, 1.0).astype(np.float32)
    exponent = ((raw >> 3) & 0xF).astype(np.int32)
    mantissa = (raw & 0x7).astype(np.float32)
    normal = (1.0 + mantissa / 8.0) * np.exp2(exponent - 7).astype(np.float32)
    subnormal = (mantissa / 8.0) * np.float32(2.0 ** -6)
    values = sign * np.where(exponent == 0, subnormal, normal)
    return np.where((raw & 0x7F) == 0x7F, np.float32(np.nan), values).astype(np.float32)


def read_safetensors(path):
    """name -> float32 torch tensor for one .safetensors file (FP8 widened, not scaled)."""
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = np.frombuffer(data[base + begin:base + end], dtype=NUMPY_DTYPES[info["dtype"]])
        if info["dtype"] == "BF16":
            values = (raw.astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] == "F8_E4M3":
            values = fp8_e4m3fn_to_f32(raw)
        else:
            values = raw.astype(np.float32)
        tensors[name] = torch.from_numpy(values.reshape(info["shape"]).copy())
    return tensors


def load_weights(model_dir):
    index_path = os.path.join(model_dir, "model.safetensors.index.json")
    if not os.path.exists(index_path):
        return read_safetensors(os.path.join(model_dir, "model.safetensors"))
    with open(index_path) as f:
        files = sorted(set(json.load(f)["weight_map"].values()))
    weights = {}
    for file in files:
        weights.update(read_safetensors(os.path.join(model_dir, file)))
    return weights


class Config:
    """The fields of config.json the forward needs, with transformers' defaults."""

    def __init__(self, d):
        self.model_type = d["model_type"]
        self.hidden_size = d["hidden_size"]
        self.num_layers = d["num_hidden_layers"]
        self.num_heads = d["num_attention_heads"]
        self.num_kv_heads = d.get("num_key_value_heads") or self.num_heads
        qwen3 = self.model_type == "qwen3"
        self.head_dim = d.get("head_dim") or (128 if qwen3 else self.hidden_size // self.num_heads)
        self.vocab_size = d["vocab_size"]
        self.eps = d.get("rms_norm_eps", 1e-6)
        self.rope_theta = d.get("rope_theta", 10000.0)
        self.rope_scaling = d.get("rope_scaling") or None
        self.tie = d.get("tie_word_embeddings", False)
        qwen = self.model_type == "qwen2"
        self.qkv_bias = qwen or d.get("attention_bias", False)
        self.o_bias = (not qwen) and d.get("attention_bias", False)
        self.mlp_bias = self.model_type == "llama" and d.get("mlp_bias", False)
        self.qk_norm = qwen3


def rope_inv_freq(cfg):
    """transformers' _compute_default / _linear_scaling / _llama3 rope parameters, in f32."""
    dim = cfg.head_dim
    inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    scaling = cfg.rope_scaling
    if scaling is None:
        return inv_freq
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind == "linear":
        return inv_freq / scaling["factor"]
    if kind != "llama3":
        raise ValueError(f"unsupported rope_scaling {scaling}")
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old_len = scaling["original_max_position_embeddings"]
    low_freq_wavelen, high_freq_wavelen = old_len / low, old_len / high
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_len / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama)


def rms_norm(x, weight, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x, n_rep):
    """[kv_heads, T, D] -> [kv_heads * n_rep, T, D], each kv head repeated n_rep times in place."""
    kv_heads, length, dim = x.shape
    return x[:, None].expand(kv_heads, n_rep, length, dim).reshape(kv_heads * n_rep, length, dim)


class Reference:
    def __init__(self, model_dir, dtype=torch.float32):
        with open(os.path.join(model_dir, "config.json")) as f:
            self.cfg = Config(json.load(f))
        self.w = {k: v.to(dtype) for k, v in load_weights(model_dir).items()}
        self.dtype = dtype
        self.inv_freq = rope_inv_freq(self.cfg)
        lm_head = "model.embed_tokens.weight" if self.cfg.tie else "lm_head.weight"
        self.lm_head = self.w[lm_head]

    def linear(self, x, name, bias):
        return torch.nn.functional.linear(x, self.w[name + ".weight"], self.w[name + ".bias"] if bias else None)

    def attention(self, x, p, cos, sin):
        cfg, length = self.cfg, x.shape[0]
        q = self.linear(x, p + "q_proj", cfg.qkv_bias).view(length, cfg.num_heads, cfg.head_dim)
        k = self.linear(x, p + "k_proj", cfg.qkv_bias).view(length, cfg.num_kv_heads, cfg.head_dim)
        if cfg.qk_norm:  # RMSNorm over the last dim: each head of each token on its own
            q = rms_norm(q, self.w[p + "q_norm.weight"], cfg.eps)
            k = rms_norm(k, self.w[p + "k_norm.weight"], cfg.eps)
        q, k = q.transpose(0, 1), k.transpose(0, 1)
        v = self.linear(x, p + "v_proj", cfg.qkv_bias).view(length, cfg.num_kv_heads, cfg.head_dim).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n_rep = cfg.num_heads // cfg.num_kv_heads
        k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
        scores = torch.matmul(q, k.transpose(1, 2)) * cfg.head_dim ** -0.5
        mask = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(mask, torch.finfo(self.dtype).min)
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(0, 1).reshape(length, cfg.num_heads * cfg.head_dim)
        return self.linear(out, p + "o_proj", cfg.o_bias)

    def mlp(self, x, p):
        gate = self.linear(x, p + "gate_proj", self.cfg.mlp_bias)
        up = self.linear(x, p + "up_proj", self.cfg.mlp_bias)
        return self.linear(torch.nn.functional.silu(gate) * up, p + "down_proj", self.cfg.mlp_bias)

    @torch.no_grad()
    def logits(self, ids):
        """[len(ids), vocab_size] logits of a single sequence starting at position 0."""
        return torch.nn.functional.linear(self.hidden_states(ids), self.lm_head)

    @torch.no_grad()
    def embedding(self, ids, pooling):
        """[hidden_size]: the final-normed hidden states pooled ("last" or "mean"), L2-normalized."""
        hidden = self.hidden_states(ids)
        pooled = hidden[-1] if pooling == "last" else hidden.mean(dim=0)
        return torch.nn.functional.normalize(pooled, p=2, dim=0)

    @torch.no_grad()
    def hidden_states(self, ids):
        """[len(ids), hidden_size]: the output of model.norm for each position."""
        cfg = self.cfg
        x = self.w["model.embed_tokens.weight"][torch.tensor(ids, dtype=torch.long)]
        positions = torch.arange(len(ids), dtype=torch.float32)
        freqs = positions[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(self.dtype), emb.sin().to(self.dtype)
        for i in range(cfg.num_layers):
            p = f"model.layers.{i}."
            h = rms_norm(x, self.w[p + "input_layernorm.weight"], cfg.eps)
            x = x + self.attention(h, p + "self_attn.", cos, sin)
            h = rms_norm(x, self.w[p + "post_attention_layernorm.weight"], cfg.eps)
            x = x + self.mlp(h, p + "mlp.")
        return rms_norm(x, self.w["model.norm.weight"], cfg.eps)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir")
    parser.add_argument("--ids", required=True, help="comma-separated token ids")
    parser.add_argument("--float64", action="store_true", help="compute in float64")
    parser.add_argument("--embed", choices=["last", "mean"], help="print the pooled embedding instead")
    args = parser.parse_args()
    ref = Reference(args.model_dir, torch.float64 if args.float64 else torch.float32)
    if args.embed:
        embedding = ref.embedding([int(t) for t in args.ids.split(",")], args.embed)
        return print(json.dumps({"embedding": embedding.tolist()}))
    logits = ref.logits([int(t) for t in args.ids.split(",")])
    print(json.dumps({"logits": logits.tolist()}))


if __name__ == "__main__":
    main()
