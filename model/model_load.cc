// Model::Load: config.json and the safetensors weights; norms and embeddings as f32
// arrays, linear layers packed into the chosen format (kernels/packed_weight.h), q/k/v
// and gate/up stacked so that each takes one MatMul.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "base/check.h"
#include "base/logging.h"
#include "kernels/rope.h"
#include "model/model.h"
#include "model/gguf_weights.h"
#include "model/weight_store.h"

namespace surge {
namespace {

// What the forward pass needs beyond what the config parser already enforces.
Status ValidateForForward(const ModelConfig& c) {
  if (c.fp8 && !IsDeepseek(c)) {
    return UnimplementedError(c.model_type + ": FP8 weights are supported for DeepSeek only");
  }
  if (c.hidden_size <= 0 || c.intermediate_size <= 0 || c.num_layers <= 0 || c.vocab_size <= 0) {
    return InvalidArgumentError("config: sizes must be positive");
  }
  if (c.num_heads <= 0 || c.num_kv_heads <= 0 || c.num_heads % c.num_kv_heads != 0) {
    return InvalidArgumentError("config: num_attention_heads (" + std::to_string(c.num_heads) +
                                ") must be a positive multiple of num_key_value_heads (" +
                                std::to_string(c.num_kv_heads) + ")");
  }
  if (c.head_dim <= 0 || c.head_dim % 2 != 0) {
    return InvalidArgumentError("config: head_dim must be positive and even for RoPE, got " +
                                std::to_string(c.head_dim));
  }
  if (c.mla && (c.mla->qk_rope_head_dim <= 0 || c.mla->qk_rope_head_dim % 2 != 0)) {
    return InvalidArgumentError("config: qk_rope_head_dim must be positive and even, got " +
                                std::to_string(c.mla->qk_rope_head_dim));
  }
  if (IsDeepseek(c) && !c.mla) {
    return InvalidArgumentError("config: " + c.model_type + " needs the MLA fields");
  }
  return OkStatus();
}

std::string LayerPrefix(int64_t index) { return "model.layers." + std::to_string(index) + "."; }

int WidthRank(WeightDType dtype) {
  switch (dtype) {
    case WeightDType::kInt4: return 0;
    case WeightDType::kInt8: return 1;
    case WeightDType::kBF16: return 2;
    case WeightDType::kF32: return 3;
  }
  return 3;
}

// Packs the stacked rows of `parts`. All int4 groups: repacked as they are. Otherwise
// every part goes to f32 and the stack is packed in the widest of the parts' formats
// (float parts count as `float_format`).
PackedWeight PackParts(std::vector<LinearWeightData>& parts, WeightFormat float_format,
                       ThreadPool* pool) {
  int64_t rows = 0;
  const int64_t cols = parts[0].cols;
  bool all_int4 = true;
  WeightFormat format = parts[0].native.value_or(float_format);
  for (const LinearWeightData& part : parts) {
    rows += part.rows;
    all_int4 = all_int4 && part.is_int4();
    const WeightFormat f = part.native.value_or(float_format);
    if (WidthRank(f.dtype) > WidthRank(format.dtype)) format = f;
  }
  // The int8 kernels' int32 sums need K <= 65536 (kernels/packed_weight.h): wider rows
  // stay bf16.
  if (format.dtype == WeightDType::kInt8 && cols > 65536) format = {WeightDType::kBF16};
  if (all_int4) {
    std::vector<uint8_t> q;            // [rows, cols]
    std::vector<Int4Group> groups;     // [rows, cols / 32]
    for (const LinearWeightData& part : parts) {
      q.insert(q.end(), part.int4_q.begin(), part.int4_q.end());
      groups.insert(groups.end(), part.int4_groups.begin(), part.int4_groups.end());
    }
    return PackedWeight::PackInt4Groups(q.data(), groups.data(), rows, cols, 32, pool);
  }
  std::vector<float> stacked;  // [rows, cols]
  stacked.reserve(rows * cols);
  for (LinearWeightData& part : parts) {
    const std::vector<float> values = std::move(part).TakeF32();
    stacked.insert(stacked.end(), values.begin(), values.end());
    part = LinearWeightData{};  // free as we go
  }
  return PackedWeight::Pack(stacked.data(), rows, cols, format, pool);
}

// Reorders the rows of `data` (f32 or int4 groups): new row i = old row rows_from[i].
void PermuteRows(const std::vector<int32_t>& rows_from, LinearWeightData& data) {
  CHECK_EQ(static_cast<int64_t>(rows_from.size()), data.rows);
  auto permute = [&rows_from](auto& values, int64_t row_length) {
    auto old = values;
    for (size_t i = 0; i < rows_from.size(); ++i) {
      std::copy_n(old.begin() + rows_from[i] * row_length, row_length,
                  values.begin() + static_cast<int64_t>(i) * row_length);
    }
  };
  if (data.is_int4()) {
    permute(data.int4_q, data.cols);
    permute(data.int4_groups, data.cols / 32);
  } else {
    permute(data.f32, data.cols);
  }
}

Status ValidateOptions(const LoadOptions& o) {
  if (o.dtype != WeightDType::kF32 && o.dtype != WeightDType::kBF16) {
    return InvalidArgumentError(
        "load options: dtype must be f32 or bf16 (int8/int4 are "
        "chosen with quantize)");
  }
  if (o.quantize == Quantization::kInt4 && o.group_size != 32 && o.group_size != 64 &&
      o.group_size != 128) {
    return InvalidArgumentError("load options: int4 group size must be 32, 64 or 128, got " +
                                std::to_string(o.group_size));
  }
  return OkStatus();
}

}  // namespace

std::string LoadOptionsName(const LoadOptions& options) {
  switch (options.quantize) {
    case Quantization::kInt8:
      return "int8";
    case Quantization::kInt4:
      return "int4-g" + std::to_string(options.group_size) + (options.int4_lm_head ? "-head4" : "");
    case Quantization::kNone:
      break;
  }
  return WeightDTypeName(options.dtype);
}

Model::Model(ModelConfig config, ThreadPool* pool, const LoadOptions& options)
    : config_(std::move(config)),
      options_(options),
      owned_pool_(pool ? nullptr : std::make_unique<ThreadPool>(1)),
      pool_(pool ? pool : owned_pool_.get()) {}

StatusOr<std::unique_ptr<Model>> Model::Load(const std::string& model_dir, ThreadPool* pool,
                                             const LoadOptions& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  if (IsGgufPath(model_dir)) return LoadGguf(model_dir, pool, options);
  ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(model_dir));
  RETURN_IF_ERROR(ValidateForForward(config).WithContext(model_dir + "/config.json"));
  ASSIGN_OR_RETURN(std::unique_ptr<WeightStore> store, WeightStore::Open(model_dir));
  if (config.fp8) store->SetFp8BlockShape(config.fp8->block_rows, config.fp8->block_cols);
  std::unique_ptr<Model> model(new Model(std::move(config), pool, options));
  RETURN_IF_ERROR(model->LoadWeights(*store));
  return model;
}

