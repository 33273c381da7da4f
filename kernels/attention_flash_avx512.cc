// AVX-512 flash attention over f32, bf16, f16 and int8 K/V for grouped heads (GQA, MLA;
// kernels/attention_tile.h): each key tile (32 consecutive positions) is widened to f32
// by the row ops' loaders (kv_loads_avx512-inl.h) and transposed once, then every
// (query, head) pair of the query tile takes it in register blocks of up to kBlockPairs
// pairs: the scores as a small GEMM with the keys in the lanes (each score two FMA chains
// over d), an online softmax step in f32, and the value rows accumulated into the
// outputs with the pairs' weights broadcast. A query's arithmetic is the same whether it
// is alone (decode) or in a tile of many (prefill), so the two agree bit for bit.
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

constexpr int32_t kTileKeys = kAttentionKeyTile;
constexpr int32_t kLanes = 16;  // f32 lanes of a zmm register
static_assert(kTileKeys == 2 * kLanes && kLanes == kAvx512Lanes);
// (query, head) pairs per register block: 6 pairs x 2 key halves = 12 score chains, and
// 6 pairs x 4 output pieces = 24 value accumulators (+ 4 value vectors) in 32 registers.
constexpr int32_t kBlockPairs = 6;
// 16-lane pieces of a head's output per value pass (the rest of a head takes more passes).
constexpr int32_t kBlockPieces = 4;

// The key tile [t0, t0 + n): where each position's K and V rows sit (byte offsets into
// the layer's K and V, the same for both), and int8's per-row factors (0 past n).
struct KeyTile {
  int64_t offsets[kTileKeys];
  alignas(64) float k_factors[kTileKeys];
  alignas(64) float v_factors[kTileKeys];
  int32_t n = 0;
};

// The rows of positions [t0, t0 + n) of kv head `kv_head`.
void FindKeys(const PagedKvView& kv, const AttentionQueries& queries, int32_t kv_head,
              int32_t t0, int32_t n, KeyTile& keys) {
  keys.n = n;
  int32_t block = t0 / kv.block_size, row = t0 % kv.block_size;  // one division per tile
  int64_t offset = PagedKvRowOffset(kv, queries.block_table[block], kv_head, row);
  const int64_t row_bytes = KvRowBytes(kv.dtype, kv.head_dim);
  for (int32_t j = 0; j < n; ++j) {
    if (row == kv.block_size) {
      row = 0;
      offset = PagedKvRowOffset(kv, queries.block_table[++block], kv_head, 0);
    }
    keys.offsets[j] = offset;
    offset += row_bytes;
    ++row;
  }
}

// Asks for the tile's K and V rows while the previous tile computes: its blocks may lie
// anywhere in the pool, and past a few thousand keys the rows come from DRAM.
void PrefetchKeys(const PagedKvView& kv, const KeyTile& keys) {
  const int64_t row_bytes = KvRowBytes(kv.dtype, kv.head_dim);
  for (int32_t j = 0; j < keys.n; ++j) {
    for (int64_t b = 0; b < row_bytes; b += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(kv.k + keys.offsets[j] + b), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(kv.v + keys.offsets[j] + b), _MM_HINT_T1);
    }
  }
}

template <typename Load>
void FindFactors(const PagedKvView& kv, KeyTile& keys) {
  if constexpr (kHasRowFactor<Load>) {
    for (int32_t j = 0; j < kTileKeys; ++j) {
      keys.k_factors[j] = j < keys.n ? Load(kv.k + keys.offsets[j]).factor : 0.0f;
      keys.v_factors[j] = j < keys.n ? Load(kv.v + keys.offsets[j]).factor : 0.0f;
    }
  }
}

// kt [head_dim][kTileKeys]: kt[d * kTileKeys + j] = value d of key j widened by Load,
// for j < n; the other lanes of a half in use are zero, a half past n is not written.
template <typename Load>
void TransposeKeys(const uint8_t* k, const KeyTile& keys, int32_t head_dim, float* kt) {
  for (int32_t half = 0; half * kLanes < keys.n; ++half) {
    const int64_t* offsets = keys.offsets + half * kLanes;
    const int32_t num_rows = std::min(kLanes, keys.n - half * kLanes);
    for (int32_t i = 0; i < head_dim; i += kLanes) {
      __m512 r[16];
#pragma GCC unroll 16
      for (int32_t j = 0; j < 16; ++j)
        r[j] = j < num_rows ? Load(k + offsets[j])(i) : _mm512_setzero_ps();
      Transpose16(r);
#pragma GCC unroll 16
      for (int32_t d = 0; d < 16; ++d)
        _mm512_store_ps(kt + (i + d) * kTileKeys + half * kLanes, r[d]);
    }
  }
}

