#include "kernels/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "base/check.h"

namespace surge {
namespace {

// transformers' _compute_llama3_parameters, per frequency, on the f32 default one.
float Llama3InvFrequency(float inv_freq, const RopeParams& p) {
  const double low_freq_wavelen = p.original_max_position_embeddings / p.low_freq_factor;
  const double high_freq_wavelen = p.original_max_position_embeddings / p.high_freq_factor;
  const double wavelen = 2.0 * std::numbers::pi / inv_freq;
  if (wavelen < high_freq_wavelen) return inv_freq;  // high frequency: unchanged
  if (wavelen > low_freq_wavelen) return static_cast<float>(inv_freq / p.factor);
  const double smooth = (p.original_max_position_embeddings / wavelen - p.low_freq_factor) /
                        (p.high_freq_factor - p.low_freq_factor);
  return static_cast<float>((1.0 - smooth) * inv_freq / p.factor + smooth * inv_freq);
}

// The number of rotations' dimension: where r full turns fit in the original context.
double YarnCorrectionDim(double rotations, const RopeParams& p) {
  return static_cast<double>(p.head_dim) *
         std::log(p.original_max_position_embeddings / (rotations * 2.0 * std::numbers::pi)) /
         (2.0 * std::log(p.theta));
}

// Frequency i of YaRN, with the reference's f32 tensor arithmetic step by step.
float YarnInvFrequency(float inv_freq, int64_t i, const RopeParams& p, const YarnRange& r) {
  float ramp = (static_cast<float>(i) - static_cast<float>(r.low)) /
               static_cast<float>(r.high - r.low);
  ramp = std::clamp(ramp, 0.0f, 1.0f);
  const float extrapolate = 1.0f - ramp;
  const float interpolated = inv_freq / static_cast<float>(p.factor);
  return interpolated * (1.0f - extrapolate) + inv_freq * extrapolate;
}

}  // namespace

YarnRange YarnCorrectionRange(const RopeParams& p) {
  YarnRange r;
  r.low = std::max(std::floor(YarnCorrectionDim(p.beta_fast, p)), 0.0);
  r.high = std::min(std::ceil(YarnCorrectionDim(p.beta_slow, p)),
                    static_cast<double>(p.head_dim - 1));
  if (r.low == r.high) r.high += 0.001;
  return r;
}

double YarnMscale(double scale, double mscale) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

double RopeCosSinScale(const RopeParams& p) {
  if (p.kind != RopeKind::kYarn) return 1.0;
  return YarnMscale(p.factor, p.mscale) / YarnMscale(p.factor, p.mscale_all_dim);
}

double RopeSoftmaxScaleFactor(const RopeParams& p) {
  if (p.kind != RopeKind::kYarn || p.mscale_all_dim == 0.0) return 1.0;
  const double m = YarnMscale(p.factor, p.mscale_all_dim);
  return m * m;
}

std::vector<float> RopeInvFrequencies(const RopeParams& params) {
  CHECK(params.head_dim > 0 && params.head_dim % 2 == 0) << "head_dim " << params.head_dim;
  const int64_t half = params.head_dim / 2;
  std::vector<float> inv_freq(half);
  const YarnRange yarn = params.kind == RopeKind::kYarn ? YarnCorrectionRange(params) : YarnRange{};
  for (int64_t i = 0; i < half; ++i) {
    // HF: arange(0, dim, 2).float() / dim, then base ** that, then 1.0 / -- all in f32.
    float exponent = static_cast<float>(2 * i) / static_cast<float>(params.head_dim);
    float power = static_cast<float>(std::pow(params.theta, static_cast<double>(exponent)));
    float f = 1.0f / power;
    if (params.kind == RopeKind::kLinear) f = static_cast<float>(f / params.factor);
    if (params.kind == RopeKind::kLlama3) f = Llama3InvFrequency(f, params);
    if (params.kind == RopeKind::kYarn) f = YarnInvFrequency(f, i, params, yarn);
    inv_freq[i] = f;
  }
  return inv_freq;
}

void RopeCosSin(int64_t position, const float* inv_freq, int64_t half, float* cos, float* sin) {
  const float pos = static_cast<float>(position);
  for (int64_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(pos * inv_freq[i]);
    cos[i] = static_cast<float>(std::cos(angle));
    sin[i] = static_cast<float>(std::sin(angle));
  }
}

void ApplyRope(float* x, int64_t num_heads, int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < num_heads; ++h) {
    float* head = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float a = head[i];
      const float b = head[i + half];
      head[i] = a * cos[i] - b * sin[i];
      head[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

}  // namespace surge
