#include "model/gguf_convert.h"

#include <cmath>
#include <filesystem>
#include <numbers>

#include "kernels/gguf_blocks.h"
#include "model/gguf_deepseek.h"
#include "model/gguf_names.h"
#include "model/weight_store.h"

namespace surge {
namespace {

// llama.cpp's LLAMA_FTYPE_* numbers for general.file_type.
uint32_t LlamaFileType(GgufFileType type) {
  switch (type) {
    case GgufFileType::kF32: return 0;
    case GgufFileType::kF16: return 1;
    case GgufFileType::kQ4_0: return 2;
    case GgufFileType::kQ8_0: return 7;
    case GgufFileType::kQ4_K_M: return 15;
    case GgufFileType::kQ6_K: return 18;
    case GgufFileType::kBF16: return 32;
  }
  return 0;
}

bool UseMoreBits(int64_t layer, int64_t num_layers) {
  return layer < num_layers / 8 || layer >= 7 * num_layers / 8 ||
         (layer - num_layers / 8) % 3 == 2;
}

BlockType BaseType(GgufFileType type) {
  switch (type) {
    case GgufFileType::kF32: return BlockType::kF32;
    case GgufFileType::kF16: return BlockType::kF16;
    case GgufFileType::kBF16: return BlockType::kBF16;
    case GgufFileType::kQ8_0: return BlockType::kQ8_0;
    case GgufFileType::kQ4_0: return BlockType::kQ4_0;
    case GgufFileType::kQ4_K_M: return BlockType::kQ4_K;
    case GgufFileType::kQ6_K: return BlockType::kQ6_K;
  }
  return BlockType::kF32;
}

// The type of a matrix named `gguf_name` with rows of `cols` values.
BlockType ChooseType(GgufFileType file_type, const std::string& gguf_name, int64_t cols,
                     const ModelConfig& config) {
  BlockType type = BaseType(file_type);
  const bool is_output = gguf_name == "output.weight" ||
                         (config.tie_word_embeddings && gguf_name == "token_embd.weight");
  if (is_output && (file_type == GgufFileType::kQ4_0 || file_type == GgufFileType::kQ4_K_M)) {
    type = BlockType::kQ6_K;
  }
  if (file_type == GgufFileType::kQ4_K_M) {
    int64_t layer = -1;
    if (std::sscanf(gguf_name.c_str(), "blk.%ld.", &layer) == 1 &&
        (gguf_name.find(".attn_v.") != std::string::npos ||
         gguf_name.find(".ffn_down.") != std::string::npos) &&
        UseMoreBits(layer, config.num_layers)) {
      type = BlockType::kQ6_K;
    }
  }
  if (cols % BlockElements(type) != 0) {
    type = type == BlockType::kQ4_K ? BlockType::kQ4_0 : BlockType::kQ8_0;
    if (cols % 32 != 0) type = BlockType::kF16;
  }
  return type;
}

GgmlType ToGgml(BlockType type) {
  switch (type) {
    case BlockType::kF32: return GgmlType::kF32;
    case BlockType::kF16: return GgmlType::kF16;
    case BlockType::kBF16: return GgmlType::kBF16;
    case BlockType::kQ8_0: return GgmlType::kQ8_0;
    case BlockType::kQ4_0: return GgmlType::kQ4_0;
    case BlockType::kQ4_1: return GgmlType::kQ4_1;
    case BlockType::kQ5_0: return GgmlType::kQ5_0;
    case BlockType::kQ5_1: return GgmlType::kQ5_1;
    case BlockType::kQ4_K: return GgmlType::kQ4_K;
    case BlockType::kQ5_K: return GgmlType::kQ5_K;
    case BlockType::kQ6_K: return GgmlType::kQ6_K;
  }
  return GgmlType::kF32;
}

// llama.cpp's rope_freqs tensor for llama3 rope scaling: per frequency, the divisor.
std::vector<float> Llama3RopeFactors(const ModelConfig& c) {
  const RopeScaling& s = c.rope_scaling;
  const double low_wavelen = s.original_max_position_embeddings / s.low_freq_factor;
  const double high_wavelen = s.original_max_position_embeddings / s.high_freq_factor;
  std::vector<float> factors;
  for (int64_t i = 0; i < c.head_dim / 2; ++i) {
    const double freq = 1.0 / std::pow(c.rope_theta, 2.0 * i / c.head_dim);
    const double wavelen = 2 * std::numbers::pi / freq;
    if (wavelen < high_wavelen) {
      factors.push_back(1.0f);
    } else if (wavelen > low_wavelen) {
      factors.push_back(static_cast<float>(s.factor));
    } else {
      const double smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                            (s.high_freq_factor - s.low_freq_factor);
      factors.push_back(static_cast<float>(1.0 / ((1 - smooth) / s.factor + smooth)));
    }
  }
  return factors;
}

std::vector<uint8_t> F32Bytes(const std::vector<float>& v) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(v.data());
  return std::vector<uint8_t>(p, p + v.size() * sizeof(float));
}

// One tensor (`shape` in HF order, the values row-major) in its chosen type. 1-D tensors
// (norms, biases) and MoE routers stay F32, as llama.cpp's converter keeps them; a 3-D
// stack of expert matrices is quantized row by row like a matrix.
Status AddTensor(const ModelConfig& c, GgufFileType type, const std::string& name,
                 const std::vector<int64_t>& shape, const std::vector<float>& values,
                 GgufWriter& writer) {
  const int64_t cols = shape.back(), rows = static_cast<int64_t>(values.size()) / cols;
  const bool keep_f32 = shape.size() == 1 || name.find(".ffn_gate_inp.") != std::string::npos;
  const BlockType block = keep_f32 ? BlockType::kF32 : ChooseType(type, name, cols, c);
  std::vector<uint8_t> bytes(BlockRowBytes(block, cols) * rows);
  QuantizeBlocks(block, values.data(), rows * cols, bytes.data());
  if (IsLlamaPermutedQk(c.model_type, name)) {  // a bias's rows are its elements
    const int64_t num_rows = shape[0];
    bytes = PermuteRowsHfToGguf(bytes, num_rows, bytes.size() / num_rows, c.head_dim);
  }
  std::vector<int64_t> dims(shape.rbegin(), shape.rend());
  return writer.AddTensor(name, dims, ToGgml(block), std::move(bytes));
}

Status AddTensors(const WeightStore& store, const ModelConfig& c, GgufFileType type,
                  GgufWriter& writer) {
  if (IsDeepseek(c)) {
    return AddDeepseek2Tensors(
        store, c, [&](const std::string& name, const std::vector<int64_t>& shape,
                      const std::vector<float>& values) {
          return AddTensor(c, type, name, shape, values, writer);
        });
  }
  for (const auto& [hf_name, shape] : HfTensorShapes(c)) {
    ASSIGN_OR_RETURN(std::vector<float> values, store.LoadF32(hf_name, shape));
    RETURN_IF_ERROR(AddTensor(c, type, *GgufTensorNameForHf(hf_name), shape, values, writer));
  }
  if (c.rope_scaling.type == RopeScaling::Type::kLlama3) {
    std::vector<float> factors = Llama3RopeFactors(c);
    RETURN_IF_ERROR(writer.AddTensor("rope_freqs.weight", {c.head_dim / 2}, GgmlType::kF32,
                                     F32Bytes(factors)));
  }
  return OkStatus();
}

}  // namespace