// scores[r][j] = q_r . k_j for the kHalves * 16 keys of kt, each as two FMA chains from
// zero -- over the even d ascending and over the odd d ascending -- then their sum: the
// order the kernel's definition fixes (a key lane never mixes with another, so neither
// the pairs, the keys nor the block matter). Two chains halve the rounding that one
// chain of head_dim products accumulates; kPairs x kHalves x 2 independent chains hide
// the FMA latency.
template <int kPairs, int kHalves>
void ScoreBlock(const float* kt, int32_t head_dim, const float* const* q,
                float (*scores)[kTileKeys]) {
  __m512 even[kPairs][kHalves], odd[kPairs][kHalves];
#pragma GCC unroll 12
  for (int r = 0; r < kPairs; ++r) {
    for (int h = 0; h < kHalves; ++h) even[r][h] = odd[r][h] = _mm512_setzero_ps();
  }
  for (int32_t d = 0; d < head_dim; d += 2) {  // head_dim is a multiple of 16
    __m512 k0[kHalves], k1[kHalves];
#pragma GCC unroll 2
    for (int h = 0; h < kHalves; ++h) {
      k0[h] = _mm512_load_ps(kt + d * kTileKeys + h * kLanes);
      k1[h] = _mm512_load_ps(kt + (d + 1) * kTileKeys + h * kLanes);
    }
#pragma GCC unroll 6
    for (int r = 0; r < kPairs; ++r) {
      const __m512 b0 = _mm512_set1_ps(q[r][d]), b1 = _mm512_set1_ps(q[r][d + 1]);
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) {
        even[r][h] = _mm512_fmadd_ps(b0, k0[h], even[r][h]);
        odd[r][h] = _mm512_fmadd_ps(b1, k1[h], odd[r][h]);
      }
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < kPairs; ++r) {
    for (int h = 0; h < kHalves; ++h)
      _mm512_store_ps(scores[r] + h * kLanes, _mm512_add_ps(even[r][h], odd[r][h]));
  }
}

template <int kHalves>
void ScoreBlockOf(int32_t num, const float* kt, int32_t head_dim, const float* const* q,
                  float (*scores)[kTileKeys]) {
  switch (num) {
    case 1: return ScoreBlock<1, kHalves>(kt, head_dim, q, scores);
    case 2: return ScoreBlock<2, kHalves>(kt, head_dim, q, scores);
    case 3: return ScoreBlock<3, kHalves>(kt, head_dim, q, scores);
    case 4: return ScoreBlock<4, kHalves>(kt, head_dim, q, scores);
    case 5: return ScoreBlock<5, kHalves>(kt, head_dim, q, scores);
    default: return ScoreBlock<kBlockPairs, kHalves>(kt, head_dim, q, scores);
  }
}

// One online-softmax step of a head over its scores [0, n) of this tile (raw dots in,
// value weights out): s = (factor * dot) * scale; the tile's max joins the running max;
// the weights exp(s - max) are summed by Avx512ReduceAdd over both halves (lanes past n
// are zero, which changes no partial sum), and the running sum and output are rescaled
// by exp(old max - new max) when the max grew. Returns that correction (1: none).
template <typename Load>
float SoftmaxStep(float* scores, int32_t n, float scale, const KeyTile& keys,
                  AttentionHeadState& head) {
  const __mmask16 lo = Avx512TailMask(std::min(n, kLanes));
  const __mmask16 hi = n > kLanes ? Avx512TailMask(n - kLanes) : 0;
  const __m512 vscale = _mm512_set1_ps(scale);
  __m512 s0 = _mm512_load_ps(scores), s1 = _mm512_load_ps(scores + kLanes);
  if constexpr (kHasRowFactor<Load>) {
    s0 = _mm512_mul_ps(_mm512_load_ps(keys.k_factors), s0);
    s1 = _mm512_mul_ps(_mm512_load_ps(keys.k_factors + kLanes), s1);
  }
  s0 = _mm512_mul_ps(s0, vscale);
  s1 = _mm512_mul_ps(s1, vscale);
  const __m512 none = _mm512_set1_ps(-__builtin_inff());
  const float tile_max = Avx512ReduceMax(
      _mm512_max_ps(_mm512_mask_mov_ps(none, lo, s0), _mm512_mask_mov_ps(none, hi, s1)));
  const float new_max = std::max(head.max, tile_max);
  const bool rescale = new_max > head.max && head.sum > 0.0f;
  const float correction = rescale ? std::exp(head.max - new_max) : 1.0f;
  const __m512 vmax = _mm512_set1_ps(new_max);
  __m512 e0 = _mm512_maskz_mov_ps(lo, Avx512Exp(_mm512_sub_ps(s0, vmax)));
  __m512 e1 = _mm512_maskz_mov_ps(hi, Avx512Exp(_mm512_sub_ps(s1, vmax)));
  const float tile_sum = Avx512ReduceAdd(_mm512_add_ps(e0, e1));
  head.sum = (rescale ? head.sum * correction : head.sum) + tile_sum;
  head.max = new_max;
  if constexpr (kHasRowFactor<Load>) {
    e0 = _mm512_mul_ps(e0, _mm512_load_ps(keys.v_factors));
    e1 = _mm512_mul_ps(e1, _mm512_load_ps(keys.v_factors + kLanes));
  }
  _mm512_store_ps(scores, e0);
  _mm512_store_ps(scores + kLanes, e1);
  return correction;
}

