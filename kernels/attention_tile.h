// Internal to kernels/attention*.cc: the running state of a tile of queries, shared by
// the portable tile loop (attention.cc) and the AVX-512 one (attention_avx512.cc).
#pragma once

#include <cstdint>

#include "kernels/attention.h"

namespace surge {

// Keys per step of the online softmax: the portable loop's and AttendQueryTileAvx512's
// steps end at block boundaries too, the flash kernel's are the positions [32m, 32m + 32).
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

// Two AVX-512 tile kernels, chosen by the model's shape -- never by the batch -- so a
// query's bits never depend on what else runs (docs/PERF.md, "Flash tile attention"):
// - MHA (one query head per kv head): decode keeps the row ops (cheap for a lone
//   (query, head) pair), and prefill tiles of >= 4 pairs take AttendQueryTileAvx512,
//   which computes the row ops' very bits with the keys transposed;
// - grouped heads (GQA, MLA's absorbed attention: several query heads per kv head):
//   AttendQueryTileFlashAvx512 for every tile, decode included, with its own order.

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

// The widest head the flash kernel takes: DeepSeek-V3's MLA rows (kv_lora_rank 512 + 64
// rope dims), whose absorbed attention runs over the latent cache as one kv head.
constexpr int32_t kAttentionTileMaxHeadDim = 576;

// Whether AttendQueryTileFlashAvx512 takes these rows and heads: f32, bf16, f16 or int8,
// head_dim a multiple of 16 up to kAttentionTileMaxHeadDim, and at least two query heads
// per kv head. With one head per kv head a lone decode pair would pay a whole key tile's
// transpose alone: measured 12% less output at c=32 on the 110M MHA Llama than the row
// ops, so MHA keeps them.
inline bool AttendQueryTileFlashAvx512Takes(const PagedKvView& kv, const AttentionQueries& queries) {
  return kv.dtype != KvDType::kInt4 && kv.head_dim % 16 == 0 &&
         kv.head_dim <= kAttentionTileMaxHeadDim && queries.num_heads >= 2 * kv.num_kv_heads;
}

// AVX-512 flash attention: the tile's key range for every query of `tile`, in key tiles
// of 32 consecutive positions (whichever blocks hold them), each widened to f32 and
// transposed once for all of the tile's (query, head) pairs; per pair and key tile, each
// score is two FMA chains over d, the softmax step runs in f32 (attention_flash_avx512.cc
// states the order), and each output lane is one FMA chain over the keys ascending. A
// pair's result depends on its query, its keys and its partition only -- not on the other
// pairs, the block size or the blocks -- so decode, prefill and any tiling agree bit for
// bit. Only for what AttendQueryTileFlashAvx512Takes.
void AttendQueryTileFlashAvx512(const PagedKvView& kv, const AttentionQueries& queries,
                                int32_t kv_head, AttentionQueryTile& tile);

}  // namespace surge
