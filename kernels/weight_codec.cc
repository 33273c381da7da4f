#include "kernels/weight_codec.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace surge {
namespace {

constexpr uint16_t kF16PositiveInfinity = 0x7c00;

// The f16 neighbour of `bits` one step away from zero (toward +-inf).
uint16_t F16StepAwayFromZero(uint16_t bits) {
  return (bits & 0x7fff) >= kF16PositiveInfinity ? bits : static_cast<uint16_t>(bits + 1);
}

// The f16 neighbour one step toward zero (a zero steps to the other side's smallest
// subnormal, which callers never ask for).
uint16_t F16StepTowardZero(uint16_t bits) {
  return (bits & 0x7fff) == 0 ? bits : static_cast<uint16_t>(bits - 1);
}

}  // namespace

uint16_t FloatToBf16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  // Adding 0x7fff plus the lowest kept bit rounds half to even; a carry into the
  // exponent is the correct rounding up (to infinity at the top).
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float F16ToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    // Subnormal (or zero): mantissa * 2^-24, exact in f32.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t FloatToF16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const float magnitude = std::fabs(x);
  if (std::isnan(x)) return sign | 0x7e00;
  if (magnitude >= 65520.0f) return sign | kF16PositiveInfinity;  // rounds past 65504
  if (magnitude < 0x1p-14f) {
    // Subnormal range: a multiple of 2^-24; nearbyint rounds half to even.
    return sign | static_cast<uint16_t>(std::nearbyint(magnitude * 0x1p24f));
  }
  // Normal: keep 10 of the 23 mantissa bits, round half to even on the other 13; a
  // carry out of the mantissa bumps the exponent, which is the right result.
  const uint32_t m = bits & 0x7fffffffu;
  const uint32_t rounded = m + 0xfffu + ((m >> 13) & 1u);
  return sign | static_cast<uint16_t>((rounded >> 13) - (112u << 10));
}

uint16_t FloatToF16Up(float x) {
  uint16_t h = FloatToF16(x);
  if (F16ToFloat(h) >= x || std::isnan(x)) return h;
  return x > 0 ? F16StepAwayFromZero(h) : F16StepTowardZero(h);
}

uint16_t FloatToF16Down(float x) {
  uint16_t h = FloatToF16(x);
  if (F16ToFloat(h) <= x || std::isnan(x)) return h;
  return x > 0 ? F16StepTowardZero(h) : F16StepAwayFromZero(h);
}

float QuantizeInt8Row(const float* w, int64_t n, int8_t* q) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(w[i]));
  if (amax == 0.0f) {
    std::fill_n(q, n, int8_t{0});
    return 0.0f;
  }
  const float scale = amax / 127.0f;
  for (int64_t i = 0; i < n; ++i) {
    // Dividing by the stored scale (not multiplying by an inverse) makes q the nearest
    // multiple of exactly the scale the kernels use.
    const float v = std::nearbyint(w[i] / scale);
    q[i] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
  }
  return scale;
}

uint16_t QuantizeInt8Group(const float* w, int64_t n, int8_t* q) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(w[i]));
  const uint16_t bits = FloatToF16Up(amax / 127.0f);
  const float scale = F16ToFloat(bits);
  for (int64_t i = 0; i < n; ++i) {
    const float v = scale == 0.0f ? 0.0f : std::nearbyint(w[i] / scale);
    q[i] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
  }
  return bits;
}

float QuantizeActivationRow(const float* x, int64_t n, int8_t* q) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  if (amax == 0.0f) {
    std::fill_n(q, n, int8_t{0});
    return 0.0f;
  }
  const float inverse = 127.0f / amax;
  // x * inverse <= 127 * (1 + 2^-23), so the rounded value never leaves [-127, 127].
  for (int64_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(std::nearbyint(x[i] * inverse));
  return amax / 127.0f;
}

