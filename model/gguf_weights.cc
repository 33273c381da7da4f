#include "model/gguf_weights.h"

#include <sys/stat.h>

#include <cstring>
#include <fstream>

#include "model/gguf_names.h"

namespace surge {
namespace {

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// Optional integer metadata: the value, `fallback` when absent, an error when ill-typed.
StatusOr<int64_t> IntOr(const GgufFile& f, const std::string& key, int64_t fallback) {
  if (!f.Has(key)) return fallback;
  return f.GetInt(key);
}
StatusOr<double> FloatOr(const GgufFile& f, const std::string& key, double fallback) {
  if (!f.Has(key)) return fallback;
  return f.GetFloat(key);
}

Status ReadRopeScaling(const GgufFile& f, const std::string& arch, ModelConfig* c) {
  const std::string key = arch + ".rope.scaling.type";
  std::string type = "none";
  if (f.Has(key)) {
    ASSIGN_OR_RETURN(type, f.GetString(key));
  }
  if (type == "none") return OkStatus();
  if (type != "linear") {
    return UnimplementedError(f.path() + ": " + key + " '" + type + "' is not supported (none, linear)");
  }
  c->rope_scaling.type = RopeScaling::Type::kLinear;
  ASSIGN_OR_RETURN(c->rope_scaling.factor, f.GetFloat(arch + ".rope.scaling.factor"));
  return OkStatus();
}

Status ReadSpecialTokens(const GgufFile& f, ModelConfig* c) {
  ASSIGN_OR_RETURN(int64_t bos, IntOr(f, "tokenizer.ggml.bos_token_id", -1));
  ASSIGN_OR_RETURN(int64_t eos, IntOr(f, "tokenizer.ggml.eos_token_id", -1));
  c->bos_token_id = static_cast<int32_t>(bos);
  if (eos >= 0) c->eos_token_ids = {static_cast<int32_t>(eos)};
  return OkStatus();
}

// Sizes a corrupt file could make absurd are bounded before anything is sized by them;
// the tensors' shapes are checked against them later.
Status CheckSizes(const GgufFile& f, const std::string& p, const ModelConfig& c) {
  const std::pair<const char*, int64_t> sizes[] = {
      {"embedding_length", c.hidden_size},       {"block_count", c.num_layers},
      {"feed_forward_length", c.intermediate_size}, {"attention.head_count", c.num_heads},
      {"attention.head_count_kv", c.num_kv_heads}, {"attention.key_length", c.head_dim},
      {"context_length", c.max_position_embeddings}};
  for (const auto& [key, value] : sizes) {
    if (value <= 0 || value > (int64_t{1} << 24)) {
      return InvalidArgumentError(f.path() + ": " + p + key + " = " + std::to_string(value) +
                                  " is out of range");
    }
  }
  const std::string last = "blk." + std::to_string(c.num_layers - 1) + ".attn_norm.weight";
  if (f.FindTensor(last) == nullptr) {
    return NotFoundError(f.path() + ": " + p + "block_count is " + std::to_string(c.num_layers) +
                         " but tensor '" + last + "' is missing");
  }
  return OkStatus();
}

}  // namespace

bool IsGgufPath(const std::string& path) {
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".gguf") == 0) return true;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
}

StatusOr<ModelConfig> ModelConfigFromGguf(const GgufFile& f) {
  ModelConfig c;
  ASSIGN_OR_RETURN(std::string arch, f.GetString("general.architecture"));
  if (arch == "llama") {
    c.architecture = Architecture::kLlama;
  } else if (arch == "qwen2") {
    c.architecture = Architecture::kQwen2;
  } else {
    return UnimplementedError(f.path() + ": general.architecture '" + arch +
                              "' is not supported (llama, qwen2)");
  }
  c.model_type = arch;
  const std::string p = arch + ".";
  ASSIGN_OR_RETURN(c.hidden_size, f.GetInt(p + "embedding_length"));
  ASSIGN_OR_RETURN(c.num_layers, f.GetInt(p + "block_count"));
  ASSIGN_OR_RETURN(c.intermediate_size, f.GetInt(p + "feed_forward_length"));
  ASSIGN_OR_RETURN(c.num_heads, f.GetInt(p + "attention.head_count"));
  ASSIGN_OR_RETURN(c.num_kv_heads, IntOr(f, p + "attention.head_count_kv", c.num_heads));
  ASSIGN_OR_RETURN(c.max_position_embeddings, f.GetInt(p + "context_length"));
  ASSIGN_OR_RETURN(c.rms_norm_eps, f.GetFloat(p + "attention.layer_norm_rms_epsilon"));
  ASSIGN_OR_RETURN(c.rope_theta, FloatOr(f, p + "rope.freq_base", 10000.0));
  if (c.num_heads <= 0) return InvalidArgumentError(f.path() + ": " + p + "attention.head_count must be positive");
  ASSIGN_OR_RETURN(c.head_dim, IntOr(f, p + "attention.key_length", c.hidden_size / c.num_heads));
  ASSIGN_OR_RETURN(int64_t rope_dims, IntOr(f, p + "rope.dimension_count", c.head_dim));
  if (rope_dims != c.head_dim) {
    return UnimplementedError(f.path() + ": " + p + "rope.dimension_count " +
                              std::to_string(rope_dims) + " != head dim " +
                              std::to_string(c.head_dim) + " (partial rotary is not supported)");
  }
  RETURN_IF_ERROR(CheckSizes(f, p, c));
  RETURN_IF_ERROR(ReadRopeScaling(f, arch, &c));
  ASSIGN_OR_RETURN(const GgufTensorInfo* embd, f.GetTensor("token_embd.weight"));
  if (embd->dims.size() != 2 || embd->dims[0] != c.hidden_size) {
    return InvalidArgumentError(f.path() + ": tensor 'token_embd.weight' has shape " +
                                embd->ShapeString() + ", expected [" +
                                std::to_string(c.hidden_size) + ", vocab]");
  }
  c.vocab_size = embd->dims[1];
  c.tie_word_embeddings = f.FindTensor("output.weight") == nullptr;
  c.qkv_bias = f.FindTensor("blk.0.attn_q.bias") != nullptr;
  if (c.architecture == Architecture::kQwen2 && !c.qkv_bias) {
    return NotFoundError(f.path() + ": qwen2 needs tensor 'blk.0.attn_q.bias'");
  }
  c.o_bias = f.FindTensor("blk.0.attn_output.bias") != nullptr;
  c.mlp_bias = f.FindTensor("blk.0.ffn_up.bias") != nullptr;
  RETURN_IF_ERROR(ReadSpecialTokens(f, &c));
  return c;
}

