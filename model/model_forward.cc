// The forward pass: embedding -> decoder layers -> final norm -> lm_head, over a flat batch.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/check.h"
#include "base/phase_profile.h"
#include "kernels/kv_codec.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/rope.h"
#include "model/model_forward.h"
#include "model/model.h"

namespace surge {

void RunForwardPass(const ForwardContext& context, const ForwardBatch& batch, KvStorage& kv,
                    std::span<float> logits, std::span<float> hidden) {
  ForwardPass(context).Run(batch, kv, logits, hidden);
}

void Model::Run(const ForwardBatch& batch, KvStorage& kv, std::span<float> logits,
                std::span<float> hidden) {
  RunForwardPass({config_, options_.mla_mode, weights_, activations_, pool_}, batch, kv, logits, hidden);
}

ForwardPass::ForwardPass(const ForwardContext& context)
    : config_(context.config),
      mla_mode_(context.mla_mode),
      weights_(context.weights),
      act_(context.activations.act),
      mla_act_(context.activations.mla),
      moe_act_(context.activations.moe),
      pool_(context.pool) {}

void ForwardPass::Run(const ForwardBatch& batch, KvStorage& kv, std::span<float> logits,
                      std::span<float> hidden) {
  PhaseSpan forward(Phase::kForward);
  PhaseMarks marks;
  IndexBatch(batch, kv, logits, hidden);
  const int64_t num_tokens = static_cast<int64_t>(batch.token_ids.size());
  if (num_tokens == 0) return;
  if (batch.input_rows.empty()) {
    Embed(batch.token_ids);
  } else {
    std::copy(batch.input_rows.begin(), batch.input_rows.end(), act_.hidden.begin());
  }
  PrepareRope(batch);
  marks.Mark(Phase::kEmbed);
  for (int32_t layer = 0; layer < config_.num_layers; ++layer) ForwardLayer(layer, batch, kv);
  marks = PhaseMarks();
  if (!batch.logits_rows.empty()) ComputeLogits(batch, logits);
  if (!batch.hidden_rows.empty()) ComputeHidden(batch, hidden);
  marks.Mark(Phase::kLogits);
}

void ForwardPass::IndexBatch(const ForwardBatch& batch, const KvStorage& kv, std::span<float> logits,
                             std::span<float> hidden) {
  const KvLayout& layout = kv.layout();
  const KvLayout expected = KvLayoutFor(config_, layout.block_size, layout.dtype);
  CHECK(layout.num_layers == expected.num_layers &&
        layout.num_kv_heads == expected.num_kv_heads && layout.head_dim == expected.head_dim &&
        layout.latent == expected.latent)
      << "KvStorage layout does not match the model";
  const int64_t num_tokens = static_cast<int64_t>(batch.token_ids.size());
  CHECK_EQ(logits.size(), batch.logits_rows.size() * config_.vocab_size);
  Reserve(num_tokens, static_cast<int64_t>(batch.sequences.size()),
          static_cast<int64_t>(batch.logits_rows.size()));
  for (int32_t id : batch.token_ids) CHECK(id >= 0 && id < config_.vocab_size) << "token id " << id;
  for (int32_t row : batch.logits_rows) CHECK(row >= 0 && row < num_tokens) << "logits row " << row;
  CHECK_EQ(hidden.size(), batch.hidden_rows.size() * config_.hidden_size);
  for (int32_t row : batch.hidden_rows) CHECK(row >= 0 && row < num_tokens) << "hidden row " << row;
  CHECK(batch.input_rows.empty() || static_cast<int64_t>(batch.input_rows.size()) == num_tokens * config_.hidden_size)
      << "input rows: " << batch.input_rows.size() << " values for " << num_tokens << " tokens";
  std::fill_n(act_.sequence_of_token.begin(), num_tokens, -1);
  for (size_t s = 0; s < batch.sequences.size(); ++s) {
    const SequenceChunk& seq = batch.sequences[s];
    CHECK(seq.token_begin >= 0 && seq.num_tokens >= 0 && seq.start_position >= 0 &&
          seq.token_begin + seq.num_tokens <= num_tokens)
        << "sequence " << s << " lies outside the batch";
    const int64_t num_positions = int64_t{seq.start_position} + seq.num_tokens;
    CHECK_GE(static_cast<int64_t>(seq.block_table.size()) * layout.block_size, num_positions)
        << "sequence " << s << ": block table too short";
    for (BlockId block : seq.block_table)
      CHECK(block >= 0 && block < kv.num_blocks()) << "block " << block;
    for (int32_t t = seq.token_begin; t < seq.token_begin + seq.num_tokens; ++t) {
      CHECK_EQ(act_.sequence_of_token[t], -1) << "token " << t << " in two sequences";
      act_.sequence_of_token[t] = static_cast<int32_t>(s);
    }
  }
  for (int64_t t = 0; t < num_tokens; ++t)
    CHECK_GE(act_.sequence_of_token[t], 0) << "token " << t << " in no sequence";
}

void ForwardPass::Reserve(int64_t num_tokens, int64_t num_sequences, int64_t num_logits_rows) {
  const int64_t hidden = config_.hidden_size, inter = max_intermediate_size();
  if (num_tokens > act_.capacity_tokens) {
    act_.capacity_tokens = num_tokens;
    GrowTo(act_.hidden, num_tokens * hidden);
    GrowTo(act_.normed, num_tokens * hidden);
    GrowTo(act_.qkv, num_tokens * qkv_size());
    GrowTo(act_.attention, num_tokens * attention_output_size());
    GrowTo(act_.gate_up, num_tokens * 2 * inter);
    GrowTo(act_.mlp, num_tokens * inter);
    GrowTo(act_.rope_cos, num_tokens * rope_dim() / 2);
    GrowTo(act_.rope_sin, num_tokens * rope_dim() / 2);
    GrowTo(act_.sequence_of_token, num_tokens);
    if (config_.mla) ReserveMla(num_tokens);
    if (config_.moe) ReserveMoe(num_tokens);
  }
  GrowTo(act_.logits_input, num_logits_rows * hidden);
  GrowTo(act_.chunks, num_sequences);
}

void ForwardPass::Embed(std::span<const int32_t> token_ids) {
  const int64_t hidden = config_.hidden_size;
  for (size_t t = 0; t < token_ids.size(); ++t) {
    std::memcpy(&act_.hidden[t * hidden], &weights_.embed_tokens[token_ids[t] * hidden],
                hidden * sizeof(float));
  }
}

// cos/sin of every token's position (shared by q and k of all layers), times YaRN's
// cos/sin scale where it applies.
void ForwardPass::PrepareRope(const ForwardBatch& batch) {
  const int64_t half = rope_dim() / 2;
  pool_->ParallelFor(static_cast<int64_t>(batch.token_ids.size()), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const SequenceChunk& seq = batch.sequences[act_.sequence_of_token[t]];
      const int64_t position = seq.start_position + (t - seq.token_begin);
      float* cos = &act_.rope_cos[t * half];
      float* sin = &act_.rope_sin[t * half];
      RopeCosSin(position, weights_.inv_freq.data(), half, cos, sin);
      if (weights_.rope_cos_sin_scale != 1.0f) {
        for (int64_t i = 0; i < half; ++i) cos[i] *= weights_.rope_cos_sin_scale, sin[i] *= weights_.rope_cos_sin_scale;
      }
    }
  });
}

