// The CPU forward pass as functions over (config, weights, activations, batch, KV):
// embedding -> decoder layers (GQA or MLA attention, dense or MoE MLP) -> final norm ->
// lm_head, over a flat batch of tokens from many sequences.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/attention.h"
#include "kernels/thread_pool.h"
#include "kv/kv_storage.h"
#include "model/activations.h"
#include "model/config.h"
#include "model/forward_batch.h"
#include "model/load_options.h"
#include "model/model_dims.h"
#include "model/model_weights.h"

namespace surge {

// What one forward pass reads (config, weights) and writes (the activations) besides the
// batch and the KV cache.
struct ForwardContext {
  const ModelConfig& config;
  LoadOptions::MlaMode mla_mode;  // as the weights were loaded for
  const ModelWeights& weights;
  ForwardActivations& activations;
  ThreadPool* pool;  // not null
};

// Runs the batch (the contract of ModelExecutor::Run, model/executor.h).
void RunForwardPass(const ForwardContext& context, const ForwardBatch& batch, KvStorage& kv,
                    std::span<float> logits, std::span<float> hidden);

// One pass's steps, bound to its context (model_forward.cc; MLA in model_forward_mla.cc,
// MoE in model_forward_moe.cc).
class ForwardPass {
 public:
  explicit ForwardPass(const ForwardContext& context);
  void Run(const ForwardBatch& batch, KvStorage& kv, std::span<float> logits, std::span<float> hidden);

 private:
  int64_t q_size() const { return QSize(config_); }
  int64_t kv_size() const { return KvSize(config_); }
  int64_t qkv_size() const { return QkvSize(config_); }
  int64_t mla_query_cols() const { return MlaQueryCols(config_); }
  int64_t attention_output_size() const { return AttentionOutputSize(config_); }
  int64_t max_intermediate_size() const { return MaxIntermediateSize(config_); }
  int64_t rope_dim() const { return RopeDim(config_); }

  // CHECKs the batch (see ModelExecutor::Run), grows the activations and fills
  // sequence_of_token.
  void IndexBatch(const ForwardBatch& batch, const KvStorage& kv, std::span<float> logits,
                  std::span<float> hidden);
  void Reserve(int64_t num_tokens, int64_t num_sequences, int64_t num_logits_rows);
  // Activation buffers only grow (to the largest batch seen), never shrink.
  template <typename T>
  static void GrowTo(std::vector<T>& buffer, int64_t size) {
    if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(size);
  }
  void ReserveMla(int64_t num_tokens);  // model_forward_mla.cc
  void ReserveMoe(int64_t num_tokens);  // model_forward_moe.cc
  void Embed(std::span<const int32_t> token_ids);
  void PrepareRope(const ForwardBatch& batch);
  void ForwardLayer(int32_t index, const ForwardBatch& batch, KvStorage& kv);
  void RmsNormRows(const std::vector<float>& weight, int64_t num_tokens);
  void RopeAndStoreKv(int32_t layer, const ForwardBatch& batch, KvStorage& kv);
  // Where Attend reads each token's query heads and writes their outputs.
  struct AttentionTarget {
    const float* q;  // [num_tokens, q_stride]
    int64_t q_stride;
    float* out;      // [num_tokens, out_stride]
    int64_t out_stride;
    float scale;
  };
  void Attend(const PagedKvView& view, const AttentionTarget& target, const ForwardBatch& batch);
  // Fills act_.split_*: the decodes Attend splits along their keys.
  void PlanSplitDecodes(const PagedKvView& view, const ForwardBatch& batch);
  void AttendSplitPartition(const PagedKvView& view, int64_t split_item);
  void AddToResidual(int64_t num_tokens);
  // normed = down(silu(gate(normed)) * up(normed)), for the first num_tokens rows.
  void DenseMlp(const Linear& gate_up, const Linear& down, int64_t num_tokens);
  void ComputeLogits(const ForwardBatch& batch, std::span<float> logits);
  // The final norm of batch.hidden_rows, straight into `hidden`.
  void ComputeHidden(const ForwardBatch& batch, std::span<float> hidden);

  // MLA (model_forward_mla.cc): attention output [num_tokens, H * v] into act_.attention.
  void MlaAttention(int32_t layer, const ForwardBatch& batch, KvStorage& kv);
  void MlaRopeQueries(const MlaWeights& mla, int64_t num_tokens, float*& q, int64_t& q_stride);
  void MlaStoreLatent(int32_t layer, const ForwardBatch& batch, KvStorage& kv);
  void MlaAbsorbedAttend(int32_t layer, const ForwardBatch& batch, const KvStorage& kv,
                         const float* q, int64_t q_stride);
  void MlaExpandedAttend(int32_t layer, const ForwardBatch& batch, const KvStorage& kv,
                         const float* q, int64_t q_stride);
  // MoE (model_forward_moe.cc): normed = routed experts + shared experts of normed.
  void MoeMlp(const LayerWeights& layer, int64_t num_tokens);
  void GroupByExpert(int64_t num_tokens);
  void RunExperts(const MoeWeights& moe);

  const ModelConfig& config_;
  const LoadOptions::MlaMode mla_mode_;
  const ModelWeights& weights_;
  Activations& act_;
  MlaActivations& mla_act_;
  MoeActivations& moe_act_;
  ThreadPool* pool_;
};

}  // namespace surge
