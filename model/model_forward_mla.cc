// ForwardPass::MlaAttention: DeepSeek's Multi-head Latent Attention over the paged latent cache.
// Per token the cache holds [RMSNorm(latent) (L), rope(k_pe) (R)]. Absorbed mode folds
// W_UK into the query and W_UV into the output, so every head attends to the latent rows
// themselves (one kv head of L + R values; V = their first L values). Expanded mode
// rebuilds per-head K = [W_UK c, k_pe] and V = W_UV c from the cache (the definition).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/check.h"
#include "base/phase_profile.h"
#include "kernels/kv_codec.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/rope.h"
#include "kernels/vec_ops.h"
#include "model/model_forward.h"

namespace surge {
namespace {


// dst[t * dst_stride ...] = src[t * src_stride ...], n floats per row, num_rows rows.
void CopyRows(const float* src, int64_t src_stride, float* dst, int64_t dst_stride,
              int64_t num_rows, int64_t n) {
  for (int64_t t = 0; t < num_rows; ++t) {
    std::memcpy(dst + t * dst_stride, src + t * src_stride, n * sizeof(float));
  }
}

}  // namespace

void ForwardPass::ReserveMla(int64_t num_tokens) {
  const int64_t heads = config_.num_heads;
  const MlaConfig& m = *config_.mla;
  const int64_t row = m.kv_lora_rank + m.qk_rope_head_dim;
  GrowTo(mla_act_.q, num_tokens * heads * m.q_head_dim());
  GrowTo(mla_act_.q_latent, num_tokens * m.q_lora_rank);
  GrowTo(mla_act_.query, num_tokens * heads * row);
  GrowTo(mla_act_.out, num_tokens * heads * row);
  GrowTo(mla_act_.head_in, heads * num_tokens * std::max(m.qk_nope_head_dim, m.kv_lora_rank));
  GrowTo(mla_act_.head_out, heads * num_tokens * std::max(m.kv_lora_rank, m.v_head_dim));
}

void ForwardPass::MlaAttention(int32_t layer, const ForwardBatch& batch, KvStorage& kv) {
  const MlaWeights& mla = *weights_.layers[layer].mla;
  const int64_t num_tokens = static_cast<int64_t>(batch.token_ids.size());
  float* q = nullptr;
  int64_t q_stride = 0;
  PhaseMarks marks;
  MlaRopeQueries(mla, num_tokens, q, q_stride);
  marks.Mark(Phase::kMlaQuery);
  MlaStoreLatent(layer, batch, kv);
  marks.Mark(Phase::kRopeKvStore);
  if (mla_mode_ == LoadOptions::MlaMode::kExpanded) {
    MlaExpandedAttend(layer, batch, kv, q, q_stride);
    marks.Mark(Phase::kAttention);
  } else {
    MlaAbsorbedAttend(layer, batch, kv, q, q_stride);  // marks its own phases
  }
}

// q [num_tokens, q_stride]: head h at h * q_head_dim as [nope, rope], rope rotated. From
// Layer::qkv directly, or q_b_proj(RMSNorm(q_a)) when q_lora_rank is set.
void ForwardPass::MlaRopeQueries(const MlaWeights& mla, int64_t num_tokens, float*& q,
                                 int64_t& q_stride) {
  const MlaConfig& m = *config_.mla;
  const int64_t heads = config_.num_heads, head_dim = m.q_head_dim(), half = m.qk_rope_head_dim / 2;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  q = act_.qkv.data();
  q_stride = qkv_size();
  if (!mla.q_b.weight.empty()) {
    pool_->ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        RmsNorm(&act_.qkv[t * qkv_size()], mla.q_a_norm.data(), 1, m.q_lora_rank, eps,
                &mla_act_.q_latent[t * m.q_lora_rank]);
      }
    });
    MatMul(mla_act_.q_latent.data(), num_tokens, mla.q_b.matrix(), nullptr, mla_act_.q.data(),
           pool_);
    q = mla_act_.q.data();
    q_stride = heads * head_dim;
  }
  pool_->ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t h = 0; h < heads; ++h) {
        ApplyRope(q + t * q_stride + h * head_dim + m.qk_nope_head_dim, 1, m.qk_rope_head_dim,
                  &act_.rope_cos[t * half], &act_.rope_sin[t * half]);
      }
    }
  });
}