KvLayout Model::kv_layout(int32_t block_size, KvDType dtype) const {
  KvLayout layout;
  layout.num_layers = static_cast<int32_t>(config_.num_layers);
  layout.num_kv_heads = static_cast<int32_t>(config_.num_kv_heads);
  layout.head_dim = static_cast<int32_t>(config_.head_dim);
  if (config_.mla) {  // one latent row per token: [kv_lora_rank, qk_rope_head_dim]
    layout.num_kv_heads = 1;
    layout.head_dim = static_cast<int32_t>(config_.mla->kv_lora_rank + config_.mla->qk_rope_head_dim);
    layout.latent = true;
  }
  layout.block_size = block_size;
  layout.dtype = dtype;
  return layout;
}

int64_t Model::qkv_size() const {
  if (!config_.mla) return q_size() + 2 * kv_size();
  return mla_query_cols() + config_.mla->kv_lora_rank + config_.mla->qk_rope_head_dim;
}

int64_t Model::mla_query_cols() const {
  const MlaConfig& m = *config_.mla;
  return m.q_lora_rank > 0 ? m.q_lora_rank : config_.num_heads * m.q_head_dim();
}

int64_t Model::attention_output_size() const {
  return config_.mla ? config_.num_heads * config_.mla->v_head_dim : q_size();
}

