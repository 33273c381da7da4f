// Model: a Llama / Qwen2 / Qwen3 / DeepSeek V2-V3 decoder -- its weights (linear layers in f32,
// bf16, int8 or int4; embeddings, norms and routers in f32), and one forward pass over a
// flat batch of tokens from many sequences, with K/V (or MLA's latent) kept in a paged
// KvStorage. A layer's attention is GQA or MLA and its MLP dense or MoE; the skeleton
// (embedding, pre-norm residual blocks, final norm, lm_head) is shared.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/attention.h"
#include "kernels/packed_weight.h"
#include "kernels/thread_pool.h"
#include "kernels/weight_matrix.h"
#include "kv/kv_layout.h"
#include "kv/kv_storage.h"
#include "model/config.h"
#include "model/decoder_parts.h"
#include "model/executor.h"
#include "model/forward_batch.h"

namespace surge {

class WeightSource;

// Storage of the linear layers (q/k/v, o_proj, gate/up, down, lm_head); embeddings and
// norms stay f32 (the gather and the norms want f32 rows). Activations are f32
// throughout; int8/int4 kernels quantize them per token inside MatMul.
enum class Quantization { kNone, kInt8, kInt4 };

struct LoadOptions {
  WeightDType dtype = WeightDType::kF32;        // kF32 or kBF16 when not quantized
  Quantization quantize = Quantization::kNone;  // int8: per output row; int4: per group
  int32_t group_size = 32;                      // int4: 32, 64 or 128 input columns
  // Under int4, lm_head stays int8 unless this is set: its error goes straight into the
  // logits (llama.cpp keeps its output matrix at 6 bits for the same reason). On
  // stories260K, int4-g32 perplexity is +3.7% over f32 with an int8 lm_head, +7% with
  // an int4 one (docs/PERF.md).
  bool int4_lm_head = false;
  // MLA (DeepSeek) attention: kAbsorbed folds kv_b_proj's K part into the query and its
  // V part into the output, so attention runs on the cached latent itself (cheapest for
  // decode); kExpanded rebuilds per-head K and V from the latent for every step (the
  // defining form; cheaper only for long prefill chunks). One mode per model keeps
  // results independent of how prompts are chunked.
  enum class MlaMode { kAbsorbed, kExpanded };
  MlaMode mla_mode = MlaMode::kAbsorbed;
  // GGUF only: what Q8_0 and Q6_K tensors become -- kInt8 (requantized per output row,
  // the default: measured in docs/PERF.md) or kBF16/kF32 (dequantized). Q4_0/Q4_K are
  // repacked as int4-g32 without requantizing; F32/F16/BF16 tensors take dtype/quantize
  // above like a Hugging Face model's.
  WeightDType gguf_wide_quant_dtype = WeightDType::kInt8;
};

// "f32", "bf16", "int8", "int4-g32", ...: the format LoadOptions select.
std::string LoadOptionsName(const LoadOptions& options);

// Batch invariance: a sequence's logits are bit-identical whatever else is in the batch
// and however its tokens are split into passes (for a fixed KV block size, SimdLevel and
// weight format; model_test, model_quantized_test and the reference test check it). Every
// step is computed per token row with an order that depends only on that row: MatMul gives
// each (row, output) a computation that depends only on that row of x, that row of W and K
// (an fma chain over k for f32/bf16; per-token activation quantization and exact integer
// sums for int8/int4 -- see kernels/matmul.h), RMSNorm / RoPE / SiLU / residual adds are
// per row, and attention of a (token, kv head) reads only its own sequence's K/V through
// its block table. Threads split rows and tiles, never a single dot product.
// The CPU executor.
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
  KvLayout kv_layout(int32_t block_size, KvDType dtype = KvDType::kF32) const override;

  // Runs the batch; writes [batch.logits_rows.size(), vocab_size] logits and
  // [batch.hidden_rows.size(), hidden_size] final-normed hidden states, and stores the
  // K/V of every batch token into `kv` through its sequence's block table. CHECKs that
  // the batch is well formed (ids in the vocabulary, every token in exactly one
  // sequence, block tables cover the positions, outputs sized right). Not thread-safe:
  // the activations are reused (grown to the largest batch seen, never shrunk).
  void Forward(const ForwardBatch& batch, KvStorage& kv, std::span<float> logits,
               std::span<float> hidden = {});
  // ModelExecutor: the same as Forward.
  void Run(const ForwardBatch& batch, KvStorage& kv, std::span<float> logits,
           std::span<float> hidden = {}) override {
    Forward(batch, kv, logits, hidden);
  }

