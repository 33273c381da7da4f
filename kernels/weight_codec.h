// Codecs between f32 and the narrow formats the kernels read: bf16 and f16 scalars,
// symmetric int8 rows (weights and activations) and asymmetric int4 groups. Plain
// scalar code, used at load time and as the definition every SIMD quantizer matches
// bit for bit. Error bounds are stated here and asserted by weight_codec_test.cc.
#pragma once

#include <cstdint>

namespace surge {

// f32 -> bf16, round to nearest even (what PyTorch's .to(bfloat16) does); NaN stays a
// quiet NaN, overflow rounds to infinity. For finite x that does not overflow:
// |x - Bf16ToFloat(FloatToBf16(x))| <= 2^-8 |x| (half an ulp of an 8-bit significand).
uint16_t FloatToBf16(float x);
inline float Bf16ToFloat(uint16_t bits) {
  return __builtin_bit_cast(float, static_cast<uint32_t>(bits) << 16);
}

// f32 <-> IEEE binary16. FloatToF16 rounds to nearest even (|error| <= 2^-11 |x| in
// the normal range, <= 2^-25 absolute in the subnormal one); the Up/Down variants round
// toward +inf / -inf, so that a quantizer can pick a scale that never shrinks its range.
uint16_t FloatToF16(float x);
uint16_t FloatToF16Up(float x);
uint16_t FloatToF16Down(float x);
float F16ToFloat(uint16_t bits);

// Symmetric per-row int8: scale = max|w| / 127, q = round(w / scale) in [-127, 127].
// Returns the scale (0 for an all-zero row, whose q are all 0).
// Bound: |w - scale * q| <= scale / 2 for every element.
float QuantizeInt8Row(const float* w, int64_t n, int8_t* q);

// Symmetric int8 over one group of n values, the scale stored as f16: scale = max|w| /
// 127 rounded up to f16 (so nothing clamps), q = round(w / scale) in [-127, 127].
// Returns the f16 bits (0 for an all-zero group). On values that are already Q8_0's
// (f16 d times q with max |q| = 127) it gives back that d and those q exactly.
// Bound: |w - scale * q| <= scale / 2 when scale is normal in f16.
uint16_t QuantizeInt8Group(const float* w, int64_t n, int8_t* q);

// The activation quantizer every int8/int4 MatMul path uses, per row of x: with
// amax = max|x|, q = round_half_even(x * (127 / amax)) and scale = amax / 127, both
// quotients rounded to f32 once. The SIMD versions compute exactly these bits, so the
// quantized activations -- and the integer dot products built on them -- are the same on
// every path. Depends on this row only (batch invariance). Returns the scale.
// Bound: |x - scale * q| <= scale * (1/2 + 2^-15) (the extra term: the two f32 roundings
// of 127 / amax and x * that, times |x| <= 127 scale).
float QuantizeActivationRow(const float* x, int64_t n, int8_t* q);

// Asymmetric int4 over one group of n <= 128 values: w ~ scale * q + min, q in [0, 15],
// scale and min stored as f16. Starts from min-max rounding (min rounded down, scale
// up: nothing clamps) and keeps a least-squares refit when it lowers the weighted
// squared error without erring more than one min-max step on any element.
// Bound: |w - (scale * q + min)| <= (max - min) / 15 * (1 + 2^-9) + 2^-10 max(|min|, |max|)
// (one min-max step, plus f16 rounding of the stored min), and the weighted squared
// error is never above min-max rounding's.
struct Int4Group {
  uint16_t scale_f16 = 0;
  uint16_t min_f16 = 0;
  float scale() const { return F16ToFloat(scale_f16); }
  float min() const { return F16ToFloat(min_f16); }
};
Int4Group QuantizeInt4Group(const float* w, int64_t n, uint8_t* q);

// The value the kernels multiply by for q in a group: scale * q + min, in f32 as the
// f32-dequantizing kernels compute it.
inline float DequantizeInt4(Int4Group group, uint8_t q) {
  return group.scale() * static_cast<float>(q) + group.min();
}

}  // namespace surge
