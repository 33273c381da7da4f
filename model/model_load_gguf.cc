// Model::LoadGguf: a llama/qwen2/deepseek2 GGUF file -- config from its metadata, tensors
// through GgufWeightSource (names mapped, llama Q/K un-permuted, DeepSeek experts sliced,
// blocks decoded or repacked).
#include <cstring>

#include "gguf/gguf_file.h"
#include "model/gguf_weights.h"
#include "model/model.h"
#include "model/weight_loader.h"

namespace surge {

StatusOr<std::unique_ptr<Model>> Model::LoadGguf(const std::string& path, ThreadPool* pool,
                                                 const LoadOptions& options) {
  if (options.load_mtp) {
    return InvalidArgumentError(path + ": GGUF files carry no multi-token-prediction layers (surge and llama.cpp "
                                "leave them out when converting); load the Hugging Face checkpoint for MTP");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::Open(path));
  ASSIGN_OR_RETURN(ModelConfig config, ModelConfigFromGguf(*file));
  std::unique_ptr<Model> model(new Model(std::move(config), pool, options));
  const ModelConfig& c = model->config_;
  if (c.hidden_size <= 0 || c.intermediate_size <= 0 || c.num_layers <= 0 ||
      c.num_kv_heads <= 0 || c.num_heads % c.num_kv_heads != 0 || c.head_dim % 2 != 0) {
    return InvalidArgumentError(path + ": inconsistent sizes in the " + c.model_type +
                                ".* metadata");
  }
  GgufWeightSource source(*file, model->config_, options.gguf_wide_quant_dtype);
  ASSIGN_OR_RETURN(model->weights_, WeightLoader::Load(c, options, source, model->pool_));
  // Llama 3 style rope scaling: llama.cpp's converter stores the per-frequency divisors
  // as a tensor instead of metadata.
  if (const GgufTensorInfo* freqs = file->FindTensor("rope_freqs.weight")) {
    const int64_t half = c.head_dim / 2;
    if (freqs->type != GgmlType::kF32 || freqs->dims != std::vector<int64_t>{half}) {
      return InvalidArgumentError(path + ": tensor 'rope_freqs.weight' must be F32 [" +
                                  std::to_string(half) + "], is " + GgmlTypeName(freqs->type) +
                                  " " + freqs->ShapeString());
    }
    std::vector<float> factors(half);  // memcpy: general.alignment may be 1
    std::memcpy(factors.data(), freqs->bytes.data(), half * sizeof(float));
    for (int64_t i = 0; i < half; ++i) model->weights_.inv_freq[i] /= factors[i];
  }
  return model;
}

}  // namespace surge
