#include "model/config.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/json_depth.h"
#include "base/mapped_file.h"
#include "model/config_reader.h"

namespace surge {
namespace {

using config_internal::ConfigReader;
using config_internal::Json;
using config_internal::JsonTypeName;
using config_internal::kMaxDim;

// model_type decides the architecture; `architectures`, when present, must name the
// causal-LM class (a LlamaForSequenceClassification checkpoint has no lm_head).
void ReadArchitecture(ConfigReader& reader, ModelConfig* config) {
  if (!reader.Require("model_type")) return;
  reader.String("model_type", &config->model_type);
  if (!reader.ok()) return;
  std::string expected_class;
  if (config->model_type == "llama") {
    config->architecture = Architecture::kLlama;
    expected_class = "LlamaForCausalLM";
  } else if (config->model_type == "qwen2") {
    config->architecture = Architecture::kQwen2;
    expected_class = "Qwen2ForCausalLM";
  } else if (config->model_type == "qwen3") {
    config->architecture = Architecture::kQwen3;
    expected_class = "Qwen3ForCausalLM";
  } else if (config->model_type == "deepseek_v2") {
    config->architecture = Architecture::kDeepseekV2;
    expected_class = "DeepseekV2ForCausalLM";
  } else if (config->model_type == "deepseek_v3") {
    config->architecture = Architecture::kDeepseekV3;
    expected_class = "DeepseekV3ForCausalLM";
  } else {
    return reader.Fail(StatusCode::kUnimplemented,
                       "unsupported model_type '" + config->model_type +
                           "' (supported: llama, qwen2, qwen3, deepseek_v2, deepseek_v3)");
  }
  if (!reader.Has("architectures")) return;
  const Json& classes = reader.At("architectures");
  if (!classes.is_array()) return reader.WrongType("architectures", "a list", classes);
  for (const Json& name : classes) {
    if (name.is_string() && name.get<std::string>() == expected_class) return;
  }
  reader.Fail(StatusCode::kUnimplemented, "unsupported architectures " + classes.dump() +
                                              " for model_type '" + config->model_type +
                                              "' (supported: " + expected_class + ")");
}

void ReadLlama3RopeScaling(ConfigReader& reader, RopeScaling* rope) {
  if (reader.Require("factor")) reader.Positive("factor", &rope->factor);
  if (reader.Require("low_freq_factor")) reader.Positive("low_freq_factor", &rope->low_freq_factor);
  if (reader.Require("high_freq_factor")) {
    reader.Positive("high_freq_factor", &rope->high_freq_factor);
  }
  if (reader.Require("original_max_position_embeddings")) {
    reader.Int("original_max_position_embeddings", &rope->original_max_position_embeddings);
  }
  // The llama3 ramp divides by (high_freq_factor - low_freq_factor).
  if (reader.ok() && rope->high_freq_factor <= rope->low_freq_factor) {
    reader.Fail(StatusCode::kInvalidArgument,
                "'rope_scaling.high_freq_factor' must be greater than 'low_freq_factor'");
  }
}

// null/absent, "default", "linear" and "llama3", and "yarn" for DeepSeek (whose attention
// carries YaRN's scales); the rest (dynamic, longrope...), and yarn elsewhere, change
// attention in ways the forward pass does not implement, so they are refused.
void ReadRopeScaling(ConfigReader& outer, const std::string& path, Status* status,
                     bool deepseek, RopeScaling* rope) {
  if (!outer.Has("rope_scaling")) return;
  const Json& object = outer.At("rope_scaling");
  if (!object.is_object()) return outer.WrongType("rope_scaling", "an object", object);
  ConfigReader reader(object, path, status, "rope_scaling.");
  // Newer configs say "rope_type", older ones "type"; transformers accepts both.
  std::string type_key = reader.Has("rope_type") ? "rope_type" : "type";
  if (!reader.Require(type_key)) return;
  std::string type;
  reader.String(type_key, &type);
  if (!reader.ok()) return;
  if (type == "default") {
    rope->type = RopeScaling::Type::kNone;
  } else if (type == "linear") {
    rope->type = RopeScaling::Type::kLinear;
    if (reader.Require("factor")) reader.Positive("factor", &rope->factor);
  } else if (type == "llama3") {
    rope->type = RopeScaling::Type::kLlama3;
    ReadLlama3RopeScaling(reader, rope);
  } else if (type == "yarn" && deepseek) {
    config_internal::ReadYarnRopeScaling(reader, rope);
  } else {
    reader.Fail(StatusCode::kUnimplemented,
                "unsupported rope_scaling type '" + type + "' (supported: default, linear, llama3" +
                    (deepseek ? ", yarn)" : "; yarn for deepseek_v2/v3 only)"));
  }
}

// Absent keys keep the architecture's defaults; an explicit null means "none".
void ReadSpecialTokens(ConfigReader& reader, ModelConfig* config) {
  if (reader.IsNull("bos_token_id")) config->bos_token_id = -1;
  if (reader.IsNull("eos_token_id")) config->eos_token_ids.clear();
  int64_t bos = config->bos_token_id;
  reader.Int("bos_token_id", &bos, 0, kMaxDim);
  config->bos_token_id = static_cast<int32_t>(bos);
  if (!reader.Has("eos_token_id")) return;
  const Json& eos = reader.At("eos_token_id");
  if (eos.is_number_integer()) {
    int64_t id = 0;
    reader.Int("eos_token_id", &id, 0, kMaxDim);
    config->eos_token_ids = {static_cast<int32_t>(id)};
    return;
  }
  if (!eos.is_array()) return reader.WrongType("eos_token_id", "an integer or a list", eos);
  config->eos_token_ids.clear();
  for (const Json& id : eos) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > kMaxDim) {
      return reader.Fail(StatusCode::kInvalidArgument,
                         "key 'eos_token_id' must hold token ids, got " + eos.dump());
    }
    config->eos_token_ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
}

// Defaults of transformers' LlamaConfig / Qwen2Config (and of DeepSeek's configuration_
// deepseek.py) for keys config.json may omit.
void SetArchitectureDefaults(ModelConfig* config) {
  config->rms_norm_eps = 1e-6;
  config->rope_theta = 10000.0;
  config->tie_word_embeddings = false;
  if (config->architecture == Architecture::kLlama) {
    config->max_position_embeddings = 2048;
    config->bos_token_id = 1;
    config->eos_token_ids = {2};
  } else if (config->architecture == Architecture::kDeepseekV2) {
    config->max_position_embeddings = 2048;  // DeepseekV2Config
    config->bos_token_id = 100000;
    config->eos_token_ids = {100001};
  } else if (config->architecture == Architecture::kDeepseekV3) {
    config->max_position_embeddings = 4096;  // DeepseekV3Config
    config->bos_token_id = 0;
    config->eos_token_ids = {1};
  } else {
    config->max_position_embeddings = 32768;
    config->bos_token_id = -1;  // Qwen2Config/Qwen3Config set none; tokenizer_config.json does
    config->eos_token_ids.clear();
    // Qwen3Config's head_dim defaults to 128, not hidden_size / num_attention_heads.
    if (config->architecture == Architecture::kQwen3) config->head_dim = 128;
  }
}

void ReadDimensions(ConfigReader& reader, ModelConfig* config) {
  const std::pair<const char*, int64_t*> required[] = {
      {"hidden_size", &config->hidden_size},
      {"intermediate_size", &config->intermediate_size},
      {"num_hidden_layers", &config->num_layers},
      {"num_attention_heads", &config->num_heads},
      {"vocab_size", &config->vocab_size}};
  for (auto [key, out] : required) {
    if (reader.Require(key)) reader.Int(key, out);
  }
  if (!reader.ok()) return;
  config->num_kv_heads = config->num_heads;
  reader.Int("num_key_value_heads", &config->num_kv_heads);
  reader.Int("head_dim", &config->head_dim);
  reader.Int("max_position_embeddings", &config->max_position_embeddings);
  reader.Positive("rms_norm_eps", &config->rms_norm_eps);
  reader.Positive("rope_theta", &config->rope_theta);
  reader.Bool("tie_word_embeddings", &config->tie_word_embeddings);
}

// Llama's attention_bias puts biases on q, k, v and o; Qwen2 always has q/k/v biases and
// neither o nor MLP biases (its config has no such keys). Qwen3 biases q, k, v and o
// only under attention_bias (default false), never the MLP, and norms q/k per head.
void ReadBiasesAndActivation(ConfigReader& reader, ModelConfig* config) {
  const bool qwen = config->architecture == Architecture::kQwen2 ||
                    config->architecture == Architecture::kQwen3;
  if (qwen) {
    bool sliding_window = false;
    reader.Bool("use_sliding_window", &sliding_window);
    if (sliding_window) {
      reader.Fail(StatusCode::kUnimplemented, "unsupported 'use_sliding_window': true");
    }
  }
  if (config->architecture == Architecture::kQwen2) {
    config->qkv_bias = true;
  } else {
    bool attention_bias = false;
    reader.Bool("attention_bias", &attention_bias);
    config->qkv_bias = config->o_bias = attention_bias;
    if (!qwen) reader.Bool("mlp_bias", &config->mlp_bias);
  }
  config->qk_norm = config->architecture == Architecture::kQwen3;
  std::string act = "silu";
  reader.String("hidden_act", &act);
  // transformers maps "swish" to the same SiLU function.
  if (reader.ok() && act != "silu" && act != "swish") {
    reader.Fail(StatusCode::kUnimplemented,
                "unsupported hidden_act '" + act + "' (supported: silu)");
  }
}

Status ValidateShapes(const ModelConfig& c, const std::string& path) {
  if (c.num_heads % c.num_kv_heads != 0) {
    return InvalidArgumentError(path + ": num_attention_heads (" + std::to_string(c.num_heads) +
                                ") is not a multiple of num_key_value_heads (" +
                                std::to_string(c.num_kv_heads) + ")");
  }
  if (c.head_dim % 2 != 0) {
    return InvalidArgumentError(path + ": head_dim " + std::to_string(c.head_dim) +
                                " is odd; rotary embeddings rotate pairs");
  }
  return OkStatus();
}

StatusOr<ModelConfig> ParseObject(const Json& root, const std::string& path) {
  if (!root.is_object()) {
    return InvalidArgumentError(path + ": not a JSON object (got " + JsonTypeName(root) + ")");
  }
  Status status;
  ConfigReader reader(root, path, &status);
  ModelConfig config;
  ReadArchitecture(reader, &config);
  RETURN_IF_ERROR(status);
  SetArchitectureDefaults(&config);
  ReadDimensions(reader, &config);
  ReadBiasesAndActivation(reader, &config);
  const bool deepseek = IsDeepseek(config);
  ReadRopeScaling(reader, path, &status, deepseek, &config.rope_scaling);
  ReadSpecialTokens(reader, &config);
  config_internal::ReadQuantizationConfig(reader, path, &status, &config);
  if (deepseek) config_internal::ReadDeepseekFields(reader, &config);
  RETURN_IF_ERROR(status);
  if (deepseek) {
    // MLA heads have no single head_dim (q and k are qk_nope + qk_rope wide, v is
    // v_head_dim) and no KV-head grouping: the dense shape checks below do not apply.
    config.head_dim = config.mla->q_head_dim();
    RETURN_IF_ERROR(config_internal::ValidateDeepseek(config, path));
    return config;
  }
  if (config.head_dim == 0) {
    if (config.hidden_size % config.num_heads != 0) {
      return InvalidArgumentError(path + ": hidden_size (" + std::to_string(config.hidden_size) +
                                  ") is not a multiple of num_attention_heads (" +
                                  std::to_string(config.num_heads) + ") and head_dim is not given");
    }
    config.head_dim = config.hidden_size / config.num_heads;
  }
  RETURN_IF_ERROR(ValidateShapes(config, path));
  return config;
}

}  // namespace

