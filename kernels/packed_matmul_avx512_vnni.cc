// AVX-512 VNNI kernels for int8 and int4 panel weights: vpdpbusd multiplies 4 unsigned
// bytes by 4 signed bytes and adds the four products into a 32-bit lane, 64 products
// per instruction.
//
// Integer sums are exact, so an output's integer dot product cannot depend on the order
// or blocking; the f32 epilogue is a fixed per-output formula. Results therefore match
// the scalar kernels bit for bit, whatever the batch (batch invariance).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>
#include <cstring>

#include "kernels/packed_matmul.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma,f16c")
#include "kernels/packed_tile-inl.h"
#include "kernels/x86_avx512-inl.h"

namespace surge {
namespace {

using internal::PackedProblem;

// y[row, panel] = fma(v, w_scale * x_scale, bias) for the outputs that exist.
inline void StoreScaled(const PackedProblem& p, int64_t row, int64_t panel, __m512 v,
                        __m512 w_scale_times_x_scale) {
  const int64_t n0 = panel * kPanelRows, n_size = p.w->rows;
  const __mmask16 mask = Avx512TailMask(n_size - n0 < kPanelRows ? n_size - n0 : kPanelRows);
  const __m512 bias = p.bias ? _mm512_maskz_loadu_ps(mask, p.bias + n0) : _mm512_setzero_ps();
  _mm512_mask_storeu_ps(p.y + row * n_size + n0, mask,
                        _mm512_fmadd_ps(v, w_scale_times_x_scale, bias));
}

// int8: W is signed, and vpdpbusd wants one unsigned operand, so x arrives as q + 128
// (kU8Offset) and 128 * row_sum(W) comes off afterwards:
// sum (q_x + 128) q_w - 128 sum q_w = sum q_x q_w, exactly.
struct Int8Kernel {
  static constexpr int kMaxRows = 12;
  static constexpr int PanelsFor(int rows) { return rows <= 4 ? 4 : 2; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t panel) {
    const internal::PreparedActivations& a = p.activations;
    const int64_t num_quads = a.stride / 4, stride = p.w->panel_bytes;
    const uint8_t* w = p.w->bytes() + panel * stride;
    const uint8_t* x = a.Block(row);  // unit j of row + r at (j * kMaxRows + r) * 4
    __m512i acc[MR][NP];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_setzero_si512();
    for (int64_t j = 0; j < num_quads; ++j) {
      __m512i wv[NP];
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) wv[c] = _mm512_load_si512(w + c * stride + j * 64);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512i xb = Broadcast4(x + (j * kMaxRows + r) * 4);
#pragma GCC unroll 16
        for (int c = 0; c < NP; ++c) DotU8S8(acc[r][c], xb, wv[c]);
      }
    }
#pragma GCC unroll 16
    for (int c = 0; c < NP; ++c) {
      const int64_t n0 = (panel + c) * kPanelRows;
      const __m512i offset = _mm512_slli_epi32(_mm512_loadu_si512(p.w->row_sums + n0), 7);
      const __m512 w_scale = _mm512_loadu_ps(p.w->scales + n0);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512 dot = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][c], offset));
        StoreScaled(p, row + r, panel + c, dot,
                    _mm512_mul_ps(w_scale, _mm512_set1_ps(a.scales[row + r])));
      }
    }
  }
};

// The grouped formats (int4, int8 groups): per group of K, exact int32 dots of every
// (row, panel) of the register block (Codec::Dots), folded into f32 accumulators by the
// codec's per-group formula (Codec::Fold); y = acc + bias. Written once for both codecs.
template <class Codec>
struct GroupKernel {
  static constexpr int kMaxRows = 6;  // 6 x 2 integer + 6 x 2 float accumulators
  static constexpr int PanelsFor(int rows) { return rows <= 2 ? 4 : 2; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t panel) {
    const internal::PreparedActivations& a = p.activations;
    const uint8_t* w = p.w->bytes() + panel * p.w->panel_bytes;
    const uint8_t* x = a.Block(row);  // unit j of row + r at (j * kMaxRows + r) * 4
    __m512 acc[MR][NP];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) acc[r][c] = _mm512_setzero_ps();
    for (int64_t g = 0; g < a.num_groups; ++g) {
      __m512i dot[MR][NP];
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
        for (int c = 0; c < NP; ++c) dot[r][c] = _mm512_setzero_si512();
      Codec::template Dots<MR, NP, kMaxRows>(p, w, x, g, dot);
      Codec::template Fold<MR, NP>(p, row, w, g, dot, acc);
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c)
        StoreScaled(p, row + r, panel + c, acc[r][c], _mm512_set1_ps(1.0f));  // acc + bias
  }
};

