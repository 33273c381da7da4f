// ModelConfig: the architecture hyper-parameters of a model, parsed from HF config.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace surge {

enum class Architecture { kLlama, kQwen2 };

struct RopeScaling {
  enum class Type { kNone, kLinear, kLlama3 };
  Type type = Type::kNone;
  double factor = 1.0;
  // llama3 only.
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

struct ModelConfig {
  Architecture architecture = Architecture::kLlama;
  std::string model_type;  // as written in config.json: "llama", "qwen2"
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
  bool qkv_bias = false;  // Qwen2 always; Llama when attention_bias is true
  bool o_bias = false;    // Llama attention_bias also biases o_proj
  bool mlp_bias = false;
  int32_t bos_token_id = -1;               // -1: none
  std::vector<int32_t> eos_token_ids;      // config.json's eos_token_id (int or list)
};

// Parses config.json text. `path` only names the file in error messages. Keys config.json
// omits (or sets to null) take transformers' defaults for that model_type (e.g. Llama:
// bos 1, eos 2, 2048 positions; Qwen2: no bos/eos, 32768 positions). Errors start with
// `path` and name the key: INVALID_ARGUMENT for missing, ill-typed or out-of-range values
// and malformed JSON; UNIMPLEMENTED for an unsupported model_type, architectures class,
// hidden_act, rope_scaling type or Qwen2 sliding window.
StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text, const std::string& path);

// Reads and parses DIR/config.json.
StatusOr<ModelConfig> LoadModelConfig(const std::string& model_dir);

}  // namespace surge