namespace {

struct Int4Fit {
  double squared_error = 0;
  double max_error = 0;
};

// The level nearest to v in [0, 15] (halves round up; v may be a little out of range).
inline uint8_t NearestLevel(float v) {
  return static_cast<uint8_t>(std::clamp(v, 0.0f, 15.0f) + 0.5f);
}

// q for a stored (scale, min): the nearest level, clamped to [0, 15]; the error sum is
// weighted by `weight`. (Load time: this runs ~22 times per group of the whole model.)
Int4Fit AssignInt4(const float* w, const float* weight, int64_t n, Int4Group group, uint8_t* q) {
  const float scale = group.scale(), min = group.min();
  const float inverse = scale == 0.0f ? 0.0f : 1.0f / scale;
  Int4Fit fit;
  for (int64_t i = 0; i < n; ++i) {
    q[i] = NearestLevel((w[i] - min) * inverse);
    const double error = std::fabs(double{w[i]} - (scale * static_cast<float>(q[i]) + min));
    fit.squared_error += weight[i] * error * error;
    fit.max_error = std::max(fit.max_error, error);
  }
  return fit;
}

// Round-to-nearest over [lo, hi]: min rounded down and scale up (f32, then f16), so
// 15 * scale >= hi - min and nothing clamps.
Int4Group MinMaxInt4(float lo, float hi) {
  Int4Group group;
  group.min_f16 = FloatToF16Down(lo);
  const double step = (static_cast<double>(hi) - group.min()) / 15.0;
  float step_f32 = static_cast<float>(step);
  if (step_f32 < step) step_f32 = std::nextafter(step_f32, INFINITY);
  group.scale_f16 = step == 0.0 ? 0 : FloatToF16Up(step_f32);
  return group;
}

// The (scale, min) minimizing sum weight (w - scale q - min)^2 for fixed q (weighted
// least squares), rounded to f16. Returns false when q is constant or the fit is not a
// positive scale.
bool LeastSquaresInt4(const float* w, const float* weight, int64_t n, const uint8_t* q,
                      Int4Group* group) {
  double s1 = 0, sq = 0, sqq = 0, sw = 0, sqw = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = weight[i];
    s1 += a;
    sq += a * q[i];
    sqq += a * q[i] * q[i];
    sw += a * w[i];
    sqw += a * q[i] * w[i];
  }
  const double det = s1 * sqq - sq * sq;
  if (det <= 0) return false;
  group->scale_f16 = FloatToF16(static_cast<float>((s1 * sqw - sq * sw) / det));
  group->min_f16 = FloatToF16(static_cast<float>((sqq * sw - sq * sqw) / det));
  return group->scale() > 0;
}

}  // namespace

Int4Group QuantizeInt4Group(const float* w, int64_t n, uint8_t* q) {
  float lo = w[0], hi = w[0];
  for (int64_t i = 1; i < n; ++i) lo = std::min(lo, w[i]), hi = std::max(hi, w[i]);
  // Errors on large weights cost more in a dot product: weigh each element by
  // rms + |w| (llama.cpp's weighting for its k-quants without calibration data).
  float weight[128];
  double sum_squares = 0;
  for (int64_t i = 0; i < n; ++i) sum_squares += double{w[i]} * w[i];
  const float rms = static_cast<float>(std::sqrt(sum_squares / n));
  for (int64_t i = 0; i < n; ++i) weight[i] = rms + std::fabs(w[i]);
  Int4Group best = MinMaxInt4(lo, hi);
  Int4Fit best_fit = AssignInt4(w, weight, n, best, q);
  if (best.scale_f16 == 0) return best;
  // Search (after llama.cpp's make_qkx2_quants): level assignments from 21 scales
  // around 15 / (hi - lo), each refitted by weighted least squares. Keep a candidate
  // only if it lowers the weighted squared error and errs by no more than one min-max
  // step anywhere, so outliers stay nearly as exact as min-max keeps them. On
  // stories260K this takes int4-g32 perplexity from +11% to +7% over f32.
  const double max_error_allowed = best.scale();
  uint8_t trial[128];
  for (int step = 0; step <= 20; ++step) {
    const float inverse = (14.0f + 0.1f * step) / (hi - lo);
    for (int64_t i = 0; i < n; ++i) trial[i] = NearestLevel((w[i] - lo) * inverse);
    Int4Group candidate;
    if (!LeastSquaresInt4(w, weight, n, trial, &candidate)) continue;
    const Int4Fit fit = AssignInt4(w, weight, n, candidate, trial);
    if (fit.squared_error < best_fit.squared_error && fit.max_error <= max_error_allowed) {
      best = candidate;
      best_fit = fit;
      std::copy(trial, trial + n, q);
    }
  }
  return best;
}

}  // namespace surge
