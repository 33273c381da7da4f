#include "model/gguf_to_hf.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/weight_codec.h"
#include "model/gguf_convert.h"
#include "model/gguf_weights.h"
#include "model/safetensors_writer.h"

namespace surge {
namespace {

// GGUF keeps eps and rope_theta as f32: the shortest decimal that reads back as that f32
// ("1e-05", not 9.99999974738e-06), as config.json had it before conversion.
double ShortestFloat(double value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), static_cast<float>(value));
  return ec == std::errc() ? std::stod(std::string(buffer, end)) : value;
}

const char* ArchitectureClass(Architecture architecture) {
  switch (architecture) {
    case Architecture::kLlama: return "LlamaForCausalLM";
    case Architecture::kQwen2: return "Qwen2ForCausalLM";
    case Architecture::kQwen3: return "Qwen3ForCausalLM";
    default: return nullptr;
  }
}

nlohmann::json TokenIdOrNull(int32_t id) { return id >= 0 ? nlohmann::json(id) : nlohmann::json(nullptr); }

nlohmann::json EosJson(const std::vector<int32_t>& eos_ids) {
  if (eos_ids.empty()) return nullptr;
  if (eos_ids.size() == 1) return eos_ids[0];
  return eos_ids;
}

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return DataLossError("failed writing " + path);
  return OkStatus();
}

// A tensor's values as `dtype` bytes (bf16 rounded to nearest even, as torch does).
std::vector<uint8_t> ToBytes(const std::vector<float>& values, TensorDType dtype) {
  std::vector<uint8_t> bytes(values.size() * TensorDTypeSize(dtype));
  if (dtype == TensorDType::kF32) {
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t bits = FloatToBf16(values[i]);
    std::memcpy(&bytes[2 * i], &bits, 2);
  }
  return bytes;
}

}  // namespace

StatusOr<std::string> HfConfigJson(const ModelConfig& c, TensorDType dtype) {
  const char* architecture = ArchitectureClass(c.architecture);
  if (architecture == nullptr) {
    return UnimplementedError("'" + c.model_type + "' does not convert to Hugging Face (llama, qwen2, qwen3 do)");
  }
  if (c.rope_scaling.type != RopeScaling::Type::kNone && c.rope_scaling.type != RopeScaling::Type::kLinear) {
    return UnimplementedError("rope scaling other than linear does not convert to Hugging Face yet");
  }
  const bool qwen2 = c.architecture == Architecture::kQwen2;
  if (!qwen2 && c.qkv_bias != c.o_bias) {
    return UnimplementedError(c.model_type + ": q/k/v biases without an o_proj bias (or the reverse) have no "
                              "Hugging Face config (attention_bias covers all four)");
  }
  nlohmann::ordered_json j = {
      {"architectures", {architecture}}, {"model_type", c.model_type},
      {"hidden_size", c.hidden_size}, {"intermediate_size", c.intermediate_size},
      {"num_hidden_layers", c.num_layers}, {"num_attention_heads", c.num_heads},
      {"num_key_value_heads", c.num_kv_heads}, {"head_dim", c.head_dim},
      {"vocab_size", c.vocab_size}, {"max_position_embeddings", c.max_position_embeddings},
      {"rms_norm_eps", ShortestFloat(c.rms_norm_eps)}, {"rope_theta", ShortestFloat(c.rope_theta)},
      {"rope_scaling", nullptr}, {"hidden_act", "silu"}, {"tie_word_embeddings", c.tie_word_embeddings},
      {"bos_token_id", TokenIdOrNull(c.bos_token_id)}, {"eos_token_id", EosJson(c.eos_token_ids)},
      {"initializer_range", 0.02}, {"attention_dropout", 0.0}, {"use_cache", true},
      {"torch_dtype", dtype == TensorDType::kBF16 ? "bfloat16" : "float32"}};
  if (c.rope_scaling.type == RopeScaling::Type::kLinear) {
    j["rope_scaling"] = {{"rope_type", "linear"}, {"type", "linear"}, {"factor", c.rope_scaling.factor}};
  }
  if (qwen2) {
    j["use_sliding_window"] = false;
    j["sliding_window"] = nullptr;
    j["max_window_layers"] = c.num_layers;
  } else {
    j["attention_bias"] = c.qkv_bias;
    j["mlp_bias"] = c.mlp_bias;
  }
  if (c.architecture == Architecture::kLlama) j["pretraining_tp"] = 1;
  return j.dump(2) + "\n";
}

std::string HfGenerationConfigJson(int32_t bos_id, const std::vector<int32_t>& eos_ids) {
  nlohmann::ordered_json j = {{"bos_token_id", TokenIdOrNull(bos_id)}, {"eos_token_id", EosJson(eos_ids)}};
  return j.dump(2) + "\n";
}

Status ConvertGgufToHf(const std::string& gguf_path, const std::string& out_dir, TensorDType dtype,
                       const HfTokenizerFilesWriter& write_tokenizer) {
  if (dtype != TensorDType::kBF16 && dtype != TensorDType::kF32) {
    return InvalidArgumentError("GGUF -> Hugging Face writes bf16 or f32 tensors");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::Open(gguf_path));
  ASSIGN_OR_RETURN(ModelConfig config, ModelConfigFromGguf(*file));
  if (file->FindTensor("rope_freqs.weight") != nullptr) {
    return UnimplementedError(gguf_path + ": llama3 rope factors (rope_freqs.weight) do not convert back yet");
  }
  StatusOr<std::string> config_json = HfConfigJson(config, dtype);
  if (!config_json.ok()) return config_json.status().WithContext(gguf_path);
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) return NotFoundError("cannot create " + out_dir + ": " + error.message());
  const auto shapes = HfTensorShapes(config);
  std::vector<SafetensorsTensorSpec> specs;
  for (const auto& [name, shape] : shapes) specs.push_back({name, dtype, shape});
  GgufWeightSource source(*file, config, WeightDType::kF32);
  RETURN_IF_ERROR(WriteSafetensors(
      out_dir + "/model.safetensors", specs,
      [&](size_t i) -> StatusOr<std::vector<uint8_t>> {
        ASSIGN_OR_RETURN(std::vector<float> values, source.LoadF32(shapes[i].first, shapes[i].second));
        return ToBytes(values, dtype);
      },
      {{"format", "pt"}}));
  RETURN_IF_ERROR(WriteText(out_dir + "/config.json", *config_json));
  RETURN_IF_ERROR(WriteText(out_dir + "/generation_config.json",
                            HfGenerationConfigJson(config.bos_token_id, config.eos_token_ids)));
  if (write_tokenizer) RETURN_IF_ERROR(write_tokenizer(*file, out_dir));
  return OkStatus();
}

}  // namespace surge
