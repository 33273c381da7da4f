// AVX2 + FMA kernels for panel-layout weights: a 16-row panel is two 8-lane halves.
// f32 and bf16 run the same per-output fma chain as the scalar kernels (k ascending);
// int8 and int4 compute the same exact integer dot products with
// _mm256_maddubs_epi16 + _mm256_madd_epi16 (no VNNI here), so every result matches
// the scalar kernel's bits. A SIMD file, so past 400 lines would be allowed; the shared
// loop nest (packed_tile-inl.h) keeps it shorter.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/packed_matmul.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kernels/packed_tile-inl.h"
#include "kernels/x86_avx2-inl.h"

namespace surge {
namespace {

using internal::PackedProblem;
using internal::PreparedActivations;

inline int64_t Clamp8(int64_t n) { return n <= 0 ? 0 : n < 8 ? n : 8; }

inline __m256i Broadcast4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// y[row, n0 .. n0 + 8) = fma(v, scale, bias) (scale null: v + bias) where they exist.
inline void StoreHalf(const PackedProblem& p, int64_t row, int64_t n0, __m256 v,
                      const __m256* scale) {
  const int64_t valid = Clamp8(p.w->rows - n0);
  if (valid == 0) return;
  const __m256 bias = p.bias ? Avx2LoadTail(p.bias + n0, valid) : _mm256_setzero_ps();
  v = scale ? _mm256_fmadd_ps(v, *scale, bias) : _mm256_add_ps(v, bias);
  Avx2StoreTail(p.y + row * p.w->rows + n0, valid, v);
}

// f32: acc[r][2c + h] holds outputs 16 (panel + c) + 8 h ... + 8; see the AVX-512 kernel.
struct F32Kernel {
  static constexpr int kMaxRows = 6;  // 12 accumulators of 16 registers
  static constexpr int PanelsFor(int rows) { return rows == 1 ? 2 : 1; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t panel) {
    const int64_t k_size = p.w->cols, stride = p.w->panel_bytes / 4;
    const float* w = p.w->f32() + panel * stride;
    const float* x = p.x + row * k_size;
    __m256 acc[MR][2 * NP];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < 2 * NP; ++c) acc[r][c] = _mm256_setzero_ps();
    for (int64_t k = 0; k < k_size; ++k) {
      __m256 wv[2 * NP];
#pragma GCC unroll 16
      for (int c = 0; c < 2 * NP; ++c)
        wv[c] = _mm256_load_ps(w + (c / 2) * stride + k * kPanelRows + (c % 2) * 8);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m256 xb = _mm256_set1_ps(x[r * k_size + k]);
#pragma GCC unroll 16
        for (int c = 0; c < 2 * NP; ++c) acc[r][c] = _mm256_fmadd_ps(xb, wv[c], acc[r][c]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < 2 * NP; ++c)
        StoreHalf(p, row + r, panel * kPanelRows + c * 8, acc[r][c], nullptr);
  }
};

// bf16 widened: lane = (w[2j] low 16 bits, w[2j+1] high); see the AVX-512 kernel.
struct Bf16WidenKernel {
  static constexpr int kMaxRows = 4;
  static constexpr int PanelsFor(int rows) { return rows == 1 ? 2 : 1; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t panel) {
    const int64_t k_size = p.w->cols, stride = p.w->panel_bytes / 4;
    const int32_t* w = reinterpret_cast<const int32_t*>(p.w->data) + panel * stride;
    const float* x = p.x + row * k_size;
    const __m256i high_half = _mm256_set1_epi32(static_cast<int32_t>(0xffff0000u));
    __m256 acc[MR][2 * NP];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < 2 * NP; ++c) acc[r][c] = _mm256_setzero_ps();
    for (int64_t j = 0; j < (k_size + 1) / 2; ++j) {
      __m256 even[2 * NP], odd[2 * NP];
#pragma GCC unroll 16
      for (int c = 0; c < 2 * NP; ++c) {
        const __m256i v = _mm256_load_si256(
            reinterpret_cast<const __m256i*>(w + (c / 2) * stride + j * kPanelRows + (c % 2) * 8));
        even[c] = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
        odd[c] = _mm256_castsi256_ps(_mm256_and_si256(v, high_half));
      }
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m256 xb = _mm256_set1_ps(x[r * k_size + 2 * j]);
#pragma GCC unroll 16
        for (int c = 0; c < 2 * NP; ++c) acc[r][c] = _mm256_fmadd_ps(xb, even[c], acc[r][c]);
      }
      if (2 * j + 1 == k_size) break;
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m256 xb = _mm256_set1_ps(x[r * k_size + 2 * j + 1]);
#pragma GCC unroll 16
        for (int c = 0; c < 2 * NP; ++c) acc[r][c] = _mm256_fmadd_ps(xb, odd[c], acc[r][c]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < 2 * NP; ++c)
        StoreHalf(p, row + r, panel * kPanelRows + c * 8, acc[r][c], nullptr);
  }
};

// int8 with signed x (kS8): maddubs needs an unsigned operand and saturates pairs at
// 16 bits, so it gets |w| and x * sign(w): each pair sum is at most 2 * 127 * 127 =
// 32258, below the saturation point, and the product is unchanged.
struct Int8Kernel {
  static constexpr int kMaxRows = 4;
  static constexpr int PanelsFor(int) { return 1; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t panel) {
    const PreparedActivations& a = p.activations;
    const uint8_t* w = p.w->bytes() + panel * p.w->panel_bytes;
    const uint8_t* x = a.Block(row);  // unit j of row + r at (j * kMaxRows + r) * 4
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[MR][2];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int64_t j = 0; j < a.stride / 4; ++j) {
      __m256i wv[2], magnitude[2];
#pragma GCC unroll 16
      for (int h = 0; h < 2; ++h) {
        wv[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + j * 64 + h * 32));
        magnitude[h] = _mm256_abs_epi8(wv[h]);
      }
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m256i xb = Broadcast4(x + (j * kMaxRows + r) * 4);
#pragma GCC unroll 16
        for (int h = 0; h < 2; ++h) {
          const __m256i pairs = _mm256_maddubs_epi16(magnitude[h], _mm256_sign_epi8(xb, wv[h]));
          acc[r][h] = _mm256_add_epi32(acc[r][h], _mm256_madd_epi16(pairs, ones));
        }
      }
    }