 private:
  struct Layer {
    std::vector<float> input_norm;  // [hidden_size]
    // GQA: q, k, v rows stacked: [q_size + 2 * kv_size, hidden_size]. MLA: the query
    // rows then kv_a's: [mla_first_rows(), hidden_size] (MlaWeights).
    Linear qkv;
    std::vector<float> q_norm;  // [head_dim]: Qwen3's per-head RMSNorm of q; empty otherwise
    std::vector<float> k_norm;  // [head_dim]: the same for k
    std::unique_ptr<MlaWeights> mla;  // MLA layers only
    Linear o_proj;                    // [hidden_size, attention_output_size()]
    std::vector<float> post_attention_norm;  // [hidden_size]
    // The dense MLP -- or an MoE layer's shared experts (empty when it has none):
    Linear gate_up;  // gate rows, then up rows: [2 * inter, hidden_size]
    Linear down;     // [hidden_size, inter]
    std::unique_ptr<MoeWeights> moe;  // MoE layers only: the routed experts
  };
  // Activations of one forward pass, sized for the largest batch seen so far.
  struct Activations {
    int64_t capacity_tokens = 0;
    std::vector<float> hidden;  // [num_tokens, hidden_size]: the residual stream
    std::vector<float> normed;  // [num_tokens, hidden_size]: norm output, then o_proj/down output
    std::vector<float> qkv;     // [num_tokens, qkv_size()]
    std::vector<float> attention;            // [num_tokens, attention_output_size()]
    std::vector<float> gate_up;              // [num_tokens, 2 * max_intermediate_size()]
    std::vector<float> mlp;                  // [num_tokens, max_intermediate_size()]
    std::vector<float> rope_cos;             // [num_tokens, rope_dim() / 2]
    std::vector<float> rope_sin;             // [num_tokens, rope_dim() / 2]
    std::vector<int32_t> sequence_of_token;  // [num_tokens]: index into batch.sequences
    std::vector<float> logits_input;         // [num_logits_rows, hidden_size]: final-normed rows
    std::vector<AttentionQueries> chunks;    // [num_sequences]; q/out point into qkv/attention
  };
  // MLA's buffers (H heads, L = kv_lora_rank, R = qk_rope_head_dim).
  struct MlaActivations {
    int64_t capacity_tokens = 0;
    std::vector<float> q;          // [num_tokens, H * q_head_dim]: q_b output (q_lora_rank set)
    std::vector<float> q_latent;   // [num_tokens, q_lora_rank]: normed q_a output
    std::vector<float> query;      // [num_tokens, H, L + R]: absorbed queries
    std::vector<float> out;        // [num_tokens, H, L + R]: attention over the latent
    std::vector<float> head_in;    // [H, num_tokens, max(nope, L)]: one head's input rows
    std::vector<float> head_out;   // [H, num_tokens, max(L, v)]: one head's output rows
    // Expanded mode, one sequence at a time: [context, L + R] cached rows, [context, L]
    // latents, [context, H * nope] keys, [context, H * v] values.
    std::vector<float> expanded;
  };
  // MoE buffers (E routed experts, k = num_experts_per_tok).
  struct MoeActivations {
    int64_t capacity_tokens = 0;
    std::vector<float> router_logits;   // [num_tokens, E]
    std::vector<int32_t> expert_ids;    // [num_tokens, k]: ascending within a token
    std::vector<float> expert_weights;  // [num_tokens, k]
    std::vector<int32_t> slot_row;      // [num_tokens, k]: its row in the grouped buffers
    std::vector<int32_t> expert_begin;  // [E + 1]: grouped rows of expert e
    std::vector<int32_t> expert_fill;   // [E]: next free grouped row of expert e
    std::vector<int32_t> active_experts;  // experts with rows this layer (capacity E)
    std::vector<float> input;           // [num_tokens * k, hidden_size]: rows grouped by expert
    std::vector<float> gate_up;         // [num_tokens * k, 2 * moe_intermediate_size]
    std::vector<float> act;             // [num_tokens * k, moe_intermediate_size]
    std::vector<float> output;          // [num_tokens * k, hidden_size]
    std::vector<float> routed;          // [num_tokens, hidden_size]: weighted expert sum
  };

  Model(ModelConfig config, ThreadPool* pool, const LoadOptions& options);
  static StatusOr<std::unique_ptr<Model>> LoadGguf(const std::string& path, ThreadPool* pool,
                                                   const LoadOptions& options);
  Status LoadWeights(const WeightSource& store);
  Status LoadLayer(const WeightSource& store, int64_t index, Layer& layer);
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

  Status LoadDenseAttention(const WeightSource& store, const std::string& prefix, Layer& layer);
  // MLA layers and MoE MLPs (model_load_deepseek.cc).
  Status LoadMlaAttention(const WeightSource& store, const std::string& prefix, Layer& layer);
  Status LoadMoe(const WeightSource& store, const std::string& prefix, Layer& layer);
  Status LoadMlp(const WeightSource& store, const std::string& prefix, int64_t inter,
                 Layer& layer);

  int64_t q_size() const { return config_.num_heads * config_.head_dim; }
  int64_t kv_size() const { return config_.num_kv_heads * config_.head_dim; }
  // Columns of the first projection's output (Layer::qkv).
  int64_t qkv_size() const;
  // MLA: the query columns of Layer::qkv (q_lora_rank, or num_heads * q_head_dim).
  int64_t mla_query_cols() const;
  int64_t attention_output_size() const;  // o_proj's input: num_heads * v_head_dim under MLA
  int64_t max_intermediate_size() const;  // widest dense MLP (dense layers, shared experts)
  int64_t rope_dim() const;               // head_dim, or qk_rope_head_dim under MLA

  // CHECKs the batch (see Forward), grows the activations and fills sequence_of_token.
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
  void MoeMlp(const Layer& layer, int64_t num_tokens);
  void GroupByExpert(int64_t num_tokens);
  void RunExperts(const MoeWeights& moe);

  WeightFormat LinearFormat() const;  // the decoder layers' format
  WeightFormat LmHeadFormat() const;  // LinearFormat(), but int8 under int4 by default

  ModelConfig config_;
  LoadOptions options_;
  std::unique_ptr<ThreadPool> owned_pool_;  // only when Load got no pool
  ThreadPool* pool_;
  std::vector<float> inv_freq_;      // [rope_dim() / 2]: RoPE inverse frequencies
  float rope_cos_sin_scale_ = 1.0f;  // YaRN's mscale ratio; 1 otherwise
  std::vector<float> embed_tokens_;  // [vocab_size, hidden_size]
  std::vector<Layer> layers_;        // [num_layers]
  std::vector<float> final_norm_;    // [hidden_size]
  Linear lm_head_;                   // [vocab_size, hidden_size]; a packed copy when tied
  Activations act_;
  MlaActivations mla_act_;
  MoeActivations moe_act_;
};

}  // namespace surge
