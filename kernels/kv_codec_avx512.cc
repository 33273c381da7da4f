// The AVX-512 KV row kernels. dot/axpy widen 16 stored values at a time to f32 in
// registers (bf16: shift; f16: vcvtph2ps; int8: sign-extend + convert, the row scale
// applied once; int4: nibble split + scale * q + min per group) and FMA them with the
// query / output row; no dequantized copy of the row is ever written. The quantizers
// reproduce QuantizeKvRow bit for bit (kv_codec_test checks).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/kv_codec.h"
#include "kernels/vec_ops.h"
#include "kernels/weight_codec.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")
#include "kernels/kv_rows-inl.h"
#include "kernels/x86_avx512-inl.h"
#include "kernels/kv_loads_avx512-inl.h"

namespace surge {
namespace {

constexpr float kF16Max = 65504.0f;

template <typename Load>
float DotElementwise(const float* q, const uint8_t* row, int32_t n) {
  const Load load(row);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), load(i), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 16), load(i + 16), acc1);
  }
  for (; i + 16 <= n; i += 16)
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), load(i), acc0);
  if (i < n) {
    const __mmask16 mask = Avx512TailMask(n - i);
    acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, q + i), load(i, mask), acc1);
  }
  return load.factor * Avx512ReduceAdd(_mm512_add_ps(acc0, acc1));
}

template <typename Load>
void AxpyElementwise(float a, const uint8_t* row, float* y, int32_t n) {
  const Load load(row);
  const __m512 va = _mm512_set1_ps(a * load.factor);
  int32_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(va, load(i), _mm512_loadu_ps(y + i)));
  if (i < n) {
    const __mmask16 mask = Avx512TailMask(n - i);
    _mm512_mask_storeu_ps(y + i, mask,
                          _mm512_fmadd_ps(va, load(i, mask), _mm512_maskz_loadu_ps(mask, y + i)));
  }
}

// axpy_rows for the elementwise formats: AxpyElementwise row after row, but with y's
// 16 lanes held in a register across the rows instead of stored and reloaded per row
// (rows are bytes, which may alias y, so the compiler cannot do this itself). Each
// lane takes the same FMAs in the same row order: bit for bit the row-by-row result.
template <typename Load>
void AxpyRowsElementwise(const float* a, const uint8_t* rows, int64_t row_stride,
                         int32_t num_rows, float* y, int32_t n) {
  for (int32_t i = 0; i < n; i += 16) {
    const __mmask16 mask = Avx512TailMask(std::min(n - i, 16));
    __m512 acc = _mm512_maskz_loadu_ps(mask, y + i);
    for (int32_t t = 0; t < num_rows; ++t) {
      const Load load(rows + t * row_stride);
      acc = _mm512_fmadd_ps(_mm512_set1_ps(a[t] * load.factor), load(i, mask), acc);
    }
    _mm512_mask_storeu_ps(y + i, mask, acc);
  }
}

int32_t NumGroups(int32_t n) { return (n + kKvInt4GroupSize - 1) / kKvInt4GroupSize; }

// Group g of an int4 row: elements [32g, 32g + 16) in *lo, [32g + 16, 32g + 32) in *hi.
inline void LoadInt4Group(const uint8_t* row, int32_t groups, int32_t g, __m512* lo, __m512* hi) {
  uint16_t params[2];
  std::memcpy(params, row + 4 * g, 4);
  const __m512 scale = _mm512_set1_ps(_cvtsh_ss(params[0]));
  const __m512 min = _mm512_set1_ps(_cvtsh_ss(params[1]));
  const __m512i wide = _mm512_cvtepu8_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 4 * groups + 16 * g)));
  const __m512i low_nibbles = _mm512_and_si512(wide, _mm512_set1_epi32(15));
  *lo = _mm512_fmadd_ps(_mm512_cvtepi32_ps(low_nibbles), scale, min);
  *hi = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(wide, 4)), scale, min);
}

// Lanes of the two halves of group g that hold elements below n.
inline void GroupMasks(int32_t n, int32_t g, __mmask16* lo, __mmask16* hi) {
  const int32_t m = std::min(kKvInt4GroupSize, n - g * kKvInt4GroupSize);
  *lo = Avx512TailMask(std::min(m, 16));
  *hi = Avx512TailMask(std::max(m - 16, 0));
}

