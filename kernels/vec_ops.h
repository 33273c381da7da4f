// VecOps: the row primitives (dot, axpy, exp, ...) that the portable kernels are built
// from, one table per SimdLevel. Tables are filled in vec_ops_{scalar,avx2,avx512}.cc.
#pragma once

#include <cstdint>

#include "kernels/simd.h"

namespace surge {

struct VecOps {
  float (*dot)(const float* a, const float* b, int64_t n);
  float (*sum_squares)(const float* x, int64_t n);
  float (*max)(const float* x, int64_t n);                     // n >= 1
  void (*axpy)(float a, const float* x, float* y, int64_t n);  // y += a * x
  void (*scale)(float a, float* y, int64_t n);                 // y *= a
  void (*add)(const float* x, float* y, int64_t n);            // y += x
  // y = (x * s) * w, in that rounding order (HF RMSNorm: weight * (x * rsqrt(var + eps))).
  void (*mul_scale_weight)(const float* x, float s, const float* w, float* y, int64_t n);
  // y = exp(x - shift); returns the sum of y. x and y may alias.
  float (*exp_shifted)(const float* x, float shift, float* y, int64_t n);
  // y = silu(gate) * up = gate / (1 + exp(-gate)) * up. y may alias gate or up.
  void (*silu_mul)(const float* gate, const float* up, float* y, int64_t n);
};

const VecOps& VecOpsFor(SimdLevel level);
inline const VecOps& ActiveVecOps() { return VecOpsFor(ActiveSimdLevel()); }

// Per-level tables; only the ones the CPU supports may be called.
const VecOps& ScalarVecOps();
const VecOps& Avx2VecOps();
const VecOps& Avx512VecOps();

}  // namespace surge
