// The portable KV row kernels: each element decoded as DequantizeKvRow defines it, then
// the same float loops as the scalar VecOps (f32 rows take those very functions, so the
// f32 cache computes what it did before quantized formats existed).
#include <cstring>

#include "kernels/kv_codec.h"
#include "kernels/kv_rows-inl.h"
#include "kernels/vec_ops.h"
#include "kernels/weight_codec.h"

namespace surge {
namespace {

struct Bf16Decoder {
  const uint8_t* row;
  Bf16Decoder(const uint8_t* r, int32_t) : row(r) {}
  float operator()(int32_t i) const {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, 2);
    return Bf16ToFloat(h);
  }
};

struct F16Decoder {
  const uint8_t* row;
  F16Decoder(const uint8_t* r, int32_t) : row(r) {}
  float operator()(int32_t i) const {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, 2);
    return F16ToFloat(h);
  }
};

struct Int8Decoder {
  const uint8_t* row;
  float scale;
  Int8Decoder(const uint8_t* r, int32_t) : row(r) { std::memcpy(&scale, r, 4); }
  float operator()(int32_t i) const { return scale * static_cast<int8_t>(row[4 + i]); }
};

struct Int4Decoder {
  const uint8_t* row;
  const uint8_t* codes;
  Int4Decoder(const uint8_t* r, int32_t n)
      : row(r), codes(r + 4 * ((n + kKvInt4GroupSize - 1) / kKvInt4GroupSize)) {}
  float operator()(int32_t i) const {
    const int32_t g = i / kKvInt4GroupSize, j = i % kKvInt4GroupSize;
    uint16_t params[2];
    std::memcpy(params, row + 4 * g, 4);
    const uint8_t byte = codes[16 * g + j % 16];
    const uint8_t q = j < 16 ? byte & 15 : byte >> 4;
    return F16ToFloat(params[0]) * static_cast<float>(q) + F16ToFloat(params[1]);
  }
};

template <typename Decoder>
float Dot(const float* q, const uint8_t* row, int32_t n) {
  const Decoder decode(row, n);
  float sum = 0.0f;
  for (int32_t i = 0; i < n; ++i) sum += q[i] * decode(i);
  return sum;
}

template <typename Decoder>
void Axpy(float a, const uint8_t* row, float* y, int32_t n) {
  const Decoder decode(row, n);
  for (int32_t i = 0; i < n; ++i) y[i] += a * decode(i);
}

template <KvDType kDType>
void Quantize(const float* x, int32_t n, uint8_t* row) {
  QuantizeKvRow(kDType, x, n, row);
}

float DotF32(const float* q, const uint8_t* row, int32_t n) {
  return ScalarVecOps().dot(q, reinterpret_cast<const float*>(row), n);
}

void AxpyF32(float a, const uint8_t* row, float* y, int32_t n) {
  ScalarVecOps().axpy(a, reinterpret_cast<const float*>(row), y, n);
}

}  // namespace

const KvRowOps& ScalarKvRowOps(KvDType dtype) {
  static const KvRowOpsTable kTable{{
      RowByRowOps<DotF32, AxpyF32>(Quantize<KvDType::kF32>),  // f32
      RowByRowOps<Dot<Bf16Decoder>, Axpy<Bf16Decoder>>(Quantize<KvDType::kBF16>),  // bf16
      RowByRowOps<Dot<F16Decoder>, Axpy<F16Decoder>>(Quantize<KvDType::kF16>),  // f16
      RowByRowOps<Dot<Int8Decoder>, Axpy<Int8Decoder>>(Quantize<KvDType::kInt8>),  // int8
      RowByRowOps<Dot<Int4Decoder>, Axpy<Int4Decoder>>(Quantize<KvDType::kInt4>),  // int4
  }};
  return kTable[dtype];
}

}  // namespace surge