int64_t Model::max_intermediate_size() const {
  int64_t inter = config_.intermediate_size;
  if (config_.moe) {
    inter = std::max(inter, config_.moe->moe_intermediate_size * config_.moe->n_shared_experts);
  }
  return inter;
}

int64_t Model::rope_dim() const {
  return config_.mla ? config_.mla->qk_rope_head_dim : config_.head_dim;
}

Status Model::LoadWeights(const WeightSource& store) {
  const int64_t hidden = config_.hidden_size, vocab = config_.vocab_size;
  inv_freq_ = RopeInvFrequencies(RopeParamsFor(config_));
  rope_cos_sin_scale_ = static_cast<float>(RopeCosSinScale(RopeParamsFor(config_)));
  ASSIGN_OR_RETURN(embed_tokens_, store.LoadF32("model.embed_tokens.weight", {vocab, hidden}));
  ASSIGN_OR_RETURN(final_norm_, store.LoadF32("model.norm.weight", {hidden}));
  layers_.resize(config_.num_layers);
  for (int64_t i = 0; i < config_.num_layers; ++i) RETURN_IF_ERROR(LoadLayer(store, i, layers_[i]));
  // DeepSeek-V3's multi-token-prediction layers follow the decoder layers under the same
  // "model.layers.N." names; next-token serving never runs them, so they stay unread.
  if (config_.num_nextn_predict_layers > 0) {
    LOG(INFO) << store.source_name() << ": skipping " << config_.num_nextn_predict_layers
              << " MTP layer(s) (model.layers." << config_.num_layers << " and up)";
  }
  // Tied (as transformers ties them): the output projection *is* the embedding matrix,
  // even if the file also carries an lm_head.weight. It gets its own packed copy (the
  // gather wants f32 rows; the MatMul wants panels in the load format).
  // (A GGUF's quantized token_embd keeps its own format, as llama.cpp uses it.)
  if (config_.tie_word_embeddings) {
    return LoadLinear(store, {{"model.embed_tokens", vocab}}, hidden, /*has_bias=*/false,
                      lm_head_, LmHeadFormat());
  }
  if (!store.Contains("lm_head.weight")) {
    return NotFoundError(store.source_name() +
                         ": no tensor 'lm_head.weight' and tie_word_embeddings is false");
  }
  return LoadLinear(store, {{"lm_head", vocab}}, hidden, /*has_bias=*/false, lm_head_,
                    LmHeadFormat());
}

WeightFormat Model::LmHeadFormat() const {
  if (options_.quantize == Quantization::kInt4 && !options_.int4_lm_head) {
    return {WeightDType::kInt8};
  }
  return LinearFormat();
}

WeightFormat Model::LinearFormat() const {
  switch (options_.quantize) {
    case Quantization::kInt8:
      return {WeightDType::kInt8};
    case Quantization::kInt4:
      return {WeightDType::kInt4, options_.group_size};
    case Quantization::kNone:
      break;
  }
  return {options_.dtype};
}

int64_t Model::linear_weight_bytes() const {
  int64_t bytes = lm_head_.size_bytes();
  for (const Layer& l : layers_) {
    bytes += l.qkv.size_bytes() + l.o_proj.size_bytes() + l.gate_up.size_bytes() +
             l.down.size_bytes();
    if (l.mla) {
      bytes += l.mla->q_b.size_bytes() + l.mla->k_up_all.size_bytes() +
               l.mla->v_up_all.size_bytes();
      for (const PackedWeight& w : l.mla->k_up_transposed) bytes += w.size_bytes();
      for (const PackedWeight& w : l.mla->v_up) bytes += w.size_bytes();
    }
    if (l.moe) {
      bytes += l.moe->router.size_bytes();
      for (const MoeWeights::Expert& e : l.moe->experts) {
        bytes += e.gate_up.size_bytes() + e.down.size_bytes();
      }
    }
  }
  return bytes;
}

