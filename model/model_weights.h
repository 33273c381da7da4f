// ModelWeights: everything a decoder's forward pass reads and never writes -- the
// embeddings, each layer's norms and linear layers (model/decoder_parts.h), the final
// norm, lm_head and RoPE's frequencies -- filled once by the loader (model/weight_loader.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/decoder_parts.h"

namespace surge {

struct LayerWeights {
  std::vector<float> input_norm;  // [hidden_size]
  // GQA: q, k, v rows stacked: [q_size + 2 * kv_size, hidden_size]. MLA: the query
  // rows then kv_a's: [mla_first_rows(), hidden_size] (MlaWeights).
  Linear qkv;
  std::vector<float> q_norm;  // [head_dim]: Qwen3's per-head RMSNorm of q; empty otherwise
  std::vector<float> k_norm;  // [head_dim]: the same for k
  std::unique_ptr<MlaWeights> mla;  // MLA layers only
  Linear o_proj;                    // [hidden_size, attention_output_size()]
  std::vector<float> post_attention_norm;  // [hidden_size]
  // The dense MLP -- or an MoE layer's shared experts (empty when it has none):
  Linear gate_up;  // gate rows, then up rows: [2 * inter, hidden_size]
  Linear down;     // [hidden_size, inter]
  std::unique_ptr<MoeWeights> moe;  // MoE layers only: the routed experts
};

struct ModelWeights {
  std::vector<float> inv_freq;       // [rope_dim() / 2]: RoPE inverse frequencies
  float rope_cos_sin_scale = 1.0f;   // YaRN's mscale ratio; 1 otherwise
  std::vector<float> embed_tokens;   // [vocab_size, hidden_size]
  std::vector<LayerWeights> layers;  // [num_layers]
  std::vector<float> final_norm;     // [hidden_size]
  Linear lm_head;                    // [vocab_size, hidden_size]; a packed copy when tied
};

// DeepSeek-V3's multi-token-prediction module (model.layers.N.*, N = num_hidden_layers):
// an input projection of [enorm(embedding), hnorm(hidden)] and a decoder of one layer
// with its own head. The order of the two halves is the one DeepSeek's checkpoints are
// served with (vLLM's and SGLang's deepseek MTP): embedding first.
struct MtpWeights {
  std::vector<float> embed_tokens;  // [vocab_size, hidden_size]: its own; empty: the model's
  std::vector<float> enorm;         // [hidden_size]
  std::vector<float> hnorm;         // [hidden_size]
  Linear eh_proj;                   // [hidden_size, 2 * hidden_size]
  // layers = {the MTP layer}, final_norm = shared_head.norm, lm_head = shared_head.head;
  // RoPE as the model's; embed_tokens unused (the projection is the layer's input).
  ModelWeights decoder;
};

// Bytes of all linear-layer weights (what one decode step streams from memory).
int64_t LinearWeightBytes(const ModelWeights& weights);
// The formats the linear layers are held in, e.g. "int8" or "int4-g32+int8".
std::string LinearWeightFormats(const ModelWeights& weights);

}  // namespace surge