bool IsDeepseek(const ModelConfig& config) {
  return config.architecture == Architecture::kDeepseekV2 ||
         config.architecture == Architecture::kDeepseekV3;
}

bool IsMoeLayer(const ModelConfig& config, int64_t layer) {
  if (!config.moe) return false;
  return layer >= config.moe->first_k_dense_replace && layer % config.moe->moe_layer_freq == 0;
}

RopeParams RopeParamsFor(const ModelConfig& c) {
  RopeParams p;
  p.head_dim = c.mla ? c.mla->qk_rope_head_dim : c.head_dim;
  p.theta = c.rope_theta;
  const RopeScaling& s = c.rope_scaling;
  p.factor = s.factor;
  p.low_freq_factor = s.low_freq_factor;
  p.high_freq_factor = s.high_freq_factor;
  p.original_max_position_embeddings = static_cast<double>(s.original_max_position_embeddings);
  p.beta_fast = s.beta_fast;
  p.beta_slow = s.beta_slow;
  p.mscale = s.mscale;
  p.mscale_all_dim = s.mscale_all_dim;
  switch (s.type) {
    case RopeScaling::Type::kNone: p.kind = RopeKind::kDefault; break;
    case RopeScaling::Type::kLinear: p.kind = RopeKind::kLinear; break;
    case RopeScaling::Type::kLlama3: p.kind = RopeKind::kLlama3; break;
    case RopeScaling::Type::kYarn: p.kind = RopeKind::kYarn; break;
  }
  return p;
}

double AttentionSoftmaxScale(const ModelConfig& c) {
  const int64_t q_head_dim = c.mla ? c.mla->q_head_dim() : c.head_dim;
  return std::pow(static_cast<double>(q_head_dim), -0.5) *
         RopeSoftmaxScaleFactor(RopeParamsFor(c));
}

StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text, const std::string& path) {
  if (!JsonDepthWithin(json_text)) return InvalidArgumentError(path + ": JSON nested too deep");
  // nlohmann reports errors by exception; they stop here and become a Status.
  try {
    Json root = Json::parse(json_text);
    return ParseObject(root, path);
  } catch (const Json::exception& e) {
    return InvalidArgumentError(path + ": malformed JSON: " + e.what());
  }
}

StatusOr<ModelConfig> LoadModelConfig(const std::string& model_dir) {
  std::string path = model_dir + "/config.json";
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseModelConfig(text, path);
}

}  // namespace surge