void ForwardPass::ForwardLayer(int32_t index, const ForwardBatch& batch, KvStorage& kv) {
  const LayerWeights& layer = weights_.layers[index];
  const int64_t num_tokens = static_cast<int64_t>(batch.token_ids.size());
  // Attention block: normed = norm(hidden); hidden += o_proj(attention(qkv(normed))).
  PhaseMarks marks;
  RmsNormRows(layer.input_norm, num_tokens);
  marks.Mark(Phase::kNorm);
  MatMul(act_.normed.data(), num_tokens, layer.qkv.matrix(), layer.qkv.bias_or_null(),
         act_.qkv.data(), pool_);
  marks.Mark(Phase::kQkv);
  if (layer.mla) {
    MlaAttention(index, batch, kv);  // marks its own phases
    marks = PhaseMarks();
  } else {
    RopeAndStoreKv(index, batch, kv);
    marks.Mark(Phase::kRopeKvStore);
    const float scale = 1.0f / std::sqrt(static_cast<float>(config_.head_dim));
    Attend(kv.view(index), {act_.qkv.data(), qkv_size(), act_.attention.data(), q_size(), scale},
           batch);
    marks.Mark(Phase::kAttention);
  }
  MatMul(act_.attention.data(), num_tokens, layer.o_proj.matrix(), layer.o_proj.bias_or_null(),
         act_.normed.data(), pool_);
  marks.Mark(Phase::kOProj);
  AddToResidual(num_tokens);
  marks.Mark(Phase::kResidual);
  // MLP block: hidden += mlp(normed), normed = norm(hidden); the MLP is dense or MoE.
  RmsNormRows(layer.post_attention_norm, num_tokens);
  marks.Mark(Phase::kNorm);
  if (layer.moe) {
    MoeMlp(layer, num_tokens);  // both mark their own phases
  } else {
    DenseMlp(layer.gate_up, layer.down, num_tokens);
  }
  marks = PhaseMarks();
  AddToResidual(num_tokens);
  marks.Mark(Phase::kResidual);
}