// Output pieces [piece, piece + kPieces) of kPairs heads: out = correction * out, then
// out += w_j * v_j for keys j = 0, 1, ..., n - 1 in that order, one FMA chain per output
// lane (so neither the pairs nor the piece blocking change a bit).
template <typename Load, int kPairs, int kPieces>
void AccumulateValues(const uint8_t* v, const KeyTile& keys, int32_t n, int32_t piece,
                      float (*weights)[kTileKeys], const float* correction,
                      AttentionHeadState* const* heads) {
  __m512 acc[kPairs][kPieces];
#pragma GCC unroll 6
  for (int r = 0; r < kPairs; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < kPieces; ++c) {
      acc[r][c] = _mm512_loadu_ps(heads[r]->out + (piece + c) * kLanes);
      if (correction[r] != 1.0f) acc[r][c] = _mm512_mul_ps(_mm512_set1_ps(correction[r]), acc[r][c]);
    }
  }
  for (int32_t j = 0; j < n; ++j) {
    const Load load(v + keys.offsets[j]);
#pragma GCC unroll 4
    for (int c = 0; c < kPieces; ++c) {
      const __m512 x = load((piece + c) * kLanes);
#pragma GCC unroll 6
      for (int r = 0; r < kPairs; ++r)
        acc[r][c] = _mm512_fmadd_ps(_mm512_set1_ps(weights[r][j]), x, acc[r][c]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < kPairs; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < kPieces; ++c)
      _mm512_storeu_ps(heads[r]->out + (piece + c) * kLanes, acc[r][c]);
}

template <typename Load, int kPairs>
void AccumulateAllValues(const uint8_t* v, const KeyTile& keys, int32_t n, int32_t head_dim,
                         float (*weights)[kTileKeys], const float* correction,
                         AttentionHeadState* const* heads) {
  const int32_t num_pieces = head_dim / kLanes;
  int32_t piece = 0;
  for (; piece + kBlockPieces <= num_pieces; piece += kBlockPieces)
    AccumulateValues<Load, kPairs, kBlockPieces>(v, keys, n, piece, weights, correction, heads);
  for (; piece < num_pieces; ++piece)
    AccumulateValues<Load, kPairs, 1>(v, keys, n, piece, weights, correction, heads);
}

template <typename Load>
void AccumulateAllValuesOf(int32_t num, const uint8_t* v, const KeyTile& keys, int32_t n,
                           int32_t head_dim, float (*weights)[kTileKeys], const float* correction,
                           AttentionHeadState* const* heads) {
  switch (num) {
    case 1: return AccumulateAllValues<Load, 1>(v, keys, n, head_dim, weights, correction, heads);
    case 2: return AccumulateAllValues<Load, 2>(v, keys, n, head_dim, weights, correction, heads);
    case 3: return AccumulateAllValues<Load, 3>(v, keys, n, head_dim, weights, correction, heads);
    case 4: return AccumulateAllValues<Load, 4>(v, keys, n, head_dim, weights, correction, heads);
    case 5: return AccumulateAllValues<Load, 5>(v, keys, n, head_dim, weights, correction, heads);
    default:
      return AccumulateAllValues<Load, kBlockPairs>(v, keys, n, head_dim, weights, correction,
                                                     heads);
  }
}

// A register block: `num` heads that see the same n keys of the tile.
template <typename Load>
void AttendBlock(const PagedKvView& kv, const KeyTile& keys, const float* kt, int32_t n,
                 float scale, AttentionHeadState* const* heads, int32_t num) {
  alignas(64) float scores[kBlockPairs][kTileKeys];
  const float* q[kBlockPairs] = {};
  for (int32_t r = 0; r < num; ++r) q[r] = heads[r]->q;
  if (n > kLanes) {
    ScoreBlockOf<2>(num, kt, kv.head_dim, q, scores);
  } else {
    ScoreBlockOf<1>(num, kt, kv.head_dim, q, scores);
    for (int32_t r = 0; r < num; ++r) std::fill_n(scores[r] + kLanes, kLanes, 0.0f);
  }
  float correction[kBlockPairs];
  for (int32_t r = 0; r < num; ++r)
    correction[r] = SoftmaxStep<Load>(scores[r], n, scale, keys, *heads[r]);
  AccumulateAllValuesOf<Load>(num, kv.v, keys, n, kv.head_dim, scores, correction, heads);
}

// The tile's key range [key_begin, key_end) for every query of `tile`, in key tiles of
// the 32 positions [32m, 32m + 32) (key_begin is a partition start, so a multiple of 32),
// whatever blocks hold them: query i folds the part of each tile below its num_keys.
template <typename Load>
void AttendTile(const PagedKvView& kv, const AttentionQueries& queries, int32_t kv_head,
                AttentionQueryTile& tile) {
  alignas(64) float kt[kAttentionTileMaxHeadDim * kTileKeys];
  KeyTile tiles[2];  // this key tile's rows and the next one's (prefetched)
  AttentionHeadState* block[kBlockPairs];
  const int32_t key_end = std::min(tile.key_end, tile.num_keys[tile.num_queries - 1]);
  DCHECK(tile.key_begin % kTileKeys == 0);
  if (tile.key_begin < key_end) {
    FindKeys(kv, queries, kv_head, tile.key_begin,
             std::min(kTileKeys, key_end - tile.key_begin), tiles[0]);
  }
  for (int32_t t0 = tile.key_begin, step = 0; t0 < key_end; t0 += kTileKeys, ++step) {
    KeyTile& keys = tiles[step % 2];
    const int32_t n = keys.n;
    if (const int32_t next = t0 + kTileKeys; next < key_end) {
      KeyTile& ahead = tiles[(step + 1) % 2];
      FindKeys(kv, queries, kv_head, next, std::min(kTileKeys, key_end - next), ahead);
      PrefetchKeys(kv, ahead);
    }
    FindFactors<Load>(kv, keys);
    TransposeKeys<Load>(kv.k, keys, kv.head_dim, kt);
    // (query, head) pairs in order, in blocks of up to kBlockPairs that see the same keys
    // of this tile (queries only differ in the tile holding their own position).
    int32_t num = 0, block_n = 0;
    for (int32_t i = 0; i < tile.num_queries; ++i) {
      const int32_t n_i = std::min(n, tile.num_keys[i] - t0);  // this query's cut of the tile
      if (n_i <= 0) continue;
      for (int32_t h = 0; h < tile.num_heads; ++h) {
        if (num > 0 && (n_i != block_n || num == kBlockPairs)) {
          AttendBlock<Load>(kv, keys, kt, block_n, queries.scale, block, num);
          num = 0;
        }
        block_n = n_i;
        block[num++] = &tile.heads[i][h];
      }
    }
    if (num > 0) AttendBlock<Load>(kv, keys, kt, block_n, queries.scale, block, num);
  }
}

}  // namespace

void AttendQueryTileFlashAvx512(const PagedKvView& kv, const AttentionQueries& queries,
                                int32_t kv_head, AttentionQueryTile& tile) {
  DCHECK(AttendQueryTileFlashAvx512Takes(kv, queries));
  switch (kv.dtype) {
    case KvDType::kF32:
      return AttendTile<F32Load>(kv, queries, kv_head, tile);
    case KvDType::kBF16:
      return AttendTile<Bf16Load>(kv, queries, kv_head, tile);
    case KvDType::kF16:
      return AttendTile<F16Load>(kv, queries, kv_head, tile);
    case KvDType::kInt8:
      return AttendTile<Int8Load>(kv, queries, kv_head, tile);
    case KvDType::kInt4:  // not taken (AttendQueryTileFlashAvx512Takes)
      break;
  }
}

}  // namespace surge

#pragma GCC pop_options
