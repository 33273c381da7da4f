#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/check.h"
#include "kernels/attention_tile.h"
#include "kernels/vec_ops.h"

namespace surge {
namespace {

constexpr int32_t kKeyTile = kAttentionKeyTile;
constexpr int32_t kMaxHeadsPerPass = kAttentionMaxHeadsPerPass;
constexpr int32_t kMaxQueriesPerTile = kMaxPagedAttentionQueryTile;
using HeadState = AttentionHeadState;
using QueryTile = AttentionQueryTile;

// Folds one head's scores [0, n) into its running max and sum, turning them into
// exp(score - max) and rescaling what out holds when the max grows.
void FoldScores(const VecOps& ops, float* scores, int32_t n, int32_t head_dim, HeadState& head) {
  const float new_max = std::max(head.max, ops.max(scores, n));
  if (new_max > head.max && head.sum > 0.0f) {
    const float correction = std::exp(head.max - new_max);
    ops.scale(correction, head.out, head_dim);
    head.sum *= correction;
  }
  head.max = new_max;
  head.sum += ops.exp_shifted(scores, new_max, scores, n);
}

// Folds keys [t0, t0 + n) -- all in one block, rows k_rows / v_rows apart by row_stride
// bytes -- into each head's state; each head reads the rows itself, decoding them in
// registers, one row-op call per tile (dot_rows / axpy_rows: bit for bit dot / axpy row
// by row).
void AttendTile(const VecOps& ops, const KvRowOps& rows, const uint8_t* k_rows,
                const uint8_t* v_rows, int64_t row_stride, int32_t n, int32_t head_dim,
                float scale, HeadState* heads, int32_t num_heads) {
  float scores[kKeyTile];
  for (int32_t h = 0; h < num_heads; ++h) {
    HeadState& head = heads[h];
    rows.dot_rows(head.q, k_rows, row_stride, n, head_dim, scale, scores);
    FoldScores(ops, scores, n, head_dim, head);
    rows.axpy_rows(scores, v_rows, row_stride, n, head.out, head_dim);
  }
}

// Rows up to this many values are decoded once onto the stack for a group of heads.
constexpr int32_t kMaxDecodedDim = 512;

// row -> f32 values: axpy with a = 1 onto zeros, which is exact (1 * x + 0 = x).
void DecodeRow(const KvRowOps& rows, const uint8_t* row, int32_t head_dim, float* x) {
  std::fill_n(x, head_dim, 0.0f);
  rows.axpy(1.0f, row, x, head_dim);
}

// Decodes rows [0, n) of a tile, row_stride bytes apart, into x [n, head_dim] f32.
void DecodeRows(const KvRowOps& rows, const uint8_t* first, int64_t row_stride, int32_t n,
                int32_t head_dim, float* x) {
  for (int32_t t = 0; t < n; ++t) DecodeRow(rows, first + t * row_stride, head_dim, x + t * head_dim);
}

// AttendTile for several heads sharing an int4 kv head (GQA), on K/V rows decoded once
// into xk / xv [n, head_dim] f32 (L1) for every head (and query) of the tile instead of
// each head decoding them again. Per head, the same operations in the same order
// whatever the batch: still batch-invariant.
void AttendDecodedTile(const VecOps& ops, const float* xk, const float* xv, int32_t n,
                       int32_t head_dim, float scale, HeadState* heads, int32_t num_heads) {
  float scores[kMaxHeadsPerPass][kKeyTile];
  for (int32_t t = 0; t < n; ++t)
    for (int32_t h = 0; h < num_heads; ++h)
      scores[h][t] = ops.dot(heads[h].q, xk + t * head_dim, head_dim) * scale;
  for (int32_t h = 0; h < num_heads; ++h) FoldScores(ops, scores[h], n, head_dim, heads[h]);
  for (int32_t t = 0; t < n; ++t)
    for (int32_t h = 0; h < num_heads; ++h)
      ops.axpy(scores[h][t], xv + t * head_dim, heads[h].out, head_dim);
}

// The tile's key range for every query in `tile`, key tile by key tile: every query's
// key tiles are a prefix of the last (longest) query's -- they start at the same t0 and
// only the last one a query sees is cut short at its own num_keys -- so each query folds exactly
// the tiles, in the order, that it would alone, while a tile's K/V rows are read from
// memory (and int4 rows decoded) once for the whole query tile instead of per query.
void AttendQueryTile(const VecOps& ops, const KvRowOps& rows, const PagedKvView& kv,
                     const AttentionQueries& queries, int32_t kv_head, QueryTile& tile) {
  const int64_t row_stride = KvRowBytes(kv.dtype, kv.head_dim);  // consecutive positions
  // Only int4 rows cost enough to decode (nibble split, scale and min per group: ~6 ops
  // per 16 values) that a decoded copy pays for its stores and loads; for bf16/f16/int8
  // (1-2 ops) A/B runs could not tell the two apart. One head gains nothing from a copy.
  // The choice depends on the shape only, never on the batch (the two round differently).
  const bool decode_once =
      kv.dtype == KvDType::kInt4 && tile.num_heads > 1 && kv.head_dim <= kMaxDecodedDim;
  alignas(64) float xk[kKeyTile * kMaxDecodedDim];  // [n, head_dim]: 64 KiB of stack each
  alignas(64) float xv[kKeyTile * kMaxDecodedDim];
  const int32_t key_end = std::min(tile.key_end, tile.num_keys[tile.num_queries - 1]);
  for (int32_t t0 = tile.key_begin; t0 < key_end;) {
    const int32_t block_index = t0 / kv.block_size;
    const int32_t row = t0 % kv.block_size;
    const int32_t n = std::min({kKeyTile, kv.block_size - row, key_end - t0});
    const int64_t offset = PagedKvRowOffset(kv, queries.block_table[block_index], kv_head, row);
    const uint8_t* k_rows = kv.k + offset;
    const uint8_t* v_rows = kv.v + offset;
    if (decode_once) {
      DecodeRows(rows, k_rows, row_stride, n, kv.head_dim, xk);
      DecodeRows(rows, v_rows, row_stride, n, kv.head_dim, xv);
    }
    for (int32_t i = 0; i < tile.num_queries; ++i) {
      const int32_t n_i = std::min(n, tile.num_keys[i] - t0);  // this query's cut of the tile
      if (n_i <= 0) continue;
      if (decode_once) {
        AttendDecodedTile(ops, xk, xv, n_i, kv.head_dim, queries.scale, tile.heads[i],
                          tile.num_heads);
      } else {
        AttendTile(ops, rows, k_rows, v_rows, row_stride, n_i, kv.head_dim, queries.scale,
                   tile.heads[i], tile.num_heads);
      }
    }
    t0 += n;
  }
}

// Folds the tile's key range into its states (attention_tile.h: which kernel, by shape).
// AttendQueryTileAvx512 gives the portable loop's bits, so it may take only the tiles
// where transposing K pays (several (query, head) pairs); the flash kernel has bits of
// its own, so where it applies it takes every tile, a lone decode query's too.
void FoldTileKeys(SimdLevel level, const VecOps& ops, const KvRowOps& rows, const PagedKvView& kv,
                  const AttentionQueries& queries, int32_t kv_head, QueryTile& tile) {
  const bool wide_tile = tile.num_queries * tile.num_heads >= 4;
  if (level >= SimdLevel::kAvx512 && AttendQueryTileFlashAvx512Takes(kv, queries)) {
    AttendQueryTileFlashAvx512(kv, queries, kv_head, tile);
  } else if (level >= SimdLevel::kAvx512 && wide_tile && AttendQueryTileAvx512Takes(kv)) {
    AttendQueryTileAvx512(kv, queries, kv_head, tile);
  } else {
    AttendQueryTile(ops, rows, kv, queries, kv_head, tile);
  }
}

// Merges a later partition's state (max, sum, unnormalized out) into `head`, which holds
// the partitions before it. Both states have seen at least one key (finite max).
void MergePartition(const VecOps& ops, float max, float sum, const float* out, int32_t head_dim,
                    HeadState& head) {
  const float new_max = std::max(head.max, max);
  const float old_scale = std::exp(head.max - new_max);
  const float new_scale = std::exp(max - new_max);
  ops.scale(old_scale, head.out, head_dim);
  ops.axpy(new_scale, out, head.out, head_dim);
  head.sum = head.sum * old_scale + sum * new_scale;
  head.max = new_max;
}

// Fresh states for the tile's queries and heads [first, first + num_heads) of kv head
// `kv_head`'s group, with query i's head h writing out_of(i, h) (zeroed here).
template <typename OutOf>
void StartTile(const PagedKvView& kv, const AttentionQueries& queries, int32_t query_begin,
               int32_t kv_head, int32_t first, OutOf out_of, QueryTile& tile) {
  const int32_t group = queries.num_heads / kv.num_kv_heads;
  for (int32_t i = 0; i < tile.num_queries; ++i) {
    const int32_t query = query_begin + i;
    tile.num_keys[i] = queries.start_position + query + 1;
    DCHECK(static_cast<int64_t>(queries.block_table.size()) * kv.block_size >= tile.num_keys[i]);
    const float* q_row = queries.q + query * queries.q_stride;
    for (int32_t h = 0; h < tile.num_heads; ++h) {
      const int64_t offset = static_cast<int64_t>(kv_head * group + first + h) * kv.head_dim;
      tile.heads[i][h] = {q_row + offset, out_of(i, h, offset),
                          -std::numeric_limits<float>::infinity(), 0.0f};
      std::fill_n(tile.heads[i][h].out, kv.head_dim, 0.0f);
    }
  }
}

// Scratch for the later partitions' outputs of one head pass: grown, never shrunk.
float* PartitionScratch(int64_t num_floats) {
  thread_local std::vector<float> scratch;
  if (static_cast<int64_t>(scratch.size()) < num_floats) scratch.resize(num_floats);
  return scratch.data();
}

// Queries [query_begin, query_end) (at most kMaxQueriesPerTile), heads [first, first +
// num_heads) of kv head `kv_head`'s group: partition 0 straight into out, each later
// partition into scratch from a fresh state and merged in, partition by partition.
void AttendHeadPass(SimdLevel level, const VecOps& ops, const KvRowOps& rows,
                    const PagedKvView& kv, const AttentionQueries& queries, int32_t query_begin,
                    int32_t query_end, int32_t kv_head, int32_t first, int32_t num_heads) {
  QueryTile tile;
  tile.num_queries = query_end - query_begin;
  tile.num_heads = num_heads;
  StartTile(kv, queries, query_begin, kv_head, first,
            [&](int32_t i, int32_t, int64_t offset) {
              return queries.out + (query_begin + i) * queries.out_stride + offset;
            },
            tile);
  FoldTileKeys(level, ops, rows, kv, queries, kv_head, tile);
  const int32_t max_keys = tile.num_keys[tile.num_queries - 1];
  if (max_keys > kAttentionPartitionTokens) {
    float* scratch = PartitionScratch(int64_t{tile.num_queries} * num_heads * kv.head_dim);
    QueryTile part;
    part.num_queries = tile.num_queries;
    part.num_heads = num_heads;
    for (int32_t begin = kAttentionPartitionTokens; begin < max_keys;
         begin += kAttentionPartitionTokens) {
      StartTile(kv, queries, query_begin, kv_head, first,
                [&](int32_t i, int32_t h, int64_t) {
                  return scratch + (int64_t{i} * num_heads + h) * kv.head_dim;
                },
                part);
      part.key_begin = begin;
      part.key_end = begin + kAttentionPartitionTokens;
      FoldTileKeys(level, ops, rows, kv, queries, kv_head, part);
      for (int32_t i = 0; i < tile.num_queries; ++i) {
        if (tile.num_keys[i] <= begin) continue;  // this query's keys end before the partition
        for (int32_t h = 0; h < num_heads; ++h) {
          const HeadState& p = part.heads[i][h];
          MergePartition(ops, p.max, p.sum, p.out, kv.head_dim, tile.heads[i][h]);
        }
      }
    }
  }
  for (int32_t i = 0; i < tile.num_queries; ++i)
    for (int32_t h = 0; h < num_heads; ++h)
      ops.scale(1.0f / tile.heads[i][h].sum, tile.heads[i][h].out, kv.head_dim);
}

// Where head `head` of kv head `kv_head`'s group keeps partition `partition` in a query's
// partials: [num_kv_heads, num_partitions, G, head_dim + 2] floats.
int64_t PartialOffset(const PagedKvView& kv, const AttentionQueries& queries, int32_t query,
                      int32_t kv_head, int32_t partition, int32_t head) {
  const int32_t group = queries.num_heads / kv.num_kv_heads;
  const int32_t num_partitions = NumAttentionPartitions(queries.start_position + query + 1);
  return ((int64_t{kv_head} * num_partitions + partition) * group + head) * (kv.head_dim + 2);
}

}  // namespace

void PagedAttentionQueriesWithLevel(SimdLevel level, const PagedKvView& kv,
                                    const AttentionQueries& queries, int32_t query_begin,
                                    int32_t query_end, int32_t kv_head) {
  const VecOps& ops = VecOpsFor(level);
  const KvRowOps& rows = KvRowOpsFor(level, kv.dtype);
  const int32_t group = queries.num_heads / kv.num_kv_heads;
  DCHECK(queries.num_heads % kv.num_kv_heads == 0);
  DCHECK(0 <= query_begin && query_begin <= query_end && query_end <= queries.num_queries);
  for (int32_t q0 = query_begin; q0 < query_end; q0 += kMaxQueriesPerTile) {
    const int32_t q1 = std::min(query_end, q0 + kMaxQueriesPerTile);
    for (int32_t first = 0; first < group; first += kMaxHeadsPerPass)
      AttendHeadPass(level, ops, rows, kv, queries, q0, q1, kv_head, first,
                     std::min(kMaxHeadsPerPass, group - first));
  }
}

void PagedAttentionQueries(const PagedKvView& kv, const AttentionQueries& queries,
                           int32_t query_begin, int32_t query_end, int32_t kv_head) {
  PagedAttentionQueriesWithLevel(ActiveSimdLevel(), kv, queries, query_begin, query_end, kv_head);
}

void PagedAttentionWithLevel(SimdLevel level, const PagedKvView& kv,
                             const AttentionQueries& queries, int32_t query, int32_t kv_head) {
  PagedAttentionQueriesWithLevel(level, kv, queries, query, query + 1, kv_head);
}

void PagedAttention(const PagedKvView& kv, const AttentionQueries& queries, int32_t query,
                    int32_t kv_head) {
  PagedAttentionWithLevel(ActiveSimdLevel(), kv, queries, query, kv_head);
}

void PagedAttentionPartitionWithLevel(SimdLevel level, const PagedKvView& kv,
                                      const AttentionQueries& queries, int32_t query,
                                      int32_t kv_head, int32_t partition, float* partials) {
  const VecOps& ops = VecOpsFor(level);
  const KvRowOps& rows = KvRowOpsFor(level, kv.dtype);
  const int32_t group = queries.num_heads / kv.num_kv_heads;
  DCHECK(0 <= partition &&
         partition < NumAttentionPartitions(queries.start_position + query + 1));
  for (int32_t first = 0; first < group; first += kMaxHeadsPerPass) {
    QueryTile tile;
    tile.num_queries = 1;
    tile.num_heads = std::min(kMaxHeadsPerPass, group - first);
    StartTile(kv, queries, query, kv_head, first,
              [&](int32_t, int32_t h, int64_t) {
                return partials + PartialOffset(kv, queries, query, kv_head, partition, first + h);
              },
              tile);
    tile.key_begin = partition * kAttentionPartitionTokens;
    tile.key_end = tile.key_begin + kAttentionPartitionTokens;
    FoldTileKeys(level, ops, rows, kv, queries, kv_head, tile);
    for (int32_t h = 0; h < tile.num_heads; ++h) {
      tile.heads[0][h].out[kv.head_dim] = tile.heads[0][h].max;
      tile.heads[0][h].out[kv.head_dim + 1] = tile.heads[0][h].sum;
    }
  }
}

void MergeAttentionPartitionsWithLevel(SimdLevel level, const PagedKvView& kv,
                                       const AttentionQueries& queries, int32_t query,
                                       int32_t kv_head, const float* partials) {
  const VecOps& ops = VecOpsFor(level);
  const int32_t group = queries.num_heads / kv.num_kv_heads;
  const int32_t num_partitions = NumAttentionPartitions(queries.start_position + query + 1);
  for (int32_t h = 0; h < group; ++h) {
    float* out = queries.out + query * queries.out_stride +
                 static_cast<int64_t>(kv_head * group + h) * kv.head_dim;
    const float* first = partials + PartialOffset(kv, queries, query, kv_head, 0, h);
    std::copy_n(first, kv.head_dim, out);
    HeadState head{nullptr, out, first[kv.head_dim], first[kv.head_dim + 1]};
    for (int32_t p = 1; p < num_partitions; ++p) {
      const float* part = partials + PartialOffset(kv, queries, query, kv_head, p, h);
      MergePartition(ops, part[kv.head_dim], part[kv.head_dim + 1], part, kv.head_dim, head);
    }
    ops.scale(1.0f / head.sum, out, kv.head_dim);
  }
}

void PagedAttentionPartition(const PagedKvView& kv, const AttentionQueries& queries,
                             int32_t query, int32_t kv_head, int32_t partition, float* partials) {
  PagedAttentionPartitionWithLevel(ActiveSimdLevel(), kv, queries, query, kv_head, partition,
                                   partials);
}

void MergeAttentionPartitions(const PagedKvView& kv, const AttentionQueries& queries,
                              int32_t query, int32_t kv_head, const float* partials) {
  MergeAttentionPartitionsWithLevel(ActiveSimdLevel(), kv, queries, query, kv_head, partials);
}

void PagedDecodeAttentionWithLevel(SimdLevel level, ThreadPool& pool, const PagedKvView& kv,
                                   const AttentionQueries& queries, int32_t query,
                                   float* partials) {
  const int32_t num_partitions = NumAttentionPartitions(queries.start_position + query + 1);
  const int64_t num_kv_heads = kv.num_kv_heads;
  if (num_partitions == 1) {
    pool.ParallelFor(num_kv_heads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t g = begin; g < end; ++g)
        PagedAttentionWithLevel(level, kv, queries, query, static_cast<int32_t>(g));
    });
    return;
  }
  pool.ParallelFor(num_kv_heads * num_partitions, 1, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      PagedAttentionPartitionWithLevel(level, kv, queries, query,
                                       static_cast<int32_t>(item / num_partitions),
                                       static_cast<int32_t>(item % num_partitions), partials);
    }
  });
  pool.ParallelFor(num_kv_heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g)
      MergeAttentionPartitionsWithLevel(level, kv, queries, query, static_cast<int32_t>(g),
                                        partials);
  });
}

void PagedDecodeAttention(ThreadPool& pool, const PagedKvView& kv, const AttentionQueries& queries,
                          int32_t query, float* partials) {
  PagedDecodeAttentionWithLevel(ActiveSimdLevel(), pool, kv, queries, query, partials);
}

}  // namespace surge