void ForwardPass::RmsNormRows(const std::vector<float>& weight, int64_t num_tokens) {
  const int64_t hidden = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  pool_->ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    RmsNorm(&act_.hidden[begin * hidden], weight.data(), end - begin, hidden, eps,
            &act_.normed[begin * hidden]);
  });
}

// Norms (Qwen3) and rotates each token's q and k heads, then stores its k and v heads --
// quantized to the cache's format, one row per kv head -- into the block that holds its
// position. Each row is quantized on its own, so what the cache holds for a token never
// depends on the batch around it.
void ForwardPass::RopeAndStoreKv(int32_t layer, const ForwardBatch& batch, KvStorage& kv) {
  const int64_t half = config_.head_dim / 2, block_size = kv.layout().block_size;
  const int64_t num_heads = config_.num_heads, num_kv_heads = config_.num_kv_heads;
  const int32_t head_dim = static_cast<int32_t>(config_.head_dim);
  const LayerWeights& norms = weights_.layers[layer];
  const float eps = static_cast<float>(config_.rms_norm_eps);
  const KvRowOps& rows = KvRowOpsFor(ActiveSimdLevel(), kv.layout().dtype);
  const PagedKvView view = kv.view(layer);
  uint8_t* k_cache = kv.k_layer(layer);  // [num_blocks, num_kv_heads, block_size, row_bytes]
  uint8_t* v_cache = kv.v_layer(layer);
  pool_->ParallelFor(static_cast<int64_t>(batch.token_ids.size()), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* q = &act_.qkv[t * qkv_size()];
      float* k = q + q_size();
      const float* v = k + kv_size();
      if (!norms.q_norm.empty()) {  // Qwen3: each head normed on its own, before RoPE
        RmsNorm(q, norms.q_norm.data(), num_heads, head_dim, eps, q);
        RmsNorm(k, norms.k_norm.data(), num_kv_heads, head_dim, eps, k);
      }
      ApplyRope(q, num_heads, config_.head_dim, &act_.rope_cos[t * half], &act_.rope_sin[t * half]);
      ApplyRope(k, num_kv_heads, config_.head_dim, &act_.rope_cos[t * half],
                &act_.rope_sin[t * half]);
      const SequenceChunk& seq = batch.sequences[act_.sequence_of_token[t]];
      const int64_t position = seq.start_position + (t - seq.token_begin);
      const BlockId block = seq.block_table[position / block_size];
      for (int32_t h = 0; h < num_kv_heads; ++h) {
        const int64_t offset =
            PagedKvRowOffset(view, block, h, static_cast<int32_t>(position % block_size));
        rows.quantize(k + h * head_dim, head_dim, k_cache + offset);
        rows.quantize(v + h * head_dim, head_dim, v_cache + offset);
      }
    }
  });
}