StatusOr<BlockType> BlockTypeOf(const GgufFile& file, const GgufTensorInfo& tensor) {
  switch (tensor.type) {
    case GgmlType::kF32: return BlockType::kF32;
    case GgmlType::kF16: return BlockType::kF16;
    case GgmlType::kBF16: return BlockType::kBF16;
    case GgmlType::kQ8_0: return BlockType::kQ8_0;
    case GgmlType::kQ4_0: return BlockType::kQ4_0;
    case GgmlType::kQ4_1: return BlockType::kQ4_1;
    case GgmlType::kQ5_0: return BlockType::kQ5_0;
    case GgmlType::kQ5_1: return BlockType::kQ5_1;
    case GgmlType::kQ4_K: return BlockType::kQ4_K;
    case GgmlType::kQ5_K: return BlockType::kQ5_K;
    case GgmlType::kQ6_K: return BlockType::kQ6_K;
    default: break;
  }
  return UnimplementedError(file.path() + ": tensor '" + tensor.name + "' has type " +
                            GgmlTypeName(tensor.type) +
                            "; supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K");
}

bool GgufWeightSource::Contains(const std::string& name) const {
  std::optional<std::string> gguf = GgufTensorNameForHf(name);
  return gguf && file_.FindTensor(*gguf) != nullptr;
}

StatusOr<GgufWeightSource::Raw> GgufWeightSource::LoadRaw(
    const std::string& hf_name, const std::vector<int64_t>& expected_shape) const {
  std::optional<std::string> name = GgufTensorNameForHf(hf_name);
  if (!name) return InternalError("no GGUF name for tensor '" + hf_name + "'");
  ASSIGN_OR_RETURN(const GgufTensorInfo* t, file_.GetTensor(*name));
  std::vector<int64_t> hf_shape(t->dims.rbegin(), t->dims.rend());  // ggml lists dims inner first
  if (hf_shape != expected_shape) {
    return InvalidArgumentError(file_.path() + ": tensor '" + *name + "' has shape " +
                                t->ShapeString() + " (ggml order), expected " +
                                ShapeString({expected_shape.rbegin(), expected_shape.rend()}));
  }
  Raw raw;
  ASSIGN_OR_RETURN(raw.type, BlockTypeOf(file_, *t));
  raw.view = t->bytes;
  if (IsLlamaPermutedQk(config_.model_type, *name)) {
    const int64_t num_rows = expected_shape[0];
    const int64_t row_bytes = static_cast<int64_t>(raw.view.size()) / num_rows;
    if (num_rows % config_.head_dim != 0) {
      return InvalidArgumentError(file_.path() + ": tensor '" + *name + "' rows " +
                                  std::to_string(num_rows) + " are not whole heads");
    }
    raw.permuted = PermuteRowsGgufToHf(raw.view, num_rows, row_bytes, config_.head_dim);
  }
  return raw;
}

StatusOr<std::vector<float>> GgufWeightSource::LoadF32(
    const std::string& name, const std::vector<int64_t>& expected_shape) const {
  ASSIGN_OR_RETURN(Raw raw, LoadRaw(name, expected_shape));
  int64_t n = 1;
  for (int64_t d : expected_shape) n *= d;
  std::vector<float> out(static_cast<size_t>(n));
  DequantizeBlocks(raw.type, raw.data(), n, out.data());
  return out;
}

StatusOr<LinearWeightData> GgufWeightSource::LoadLinearWeight(const std::string& name,
                                                              int64_t rows, int64_t cols) const {
  ASSIGN_OR_RETURN(Raw raw, LoadRaw(name + ".weight", {rows, cols}));
  LinearWeightData data;
  data.rows = rows;
  data.cols = cols;
  if (HasInt4Groups(raw.type)) {
    data.int4_q.resize(rows * cols);
    data.int4_groups.resize(rows * cols / 32);
    BlocksToInt4Groups(raw.type, raw.data(), rows * cols, data.int4_q.data(),
                       data.int4_groups.data());
    data.native = WeightFormat{WeightDType::kInt4, 32};
    return data;
  }
  data.f32.resize(rows * cols);
  DequantizeBlocks(raw.type, raw.data(), rows * cols, data.f32.data());
  if (raw.type != BlockType::kF32 && raw.type != BlockType::kF16 &&
      raw.type != BlockType::kBF16) {  // Q8_0, Q6_K, Q5_*: int8 per row by default
    data.native = WeightFormat{wide_quant_dtype_};
  }
  return data;
}

}  // namespace surge
