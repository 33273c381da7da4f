// AVX-512 BF16 kernel for bf16 panel weights: vdpbf16ps multiplies 16 lanes of bf16
// pairs and adds both products into each f32 lane (32 products per instruction).
//
// Accuracy: x is rounded to bf16 once per row per call (vcvtne2ps2bf16: nearest even),
// a relative error of up to 2^-8 per activation on top of the weights' own bf16
// rounding, and the instruction flushes denormal inputs and outputs to zero. Each
// output's chain is fixed (k-pairs ascending, the odd k of a pair first, as the
// instruction defines), so results are still batch-invariant; they are not the bits of
// the widening kernel, which keeps x in f32.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>
#include <cstring>

#include "kernels/packed_matmul.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma")
#include "kernels/packed_tile-inl.h"
#include "kernels/x86_avx512-inl.h"

namespace surge {
namespace {

using internal::PackedProblem;

struct Bf16DotKernel {
  static constexpr int kMaxRows = 12;
  static constexpr int PanelsFor(int rows) { return rows <= 4 ? 4 : 2; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t panel) {
    const internal::PreparedActivations& a = p.activations;
    const int64_t num_pairs = a.stride / 4, stride = p.w->panel_bytes;
    const uint8_t* w = p.w->bytes() + panel * stride;
    const uint8_t* x = a.Block(row);  // unit j of row + r at (j * kMaxRows + r) * 4
    __m512 acc[MR][NP];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_setzero_ps();
    for (int64_t j = 0; j < num_pairs; ++j) {
      __m512i wv[NP];
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) wv[c] = _mm512_load_si512(w + c * stride + j * 64);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        int32_t pair;
        std::memcpy(&pair, x + (j * kMaxRows + r) * 4, 4);
        const __m512i xb = _mm512_set1_epi32(pair);
#pragma GCC unroll 16
        for (int c = 0; c < NP; ++c) DotBf16(acc[r][c], xb, wv[c]);
      }
    }
    const int64_t n_size = p.w->rows;
#pragma GCC unroll 16
    for (int c = 0; c < NP; ++c) {
      const int64_t n0 = (panel + c) * kPanelRows;
      const __mmask16 mask = Avx512TailMask(n_size - n0 < kPanelRows ? n_size - n0 : kPanelRows);
      const __m512 bias = p.bias ? _mm512_maskz_loadu_ps(mask, p.bias + n0) : _mm512_setzero_ps();
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r)
        _mm512_mask_storeu_ps(p.y + (row + r) * n_size + n0, mask, _mm512_add_ps(acc[r][c], bias));
    }
  }
};

void TileBf16Dot(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<Bf16DotKernel>(p, m0, m1, p0, p1);
}

// x rows to bf16 pairs (32 floats per instruction, zero-padded to the stride), each
// pair stored at its interleaved place.
void ConvertRows(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                 const internal::PreparedActivations& out) {
  const int64_t num_pairs = out.stride / 4, unit_stride = out.rows_per_block * 4;
  for (int64_t i = row_begin; i < row_end; ++i) {
    const float* src = x + i * k;
    uint8_t* units = out.Unit(i, 0);
    for (int64_t j = 0; j < num_pairs; j += 16) {
      auto lanes = [&](int64_t from) {
        const int64_t n = k - from;
        return Avx512TailMask(n <= 0 ? 0 : n < 16 ? n : 16);
      };
      const __m512 lo = _mm512_maskz_loadu_ps(lanes(2 * j), src + 2 * j);
      const __m512 hi = _mm512_maskz_loadu_ps(lanes(2 * j + 16), src + 2 * j + 16);
      alignas(64) uint32_t pairs[16];
      _mm512_store_si512(pairs, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
      for (int64_t u = 0; u < 16 && j + u < num_pairs; ++u)
        std::memcpy(units + (j + u) * unit_stride, &pairs[u], 4);
    }
  }
}

}  // namespace
}  // namespace surge
#pragma GCC pop_options

namespace surge::internal {

PackedKernel Avx512Bf16DotKernel() {
  return {"bf16/avx512_bf16/vdpbf16ps", ActivationFormat::kBf16, ConvertRows, TileBf16Dot, false,
          Bf16DotKernel::kMaxRows};
}

}  // namespace surge::internal
