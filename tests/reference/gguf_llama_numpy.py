"""A Llama forward pass in numpy over a GGUF file's weights, written from the architecture's
definition and llama.cpp's GGUF conventions -- nothing of surge's code or its loader.

Weights come from the `gguf` package (GGUFReader, gguf.quants.dequantize), widened to
float32 once. Conventions of llama.cpp's `llama` architecture in GGUF:
  - a [out, in] weight is stored with ne = (in, out): dequantize gives rows of `in` values;
  - Q and K rows were permuted by llama.cpp's converter so that RoPE rotates *adjacent*
    pairs (x[2i], x[2i+1]) by theta_i = pos * base^(-2i / head_dim) (rope "NORM" mode);
  - no output.weight means tied embeddings (the LM head is token_embd).
Attention is causal softmax(q k^T / sqrt(head_dim)) with grouped KV heads (query head h
reads KV head h // (heads / kv_heads)); RMSNorm is x / sqrt(mean(x^2) + eps) * w; the MLP
is down(silu(gate(x)) * up(x)). All in float32 (float64 for the norms' and softmax' sums).
"""
import numpy as np
import gguf


class GgufLlama:
    def __init__(self, path):
        reader = gguf.GGUFReader(path)
        self.meta = {f.name: _field_value(f) for f in reader.fields.values()}
        arch = self.meta["general.architecture"]
        if arch != "llama":
            raise ValueError(f"{path}: architecture {arch}, this reference is for llama")
        m = lambda key: self.meta[f"{arch}.{key}"]
        self.num_layers = int(m("block_count"))
        self.hidden = int(m("embedding_length"))
        self.num_heads = int(m("attention.head_count"))
        self.num_kv_heads = int(m("attention.head_count_kv"))
        self.head_dim = self.hidden // self.num_heads
        self.eps = float(m("attention.layer_norm_rms_epsilon"))
        self.rope_base = float(self.meta.get(f"{arch}.rope.freq_base", 10000.0))
        self.w = {t.name: _dequantize(t) for t in reader.tensors}
        self.lm_head = self.w.get("output.weight", self.w["token_embd.weight"])
        half = np.arange(0, self.head_dim, 2, dtype=np.float64) / self.head_dim
        self.inv_freq = self.rope_base ** -half  # [head_dim / 2]

    def _rms_norm(self, x, weight):
        x64 = x.astype(np.float64)
        scale = 1.0 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + self.eps)
        return (x64 * scale).astype(np.float32) * weight

    def _rope(self, x, positions):
        # x: [tokens, heads, head_dim]; adjacent pairs rotate together.
        angles = positions[:, None].astype(np.float64) * self.inv_freq[None, :]  # [tokens, head_dim / 2]
        cos = np.cos(angles).astype(np.float32)[:, None, :]
        sin = np.sin(angles).astype(np.float32)[:, None, :]
        even, odd = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = even * cos - odd * sin
        out[..., 1::2] = even * sin + odd * cos
        return out

    def _attention(self, layer, x, positions, cache):
        p = f"blk.{layer}."
        n = x.shape[0]
        q = (x @ self.w[p + "attn_q.weight"].T).reshape(n, self.num_heads, self.head_dim)
        k = (x @ self.w[p + "attn_k.weight"].T).reshape(n, self.num_kv_heads, self.head_dim)
        v = (x @ self.w[p + "attn_v.weight"].T).reshape(n, self.num_kv_heads, self.head_dim)
        q, k = self._rope(q, positions), self._rope(k, positions)
        keys, values = cache.append(layer, k, v)  # [context, kv_heads, head_dim]
        group = self.num_heads // self.num_kv_heads
        keys = np.repeat(keys, group, axis=1).transpose(1, 0, 2)  # [heads, context, head_dim]
        values = np.repeat(values, group, axis=1).transpose(1, 0, 2)
        scores = np.einsum("thd,hcd->htc", q, keys).astype(np.float64) / np.sqrt(self.head_dim)
        context_positions = np.arange(keys.shape[1])
        scores[:, context_positions[None, :] > positions[:, None]] = -np.inf  # causal
        scores -= scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs = (probs / probs.sum(axis=-1, keepdims=True)).astype(np.float32)
        out = np.einsum("htc,hcd->thd", probs, values).reshape(n, self.hidden)
        return out @ self.w[p + "attn_output.weight"].T

    def _mlp(self, layer, x):
        p = f"blk.{layer}."
        gate = x @ self.w[p + "ffn_gate.weight"].T
        up = x @ self.w[p + "ffn_up.weight"].T
        act = gate / (1.0 + np.exp(-gate.astype(np.float64))).astype(np.float32)
        return (act * up) @ self.w[p + "ffn_down.weight"].T

    def forward(self, ids, cache):
        """Logits [len(ids), vocab] of `ids` appended to what `cache` holds."""
        positions = np.arange(cache.length, cache.length + len(ids))
        x = self.w["token_embd.weight"][np.asarray(ids)]
        for layer in range(self.num_layers):
            x = x + self._attention(layer, self._rms_norm(x, self.w[f"blk.{layer}.attn_norm.weight"]), positions, cache)
            x = x + self._mlp(layer, self._rms_norm(x, self.w[f"blk.{layer}.ffn_norm.weight"]))
        cache.length += len(ids)
        return self._rms_norm(x, self.w["output_norm.weight"]) @ self.lm_head.T

    def greedy(self, prompt_ids, num_tokens):
        """Prompt logits [len, vocab] and the greedy continuation's ids (no stop token)."""
        cache = KvCache(self.num_layers)
        logits = self.forward(prompt_ids, cache)
        out = [int(np.argmax(logits[-1]))]
        while len(out) < num_tokens:
            out.append(int(np.argmax(self.forward([out[-1]], cache)[-1])))
        return logits, out


class KvCache:
    def __init__(self, num_layers):
        self.length = 0
        self.k = [None] * num_layers
        self.v = [None] * num_layers

    def append(self, layer, k, v):
        self.k[layer] = k if self.k[layer] is None else np.concatenate([self.k[layer], k])
        self.v[layer] = v if self.v[layer] is None else np.concatenate([self.v[layer], v])
        return self.k[layer], self.v[layer]


def _dequantize(tensor):
    rows = gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
    ne = [int(d) for d in tensor.shape]  # GGUF order: ne[0] is the fastest axis
    return rows.reshape(list(reversed(ne)))


def _field_value(field):
    if not field.types:
        return None
    if field.types[0] == gguf.GGUFValueType.ARRAY:
        return None  # vocabularies etc.: read where needed, not here
    part = field.parts[field.data[0]]
    if field.types[0] == gguf.GGUFValueType.STRING:
        return bytes(part).decode("utf-8")
    return part.tolist()[0]
