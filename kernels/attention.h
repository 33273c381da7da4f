// Paged attention: causal attention of one sequence's queries against K/V that live in
// fixed-size blocks of a shared pool, found through the sequence's block table.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/kv_codec.h"
#include "kernels/simd.h"
#include "kernels/thread_pool.h"

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

// Keys per partition of a query's context: keys [p * kAttentionPartitionTokens,
// (p + 1) * kAttentionPartitionTokens) form partition p. Fixed -- never derived from the
// thread count or the batch -- so how a context is cut depends on its length alone.
// A multiple of the key tile (32) and of the default KV block (16 tokens).
constexpr int32_t kAttentionPartitionTokens = 512;

inline int32_t NumAttentionPartitions(int32_t num_keys) {
  return (num_keys + kAttentionPartitionTokens - 1) / kAttentionPartitionTokens;
}

// Computes out for query `query` and the query heads that share kv head `kv_head`
// (heads [kv_head * G, (kv_head + 1) * G), G = num_heads / num_kv_heads), so that each
// K/V row is read once per group. Per key partition, one online-softmax pass over its
// keys in tiles (with grouped heads at AVX-512, the flash kernel's aligned 32-key tiles;
// otherwise tiles that also end at block boundaries: attention_tile.h), from a fresh
// state; the partitions' states (max, sum of exp, unnormalized output) are merged in order
// 0, 1, 2, ... (a context of one partition -- up to kAttentionPartitionTokens keys --
// is that single pass, as before the split existed; a longer one rounds differently
// from that old single pass by the merges, never more). No allocation past a per-thread
// scratch that only grows. The result depends on the keys, the query and (except in
// the flash kernel) block_size only -- not on which blocks hold the keys, on the other
// queries, or on threads -- so it is batch-invariant for a fixed block size. Independent
// (query, kv_head) pairs may run on different threads. Quantized rows are dequantized in
// registers, the same way whatever the batch, so every dtype keeps this contract.
void PagedAttention(const PagedKvView& kv, const AttentionQueries& queries, int32_t query,
                    int32_t kv_head);

// Queries per pass over the keys in PagedAttentionQueries; longer ranges take several.
constexpr int32_t kMaxPagedAttentionQueryTile = 128;

// PagedAttention for queries [query_begin, query_end) of `queries` (a prefill chunk),
// bit for bit what PagedAttention computes for each query alone: each query folds
// exactly its own keys through the same operations in the same order. Faster because a
// tile of up to kMaxPagedAttentionQueryTile queries takes each key tile's K/V rows while
// they are in L1 (widened and transposed, or int4 rows decoded, once for the whole tile);
// 128 queries per pass read a long context's K/V an eighth as often as 16 did (at 16K
// keys f32 prefill attention: 2.5x faster at 64, another 1.2x at 128; docs/PERF.md).
void PagedAttentionQueries(const PagedKvView& kv, const AttentionQueries& queries,
                           int32_t query_begin, int32_t query_end, int32_t kv_head);
void PagedAttentionQueriesWithLevel(SimdLevel level, const PagedKvView& kv,
                                    const AttentionQueries& queries, int32_t query_begin,
                                    int32_t query_end, int32_t kv_head);
void PagedAttentionWithLevel(SimdLevel level, const PagedKvView& kv,
                             const AttentionQueries& queries, int32_t query, int32_t kv_head);

// Flash-decoding: one query's attention split along its keys, so that a lone long
// sequence keeps every thread busy. Partition p of kv head g's heads is computed on its
// own (PagedAttentionPartition, any thread, any order) into the query's partials
// buffer; MergeAttentionPartitions then folds partitions 0, 1, 2, ... in that order and
// writes out. Bit for bit what PagedAttention computes for the query: the same
// partition passes and the same merge in the same order. So a query's output never
// depends on whether it was split, on the thread count or on the pool's schedule, nor
// on what else is in the batch; it depends on its context length (which fixes the
// partitions), as it always did.
//
// The partials of one query: [num_kv_heads, num_partitions, G, head_dim + 2] floats,
// each head's unnormalized output then its running max and sum of exp.
inline int64_t AttentionPartialsFloats(int32_t num_heads, int32_t head_dim, int32_t num_keys) {
  return int64_t{num_heads} * NumAttentionPartitions(num_keys) * (head_dim + 2);
}
void PagedAttentionPartitionWithLevel(SimdLevel level, const PagedKvView& kv,
                                      const AttentionQueries& queries, int32_t query,
                                      int32_t kv_head, int32_t partition, float* partials);
void MergeAttentionPartitionsWithLevel(SimdLevel level, const PagedKvView& kv,
                                       const AttentionQueries& queries, int32_t query,
                                       int32_t kv_head, const float* partials);
void PagedAttentionPartition(const PagedKvView& kv, const AttentionQueries& queries,
                             int32_t query, int32_t kv_head, int32_t partition, float* partials);
void MergeAttentionPartitions(const PagedKvView& kv, const AttentionQueries& queries,
                              int32_t query, int32_t kv_head, const float* partials);

// Query `query` (all kv heads) on `pool`: one item per (kv head, partition), then one
// merge per kv head; a single partition is one item per kv head (PagedAttention).
// partials: AttentionPartialsFloats(...) floats of the query's scratch.
void PagedDecodeAttentionWithLevel(SimdLevel level, ThreadPool& pool, const PagedKvView& kv,
                                   const AttentionQueries& queries, int32_t query,
                                   float* partials);
void PagedDecodeAttention(ThreadPool& pool, const PagedKvView& kv, const AttentionQueries& queries,
                          int32_t query, float* partials);

}  // namespace surge
