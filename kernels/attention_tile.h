// Internal to kernels/attention*.cc: the running state of a tile of queries, shared by
// the portable tile loop (attention.cc) and the AVX-512 one (attention_avx512.cc).
#pragma once

#include <cstdint>

#include "kernels/attention.h"

namespace surge {

// Keys per step of the online softmax: the portable loop's steps end at block
// boundaries too, the AVX-512 kernel's are the aligned positions [32m, 32m + 32).
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

// The widest head the AVX-512 tile kernel takes: DeepSeek-V3's MLA rows (kv_lora_rank 512
// + 64 rope dims), whose absorbed attention runs over the latent cache as one kv head.
constexpr int32_t kAttentionTileMaxHeadDim = 576;

// Whether AttendQueryTileAvx512 takes kv's rows: f32, bf16, f16 or int8, head_dim a
// multiple of 16 up to kAttentionTileMaxHeadDim. At AVX-512 such rows always take it --
// a lone decode query as much as a prefill chunk -- so that both run the same arithmetic.
// int4 stays on the portable loop: its rows decode as scale * code + min per group
// (DotInt4), not as exactly widened codes times one row factor.
inline bool AttendQueryTileAvx512Takes(const PagedKvView& kv) {
  return kv.dtype != KvDType::kInt4 && kv.head_dim % 16 == 0 &&
         kv.head_dim <= kAttentionTileMaxHeadDim;
}

// AVX-512 flash attention: the tile's key range for every query of `tile`, in key tiles
// of 32 consecutive positions (whichever blocks hold them), each widened to f32 and
// transposed once for all of the tile's (query, head) pairs; per pair and key tile, each
// score is one FMA chain over d ascending, the softmax step runs in f32 (attention_avx512.cc
// states the order), and each output lane is one FMA chain over the keys ascending. A
// pair's result depends on its query, its keys and its partition only -- not on the other
// pairs, the block size or the blocks -- so decode, prefill and any tiling agree bit for
// bit. Its rounding differs from the portable loop's (which AVX-512 runs for int4 and
// other head dims only). Only for kv that AttendQueryTileAvx512Takes.
void AttendQueryTileAvx512(const PagedKvView& kv, const AttentionQueries& queries,
                           int32_t kv_head, AttentionQueryTile& tile);

}  // namespace surge
