// AMX kernels for panel-layout weights: int8 (tdpbusd), int4 (nibbles widened to bytes
// in a scratch per group, then tdpbsud) and bf16 (tdpbf16ps). One tile op multiplies 16
// rows of x by 16 outputs' weights over 64 k (bf16: 32): 16,384 products per instruction
// where vpdpbusd does 64 (bf16: 8,192 against vdpbf16ps's 32).
//
// The panel layouts are already what a B tile wants (weight_matrix.h): 16 outputs x one
// k-quad (int8) or k-pair (bf16) per 64 bytes, so a B tile is 16 consecutive 64-byte rows
// of a panel and nothing is repacked at load time. x arrives as plain rows (R = 1) padded
// to a multiple of 16 rows, so an A tile is 16 rows at the prepared stride; the rows past
// m compute garbage that is never stored.
//
// Bits. int8 and int4: the integer sums are exact and the f32 epilogue is the VNNI
// kernels' formula, so every output equals theirs and the scalar kernel's bit for bit;
// MatMul may pick AMX only for some row counts without breaking batch invariance. K
// beyond the last whole tile (int8: K mod 64) is summed with vpdpbusd on the stored
// accumulators, exact too. bf16: each output's chain is fixed (tile blocks of 32 k
// ascending, then the K mod 32 tail with vdpbf16ps), independent of m and threads, but it
// is neither the widening kernel's chain nor vdpbf16ps's, and x is rounded to bf16:
// batch-invariant only if used for every m, which is why MatMul takes it only when
// SURGE_AMX_BF16=1 asks for it (packed_matmul.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/packed_matmul.h"

#pragma GCC push_options
#pragma GCC target( \
    "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512bf16,fma,f16c,amx-tile,amx-int8,amx-bf16")
#include "kernels/amx_tiles-inl.h"
#include "kernels/x86_avx512-inl.h"

