#!/usr/bin/python3
"""An independent PyTorch forward pass of DeepSeek V2 / V3 (and R1, which is V3-shaped).

Written from DeepSeek's published modeling semantics (the modeling_deepseek.py files of
the DeepSeek-V2 / V3 Hugging Face repositories and DeepSeek-V3's inference/model.py), not
from surge's code. Where those differ, DeepSeek's own inference code wins:
  - MLA: q from q_proj (q_lora_rank null, V2-Lite) or q_b_proj(RMSNorm(q_a_proj(x)));
    kv_a_proj_with_mqa gives the latent c (kv_lora_rank) and one shared k_pe
    (qk_rope_head_dim); kv_b_proj(RMSNorm(c)) gives per-head k_nope and v. Keys are
    [k_nope, k_pe], queries [q_nope, q_pe]. Prefill form (K/V expanded per head), which
    is the definition; weight absorption must equal it.
  - RoPE on the rope part only. The checkpoints store its pairs interleaved: DeepSeek's
    apply_rotary_pos_emb first reorders each vector (x0, x1, x2, ...) into
    (x0, x2, ..., x1, x3, ...) and then rotates halves; done here the same way.
  - YaRN (rope_scaling.type == "yarn"): inverse frequencies blended between interpolated
    and extrapolated by the linear ramp over the correction range found from beta_fast /
    beta_slow; cos/sin multiplied by mscale(factor, mscale) / mscale(factor, mscale_all_dim);
    the softmax scale q_head_dim^-0.5 multiplied by mscale(factor, mscale_all_dim)^2 when
    mscale_all_dim is set (DeepSeek applies it; one popular port of V2 does not).
  - MoE: router logits in f32; softmax or sigmoid scores; top-k by "greedy",
    "group_limited_greedy" (group score = max of the group) or "noaux_tc" (choice by
    score + e_score_correction_bias, group score = sum of the group's top 2, masked
    groups -inf as in inference/model.py; weights are the unbiased scores). Weights
    normalized when norm_topk_prob and top_k > 1 (+1e-20). V3 (noaux_tc / sigmoid) then
    always multiplies by routed_scaling_factor; V2 multiplies only when not normalized.
  - Layer i is MoE when n_routed_experts is set, i >= first_k_dense_replace and
    i % moe_layer_freq == 0; shared experts are one MLP of n_shared_experts *
    moe_intermediate_size. V3's first MTP layer (index num_hidden_layers): mtp_logits.
  - FP8 checkpoints (F8_E4M3 weights with a weight_scale_inv per 128x128 block) are
    dequantized: w = fp8 * scale_inv of its block.

  deepseek_reference.py MODEL_DIR --ids 1,2,3  ->  JSON {"logits": [[...], ...]}
"""
import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_reference import fp8_e4m3fn_to_f32, read_safetensors  # noqa: E402,F401

def load_weights(model_dir):
    index_path = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index_path):
        with open(index_path) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    weights = {}
    for file in files:
        weights.update(read_safetensors(os.path.join(model_dir, file)))
    return apply_block_scales(weights)


def apply_block_scales(weights, block=128):
    """w[i, j] *= scale_inv[i // block, j // block] for every NAME.weight_scale_inv."""
    for name in [n for n in weights if n.endswith(".weight_scale_inv")]:
        scale = weights.pop(name)
        target = name[:-len("_scale_inv")]
        w = weights[target]
        expanded = scale.repeat_interleave(block, 0)[:w.shape[0]].repeat_interleave(block, 1)
        weights[target] = w * expanded[:, :w.shape[1]]
    return weights


