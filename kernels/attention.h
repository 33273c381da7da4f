// Paged attention: causal attention of one sequence's queries against K/V that live in
// fixed-size blocks of a shared pool, found through the sequence's block table.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/kv_codec.h"
#include "kernels/simd.h"

namespace surge {

// One layer's K and V in the pool, each [num_blocks, num_kv_heads, block_size] rows of
// head_dim values in `dtype`'s row format (kernels/kv_codec.h: KvRowBytes bytes each).
// Head-major within a block, so one kv head's keys in a block are one contiguous run
// (block_size rows) that the hardware prefetcher streams, not rows a token apart.
struct PagedKvView {
  const uint8_t* k = nullptr;
  const uint8_t* v = nullptr;
  int32_t block_size = 0;  // tokens per block
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  KvDType dtype = KvDType::kF32;
};

// Byte offset of (block, kv_head, row) -- row = position % block_size -- in K or V.
inline int64_t PagedKvRowOffset(const PagedKvView& kv, int64_t block, int32_t kv_head,
                                int32_t row) {
  return ((block * kv.num_kv_heads + kv_head) * kv.block_size + row) *
         KvRowBytes(kv.dtype, kv.head_dim);
}

// The queries of one sequence chunk. Query j sits at position start_position + j and
// attends to keys [0, start_position + j] (causal); position p lives in block
// block_table[p / block_size] at row p % block_size.
struct AttentionQueries {
  const float* q = nullptr;  // [num_queries, q_stride]: head h at h * head_dim
  int64_t q_stride = 0;
  float* out = nullptr;  // [num_queries, out_stride]: head h at h * head_dim
  int64_t out_stride = 0;
  int32_t num_queries = 0;
  int32_t num_heads = 0;  // query heads; a multiple of num_kv_heads (GQA)
  int32_t start_position = 0;
  std::span<const int32_t> block_table;
  float scale = 1.0f;  // usually 1 / sqrt(head_dim)
};

// Computes out for query `query` and the query heads that share kv head `kv_head`
// (heads [kv_head * G, (kv_head + 1) * G), G = num_heads / num_kv_heads), so that each
// K/V row is read once per group. One online-softmax pass over the keys in tiles that
// end at block boundaries; no allocation. The result depends on the keys, the query and
// block_size only -- not on which blocks hold the keys or on the other queries -- so it
// is batch-invariant for a fixed block size. Independent (query, kv_head) pairs may run
// on different threads. Quantized rows are dequantized in registers (KvRowOps), the
// same way whatever the batch, so every dtype keeps this contract.
void PagedAttention(const PagedKvView& kv, const AttentionQueries& queries, int32_t query,
                    int32_t kv_head);

// Queries per pass over the keys in PagedAttentionQueries; longer ranges take several.
constexpr int32_t kMaxPagedAttentionQueryTile = 16;

// PagedAttention for queries [query_begin, query_end) of `queries` (a prefill chunk),
// bit for bit what PagedAttention computes for each query alone: each query folds
// exactly its own keys through the same operations in the same order. Faster because a
// tile of up to kMaxPagedAttentionQueryTile queries takes each block's K/V rows while
// they are in L1 (and int4 rows decoded once for the whole tile).
void PagedAttentionQueries(const PagedKvView& kv, const AttentionQueries& queries,
                           int32_t query_begin, int32_t query_end, int32_t kv_head);
void PagedAttentionQueriesWithLevel(SimdLevel level, const PagedKvView& kv,
                                    const AttentionQueries& queries, int32_t query_begin,
                                    int32_t query_end, int32_t kv_head);
void PagedAttentionWithLevel(SimdLevel level, const PagedKvView& kv,
                             const AttentionQueries& queries, int32_t query, int32_t kv_head);

}  // namespace surge