float DotInt4(const float* q, const uint8_t* row, int32_t n) {
  const int32_t groups = NumGroups(n);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  for (int32_t g = 0; g < groups; ++g) {
    __m512 lo, hi;
    __mmask16 mask_lo, mask_hi;
    LoadInt4Group(row, groups, g, &lo, &hi);
    GroupMasks(n, g, &mask_lo, &mask_hi);
    const float* qg = q + g * kKvInt4GroupSize;
    acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask_lo, qg), lo, acc0);
    acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask_hi, qg + 16), hi, acc1);
  }
  return Avx512ReduceAdd(_mm512_add_ps(acc0, acc1));
}

void AxpyInt4(float a, const uint8_t* row, float* y, int32_t n) {
  const int32_t groups = NumGroups(n);
  const __m512 va = _mm512_set1_ps(a);
  for (int32_t g = 0; g < groups; ++g) {
    __m512 lo, hi;
    __mmask16 mask_lo, mask_hi;
    LoadInt4Group(row, groups, g, &lo, &hi);
    GroupMasks(n, g, &mask_lo, &mask_hi);
    float* yg = y + g * kKvInt4GroupSize;
    _mm512_mask_storeu_ps(yg, mask_lo, _mm512_fmadd_ps(va, lo, _mm512_maskz_loadu_ps(mask_lo, yg)));
    _mm512_mask_storeu_ps(yg + 16, mask_hi,
                          _mm512_fmadd_ps(va, hi, _mm512_maskz_loadu_ps(mask_hi, yg + 16)));
  }
}

// axpy_rows for int4: AxpyInt4 row after row with each group's y held in registers
// across the rows (as AxpyRowsElementwise): the same FMAs per lane in the same order.
void AxpyRowsInt4(const float* a, const uint8_t* rows, int64_t row_stride, int32_t num_rows,
                  float* y, int32_t n) {
  const int32_t groups = NumGroups(n);
  for (int32_t g = 0; g < groups; ++g) {
    __mmask16 mask_lo, mask_hi;
    GroupMasks(n, g, &mask_lo, &mask_hi);
    float* yg = y + g * kKvInt4GroupSize;
    __m512 acc_lo = _mm512_maskz_loadu_ps(mask_lo, yg);
    __m512 acc_hi = _mm512_maskz_loadu_ps(mask_hi, yg + 16);
    for (int32_t t = 0; t < num_rows; ++t) {
      __m512 lo, hi;
      LoadInt4Group(rows + t * row_stride, groups, g, &lo, &hi);
      const __m512 va = _mm512_set1_ps(a[t]);
      acc_lo = _mm512_fmadd_ps(va, lo, acc_lo);
      acc_hi = _mm512_fmadd_ps(va, hi, acc_hi);
    }
    _mm512_mask_storeu_ps(yg, mask_lo, acc_lo);
    _mm512_mask_storeu_ps(yg + 16, mask_hi, acc_hi);
  }
}

// f32 -> bf16 bits (round to nearest even, NaN kept quiet), as FloatToBf16.
inline __m256i Bf16Bits(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
  rounded = _mm512_mask_mov_epi32(rounded, nan, quiet);
  return _mm512_cvtepi32_epi16(rounded);
}

inline __m256i F16Bits(__m512 v) {
  v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-kF16Max)), _mm512_set1_ps(kF16Max));
  return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

template <bool kBf16>
void Quantize16Bit(const float* x, int32_t n, uint8_t* row) {
  std::memset(row, 0, KvRowBytes(KvDType::kF16, n));
  for (int32_t i = 0; i < n; i += 16) {
    const __mmask16 mask = Avx512TailMask(std::min(n - i, 16));
    const __m512 v = _mm512_maskz_loadu_ps(mask, x + i);
    _mm256_mask_storeu_epi16(row + 2 * i, mask, kBf16 ? Bf16Bits(v) : F16Bits(v));
  }
}

// QuantizeActivationRow: q = round_half_even(x * (127 / amax)), scale = amax / 127.
void QuantizeInt8(const float* x, int32_t n, uint8_t* row) {
  std::memset(row, 0, KvRowBytes(KvDType::kInt8, n));
  __m512 amax = _mm512_setzero_ps();
  for (int32_t i = 0; i < n; i += 16)
    amax = _mm512_max_ps(
        amax, _mm512_abs_ps(_mm512_maskz_loadu_ps(Avx512TailMask(std::min(n - i, 16)), x + i)));
  const float max = Avx512ReduceMax(amax);
  if (max == 0.0f) return;  // scale 0, codes 0
  const __m512 inverse = _mm512_set1_ps(127.0f / max);
  for (int32_t i = 0; i < n; i += 16) {
    const __mmask16 mask = Avx512TailMask(std::min(n - i, 16));
    const __m512i q =
        _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), inverse));
    _mm512_mask_cvtsepi32_storeu_epi8(row + 4 + i, mask, q);
  }
  const float scale = max / 127.0f;
  std::memcpy(row, &scale, 4);
}