std::vector<std::pair<std::string, std::vector<int64_t>>> HfTensorShapes(const ModelConfig& c) {
  const int64_t h = c.hidden_size, q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  const int64_t f = c.intermediate_size;
  std::vector<std::pair<std::string, std::vector<int64_t>>> out = {
      {"model.embed_tokens.weight", {c.vocab_size, h}}};
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    out.push_back({p + "input_layernorm.weight", {h}});
    out.push_back({p + "self_attn.q_proj.weight", {q, h}});
    out.push_back({p + "self_attn.k_proj.weight", {kv, h}});
    out.push_back({p + "self_attn.v_proj.weight", {kv, h}});
    if (c.qkv_bias) {
      out.push_back({p + "self_attn.q_proj.bias", {q}});
      out.push_back({p + "self_attn.k_proj.bias", {kv}});
      out.push_back({p + "self_attn.v_proj.bias", {kv}});
    }
    if (c.qk_norm) {
      out.push_back({p + "self_attn.q_norm.weight", {c.head_dim}});
      out.push_back({p + "self_attn.k_norm.weight", {c.head_dim}});
    }
    out.push_back({p + "self_attn.o_proj.weight", {h, q}});
    if (c.o_bias) out.push_back({p + "self_attn.o_proj.bias", {h}});
    out.push_back({p + "post_attention_layernorm.weight", {h}});
    out.push_back({p + "mlp.gate_proj.weight", {f, h}});
    out.push_back({p + "mlp.up_proj.weight", {f, h}});
    out.push_back({p + "mlp.down_proj.weight", {h, f}});
    if (c.mlp_bias) {
      out.push_back({p + "mlp.gate_proj.bias", {f}});
      out.push_back({p + "mlp.up_proj.bias", {f}});
      out.push_back({p + "mlp.down_proj.bias", {h}});
    }
  }
  out.push_back({"model.norm.weight", {h}});
  if (!c.tie_word_embeddings) out.push_back({"lm_head.weight", {c.vocab_size, h}});
  return out;
}

