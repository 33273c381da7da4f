#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/check.h"
#include "kernels/vec_ops.h"

namespace surge {
namespace {

// Keys per step of the online softmax; scores live on the stack.
constexpr int32_t kKeyTile = 32;
// Query heads per pass over the keys; bigger groups take several passes.
constexpr int32_t kMaxHeadsPerPass = 16;

// Running softmax state of one query head: out holds sum_j exp(s_j - max) * v_j.
struct HeadState {
  const float* q;
  float* out;
  float max;
  float sum;
};

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
// registers.
void AttendTile(const VecOps& ops, const KvRowOps& rows, const uint8_t* k_rows,
                const uint8_t* v_rows, int64_t row_stride, int32_t n, int32_t head_dim,
                float scale, HeadState* heads, int32_t num_heads) {
  float scores[kKeyTile];
  for (int32_t h = 0; h < num_heads; ++h) {
    HeadState& head = heads[h];
    for (int32_t t = 0; t < n; ++t)
      scores[t] = rows.dot(head.q, k_rows + t * row_stride, head_dim) * scale;
    FoldScores(ops, scores, n, head_dim, head);
    for (int32_t t = 0; t < n; ++t)
      rows.axpy(scores[t], v_rows + t * row_stride, head.out, head_dim);
  }
}

// Rows up to this many values are decoded once onto the stack for a group of heads.
constexpr int32_t kMaxDecodedDim = 512;

// row -> f32 values: axpy with a = 1 onto zeros, which is exact (1 * x + 0 = x).
void DecodeRow(const KvRowOps& rows, const uint8_t* row, int32_t head_dim, float* x) {
  std::fill_n(x, head_dim, 0.0f);
  rows.axpy(1.0f, row, x, head_dim);
}

// AttendTile for several heads sharing an int4 kv head (GQA): each K and V row is
// decoded once into an f32 row on the stack (L1), and every head of the group takes the
// f32 ops on it, instead of each head decoding the row again. Per head, the same
// operations in the same order whatever the batch: still batch-invariant.
void AttendTileDecodedOnce(const VecOps& ops, const KvRowOps& rows, const uint8_t* k_rows,
                           const uint8_t* v_rows, int64_t row_stride, int32_t n,
                           int32_t head_dim, float scale, HeadState* heads, int32_t num_heads) {
  alignas(64) float x[kMaxDecodedDim];
  float scores[kMaxHeadsPerPass][kKeyTile];
  for (int32_t t = 0; t < n; ++t) {
    DecodeRow(rows, k_rows + t * row_stride, head_dim, x);
    for (int32_t h = 0; h < num_heads; ++h) scores[h][t] = ops.dot(heads[h].q, x, head_dim) * scale;
  }
  for (int32_t h = 0; h < num_heads; ++h) FoldScores(ops, scores[h], n, head_dim, heads[h]);
  for (int32_t t = 0; t < n; ++t) {
    DecodeRow(rows, v_rows + t * row_stride, head_dim, x);
    for (int32_t h = 0; h < num_heads; ++h) ops.axpy(scores[h][t], x, heads[h].out, head_dim);
  }
}

// All keys [0, num_keys) for up to kMaxHeadsPerPass heads, block by block.
void AttendHeads(const VecOps& ops, const KvRowOps& rows, const PagedKvView& kv,
                 const AttentionQueries& queries, int32_t kv_head, int32_t num_keys,
                 HeadState* heads, int32_t num_heads) {
  const int64_t row_stride = KvRowBytes(kv.dtype, kv.head_dim);  // consecutive positions
  // Only int4 rows cost enough to decode (nibble split, scale and min per group: ~6 ops
  // per 16 values) that a decoded copy pays for its stores and loads; for bf16/f16/int8
  // (1-2 ops) A/B runs could not tell the two apart. One head gains nothing from a copy.
  const bool decode_once =
      kv.dtype == KvDType::kInt4 && num_heads > 1 && kv.head_dim <= kMaxDecodedDim;
  for (int32_t t0 = 0; t0 < num_keys;) {
    const int32_t block_index = t0 / kv.block_size;
    const int32_t row = t0 % kv.block_size;
    const int32_t n = std::min({kKeyTile, kv.block_size - row, num_keys - t0});
    const int64_t offset = PagedKvRowOffset(kv, queries.block_table[block_index], kv_head, row);
    (decode_once ? AttendTileDecodedOnce : AttendTile)(ops, rows, kv.k + offset, kv.v + offset,
                                                       row_stride, n, kv.head_dim, queries.scale,
                                                       heads, num_heads);
    t0 += n;
  }
}

}  // namespace

void PagedAttentionWithLevel(SimdLevel level, const PagedKvView& kv,
                             const AttentionQueries& queries, int32_t query, int32_t kv_head) {
  const VecOps& ops = VecOpsFor(level);
  const KvRowOps& rows = KvRowOpsFor(level, kv.dtype);
  const int32_t group = queries.num_heads / kv.num_kv_heads;
  const int32_t num_keys = queries.start_position + query + 1;
  DCHECK(queries.num_heads % kv.num_kv_heads == 0);
  DCHECK(static_cast<int64_t>(queries.block_table.size()) * kv.block_size >= num_keys);
  const float* q_row = queries.q + query * queries.q_stride;
  float* out_row = queries.out + query * queries.out_stride;
  for (int32_t first = 0; first < group; first += kMaxHeadsPerPass) {
    HeadState heads[kMaxHeadsPerPass];
    const int32_t num_heads = std::min(kMaxHeadsPerPass, group - first);
    for (int32_t h = 0; h < num_heads; ++h) {
      const int64_t offset = static_cast<int64_t>(kv_head * group + first + h) * kv.head_dim;
      heads[h] = {q_row + offset, out_row + offset, -std::numeric_limits<float>::infinity(), 0.0f};
      std::fill_n(heads[h].out, kv.head_dim, 0.0f);
    }
    AttendHeads(ops, rows, kv, queries, kv_head, num_keys, heads, num_heads);
    for (int32_t h = 0; h < num_heads; ++h)
      ops.scale(1.0f / heads[h].sum, heads[h].out, kv.head_dim);
  }
}

void PagedAttention(const PagedKvView& kv, const AttentionQueries& queries, int32_t query,
                    int32_t kv_head) {
  PagedAttentionWithLevel(ActiveSimdLevel(), kv, queries, query, kv_head);
}

}  // namespace surge