// Normalizes each token's latent and rotates its k_pe in place in Layer::qkv's output,
// then quantizes the [latent, k_pe] row into the cache slot of its position.
void ForwardPass::MlaStoreLatent(int32_t layer, const ForwardBatch& batch, KvStorage& kv) {
  const MlaConfig& m = *config_.mla;
  const MlaWeights& mla = *weights_.layers[layer].mla;
  const int32_t latent = static_cast<int32_t>(m.kv_lora_rank);
  const int32_t row = static_cast<int32_t>(m.kv_lora_rank + m.qk_rope_head_dim);
  const int64_t half = m.qk_rope_head_dim / 2, block_size = kv.layout().block_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  const KvRowOps& rows = KvRowOpsFor(ActiveSimdLevel(), kv.layout().dtype);
  const PagedKvView view = kv.view(layer);
  uint8_t* cache = kv.k_layer(layer);  // [num_blocks, 1, block_size, row_bytes]
  pool_->ParallelFor(static_cast<int64_t>(batch.token_ids.size()), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* kv_a = &act_.qkv[t * qkv_size() + mla_query_cols()];
      RmsNorm(kv_a, mla.kv_a_norm.data(), 1, latent, eps, kv_a);
      ApplyRope(kv_a + latent, 1, m.qk_rope_head_dim, &act_.rope_cos[t * half],
                &act_.rope_sin[t * half]);
      const SequenceChunk& seq = batch.sequences[act_.sequence_of_token[t]];
      const int64_t position = seq.start_position + (t - seq.token_begin);
      const BlockId block = seq.block_table[position / block_size];
      rows.quantize(kv_a, row,
                    cache + PagedKvRowOffset(view, block, 0, static_cast<int32_t>(position % block_size)));
    }
  });
}

// query[t, h] = [W_UK[h]^T q_nope[t, h], q_pe[t, h]]; out[t, h] = softmax(query . rows)
// rows over the latent cache; attention[t, h] = W_UV[h] out[t, h][:L]. Each head's
// products run on one thread (MatMul rows never depend on the batch or the thread).
void ForwardPass::MlaAbsorbedAttend(int32_t layer, const ForwardBatch& batch, const KvStorage& kv,
                                    const float* q, int64_t q_stride) {
  const MlaConfig& m = *config_.mla;
  const MlaWeights& mla = *weights_.layers[layer].mla;
  const int64_t num_tokens = static_cast<int64_t>(batch.token_ids.size());
  const int64_t heads = config_.num_heads, latent = m.kv_lora_rank, rope = m.qk_rope_head_dim;
  const int64_t nope = m.qk_nope_head_dim, v = m.v_head_dim, row = latent + rope;
  const int64_t in_size = num_tokens * std::max(nope, latent);
  const int64_t out_size = num_tokens * std::max(latent, v);
  PhaseMarks marks;
  pool_->ParallelFor(heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t h = begin; h < end; ++h) {
      float* in = &mla_act_.head_in[h * in_size];     // [num_tokens, nope]
      float* out = &mla_act_.head_out[h * out_size];  // [num_tokens, latent]
      CopyRows(q + h * m.q_head_dim(), q_stride, in, nope, num_tokens, nope);
      MatMul(in, num_tokens, mla.k_up_transposed[h].matrix(), nullptr, out, nullptr);
      float* query = &mla_act_.query[h * row];
      CopyRows(out, latent, query, heads * row, num_tokens, latent);
      CopyRows(q + h * m.q_head_dim() + nope, q_stride, query + latent, heads * row, num_tokens,
               rope);
    }
  });
  marks.Mark(Phase::kMlaAbsorb);
  const float scale = static_cast<float>(AttentionSoftmaxScale(config_));
  Attend(kv.view(layer),
         {mla_act_.query.data(), heads * row, mla_act_.out.data(), heads * row, scale}, batch);
  marks.Mark(Phase::kAttention);
  pool_->ParallelFor(heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t h = begin; h < end; ++h) {
      float* in = &mla_act_.head_in[h * in_size];     // [num_tokens, latent]
      float* out = &mla_act_.head_out[h * out_size];  // [num_tokens, v]
      CopyRows(&mla_act_.out[h * row], heads * row, in, latent, num_tokens, latent);
      MatMul(in, num_tokens, mla.v_up[h].matrix(), nullptr, out, nullptr);
      CopyRows(out, v, &act_.attention[h * v], heads * v, num_tokens, v);
    }
  });
  marks.Mark(Phase::kMlaAbsorb);
}

