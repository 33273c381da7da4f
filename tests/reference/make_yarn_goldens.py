#!/usr/bin/python3
"""Writes (or with --check, verifies) tests/data/deepseek_yarn_rope.json: the YaRN rotary
tables of tests/reference/deepseek_reference.py (rope_tables, the spec), which the C++
tests (kernels/rope_test.cc, model/config_deepseek_test.cc) compare surge's against.

Cases: the two tiny presets of tools/tiny_deepseek.py, the published rope configs of
DeepSeek-V3 (also R1) and DeepSeek-V2-Lite, one relying on DeepSeek's defaults and
one whose correction range collapses.

  /usr/bin/python3 tests/reference/make_yarn_goldens.py            # rewrite the JSON
  /usr/bin/python3 tests/reference/make_yarn_goldens.py --check    # ctest deepseek_yarn_goldens
"""
import argparse
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import deepseek_reference as ref  # noqa: E402
import tiny_deepseek  # noqa: E402

OUT = os.path.join(ROOT, "tests", "data", "deepseek_yarn_rope.json")
POSITIONS = [0, 1, 3, 17, 100, 511, 4095]


def real(nope, rope, mscale, mscale_all_dim):
    """config.json fields of the published checkpoints (rope part only)."""
    return dict(qk_nope_head_dim=nope, qk_rope_head_dim=rope, rope_theta=10000.0,
                rope_scaling=dict(type="yarn", factor=40, original_max_position_embeddings=4096,
                                  beta_fast=32, beta_slow=1, mscale=mscale,
                                  mscale_all_dim=mscale_all_dim))


def cases():
    out = {name: dict(p) for name, p in tiny_deepseek.PRESETS.items() if name.endswith("-tiny")}
    out["deepseek-v3"] = real(128, 64, 1.0, 1.0)
    out["deepseek-v2-lite"] = real(128, 64, 0.707, 0.707)
    # DeepSeek's defaults (beta 32/1, mscale 1, mscale_all_dim 0): cos/sin scaled by
    # mscale(factor, 1), the softmax scale not corrected.
    out["yarn-defaults"] = dict(qk_nope_head_dim=64, qk_rope_head_dim=32, rope_theta=50000.0,
                                rope_scaling=dict(type="yarn", factor=4.0,
                                                  original_max_position_embeddings=256))
    # A range clamped to low == high == dim - 1, where DeepSeek's code adds 0.001.
    out["yarn-clamped"] = dict(qk_nope_head_dim=8, qk_rope_head_dim=8, rope_theta=10000.0,
                               rope_scaling=dict(type="yarn", factor=2.0, mscale_all_dim=0.5,
                                                 original_max_position_embeddings=10**10))
    return out


class Fields:
    """The attributes rope_tables reads."""

    def __init__(self, d):
        self.rope, self.nope = d["qk_rope_head_dim"], d["qk_nope_head_dim"]
        self.rope_theta = d.get("rope_theta", 10000.0)
        self.rope_scaling = d.get("rope_scaling")


def golden(d):
    c = Fields(d)
    cos, sin, softmax_scale = ref.rope_tables(c, max(POSITIONS) + 1)
    s, half = c.rope_scaling, c.rope // 2
    orig = s["original_max_position_embeddings"]
    low = max(math.floor(ref.yarn_correction_dim(s.get("beta_fast", 32), c.rope, c.rope_theta,
                                                 orig)), 0)
    high = min(math.ceil(ref.yarn_correction_dim(s.get("beta_slow", 1), c.rope, c.rope_theta,
                                                 orig)), c.rope - 1)
    factor, mscale, all_dim = s["factor"], s.get("mscale", 1), s.get("mscale_all_dim", 0)
    return dict(
        head_dim=c.rope, q_head_dim=c.nope + c.rope, theta=c.rope_theta, factor=factor,
        original_max_position_embeddings=orig, beta_fast=s.get("beta_fast", 32),
        beta_slow=s.get("beta_slow", 1), mscale=mscale, mscale_all_dim=all_dim,
        correction_low=low, correction_high=high + (0.001 if low == high else 0),
        inv_freq=inv_freq_of(c).tolist(),
        cos_sin_scale=ref.yarn_mscale(factor, mscale) / ref.yarn_mscale(factor, all_dim),
        softmax_scale=softmax_scale, positions=POSITIONS,
        cos=[cos[p, :half].tolist() for p in POSITIONS],
        sin=[sin[p, :half].tolist() for p in POSITIONS])


def inv_freq_of(c):
    """The inverse frequencies rope_tables builds (it returns only cos/sin), captured from
    its torch.outer(positions, inv_freq) call so that no formula is restated here."""
    import torch
    captured = {}
    real_outer = torch.outer

    def outer(a, b):
        captured["inv_freq"] = b.clone()
        return real_outer(a, b)

    torch.outer = outer
    try:
        ref.rope_tables(c, 1)
    finally:
        torch.outer = real_outer
    return captured["inv_freq"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the checked-in JSON")
    args = parser.parse_args()
    data = {name: golden(d) for name, d in cases().items()}
    text = json.dumps(data, indent=1) + "\n"
    if not args.check:
        with open(OUT, "w") as f:
            f.write(text)
        return 0
    with open(OUT) as f:
        if json.load(f) != json.loads(text):
            print(f"{OUT} differs from deepseek_reference.rope_tables; rerun "
                  "tests/reference/make_yarn_goldens.py", file=sys.stderr)
            return 1
    print(f"{OUT}: {len(data)} cases match the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
