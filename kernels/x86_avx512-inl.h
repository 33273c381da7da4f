// AVX-512 helpers shared by the *_avx512.cc kernels. Include only after <immintrin.h>
// and inside `#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,fma")`, so every
// helper is compiled for AVX-512 and never leaks into baseline code (hence no include
// guard and an anonymous namespace).

namespace surge {
namespace {

constexpr int64_t kAvx512Lanes = 16;

// acc += the four u8 x s8 products of each lane (vpdpbusd; callers' target needs
// avx512vnni) and acc += the two bf16 x bf16 products of each lane (vdpbf16ps;
// avx512bf16). Inline asm, because GCC 12 keeps the intrinsics' tied accumulator in a
// stack slot as well, storing and copying every one of them each iteration (half a
// kernel's instructions); the asm operand "+v" keeps it in its register.
inline void DotU8S8(__m512i& acc, __m512i u8, __m512i s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(s8));
}
inline void DotBf16(__m512& acc, __m512i a, __m512i b) {
  asm("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
}

// The 4 bytes at p in every 32-bit lane.
inline __m512i Broadcast4(const uint8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Lanes [0, n) set, for 0 <= n <= 16.
inline __mmask16 Avx512TailMask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

inline __m512 Avx512LoadTail(const float* p, int64_t n) {
  return _mm512_maskz_loadu_ps(Avx512TailMask(n), p);
}

inline void Avx512StoreTail(float* p, int64_t n, __m512 v) {
  _mm512_mask_storeu_ps(p, Avx512TailMask(n), v);
}

// A fixed reduction tree, so the same inputs always give the same bits. (Written out
// because GCC 12's _mm512_reduce_add_ps trips -Wuninitialized.)
inline float Avx512ReduceAdd(__m512 v) {
  __m512 t = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  t = _mm512_add_ps(t, _mm512_shuffle_f32x4(t, t, _MM_SHUFFLE(2, 3, 0, 1)));
  __m128 sum = _mm512_castps512_ps128(t);
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  return _mm_cvtss_f32(sum);
}

inline float Avx512ReduceMax(__m512 v) {
  __m512 t = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  t = _mm512_max_ps(t, _mm512_shuffle_f32x4(t, t, _MM_SHUFFLE(2, 3, 0, 1)));
  __m128 m = _mm512_castps512_ps128(t);
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// exp(x) within ~2 ulp: Cody-Waite reduction x = n ln2 + r, a degree-6 polynomial for
// exp(r) (the Cephes expf coefficients), and scalef for 2^n. x is clamped to [-87, 88]
// like the AVX2 version, so both paths agree on the range.
inline __m512 Avx512Exp(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

// max of x[0, n): whole vectors, then one masked vector (VecOps::max on AVX-512; the
// attention kernels fold scores with it too, so both give the same bits).
inline float Avx512Max(const float* x, int64_t n) {
  __m512 best = _mm512_set1_ps(-__builtin_inff());
  int64_t i = 0;
  for (; i + kAvx512Lanes <= n; i += kAvx512Lanes)
    best = _mm512_max_ps(best, _mm512_loadu_ps(x + i));
  if (i < n)
    best = _mm512_mask_max_ps(best, Avx512TailMask(n - i), best, Avx512LoadTail(x + i, n - i));
  return Avx512ReduceMax(best);
}

// y = exp(x - shift) over [0, n), returning their sum in a fixed order (VecOps::exp_shifted).
inline float Avx512ExpShifted(const float* x, float shift, float* y, int64_t n) {
  __m512 vshift = _mm512_set1_ps(shift);
  __m512 sum = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + kAvx512Lanes <= n; i += kAvx512Lanes) {
    __m512 e = Avx512Exp(_mm512_sub_ps(_mm512_loadu_ps(x + i), vshift));
    _mm512_storeu_ps(y + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (i < n) {
    __mmask16 mask = Avx512TailMask(n - i);
    __m512 e = Avx512Exp(_mm512_sub_ps(Avx512LoadTail(x + i, n - i), vshift));
    _mm512_mask_storeu_ps(y + i, mask, e);
    sum = _mm512_mask_add_ps(sum, mask, sum, e);
  }
  return Avx512ReduceAdd(sum);
}

// In place: r[c] becomes column c of the 16 x 16 block whose row j was r[j] (the
// attention tile kernels' key transposes).
inline void Transpose16(__m512 r[16]) {
  __m512 t[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 4) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    t[i + 2] = _mm512_unpacklo_ps(r[i + 2], r[i + 3]);
    t[i + 3] = _mm512_unpackhi_ps(r[i + 2], r[i + 3]);
  }
  // u[i + j], 128-bit lane k: rows i..i+3 of column 4k + j.
  __m512 u[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 4) {
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
#pragma GCC unroll 16
  for (int j = 0; j < 4; ++j) {
    const __m512 s0 = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 s1 = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(3, 1, 3, 1));
    const __m512 s2 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 s3 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], _MM_SHUFFLE(3, 1, 3, 1));
    r[j] = _mm512_shuffle_f32x4(s0, s2, _MM_SHUFFLE(2, 0, 2, 0));
    r[8 + j] = _mm512_shuffle_f32x4(s0, s2, _MM_SHUFFLE(3, 1, 3, 1));
    r[4 + j] = _mm512_shuffle_f32x4(s1, s3, _MM_SHUFFLE(2, 0, 2, 0));
    r[12 + j] = _mm512_shuffle_f32x4(s1, s3, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

}  // namespace
}  // namespace surge
