// AVX-512 (F/BW/VL/DQ) kernels for panel-layout weights: f32, bf16 widened in registers,
// int4 dequantized to f32 (the measured alternative to vpdpbusd), and the activation
// quantizers the VNNI kernels use. Longer than 400 lines would be fine for a SIMD file;
// this one stays under it by sharing the loop nest (packed_tile-inl.h).
//
// GCC 12's AVX-512 headers build "undefined" registers from themselves and then trip
// -Wuninitialized (GCC bug 105593); silence it for the header's lines only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>
#include <cstring>

#include "kernels/packed_matmul.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")
#include "kernels/packed_tile-inl.h"
#include "kernels/x86_avx512-inl.h"

namespace surge {
namespace {

using internal::PackedProblem;
using internal::PreparedActivations;

// y[row, 16 panel ...] = v + bias, for the outputs that exist.
inline void StorePanel(const PackedProblem& p, int64_t row, int64_t panel, __m512 v) {
  const int64_t n0 = panel * kPanelRows, n_size = p.w->rows;
  const __mmask16 mask = Avx512TailMask(n_size - n0 < kPanelRows ? n_size - n0 : kPanelRows);
  if (p.bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, p.bias + n0));
  _mm512_mask_storeu_ps(p.y + row * n_size + n0, mask, v);
}

// f32: acc[r][c] holds 16 outputs; for each k, x[r][k] is broadcast and multiplied by
// the panel's 16 weights of that k. Per output that is fma(x[k], w[k], acc) for k
// ascending -- the scalar kernel's chain, so the bits match it.
struct F32Kernel {
  static constexpr int kMaxRows = 12;  // 12 x 2 = 24 accumulators of 32 registers
  static constexpr int PanelsFor(int rows) { return rows <= 4 ? 4 : 2; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t panel) {
    const int64_t k_size = p.w->cols, stride = p.w->panel_bytes / 4;
    const float* w = p.w->f32() + panel * stride;
    const float* x = p.x + row * k_size;
    __m512 acc[MR][NP];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_setzero_ps();
    for (int64_t k = 0; k < k_size; ++k) {
      __m512 wv[NP];
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) wv[c] = _mm512_load_ps(w + c * stride + k * kPanelRows);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512 xb = _mm512_set1_ps(x[r * k_size + k]);
#pragma GCC unroll 16
        for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_fmadd_ps(xb, wv[c], acc[r][c]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) StorePanel(p, row + r, panel + c, acc[r][c]);
  }
};

// bf16 widened: a 32-bit lane holds the k-pair (w[2j] low, w[2j+1] high); w[2j] as f32
// is the lane shifted up 16 bits, w[2j+1] is the lane with its low half cleared. Then
// the same fma chain as f32, k ascending.
struct Bf16WidenKernel {
  static constexpr int kMaxRows = 12;
  static constexpr int PanelsFor(int rows) { return rows <= 4 ? 4 : 2; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t panel) {
    const int64_t k_size = p.w->cols, stride = p.w->panel_bytes / 4;
    const int32_t* w = reinterpret_cast<const int32_t*>(p.w->data) + panel * stride;
    const float* x = p.x + row * k_size;
    const __m512i high_half = _mm512_set1_epi32(static_cast<int32_t>(0xffff0000u));
    __m512 acc[MR][NP];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_setzero_ps();
    const int64_t num_pairs = (k_size + 1) / 2;
    for (int64_t j = 0; j < num_pairs; ++j) {
      const int64_t k = 2 * j;
      __m512 even[NP], odd[NP];
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) {
        const __m512i v = _mm512_load_si512(w + c * stride + j * kPanelRows);
        even[c] = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
        odd[c] = _mm512_castsi512_ps(_mm512_and_si512(v, high_half));
      }
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512 xb = _mm512_set1_ps(x[r * k_size + k]);
#pragma GCC unroll 16
        for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_fmadd_ps(xb, even[c], acc[r][c]);
      }
      if (k + 1 == k_size) break;  // odd K: the last pair has no second element
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512 xb = _mm512_set1_ps(x[r * k_size + k + 1]);
#pragma GCC unroll 16
        for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_fmadd_ps(xb, odd[c], acc[r][c]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) StorePanel(p, row + r, panel + c, acc[r][c]);
  }
};

// int4 dequantized to f32 in registers (w = fma(scale, q, min), exact as the scalar
// DequantizeInt4), then the f32 fma chain with unquantized x: the alternative to the
// VNNI kernel, kept to measure against it (docs/PERF.md). Same per-output chain over k
// ascending as f32 on the unpacked weights.
struct Int4F32Kernel {
  static constexpr int kMaxRows = 8;
  static constexpr int PanelsFor(int rows) { return rows <= 4 ? 2 : 1; }