class Config:
    """The config.json fields of DeepseekV2/V3, with their modeling files' defaults."""

    def __init__(self, d):
        self.hidden_size = d["hidden_size"]
        self.num_layers = d["num_hidden_layers"]
        self.num_heads = d["num_attention_heads"]
        self.vocab_size = d["vocab_size"]
        self.eps = d.get("rms_norm_eps", 1e-6)
        self.rope_theta = d.get("rope_theta", 10000.0)
        self.rope_scaling = d.get("rope_scaling") or None
        self.q_lora_rank = d.get("q_lora_rank")
        self.kv_lora_rank = d["kv_lora_rank"]
        self.nope = d["qk_nope_head_dim"]
        self.rope = d["qk_rope_head_dim"]
        self.v_head_dim = d["v_head_dim"]
        self.intermediate_size = d["intermediate_size"]
        self.moe_intermediate_size = d.get("moe_intermediate_size")
        self.n_routed_experts = d.get("n_routed_experts")
        self.n_shared_experts = d.get("n_shared_experts")
        self.top_k = d.get("num_experts_per_tok")
        self.first_k_dense_replace = d.get("first_k_dense_replace", 0)
        self.moe_layer_freq = d.get("moe_layer_freq", 1)
        self.scoring_func = d.get("scoring_func", "softmax")
        self.topk_method = d.get("topk_method", "greedy")
        self.n_group = d.get("n_group")
        self.topk_group = d.get("topk_group")
        self.norm_topk_prob = d.get("norm_topk_prob", False)
        self.routed_scaling_factor = d.get("routed_scaling_factor", 1.0)
        self.v3 = d.get("model_type") == "deepseek_v3"

    def is_moe_layer(self, i):
        return (self.n_routed_experts is not None and i >= self.first_k_dense_replace
                and i % self.moe_layer_freq == 0)


