// ModelExecutor: the device-neutral face of a loaded model -- what the engine runs. It
// knows the model's config and KV layout and runs one forward pass over a flat batch;
// where the weights live (host memory for the CPU executor, model/model.h; device memory
// for a CUDA one) and how they were loaded is the executor's own business.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kv/kv_layout.h"
#include "kv/kv_storage.h"
#include "model/config.h"
#include "model/forward_batch.h"

namespace surge {

// DeepSeek-V3's multi-token-prediction module, as speculative decoding runs it. Row i of
// a batch stands for a position p of its sequence: token_ids[i] is the token at p + 1,
// previous_hidden row i a hidden state of position p (the target's final-normed one, or
// an earlier MTP row's hidden output when guesses are chained), and its logits score the
// token at p + 2. It keeps a KV cache of its own (one layer), addressed by the rows'
// positions through the batch's block tables.
class MtpExecutor {
 public:
  virtual ~MtpExecutor() = default;
  virtual KvLayout kv_layout(int32_t block_size, KvDType dtype = KvDType::kF32) const = 0;
  // As ModelExecutor::Run, with previous_hidden [num_tokens, hidden_size]; the hidden
  // output is the layer's, before its head's norm (what a chained row takes).
  virtual void Run(const ForwardBatch& batch, std::span<const float> previous_hidden, KvStorage& kv,
                   std::span<float> logits, std::span<float> hidden) = 0;
};

class ModelExecutor {
 public:
  virtual ~ModelExecutor() = default;

  virtual const ModelConfig& config() const = 0;
  // The KV cache layout this model needs: rows of head_dim values in `dtype` (MLA: one
  // latent row per token and layer).
  virtual KvLayout kv_layout(int32_t block_size, KvDType dtype = KvDType::kF32) const = 0;

  // Runs the batch; writes [batch.logits_rows.size(), vocab_size] logits and
  // [batch.hidden_rows.size(), hidden_size] final-normed hidden states, and stores the
  // K/V of every batch token into `kv` through its sequence's block table. CHECKs that
  // the batch is well formed (ids in the vocabulary, every token in exactly one
  // sequence, block tables cover the positions, outputs sized right). Batch-invariant:
  // a sequence's logits do not depend on what else is in the batch. Not thread-safe:
  // one caller (the engine thread) at a time.
  virtual void Run(const ForwardBatch& batch, KvStorage& kv, std::span<float> logits,
                   std::span<float> hidden = {}) = 0;

  // Bytes of all linear-layer weights (what one decode step streams from memory).
  virtual int64_t linear_weight_bytes() const = 0;
  // The formats the linear layers are held in, e.g. "int8" or "int4-g32+int8".
  virtual std::string linear_weight_formats() const = 0;
  // The model's MTP module when it was loaded with it, else null.
  virtual MtpExecutor* mtp() { return nullptr; }
};

}  // namespace surge
