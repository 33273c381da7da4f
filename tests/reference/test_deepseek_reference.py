#!/usr/bin/python3
"""Checks of deepseek_reference.py and the DeepSeek side of tools/make_tiny_model.py.

The reference is the yardstick the engine's DeepSeek forward will be held to, so it is
checked here on its own: FP8 encoding is exact nearest rounding, an FP8 checkpoint
dequantizes to its original within FP8 error, the forward is causal, routing obeys the
group limits and weight rules of each gate, and MLA's weight-absorbed decode (what an
engine runs against the latent cache) equals the expanded prefill form the reference
defines.

  test_deepseek_reference.py
"""
import atexit
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
import deepseek_reference as ref  # noqa: E402
import make_tiny_model  # noqa: E402
import tiny_deepseek  # noqa: E402

IDS = [3, 17, 200, 5, 9, 9, 100, 42, 7, 255, 0, 128]


def load(preset, fp8=False, dtype="F32"):
    out = tempfile.mkdtemp(prefix="ds_ref_")
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    config = make_tiny_model.make_model(out, dict(make_tiny_model.PRESETS[preset]), dtype, fp8=fp8)
    return ref.Config(config), ref.load_weights(out)


class Fp8Test(unittest.TestCase):
    def test_every_finite_code_round_trips(self):
        codes = np.array([c for c in range(256) if c & 0x7F != 0x7F], dtype=np.uint8)
        values = ref.fp8_e4m3fn_to_f32(codes)
        back = tiny_deepseek.encode_fp8(values)
        zero = values == 0  # +0 and -0 both decode to 0; -0 encodes as 0x80
        np.testing.assert_array_equal(back[~zero], codes[~zero])

    def test_encode_is_nearest(self):
        x = np.random.default_rng(1).uniform(-448, 448, 5000).astype(np.float32)
        decoded = ref.fp8_e4m3fn_to_f32(tiny_deepseek.encode_fp8(x))
        table = np.unique(ref.fp8_e4m3fn_to_f32(np.arange(0x7F, dtype=np.uint8)))
        table = np.concatenate([-table[::-1], table])
        best = np.abs(x[:, None] - table[None, :]).min(axis=1)
        np.testing.assert_allclose(np.abs(decoded - x), best, rtol=0, atol=1e-6)

    def test_checkpoint_dequantizes_within_fp8_error(self):
        _, original = load("deepseek-v3-tiny")
        _, fp8 = load("deepseek-v3-tiny", fp8=True)
        targets = tiny_deepseek.fp8_targets(
            tiny_deepseek.tensor_specs(make_tiny_model.build_config(
                dict(make_tiny_model.PRESETS["deepseek-v3-tiny"]))))
        self.assertGreater(len(targets), 50)
        for name in targets:
            w, q = original[name], fp8[name]
            scale = w.abs().max() / tiny_deepseek.FP8_MAX  # one block: dims <= 128 here
            bound = torch.maximum(w.abs() * 2.0 ** -4, scale * 2.0 ** -9) * 1.0001
            self.assertTrue(bool(((q - w).abs() <= bound).all()), name)


class ForwardTest(unittest.TestCase):
    def test_causal_and_finite(self):
        for preset in tiny_deepseek.PRESETS:
            c, w = load(preset)
            with torch.no_grad():
                full, prefix = ref.forward(c, w, IDS), ref.forward(c, w, IDS[:5])
            self.assertTrue(bool(torch.isfinite(full).all()), preset)
            torch.testing.assert_close(prefix, full[:5], rtol=1e-5, atol=1e-5)
            self.assertGreater(float(full.std()), 0.3, preset)  # far from flat

    def test_absorbed_decode_equals_expanded_attention(self):
        for preset in tiny_deepseek.PRESETS:
            c, w = load(preset)
            p = "model.layers.1.self_attn."
            x = torch.randn(len(IDS), c.hidden_size, generator=torch.Generator().manual_seed(0))
            cos, sin, scale = ref.rope_tables(c, len(IDS))
            with torch.no_grad():
                expanded = ref.mla(c, w, p, x, cos, sin, scale)[-1]
                absorbed = absorbed_last_position(c, w, p, x, cos, sin, scale)
            torch.testing.assert_close(absorbed, expanded, rtol=1e-4, atol=1e-5)


