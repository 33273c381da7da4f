#include "model/gguf_weights.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "base/check.h"
#include "model/gguf_deepseek.h"
#include "model/gguf_names.h"

namespace surge {
namespace {

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
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
  ASSIGN_OR_RETURN(int64_t bos, GgufIntOr(f, "tokenizer.ggml.bos_token_id", -1));
  ASSIGN_OR_RETURN(int64_t eos, GgufIntOr(f, "tokenizer.ggml.eos_token_id", -1));
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

// The vocabulary (token_embd's), tied output and special tokens, for every architecture.
Status ReadEmbeddingAndTokens(const GgufFile& f, ModelConfig* c) {
  ASSIGN_OR_RETURN(const GgufTensorInfo* embd, f.GetTensor("token_embd.weight"));
  if (embd->dims.size() != 2 || embd->dims[0] != c->hidden_size) {
    return InvalidArgumentError(f.path() + ": tensor 'token_embd.weight' has shape " +
                                embd->ShapeString() + ", expected [" +
                                std::to_string(c->hidden_size) + ", vocab]");
  }
  c->vocab_size = embd->dims[1];
  c->tie_word_embeddings = f.FindTensor("output.weight") == nullptr;
  return ReadSpecialTokens(f, c);
}

}  // namespace

StatusOr<int64_t> GgufIntOr(const GgufFile& f, const std::string& key, int64_t fallback) {
  if (!f.Has(key)) return fallback;
  return f.GetInt(key);
}

StatusOr<double> GgufFloatOr(const GgufFile& f, const std::string& key, double fallback) {
  if (!f.Has(key)) return fallback;
  return f.GetFloat(key);
}

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
  c.model_type = arch;
  if (arch == "deepseek2") {
    RETURN_IF_ERROR(ReadDeepseek2Config(f, &c));
    RETURN_IF_ERROR(ReadEmbeddingAndTokens(f, &c));
    return c;
  }
  if (arch == "llama") {
    c.architecture = Architecture::kLlama;
  } else if (arch == "qwen2") {
    c.architecture = Architecture::kQwen2;
  } else if (arch == "qwen3") {
    c.architecture = Architecture::kQwen3;
  } else {
    return UnimplementedError(f.path() + ": general.architecture '" + arch +
                              "' is not supported (llama, qwen2, qwen3, deepseek2)");
  }
  const std::string p = arch + ".";
  ASSIGN_OR_RETURN(c.hidden_size, f.GetInt(p + "embedding_length"));
  ASSIGN_OR_RETURN(c.num_layers, f.GetInt(p + "block_count"));
  ASSIGN_OR_RETURN(c.intermediate_size, f.GetInt(p + "feed_forward_length"));
  ASSIGN_OR_RETURN(c.num_heads, f.GetInt(p + "attention.head_count"));
  ASSIGN_OR_RETURN(c.num_kv_heads, GgufIntOr(f, p + "attention.head_count_kv", c.num_heads));
  ASSIGN_OR_RETURN(c.max_position_embeddings, f.GetInt(p + "context_length"));
  ASSIGN_OR_RETURN(c.rms_norm_eps, f.GetFloat(p + "attention.layer_norm_rms_epsilon"));
  ASSIGN_OR_RETURN(c.rope_theta, GgufFloatOr(f, p + "rope.freq_base", 10000.0));
  if (c.num_heads <= 0) return InvalidArgumentError(f.path() + ": " + p + "attention.head_count must be positive");
  ASSIGN_OR_RETURN(c.head_dim, GgufIntOr(f, p + "attention.key_length", c.hidden_size / c.num_heads));
  ASSIGN_OR_RETURN(int64_t rope_dims, GgufIntOr(f, p + "rope.dimension_count", c.head_dim));
  if (rope_dims != c.head_dim) {
    return UnimplementedError(f.path() + ": " + p + "rope.dimension_count " +
                              std::to_string(rope_dims) + " != head dim " +
                              std::to_string(c.head_dim) + " (partial rotary is not supported)");
  }
  RETURN_IF_ERROR(CheckSizes(f, p, c));
  RETURN_IF_ERROR(ReadRopeScaling(f, arch, &c));
  RETURN_IF_ERROR(ReadEmbeddingAndTokens(f, &c));
  c.qkv_bias = f.FindTensor("blk.0.attn_q.bias") != nullptr;
  if (c.architecture == Architecture::kQwen2 && !c.qkv_bias) {
    return NotFoundError(f.path() + ": qwen2 needs tensor 'blk.0.attn_q.bias'");
  }
  c.qk_norm = c.architecture == Architecture::kQwen3;
  if (c.qk_norm && f.FindTensor("blk.0.attn_q_norm.weight") == nullptr) {
    return NotFoundError(f.path() + ": qwen3 needs tensor 'blk.0.attn_q_norm.weight'");
  }
  c.o_bias = f.FindTensor("blk.0.attn_output.bias") != nullptr;
  c.mlp_bias = f.FindTensor("blk.0.ffn_up.bias") != nullptr;
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
  if (std::optional<std::string> prefix = SplitKvBPrefix(name)) {
    return file_.FindTensor(*GgufTensorNameForHf(*prefix + "k_b_proj.weight")) != nullptr;
  }
  std::optional<GgufTensorRef> ref = GgufTensorRefForHf(name);
  return ref && file_.FindTensor(ref->name) != nullptr;
}

std::optional<std::string> GgufWeightSource::SplitKvBPrefix(const std::string& hf_name) const {
  const std::string kv_b = "kv_b_proj.weight";
  if (!config_.mla || hf_name.size() < kv_b.size() ||
      hf_name.compare(hf_name.size() - kv_b.size(), kv_b.size(), kv_b) != 0) {
    return std::nullopt;
  }
  std::optional<std::string> legacy = GgufTensorNameForHf(hf_name);
  if (!legacy || file_.FindTensor(*legacy) != nullptr) return std::nullopt;
  return hf_name.substr(0, hf_name.size() - kv_b.size());
}

