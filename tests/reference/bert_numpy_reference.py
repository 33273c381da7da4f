"""A BERT sentence encoder written in numpy from the architecture (Devlin et al. 2019, and
sentence-transformers' Pooling / Normalize modules), independent of surge's code: the
reference for tests/reference/test_bert_vs_reference.py.

Embeddings: word + absolute position + token type 0, LayerNorm. Each layer (post-LN):
x = LN(x + W_o softmax(Q K^T / sqrt(d)) V), x = LN(x + W_2 gelu_erf(W_1 x)). Pooling: the
mean over all tokens or the [CLS] row, then L2 normalization when modules.json has it.
Tokens come from HF `tokenizers` (truncation at sentence_bert_config's max_seq_length).
Weights and activations in float32, LayerNorm statistics and softmax in float64.
"""
import json
import math
import os

import numpy as np
import tokenizers
from safetensors.numpy import load_file


def _erf(x):
    """Abramowitz & Stegun 7.1.26, |error| < 1.5e-7 (vectorized; math.erf per element is too slow)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def layer_norm(x, weight, bias, eps):
    x = x.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + eps) * weight + bias).astype(np.float32)


class BertReference:
    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "config.json")) as f:
            self.config = json.load(f)
        raw = load_file(os.path.join(model_dir, "model.safetensors"))
        self.w = {k[5:] if k.startswith("bert.") else k: v.astype(np.float32) for k, v in raw.items()}
        self.max_len = self.config["max_position_embeddings"]
        sbert = os.path.join(model_dir, "sentence_bert_config.json")
        if os.path.exists(sbert):
            with open(sbert) as f:
                self.max_len = min(self.max_len, json.load(f).get("max_seq_length", self.max_len))
        self.pooling, self.normalize = "mean", False
        pooling_path = os.path.join(model_dir, "1_Pooling", "config.json")
        if os.path.exists(pooling_path):
            with open(pooling_path) as f:
                self.pooling = "cls" if json.load(f).get("pooling_mode_cls_token") else "mean"
        modules_path = os.path.join(model_dir, "modules.json")
        if os.path.exists(modules_path):
            with open(modules_path) as f:
                self.normalize = any(m["type"].endswith(".Normalize") for m in json.load(f))
        self.tokenizer = tokenizers.Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_len)

    def ids(self, text):
        return self.tokenizer.encode(text).ids

    def hidden(self, ids):
        """The last layer's rows, [len(ids), hidden]."""
        c, w = self.config, self.w
        eps = c.get("layer_norm_eps", 1e-12)
        heads = c["num_attention_heads"]
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        for i in range(c["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            def linear(name, v):
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]
            q, k, v = (linear("attention.self." + part, x) for part in ("query", "key", "value"))
            d = q.shape[1] // heads
            split = lambda t: t.reshape(n, heads, d).transpose(1, 0, 2)  # noqa: E731
            scores = (split(q) @ split(k).transpose(0, 2, 1)).astype(np.float64) / math.sqrt(d)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attn = (scores / scores.sum(-1, keepdims=True)).astype(np.float32) @ split(v)
            attn = attn.transpose(1, 0, 2).reshape(n, heads * d)
            x = layer_norm(x + linear("attention.output.dense", attn), w[p + "attention.output.LayerNorm.weight"],
                           w[p + "attention.output.LayerNorm.bias"], eps)
            h = linear("intermediate.dense", x)
            h = h * 0.5 * (1.0 + _erf(h / math.sqrt(2.0)))
            x = layer_norm(x + linear("output.dense", h), w[p + "output.LayerNorm.weight"],
                           w[p + "output.LayerNorm.bias"], eps)
        return x

    def embed(self, text, pooling=None):
        rows = self.hidden(self.ids(text))
        rows = rows.astype(np.float64)
        vector = rows[0] if (pooling or self.pooling) == "cls" else rows.mean(0)
        if self.normalize:
            vector = vector / np.linalg.norm(vector)
        return vector
