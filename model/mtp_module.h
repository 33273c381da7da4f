// MtpModule: the CPU executor of DeepSeek-V3's multi-token-prediction layer
// (model/executor.h MtpExecutor). A row's input is eh_proj([enorm(embed(token)),
// hnorm(previous hidden)]); from there it is the ordinary forward pass (model/model_forward.h)
// over a one-layer decoder whose final norm and lm_head are the module's shared_head.
// Per row throughout, so batch-invariant like the model.
#pragma once

#include <span>
#include <vector>

#include "kernels/thread_pool.h"
#include "model/activations.h"
#include "model/config.h"
#include "model/executor.h"
#include "model/load_options.h"
#include "model/model_weights.h"

namespace surge {

class MtpModule final : public MtpExecutor {
 public:
  // `model_embedding` (the model's embed_tokens, used when the module has none of its
  // own) and `pool` are borrowed and must outlive the module.
  MtpModule(const ModelConfig& model_config, LoadOptions::MlaMode mla_mode, MtpWeights weights,
            const std::vector<float>& model_embedding, ThreadPool* pool);

  KvLayout kv_layout(int32_t block_size, KvDType dtype = KvDType::kF32) const override;
  void Run(const ForwardBatch& batch, std::span<const float> previous_hidden, KvStorage& kv,
           std::span<float> logits, std::span<float> hidden) override;

 private:
  ModelConfig config_;  // the model's, with one layer
  LoadOptions::MlaMode mla_mode_;
  MtpWeights weights_;
  const std::vector<float>& embedding_;
  ThreadPool* pool_;
  std::vector<float> concat_;     // [num_tokens, 2 * hidden_size]
  std::vector<float> projected_;  // [num_tokens, hidden_size]
  ForwardActivations activations_;
};

}  // namespace surge
