#include "kernels/kv_codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "base/check.h"
#include "kernels/weight_codec.h"

namespace surge {
namespace {

constexpr float kF16Max = 65504.0f;

int64_t RoundUp4(int64_t n) { return (n + 3) / 4 * 4; }

int32_t NumInt4Groups(int32_t n) { return (n + kKvInt4GroupSize - 1) / kKvInt4GroupSize; }

// One int4 group of m <= 32 values: min-max rounding with the min rounded down and the
// scale up in f16, so no code clamps (beyond f16's range, which saturates). No
// least-squares refit as for weights: a row is quantized once per token on the hot
// path, and its SIMD twin must reproduce it bit for bit.
void QuantizeInt4Group(const float* x, int32_t m, uint16_t* params, uint8_t* codes) {
  float lo = x[0], hi = x[0];
  for (int32_t i = 1; i < m; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  lo = std::clamp(lo, -kF16Max, kF16Max);
  hi = std::clamp(hi, -kF16Max, kF16Max);
  const uint16_t min_f16 = FloatToF16Down(lo);
  const float min = F16ToFloat(min_f16);
  const uint16_t scale_f16 = FloatToF16Up((hi - min) / 15.0f);
  const float scale = F16ToFloat(scale_f16);
  const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
  uint8_t q[kKvInt4GroupSize] = {};
  for (int32_t i = 0; i < m; ++i)
    q[i] = static_cast<uint8_t>(std::clamp(std::nearbyint((x[i] - min) * inverse), 0.0f, 15.0f));
  for (int32_t j = 0; j < 16; ++j) codes[j] = static_cast<uint8_t>(q[j] | (q[j + 16] << 4));
  params[0] = scale_f16;
  params[1] = min_f16;
}

}  // namespace

const char* KvDTypeName(KvDType dtype) {
  switch (dtype) {
    case KvDType::kF32:
      return "f32";
    case KvDType::kBF16:
      return "bf16";
    case KvDType::kF16:
      return "f16";
    case KvDType::kInt8:
      return "int8";
    case KvDType::kInt4:
      return "int4";
  }
  return "?";
}

StatusOr<KvDType> ParseKvDType(std::string_view name) {
  // vLLM's spellings (--kv-cache-dtype) beside surge's. auto is f16, chosen by measurement
  // (docs/DECISIONS.md, "The default KV cache dtype").
  if (name == "f32" || name == "float32" || name == "float") return KvDType::kF32;
  if (name == "bf16" || name == "bfloat16") return KvDType::kBF16;
  if (name == "auto" || name == "f16" || name == "float16" || name == "half") return KvDType::kF16;
  if (name == "int8") return KvDType::kInt8;
  if (name == "int4") return KvDType::kInt4;
  if (name.starts_with("fp8")) {
    return InvalidArgumentError("KV cache dtype '" + std::string(name) +
                                "': no fp8 KV kernels here; int8 (per token-head scale) is the nearest, int4 the smallest");
  }
  return InvalidArgumentError("KV cache dtype must be auto, f32, bf16, f16, int8 or int4, got '" +
                              std::string(name) + "'");
}

int64_t KvRowBytes(KvDType dtype, int32_t head_dim) {
  switch (dtype) {
    case KvDType::kF32:
      return 4 * int64_t{head_dim};
    case KvDType::kBF16:
    case KvDType::kF16:
      return RoundUp4(2 * int64_t{head_dim});
    case KvDType::kInt8:
      return 4 + RoundUp4(head_dim);
    case KvDType::kInt4:
      return int64_t{NumInt4Groups(head_dim)} * (4 + kKvInt4GroupSize / 2);
  }
  return 0;
}

void QuantizeKvRow(KvDType dtype, const float* x, int32_t n, uint8_t* row) {
  std::memset(row, 0, KvRowBytes(dtype, n));  // padding and unused codes are 0
  switch (dtype) {
    case KvDType::kF32:
      std::memcpy(row, x, 4 * size_t(n));
      return;
    case KvDType::kBF16:
    case KvDType::kF16:
      for (int32_t i = 0; i < n; ++i) {
        const uint16_t h = dtype == KvDType::kBF16
                               ? FloatToBf16(x[i])
                               : FloatToF16(std::clamp(x[i], -kF16Max, kF16Max));
        std::memcpy(row + 2 * i, &h, 2);
      }
      return;
    case KvDType::kInt8: {
      const float scale = QuantizeActivationRow(x, n, reinterpret_cast<int8_t*>(row + 4));
      std::memcpy(row, &scale, 4);
      return;
    }
    case KvDType::kInt4: {
      const int32_t groups = NumInt4Groups(n);
      for (int32_t g = 0; g < groups; ++g) {
        const int32_t begin = g * kKvInt4GroupSize;
        uint16_t params[2];
        QuantizeInt4Group(x + begin, std::min(kKvInt4GroupSize, n - begin), params,
                          row + 4 * groups + 16 * g);
        std::memcpy(row + 4 * g, params, 4);
      }
      return;
    }
  }
}

void DequantizeKvRow(KvDType dtype, const uint8_t* row, int32_t n, float* x) {
  switch (dtype) {
    case KvDType::kF32:
      std::memcpy(x, row, 4 * size_t(n));
      return;
    case KvDType::kBF16:
    case KvDType::kF16:
      for (int32_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, row + 2 * i, 2);
        x[i] = dtype == KvDType::kBF16 ? Bf16ToFloat(h) : F16ToFloat(h);
      }
      return;
    case KvDType::kInt8: {
      float scale;
      std::memcpy(&scale, row, 4);
      for (int32_t i = 0; i < n; ++i) x[i] = scale * static_cast<int8_t>(row[4 + i]);
      return;
    }
    case KvDType::kInt4: {
      const int32_t groups = NumInt4Groups(n);
      for (int32_t i = 0; i < n; ++i) {
        const int32_t g = i / kKvInt4GroupSize, j = i % kKvInt4GroupSize;
        uint16_t params[2];
        std::memcpy(params, row + 4 * g, 4);
        const uint8_t byte = row[4 * groups + 16 * g + j % 16];
        const uint8_t q = j < 16 ? byte & 15 : byte >> 4;
        x[i] = F16ToFloat(params[0]) * static_cast<float>(q) + F16ToFloat(params[1]);
      }
      return;
    }
  }
}

const KvRowOps& KvRowOpsFor(SimdLevel level, KvDType dtype) {
  switch (level) {
    case SimdLevel::kAvx512:
    case SimdLevel::kAvx512Vnni:
    case SimdLevel::kAvx512Bf16:
    case SimdLevel::kAmx:
      return Avx512KvRowOps(dtype);
    case SimdLevel::kAvx2:
      return Avx2KvRowOps(dtype);
    case SimdLevel::kScalar:
      break;
  }
  return ScalarKvRowOps(dtype);
}

}  // namespace surge