// A decode -- a chunk of one token -- whose context spans several key partitions is
// split along its keys (flash-decoding, kernels/attention.h), so that a lone long
// sequence keeps every thread busy. Decided from the sequence's own chunk only, and the
// split gives the very bits the tile path would: neither changes any result.
static bool SplitsDecode(const SequenceChunk& seq) {
  return seq.num_tokens == 1 && NumAttentionPartitions(seq.start_position + 1) > 1;
}

void ForwardPass::PlanSplitDecodes(const PagedKvView& view, const ForwardBatch& batch) {
  act_.split_sequences.clear();
  act_.split_item_begin.assign(1, 0);
  act_.split_partials_begin.assign(1, 0);
  for (size_t s = 0; s < batch.sequences.size(); ++s) {
    const SequenceChunk& seq = batch.sequences[s];
    if (!SplitsDecode(seq)) continue;
    const int32_t num_keys = seq.start_position + 1;
    act_.split_sequences.push_back(static_cast<int32_t>(s));
    act_.split_item_begin.push_back(act_.split_item_begin.back() +
                                    int64_t{view.num_kv_heads} * NumAttentionPartitions(num_keys));
    act_.split_partials_begin.push_back(
        act_.split_partials_begin.back() +
        AttentionPartialsFloats(static_cast<int32_t>(config_.num_heads), view.head_dim, num_keys));
  }
  GrowTo(act_.attention_partials, act_.split_partials_begin.back());
}

// Split work item `split_item`: one (split decode, kv head, key partition).
void ForwardPass::AttendSplitPartition(const PagedKvView& view, int64_t split_item) {
  const auto& item_begin = act_.split_item_begin;
  const size_t i =
      std::upper_bound(item_begin.begin(), item_begin.end(), split_item) - item_begin.begin() - 1;
  const int64_t local = split_item - item_begin[i];
  const int64_t num_partitions = (item_begin[i + 1] - item_begin[i]) / view.num_kv_heads;
  PagedAttentionPartition(view, act_.chunks[act_.split_sequences[i]], 0,
                          static_cast<int32_t>(local / num_partitions),
                          static_cast<int32_t>(local % num_partitions),
                          &act_.attention_partials[act_.split_partials_begin[i]]);
}

// One work item per (tile of up to kMaxPagedAttentionQueryTile consecutive tokens, kv
// head): the query heads of that kv head, for each token against its sequence's keys up
// to the token's position. A tile spanning sequences is split at their boundaries; how
// tokens are tiled never changes a result (PagedAttentionQueries is bit for bit
// PagedAttention per query), so tiles shrink until every thread has several items
// (decode batches: one token per tile). Split decodes (above) take one item per (kv
// head, key partition) after the tiles instead, and one merge per kv head after that.
void ForwardPass::Attend(const PagedKvView& view, const AttentionTarget& target,
                         const ForwardBatch& batch) {
  for (size_t s = 0; s < batch.sequences.size(); ++s) {
    const SequenceChunk& seq = batch.sequences[s];
    act_.chunks[s] = AttentionQueries{target.q + seq.token_begin * target.q_stride,
                                      target.q_stride,
                                      target.out + seq.token_begin * target.out_stride,
                                      target.out_stride,
                                      seq.num_tokens,
                                      static_cast<int32_t>(config_.num_heads),
                                      seq.start_position,
                                      seq.block_table,
                                      target.scale};
  }
  PlanSplitDecodes(view, batch);
  const int64_t num_kv_heads = view.num_kv_heads;
  const int64_t num_tokens = static_cast<int64_t>(batch.token_ids.size());
  const int64_t tile = std::clamp<int64_t>(
      num_tokens * num_kv_heads / (4 * int64_t{pool_->num_threads()}), 1,
      kMaxPagedAttentionQueryTile);
  const int64_t num_tile_items = (num_tokens + tile - 1) / tile * num_kv_heads;
  pool_->ParallelFor(num_tile_items + act_.split_item_begin.back(), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      if (item >= num_tile_items) {
        AttendSplitPartition(view, item - num_tile_items);
        continue;
      }
      const int32_t kv_head = static_cast<int32_t>(item % num_kv_heads);
      const int64_t tile_end = std::min(num_tokens, (item / num_kv_heads + 1) * tile);
      for (int64_t t = item / num_kv_heads * tile; t < tile_end;) {
        const int32_t s = act_.sequence_of_token[t];
        const SequenceChunk& seq = batch.sequences[s];
        const int64_t run_end = std::min<int64_t>(tile_end, seq.token_begin + seq.num_tokens);
        if (!SplitsDecode(seq)) {
          PagedAttentionQueries(view, act_.chunks[s], static_cast<int32_t>(t - seq.token_begin),
                                static_cast<int32_t>(run_end - seq.token_begin), kv_head);
        }
        t = run_end;
      }
    }
  });
  if (act_.split_sequences.empty()) return;
  pool_->ParallelFor(static_cast<int64_t>(act_.split_sequences.size()) * num_kv_heads,
                     [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t i = item / num_kv_heads;
      MergeAttentionPartitions(view, act_.chunks[act_.split_sequences[i]], 0,
                               static_cast<int32_t>(item % num_kv_heads),
                               &act_.attention_partials[act_.split_partials_begin[i]]);
    }
  });
}