  template <int MR, int NP>
  static inline void Step(const float* x, int64_t k_size, int64_t k, const __m512* wv,
                          __m512 (&acc)[MR][NP]) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 xb = _mm512_set1_ps(x[r * k_size + k]);
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_fmadd_ps(xb, wv[c], acc[r][c]);
    }
  }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t panel) {
    const int64_t k_size = p.w->cols, group = p.w->group_size, stride = p.w->panel_bytes;
    const uint8_t* w = p.w->bytes() + panel * stride;
    const float* x = p.x + row * k_size;
    const __m512i nibble = _mm512_set1_epi8(0x0f), byte = _mm512_set1_epi32(0xff);
    __m512 acc[MR][NP];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_setzero_ps();
    for (int64_t g0 = 0; g0 < k_size; g0 += group) {
      const uint8_t* block = w + (g0 / group) * (group * 8 + 64);
      __m512 scale[NP], min[NP];
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) {
        const uint8_t* params = block + c * stride + group * 8;
        scale[c] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(params)));
        min[c] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(params + 32)));
      }
      for (int64_t k0 = g0; k0 < k_size && k0 < g0 + group; k0 += 8) {
        __m512i q[NP][2];
#pragma GCC unroll 16
        for (int c = 0; c < NP; ++c) {
          const __m512i v = _mm512_load_si512(block + c * stride + (k0 - g0) * 8);
          q[c][0] = _mm512_and_si512(v, nibble);
          q[c][1] = _mm512_and_si512(_mm512_srli_epi32(v, 4), nibble);
        }
        auto step = [&](int j) {
          __m512 wv[NP];
#pragma GCC unroll 16
          for (int c = 0; c < NP; ++c) {
            const __m512i qj = _mm512_and_si512(_mm512_srli_epi32(q[c][j / 4], 8 * (j % 4)), byte);
            wv[c] = _mm512_fmadd_ps(scale[c], _mm512_cvtepi32_ps(qj), min[c]);
          }
          Step<MR, NP>(x, k_size, k0 + j, wv, acc);
        };
        if (k0 + 8 <= k_size) {
#pragma GCC unroll 16
          for (int j = 0; j < 8; ++j) step(j);
        } else {
          for (int j = 0; k0 + j < k_size; ++j) step(j);  // the end of an odd-sized K
        }
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) StorePanel(p, row + r, panel + c, acc[r][c]);
  }
};

void TileF32(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<F32Kernel>(p, m0, m1, p0, p1);
}
void TileBf16Widen(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<Bf16WidenKernel>(p, m0, m1, p0, p1);
}
void TileInt4F32(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<Int4F32Kernel>(p, m0, m1, p0, p1);
}

// QuantizeActivationRow's q for 16 values (zeros where the mask is off).
inline __m512i QuantizeLanes(const float* x, __mmask16 mask, __m512 inverse) {
  return _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x), inverse));
}

inline float AbsMax(const float* x, int64_t k) {
  __m512 m = _mm512_setzero_ps();
  for (int64_t j = 0; j < k; j += kAvx512Lanes) {
    const __mmask16 mask = Avx512TailMask(k - j < kAvx512Lanes ? k - j : kAvx512Lanes);
    m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_maskz_loadu_ps(mask, x + j)));
  }
  return Avx512ReduceMax(m);
}

// Quantizes x[j0, j0 + span) of a row of k values (those at or past k read as 0) with
// `inverse` into units j0 / 4 ... of its interleaved place `units`, flipping the top bit
// of every byte when kOffset (q + 128). Returns the sum of the q. span: a multiple of 4.
template <bool kOffset = false>
int32_t QuantizeSpan(const float* x, int64_t k, int64_t j0, int64_t span, __m512 inverse,
                     uint8_t* units, int64_t unit_stride) {
  __m512i sum = _mm512_setzero_si512();
  for (int64_t j = j0; j < j0 + span; j += kAvx512Lanes) {
    const __mmask16 in = Avx512TailMask(k - j <= 0 ? 0 : k - j < 16 ? k - j : 16);
    const __m512i q = QuantizeLanes(x + j, in, inverse);
    __m128i bytes = _mm512_cvtepi32_epi8(q);
    if (kOffset) bytes = _mm_xor_si128(bytes, _mm_set1_epi8(static_cast<char>(0x80)));
    alignas(16) uint32_t quads[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(quads), bytes);
    for (int64_t u = 0; u < 4 && j + 4 * u < j0 + span; ++u)
      std::memcpy(units + (j / 4 + u) * unit_stride, &quads[u], 4);
    sum = _mm512_add_epi32(sum, q);
  }
  return _mm512_reduce_add_epi32(sum);
}

// QuantizeActivationRow's inverse 127 / amax (0 for amax 0) and scale amax / 127.
inline __m512 Inverse(float amax) { return _mm512_set1_ps(amax == 0.0f ? 0.0f : 127.0f / amax); }

// Quantizes row i into its interleaved place in `out` (padding 0) with one scale.
template <bool kOffset>
void QuantizeRow(const float* x, int64_t k, const PreparedActivations& out, int64_t i) {
  const float amax = AbsMax(x, k);
  out.scales[i] = amax / 127.0f;
  QuantizeSpan<kOffset>(x, k, 0, out.stride, Inverse(amax), out.Unit(i, 0),
                        out.rows_per_block * 4);
}

}  // namespace
}  // namespace surge
#include "kernels/quantize_groups-inl.h"
#pragma GCC pop_options

namespace surge::internal {

void PrepareU8OffsetAvx512(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                           const PreparedActivations& out) {
  for (int64_t i = row_begin; i < row_end; ++i) QuantizeRow<true>(x + i * k, k, out, i);
}

void PrepareS8GroupsAvx512(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                           const PreparedActivations& out) {
  for (int64_t i = row_begin; i < row_end; ++i) QuantizeGroups(x + i * k, k, out, i);
}

PackedKernel Avx512Kernel(WeightDType dtype) {
  switch (dtype) {
    case WeightDType::kF32:
      return {"f32/avx512", ActivationFormat::kF32, nullptr, TileF32};
    case WeightDType::kBF16:
      return {"bf16/avx512/widen", ActivationFormat::kF32, nullptr, TileBf16Widen};
    case WeightDType::kInt4:
      return {"int4/avx512/f32-dequant", ActivationFormat::kF32, nullptr, TileInt4F32, false};
    case WeightDType::kInt8:
    case WeightDType::kInt8Groups:
      break;
  }
  return Avx2Kernel(dtype);  // int8 without VNNI: the AVX2 kernel
}

}  // namespace surge::internal