#pragma GCC unroll 16
    for (int h = 0; h < 2; ++h) {
      const int64_t n0 = panel * kPanelRows + h * 8;
      const __m256 w_scale = _mm256_loadu_ps(p.w->scales + n0);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m256 scale = _mm256_mul_ps(w_scale, _mm256_set1_ps(a.scales[row + r]));
        StoreHalf(p, row + r, n0, _mm256_cvtepi32_ps(acc[r][h]), &scale);
      }
    }
  }
};

// The grouped formats (int4, int8 groups), one panel of two 8-lane halves at a time: per
// group, exact int32 dots (Codec::Dots), then the VNNI kernel's per-group epilogue
// (Codec::Fold); y = acc + bias. Written once for both codecs.
template <class Codec>
struct GroupKernel {
  static constexpr int kMaxRows = 2;
  static constexpr int PanelsFor(int) { return 1; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t panel) {
    const PreparedActivations& a = p.activations;
    const uint8_t* w = p.w->bytes() + panel * p.w->panel_bytes;
    const uint8_t* x = a.Block(row);  // unit j of row + r at (j * kMaxRows + r) * 4
    __m256 acc[MR][2];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t g = 0; g < a.num_groups; ++g) {
      __m256i dot[MR][2];
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) dot[r][0] = dot[r][1] = _mm256_setzero_si256();
      Codec::template Dots<MR, kMaxRows>(a.group_size, w, x, g, dot);
      const uint8_t* scales = Codec::Scales(p, w, g);
#pragma GCC unroll 16
      for (int h = 0; h < 2; ++h) {
        const __m256 scale = _mm256_cvtph_ps(
            _mm_load_si128(reinterpret_cast<const __m128i*>(scales + h * 16)));
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const int64_t at = (row + r) * a.num_groups + g;
          const __m256 s = _mm256_mul_ps(scale, _mm256_set1_ps(a.scales[at]));
          acc[r][h] = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(dot[r][h]), acc[r][h]);
          Codec::AddMin(scales + h * 16, a.group_sums[at], acc[r][h]);
        }
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int h = 0; h < 2; ++h)
        StoreHalf(p, row + r, panel * kPanelRows + h * 8, acc[r][h], nullptr);  // acc + bias
  }
};