// kv_b_proj [heads * (nope + v), latent] from attn_k_b [heads, latent, nope] (W_UK
// transposed per head) and attn_v_b [heads, v, latent], as llama.cpp's converter split it.
StatusOr<LinearWeightData> GgufWeightSource::LoadSplitKvB(const std::string& prefix, int64_t rows,
                                                          int64_t cols) const {
  const MlaConfig& m = *config_.mla;
  const int64_t heads = config_.num_heads, nope = m.qk_nope_head_dim, v = m.v_head_dim;
  const int64_t latent = m.kv_lora_rank;
  CHECK(rows == heads * (nope + v) && cols == latent) << "kv_b_proj: " << rows << " x " << cols;
  if (!Contains(prefix + "k_b_proj.weight")) {
    const std::string kv_b = *GgufTensorNameForHf(prefix + "kv_b_proj.weight");
    return NotFoundError(file_.path() + ": neither tensor '" + kv_b + "' nor '" +
                         *GgufTensorNameForHf(prefix + "k_b_proj.weight") + "' is present");
  }
  ASSIGN_OR_RETURN(Raw k_raw, LoadRaw(prefix + "k_b_proj.weight", {heads, latent, nope}));
  ASSIGN_OR_RETURN(std::vector<float> k_b,
                   LoadF32(prefix + "k_b_proj.weight", {heads, latent, nope}));
  ASSIGN_OR_RETURN(std::vector<float> v_b, LoadF32(prefix + "v_b_proj.weight", {heads, v, latent}));
  LinearWeightData data;
  data.rows = rows;
  data.cols = cols;
  data.native = NativeFormat(k_raw.type);  // the split's values are f32 whatever it was
  data.f32.resize(rows * cols);
  for (int64_t h = 0; h < heads; ++h) {
    float* head = &data.f32[h * (nope + v) * latent];
    for (int64_t i = 0; i < nope; ++i) {
      for (int64_t j = 0; j < latent; ++j) head[i * latent + j] = k_b[(h * latent + j) * nope + i];
    }
    std::copy_n(&v_b[h * v * latent], v * latent, head + nope * latent);
  }
  return data;
}

StatusOr<GgufWeightSource::Raw> GgufWeightSource::LoadRaw(
    const std::string& hf_name, const std::vector<int64_t>& expected_shape) const {
  std::optional<GgufTensorRef> ref = GgufTensorRefForHf(hf_name);
  if (!ref) return InternalError("no GGUF name for tensor '" + hf_name + "'");
  const std::string* name = &ref->name;
  ASSIGN_OR_RETURN(const GgufTensorInfo* t, file_.GetTensor(*name));
  std::vector<int64_t> hf_shape(t->dims.rbegin(), t->dims.rend());  // ggml lists dims inner first
  std::vector<int64_t> want = expected_shape;
  const int64_t num_experts = config_.moe ? config_.moe->n_routed_experts : 0;
  if (ref->expert >= 0) want.insert(want.begin(), num_experts);  // [experts, rows, cols]
  if (hf_shape != want) {
    return InvalidArgumentError(file_.path() + ": tensor '" + *name + "' has shape " +
                                t->ShapeString() + " (ggml order), expected " +
                                ShapeString({want.rbegin(), want.rend()}));
  }
  Raw raw;
  ASSIGN_OR_RETURN(raw.type, BlockTypeOf(file_, *t));
  raw.view = t->bytes;
  if (ref->expert >= 0) {  // expert e's [rows, cols]: slice e of the stack
    if (ref->expert >= num_experts) {
      return InvalidArgumentError(file_.path() + ": tensor '" + *name + "' has no expert " +
                                  std::to_string(ref->expert));
    }
    const size_t slice = raw.view.size() / num_experts;
    raw.view = raw.view.subspan(ref->expert * slice, slice);
  }
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

// int4-g32 for the block types that map to int4 groups; Q8_0, Q6_K, Q5_*: the wide
// dtype (int8 groups of 32 by default: a Q8_0 block exactly); none for float tensors.
std::optional<WeightFormat> GgufWeightSource::NativeFormat(BlockType type) const {
  if (HasInt4Groups(type)) return WeightFormat{WeightDType::kInt4, 32};
  if (type == BlockType::kF32 || type == BlockType::kF16 || type == BlockType::kBF16) return std::nullopt;
  return wide_quant_dtype_ == WeightDType::kInt8 ? WeightFormat{WeightDType::kInt8Groups, 32}
                                                 : WeightFormat{wide_quant_dtype_};
}

StatusOr<LinearWeightData> GgufWeightSource::LoadLinearWeight(const std::string& name,
                                                              int64_t rows, int64_t cols) const {
  if (std::optional<std::string> prefix = SplitKvBPrefix(name + ".weight")) {
    return LoadSplitKvB(*prefix, rows, cols);
  }
  ASSIGN_OR_RETURN(Raw raw, LoadRaw(name + ".weight", {rows, cols}));
  LinearWeightData data;
  data.rows = rows;
  data.cols = cols;
  data.native = NativeFormat(raw.type);
  if (HasInt4Groups(raw.type)) {
    data.int4_q.resize(rows * cols);
    data.int4_groups.resize(rows * cols / 32);
    BlocksToInt4Groups(raw.type, raw.data(), rows * cols, data.int4_q.data(),
                       data.int4_groups.data());
    return data;
  }
  data.f32.resize(rows * cols);
  DequantizeBlocks(raw.type, raw.data(), rows * cols, data.f32.data());
  return data;
}

}  // namespace surge
