// WeightLoader: fills ModelWeights from a WeightSource (safetensors or GGUF), checking
// every tensor's shape against the config: norms and embeddings as f32 arrays, linear
// layers packed into the load format (kernels/packed_weight.h), q/k/v and gate/up stacked
// so that each takes one MatMul.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/thread_pool.h"
#include "model/config.h"
#include "model/load_options.h"
#include "model/model_dims.h"
#include "model/model_weights.h"
#include "model/weight_source.h"

namespace surge {

class WeightLoader {
 public:
  // Errors name the missing or mis-shaped tensor. `pool` (not null) packs the weights.
  static StatusOr<ModelWeights> Load(const ModelConfig& config, const LoadOptions& options,
                                     const WeightSource& store, ThreadPool* pool);
  // DeepSeek-V3's first MTP layer (model.layers.<num_layers>.*), in the same formats as
  // the model's layers; RoPE is `model`'s.
  static StatusOr<MtpWeights> LoadMtp(const ModelConfig& config, const LoadOptions& options,
                                      const WeightSource& store, ThreadPool* pool, const ModelWeights& model);

 private:
  WeightLoader(const ModelConfig& config, const LoadOptions& options, ThreadPool* pool, ModelWeights& weights)
      : config_(config), options_(options), pool_(pool), weights_(weights) {}

  Status LoadWeights(const WeightSource& store);
  Status LoadLayer(const WeightSource& store, int64_t index, LayerWeights& layer);
  struct Projection {
    std::string name;  // e.g. "model.layers.0.self_attn.q_proj"
    int64_t out_features;
    // When set, row i of the loaded weight is the stored row rows_from[i] (MLA's rope
    // rows are de-interleaved this way); empty keeps the stored order.
    std::vector<int32_t> rows_from = {};
  };
  // Stacks the parts' rows and packs them: float data in `format` (default:
  // LinearFormat()), quantized GGUF data in the format its blocks map to (the widest
  // of the parts' formats when they differ, e.g. a Q6_K attn_v beside Q4_K q/k).
  Status LoadLinear(const WeightSource& store, const std::vector<Projection>& parts,
                    int64_t in_features, bool has_bias, Linear& linear,
                    std::optional<WeightFormat> format = std::nullopt);

  Status LoadDenseAttention(const WeightSource& store, const std::string& prefix, LayerWeights& layer);
  // MLA layers and MoE MLPs (model_load_deepseek.cc).
  Status LoadMlaAttention(const WeightSource& store, const std::string& prefix, LayerWeights& layer);
  Status LoadMoe(const WeightSource& store, const std::string& prefix, LayerWeights& layer);
  Status LoadMlp(const WeightSource& store, const std::string& prefix, int64_t inter,
                 LayerWeights& layer);

  int64_t q_size() const { return QSize(config_); }
  int64_t kv_size() const { return KvSize(config_); }

  WeightFormat LinearFormat() const;  // the decoder layers' format
  WeightFormat LmHeadFormat() const;  // LinearFormat(), but int8 under int4 by default

  const ModelConfig& config_;
  const LoadOptions& options_;
  ThreadPool* pool_;
  ModelWeights& weights_;
};

}  // namespace surge