// int4: nibbles (unsigned) times x's q (signed); two maddubs per octet stay below 7620
// before the 32-bit widening. Per group acc += scale * s * A, then min * S.
struct Int4Codec {
  template <int MR, int R>
  static void Dots(int64_t group, const uint8_t* w, const uint8_t* x, int64_t g,
                   __m256i (&dot)[MR][2]) {
    const uint8_t* block = w + g * (group * 8 + 64);
    const __m256i ones = _mm256_set1_epi16(1), nibble = _mm256_set1_epi8(0x0f);
    for (int64_t o = 0; o < group / 8; ++o) {
#pragma GCC unroll 16
      for (int h = 0; h < 2; ++h) {
        const __m256i v =
            _mm256_load_si256(reinterpret_cast<const __m256i*>(block + o * 64 + h * 32));
        const __m256i lo = _mm256_and_si256(v, nibble);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const uint8_t* xo = x + ((g * group / 4 + 2 * o) * R + r) * 4;
          const __m256i pairs =
              _mm256_add_epi16(_mm256_maddubs_epi16(lo, Broadcast4(xo)),
                               _mm256_maddubs_epi16(hi, Broadcast4(xo + R * 4)));
          dot[r][h] = _mm256_add_epi32(dot[r][h], _mm256_madd_epi16(pairs, ones));
        }
      }
    }
  }
  // The group's 16 f16 scales (its 16 mins follow 32 bytes later).
  static const uint8_t* Scales(const PackedProblem& p, const uint8_t* w, int64_t g) {
    const int64_t group = p.activations.group_size;
    return w + g * (group * 8 + 64) + group * 8;
  }
  static void AddMin(const uint8_t* half_scales, float x_sum, __m256& acc) {
    const __m256 min =
        _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(half_scales + 32)));
    acc = _mm256_fmadd_ps(min, _mm256_set1_ps(x_sum), acc);
  }
};

// int8 groups: W's q (u - 128) times x's q with maddubs's sign trick (|q_x| unsigned
// times q_w carrying q_x's sign: pairs stay within 2 * 127 * 127 < 2^15), so the
// integer dot A comes out directly; per group acc += scale * s * A (no min).
struct Int8GroupsCodec {
  template <int MR, int R>
  static void Dots(int64_t group, const uint8_t* w, const uint8_t* x, int64_t g,
                   __m256i (&dot)[MR][2]) {
    const __m256i ones = _mm256_set1_epi16(1), flip = _mm256_set1_epi8(-128);
    for (int64_t j = g * group / 4; j < (g + 1) * group / 4; ++j) {
#pragma GCC unroll 16
      for (int h = 0; h < 2; ++h) {
        const __m256i q_w = _mm256_xor_si256(
            _mm256_load_si256(reinterpret_cast<const __m256i*>(w + j * 64 + h * 32)), flip);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const __m256i q_x = Broadcast4(x + (j * R + r) * 4);
          const __m256i pairs =
              _mm256_maddubs_epi16(_mm256_abs_epi8(q_x), _mm256_sign_epi8(q_w, q_x));
          dot[r][h] = _mm256_add_epi32(dot[r][h], _mm256_madd_epi16(pairs, ones));
        }
      }
    }
  }
  static const uint8_t* Scales(const PackedProblem& p, const uint8_t* w, int64_t g) {
    return w + p.activations.num_groups * p.activations.group_size * kPanelRows + g * 32;
  }
  static void AddMin(const uint8_t*, float, __m256&) {}
};

using Int4Kernel = GroupKernel<Int4Codec>;
using Int8GroupsKernel = GroupKernel<Int8GroupsCodec>;