// int4: W's nibbles are the unsigned operand (q in [0, 15]) and x's q the signed one, so
// no offset is needed. Per group: the exact dot A in int32, then with x's group scale s
// and S = s * sum of the group's q_x (prepared): acc = fma(scale * s, A, acc);
// acc = fma(min, S, acc) (the scalar kernel's formula).
struct Int4Codec {
  template <int MR, int NP, int R>
  static void Dots(const PackedProblem& p, const uint8_t* w, const uint8_t* x, int64_t g,
                   __m512i (&dot)[MR][NP]) {
    const int64_t group = p.activations.group_size, stride = p.w->panel_bytes;
    const uint8_t* block = w + g * (group * 8 + 64);
    const uint8_t* xg = x + g * group * R;  // the group's first unit
    const __m512i nibble = _mm512_set1_epi8(0x0f);
    for (int64_t o = 0; o < group / 8; ++o) {
      __m512i lo[NP], hi[NP];
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) {
        const __m512i v = _mm512_load_si512(block + c * stride + o * 64);
        lo[c] = _mm512_and_si512(v, nibble);
        hi[c] = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
      }
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512i x_lo = Broadcast4(xg + (2 * o * R + r) * 4);
        const __m512i x_hi = Broadcast4(xg + ((2 * o + 1) * R + r) * 4);
#pragma GCC unroll 16
        for (int c = 0; c < NP; ++c) {
          DotU8S8(dot[r][c], lo[c], x_lo);
          DotU8S8(dot[r][c], hi[c], x_hi);
        }
      }
    }
  }

  template <int MR, int NP>
  static void Fold(const PackedProblem& p, int64_t row, const uint8_t* w, int64_t g,
                   const __m512i (&dot)[MR][NP], __m512 (&acc)[MR][NP]) {
    const internal::PreparedActivations& a = p.activations;
    const int64_t group = a.group_size, at = row * a.num_groups + g;
#pragma GCC unroll 16
    for (int c = 0; c < NP; ++c) {
      const uint8_t* params = w + c * p.w->panel_bytes + g * (group * 8 + 64) + group * 8;
      const __m512 scale =
          _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(params)));
      const __m512 min =
          _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(params + 32)));
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512 s = _mm512_mul_ps(scale, _mm512_set1_ps(a.scales[at + r * a.num_groups]));
        acc[r][c] = _mm512_fmadd_ps(s, _mm512_cvtepi32_ps(dot[r][c]), acc[r][c]);
        const __m512 x_sum = _mm512_set1_ps(a.group_sums[at + r * a.num_groups]);
        acc[r][c] = _mm512_fmadd_ps(min, x_sum, acc[r][c]);
      }
    }
  }
};

// int8 groups: W's q + 128 is the unsigned operand and x's q the signed one, so per group
// vpdpbusd sums A + 128 X (X = sum of the group's q_x); A = that - 128 X exactly in f32
// (both integers below 2^24), then acc = fma(scale * s, A, acc) with x's group scale s
// (the scalar kernel's formula).
struct Int8GroupsCodec {
  template <int MR, int NP, int R>
  static void Dots(const PackedProblem& p, const uint8_t* w, const uint8_t* x, int64_t g,
                   __m512i (&dot)[MR][NP]) {
    const int64_t quads = p.activations.group_size / 4, stride = p.w->panel_bytes;
    for (int64_t j = g * quads; j < (g + 1) * quads; ++j) {
      __m512i wv[NP];
#pragma GCC unroll 16
      for (int c = 0; c < NP; ++c) wv[c] = _mm512_load_si512(w + c * stride + j * 64);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512i xb = Broadcast4(x + (j * R + r) * 4);
#pragma GCC unroll 16
        for (int c = 0; c < NP; ++c) DotU8S8(dot[r][c], wv[c], xb);
      }
    }
  }

  template <int MR, int NP>
  static void Fold(const PackedProblem& p, int64_t row, const uint8_t* w, int64_t g,
                   const __m512i (&dot)[MR][NP], __m512 (&acc)[MR][NP]) {
    const internal::PreparedActivations& a = p.activations;
    const int64_t at = row * a.num_groups + g;
    const uint8_t* scales = w + a.num_groups * a.group_size * kPanelRows + g * 32;
#pragma GCC unroll 16
    for (int c = 0; c < NP; ++c) {
      const __m512 scale = _mm512_cvtph_ps(
          _mm256_load_si256(reinterpret_cast<const __m256i*>(scales + c * p.w->panel_bytes)));
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512 s = _mm512_mul_ps(scale, _mm512_set1_ps(a.scales[at + r * a.num_groups]));
        const __m512 offset = _mm512_set1_ps(128.0f * a.q_sums[at + r * a.num_groups]);
        const __m512 exact = _mm512_sub_ps(_mm512_cvtepi32_ps(dot[r][c]), offset);
        acc[r][c] = _mm512_fmadd_ps(s, exact, acc[r][c]);
      }
    }
  }
};

using Int4Kernel = GroupKernel<Int4Codec>;
using Int8GroupsKernel = GroupKernel<Int8GroupsCodec>;

void TileInt8(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<Int8Kernel>(p, m0, m1, p0, p1);
}
void TileInt4(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<Int4Kernel>(p, m0, m1, p0, p1);
}
void TileInt8Groups(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  PackedTile<Int8GroupsKernel>(p, m0, m1, p0, p1);
}

}  // namespace
}  // namespace surge
#pragma GCC pop_options

namespace surge::internal {

PackedKernel Avx512VnniKernel(WeightDType dtype) {
  switch (dtype) {
    case WeightDType::kInt8:
      return {
          "int8/avx512_vnni",  ActivationFormat::kU8Offset, PrepareU8OffsetAvx512, TileInt8, true,
          Int8Kernel::kMaxRows};
    case WeightDType::kInt4:
      return {
          "int4/avx512_vnni",  ActivationFormat::kS8Groups, PrepareS8GroupsAvx512, TileInt4, true,
          Int4Kernel::kMaxRows};
    case WeightDType::kInt8Groups:
      return {"int8-groups/avx512_vnni", ActivationFormat::kS8Groups, PrepareS8GroupsAvx512,
              TileInt8Groups,            true,
              Int8GroupsKernel::kMaxRows};
    case WeightDType::kF32:
    case WeightDType::kBF16:
      break;
  }
  return Avx512Kernel(dtype);
}

}  // namespace surge::internal
