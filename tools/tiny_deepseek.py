"""DeepSeek V2 / V3 configs and tensor lists for make_tiny_model.py, and FP8 encoding.

Tensor names and shapes follow the official checkpoints (modeling_deepseek.py): MLA
projections (q_proj, or q_a_proj + q_a_layernorm + q_b_proj; kv_a_proj_with_mqa,
kv_a_layernorm, kv_b_proj, o_proj), dense MLPs before first_k_dense_replace, MoE layers
with a router (gate.weight, plus gate.e_score_correction_bias for noaux_tc), routed and
shared experts, and for V3 the MTP layers (num_nextn_predict_layers) after the last
decoder layer, which an engine must skip knowingly.

FP8 as DeepSeek-V3 ships it: float8_e4m3fn linear weights with a float32
weight_scale_inv per 128x128 block (w = fp8 * scale_inv), quantization_config in
config.json; routers, norms, embeddings and lm_head stay in the base dtype.
"""
import numpy as np

PRESETS = {
    # V2-Lite's shape in miniature: q_lora_rank null, softmax gating, greedy top-k, YaRN.
    "deepseek-v2-lite-tiny": dict(
        model_type="deepseek_v2", hidden_size=64, intermediate_size=128, num_hidden_layers=3,
        num_attention_heads=4, vocab_size=256, max_position_embeddings=512,
        q_lora_rank=None, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8,
        v_head_dim=16, moe_intermediate_size=32, n_routed_experts=8, n_shared_experts=2,
        num_experts_per_tok=2, first_k_dense_replace=1, moe_layer_freq=1,
        scoring_func="softmax", topk_method="greedy", n_group=1, topk_group=1,
        norm_topk_prob=False, routed_scaling_factor=1.0,
        rope_scaling=dict(type="yarn", factor=4.0, original_max_position_embeddings=128,
                          beta_fast=32, beta_slow=1, mscale=0.707, mscale_all_dim=0.707)),
    # V3 / R1's shape in miniature: q_lora_rank set, sigmoid gating, noaux_tc with group
    # limits, normalized weights times routed_scaling_factor, YaRN, one MTP layer.
    "deepseek-v3-tiny": dict(
        model_type="deepseek_v3", hidden_size=64, intermediate_size=128, num_hidden_layers=3,
        num_attention_heads=4, vocab_size=256, max_position_embeddings=512,
        q_lora_rank=48, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8,
        v_head_dim=16, moe_intermediate_size=32, n_routed_experts=16, n_shared_experts=1,
        num_experts_per_tok=4, first_k_dense_replace=1, moe_layer_freq=1,
        scoring_func="sigmoid", topk_method="noaux_tc", n_group=4, topk_group=2,
        norm_topk_prob=True, routed_scaling_factor=2.5, num_nextn_predict_layers=1,
        rope_scaling=dict(type="yarn", factor=8.0, original_max_position_embeddings=64,
                          beta_fast=32, beta_slow=1, mscale=1.0, mscale_all_dim=1.0)),
}

# Benchmark shapes (docs/PERF.md "DeepSeek"): V3's structure at ~1/7 of its widths, and
# the same model with a dense MLP as wide as the MoE layers' active experts (4 routed +
# 1 shared of 352 = 1,760), so the two differ only in routing.
_BENCH = dict(
    model_type="deepseek_v3", hidden_size=1024, intermediate_size=1760, num_hidden_layers=6,
    num_attention_heads=16, vocab_size=32000, max_position_embeddings=4096,
    q_lora_rank=384, kv_lora_rank=256, qk_nope_head_dim=64, qk_rope_head_dim=32, v_head_dim=64,
    moe_intermediate_size=352, n_routed_experts=32, n_shared_experts=1, num_experts_per_tok=4,
    first_k_dense_replace=1, moe_layer_freq=1, scoring_func="sigmoid", topk_method="noaux_tc",
    n_group=4, topk_group=2, norm_topk_prob=True, routed_scaling_factor=2.5,
    rope_scaling=dict(type="yarn", factor=4.0, original_max_position_embeddings=1024,
                      beta_fast=32, beta_slow=1, mscale=1.0, mscale_all_dim=1.0))
