// The weights of a decoder layer's blocks: linear layers, MLA's projections beyond the
// first one, and the routed experts of an MoE MLP (model/model_weights.h assembles them).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/packed_weight.h"
#include "kernels/weight_matrix.h"

namespace surge {

// A linear layer's weight (in the load format) and optional f32 bias.
struct Linear {
  PackedWeight weight;      // [out_features, in_features]
  std::vector<float> bias;  // [out_features]; empty when the layer has none
  const WeightMatrix& matrix() const { return weight.matrix(); }
  const float* bias_or_null() const { return bias.empty() ? nullptr : bias.data(); }
  int64_t size_bytes() const { return weight.empty() ? 0 : weight.size_bytes(); }
};

// Multi-head Latent Attention. The layer's first projection (Layer::qkv) stacks the
// query rows (q_proj, or q_a_proj under q_lora_rank) and kv_a_proj_with_mqa's
// [latent, k_pe] rows. Rope rows of q and k_pe are stored de-interleaved (pair i at
// i and i + rope/2), so the rotate-half RoPE kernel applies; dot products are unchanged.
// kv_b_proj is split per head: W_UK[h] [nope, L] and W_UV[h] [v, L].
struct MlaWeights {
  std::vector<float> q_a_norm;   // [q_lora_rank]; empty when q_lora_rank is null
  Linear q_b;                    // [num_heads * q_head_dim, q_lora_rank]; empty when null
  std::vector<float> kv_a_norm;  // [kv_lora_rank]
  // Absorbed mode, one per head: W_UK[h]^T [kv_lora_rank, nope] turns q_nope into a
  // latent query; W_UV[h] [v_head_dim, kv_lora_rank] turns the latent output into v.
  std::vector<PackedWeight> k_up_transposed;
  std::vector<PackedWeight> v_up;
  // Expanded mode: all heads' W_UK [num_heads * nope, L] and W_UV [num_heads * v, L].
  Linear k_up_all;
  Linear v_up_all;
};

// The routed experts of an MoE MLP; shared experts are the layer's dense MLP.
struct MoeWeights {
  PackedWeight router;             // f32 [n_routed_experts, hidden_size]: mlp.gate.weight
  std::vector<float> score_bias;   // [n_routed_experts]: noaux_tc's e_score_correction_bias
  struct Expert {
    Linear gate_up;  // [2 * moe_intermediate_size, hidden_size]
    Linear down;     // [hidden_size, moe_intermediate_size]
  };
  std::vector<Expert> experts;     // [n_routed_experts]
};

}  // namespace surge
