// ModelConfig: the architecture hyper-parameters of a model, parsed from HF config.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/rope.h"

namespace surge {

enum class Architecture { kLlama, kQwen2, kQwen3, kDeepseekV2, kDeepseekV3 };

struct RopeScaling {
  enum class Type { kNone, kLinear, kLlama3, kYarn };
  Type type = Type::kNone;
  double factor = 1.0;
  // llama3 only.
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;  // llama3 and yarn
  // yarn only (accepted for DeepSeek models only), with DeepSeek's defaults.
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  double mscale = 1.0;
  double mscale_all_dim = 0.0;
};

// Multi-head Latent Attention (DeepSeek V2/V3): per token one latent of kv_lora_rank
// plus one shared rope key of qk_rope_head_dim; per head q/k = [nope, rope], v_head_dim.
struct MlaConfig {
  int64_t q_lora_rank = 0;  // 0: q_lora_rank null (V2-Lite): q_proj, no q_a/q_b
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  int64_t q_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

// The most routed experts a config may have (DeepSeek-V3 has 256).
constexpr int64_t kMaxRoutedExperts = 1024;

// DeepSeek's Mixture-of-Experts MLP and its router (see tests/reference/deepseek_reference.py).
struct MoeConfig {
  enum class Scoring { kSoftmax, kSigmoid };
  enum class TopkMethod { kGreedy, kGroupLimitedGreedy, kNoauxTc };
  int64_t n_routed_experts = 0;
  int64_t n_shared_experts = 0;  // 0: none (null or absent)
  int64_t num_experts_per_tok = 0;
  int64_t moe_intermediate_size = 0;
  int64_t first_k_dense_replace = 0;
  int64_t moe_layer_freq = 1;
  Scoring scoring_func = Scoring::kSoftmax;
  TopkMethod topk_method = TopkMethod::kGreedy;
  // The router has an e_score_correction_bias: always with noaux_tc from config.json;
  // a llama.cpp deepseek2 GGUF may group-limit without one (llama.cpp scores groups as
  // noaux_tc does, bias or not).
  bool score_correction_bias = false;
  int64_t n_group = 1;     // only group-limited methods use the groups
  int64_t topk_group = 1;
  bool norm_topk_prob = false;
  double routed_scaling_factor = 1.0;
};

// quantization_config of an FP8 checkpoint (DeepSeek-V3/R1): float8_e4m3fn weights with
// a weight_scale_inv per block. Recorded; the weight loader dequantizes.
struct Fp8Quantization {
  int64_t block_rows = 128;  // weight_block_size[0]
  int64_t block_cols = 128;  // weight_block_size[1]
  std::string activation_scheme;  // "dynamic" in V3; informational
};

struct ModelConfig {
  Architecture architecture = Architecture::kLlama;
  std::string model_type;  // as written in config.json: "llama", "qwen2", "qwen3"
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // == num_heads unless GQA
  int64_t head_dim = 0;      // hidden_size / num_heads unless config.json says otherwise
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;  // Qwen2 always; Llama and Qwen3 when attention_bias is true
  bool o_bias = false;    // Llama's and Qwen3's attention_bias also biases o_proj
  // Qwen3: each head's q and k go through an RMSNorm of head_dim (self_attn.q_norm /
  // k_norm) after the projection and before RoPE.
  bool qk_norm = false;
  bool mlp_bias = false;
  int32_t bos_token_id = -1;               // -1: none
  std::vector<int32_t> eos_token_ids;      // config.json's eos_token_id (int or list)
  // DeepSeek only; dense models leave them empty. head_dim is then mla->q_head_dim().
  std::optional<MlaConfig> mla;
  std::optional<MoeConfig> moe;  // empty also for a DeepSeek model without routed experts
  int64_t num_nextn_predict_layers = 0;  // V3's MTP layers, after num_hidden_layers
  std::optional<Fp8Quantization> fp8;
  // A BERT-family sentence encoder (model/bert_model.h): bidirectional attention over a
  // whole input, no lm_head and no KV cache; it serves embeddings only.
  bool is_encoder = false;
};

bool IsDeepseek(const ModelConfig& config);

// Layer i has an MoE MLP: routed experts exist, i >= first_k_dense_replace and
// i % moe_layer_freq == 0 (DeepSeek's rule); otherwise a dense MLP of intermediate_size.
bool IsMoeLayer(const ModelConfig& config, int64_t layer);

// The rotary parameters of the config: head_dim is qk_rope_head_dim under MLA.
RopeParams RopeParamsFor(const ModelConfig& config);

// The attention softmax scale: q_head_dim^-0.5 (head_dim for dense models), times
// YaRN's mscale(factor, mscale_all_dim)^2 when mscale_all_dim is set (DeepSeek).
double AttentionSoftmaxScale(const ModelConfig& config);

// Parses config.json text. `path` only names the file in error messages. Keys config.json
// omits (or sets to null) take transformers' defaults for that model_type (e.g. Llama:
// bos 1, eos 2, 2048 positions; Qwen2/Qwen3: no bos/eos, 32768 positions; Qwen3: head_dim 128). Errors start with
// `path` and name the key: INVALID_ARGUMENT for missing, ill-typed or out-of-range values
// and malformed JSON; UNIMPLEMENTED for an unsupported model_type, architectures class,
// hidden_act, rope_scaling type or Qwen2/Qwen3 sliding window. deepseek_v2 / deepseek_v3 also
// read the MLA, MoE and YaRN fields and an FP8 quantization_config, and validate them
// (INVALID_ARGUMENT naming the field; UNIMPLEMENTED for unknown scoring_func/topk_method).
StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text, const std::string& path);

// Reads and parses DIR/config.json.
StatusOr<ModelConfig> LoadModelConfig(const std::string& model_dir);

}  // namespace surge
