// Codecs for ggml's block formats (what GGUF files store): F32, F16, BF16, Q8_0, Q4_0,
// Q4_K and Q6_K, bit-exact with ggml's definitions (ggml-common.h / ggml-quants.c).
// Scalar code used at load time (repacking) and by the converter; not a hot path.
//
// Layouts (little-endian; "d" fields are IEEE f16):
//   Q8_0  32 values, 34 bytes: d, int8 qs[32]              w = d * q
//   Q4_0  32 values, 18 bytes: d, qs[16]: value j < 16 in the low nibble of qs[j], j >= 16
//         in the high nibble of qs[j - 16]                  w = d * (q - 8)
//   Q4_1  32 values, 20 bytes: d, m, qs[16] as Q4_0         w = d * q + m
//   Q5_0  32 values, 22 bytes: d, qh (u32: bit j = 5th bit of value j), qs[16] as Q4_0
//                                                           w = d * (q - 16)
//   Q5_1  32 values, 24 bytes: d, m, qh, qs[16] as Q5_0     w = d * q + m
//   Q4_K  256 values, 144 bytes: d, dmin, scales[12] (eight 6-bit scales sc and mins m,
//         see get_scale_min_k4), qs[128]: sub-block s (32 values) of chunk c = s / 2
//         in the low (s even) or high (s odd) nibbles of qs[32c .. 32c + 32)
//                                                           w = d*sc[s] * q - dmin*m[s]
//   Q5_K  256 values, 176 bytes: d, dmin, scales[12] as Q4_K, qh[32], qs[128] as Q4_K;
//         value 32s + l (l < 32) takes its 5th bit from bit s of qh[l]
//                                                           w = d*sc[s] * q - dmin*m[s]
//   Q6_K  256 values, 210 bytes: ql[128], qh[64], int8 scales[16], d; for each half h of
//         128 values and l < 32: values l, l+32, l+64, l+96 take their low 4 bits from
//         ql[64h + l] (low), ql[64h + l + 32] (low), ql[64h + l] (high), ql[64h + l + 32]
//         (high) and their top 2 bits from qh[32h + l] bits 0-1, 2-3, 4-5, 6-7
//                                                           w = d * scales[i / 16] * (q - 32)
#pragma once

#include <cstdint>

#include "kernels/weight_codec.h"

namespace surge {

enum class BlockType { kF32, kF16, kBF16, kQ8_0, kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ4_K, kQ5_K, kQ6_K };

const char* BlockTypeName(BlockType type);  // "Q4_K", as ggml spells it
int64_t BlockElements(BlockType type);      // 1, 32 or 256
int64_t BlockBytes(BlockType type);
// Bytes of a row of n values (n a multiple of BlockElements).
inline int64_t BlockRowBytes(BlockType type, int64_t n) {
  return n / BlockElements(type) * BlockBytes(type);
}

// dst[n] = the values of the n / BlockElements blocks at src. Exactly ggml's
// dequantize_row_* (products in f32, in its order).
void DequantizeBlocks(BlockType type, const uint8_t* src, int64_t n, float* dst);

// Writes src[n] as blocks. F16/BF16 round to nearest even; Q8_0, Q4_0, Q4_1, Q5_0 and
// Q5_1 are ggml's
// reference quantizers (quantize_row_*_ref) bit for bit; Q4_K and Q6_K use plain
// round-to-nearest (sub-block min/max -> 6/8-bit scales -> nearest q; Q5_K likewise), not ggml's
// error-minimizing search: files decode the same everywhere, but ours are a little
// less accurate than llama-quantize's.
void QuantizeBlocks(BlockType type, const float* src, int64_t n, uint8_t* dst);

// Q4_0, Q4_1 and Q4_K as asymmetric int4 groups of 32 (the int4 kernels' format,
// w = scale * q + min): q[n] in [0, 15] and groups[n / 32]. Exact for Q4_0 (scale = d,
// min = -8d, both exact in f16 unless |d| > 4096) and Q4_1 (d, m); for Q4_K
// scale = d * sc and min = -dmin * m are rounded to f16 (relative error <= 2^-11 each).
bool HasInt4Groups(BlockType type);
void BlocksToInt4Groups(BlockType type, const uint8_t* src, int64_t n, uint8_t* q,
                        Int4Group* groups);

}  // namespace surge