PRESETS["deepseek-v3-bench"] = _BENCH
PRESETS["deepseek-v3-bench-dense"] = {k: v for k, v in _BENCH.items() if k not in (
    "moe_intermediate_size", "n_routed_experts", "n_shared_experts", "num_experts_per_tok",
    "first_k_dense_replace", "moe_layer_freq", "scoring_func", "topk_method", "n_group",
    "topk_group", "norm_topk_prob", "routed_scaling_factor")}

FP8_BLOCK = 128
FP8_MAX = 448.0


def build_config(c, torch_dtype):
    v3 = c["model_type"] == "deepseek_v3"
    defaults = dict(
        architectures=["DeepseekV3ForCausalLM" if v3 else "DeepseekV2ForCausalLM"],
        hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=False,
        attention_bias=False, attention_dropout=0.0, bos_token_id=0, eos_token_id=1,
        initializer_range=0.02, use_cache=True, torch_dtype=torch_dtype, aux_loss_alpha=0.001,
        seq_aux=True, num_key_value_heads=c["num_attention_heads"], ep_size=1)
    if v3:
        defaults["num_nextn_predict_layers"] = 0
    for key, value in defaults.items():
        c.setdefault(key, value)
    return c


def is_moe_layer(c, i):
    return (c.get("n_routed_experts") is not None and i >= c.get("first_k_dense_replace", 0)
            and i % c.get("moe_layer_freq", 1) == 0)


def _mlp_specs(prefix, hidden, inter):
    return [(prefix + "gate_proj.weight", (inter, hidden), "linear"),
            (prefix + "up_proj.weight", (inter, hidden), "linear"),
            (prefix + "down_proj.weight", (hidden, inter), "linear")]


def _attention_specs(c, p):
    hidden, heads = c["hidden_size"], c["num_attention_heads"]
    q_dim = heads * (c["qk_nope_head_dim"] + c["qk_rope_head_dim"])
    specs = []
    if c.get("q_lora_rank") is None:
        specs.append((p + "q_proj.weight", (q_dim, hidden), "linear"))
    else:
        specs += [(p + "q_a_proj.weight", (c["q_lora_rank"], hidden), "linear"),
                  (p + "q_a_layernorm.weight", (c["q_lora_rank"],), "norm"),
                  (p + "q_b_proj.weight", (q_dim, c["q_lora_rank"]), "linear")]
    kv_b = heads * (c["qk_nope_head_dim"] + c["v_head_dim"])
    specs += [(p + "kv_a_proj_with_mqa.weight",
               (c["kv_lora_rank"] + c["qk_rope_head_dim"], hidden), "linear"),
              (p + "kv_a_layernorm.weight", (c["kv_lora_rank"],), "norm"),
              (p + "kv_b_proj.weight", (kv_b, c["kv_lora_rank"]), "linear"),
              (p + "o_proj.weight", (hidden, heads * c["v_head_dim"]), "linear")]
    return specs


def _layer_specs(c, i):
    p, hidden = f"model.layers.{i}.", c["hidden_size"]
    specs = [(p + "input_layernorm.weight", (hidden,), "norm")]
    specs += _attention_specs(c, p + "self_attn.")
    specs.append((p + "post_attention_layernorm.weight", (hidden,), "norm"))
    if not is_moe_layer(c, i):
        return specs + _mlp_specs(p + "mlp.", hidden, c["intermediate_size"])
    specs.append((p + "mlp.gate.weight", (c["n_routed_experts"], hidden), "router"))
    if c.get("topk_method") == "noaux_tc":
        specs.append((p + "mlp.gate.e_score_correction_bias", (c["n_routed_experts"],), "bias"))
    for e in range(c["n_routed_experts"]):
        specs += _mlp_specs(f"{p}mlp.experts.{e}.", hidden, c["moe_intermediate_size"])
    if c.get("n_shared_experts"):
        specs += _mlp_specs(p + "mlp.shared_experts.", hidden,
                            c["moe_intermediate_size"] * c["n_shared_experts"])
    return specs