def rms_norm(x, weight, eps):
    x = x.float()
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def yarn_mscale(scale, mscale):
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def yarn_correction_dim(num_rotations, dim, base, max_positions):
    return (dim * math.log(max_positions / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def rope_tables(c, num_positions):
    """cos, sin: [num_positions, rope] in rotate-half order; and the softmax scale."""
    dim, base = c.rope, c.rope_theta
    exponents = torch.arange(0, dim, 2, dtype=torch.float32) / dim
    inv_freq = 1.0 / (base ** exponents)
    cos_sin_scale = 1.0
    softmax_scale = (c.nope + c.rope) ** -0.5
    s = c.rope_scaling
    if s and s.get("type", s.get("rope_type")) == "yarn":
        factor = s["factor"]
        low = max(math.floor(yarn_correction_dim(s.get("beta_fast", 32), dim, base,
                                                 s["original_max_position_embeddings"])), 0)
        high = min(math.ceil(yarn_correction_dim(s.get("beta_slow", 1), dim, base,
                                                 s["original_max_position_embeddings"])), dim - 1)
        if low == high:
            high += 0.001
        ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
        extrapolate = 1.0 - ramp
        inv_freq = (inv_freq / factor) * (1 - extrapolate) + inv_freq * extrapolate
        mscale, mscale_all_dim = s.get("mscale", 1), s.get("mscale_all_dim", 0)
        cos_sin_scale = yarn_mscale(factor, mscale) / yarn_mscale(factor, mscale_all_dim)
        if mscale_all_dim:
            softmax_scale *= yarn_mscale(factor, mscale_all_dim) ** 2
    elif s:
        raise ValueError(f"unsupported rope_scaling {s}")
    freqs = torch.outer(torch.arange(num_positions, dtype=torch.float32), inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos() * cos_sin_scale, emb.sin() * cos_sin_scale, softmax_scale


def apply_rope(x, cos, sin):
    """x: [..., positions, rope] in the checkpoint's interleaved order."""
    *lead, d = x.shape
    x = x.reshape(*lead, d // 2, 2).transpose(-1, -2).reshape(*lead, d)
    rotated = torch.cat([-x[..., d // 2:], x[..., :d // 2]], dim=-1)
    return x * cos + rotated * sin


def mla(c, w, p, x, cos, sin, softmax_scale):
    """x: [T, hidden] -> [T, hidden]; causal over the T positions."""
    t, h = x.shape[0], c.num_heads
    if c.q_lora_rank is None:
        q = x @ w[p + "q_proj.weight"].T
    else:
        q_latent = rms_norm(x @ w[p + "q_a_proj.weight"].T, w[p + "q_a_layernorm.weight"], c.eps)
        q = q_latent @ w[p + "q_b_proj.weight"].T
    q = q.view(t, h, c.nope + c.rope).transpose(0, 1)  # [H, T, nope + rope]
    q_nope, q_pe = q[..., :c.nope], q[..., c.nope:]
    kv_a = x @ w[p + "kv_a_proj_with_mqa.weight"].T  # [T, kv_lora_rank + rope]
    latent, k_pe = kv_a[:, :c.kv_lora_rank], kv_a[:, c.kv_lora_rank:]
    kv = rms_norm(latent, w[p + "kv_a_layernorm.weight"], c.eps) @ w[p + "kv_b_proj.weight"].T
    kv = kv.view(t, h, c.nope + c.v_head_dim).transpose(0, 1)  # [H, T, nope + v]
    k_nope, v = kv[..., :c.nope], kv[..., c.nope:]
    q_pe = apply_rope(q_pe, cos, sin)
    k_pe = apply_rope(k_pe.unsqueeze(0), cos, sin).expand(h, t, c.rope)
    scores = (torch.cat([q_nope, q_pe], -1) @ torch.cat([k_nope, k_pe], -1).transpose(1, 2))
    scores = scores * softmax_scale
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    out = (probs @ v).transpose(0, 1).reshape(t, h * c.v_head_dim)
    return out @ w[p + "o_proj.weight"].T


def mlp(w, p, x):
    gate = x @ w[p + "gate_proj.weight"].T
    up = x @ w[p + "up_proj.weight"].T
    return (torch.nn.functional.silu(gate) * up) @ w[p + "down_proj.weight"].T


def route(c, w, p, x):
    """-> (expert ids [T, top_k], weights [T, top_k]) as the configured gate chooses."""
    logits = x.float() @ w[p + "gate.weight"].float().T  # [T, n_routed_experts]
    if c.scoring_func == "softmax":
        scores = logits.softmax(dim=-1)
    elif c.scoring_func == "sigmoid":
        scores = logits.sigmoid()
    else:
        raise ValueError(f"unsupported scoring_func {c.scoring_func}")
    t = x.shape[0]
    if c.topk_method == "greedy":
        choice = scores
    elif c.topk_method in ("group_limited_greedy", "noaux_tc"):
        if c.topk_method == "noaux_tc":
            choice = scores + w[p + "gate.e_score_correction_bias"]
            group_scores = choice.view(t, c.n_group, -1).topk(2, dim=-1)[0].sum(-1)
        else:
            choice = scores
            group_scores = choice.view(t, c.n_group, -1).max(dim=-1).values
        top_groups = group_scores.topk(c.topk_group, dim=-1)[1]
        keep = torch.zeros_like(group_scores, dtype=torch.bool).scatter_(1, top_groups, True)
        keep = keep.unsqueeze(-1).expand(t, c.n_group, c.n_routed_experts // c.n_group)
        fill = float("-inf") if c.topk_method == "noaux_tc" else 0.0
        choice = choice.masked_fill(~keep.reshape(t, -1), fill)
    else:
        raise ValueError(f"unsupported topk_method {c.topk_method}")
    ids = choice.topk(c.top_k, dim=-1)[1]
    weights = scores.gather(1, ids)
    normalized = c.top_k > 1 and c.norm_topk_prob
    if normalized:
        weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-20)
    if c.v3 or not normalized:
        weights = weights * c.routed_scaling_factor
    return ids, weights


def moe(c, w, p, x):
    ids, weights = route(c, w, p, x)
    out = torch.zeros_like(x)
    for e in range(c.n_routed_experts):
        rows, slots = (ids == e).nonzero(as_tuple=True)
        if rows.numel():
            out[rows] += weights[rows, slots].unsqueeze(-1) * mlp(w, f"{p}experts.{e}.", x[rows])
    if c.n_shared_experts:
        out = out + mlp(w, p + "shared_experts.", x)
    return out


def decoder_layer(c, w, i, x, cos, sin, softmax_scale):
    """Layer i (its weights under model.layers.i.) over x [T, hidden], causal."""
    p = f"model.layers.{i}."
    x = x + mla(c, w, p + "self_attn.", rms_norm(x, w[p + "input_layernorm.weight"], c.eps),
                cos, sin, softmax_scale)
    h = rms_norm(x, w[p + "post_attention_layernorm.weight"], c.eps)
    return x + (moe(c, w, p + "mlp.", h) if c.is_moe_layer(i) else mlp(w, p + "mlp.", h))


def final_hidden(c, w, ids):
    """The final-normed hidden states [T, hidden] (lm_head's input) of one sequence."""
    x = w["model.embed_tokens.weight"][torch.tensor(ids)]
    cos, sin, softmax_scale = rope_tables(c, len(ids))
    for i in range(c.num_layers):
        x = decoder_layer(c, w, i, x, cos, sin, softmax_scale)
    return rms_norm(x, w["model.norm.weight"], c.eps)


def forward(c, w, ids):
    """Logits [T, vocab] for every position of one sequence."""
    return final_hidden(c, w, ids) @ w["lm_head.weight"].T


def mtp_layer(c, w, tokens, previous_hidden):
    """V3's first multi-token-prediction layer (index num_hidden_layers), as DeepSeek-V3's
    technical report defines it and its served checkpoints lay it out (vLLM's / SGLang's
    deepseek MTP): row p joins RMSNorm(embedding of tokens[p]) and RMSNorm(previous_hidden[p])
    -- embedding first --, projects them with eh_proj, and runs one decoder layer at
    positions 0..T-1. Returns the layer output [T, hidden] (before shared_head.norm)."""
    i = c.num_layers
    p = f"model.layers.{i}."
    embedding = w.get(p + "embed_tokens.weight", w["model.embed_tokens.weight"])
    e = rms_norm(embedding[torch.tensor(tokens)], w[p + "enorm.weight"], c.eps)
    h = rms_norm(previous_hidden, w[p + "hnorm.weight"], c.eps)
    x = torch.cat([e, h], dim=-1) @ w[p + "eh_proj.weight"].T
    cos, sin, softmax_scale = rope_tables(c, len(tokens))
    return decoder_layer(c, w, i, x, cos, sin, softmax_scale)


def mtp_head(c, w, x):
    p = f"model.layers.{c.num_layers}.shared_head."
    return rms_norm(x, w[p + "norm.weight"], c.eps) @ w[p + "head.weight"].T


def mtp_logits(c, w, ids):
    """What dump_logits_tool --mtp prints: MTP logits of positions p in [0, n - 1); rows
    p < n - 2 take the target's hidden state of p and token p + 1, row n - 2 takes token
    n - 1 and the MTP output of row n - 3 (one chained guess)."""
    n = len(ids)
    target = final_hidden(c, w, ids[:n - 1])
    real = mtp_layer(c, w, ids[1:n - 1], target[:n - 2])
    chained = torch.cat([target[:n - 2], real[n - 3:n - 2]])
    return mtp_head(c, w, mtp_layer(c, w, ids[1:n], chained))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir")
    parser.add_argument("--ids", required=True, help="comma-separated token ids")
    args = parser.parse_args()
    with open(os.path.join(args.model_dir, "config.json")) as f:
        config = Config(json.load(f))
    weights = load_weights(args.model_dir)
    ids = [int(s) for s in args.ids.split(",")]
    with torch.no_grad():
        logits = forward(config, weights, ids)
    json.dump({"logits": logits.tolist()}, sys.stdout)


if __name__ == "__main__":
    main()
