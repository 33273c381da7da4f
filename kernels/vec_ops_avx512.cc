// The AVX-512 table. Each loop does whole vectors, then one masked vector for the tail,
// so a row's result depends only on its length, never on where it sits in a batch.
// GCC 12's AVX-512 headers build "undefined" registers from themselves and then trip
// -Wuninitialized (GCC bug 105593); silence it for the header's lines only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>

#include "kernels/vec_ops.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,fma")
#include "kernels/x86_avx512-inl.h"

namespace surge {
namespace {

float Dot(const float* a, const float* b, int64_t n) {
  __m512 acc0 = _mm512_setzero_ps();
  __m512 acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 2 * kAvx512Lanes <= n; i += 2 * kAvx512Lanes) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
  }
  for (; i + kAvx512Lanes <= n; i += kAvx512Lanes) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
  }
  if (i < n)
    acc1 = _mm512_fmadd_ps(Avx512LoadTail(a + i, n - i), Avx512LoadTail(b + i, n - i), acc1);
  return Avx512ReduceAdd(_mm512_add_ps(acc0, acc1));
}

float SumSquares(const float* x, int64_t n) { return Dot(x, x, n); }

float Max(const float* x, int64_t n) { return Avx512Max(x, n); }

void Axpy(float a, const float* x, float* y, int64_t n) {
  __m512 va = _mm512_set1_ps(a);
  int64_t i = 0;
  for (; i + kAvx512Lanes <= n; i += kAvx512Lanes) {
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(va, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
  }
  if (i < n) {
    __m512 r = _mm512_fmadd_ps(va, Avx512LoadTail(x + i, n - i), Avx512LoadTail(y + i, n - i));
    Avx512StoreTail(y + i, n - i, r);
  }
}

void Scale(float a, float* y, int64_t n) {
  __m512 va = _mm512_set1_ps(a);
  int64_t i = 0;
  for (; i + kAvx512Lanes <= n; i += kAvx512Lanes) {
    _mm512_storeu_ps(y + i, _mm512_mul_ps(va, _mm512_loadu_ps(y + i)));
  }
  if (i < n) Avx512StoreTail(y + i, n - i, _mm512_mul_ps(va, Avx512LoadTail(y + i, n - i)));
}

void Add(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kAvx512Lanes <= n; i += kAvx512Lanes) {
    _mm512_storeu_ps(y + i, _mm512_add_ps(_mm512_loadu_ps(y + i), _mm512_loadu_ps(x + i)));
  }
  if (i < n) {
    Avx512StoreTail(y + i, n - i,
                    _mm512_add_ps(Avx512LoadTail(y + i, n - i), Avx512LoadTail(x + i, n - i)));
  }
}

void MulScaleWeight(const float* x, float s, const float* w, float* y, int64_t n) {
  __m512 vs = _mm512_set1_ps(s);
  int64_t i = 0;
  for (; i + kAvx512Lanes <= n; i += kAvx512Lanes) {
    __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), vs), _mm512_loadu_ps(w + i));
    _mm512_storeu_ps(y + i, v);
  }
  if (i < n) {
    __m512 v = _mm512_mul_ps(_mm512_mul_ps(Avx512LoadTail(x + i, n - i), vs),
                             Avx512LoadTail(w + i, n - i));
    Avx512StoreTail(y + i, n - i, v);
  }
}

float ExpShifted(const float* x, float shift, float* y, int64_t n) {
  return Avx512ExpShifted(x, shift, y, n);
}

inline __m512 SiluMulVector(__m512 gate, __m512 up) {
  __m512 denom =
      _mm512_add_ps(_mm512_set1_ps(1.0f), Avx512Exp(_mm512_sub_ps(_mm512_setzero_ps(), gate)));
  return _mm512_mul_ps(_mm512_div_ps(gate, denom), up);
}

void SiluMul(const float* gate, const float* up, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kAvx512Lanes <= n; i += kAvx512Lanes) {
    _mm512_storeu_ps(y + i, SiluMulVector(_mm512_loadu_ps(gate + i), _mm512_loadu_ps(up + i)));
  }
  if (i < n) {
    Avx512StoreTail(y + i, n - i,
                    SiluMulVector(Avx512LoadTail(gate + i, n - i), Avx512LoadTail(up + i, n - i)));
  }
}

}  // namespace
}  // namespace surge
#pragma GCC pop_options

namespace surge {

const VecOps& Avx512VecOps() {
  static const VecOps ops{Dot, SumSquares,     Max,        Axpy,   Scale,
                          Add, MulScaleWeight, ExpShifted, SiluMul};
  return ops;
}

}  // namespace surge
