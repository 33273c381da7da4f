// The AVX2 KV row kernels: dot/axpy widen 8 stored values at a time to f32 in registers
// (bf16 shift, F16C vcvtph2ps, int8 sign-extend, int4 nibble split + scale * q + min)
// and FMA them. Row tails shorter than a vector are copied into a zeroed 16-byte buffer
// first (AVX2 has no byte-masked loads, and the pool's last row may end the mapping).
// Quantizing (once per token and layer, a vanishing share of the time) takes the scalar
// definition.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstring>

#include "kernels/kv_codec.h"
#include "kernels/vec_ops.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kernels/kv_rows-inl.h"
#include "kernels/x86_avx2-inl.h"

namespace surge {
namespace {

// Loaders: 8 stored values from element i on as f32, only the first `count` (<= 8) of
// them read (the rest are 0). `factor` is int8's row scale, applied once per call.
template <int kBytesPerValue>
inline __m128i LoadBytes(const uint8_t* p, int32_t count) {
  if (count == 8) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  alignas(16) uint8_t buffer[16] = {};
  std::memcpy(buffer, p, size_t(count) * kBytesPerValue);
  return _mm_load_si128(reinterpret_cast<const __m128i*>(buffer));
}

struct Bf16Load {
  const uint8_t* codes;
  float factor = 1.0f;
  explicit Bf16Load(const uint8_t* row) : codes(row) {}
  __m256 operator()(int32_t i, int32_t count) const {
    const __m256i wide = _mm256_cvtepu16_epi32(LoadBytes<2>(codes + 2 * i, count));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
};

struct F16Load {
  const uint8_t* codes;
  float factor = 1.0f;
  explicit F16Load(const uint8_t* row) : codes(row) {}
  __m256 operator()(int32_t i, int32_t count) const {
    return _mm256_cvtph_ps(LoadBytes<2>(codes + 2 * i, count));
  }
};

struct Int8Load {
  const uint8_t* codes;
  float factor;
  explicit Int8Load(const uint8_t* row) : codes(row + 4) { std::memcpy(&factor, row, 4); }
  __m256 operator()(int32_t i, int32_t count) const {
    __m128i bytes;
    if (count == 8) {
      bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + i));
    } else {
      bytes = LoadBytes<1>(codes + i, count);
    }
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
  }
};

template <typename Load>
float DotElementwise(const float* q, const uint8_t* row, int32_t n) {
  const Load load(row);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load(i, 8), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), load(i + 8, 8), acc1);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load(i, 8), acc0);
  if (i < n) acc1 = _mm256_fmadd_ps(Avx2LoadTail(q + i, n - i), load(i, n - i), acc1);
  return load.factor * Avx2ReduceAdd(_mm256_add_ps(acc0, acc1));
}

template <typename Load>
void AxpyElementwise(float a, const uint8_t* row, float* y, int32_t n) {
  const Load load(row);
  const __m256 va = _mm256_set1_ps(a * load.factor);
  int32_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, load(i, 8), _mm256_loadu_ps(y + i)));
  if (i < n)
    Avx2StoreTail(y + i, n - i, _mm256_fmadd_ps(va, load(i, n - i), Avx2LoadTail(y + i, n - i)));
}

int32_t NumGroups(int32_t n) { return (n + kKvInt4GroupSize - 1) / kKvInt4GroupSize; }

// Group g of an int4 row as four vectors: elements 32g + [0, 8), [8, 16), [16, 24),
// [24, 32).
inline void LoadInt4Group(const uint8_t* row, int32_t groups, int32_t g, __m256 x[4]) {
  uint16_t params[2];
  std::memcpy(params, row + 4 * g, 4);
  const __m256 scale = _mm256_set1_ps(_cvtsh_ss(params[0]));
  const __m256 min = _mm256_set1_ps(_cvtsh_ss(params[1]));
  const uint8_t* codes = row + 4 * groups + 16 * g;
  const __m256i nibble = _mm256_set1_epi32(15);
  for (int32_t half = 0; half < 2; ++half) {
    const __m256i wide =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + 8 * half)));
    x[half] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(wide, nibble)), scale, min);
    x[half + 2] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(wide, 4)), scale, min);
  }
}

float DotInt4(const float* q, const uint8_t* row, int32_t n) {
  const int32_t groups = NumGroups(n);
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int32_t g = 0; g < groups; ++g) {
    __m256 x[4];
    LoadInt4Group(row, groups, g, x);
    const int32_t base = g * kKvInt4GroupSize;
    for (int32_t part = 0; part < 4; ++part) {
      const int32_t count = std::clamp(n - base - 8 * part, 0, 8);
      const float* qp = q + base + 8 * part;
      const __m256 qv = count == 8 ? _mm256_loadu_ps(qp) : Avx2LoadTail(qp, count);
      acc[part & 1] = _mm256_fmadd_ps(qv, x[part], acc[part & 1]);
    }
  }
  return Avx2ReduceAdd(_mm256_add_ps(acc[0], acc[1]));
}

void AxpyInt4(float a, const uint8_t* row, float* y, int32_t n) {
  const int32_t groups = NumGroups(n);
  const __m256 va = _mm256_set1_ps(a);
  for (int32_t g = 0; g < groups; ++g) {
    __m256 x[4];
    LoadInt4Group(row, groups, g, x);
    const int32_t base = g * kKvInt4GroupSize;
    for (int32_t part = 0; part < 4; ++part) {
      const int32_t count = std::clamp(n - base - 8 * part, 0, 8);
      float* yp = y + base + 8 * part;
      if (count == 8) {
        _mm256_storeu_ps(yp, _mm256_fmadd_ps(va, x[part], _mm256_loadu_ps(yp)));
      } else if (count > 0) {
        Avx2StoreTail(yp, count, _mm256_fmadd_ps(va, x[part], Avx2LoadTail(yp, count)));
      }
    }
  }
}

}  // namespace
}  // namespace surge
#pragma GCC pop_options

namespace surge {
namespace {

float DotF32(const float* q, const uint8_t* row, int32_t n) {
  return Avx2VecOps().dot(q, reinterpret_cast<const float*>(row), n);
}
void AxpyF32(float a, const uint8_t* row, float* y, int32_t n) {
  Avx2VecOps().axpy(a, reinterpret_cast<const float*>(row), y, n);
}

}  // namespace

const KvRowOps& Avx2KvRowOps(KvDType dtype) {
  static const KvRowOpsTable kTable{{
      RowByRowOps<DotF32, AxpyF32>(ScalarKvRowOps(KvDType::kF32).quantize),  // f32
      RowByRowOps<DotElementwise<Bf16Load>, AxpyElementwise<Bf16Load>>(
          ScalarKvRowOps(KvDType::kBF16).quantize),  // bf16
      RowByRowOps<DotElementwise<F16Load>, AxpyElementwise<F16Load>>(
          ScalarKvRowOps(KvDType::kF16).quantize),  // f16
      RowByRowOps<DotElementwise<Int8Load>, AxpyElementwise<Int8Load>>(
          ScalarKvRowOps(KvDType::kInt8).quantize),  // int8
      RowByRowOps<DotInt4, AxpyInt4>(ScalarKvRowOps(KvDType::kInt4).quantize),  // int4
  }};
  return kTable[dtype];
}

}  // namespace surge
