// The AVX-512 loaders of the elementwise KV row formats, shared by the row kernels
// (kv_codec_avx512.cc) and the prefill tile kernel (attention_avx512.cc) so that both
// multiply by the very same f32 values. Include only after <immintrin.h> and
// x86_avx512-inl.h and <type_traits>, inside `#pragma GCC target("avx512f,avx512bw,avx512vl,
// avx512dq,fma")` (hence no include guard and an anonymous namespace, as x86_avx512-inl.h).

namespace surge {
namespace {

// Loaders: 16 stored values from element i on as f32, widened exactly (bf16: shift;
// f16: vcvtph2ps; int8: sign-extend + convert); with a mask, lanes off in it are 0 and
// their bytes are not read (the same values in the lanes on: the two overloads differ in
// the load instruction only). `factor` multiplies every value (int8's row scale; 1
// otherwise), applied once per dot product / axpy instead of once per element.
// bf16 and f16 rows: 16 codes of 2 bytes from element i on, widened by kWiden.
template <__m512 (*kWiden)(__m256i)>
struct HalfLoad {
  const uint8_t* codes;
  float factor = 1.0f;
  explicit HalfLoad(const uint8_t* row) : codes(row) {}
  __m512 operator()(int32_t i) const { return kWiden(_mm256_loadu_si256(At(i))); }
  __m512 operator()(int32_t i, __mmask16 mask) const {
    return kWiden(_mm256_maskz_loadu_epi16(mask, At(i)));
  }
  const __m256i* At(int32_t i) const { return reinterpret_cast<const __m256i*>(codes + 2 * i); }
};

inline __m512 WidenBf16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
inline __m512 WidenF16(__m256i h) { return _mm512_cvtph_ps(h); }

using Bf16Load = HalfLoad<WidenBf16>;
using F16Load = HalfLoad<WidenF16>;

// Row: the f32 scale (4 bytes), then one int8 code per value.
struct Int8Load {
  const uint8_t* codes;
  float factor;
  explicit Int8Load(const uint8_t* row) : codes(row + 4) { __builtin_memcpy(&factor, row, 4); }
  __m512 operator()(int32_t i) const {
    return Widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i)));
  }
  __m512 operator()(int32_t i, __mmask16 mask) const {
    return Widen(_mm_maskz_loadu_epi8(mask, codes + i));
  }
  static __m512 Widen(__m128i q) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)); }
};

// Whether Load's rows carry a factor other than 1 (int8's row scale): the attention tile
// kernels apply it once per score and once per value weight, as the row ops do, and skip
// it for the other formats (multiplying by 1 changes no bit).
template <typename Load>
constexpr bool kHasRowFactor = std::is_same_v<Load, Int8Load>;

// f32 rows for the batched ops: DotElementwise / AxpyElementwise with it are Avx512VecOps'
// dot / axpy step for step (same accumulators, the same masked tail, factor 1 exact).
struct F32Load {
  const float* values;
  float factor = 1.0f;
  explicit F32Load(const uint8_t* row) : values(reinterpret_cast<const float*>(row)) {}
  __m512 operator()(int32_t i) const { return _mm512_loadu_ps(values + i); }
  __m512 operator()(int32_t i, __mmask16 mask) const {
    return _mm512_maskz_loadu_ps(mask, values + i);
  }
};

}  // namespace
}  // namespace surge