inline float ReduceMin(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float m = lanes[0];
  for (int32_t i = 1; i < 16; ++i) m = std::min(m, lanes[i]);  // as the scalar loop: +0 stays
  return m;
}

// The scalar int4 group quantizer's steps, 32 values in two vectors.
void QuantizeInt4Group(const float* x, int32_t m, uint8_t* params, uint8_t* codes) {
  const __mmask16 mask_lo = Avx512TailMask(std::min(m, 16)),
                  mask_hi = Avx512TailMask(std::max(m - 16, 0));
  const __m512 fill = _mm512_set1_ps(x[0]);  // lanes past m: neutral for min and max
  const __m512 lo = _mm512_mask_loadu_ps(fill, mask_lo, x);
  const __m512 hi = _mm512_mask_loadu_ps(fill, mask_hi, x + 16);
  const float low = std::clamp(ReduceMin(_mm512_min_ps(lo, hi)), -kF16Max, kF16Max);
  const float high = std::clamp(Avx512ReduceMax(_mm512_max_ps(lo, hi)), -kF16Max, kF16Max);
  const uint16_t min_f16 = FloatToF16Down(low);
  const float min = F16ToFloat(min_f16);
  const uint16_t scale_f16 = FloatToF16Up((high - min) / 15.0f);
  const float scale = F16ToFloat(scale_f16);
  const __m512 inverse = _mm512_set1_ps(scale > 0.0f ? 1.0f / scale : 0.0f);
  const __m512 vmin = _mm512_set1_ps(min), zero = _mm512_setzero_ps(),
               fifteen = _mm512_set1_ps(15.0f);
  auto codes_of = [&](__m512 v, __mmask16 mask) {
    v = _mm512_mul_ps(_mm512_sub_ps(v, vmin), inverse);
    v = _mm512_min_ps(_mm512_max_ps(v, zero), fifteen);
    return _mm512_maskz_mov_epi32(mask, _mm512_cvtps_epi32(v));
  };
  const __m512i packed =
      _mm512_or_si512(codes_of(lo, mask_lo), _mm512_slli_epi32(codes_of(hi, mask_hi), 4));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(codes), _mm512_cvtepi32_epi8(packed));
  const uint16_t stored[2] = {scale_f16, min_f16};
  std::memcpy(params, stored, 4);
}

void QuantizeInt4(const float* x, int32_t n, uint8_t* row) {
  const int32_t groups = NumGroups(n);
  for (int32_t g = 0; g < groups; ++g) {
    const int32_t begin = g * kKvInt4GroupSize;
    QuantizeInt4Group(x + begin, std::min(kKvInt4GroupSize, n - begin), row + 4 * g,
                      row + 4 * groups + 16 * g);
  }
}

void QuantizeF32(const float* x, int32_t n, uint8_t* row) { std::memcpy(row, x, 4 * size_t(n)); }

}  // namespace
}  // namespace surge
#pragma GCC pop_options

namespace surge {
namespace {

// f32 rows take the AVX-512 VecOps themselves: the f32 cache computes what it always did.
float DotF32(const float* q, const uint8_t* row, int32_t n) {
  return Avx512VecOps().dot(q, reinterpret_cast<const float*>(row), n);
}
void AxpyF32(float a, const uint8_t* row, float* y, int32_t n) {
  Avx512VecOps().axpy(a, reinterpret_cast<const float*>(row), y, n);
}

}  // namespace

const KvRowOps& Avx512KvRowOps(KvDType dtype) {
  static const KvRowOpsTable kTable{{
      {QuantizeF32, DotF32, AxpyF32, DotRows<DotElementwise<F32Load>>,
       AxpyRowsElementwise<F32Load>},  // f32
      {Quantize16Bit<true>, DotElementwise<Bf16Load>, AxpyElementwise<Bf16Load>,
       DotRows<DotElementwise<Bf16Load>>, AxpyRowsElementwise<Bf16Load>},  // bf16
      {Quantize16Bit<false>, DotElementwise<F16Load>, AxpyElementwise<F16Load>,
       DotRows<DotElementwise<F16Load>>, AxpyRowsElementwise<F16Load>},  // f16
      {QuantizeInt8, DotElementwise<Int8Load>, AxpyElementwise<Int8Load>,
       DotRows<DotElementwise<Int8Load>>, AxpyRowsElementwise<Int8Load>},  // int8
      {QuantizeInt4, DotInt4, AxpyInt4, DotRows<DotInt4>, AxpyRowsInt4},  // int4
  }};
  return kTable[dtype];
}

}  // namespace surge
