// Model: the CPU executor of a Llama / Qwen2 / Qwen3 / DeepSeek V2-V3 decoder. It owns the
// weights (model/model_weights.h: linear layers in f32, bf16, int8 or int4; embeddings,
// norms and routers in f32) that WeightLoader fills (model/weight_loader.h), the activations
// (model/activations.h), and runs the forward pass (model/model_forward.h) over a flat batch
// of tokens from many sequences, with K/V (or MLA's latent) kept in a paged KvStorage. A
// layer's attention is GQA or MLA and its MLP dense or MoE; the skeleton (embedding,
// pre-norm residual blocks, final norm, lm_head) is shared.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "kernels/thread_pool.h"
#include "kv/kv_layout.h"
#include "kv/kv_storage.h"
#include "model/activations.h"
#include "model/config.h"
#include "model/executor.h"
#include "model/forward_batch.h"
#include "model/load_options.h"
#include "model/model_weights.h"
#include "model/mtp_module.h"

namespace surge {

// Batch invariance: a sequence's logits are bit-identical whatever else is in the batch
// and however its tokens are split into passes (for a fixed KV block size, SimdLevel and
// weight format; model_test, model_quantized_test and the reference test check it). Every
// step is computed per token row with an order that depends only on that row: MatMul gives
// each (row, output) a computation that depends only on that row of x, that row of W and K
// (an fma chain over k for f32/bf16; per-token activation quantization and exact integer
// sums for int8/int4 -- see kernels/matmul.h), RMSNorm / RoPE / SiLU / residual adds are
// per row, and attention of a (token, kv head) reads only its own sequence's K/V through
// its block table. Threads split rows and tiles, never a single dot product.
class Model final : public ModelExecutor {
 public:
  // Reads DIR/config.json and the safetensors weights (F32/F16/BF16, sharded or not),
  // checking every tensor's shape, and converts the linear layers to `options`' format
  // (InvalidArgument for a bad combination). Errors name the missing or mis-shaped
  // tensor. `pool` (borrowed, must outlive the model) runs the matmuls and attention;
  // null means single-threaded.
  // `model_dir` may also be a .gguf file (llama/qwen2/deepseek2; model/gguf_weights.h): the
  // config comes from its metadata and each linear layer keeps the format its blocks map
  // to (LoadOptions::gguf_wide_quant_dtype).
  static StatusOr<std::unique_ptr<Model>> Load(const std::string& model_dir, ThreadPool* pool,
                                               const LoadOptions& options = {});

  const ModelConfig& config() const override { return config_; }
  const LoadOptions& load_options() const { return options_; }
  int64_t linear_weight_bytes() const override;
  // A GGUF file's tensor types decide the formats, not the load options.
  std::string linear_weight_formats() const override;
  MtpExecutor* mtp() override { return mtp_.get(); }
  KvLayout kv_layout(int32_t block_size, KvDType dtype = KvDType::kF32) const override;

  // Runs the batch; writes [batch.logits_rows.size(), vocab_size] logits and
  // [batch.hidden_rows.size(), hidden_size] final-normed hidden states, and stores the
  // K/V of every batch token into `kv` through its sequence's block table. CHECKs that
  // the batch is well formed (ids in the vocabulary, every token in exactly one
  // sequence, block tables cover the positions, outputs sized right). Not thread-safe:
  // the activations are reused (grown to the largest batch seen, never shrunk).
  void Run(const ForwardBatch& batch, KvStorage& kv, std::span<float> logits,
           std::span<float> hidden = {}) override;

 private:
  Model(ModelConfig config, ThreadPool* pool, const LoadOptions& options);
  static StatusOr<std::unique_ptr<Model>> LoadGguf(const std::string& path, ThreadPool* pool,
                                                   const LoadOptions& options);

  ModelConfig config_;
  LoadOptions options_;
  std::unique_ptr<ThreadPool> owned_pool_;  // only when Load got no pool
  ThreadPool* pool_;
  ModelWeights weights_;
  ForwardActivations activations_;
  std::unique_ptr<MtpModule> mtp_;  // LoadOptions::load_mtp only; reads weights_.embed_tokens
};

}  // namespace surge
