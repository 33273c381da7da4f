// KV cache element formats: how one row -- the head_dim values of one (token, kv head)
// of K or V -- is stored in the paged pool, the scalar codec that defines each format,
// and the per-SimdLevel row kernels (quantize on write; dot and axpy that dequantize in
// registers on read) that paged attention is built from.
//
// Row formats (bytes, in order; every row size is a multiple of 4 so rows stay aligned):
//   f32   head_dim x f32
//   bf16  head_dim x bf16 (round to nearest even)          + pad to 4 bytes
//   f16   head_dim x IEEE f16 (round to nearest even; |x| saturates at 65504) + pad
//   int8  f32 scale, then head_dim x int8 q in [-127, 127]  + pad; x ~ scale * q
//         (symmetric, one scale per row: QuantizeActivationRow's q and scale)
//   int4  G = ceil(head_dim / 32) groups along head_dim: G x (f16 scale, f16 min), then
//         G x 16 bytes of codes; x ~ scale * q + min, q in [0, 15]. Byte j of group g
//         holds element 32g + j in its low nibble and 32g + 16 + j in its high one
//         (llama.cpp's Q4_1 order: one 16-byte load widens to two 16-lane vectors);
//         codes past head_dim are 0.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "kernels/simd.h"

namespace surge {

enum class KvDType { kF32, kBF16, kF16, kInt8, kInt4 };

constexpr int32_t kKvInt4GroupSize = 32;

const char* KvDTypeName(KvDType dtype);
// "auto" | "f32" | "bf16" | "f16" | "int8" | "int4"; auto is f32 (docs/DECISIONS.md).
StatusOr<KvDType> ParseKvDType(std::string_view name);

// Bytes of one row of head_dim values (scales and padding included).
int64_t KvRowBytes(KvDType dtype, int32_t head_dim);

// The scalar definitions of the formats. QuantizeKvRow writes KvRowBytes(dtype, n)
// bytes; every SIMD quantizer writes exactly these bytes. DequantizeKvRow gives the
// values the attention kernels multiply by (each SIMD path may round the products and
// sums differently, never the dequantized values' meaning).
// Error bounds per element: bf16 2^-8 |x|, f16 2^-11 |x| (normal range), int8
// max|x| / 254 * (1 + 2^-15), int4 (group max - group min) / 30 plus f16 rounding of
// the stored min and scale.
void QuantizeKvRow(KvDType dtype, const float* x, int32_t n, uint8_t* row);
void DequantizeKvRow(KvDType dtype, const uint8_t* row, int32_t n, float* x);

// Row kernels for one (level, dtype). `row` points at a row in the format above.
struct KvRowOps {
  void (*quantize)(const float* x, int32_t n, uint8_t* row);
  float (*dot)(const float* q, const uint8_t* row, int32_t n);        // q . dequant(row)
  void (*axpy)(float a, const uint8_t* row, float* y, int32_t n);     // y += a * dequant(row)
  // num_rows rows, row_stride bytes apart (one kv head's keys in a block): bit for bit
  // scores[t] = dot(q, row t, n) * scale, and axpy(a[t], row t, y, n) for t = 0, 1, ...
  // in that order -- one call per key tile instead of one per row (kernels/kv_rows-inl.h).
  void (*dot_rows)(const float* q, const uint8_t* rows, int64_t row_stride, int32_t num_rows,
                   int32_t n, float scale, float* scores);
  void (*axpy_rows)(const float* a, const uint8_t* rows, int64_t row_stride, int32_t num_rows,
                    float* y, int32_t n);
};

// One SIMD level's row ops for every dtype (each kv_codec_<level>.cc holds one).
struct KvRowOpsTable {
  KvRowOps by_dtype[5];  // in KvDType order: f32, bf16, f16, int8, int4
  const KvRowOps& operator[](KvDType dtype) const { return by_dtype[static_cast<int>(dtype)]; }
};

// Every level's table for every dtype; the caller must only ask for levels the CPU runs.
// One level for all kernels keeps results reproducible (batch invariance).
const KvRowOps& KvRowOpsFor(SimdLevel level, KvDType dtype);

// Per-level tables (kv_codec_{scalar,avx2,avx512}.cc).
const KvRowOps& ScalarKvRowOps(KvDType dtype);
const KvRowOps& Avx2KvRowOps(KvDType dtype);
const KvRowOps& Avx512KvRowOps(KvDType dtype);

}  // namespace surge
