// Rotary position embeddings (RoPE) in Hugging Face's rotate_half convention: dimension i
// of a head pairs with i + head_dim/2 and both turn by angle position * inv_freq[i].
#pragma once

#include <cstdint>
#include <vector>

namespace surge {

enum class RopeKind { kDefault, kLinear, kLlama3, kYarn };

struct RopeParams {
  int64_t head_dim = 0;
  double theta = 10000.0;
  RopeKind kind = RopeKind::kDefault;
  double factor = 1.0;                             // kLinear, kLlama3 and kYarn
  double low_freq_factor = 1.0;                    // kLlama3 only
  double high_freq_factor = 4.0;                   // kLlama3 only
  double original_max_position_embeddings = 8192;  // kLlama3 and kYarn
  double beta_fast = 32.0;                         // kYarn only, DeepSeek's defaults
  double beta_slow = 1.0;
  double mscale = 1.0;
  double mscale_all_dim = 0.0;
};

// YaRN's correction range over the head_dim / 2 frequencies: below `low` they are kept
// (extrapolated), above `high` divided by factor (interpolated), linear ramp between.
// DeepSeek's yarn_find_correction_range: low = max(floor(d(beta_fast)), 0), high =
// min(ceil(d(beta_slow)), head_dim - 1), d(r) = head_dim * ln(orig / (r * 2pi)) /
// (2 ln theta); high += 0.001 when they meet (the ramp divides by high - low).
struct YarnRange {
  double low = 0;
  double high = 0;
};
YarnRange YarnCorrectionRange(const RopeParams& params);

// DeepSeek's yarn_get_mscale: 0.1 * mscale * ln(scale) + 1, or 1 when scale <= 1.
double YarnMscale(double scale, double mscale);

// The factor cos and sin are multiplied by: kYarn mscale(factor, mscale) /
// mscale(factor, mscale_all_dim); 1 for the other kinds.
double RopeCosSinScale(const RopeParams& params);

// The factor on the attention softmax scale: kYarn with mscale_all_dim != 0 gives
// mscale(factor, mscale_all_dim)^2 (DeepSeek's published code applies it); else 1.
double RopeSoftmaxScaleFactor(const RopeParams& params);

// inv_freq[head_dim / 2], as HF computes it in f32: 1 / theta^(2i / head_dim); kLinear
// divides it by factor (the same as dividing positions); kLlama3 applies
// transformers' _compute_llama3_parameters (long wavelengths divided by factor, short
// ones kept, a smooth blend between); kYarn blends inv_freq / factor and inv_freq by
// the ramp over YarnCorrectionRange, in f32 as DeepSeek's reference does.
std::vector<float> RopeInvFrequencies(const RopeParams& params);

// cos[half], sin[half] of angle_i = float(position) * inv_freq[i], the product rounded
// to f32 as in HF (so long positions round the same way as the reference).
void RopeCosSin(int64_t position, const float* inv_freq, int64_t half, float* cos, float* sin);

// Rotates num_heads consecutive heads of x (head_dim floats each) in place:
// x' = x * cos + rotate_half(x) * sin, rotate_half(x) = [-x[half:], x[:half]].
void ApplyRope(float* x, int64_t num_heads, int64_t head_dim, const float* cos, const float* sin);

}  // namespace surge