namespace surge {
namespace {

using internal::PackedProblem;
using internal::PreparedActivations;

constexpr int64_t kTileRows = 16;
constexpr int64_t kTileBytes = 16 * 64;

// Output lanes of `panel` that exist.
inline __mmask16 PanelMask(const PackedProblem& p, int64_t panel) {
  const int64_t left = p.w->rows - panel * kPanelRows;
  return Avx512TailMask(left < kPanelRows ? left : kPanelRows);
}
inline __m512 BiasOf(const PackedProblem& p, int64_t panel, __mmask16 mask) {
  return p.bias ? _mm512_maskz_loadu_ps(mask, p.bias + panel * kPanelRows) : _mm512_setzero_ps();
}
inline float* OutputRow(const PackedProblem& p, int64_t row, int64_t panel) {
  return p.y + row * p.w->rows + panel * kPanelRows;
}

enum class DotKind { kUS, kSU, kBf16 };

// The block's tile ops for one K step: A tiles tmm4.. (MR of them), B tiles tmm6..
// (NP), C[r][c] = tmm(2r + c). B tile c is 16 rows of 64 bytes at b + c * b_panel_stride.
template <class T, DotKind kDot, int MR, int NP>
inline void TileStep(const uint8_t* a, int64_t a_stride, const uint8_t* b, int64_t b_panel_stride) {
  auto dot = [](auto c, auto x, auto y) {
    constexpr int kC = decltype(c)::value, kA = decltype(x)::value, kB = decltype(y)::value;
    if constexpr (kDot == DotKind::kUS) T::template DotUS<kC, kA, kB>();
    if constexpr (kDot == DotKind::kSU) T::template DotSU<kC, kA, kB>();
    if constexpr (kDot == DotKind::kBf16) T::template DotBf16<kC, kA, kB>();
  };
  using I0 = std::integral_constant<int, 0>;
  using I1 = std::integral_constant<int, 1>;
  using I2 = std::integral_constant<int, 2>;
  using I3 = std::integral_constant<int, 3>;
  using I4 = std::integral_constant<int, 4>;
  using I5 = std::integral_constant<int, 5>;
  using I6 = std::integral_constant<int, 6>;
  using I7 = std::integral_constant<int, 7>;
  T::template Load<4>(a, a_stride);
  T::template Load<6>(b, 64);
  dot(I0{}, I4{}, I6{});
  if constexpr (NP > 1) {
    T::template Load<7>(b + b_panel_stride, 64);
    dot(I1{}, I4{}, I7{});
  }
  if constexpr (MR > 1) {
    T::template Load<5>(a + kTileRows * a_stride, a_stride);
    dot(I2{}, I5{}, I6{});
    if constexpr (NP > 1) dot(I3{}, I5{}, I7{});
  }
}

template <class T, int MR, int NP>
inline void ZeroAccumulators() {
  T::template Zero<0>();
  if constexpr (NP > 1) T::template Zero<1>();
  if constexpr (MR > 1) T::template Zero<2>();
  if constexpr (MR > 1 && NP > 1) T::template Zero<3>();
}

// C[r][c] into out[r][c]: 16 rows of 16 int32 or f32 lanes each.
template <class T, int MR, int NP>
inline void StoreAccumulators(uint8_t (&out)[2][2][kTileBytes]) {
  T::template Store<0>(out[0][0], 64);
  if constexpr (NP > 1) T::template Store<1>(out[0][1], 64);
  if constexpr (MR > 1) T::template Store<2>(out[1][0], 64);
  if constexpr (MR > 1 && NP > 1) T::template Store<3>(out[1][1], 64);
}

// The block's whole 64-byte K steps (x rows at the prepared stride, the panels' B
// tiles one after another), accumulators stored into c; returns the 4-byte units done.
template <class T, DotKind kDot, int MR, int NP>
inline int64_t WholeSteps(const PackedProblem& p, const uint8_t* x, const uint8_t* w,
                          uint8_t (&c)[2][2][kTileBytes]) {
  const int64_t num_steps = p.activations.stride / 64;
  ZeroAccumulators<T, MR, NP>();
  for (int64_t s = 0; s < num_steps; ++s)
    TileStep<T, kDot, MR, NP>(x + s * 64, p.activations.stride, w + s * kTileBytes,
                              p.w->panel_bytes);
  StoreAccumulators<T, MR, NP>(c);
  return num_steps * 16;
}

// int8: x is q + 128 (kU8Offset) against W's signed q, minus 128 row_sum(W) afterwards,
// exactly as the VNNI kernel: y = fma(float(dot), w_scale * x_scale, bias).
template <class T>
struct Int8Amx {
  using Tiles = T;
  static const TileConfig& Config(const PackedProblem&) { return kTileConfig64; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t num_rows, int64_t panel) {
    const PreparedActivations& a = p.activations;
    const int64_t num_quads = a.stride / 4, stride = p.w->panel_bytes;
    const uint8_t* x = a.data + row * a.stride;
    const uint8_t* w = p.w->bytes() + panel * stride;
    alignas(64) uint8_t c[2][2][kTileBytes];
    const int64_t tail = WholeSteps<T, DotKind::kUS, MR, NP>(p, x, w, c);
    for (int cc = 0; cc < NP; ++cc) {
      const int64_t n0 = (panel + cc) * kPanelRows;
      const __mmask16 mask = PanelMask(p, panel + cc);
      const __m512 bias = BiasOf(p, panel + cc, mask);
      const __m512i offset = _mm512_slli_epi32(_mm512_loadu_si512(p.w->row_sums + n0), 7);
      const __m512 w_scale = _mm512_loadu_ps(p.w->scales + n0);
      const uint8_t* wc = w + cc * stride;
      for (int64_t i = 0; i < num_rows; ++i) {
        __m512i acc = _mm512_load_si512(c[i / kTileRows][cc] + (i % kTileRows) * 64);
        const uint8_t* xi = x + i * a.stride;
        for (int64_t j = tail; j < num_quads; ++j)
          DotU8S8(acc, Broadcast4(xi + 4 * j), _mm512_load_si512(wc + j * 64));
        const __m512 dot = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, offset));
        const __m512 scale = _mm512_mul_ps(w_scale, _mm512_set1_ps(a.scales[row + i]));
        _mm512_mask_storeu_ps(OutputRow(p, row + i, panel + cc), mask,
                              _mm512_fmadd_ps(dot, scale, bias));
      }
    }
  }
};

