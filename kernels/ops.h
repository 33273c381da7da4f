// Row kernels of the transformer: RMSNorm, SiLU-mul, softmax, argmax, residual add.
// Each dispatches to the active SimdLevel through VecOps and works on one row (or a run
// of rows) on the calling thread; callers parallelize across rows.
#pragma once

#include <cstdint>

namespace surge {

// y[r] = weight * (x[r] * rsqrt(mean(x[r]^2) + eps)) for each of num_rows rows of dim
// floats, in f32 with Hugging Face's rounding order. y may alias x.
void RmsNorm(const float* x, const float* weight, int64_t num_rows, int64_t dim, float eps,
             float* y);

// y = silu(gate) * up over n floats. y may alias gate or up.
void SiluMul(const float* gate, const float* up, int64_t n, float* y);

// x = softmax(x) over n >= 1 floats, stable (the max is subtracted first).
void Softmax(float* x, int64_t n);

// Index of the largest of n >= 1 floats; the lowest index wins ties (greedy decoding's
// rule). NaNs are never chosen unless all values are NaN.
int64_t Argmax(const float* x, int64_t n);

// y += x over n floats (the residual connection).
void AddInPlace(const float* x, float* y, int64_t n);

}  // namespace surge
