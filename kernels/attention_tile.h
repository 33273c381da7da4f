// Internal to kernels/attention*.cc: the running state of a tile of queries, shared by
// the portable tile loop (attention.cc) and the AVX-512 one (attention_avx512.cc).
#pragma once

#include <cstdint>

#include "kernels/attention.h"

namespace surge {

// Keys per step of the online softmax (a step never crosses a block): both tile loops
// fold the same steps, so they agree bit for bit.
constexpr int32_t kAttentionKeyTile = 32;
// Query heads per pass over the keys; bigger groups take several passes.
constexpr int32_t kAttentionMaxHeadsPerPass = 16;

// Running softmax state of one query head: out holds sum_j exp(s_j - max) * v_j.
struct AttentionHeadState {
  const float* q;
  float* out;
  float max;
  float sum;
};

// A tile of queries, each with up to kAttentionMaxHeadsPerPass heads of one kv head.
struct AttentionQueryTile {
  AttentionHeadState heads[kMaxPagedAttentionQueryTile][kAttentionMaxHeadsPerPass];  // [query, head]
  int32_t num_keys[kMaxPagedAttentionQueryTile];  // query i sees keys [0, num_keys[i])
  int32_t num_queries = 0;
  int32_t num_heads = 0;
  // The keys this pass folds: query i folds [key_begin, min(key_end, num_keys[i])) -- one
  // key partition (kAttentionPartitionTokens), or everything when the context is shorter.
  int32_t key_begin = 0;
  int32_t key_end = kAttentionPartitionTokens;
};

// Whether AttendQueryTileAvx512 takes kv's rows: f32, bf16, f16 or int8, head_dim 64 or
// 128. int4 stays on the portable loop: its rows decode as scale * code + min per group
// (DotInt4), not as exactly widened codes times one row factor, and with several heads
// the portable loop runs its decoded-once path (VecOps dot / axpy over decoded rows);
// that the transposed chains would reproduce both is plausible but not proven or tested.
inline bool AttendQueryTileAvx512Takes(const PagedKvView& kv) {
  return kv.dtype != KvDType::kInt4 && (kv.head_dim == 64 || kv.head_dim == 128);
}

// AVX-512: the tile's key range for every query of `tile`, bit for bit what the portable
// loop computes with the AVX-512 row ops (the same widened values, dot chains and
// reduction tree, the row factor applied where the row ops apply it, the same fold and
// axpy), but each key tile's K rows are widened to f32 and transposed once so that a
// query's scores for 16 keys come from one vector FMA chain instead of 16 horizontal
// sums. Only for kv that AttendQueryTileAvx512Takes.
void AttendQueryTileAvx512(const PagedKvView& kv, const AttentionQueries& queries,
                           int32_t kv_head, AttentionQueryTile& tile);

}  // namespace surge