std::string Model::linear_weight_formats() const {
  std::vector<std::string> names;
  auto add = [&names](const Linear& linear) {
    if (linear.weight.empty()) return;
    const WeightMatrix& m = linear.matrix();
    std::string name = WeightDTypeName(m.dtype);
    if (m.dtype == WeightDType::kInt4) name += "-g" + std::to_string(m.group_size);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const Layer& l : layers_) {
    for (const Linear* linear : {&l.qkv, &l.o_proj, &l.gate_up, &l.down}) add(*linear);
    if (l.moe) {
      for (const MoeWeights::Expert& e : l.moe->experts) add(e.gate_up), add(e.down);
    }
  }
  add(lm_head_);
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : "+") + name;
  return joined;
}

Status Model::LoadLayer(const WeightSource& store, int64_t index, Layer& layer) {
  const std::string p = LayerPrefix(index);
  const int64_t hidden = config_.hidden_size;
  ASSIGN_OR_RETURN(layer.input_norm, store.LoadF32(p + "input_layernorm.weight", {hidden}));
  ASSIGN_OR_RETURN(layer.post_attention_norm,
                   store.LoadF32(p + "post_attention_layernorm.weight", {hidden}));
  if (config_.mla) {
    RETURN_IF_ERROR(LoadMlaAttention(store, p + "self_attn.", layer));
  } else {
    RETURN_IF_ERROR(LoadDenseAttention(store, p + "self_attn.", layer));
  }
  if (IsMoeLayer(config_, index)) return LoadMoe(store, p + "mlp.", layer);
  return LoadMlp(store, p + "mlp.", config_.intermediate_size, layer);
}

Status Model::LoadDenseAttention(const WeightSource& store, const std::string& a, Layer& layer) {
  const int64_t hidden = config_.hidden_size, kv = kv_size();
  RETURN_IF_ERROR(LoadLinear(store,
                             {{a + "q_proj", q_size()}, {a + "k_proj", kv}, {a + "v_proj", kv}},
                             hidden, config_.qkv_bias, layer.qkv));
  if (config_.qk_norm) {
    ASSIGN_OR_RETURN(layer.q_norm, store.LoadF32(a + "q_norm.weight", {config_.head_dim}));
    ASSIGN_OR_RETURN(layer.k_norm, store.LoadF32(a + "k_norm.weight", {config_.head_dim}));
  }
  return LoadLinear(store, {{a + "o_proj", hidden}}, q_size(), config_.o_bias, layer.o_proj);
}

// gate_proj/up_proj/down_proj under `m` (a dense MLP, or "mlp.shared_experts.").
Status Model::LoadMlp(const WeightSource& store, const std::string& m, int64_t inter,
                      Layer& layer) {
  const int64_t hidden = config_.hidden_size;
  RETURN_IF_ERROR(LoadLinear(store, {{m + "gate_proj", inter}, {m + "up_proj", inter}}, hidden,
                             config_.mlp_bias, layer.gate_up));
  return LoadLinear(store, {{m + "down_proj", hidden}}, inter, config_.mlp_bias, layer.down);
}

// Loads each part (NAME.weight, and NAME.bias when has_bias), stacks their rows in order
// and packs them into one Linear in the load format.
Status Model::LoadLinear(const WeightSource& store, const std::vector<Projection>& parts,
                         int64_t in_features, bool has_bias, Linear& linear,
                         std::optional<WeightFormat> format) {
  linear = Linear{};
  std::vector<LinearWeightData> data;
  for (const Projection& part : parts) {
    ASSIGN_OR_RETURN(LinearWeightData weight,
                     store.LoadLinearWeight(part.name, part.out_features, in_features));
    if (!part.rows_from.empty()) PermuteRows(part.rows_from, weight);
    data.push_back(std::move(weight));
    if (has_bias) {
      ASSIGN_OR_RETURN(std::vector<float> bias,
                       store.LoadF32(part.name + ".bias", {part.out_features}));
      linear.bias.insert(linear.bias.end(), bias.begin(), bias.end());
    }
  }
  linear.weight = PackParts(data, format.value_or(LinearFormat()), pool_);
  return OkStatus();
}

}  // namespace surge
