// AVX-512 prefill attention over f32, bf16, f16 and int8 K/V (kernels/attention_tile.h):
// a key tile's K rows are widened to f32 by the row ops' own loaders (kv_loads_avx512-inl.h)
// and transposed once per tile of queries, so each query head's scores for 16 keys come
// from vector FMA chains with the keys in the lanes -- the very chains and reduction
// tree of the row dot product (kv_codec_avx512.cc DotElementwise), so the same bits.
// GCC 12's AVX-512 headers trip -Wuninitialized (GCC bug 105593); see vec_ops_avx512.cc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "base/check.h"
#include "kernels/attention_tile.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,fma")
#include "kernels/x86_avx512-inl.h"
#include "kernels/kv_loads_avx512-inl.h"

namespace surge {
namespace {

// Keys of a key tile in the transposed copy: two halves of 16 lanes.
constexpr int32_t kTileKeys = kAttentionKeyTile;
static_assert(kTileKeys == 2 * kAvx512Lanes);

// kt [kD][kTileKeys]: kt[d * kTileKeys + j] = value d of key row j (rows row_bytes
// apart, widened to f32 by Load), for j < n; the other lanes of the halves in use are zero.
template <typename Load, int kD>
void TransposeKeys(const uint8_t* k, int64_t row_bytes, int32_t n, float* kt) {
  for (int32_t half = 0; half * kAvx512Lanes < n; ++half) {
    const uint8_t* first = k + half * kAvx512Lanes * row_bytes;
    const int32_t num_rows = std::min(kAvx512Lanes, n - half * kAvx512Lanes);
    for (int32_t c = 0; c < kD / kAvx512Lanes; ++c) {
      const int32_t i = c * kAvx512Lanes;
      __m512 r[16];
      if (num_rows == kAvx512Lanes) {
#pragma GCC unroll 16
        for (int32_t j = 0; j < 16; ++j) r[j] = Load(first + j * row_bytes)(i);
      } else {
#pragma GCC unroll 16
        for (int32_t j = 0; j < 16; ++j)
          r[j] = j < num_rows ? Load(first + j * row_bytes)(i) : _mm512_setzero_ps();
      }
      Transpose16(r);
#pragma GCC unroll 16
      for (int32_t d = 0; d < 16; ++d)
        _mm512_store_ps(kt + (c * kAvx512Lanes + d) * kTileKeys + half * kAvx512Lanes, r[d]);
    }
  }
}

// Lane l's sum acc0 + acc1 for 16 keys (see Scores16).
template <int kD>
inline __m512 LaneSum(const float* q, const float* kt, int32_t l) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int32_t i = 0;
#pragma GCC unroll 8
  for (; i + 32 <= kD; i += 32) {
    acc0 = _mm512_fmadd_ps(_mm512_set1_ps(q[i + l]), _mm512_load_ps(kt + (i + l) * kTileKeys), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_set1_ps(q[i + 16 + l]),
                           _mm512_load_ps(kt + (i + 16 + l) * kTileKeys), acc1);
  }
  if (i + 16 <= kD)
    acc0 = _mm512_fmadd_ps(_mm512_set1_ps(q[i + l]), _mm512_load_ps(kt + (i + l) * kTileKeys), acc0);
  return _mm512_add_ps(acc0, acc1);
}

// One query head's scores against 16 keys (kt: one half of the transposed tile), keys in
// lanes. Per key this is DotElementwise's arithmetic: lane l of acc0 chains d = 32m + l,
// of acc1 d = 32m + 16 + l (an odd 16 at the end into acc0), then acc0 + acc1 and
// Avx512ReduceAdd's tree over l: a_l = (s_l + s_l+8) + (s_l+4 + s_l+12) for l = 0..3,
// then (a0 + a2) + (a1 + a3). fma(q, k, 0) is an fma with a zero vector, as there.
// Built a_l by a_l so that few vectors are live at once (no spills).
template <int kD>
__m512 Scores16(const float* q, const float* kt) {
  __m512 a[4];
#pragma GCC unroll 4
  for (int32_t l = 0; l < 4; ++l) {
    a[l] = _mm512_add_ps(_mm512_add_ps(LaneSum<kD>(q, kt, l), LaneSum<kD>(q, kt, l + 8)),
                         _mm512_add_ps(LaneSum<kD>(q, kt, l + 4), LaneSum<kD>(q, kt, l + 12)));
  }
  return _mm512_add_ps(_mm512_add_ps(a[0], a[2]), _mm512_add_ps(a[1], a[3]));
}

// factors[j] = the factor of row j (rows row_bytes apart) for j < n, 0 past n.
template <typename Load>
void RowFactors(const uint8_t* rows, int64_t row_bytes, int32_t n, float* factors) {
  for (int32_t j = 0; j < kTileKeys; ++j)
    factors[j] = j < n ? Load(rows + j * row_bytes).factor : 0.0f;
}

// Heads folded together: their chains interleave (the fold's reductions and exp, and the
// axpy's FMAs, are latency-bound for one head) and share each V row's loads.
template <int kD>
constexpr int32_t kHeadsPerFold = kD <= 64 ? 4 : 2;

// Folds the scores [0, n) of `num` heads (scores[p], same n) and the tile's V rows
// (v_factors: their row factors) into their states: per head, FoldScores then
// AxpyRowsElementwise<Load> of attention.cc / kv_codec_avx512.cc op for op, with the
// max-growth rescale of out done in the register that the axpy then accumulates. Lanes
// never mix heads, so interleaving changes no bit.
template <typename Load, int kD>
void FoldTiles(float (*scores)[kTileKeys], int32_t n, const uint8_t* v, const float* v_factors,
               int64_t row_bytes, AttentionHeadState* const* heads, int32_t num) {
  constexpr int32_t kPieces = kD / kAvx512Lanes;
  constexpr int32_t kMax = kHeadsPerFold<kD>;
  float correction[kMax];
  bool rescale[kMax];
  for (int32_t p = 0; p < num; ++p) {
    AttentionHeadState& head = *heads[p];
    const float new_max = std::max(head.max, Avx512Max(scores[p], n));
    rescale[p] = new_max > head.max && head.sum > 0.0f;
    correction[p] = rescale[p] ? std::exp(head.max - new_max) : 1.0f;
    if (rescale[p]) head.sum *= correction[p];
    head.max = new_max;
    head.sum += Avx512ExpShifted(scores[p], new_max, scores[p], n);
    // The axpy coefficients, as AxpyRowsElementwise's a[t] * factor (once the sum has the
    // plain weights).
    if constexpr (kHasRowFactor<Load>) {
      for (int32_t i = 0; i < n; i += kAvx512Lanes) {
        const __m512 weights = _mm512_load_ps(scores[p] + i);
        _mm512_store_ps(scores[p] + i, _mm512_mul_ps(weights, _mm512_load_ps(v_factors + i)));
      }
    }
  }
  __m512 acc[kMax][kPieces];
  for (int32_t p = 0; p < num; ++p) {
#pragma GCC unroll 16
    for (int32_t c = 0; c < kPieces; ++c) {
      acc[p][c] = _mm512_loadu_ps(heads[p]->out + c * kAvx512Lanes);
      if (rescale[p]) acc[p][c] = _mm512_mul_ps(_mm512_set1_ps(correction[p]), acc[p][c]);
    }
  }
  if (num == kMax) {  // the common case, with every loop of constant length
    for (int32_t t = 0; t < n; ++t) {
      const Load load(v + t * row_bytes);
#pragma GCC unroll 16
      for (int32_t c = 0; c < kPieces; ++c) {
        const __m512 x = load(c * kAvx512Lanes);
#pragma GCC unroll 4
        for (int32_t p = 0; p < kMax; ++p)
          acc[p][c] = _mm512_fmadd_ps(_mm512_set1_ps(scores[p][t]), x, acc[p][c]);
      }
    }
  } else {
    for (int32_t t = 0; t < n; ++t) {
      const Load load(v + t * row_bytes);
      for (int32_t p = 0; p < num; ++p) {
        const __m512 a = _mm512_set1_ps(scores[p][t]);
#pragma GCC unroll 16
        for (int32_t c = 0; c < kPieces; ++c)
          acc[p][c] = _mm512_fmadd_ps(a, load(c * kAvx512Lanes), acc[p][c]);
      }
    }
  }
  for (int32_t p = 0; p < num; ++p) {
#pragma GCC unroll 16
    for (int32_t c = 0; c < kPieces; ++c)
      _mm512_storeu_ps(heads[p]->out + c * kAvx512Lanes, acc[p][c]);
  }
}

// Scores of each head in heads[0, num) against the first n keys of the transposed tile kt
// (k_factors: their row factors) into scores[p]: DotRows<DotElementwise<Load>>'s
// (factor * sum) * scale per key lane.
template <typename Load, int kD>
void ScoreTiles(const float* kt, const float* k_factors, int32_t n, float scale,
                AttentionHeadState* const* heads, int32_t num, float (*scores)[kTileKeys]) {
  const __m512 vscale = _mm512_set1_ps(scale);
  for (int32_t p = 0; p < num; ++p) {
    for (int32_t i = 0; i < n; i += kAvx512Lanes) {
      __m512 dots = Scores16<kD>(heads[p]->q, kt + i);
      if constexpr (kHasRowFactor<Load>) dots = _mm512_mul_ps(_mm512_load_ps(k_factors + i), dots);
      _mm512_store_ps(scores[p] + i, _mm512_mul_ps(dots, vscale));
    }
  }
}

template <typename Load, int kD>
void AttendTile(const PagedKvView& kv, const AttentionQueries& queries, int32_t kv_head,
                AttentionQueryTile& tile) {
  constexpr int32_t kMax = kHeadsPerFold<kD>;
  const int64_t row_bytes = KvRowBytes(kv.dtype, kD);  // consecutive positions of a kv head
  alignas(64) float kt[kD * kTileKeys];
  alignas(64) float k_factors[kTileKeys], v_factors[kTileKeys];
  alignas(64) float scores[kMax][kTileKeys];
  AttentionHeadState* group[kMax];
  const int32_t key_end = std::min(tile.key_end, tile.num_keys[tile.num_queries - 1]);
  for (int32_t t0 = tile.key_begin; t0 < key_end;) {
    const int32_t block_index = t0 / kv.block_size;
    const int32_t row = t0 % kv.block_size;
    const int32_t n = std::min({kAttentionKeyTile, kv.block_size - row, key_end - t0});
    const int64_t offset = PagedKvRowOffset(kv, queries.block_table[block_index], kv_head, row);
    const uint8_t* k = kv.k + offset;
    const uint8_t* v = kv.v + offset;
    TransposeKeys<Load, kD>(k, row_bytes, n, kt);
    if constexpr (kHasRowFactor<Load>) {
      RowFactors<Load>(k, row_bytes, n, k_factors);
      RowFactors<Load>(v, row_bytes, n, v_factors);
    }
    // (query, head) pairs in order, in groups of up to kMax that see the same keys of
    // this tile (queries only differ in the tile holding their own position).
    int32_t num = 0, group_n = 0;
    auto flush = [&] {
      ScoreTiles<Load, kD>(kt, k_factors, group_n, queries.scale, group, num, scores);
      FoldTiles<Load, kD>(scores, group_n, v, v_factors, row_bytes, group, num);
      num = 0;
    };
    for (int32_t i = 0; i < tile.num_queries; ++i) {
      const int32_t n_i = std::min(n, tile.num_keys[i] - t0);  // this query's cut of the tile
      if (n_i <= 0) continue;
      for (int32_t h = 0; h < tile.num_heads; ++h) {
        if (num > 0 && (n_i != group_n || num == kMax)) flush();
        group_n = n_i;
        group[num++] = &tile.heads[i][h];
      }
    }
    if (num > 0) flush();
    t0 += n;
  }
}

template <int kD>
void AttendTileOfDType(const PagedKvView& kv, const AttentionQueries& queries, int32_t kv_head,
                       AttentionQueryTile& tile) {
  switch (kv.dtype) {
    case KvDType::kF32:
      return AttendTile<F32Load, kD>(kv, queries, kv_head, tile);
    case KvDType::kBF16:
      return AttendTile<Bf16Load, kD>(kv, queries, kv_head, tile);
    case KvDType::kF16:
      return AttendTile<F16Load, kD>(kv, queries, kv_head, tile);
    case KvDType::kInt8:
      return AttendTile<Int8Load, kD>(kv, queries, kv_head, tile);
    case KvDType::kInt4:  // not taken (AttendQueryTileAvx512Takes)
      break;
  }
}

}  // namespace

void AttendQueryTileAvx512(const PagedKvView& kv, const AttentionQueries& queries,
                           int32_t kv_head, AttentionQueryTile& tile) {
  DCHECK(AttendQueryTileAvx512Takes(kv));
  if (kv.head_dim == 64) {
    AttendTileOfDType<64>(kv, queries, kv_head, tile);
  } else {
    AttendTileOfDType<128>(kv, queries, kv_head, tile);
  }
}

}  // namespace surge

#pragma GCC pop_options
