// BertModel: the CPU executor of a BERT-family sentence encoder (all-MiniLM-L6-v2, BGE,
// E5...): absolute position and token-type embeddings, post-LayerNorm blocks of
// bidirectional self-attention and a GELU (erf) MLP. It keeps no KV cache: every sequence
// of a batch is a whole input (the engine schedules encoders without chunking), and its
// output is the last layer's row of each token, which the engine pools into embeddings.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/packed_weight.h"
#include "kernels/thread_pool.h"
#include "model/bert_config.h"
#include "model/executor.h"
#include "model/load_options.h"

namespace surge {

class BertModel final : public ModelExecutor {
 public:
  // Reads DIR/config.json (+ the sentence-transformers files) and model.safetensors
  // (tensor names with or without a "bert." prefix), checking every shape; the linear
  // layers take `options`' format. `pool` is borrowed (null: single-threaded).
  static StatusOr<std::unique_ptr<BertModel>> Load(const std::string& model_dir, ThreadPool* pool,
                                                   const LoadOptions& options = {});

  const ModelConfig& config() const override { return bert_.model; }
  const BertConfig& bert_config() const { return bert_; }
  // No K/V is kept: a layout of zero layers (zero bytes per block).
  KvLayout kv_layout(int32_t block_size, KvDType dtype = KvDType::kF32) const override;
  // Writes the last layer's rows of batch.hidden_rows into `hidden`; `kv` is untouched and
  // `logits` must be empty (batch.logits_rows too). CHECKs that every sequence starts at
  // position 0 and fits max_position_embeddings. Batch-invariant: a row depends only on
  // its own sequence (MatMul per row, attention within the sequence).
  void Run(const ForwardBatch& batch, KvStorage& kv, std::span<float> logits,
           std::span<float> hidden = {}) override;
  int64_t linear_weight_bytes() const override;
  std::string linear_weight_formats() const override;

  struct Layer {
    PackedWeight qkv;             // [3 * hidden, hidden]: query, key, value rows
    std::vector<float> qkv_bias;  // [3 * hidden]
    PackedWeight attn_out;        // [hidden, hidden]
    std::vector<float> attn_out_bias, attn_norm_weight, attn_norm_bias;  // [hidden] each
    PackedWeight up;              // [intermediate, hidden]
    std::vector<float> up_bias;   // [intermediate]
    PackedWeight down;            // [hidden, intermediate]
    std::vector<float> down_bias, out_norm_weight, out_norm_bias;  // [hidden] each
  };

 private:
  BertModel(BertConfig config, ThreadPool* pool, LoadOptions options);
  Status LoadWeights(const std::string& model_dir);
  void Embed(const ForwardBatch& batch);
  void RunLayer(const Layer& layer, const ForwardBatch& batch);
  void Attention(const ForwardBatch& batch);
  void AttendHead(const SequenceChunk& seq, int64_t head, float* scratch);

  BertConfig bert_;
  ThreadPool* pool_;
  LoadOptions options_;
  std::vector<float> word_embeddings_;      // [vocab_size, hidden]
  std::vector<float> position_embeddings_;  // [max_position_embeddings, hidden]
  std::vector<float> token_type_row_;       // [hidden]: token type 0 (single inputs)
  std::vector<float> embed_norm_weight_, embed_norm_bias_;  // [hidden]
  std::vector<Layer> layers_;

  // Run state, grown to the largest batch seen and reused.
  std::vector<float> x_;        // [num_tokens, hidden]: the residual stream
  std::vector<float> qkv_;      // [num_tokens, 3 * hidden]
  std::vector<float> attn_;     // [num_tokens, hidden]
  std::vector<float> tmp_;      // [num_tokens, hidden]
  std::vector<float> mlp_;      // [num_tokens, intermediate]
  std::vector<float> scratch_;  // [num_sequences * num_heads, per-head scratch]
};

// Row kernels of the encoder, exposed for tests.
// y = (x - mean) / sqrt(var + eps) * weight + bias per row of `dim`; y may alias x.
void LayerNormRows(const float* x, const float* weight, const float* bias, int64_t num_rows, int64_t dim,
                   float eps, float* y);
// x = x * 0.5 * (1 + erf(x / sqrt 2)) over n floats, erf by a rational approximation
// (|error| < 1e-6 against std::erf) that the compiler vectorizes.
void GeluErf(float* x, int64_t n);

}  // namespace surge
