// AVX2 + FMA helpers shared by the *_avx2.cc kernels. Include only after <immintrin.h>
// and inside `#pragma GCC target("avx2,fma")`, so every helper is compiled for AVX2 and
// never leaks into baseline code (hence no include guard and an anonymous namespace).

namespace surge {
namespace {

constexpr int64_t kAvx2Lanes = 8;

// Lanes [0, n) all ones, for 0 <= n <= 8.
inline __m256i Avx2TailMask(int64_t n) {
  static const int32_t kBits[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kBits + 8 - n));
}

inline __m256 Avx2LoadTail(const float* p, int64_t n) {
  return _mm256_maskload_ps(p, Avx2TailMask(n));
}

inline void Avx2StoreTail(float* p, int64_t n, __m256 v) {
  _mm256_maskstore_ps(p, Avx2TailMask(n), v);
}

// A fixed reduction tree, so the same inputs always give the same bits.
inline float Avx2ReduceAdd(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  return _mm_cvtss_f32(sum);
}

inline float Avx2ReduceMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// exp(x) within ~2 ulp: Cody-Waite reduction x = n ln2 + r, a degree-6 polynomial for
// exp(r) (the Cephes expf coefficients), and 2^n built in the exponent bits. x is clamped
// to [-87, 88] so 2^n stays a normal float; below -87 the result is ~1e-38, not 0.
inline __m256 Avx2Exp(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

}  // namespace
}  // namespace surge