void TileF32(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<F32Kernel>(p, m0, m1, p0, p1);
}
void TileBf16(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<Bf16WidenKernel>(p, m0, m1, p0, p1);
}
void TileInt8(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<Int8Kernel>(p, m0, m1, p0, p1);
}
void TileInt4(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<Int4Kernel>(p, m0, m1, p0, p1);
}
void TileInt8Groups(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<Int8GroupsKernel>(p, m0, m1, p0, p1);
}

inline float AbsMax(const float* x, int64_t k) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 m = _mm256_setzero_ps();
  for (int64_t j = 0; j < k; j += 8)
    m = _mm256_max_ps(m, _mm256_and_ps(Avx2LoadTail(x + j, Clamp8(k - j)), magnitude));
  return Avx2ReduceMax(m);
}

// QuantizeActivationRow's q of x[j0, j0 + span) of a row of k values (those at or past
// k read as 0) with `inverse`, into units j0 / 4 ... of its interleaved place `units`.
// Returns the sum of the q. span: a multiple of 4.
int32_t QuantizeSpan(const float* x, int64_t k, int64_t j0, int64_t span, __m256 inverse,
                     uint8_t* units, int64_t unit_stride) {
  __m256i sum = _mm256_setzero_si256();
  for (int64_t j = j0; j < j0 + span; j += 8) {
    const int64_t valid = k - j <= 0 ? 0 : Clamp8(k - j);
    const __m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(Avx2LoadTail(x + j, valid), inverse));
    const __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    const int64_t packed = _mm_cvtsi128_si64(_mm_packs_epi16(q16, q16));
    std::memcpy(units + (j / 4) * unit_stride, &packed, 4);
    if (j + 4 < j0 + span)
      std::memcpy(units + (j / 4 + 1) * unit_stride, reinterpret_cast<const uint8_t*>(&packed) + 4,
                  4);
    sum = _mm256_add_epi32(sum, q);
  }
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
  s = _mm_hadd_epi32(s, s);
  s = _mm_hadd_epi32(s, s);
  return _mm_cvtsi128_si32(s);
}

// QuantizeActivationRow's inverse 127 / amax (0 for amax 0).
inline __m256 Inverse(float amax) { return _mm256_set1_ps(amax == 0.0f ? 0.0f : 127.0f / amax); }

// Row i into its interleaved place in `out` (zero padding), one scale for the row.
void QuantizeRow(const float* x, int64_t k, const PreparedActivations& out, int64_t i) {
  const float amax = AbsMax(x, k);
  out.scales[i] = amax / 127.0f;
  QuantizeSpan(x, k, 0, out.stride, Inverse(amax), out.Unit(i, 0), out.rows_per_block * 4);
}

}  // namespace
}  // namespace surge
#include "kernels/quantize_groups-inl.h"
#pragma GCC pop_options

namespace surge::internal {

void PrepareS8Avx2(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                   const PreparedActivations& out) {
  for (int64_t i = row_begin; i < row_end; ++i) QuantizeRow(x + i * k, k, out, i);
}

void PrepareS8GroupsAvx2(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                         const PreparedActivations& out) {
  for (int64_t i = row_begin; i < row_end; ++i) QuantizeGroups(x + i * k, k, out, i);
}

PackedKernel Avx2Kernel(WeightDType dtype) {
  switch (dtype) {
    case WeightDType::kF32:
      return {"f32/avx2", ActivationFormat::kF32, nullptr, TileF32};
    case WeightDType::kBF16:
      return {"bf16/avx2/widen", ActivationFormat::kF32, nullptr, TileBf16};
    case WeightDType::kInt8:
      return {"int8/avx2", ActivationFormat::kS8, PrepareS8Avx2, TileInt8,
              true,        Int8Kernel::kMaxRows};
    case WeightDType::kInt4:
      return {"int4/avx2", ActivationFormat::kS8Groups, PrepareS8GroupsAvx2, TileInt4,
              true,        Int4Kernel::kMaxRows};
    case WeightDType::kInt8Groups:
      return {"int8-groups/avx2", ActivationFormat::kS8Groups, PrepareS8GroupsAvx2,
              TileInt8Groups,     true,
              Int8GroupsKernel::kMaxRows};
  }
  return {};
}

}  // namespace surge::internal
