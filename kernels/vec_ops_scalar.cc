// The portable table: plain loops that any x86-64 (or other) CPU runs.
#include <cmath>

#include "kernels/vec_ops.h"

namespace surge {
namespace {

float Dot(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

float SumSquares(const float* x, int64_t n) { return Dot(x, x, n); }

float Max(const float* x, int64_t n) {
  float best = x[0];
  for (int64_t i = 1; i < n; ++i) best = x[i] > best ? x[i] : best;
  return best;
}

void Axpy(float a, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void Scale(float a, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= a;
}

void Add(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void MulScaleWeight(const float* x, float s, const float* w, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * s) * w[i];
}

float ExpShifted(const float* x, float shift, float* y, int64_t n) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - shift);
    sum += y[i];
  }
  return sum;
}

void SiluMul(const float* gate, const float* up, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace

const VecOps& ScalarVecOps() {
  static const VecOps ops{Dot, SumSquares,     Max,        Axpy,   Scale,
                          Add, MulScaleWeight, ExpShifted, SiluMul};
  return ops;
}

const VecOps& VecOpsFor(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx512:
    case SimdLevel::kAvx512Vnni:
    case SimdLevel::kAvx512Bf16:
    case SimdLevel::kAmx:
      return Avx512VecOps();
    case SimdLevel::kAvx2:
      return Avx2VecOps();
    case SimdLevel::kScalar:
      break;
  }
  return ScalarVecOps();
}

}  // namespace surge
