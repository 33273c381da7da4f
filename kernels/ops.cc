#include "kernels/ops.h"

#include <cmath>

#include "kernels/vec_ops.h"

namespace surge {

void RmsNorm(const float* x, const float* weight, int64_t num_rows, int64_t dim, float eps,
             float* y) {
  const VecOps& ops = ActiveVecOps();
  for (int64_t r = 0; r < num_rows; ++r) {
    const float* row = x + r * dim;
    float mean_square = ops.sum_squares(row, dim) / static_cast<float>(dim);
    float inv_rms = 1.0f / std::sqrt(mean_square + eps);
    ops.mul_scale_weight(row, inv_rms, weight, y + r * dim, dim);
  }
}

void SiluMul(const float* gate, const float* up, int64_t n, float* y) {
  ActiveVecOps().silu_mul(gate, up, y, n);
}

void Softmax(float* x, int64_t n) {
  const VecOps& ops = ActiveVecOps();
  float max = ops.max(x, n);
  float sum = ops.exp_shifted(x, max, x, n);
  ops.scale(1.0f / sum, x, n);
}

int64_t Argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    // Strict > keeps the first of equal values; a NaN at `best` gives way to any number.
    if (x[i] > x[best] || (std::isnan(x[best]) && !std::isnan(x[i]))) best = i;
  }
  return best;
}

void AddInPlace(const float* x, float* y, int64_t n) { ActiveVecOps().add(x, y, n); }

}  // namespace surge