// int4: per group, the nibbles of each panel are widened to bytes (B tiles of unsigned
// q) and multiplied by x's signed q (tdpbsud); then, as the VNNI kernel,
// acc = fma(scale * s, A, acc); acc = fma(min, S, acc) per group (s: x's group scale,
// S: s * sum of the group's q) and y = acc + bias. Groups of 32 use 32-byte A tiles (kTileConfig32).
template <class T>
struct Int4Amx {
  using Tiles = T;
  static const TileConfig& Config(const PackedProblem& p) {
    return p.w->group_size == 32 ? kTileConfig32 : kTileConfig64;
  }

  // Panel block `block` of one group into b: quad q (k = 4q .. 4q + 3) at b + 64 q.
  static void Widen(const uint8_t* block, int64_t group, uint8_t* b) {
    const __m512i nibble = _mm512_set1_epi8(0x0f);
    for (int64_t o = 0; o < group / 8; ++o) {
      const __m512i v = _mm512_load_si512(block + o * 64);
      _mm512_store_si512(b + 2 * o * 64, _mm512_and_si512(v, nibble));
      _mm512_store_si512(b + (2 * o + 1) * 64, _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble));
    }
  }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t num_rows, int64_t panel) {
    const PreparedActivations& a = p.activations;
    const int64_t group = a.group_size, k_bytes = group < 64 ? group : 64;
    const int64_t block_bytes = group * 8 + 64, stride = p.w->panel_bytes;
    const uint8_t* x = a.data + row * a.stride;
    const uint8_t* w = p.w->bytes() + panel * stride;
    alignas(64) uint8_t b[2][32 * 64];  // a group's widened quads, per panel
    alignas(64) uint8_t c[2][2][kTileBytes];
    __m512 acc[2 * kTileRows][NP];
    for (int64_t i = 0; i < num_rows; ++i)
      for (int cc = 0; cc < NP; ++cc) acc[i][cc] = _mm512_setzero_ps();
    for (int64_t g = 0; g < a.num_groups; ++g) {
      for (int cc = 0; cc < NP; ++cc) Widen(w + cc * stride + g * block_bytes, group, b[cc]);
      ZeroAccumulators<T, MR, NP>();
      for (int64_t k0 = 0; k0 < group; k0 += k_bytes)
        TileStep<T, DotKind::kSU, MR, NP>(x + g * group + k0, a.stride, b[0] + k0 * 16, b[1] - b[0]);
      StoreAccumulators<T, MR, NP>(c);
      for (int cc = 0; cc < NP; ++cc) {
        const uint8_t* params = w + cc * stride + g * block_bytes + group * 8;
        const __m512 scale =
            _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(params)));
        const __m512 min =
            _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(params + 32)));
        for (int64_t i = 0; i < num_rows; ++i) {
          const __m512i dot = _mm512_load_si512(c[i / kTileRows][cc] + (i % kTileRows) * 64);
          const __m512 s =
              _mm512_mul_ps(scale, _mm512_set1_ps(a.scales[(row + i) * a.num_groups + g]));
          acc[i][cc] = _mm512_fmadd_ps(s, _mm512_cvtepi32_ps(dot), acc[i][cc]);
          const __m512 x_sum = _mm512_set1_ps(a.group_sums[(row + i) * a.num_groups + g]);
          acc[i][cc] = _mm512_fmadd_ps(min, x_sum, acc[i][cc]);
        }
      }
    }
    for (int cc = 0; cc < NP; ++cc) {
      const __mmask16 mask = PanelMask(p, panel + cc);
      const __m512 bias = BiasOf(p, panel + cc, mask);
      for (int64_t i = 0; i < num_rows; ++i) {
        _mm512_mask_storeu_ps(OutputRow(p, row + i, panel + cc), mask,
                              _mm512_add_ps(acc[i][cc], bias));
      }
    }
  }
};

