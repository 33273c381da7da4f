#include "model/mtp_module.h"

#include "base/check.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "model/model_forward.h"
#include "model/model_dims.h"

namespace surge {

MtpModule::MtpModule(const ModelConfig& model_config, LoadOptions::MlaMode mla_mode, MtpWeights weights,
                     const std::vector<float>& model_embedding, ThreadPool* pool)
    : config_(model_config),
      mla_mode_(mla_mode),
      weights_(std::move(weights)),
      embedding_(weights_.embed_tokens.empty() ? model_embedding : weights_.embed_tokens),
      pool_(pool) {
  config_.num_layers = 1;
}

KvLayout MtpModule::kv_layout(int32_t block_size, KvDType dtype) const {
  return KvLayoutFor(config_, block_size, dtype);
}

void MtpModule::Run(const ForwardBatch& batch, std::span<const float> previous_hidden, KvStorage& kv,
                    std::span<float> logits, std::span<float> hidden) {
  const int64_t size = config_.hidden_size;
  const int64_t num_tokens = static_cast<int64_t>(batch.token_ids.size());
  CHECK_EQ(static_cast<int64_t>(previous_hidden.size()), num_tokens * size) << "MTP previous hidden states";
  for (int32_t id : batch.token_ids) CHECK(id >= 0 && id < config_.vocab_size) << "token id " << id;
  if (static_cast<int64_t>(concat_.size()) < num_tokens * 2 * size) concat_.resize(num_tokens * 2 * size);
  if (static_cast<int64_t>(projected_.size()) < num_tokens * size) projected_.resize(num_tokens * size);
  const float eps = static_cast<float>(config_.rms_norm_eps);
  pool_->ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* row = &concat_[t * 2 * size];
      RmsNorm(&embedding_[batch.token_ids[t] * size], weights_.enorm.data(), 1, size, eps, row);
      RmsNorm(&previous_hidden[t * size], weights_.hnorm.data(), 1, size, eps, row + size);
    }
  });
  MatMul(concat_.data(), num_tokens, weights_.eh_proj.matrix(), nullptr, projected_.data(), pool_);
  ForwardBatch decoder_batch = batch;
  decoder_batch.input_rows = std::span<const float>(projected_).first(num_tokens * size);
  decoder_batch.hidden_before_final_norm = true;
  RunForwardPass({config_, mla_mode_, weights_.decoder, activations_, pool_}, decoder_batch, kv, logits, hidden);
}

}  // namespace surge