def absorbed_last_position(c, w, p, x, cos, sin, scale):
    """Decode of the last position against the latent cache: q_nope folded through the
    K up-projection, attention over [normed latent, k_pe], the V up-projection applied to
    the attended latent, then o_proj."""
    h, t = c.num_heads, x.shape[0]
    if c.q_lora_rank is None:
        q = x[-1] @ w[p + "q_proj.weight"].T
    else:
        q_latent = ref.rms_norm(x[-1:] @ w[p + "q_a_proj.weight"].T, w[p + "q_a_layernorm.weight"], c.eps)
        q = (q_latent @ w[p + "q_b_proj.weight"].T)[0]
    q = q.view(h, c.nope + c.rope)
    kv_a = x @ w[p + "kv_a_proj_with_mqa.weight"].T
    latent = ref.rms_norm(kv_a[:, :c.kv_lora_rank], w[p + "kv_a_layernorm.weight"], c.eps)
    k_pe = ref.apply_rope(kv_a[:, c.kv_lora_rank:], cos, sin)  # [T, rope]
    q_pe = ref.apply_rope(q[:, c.nope:].unsqueeze(1), cos[-1:], sin[-1:]).squeeze(1)
    w_kv = w[p + "kv_b_proj.weight"].view(h, c.nope + c.v_head_dim, c.kv_lora_rank)
    w_uk, w_uv = w_kv[:, :c.nope], w_kv[:, c.nope:]
    q_latent_heads = torch.einsum("hn,hnl->hl", q[:, :c.nope], w_uk)  # [H, kv_lora_rank]
    scores = (q_latent_heads @ latent.T + q_pe @ k_pe.T) * scale  # [H, T]
    attended = torch.softmax(scores, dim=-1) @ latent  # [H, kv_lora_rank]
    out = torch.einsum("hl,hvl->hv", attended, w_uv).reshape(h * c.v_head_dim)
    return out @ w[p + "o_proj.weight"].T


class RoutingTest(unittest.TestCase):
    def test_noaux_tc_group_limits_and_weights(self):
        c, w = load("deepseek-v3-tiny")
        x = torch.randn(64, c.hidden_size, generator=torch.Generator().manual_seed(2))
        ids, weights = ref.route(c, w, "model.layers.1.mlp.", x)
        per_group = c.n_routed_experts // c.n_group
        for row in ids:
            self.assertLessEqual(len(set((row // per_group).tolist())), c.topk_group)
            self.assertEqual(len(set(row.tolist())), c.top_k)
        torch.testing.assert_close(weights.sum(-1), torch.full((64,), c.routed_scaling_factor))
        bias = w["model.layers.1.mlp.gate.e_score_correction_bias"]
        scores = (x @ w["model.layers.1.mlp.gate.weight"].T).sigmoid()
        torch.testing.assert_close(weights, scores.gather(1, ids) / scores.gather(1, ids).sum(
            -1, keepdim=True) * c.routed_scaling_factor)
        self.assertGreater(float(bias.abs().max()), 0.05)  # the bias is in play

    def test_greedy_softmax_unnormalized(self):
        c, w = load("deepseek-v2-lite-tiny")
        x = torch.randn(32, c.hidden_size, generator=torch.Generator().manual_seed(3))
        ids, weights = ref.route(c, w, "model.layers.1.mlp.", x)
        probs = (x @ w["model.layers.1.mlp.gate.weight"].T).softmax(-1)
        top = probs.topk(c.top_k, dim=-1)
        torch.testing.assert_close(weights.sort(-1).values, top.values.sort(-1).values)
        self.assertTrue(bool((weights.sum(-1) < 1).all()))


if __name__ == "__main__":
    unittest.main()
