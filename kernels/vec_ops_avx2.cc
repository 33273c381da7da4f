// The AVX2 + FMA table. Each loop does whole vectors, then one masked vector for the
// tail, so a row's result depends only on its length, never on where it sits in a batch.
#include <immintrin.h>

#include <cstdint>

#include "kernels/vec_ops.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "kernels/x86_avx2-inl.h"

namespace surge {
namespace {

float Dot(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 2 * kAvx2Lanes <= n; i += 2 * kAvx2Lanes) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + kAvx2Lanes <= n; i += kAvx2Lanes) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  if (i < n) acc1 = _mm256_fmadd_ps(Avx2LoadTail(a + i, n - i), Avx2LoadTail(b + i, n - i), acc1);
  return Avx2ReduceAdd(_mm256_add_ps(acc0, acc1));
}

float SumSquares(const float* x, int64_t n) { return Dot(x, x, n); }

float Max(const float* x, int64_t n) {
  __m256 best = _mm256_set1_ps(-__builtin_inff());
  int64_t i = 0;
  for (; i + kAvx2Lanes <= n; i += kAvx2Lanes) best = _mm256_max_ps(best, _mm256_loadu_ps(x + i));
  float result = Avx2ReduceMax(best);
  for (; i < n; ++i) result = x[i] > result ? x[i] : result;
  return result;
}

void Axpy(float a, const float* x, float* y, int64_t n) {
  __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + kAvx2Lanes <= n; i += kAvx2Lanes) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  if (i < n) {
    __m256 r = _mm256_fmadd_ps(va, Avx2LoadTail(x + i, n - i), Avx2LoadTail(y + i, n - i));
    Avx2StoreTail(y + i, n - i, r);
  }
}

void Scale(float a, float* y, int64_t n) {
  __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + kAvx2Lanes <= n; i += kAvx2Lanes) {
    _mm256_storeu_ps(y + i, _mm256_mul_ps(va, _mm256_loadu_ps(y + i)));
  }
  if (i < n) Avx2StoreTail(y + i, n - i, _mm256_mul_ps(va, Avx2LoadTail(y + i, n - i)));
}

void Add(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kAvx2Lanes <= n; i += kAvx2Lanes) {
    _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(x + i)));
  }
  if (i < n) {
    Avx2StoreTail(y + i, n - i,
                  _mm256_add_ps(Avx2LoadTail(y + i, n - i), Avx2LoadTail(x + i, n - i)));
  }
}

void MulScaleWeight(const float* x, float s, const float* w, float* y, int64_t n) {
  __m256 vs = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + kAvx2Lanes <= n; i += kAvx2Lanes) {
    __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i));
    _mm256_storeu_ps(y + i, v);
  }
  if (i < n) {
    __m256 v =
        _mm256_mul_ps(_mm256_mul_ps(Avx2LoadTail(x + i, n - i), vs), Avx2LoadTail(w + i, n - i));
    Avx2StoreTail(y + i, n - i, v);
  }
}

float ExpShifted(const float* x, float shift, float* y, int64_t n) {
  __m256 vshift = _mm256_set1_ps(shift);
  __m256 sum = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + kAvx2Lanes <= n; i += kAvx2Lanes) {
    __m256 e = Avx2Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), vshift));
    _mm256_storeu_ps(y + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (i < n) {
    __m256 mask = _mm256_castsi256_ps(Avx2TailMask(n - i));
    __m256 e = Avx2Exp(_mm256_sub_ps(Avx2LoadTail(x + i, n - i), vshift));
    Avx2StoreTail(y + i, n - i, e);
    sum = _mm256_add_ps(sum, _mm256_and_ps(e, mask));
  }
  return Avx2ReduceAdd(sum);
}

inline __m256 SiluMulVector(__m256 gate, __m256 up) {
  __m256 denom =
      _mm256_add_ps(_mm256_set1_ps(1.0f), Avx2Exp(_mm256_sub_ps(_mm256_setzero_ps(), gate)));
  return _mm256_mul_ps(_mm256_div_ps(gate, denom), up);
}

void SiluMul(const float* gate, const float* up, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kAvx2Lanes <= n; i += kAvx2Lanes) {
    _mm256_storeu_ps(y + i, SiluMulVector(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  }
  if (i < n) {
    Avx2StoreTail(y + i, n - i,
                  SiluMulVector(Avx2LoadTail(gate + i, n - i), Avx2LoadTail(up + i, n - i)));
  }
}

}  // namespace
}  // namespace surge
#pragma GCC pop_options

namespace surge {

const VecOps& Avx2VecOps() {
  static const VecOps ops{Dot, SumSquares,     Max,        Axpy,   Scale,
                          Add, MulScaleWeight, ExpShifted, SiluMul};
  return ops;
}

}  // namespace surge
