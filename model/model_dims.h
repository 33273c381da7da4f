// Sizes that follow from a ModelConfig and that the loader, the forward pass and the KV
// cache share: projection widths, the widest MLP, RoPE's width, the KV layout.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kv/kv_layout.h"
#include "model/config.h"

namespace surge {

inline int64_t QSize(const ModelConfig& c) { return c.num_heads * c.head_dim; }
inline int64_t KvSize(const ModelConfig& c) { return c.num_kv_heads * c.head_dim; }

// MLA: the query columns of LayerWeights::qkv (q_lora_rank, or num_heads * q_head_dim).
inline int64_t MlaQueryCols(const ModelConfig& c) {
  const MlaConfig& m = *c.mla;
  return m.q_lora_rank > 0 ? m.q_lora_rank : c.num_heads * m.q_head_dim();
}

// Columns of the first projection's output (LayerWeights::qkv).
inline int64_t QkvSize(const ModelConfig& c) {
  if (!c.mla) return QSize(c) + 2 * KvSize(c);
  return MlaQueryCols(c) + c.mla->kv_lora_rank + c.mla->qk_rope_head_dim;
}

// o_proj's input: num_heads * v_head_dim under MLA.
inline int64_t AttentionOutputSize(const ModelConfig& c) {
  return c.mla ? c.num_heads * c.mla->v_head_dim : QSize(c);
}

// The widest dense MLP (dense layers, shared experts).
inline int64_t MaxIntermediateSize(const ModelConfig& c) {
  int64_t inter = c.intermediate_size;
  if (c.moe) inter = std::max(inter, c.moe->moe_intermediate_size * c.moe->n_shared_experts);
  return inter;
}

// The context length at which one token's attention (QK and PV over that many keys) costs
// about what its linear layers do: 2 FLOPs per weight of a layer's projections and (active)
// MLP, against 4 per key per head dimension -- MLA counted in its absorbed form. An
// estimate for the scheduler's prefill slices (SchedulerOptions), not an exact count.
inline int64_t AttentionCostCrossover(const ModelConfig& c) {
  const int64_t hidden = c.hidden_size;
  int64_t mlp = 3 * hidden * c.intermediate_size;
  if (c.moe) {
    mlp = 3 * hidden * c.moe->moe_intermediate_size * (c.moe->num_experts_per_tok + c.moe->n_shared_experts);
  }
  const int64_t linear = hidden * QkvSize(c) + AttentionOutputSize(c) * hidden + mlp;
  const int64_t per_key = c.mla ? c.num_heads * (2 * c.mla->kv_lora_rank + c.mla->qk_rope_head_dim)
                                : 2 * c.num_heads * c.head_dim;
  return std::max<int64_t>(1, 2 * linear / (2 * per_key));
}

// head_dim, or qk_rope_head_dim under MLA.
inline int64_t RopeDim(const ModelConfig& c) { return c.mla ? c.mla->qk_rope_head_dim : c.head_dim; }

// The KV cache layout for this model: rows of head_dim values in `dtype`; MLA stores one
// latent row per token: [kv_lora_rank, qk_rope_head_dim].
inline KvLayout KvLayoutFor(const ModelConfig& c, int32_t block_size, KvDType dtype) {
  KvLayout layout;
  layout.num_layers = static_cast<int32_t>(c.num_layers);
  layout.num_kv_heads = static_cast<int32_t>(c.num_kv_heads);
  layout.head_dim = static_cast<int32_t>(c.head_dim);
  if (c.mla) {
    layout.num_kv_heads = 1;
    layout.head_dim = static_cast<int32_t>(c.mla->kv_lora_rank + c.mla->qk_rope_head_dim);
    layout.latent = true;
  }
  layout.block_size = block_size;
  layout.dtype = dtype;
  return layout;
}

}  // namespace surge
