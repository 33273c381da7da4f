#include "model/config.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"

namespace surge {
namespace {

using Json = nlohmann::json;

// Dimensions and token ids feed int32 arithmetic downstream (token ids are int32).
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

std::string JsonTypeName(const Json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "float";
  return value.type_name();
}

// Typed access to one JSON object. The first error wins and is kept in a Status shared by
// the readers of nested objects, so the parser reads as a flat list of fields instead of
// one early return per key. Errors start with the file path and name the key.
class ConfigReader {
 public:
  ConfigReader(const Json& object, const std::string& path, Status* status,
               std::string prefix = "")
      : object_(object), path_(path), status_(status), prefix_(std::move(prefix)) {}

  bool ok() const { return status_->ok(); }
  void Fail(StatusCode code, const std::string& message) {
    if (status_->ok()) *status_ = Status(code, path_ + ": " + message);
  }
  // HF treats an explicit null like an absent key for optional fields ("use the default").
  bool Has(const std::string& key) const {
    auto it = object_.find(key);
    return it != object_.end() && !it->is_null();
  }
  bool IsNull(const std::string& key) const {
    auto it = object_.find(key);
    return it != object_.end() && it->is_null();
  }
  const Json& At(const std::string& key) const { return object_.at(key); }
  std::string Name(const std::string& key) const { return "'" + prefix_ + key + "'"; }
  bool Require(const std::string& key) {
    if (Has(key)) return true;
    Fail(StatusCode::kInvalidArgument, "missing key " + Name(key));
    return false;
  }
  void WrongType(const std::string& key, const std::string& expected, const Json& value) {
    Fail(StatusCode::kInvalidArgument,
         "key " + Name(key) + " must be " + expected + ", got " + JsonTypeName(value));
  }

  // Optional getters leave *out untouched when the key is absent or null.
  void Int(const std::string& key, int64_t* out, int64_t min = 1, int64_t max = kMaxDim) {
    if (!Has(key)) return;
    const Json& value = At(key);
    if (!value.is_number_integer()) return WrongType(key, "an integer", value);
    // An unsigned value above the int64 range is above `max` too.
    bool too_big = value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(max);
    int64_t v = too_big ? max : value.get<int64_t>();
    if (too_big || v < min || v > max) {
      return Fail(StatusCode::kInvalidArgument,
                  "key " + Name(key) + " must be in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "], got " + value.dump());
    }
    *out = v;
  }
  // A finite number > 0.
  void Positive(const std::string& key, double* out) {
    if (!Has(key)) return;
    const Json& value = At(key);
    if (!value.is_number()) return WrongType(key, "a number", value);
    double v = value.get<double>();
    if (!std::isfinite(v) || v <= 0) {
      return Fail(StatusCode::kInvalidArgument,
                  "key " + Name(key) + " must be > 0, got " + value.dump());
    }
    *out = v;
  }
  void Bool(const std::string& key, bool* out) {
    if (!Has(key)) return;
    const Json& value = At(key);
    if (!value.is_boolean()) return WrongType(key, "a boolean", value);
    *out = value.get<bool>();
  }
  void String(const std::string& key, std::string* out) {
    if (!Has(key)) return;
    const Json& value = At(key);
    if (!value.is_string()) return WrongType(key, "a string", value);
    *out = value.get<std::string>();
  }

 private:
  const Json& object_;
  const std::string& path_;
  Status* status_;
  std::string prefix_;
};

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
  } else {
    return reader.Fail(StatusCode::kUnimplemented, "unsupported model_type '" +
                                                       config->model_type +
                                                       "' (supported: llama, qwen2)");
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

// null/absent, "default", "linear" and "llama3"; the rest (yarn, dynamic, longrope...)
// change attention in ways the forward pass does not implement, so they are refused.
void ReadRopeScaling(ConfigReader& outer, const std::string& path, Status* status,
                     RopeScaling* rope) {
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
  } else {
    reader.Fail(StatusCode::kUnimplemented, "unsupported rope_scaling type '" + type +
                                                "' (supported: default, linear, llama3)");
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

// Defaults of transformers' LlamaConfig / Qwen2Config for keys config.json may omit.
void SetArchitectureDefaults(ModelConfig* config) {
  config->rms_norm_eps = 1e-6;
  config->rope_theta = 10000.0;
  config->tie_word_embeddings = false;
  if (config->architecture == Architecture::kLlama) {
    config->max_position_embeddings = 2048;
    config->bos_token_id = 1;
    config->eos_token_ids = {2};
  } else {
    config->max_position_embeddings = 32768;
    config->bos_token_id = -1;  // Qwen2Config sets none; tokenizer_config.json does
    config->eos_token_ids.clear();
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
// neither o nor MLP biases (its config has no such keys).
void ReadBiasesAndActivation(ConfigReader& reader, ModelConfig* config) {
  if (config->architecture == Architecture::kQwen2) {
    config->qkv_bias = true;
    bool sliding_window = false;
    reader.Bool("use_sliding_window", &sliding_window);
    if (sliding_window) {
      reader.Fail(StatusCode::kUnimplemented, "unsupported 'use_sliding_window': true");
    }
  } else {
    bool attention_bias = false;
    reader.Bool("attention_bias", &attention_bias);
    config->qkv_bias = config->o_bias = attention_bias;
    reader.Bool("mlp_bias", &config->mlp_bias);
  }
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
  ReadRopeScaling(reader, path, &status, &config.rope_scaling);
  ReadSpecialTokens(reader, &config);
  RETURN_IF_ERROR(status);
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

StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text, const std::string& path) {
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
