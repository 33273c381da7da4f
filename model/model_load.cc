// Model::Load (config.json and the safetensors weights) and the WeightLoader that fills
// ModelWeights: norms and embeddings as f32 arrays, linear layers packed into the chosen
// format (kernels/packed_weight.h), q/k/v and gate/up stacked so that each takes one MatMul.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "base/check.h"
#include "base/logging.h"
#include "kernels/rope.h"
#include "model/gguf_weights.h"
#include "model/model.h"
#include "model/weight_loader.h"
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
    case WeightDType::kInt8Groups: return 2;
    case WeightDType::kBF16: return 3;
    case WeightDType::kF32: return 4;
  }
  return 4;
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
  if (o.quantize != Quantization::kNone && o.group_size != 32 && o.group_size != 64 &&
      o.group_size != 128) {
    return InvalidArgumentError("load options: int4/int8 group size must be 32, 64 or 128, got " +
                                std::to_string(o.group_size));
  }
  return OkStatus();
}

}  // namespace

std::string LoadOptionsName(const LoadOptions& options) {
  switch (options.quantize) {
    case Quantization::kInt8:
      return "int8-g" + std::to_string(options.group_size);
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
  ASSIGN_OR_RETURN(model->weights_, WeightLoader::Load(model->config_, options, *store, model->pool_));
  if (options.load_mtp) {
    if (model->config_.num_nextn_predict_layers < 1) {
      return InvalidArgumentError(model_dir + ": the model has no multi-token-prediction layer "
                                  "(config.json num_nextn_predict_layers is 0)");
    }
    ASSIGN_OR_RETURN(MtpWeights mtp,
                     WeightLoader::LoadMtp(model->config_, options, *store, model->pool_, model->weights_));
    model->mtp_ = std::make_unique<MtpModule>(model->config_, options.mla_mode, std::move(mtp),
                                              model->weights_.embed_tokens, model->pool_);
  }
  return model;
}

StatusOr<MtpWeights> WeightLoader::LoadMtp(const ModelConfig& config, const LoadOptions& options,
                                           const WeightSource& store, ThreadPool* pool, const ModelWeights& model) {
  MtpWeights mtp;
  WeightLoader loader(config, options, pool, mtp.decoder);
  const int64_t index = config.num_layers, hidden = config.hidden_size, vocab = config.vocab_size;
  const std::string p = LayerPrefix(index);
  mtp.decoder.inv_freq = model.inv_freq;
  mtp.decoder.rope_cos_sin_scale = model.rope_cos_sin_scale;
  mtp.decoder.layers.resize(1);
  RETURN_IF_ERROR(loader.LoadLayer(store, index, mtp.decoder.layers[0]));
  ASSIGN_OR_RETURN(mtp.enorm, store.LoadF32(p + "enorm.weight", {hidden}));
  ASSIGN_OR_RETURN(mtp.hnorm, store.LoadF32(p + "hnorm.weight", {hidden}));
  RETURN_IF_ERROR(loader.LoadLinear(store, {{p + "eh_proj", hidden}}, 2 * hidden, /*has_bias=*/false, mtp.eh_proj));
  ASSIGN_OR_RETURN(mtp.decoder.final_norm, store.LoadF32(p + "shared_head.norm.weight", {hidden}));
  RETURN_IF_ERROR(loader.LoadLinear(store, {{p + "shared_head.head", vocab}}, hidden, /*has_bias=*/false,
                                    mtp.decoder.lm_head, loader.LmHeadFormat()));
  if (store.Contains(p + "embed_tokens.weight")) {
    ASSIGN_OR_RETURN(mtp.embed_tokens, store.LoadF32(p + "embed_tokens.weight", {vocab, hidden}));
  }
  LOG(INFO) << store.source_name() << ": loaded MTP layer " << index << " (of "
            << config.num_nextn_predict_layers << "; speculation chains the first)";
  return mtp;
}

StatusOr<ModelWeights> WeightLoader::Load(const ModelConfig& config, const LoadOptions& options,
                                          const WeightSource& store, ThreadPool* pool) {
  ModelWeights weights;
  RETURN_IF_ERROR(WeightLoader(config, options, pool, weights).LoadWeights(store));
  return weights;
}

KvLayout Model::kv_layout(int32_t block_size, KvDType dtype) const {
  return KvLayoutFor(config_, block_size, dtype);
}

int64_t Model::linear_weight_bytes() const { return LinearWeightBytes(weights_); }

std::string Model::linear_weight_formats() const { return LinearWeightFormats(weights_); }

Status WeightLoader::LoadWeights(const WeightSource& store) {
  const int64_t hidden = config_.hidden_size, vocab = config_.vocab_size;
  weights_.inv_freq = RopeInvFrequencies(RopeParamsFor(config_));
  weights_.rope_cos_sin_scale = static_cast<float>(RopeCosSinScale(RopeParamsFor(config_)));
  ASSIGN_OR_RETURN(weights_.embed_tokens, store.LoadF32("model.embed_tokens.weight", {vocab, hidden}));
  ASSIGN_OR_RETURN(weights_.final_norm, store.LoadF32("model.norm.weight", {hidden}));
  weights_.layers.resize(config_.num_layers);
  for (int64_t i = 0; i < config_.num_layers; ++i) RETURN_IF_ERROR(LoadLayer(store, i, weights_.layers[i]));
  // DeepSeek-V3's multi-token-prediction layers follow the decoder layers under the same
  // "model.layers.N." names; next-token serving never runs them, so they stay unread.
  if (config_.num_nextn_predict_layers > 0 && !options_.load_mtp) {
    LOG(INFO) << store.source_name() << ": skipping " << config_.num_nextn_predict_layers
              << " MTP layer(s) (model.layers." << config_.num_layers << " and up)";
  }
  // Tied (as transformers ties them): the output projection *is* the embedding matrix,
  // even if the file also carries an lm_head.weight. It gets its own packed copy (the
  // gather wants f32 rows; the MatMul wants panels in the load format).
  // (A GGUF's quantized token_embd keeps its own format, as llama.cpp uses it.)
  if (config_.tie_word_embeddings) {
    return LoadLinear(store, {{"model.embed_tokens", vocab}}, hidden, /*has_bias=*/false,
                      weights_.lm_head, LmHeadFormat());
  }
  if (!store.Contains("lm_head.weight")) {
    return NotFoundError(store.source_name() +
                         ": no tensor 'lm_head.weight' and tie_word_embeddings is false");
  }
  return LoadLinear(store, {{"lm_head", vocab}}, hidden, /*has_bias=*/false, weights_.lm_head,
                    LmHeadFormat());
}

WeightFormat WeightLoader::LmHeadFormat() const {
  if (options_.quantize == Quantization::kInt4 && !options_.int4_lm_head) {
    return {WeightDType::kInt8Groups, options_.group_size};
  }
  return LinearFormat();
}

WeightFormat WeightLoader::LinearFormat() const {
  switch (options_.quantize) {
    case Quantization::kInt8:  // groups: one activation scale per group, as int4's
      return {WeightDType::kInt8Groups, options_.group_size};
    case Quantization::kInt4:
      return {WeightDType::kInt4, options_.group_size};
    case Quantization::kNone:
      break;
  }
  return {options_.dtype};
}

Status WeightLoader::LoadLayer(const WeightSource& store, int64_t index, LayerWeights& layer) {
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

Status WeightLoader::LoadDenseAttention(const WeightSource& store, const std::string& a, LayerWeights& layer) {
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
Status WeightLoader::LoadMlp(const WeightSource& store, const std::string& m, int64_t inter,
                            LayerWeights& layer) {
  const int64_t hidden = config_.hidden_size;
  RETURN_IF_ERROR(LoadLinear(store, {{m + "gate_proj", inter}, {m + "up_proj", inter}}, hidden,
                             config_.mlp_bias, layer.gate_up));
  return LoadLinear(store, {{m + "down_proj", hidden}}, inter, config_.mlp_bias, layer.down);
}

// Loads each part (NAME.weight, and NAME.bias when has_bias), stacks their rows in order
// and packs them into one Linear in the load format.
Status WeightLoader::LoadLinear(const WeightSource& store, const std::vector<Projection>& parts,
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
