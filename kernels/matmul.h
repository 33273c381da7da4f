// MatMul: y = x · W^T (+ bias), the linear layer, threaded and dispatched to the best
// SIMD path of this CPU.
#pragma once

#include <cstdint>

#include "kernels/simd.h"
#include "kernels/thread_pool.h"
#include "kernels/weight_matrix.h"

namespace surge {

// y[m, w.rows] = x[m, w.cols] · W^T + bias[w.rows] (bias may be null). Rows are dense
// (row strides w.cols and w.rows). x and y must not overlap. Any WeightMatrix: row-major
// f32 (F32Weight), or a PackedWeight in f32, bf16, int8 or int4.
//
// Batch invariance: a row's output is bit-identical whatever else is in the batch, with
// or without threads, for a given SimdLevel, because each y[i, n] is computed by
// arithmetic that depends only on x row i, W row n and K -- never on m, the tiling or
// the thread:
// - row-major f32: one vector accumulator per (i, n), K walked front to back, one
//   masked tail, a fixed horizontal reduction;
// - packed f32 / bf16: one fma chain per (i, n) over k ascending (x[k] broadcast against
//   a panel of 16 weights of that k), then + bias; K is never split across blocks;
// - packed int8 / int4: x row i is quantized on its own (scale from its own max), the
//   dot products are exact int32 sums (order cannot matter), and the f32 epilogue is a
//   fixed per-output formula (per group, in group order, for int4). The AMX kernels
//   (tdpbusd / tdpbsud) compute the same integers and the same epilogue, so MatMul
//   switching to them at m >= internal::kAmxMinRows changes no bit: these formats are
//   batch-invariant across the switch and equal the scalar kernel on every level.
// - packed bf16 on AMX (only with SURGE_AMX_BF16=1, then at every m): x rounded to
//   bf16 per row, then per output tile ops over k-blocks of 32 ascending (the
//   hardware's fixed order inside a block), the K mod 32 tail by vdpbf16ps, + bias.
//   That chain depends only on x row i, W row n and K, so it is batch- and
//   thread-invariant -- but it is neither the widening kernel's f32 chain nor
//   vdpbf16ps's, which is why it is opt-in: it must run at every m (a switch by m would
//   break invariance), and it changes the bf16 model's logits (x's extra rounding).
// - f32 weights never take AMX (rounding them to bf16 would be the bf16 format).
// Block shapes may change with m; they never change these per-output computations.
void MatMul(const float* x, int64_t m, const WeightMatrix& w, const float* bias, float* y,
            ThreadPool* pool);

// The same, on one explicit path and single-threaded unless `pool` is given (tests and
// benchmarks compare the paths with this).
void MatMulWithLevel(SimdLevel level, const float* x, int64_t m, const WeightMatrix& w,
                     const float* bias, float* y, ThreadPool* pool);

namespace internal {

// Computes the block y[rows [m_begin, m_end), cols [n_begin, n_end)] of an f32 MatMul;
// one function per SimdLevel (matmul_{scalar,avx2,avx512}.cc). x, y: dense rows of
// k and ldy floats; w: [*, k] f32.
struct MatMulTile {
  const float* x;
  const float* w;
  const float* bias;
  float* y;
  int64_t k;
  int64_t ldy;
};
using MatMulTileFn = void (*)(const MatMulTile& t, int64_t m_begin, int64_t m_end, int64_t n_begin,
                              int64_t n_end);
void MatMulTileScalar(const MatMulTile& t, int64_t m_begin, int64_t m_end, int64_t n_begin,
                      int64_t n_end);
void MatMulTileAvx2(const MatMulTile& t, int64_t m_begin, int64_t m_end, int64_t n_begin,
                    int64_t n_end);
void MatMulTileAvx512(const MatMulTile& t, int64_t m_begin, int64_t m_end, int64_t n_begin,
                      int64_t n_end);

}  // namespace internal
}  // namespace surge