StatusOr<GgufFileType> ParseGgufFileType(const std::string& name) {
  for (GgufFileType t : {GgufFileType::kF32, GgufFileType::kF16, GgufFileType::kBF16,
                         GgufFileType::kQ8_0, GgufFileType::kQ4_0, GgufFileType::kQ4_K_M,
                         GgufFileType::kQ6_K}) {
    if (name == GgufFileTypeName(t)) return t;
  }
  return InvalidArgumentError("unknown GGUF type '" + name +
                              "' (f32, f16, bf16, q8_0, q4_0, q4_k_m, q6_k)");
}

const char* GgufFileTypeName(GgufFileType type) {
  switch (type) {
    case GgufFileType::kF32: return "f32";
    case GgufFileType::kF16: return "f16";
    case GgufFileType::kBF16: return "bf16";
    case GgufFileType::kQ8_0: return "q8_0";
    case GgufFileType::kQ4_0: return "q4_0";
    case GgufFileType::kQ4_K_M: return "q4_k_m";
    case GgufFileType::kQ6_K: return "q6_k";
  }
  return "?";
}

Status WriteGgufModelMetadata(const ModelConfig& c, GgufFileType type, GgufWriter& w) {
  const std::string a = IsDeepseek(c) ? "deepseek2" : c.model_type;
  if (a != "llama" && a != "qwen2" && a != "qwen3" && a != "deepseek2") {
    return UnimplementedError("GGUF conversion supports llama, qwen2, qwen3 and deepseek_v2/v3, not '" +
                              a + "'");
  }
  w.SetString("general.architecture", a);
  w.SetString("general.name", c.model_type);
  w.SetU32("general.file_type", LlamaFileType(type));
  w.SetU32("general.quantization_version", 2);
  if (a == "deepseek2") return WriteDeepseek2Metadata(c, w);
  w.SetU32(a + ".context_length", static_cast<uint32_t>(c.max_position_embeddings));
  w.SetU32(a + ".embedding_length", static_cast<uint32_t>(c.hidden_size));
  w.SetU32(a + ".block_count", static_cast<uint32_t>(c.num_layers));
  w.SetU32(a + ".feed_forward_length", static_cast<uint32_t>(c.intermediate_size));
  w.SetU32(a + ".attention.head_count", static_cast<uint32_t>(c.num_heads));
  w.SetU32(a + ".attention.head_count_kv", static_cast<uint32_t>(c.num_kv_heads));
  w.SetF32(a + ".attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_norm_eps));
  w.SetF32(a + ".rope.freq_base", static_cast<float>(c.rope_theta));
  w.SetU32(a + ".rope.dimension_count", static_cast<uint32_t>(c.head_dim));
  if (c.head_dim * c.num_heads != c.hidden_size) {
    w.SetU32(a + ".attention.key_length", static_cast<uint32_t>(c.head_dim));
    w.SetU32(a + ".attention.value_length", static_cast<uint32_t>(c.head_dim));
  }
  w.SetU32(a + ".vocab_size", static_cast<uint32_t>(c.vocab_size));
  if (c.rope_scaling.type == RopeScaling::Type::kLinear) {
    w.SetString(a + ".rope.scaling.type", "linear");
    w.SetF32(a + ".rope.scaling.factor", static_cast<float>(c.rope_scaling.factor));
  }
  return OkStatus();
}

Status ConvertHfToGguf(const std::string& hf_dir, const std::string& out_path,
                       GgufFileType type, const GgufTokenizerWriter& write_tokenizer) {
  ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(hf_dir));
  if (config.fp8 && !IsDeepseek(config)) {
    return UnimplementedError(hf_dir + "/config.json: FP8 weights are supported for DeepSeek only");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<WeightStore> store, WeightStore::Open(hf_dir));
  // FP8 (DeepSeek V3/R1) is dequantized by the store as it is read.
  if (config.fp8) store->SetFp8BlockShape(config.fp8->block_rows, config.fp8->block_cols);
  GgufWriter writer;
  RETURN_IF_ERROR(WriteGgufModelMetadata(config, type, writer));
  if (write_tokenizer && std::filesystem::exists(hf_dir + "/tokenizer.json")) {
    RETURN_IF_ERROR(write_tokenizer(hf_dir, config, writer));
  }
  RETURN_IF_ERROR(AddTensors(*store, config, type, writer));
  return writer.WriteFile(out_path);
}

}  // namespace surge