void ForwardPass::AddToResidual(int64_t num_tokens) {
  const int64_t hidden = config_.hidden_size;
  pool_->ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    AddInPlace(&act_.normed[begin * hidden], &act_.hidden[begin * hidden], (end - begin) * hidden);
  });
}

void ForwardPass::DenseMlp(const Linear& gate_up, const Linear& down, int64_t num_tokens) {
  const int64_t inter = down.matrix().cols;
  PhaseMarks marks;
  MatMul(act_.normed.data(), num_tokens, gate_up.matrix(), gate_up.bias_or_null(),
         act_.gate_up.data(), pool_);
  marks.Mark(Phase::kGateUp);
  pool_->ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* gate = &act_.gate_up[t * 2 * inter];
      SiluMul(gate, gate + inter, inter, &act_.mlp[t * inter]);
    }
  });
  marks.Mark(Phase::kActivation);
  MatMul(act_.mlp.data(), num_tokens, down.matrix(), down.bias_or_null(), act_.normed.data(),
         pool_);
  marks.Mark(Phase::kDown);
}

// Final norm of just the requested rows, then lm_head straight into `logits`.
void ForwardPass::ComputeLogits(const ForwardBatch& batch, std::span<float> logits) {
  const int64_t hidden = config_.hidden_size;
  const int64_t num_rows = static_cast<int64_t>(batch.logits_rows.size());
  const float eps = static_cast<float>(config_.rms_norm_eps);
  for (int64_t r = 0; r < num_rows; ++r) {
    RmsNorm(&act_.hidden[batch.logits_rows[r] * hidden], weights_.final_norm.data(), 1, hidden, eps,
            &act_.logits_input[r * hidden]);
  }
  MatMul(act_.logits_input.data(), num_rows, weights_.lm_head.matrix(), nullptr, logits.data(), pool_);
}

// The same final norm as ComputeLogits (per row, so batch-invariant), without lm_head;
// or the rows before it when the batch asks for those.
void ForwardPass::ComputeHidden(const ForwardBatch& batch, std::span<float> hidden) {
  const int64_t size = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  if (batch.hidden_before_final_norm) {
    for (size_t r = 0; r < batch.hidden_rows.size(); ++r) {
      std::copy_n(&act_.hidden[batch.hidden_rows[r] * size], size, &hidden[r * size]);
    }
    return;
  }
  pool_->ParallelFor(static_cast<int64_t>(batch.hidden_rows.size()), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      RmsNorm(&act_.hidden[batch.hidden_rows[r] * size], weights_.final_norm.data(), 1, size, eps,
              &hidden[r * size]);
    }
  });
}

}  // namespace surge
