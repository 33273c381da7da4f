// Plain scalar reference kernels: the obvious loops, accumulating in double, with no
// blocking, tiling or SIMD. Tests compare every fast path against these.
#pragma once

#include <cstdint>

#include "kernels/attention.h"
#include "kernels/rope.h"
#include "kernels/weight_matrix.h"

namespace surge::reference {

// y[m, w.rows] = x[m, w.cols] · W^T + bias (bias may be null); row-major f32 weights.
// For a PackedWeight, pass F32Weight over its Unpack(): the values its kernels multiply by.
void MatMul(const float* x, int64_t m, const WeightMatrix& w, const float* bias, float* y);

// What the int8 / int4 kernels compute, in double: each row of x quantized on its own
// (QuantizeActivationRow: x ~ scale * q) -- or, with group_size > 0, each group of
// group_size values of a row on its own (int4's per-group scales) -- then
// y = sum over groups of scale * sum_k q[k] * w[n, k], + bias, with w the row-major
// dequantized weights (PackedWeight::Unpack()).
void MatMulQuantizedActivations(const float* x, int64_t m, const WeightMatrix& w,
                                const float* bias, float* y, int64_t group_size = 0);

void RmsNorm(const float* x, const float* weight, int64_t num_rows, int64_t dim, float eps,
             float* y);
void SiluMul(const float* gate, const float* up, int64_t n, float* y);
void Softmax(float* x, int64_t n);
int64_t Argmax(const float* x, int64_t n);

// Rotates num_heads heads of x in place at `position`, computing every angle in double
// straight from the RoPE formulas (no tables).
void Rope(float* x, int64_t num_heads, const RopeParams& params, int64_t position);
// The inverse frequencies in double, from the formulas.
double RopeInvFrequency(const RopeParams& params, int64_t i);

// All queries and heads of one chunk: scores in double, two-pass softmax, over K/V rows
// decoded by DequantizeKvRow (the definition of kv.dtype's format).
void PagedAttention(const PagedKvView& kv, const AttentionQueries& queries);

}  // namespace surge::reference
