// TensorDType: element types of stored weights, their sizes, and exact conversion to f32.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace surge {

// New types are added here and in the two functions below; safetensors.cc maps file
// names ("F32", "F8_E4M3") onto them. kF8E4M3 is float8_e4m3fn (DeepSeek-V3's FP8
// checkpoints): bias 7, no infinities, S.1111.111 is NaN. kI64 holds integer buffers that
// checkpoints carry beside the weights (BERT's embeddings.position_ids); read as f32 it is
// converted value by value.
enum class TensorDType { kF32, kF16, kBF16, kF8E4M3, kI64 };

constexpr const char* TensorDTypeName(TensorDType dtype) {
  switch (dtype) {
    case TensorDType::kF32: return "F32";
    case TensorDType::kF16: return "F16";
    case TensorDType::kBF16: return "BF16";
    case TensorDType::kF8E4M3: return "F8_E4M3";
    case TensorDType::kI64: return "I64";
  }
  return "?";
}

constexpr size_t TensorDTypeSize(TensorDType dtype) {
  switch (dtype) {
    case TensorDType::kF32: return 4;
    case TensorDType::kF16: return 2;
    case TensorDType::kBF16: return 2;
    case TensorDType::kF8E4M3: return 1;
    case TensorDType::kI64: return 8;
  }
  return 0;
}

// bf16 is the top half of an f32, so widening is a shift (NaN payloads kept).
constexpr float BFloat16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

// float8_e4m3fn -> binary32, exact: 1.mmm * 2^(e - 7), subnormals m/8 * 2^-6.
constexpr float Fp8E4m3ToFloat(uint8_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x80u) << 24;
  const uint32_t exponent = (bits >> 3) & 0xfu;
  const uint32_t mantissa = bits & 0x7u;
  if ((bits & 0x7fu) == 0x7fu) return std::bit_cast<float>(sign | 0x7fc00000u);  // NaN
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * (1.0f / 512.0f);  // m/8 * 2^-6
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 127 - 7) << 23) | (mantissa << 20));
}

// IEEE binary16 -> binary32, exact for every input: subnormals are normalized, inf and
// NaN (with its payload) carried over. Every half value is representable as a float.
constexpr float HalfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) {  // inf or NaN
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);  // +-0
    // Subnormal: value = mantissa * 2^-24. Shift the leading 1 up to bit 10 and lower
    // the exponent once per shift.
    int32_t shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3ffu;
    uint32_t f32_exponent = static_cast<uint32_t>(127 - 15 + 1 - shift);
    return std::bit_cast<float>(sign | (f32_exponent << 23) | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

}  // namespace surge
