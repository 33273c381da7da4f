// Internal to kernels/attention*.cc: the running state of a tile of queries, shared by
// the portable tile loop (attention.cc) and the AVX-512 f32 one (attention_avx512.cc).
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

// AVX-512, f32 K/V: the tile's key range for every query of `tile`, bit for bit what the portable
// loop computes with the AVX-512 row ops (the same dot chains and reduction tree, the
// same fold and axpy), but each key tile's K rows are transposed once so that a query's
// scores for 16 keys come from one vector FMA chain instead of 16 horizontal sums.
// False (nothing done) where it does not apply: another dtype, or head_dim not 64/128.
bool AttendQueryTileF32Avx512(const PagedKvView& kv, const AttentionQueries& queries,
                              int32_t kv_head, AttentionQueryTile& tile);

}  // namespace surge