// Per sequence: the cached latents [context, L] and k_pe [context, R] in f32, then
// K_nope = latents W_UK^T [context, H * nope] and V = latents W_UV^T [context, H * v],
// and plain causal attention per (query, head) with scores q_nope . k_nope + q_pe . k_pe.
void ForwardPass::MlaExpandedAttend(int32_t layer, const ForwardBatch& batch, const KvStorage& kv,
                                    const float* q, int64_t q_stride) {
  const MlaConfig& m = *config_.mla;
  const MlaWeights& mla = *weights_.layers[layer].mla;
  const int64_t heads = config_.num_heads, latent = m.kv_lora_rank, rope = m.qk_rope_head_dim;
  const int64_t nope = m.qk_nope_head_dim, v = m.v_head_dim, row = latent + rope;
  const PagedKvView view = kv.view(layer);
  const float scale = static_cast<float>(AttentionSoftmaxScale(config_));
  const VecOps& ops = ActiveVecOps();
  for (const SequenceChunk& seq : batch.sequences) {
    const int64_t context = int64_t{seq.start_position} + seq.num_tokens;
    GrowTo(mla_act_.expanded, context * (row + latent + heads * (nope + v)));
    float* rows = mla_act_.expanded.data();         // [context, L + R]
    float* latents = rows + context * row;          // [context, L]: dense rows for MatMul
    float* keys = latents + context * latent;       // [context, H * nope]
    float* values = keys + context * heads * nope;  // [context, H * v]
    pool_->ParallelFor(context, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const BlockId block = seq.block_table[p / view.block_size];
        DequantizeKvRow(view.dtype,
                        view.k + PagedKvRowOffset(view, block, 0, static_cast<int32_t>(p % view.block_size)),
                        static_cast<int32_t>(row), rows + p * row);
      }
    });
    CopyRows(rows, row, latents, latent, context, latent);
    MatMul(latents, context, mla.k_up_all.matrix(), nullptr, keys, pool_);
    MatMul(latents, context, mla.v_up_all.matrix(), nullptr, values, pool_);
    pool_->ParallelFor(int64_t{seq.num_tokens} * heads, [&](int64_t begin, int64_t end) {
      std::vector<float> scores(context);  // per chunk: this mode is not the serving path
      for (int64_t item = begin; item < end; ++item) {
        const int64_t j = item / heads, h = item % heads, t = seq.token_begin + j;
        const int64_t num_keys = seq.start_position + j + 1;
        const float* qh = q + t * q_stride + h * m.q_head_dim();
        for (int64_t p = 0; p < num_keys; ++p) {
          scores[p] = scale * (ops.dot(qh, keys + p * heads * nope + h * nope, nope) +
                               ops.dot(qh + nope, rows + p * row + latent, rope));
        }
        Softmax(scores.data(), num_keys);
        float* out = &act_.attention[t * heads * v + h * v];
        std::fill_n(out, v, 0.0f);
        for (int64_t p = 0; p < num_keys; ++p) ops.axpy(scores[p], values + p * heads * v + h * v, out, v);
      }
    });
  }
}

}  // namespace surge