def _mtp_specs(c, i):
    """V3's multi-token-prediction layer i (>= num_hidden_layers): a decoder layer plus
    its own embedding, projections and head."""
    p, hidden, vocab = f"model.layers.{i}.", c["hidden_size"], c["vocab_size"]
    return _layer_specs(c, i) + [
        (p + "embed_tokens.weight", (vocab, hidden), "embed"),
        (p + "enorm.weight", (hidden,), "norm"), (p + "hnorm.weight", (hidden,), "norm"),
        (p + "eh_proj.weight", (hidden, 2 * hidden), "linear"),
        (p + "shared_head.norm.weight", (hidden,), "norm"),
        (p + "shared_head.head.weight", (vocab, hidden), "linear")]


def tensor_specs(c):
    hidden, vocab, layers = c["hidden_size"], c["vocab_size"], c["num_hidden_layers"]
    specs = [("model.embed_tokens.weight", (vocab, hidden), "embed")]
    for i in range(layers):
        specs += _layer_specs(c, i)
    specs += [("model.norm.weight", (hidden,), "norm"),
              ("lm_head.weight", (vocab, hidden), "head")]
    for i in range(layers, layers + c.get("num_nextn_predict_layers", 0)):
        specs += _mtp_specs(c, i)
    return specs


def fp8_targets(specs):
    """Names of the tensors an FP8 checkpoint stores in float8: the decoder layers'
    linear weights (not routers, norms, embeddings or heads)."""
    return {name for name, _, kind in specs
            if kind == "linear" and ".layers." in name and "eh_proj" not in name
            and "shared_head" not in name}


def _fp8_table():
    """(values sorted ascending, their codes) of every finite non-negative e4m3fn code."""
    codes = np.arange(0x7F, dtype=np.uint32)  # 0x7F is NaN
    exponent, mantissa = (codes >> 3) & 0xF, (codes & 7).astype(np.float64)
    values = np.where(exponent == 0, mantissa / 8 * 2.0 ** -6,
                      (1 + mantissa / 8) * np.exp2(exponent.astype(np.float64) - 7))
    return values, codes


def encode_fp8(x):
    """float32 array (|x| <= 448) -> e4m3fn codes, nearest with ties to even codes."""
    values, codes = _fp8_table()
    magnitude = np.abs(x.astype(np.float64)).ravel()
    upper = np.clip(np.searchsorted(values, magnitude), 1, len(values) - 1)
    lo, hi = values[upper - 1], values[upper]
    pick_hi = (magnitude - lo > hi - magnitude) | (
        (magnitude - lo == hi - magnitude) & (codes[upper] % 2 == 0))
    code = np.where(pick_hi, codes[upper], codes[upper - 1])
    code = np.where(magnitude >= values[-1], codes[-1], code)
    sign = (x.ravel() < 0).astype(np.uint32) << 7
    return (code | sign).astype(np.uint8).reshape(x.shape)


def quantize_fp8(w):
    """w [out, in] -> (e4m3fn codes [out, in], scale_inv [ceil(out/128), ceil(in/128)])."""
    rows, cols = w.shape
    br, bc = -(-rows // FP8_BLOCK), -(-cols // FP8_BLOCK)
    scale_inv = np.zeros((br, bc), dtype=np.float32)
    scaled = np.zeros_like(w, dtype=np.float32)
    for i in range(br):
        for j in range(bc):
            block = w[i * FP8_BLOCK:(i + 1) * FP8_BLOCK, j * FP8_BLOCK:(j + 1) * FP8_BLOCK]
            s = np.float32(max(float(np.abs(block).max()), 1e-12) / FP8_MAX)
            scale_inv[i, j] = s
            scaled[i * FP8_BLOCK:(i + 1) * FP8_BLOCK, j * FP8_BLOCK:(j + 1) * FP8_BLOCK] = block / s
    return encode_fp8(scaled), scale_inv
