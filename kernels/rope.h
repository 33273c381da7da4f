// Rotary position embeddings (RoPE) in Hugging Face's rotate_half convention: dimension i
// of a head pairs with i + head_dim/2 and both turn by angle position * inv_freq[i].
#pragma once

#include <cstdint>
#include <vector>

namespace surge {

enum class RopeKind { kDefault, kLinear, kLlama3 };

struct RopeParams {
  int64_t head_dim = 0;
  double theta = 10000.0;
  RopeKind kind = RopeKind::kDefault;
  double factor = 1.0;                             // kLinear and kLlama3
  double low_freq_factor = 1.0;                    // kLlama3 only
  double high_freq_factor = 4.0;                   // kLlama3 only
  double original_max_position_embeddings = 8192;  // kLlama3 only
};

// inv_freq[head_dim / 2], as HF computes it in f32: 1 / theta^(2i / head_dim); kLinear
// divides it by factor (the same as dividing positions); kLlama3 applies
// transformers' _compute_llama3_parameters (long wavelengths divided by factor, short
// ones kept, a smooth blend between).
std::vector<float> RopeInvFrequencies(const RopeParams& params);

// cos[half], sin[half] of angle_i = float(position) * inv_freq[i], the product rounded
// to f32 as in HF (so long positions round the same way as the reference).
void RopeCosSin(int64_t position, const float* inv_freq, int64_t half, float* cos, float* sin);

// Rotates num_heads consecutive heads of x (head_dim floats each) in place:
// x' = x * cos + rotate_half(x) * sin, rotate_half(x) = [-x[half:], x[:half]].
void ApplyRope(float* x, int64_t num_heads, int64_t head_dim, const float* cos, const float* sin);

}  // namespace surge