// bf16: x in bf16 k-pairs (kBf16) against the panel's k-pairs, f32 accumulators; the
// K mod 32 pairs past the last tile step with vdpbf16ps; then + bias.
template <class T>
struct Bf16Amx {
  using Tiles = T;
  static const TileConfig& Config(const PackedProblem&) { return kTileConfig64; }

  template <int MR, int NP>
  static void Block(const PackedProblem& p, int64_t row, int64_t num_rows, int64_t panel) {
    const PreparedActivations& a = p.activations;
    const int64_t num_pairs = a.stride / 4, stride = p.w->panel_bytes;
    const uint8_t* x = a.data + row * a.stride;
    const uint8_t* w = p.w->bytes() + panel * stride;
    alignas(64) uint8_t c[2][2][kTileBytes];
    const int64_t tail = WholeSteps<T, DotKind::kBf16, MR, NP>(p, x, w, c);
    for (int cc = 0; cc < NP; ++cc) {
      const __mmask16 mask = PanelMask(p, panel + cc);
      const __m512 bias = BiasOf(p, panel + cc, mask);
      const uint8_t* wc = w + cc * stride;
      for (int64_t i = 0; i < num_rows; ++i) {
        __m512 acc = _mm512_load_ps(c[i / kTileRows][cc] + (i % kTileRows) * 64);
        const uint8_t* xi = x + i * a.stride;
        for (int64_t j = tail; j < num_pairs; ++j)
          DotBf16(acc, Broadcast4(xi + 4 * j), _mm512_load_si512(wc + j * 64));
        _mm512_mask_storeu_ps(OutputRow(p, row + i, panel + cc), mask, _mm512_add_ps(acc, bias));
      }
    }
  }
};

// Blocks of up to 32 rows x 2 panels (2 x 2 accumulator tiles), panels outer so a
// pair's weights stay in L1/L2 while the item's rows pass.
template <class K>
void AmxTile(const PackedProblem& p, int64_t m_begin, int64_t m_end, int64_t panel_begin,
             int64_t panel_end) {
  K::Tiles::Configure(K::Config(p));
  for (int64_t panel = panel_begin; panel < panel_end; panel += 2) {
    const bool pair = panel + 1 < panel_end;
    for (int64_t row = m_begin; row < m_end; row += 2 * kTileRows) {
      const int64_t rows = std::min(2 * kTileRows, m_end - row);
      if (rows > kTileRows) {
        pair ? K::template Block<2, 2>(p, row, rows, panel)
             : K::template Block<2, 1>(p, row, rows, panel);
      } else {
        pair ? K::template Block<1, 2>(p, row, rows, panel)
             : K::template Block<1, 1>(p, row, rows, panel);
      }
    }
  }
}

// The tile functions, one per dtype and tile implementation, compiled in this target
// region; the PackedKernel factories sit outside it (as in the other ISA files), because
// tests call them on any CPU.
template <class T>
void TileInt8(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  AmxTile<Int8Amx<T>>(p, m0, m1, p0, p1);
}
template <class T>
void TileInt4(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  AmxTile<Int4Amx<T>>(p, m0, m1, p0, p1);
}
template <class T>
void TileBf16(const PackedProblem& p, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  AmxTile<Bf16Amx<T>>(p, m0, m1, p0, p1);
}
template void TileInt8<HardwareTiles>(const PackedProblem&, int64_t, int64_t, int64_t, int64_t);
template void TileInt4<HardwareTiles>(const PackedProblem&, int64_t, int64_t, int64_t, int64_t);
template void TileBf16<HardwareTiles>(const PackedProblem&, int64_t, int64_t, int64_t, int64_t);
template void TileInt8<EmulatedTiles>(const PackedProblem&, int64_t, int64_t, int64_t, int64_t);
template void TileInt4<EmulatedTiles>(const PackedProblem&, int64_t, int64_t, int64_t, int64_t);
template void TileBf16<EmulatedTiles>(const PackedProblem&, int64_t, int64_t, int64_t, int64_t);

// AmxDotLoop's body.
int64_t DotLoop(bool bf16, int64_t iterations) {
  // 0x3c in every byte: int8 60, bf16 ~0.0115 -- nonzero (no shortcut on zeros), and
  // the sums stay finite (int32 sums wrap harmlessly).
  alignas(64) uint8_t operand[kTileBytes];
  std::memset(operand, 0x3c, sizeof(operand));
  HardwareTiles::Configure(kTileConfig64);
  HardwareTiles::Load<4>(operand, 64);
  HardwareTiles::Load<5>(operand, 64);
  HardwareTiles::Load<6>(operand, 64);
  HardwareTiles::Load<7>(operand, 64);
  ZeroAccumulators<HardwareTiles, 2, 2>();
  for (int64_t i = 0; i < iterations; ++i) {
    if (bf16) {
      HardwareTiles::DotBf16<0, 4, 6>();
      HardwareTiles::DotBf16<1, 4, 7>();
      HardwareTiles::DotBf16<2, 5, 6>();
      HardwareTiles::DotBf16<3, 5, 7>();
    } else {
      HardwareTiles::DotUS<0, 4, 6>();
      HardwareTiles::DotUS<1, 4, 7>();
      HardwareTiles::DotUS<2, 5, 6>();
      HardwareTiles::DotUS<3, 5, 7>();
    }
  }
  const int64_t k_per_op = bf16 ? 32 : 64;  // products per output per tile op
  return iterations * 4 * 2 * kTileRows * 16 * k_per_op;
}

}  // namespace
}  // namespace surge
#pragma GCC pop_options

namespace surge::internal {
namespace {

template <class T>
PackedKernel MakeKernel(WeightDType dtype, const char* int8_name, const char* int4_name,
                        const char* bf16_name) {
  PackedKernel k;
  switch (dtype) {
    case WeightDType::kInt8:
      k = {int8_name, ActivationFormat::kU8Offset, PrepareU8OffsetAvx512, TileInt8<T>, true, 1};
      break;
    case WeightDType::kInt4:
      k = {int4_name, ActivationFormat::kS8Groups, PrepareS8GroupsAvx512, TileInt4<T>, true, 1};
      break;
    case WeightDType::kBF16:
      k = {bf16_name, ActivationFormat::kBf16, Avx512Bf16DotKernel().prepare, TileBf16<T>, false,
           1};
      break;
    case WeightDType::kF32:
      return Avx512Kernel(dtype);
    case WeightDType::kInt8Groups:
      return Avx512VnniKernel(dtype);  // no AMX kernel for them (yet)
  }
  k.pad_rows_to = kTileRows;
  return k;
}

}  // namespace

PackedKernel AmxKernel(WeightDType dtype) {
  return MakeKernel<HardwareTiles>(dtype, "int8/amx/tdpbusd", "int4/amx/tdpbsud",
                                   "bf16/amx/tdpbf16ps");
}

PackedKernel AmxEmulatedKernel(WeightDType dtype) {
  return MakeKernel<EmulatedTiles>(dtype, "int8/amx-emulated", "int4/amx-emulated",
                                   "bf16/amx-emulated");
}

int64_t AmxDotLoop(bool bf16, int64_t iterations) { return DotLoop(bf16, iterations); }

}  // namespace surge::internal
